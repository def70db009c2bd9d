#include "s3/access_log.h"

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <vector>

#include "audit/context.h"
#include "common/encoding.h"
#include "common/log.h"
#include "common/time_util.h"
#include "object/engine.h"

namespace strata::s3 {

namespace {

constexpr const char* kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";
constexpr const char* kMalformed =
    "The XML you provided was not well-formed or did not validate against our published schema";

bool Blank(const char* s) {
  for (; *s; ++s) {
    if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return false;
  }
  return true;
}

// The element children of `n`, or nullopt if text other than blanks is there.
std::optional<std::vector<pugi::xml_node>> Children(pugi::xml_node n) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_element) {
      out.push_back(c);
    } else if ((c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) && !Blank(c.value())) {
      return std::nullopt;
    }
  }
  return out;
}

std::string Text(pugi::xml_node n) {
  std::string s;
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) s += c.value();
  }
  return s;
}

LoggingError Malformed() { return {LoggingProblem::kMalformedXml, kMalformed}; }

// A quoted field: what would end the quotes or the line is escaped.
std::string Quoted(std::string_view s) {
  if (s.empty()) return "\"-\"";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

// An unquoted field: "-" when empty, never a blank inside.
std::string Field(std::string_view s) {
  if (s.empty()) return "-";
  std::string out;
  for (unsigned char c : s) out.push_back(c <= 0x20 || c == 0x7f ? '_' : static_cast<char>(c));
  return out;
}

std::string LogTime(int64_t ns) {
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  CivilTime t = CivilFromUnix(ns / 1'000'000'000);
  char buf[40];
  std::snprintf(buf, sizeof buf, "[%02d/%s/%04lld:%02d:%02d:%02d +0000]", t.day,
                kMonths[t.month - 1], static_cast<long long>(t.year), t.hour, t.minute, t.second);
  return buf;
}

std::string KeyTime(int64_t ns, bool dirs) {
  CivilTime t = CivilFromUnix(ns / 1'000'000'000);
  char buf[64];
  if (dirs) {
    std::snprintf(buf, sizeof buf, "%04lld/%02d/%02d/", static_cast<long long>(t.year), t.month,
                  t.day);
  } else {
    std::snprintf(buf, sizeof buf, "%04lld-%02d-%02d-%02d-%02d-%02d-",
                  static_cast<long long>(t.year), t.month, t.day, t.hour, t.minute, t.second);
  }
  return buf;
}

std::string UniqueString() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

ParsedLogging ParseBucketLoggingStatus(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size(), pugi::parse_default & ~pugi::parse_eol)) {
    return Malformed();
  }
  pugi::xml_node root = doc.document_element();
  if (!root || std::string_view(root.name()) != "BucketLoggingStatus") return Malformed();
  auto top = Children(root);
  if (!top || top->size() > 1) return Malformed();
  if (top->empty()) return std::optional<LoggingTarget>{};
  pugi::xml_node enabled = top->front();
  if (std::string_view(enabled.name()) != "LoggingEnabled") return Malformed();
  auto fields = Children(enabled);
  if (!fields) return Malformed();
  LoggingTarget t;
  bool bucket = false, prefix = false, format = false;
  for (pugi::xml_node f : *fields) {
    const std::string_view name = f.name();
    if (name == "TargetBucket" && !bucket) {
      bucket = true;
      t.bucket = Text(f);
    } else if (name == "TargetPrefix" && !prefix) {
      prefix = true;
      t.prefix = Text(f);
    } else if (name == "TargetGrants") {
      auto grants = Children(f);
      if (!grants) return Malformed();
      if (!grants->empty()) {
        return LoggingError{LoggingProblem::kInvalidArgument,
                            "Target grants are not supported: log objects belong to the target "
                            "bucket's owner (Object Ownership BucketOwnerEnforced)"};
      }
    } else if (name == "TargetObjectKeyFormat" && !format) {
      format = true;
      auto kinds = Children(f);
      if (!kinds || kinds->size() != 1) return Malformed();
      const std::string_view kind = kinds->front().name();
      if (kind == "PartitionedPrefix") {
        t.partitioned = true;
        auto source = Children(kinds->front());
        if (!source || source->size() > 1) return Malformed();
        if (!source->empty()) {
          if (std::string_view(source->front().name()) != "PartitionDateSource") return Malformed();
          const std::string v = Text(source->front());
          if (v != "EventTime" && v != "DeliveryTime") {
            return LoggingError{LoggingProblem::kInvalidArgument,
                                "PartitionDateSource must be EventTime or DeliveryTime"};
          }
          t.event_time = v == "EventTime";
        }
      } else if (kind != "SimplePrefix") {
        return Malformed();
      }
    } else {
      return Malformed();
    }
  }
  if (!bucket || !prefix || t.bucket.empty()) return Malformed();
  if (t.prefix.size() > 1024) {
    return LoggingError{LoggingProblem::kInvalidArgument, "TargetPrefix is longer than 1024 bytes"};
  }
  return std::optional<LoggingTarget>(std::move(t));
}

std::string RenderBucketLoggingStatus(const std::optional<LoggingTarget>& t) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("BucketLoggingStatus");
  root.append_attribute("xmlns") = kNamespace;
  if (t) {
    pugi::xml_node e = root.append_child("LoggingEnabled");
    e.append_child("TargetBucket").append_child(pugi::node_pcdata).set_value(t->bucket.c_str());
    e.append_child("TargetPrefix").append_child(pugi::node_pcdata).set_value(t->prefix.c_str());
    pugi::xml_node f = e.append_child("TargetObjectKeyFormat");
    if (t->partitioned) {
      f.append_child("PartitionedPrefix")
          .append_child("PartitionDateSource")
          .append_child(pugi::node_pcdata)
          .set_value(t->event_time ? "EventTime" : "DeliveryTime");
    } else {
      f.append_child("SimplePrefix");
    }
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + out.str();
}

std::string FormatAccessRecord(const AccessRecord& r) {
  std::string line;
  auto add = [&](const std::string& f) {
    if (!line.empty()) line.push_back(' ');
    line += f;
  };
  add(Field(r.bucket_owner));
  add(Field(r.bucket));
  add(LogTime(r.time_ns));
  add(Field(r.remote_ip));
  add(Field(r.requester));
  add(Field(r.request_id));
  add(Field(r.operation));
  add(Field(r.key.empty() ? "" : UriEncode(r.key, /*encode_slash=*/false)));
  add(Quoted(r.request_uri));
  add(r.http_status ? std::to_string(r.http_status) : "-");
  add(Field(r.error_code));
  add(r.bytes_sent ? std::to_string(r.bytes_sent) : "-");
  add(r.object_size ? std::to_string(*r.object_size) : "-");
  add(std::to_string(r.total_time_ms));
  add(std::to_string(r.turnaround_time_ms));
  add(Quoted(r.referer));
  add(Quoted(r.user_agent));
  add(Field(r.version_id));
  add(Field(r.host_id));
  add(Field(r.signature_version));
  add(Field(r.cipher_suite));
  add(Field(r.authentication_type));
  add(Field(r.host_header));
  add(Field(r.tls_version));
  add("-");  // access point ARN: strata has no access points
  add("-");  // aclRequired: ACLs never decide a request alone here
  line.push_back('\n');
  return line;
}

std::string AccessOperation(std::string_view method, bool has_key, std::string_view raw_query,
                            bool copy) {
  std::vector<std::string_view> names;
  while (!raw_query.empty()) {
    size_t amp = raw_query.find('&');
    std::string_view part = raw_query.substr(0, amp);
    names.push_back(part.substr(0, part.find('=')));
    if (amp == std::string_view::npos) break;
    raw_query.remove_prefix(amp + 1);
  }
  auto has = [&](std::string_view n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  static constexpr std::pair<std::string_view, std::string_view> kResources[] = {
      {"acl", "ACL"},
      {"tagging", "TAGGING"},
      {"versioning", "VERSIONING"},
      {"lifecycle", "LIFECYCLE"},
      {"notification", "NOTIFICATION"},
      {"logging", "LOGGING_STATUS"},
      {"cors", "CORS"},
      {"policyStatus", "POLICY_STATUS"},
      {"policy", "BUCKETPOLICY"},
      {"encryption", "ENCRYPTION"},
      {"object-lock", "OBJECT_LOCK_CONFIGURATION"},
      {"retention", "RETENTION"},
      {"legal-hold", "LEGAL_HOLD"},
      {"location", "LOCATION"},
      {"versions", "BUCKETVERSIONS"},
      {"restore", "RESTORE"},
      {"ownershipControls", "OWNERSHIP_CONTROLS"},
      {"publicAccessBlock", "PUBLIC_ACCESS_BLOCK"},
      {"attributes", "OBJECT_ATTRIBUTES"},
      {"uploads", "UPLOADS"}};
  std::string_view resource;
  for (const auto& [q, name] : kResources) {
    if (has(q)) {
      resource = name;
      break;
    }
  }
  if (resource.empty()) {
    if (method == "POST" && has("delete")) {
      resource = "MULTI_OBJECT_DELETE";
    } else if (has("uploadId")) {
      resource = has("partNumber") ? "PART" : "UPLOAD";
    } else {
      resource = has_key ? "OBJECT" : "BUCKET";
    }
  }
  std::string verb = copy ? "COPY" : std::string(method);
  return "REST." + verb + "." + std::string(resource);
}

AccessLogDelivery::AccessLogDelivery(object::ObjectEngine* engine, std::string region,
                                     int64_t interval_ns, size_t max_buffered_bytes)
    : engine_(engine),
      region_(std::move(region)),
      interval_ns_(interval_ns),
      max_buffered_(max_buffered_bytes) {}

AccessLogDelivery::~AccessLogDelivery() { Stop(); }

void AccessLogDelivery::Append(const LoggingTarget& target, const std::string& source_bucket,
                               const std::string& owner, std::string line) {
  std::lock_guard lock(mu_);
  if (buffered_ + line.size() > max_buffered_) {
    ++dropped_;
    return;
  }
  buffered_ += line.size();
  Batch& b = batches_[Key{target.bucket, target.prefix, target.partitioned, target.event_time,
                          source_bucket}];
  if (b.lines.empty()) b.first_ns = UnixNowNs();
  b.owner = owner;
  b.lines += line;
}

Status AccessLogDelivery::Deliver(const Key& key, const Batch& batch) {
  const auto& [target, prefix, partitioned, event_time, source] = key;
  ASSIGN_OR_RETURN(object::BucketRecord rec, engine_->GetBucket(target));
  // Settings can change after PutBucketLogging checked them: never write a
  // log object in a way the target's owner did not ask for.
  if (rec.default_sse != object::SseMode::kNone) {
    return PreconditionFailed("target bucket " + target +
                              " has default encryption; strata does not deliver access logs there");
  }
  if (rec.default_retention.mode != object::LockMode::kNone) {
    return PreconditionFailed("target bucket " + target + " has a default retention period");
  }
  const int64_t now = UnixNowNs();
  std::string name = prefix;
  if (partitioned) {
    name += batch.owner + "/" + region_ + "/" + source + "/" +
            KeyTime(event_time ? batch.first_ns : now, /*dirs=*/true);
  }
  name += KeyTime(now, /*dirs=*/false) + UniqueString();
  audit::Actor actor = audit::SystemActor("access-log", "AccessLogDelivery", target, name);
  audit::Scope scope(&actor);
  object::ObjectHeaders headers;
  headers.content_type = "text/plain";
  object::WriteOptions options;
  options.owner = rec.owner;
  ASSIGN_OR_RETURN(auto w, engine_->NewWriter(target, name, std::move(headers), std::move(options)));
  RETURN_IF_ERROR(w->Append(batch.lines));
  RETURN_IF_ERROR(w->Commit().status());
  ++objects_;
  return Status::OK();
}

Status AccessLogDelivery::Flush() {
  std::lock_guard flush(flush_mu_);
  std::map<Key, Batch> batches;
  {
    std::lock_guard lock(mu_);
    batches.swap(batches_);
    buffered_ = 0;
  }
  Status first;
  for (const auto& [key, batch] : batches) {
    Status st = Deliver(key, batch);
    if (!st.ok()) {
      STRATA_LOG("access log: %s -> %s: not delivered: %s", std::get<4>(key).c_str(),
                 std::get<0>(key).c_str(), st.ToString().c_str());
      if (first.ok()) first = st;
    }
  }
  return first;
}

void AccessLogDelivery::Start() {
  std::lock_guard lock(run_mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock lock(run_mu_);
    while (!stop_) {
      run_cv_.wait_for(lock, std::chrono::nanoseconds(interval_ns_));
      if (stop_) break;
      lock.unlock();
      Flush().IgnoreError();  // logged per batch
      lock.lock();
    }
  });
}

void AccessLogDelivery::Stop() {
  {
    std::lock_guard lock(run_mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  run_cv_.notify_all();
  thread_.join();
  Flush().IgnoreError();
}

}  // namespace strata::s3
