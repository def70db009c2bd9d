#include "server/admin_cli.h"

#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <pugixml.hpp>
#include <string>

#include "advisor/recommend.h"
#include "auth/signer.h"
#include "common/encoding.h"
#include "common/net.h"
#include "common/time_util.h"
#include "server/admin_wire.h"

namespace strata::server {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Connecting gives up after this; one request (a heal of a large object
// included) after kRequestTimeout.
constexpr int kConnectTimeoutMs = 10'000;
constexpr std::chrono::seconds kRequestTimeout{3600};
// Listing pages and admin documents are far smaller.
constexpr uint64_t kMaxResponseBytes = 64ull << 20;

struct Credentials {
  std::string access_key, secret_key;
};

struct Response {
  int status = 0;
  std::string body;
};

// One keep-alive connection (common/net.h Dial, Beast's HTTP/1.1 client),
// SigV4-signed requests (UNSIGNED-PAYLOAD).
class Client {
 public:
  Client(AdminOptions ep, Credentials creds)
      : ep_(std::move(ep)), signer_({std::move(creds.access_key), std::move(creds.secret_key)}) {}

  // The response, or nullopt with *error set (no connection, timeout, ...).
  std::optional<Response> Send(bhttp::verb method, const std::string& path,
                               const std::string& query, std::string* error,
                               const std::string& body = "") {
    for (int attempt = 0; attempt < 2; ++attempt) {  // once more on a stale connection
      if (!stream_ && !Connect(error)) return std::nullopt;
      if (auto r = Exchange(method, path, query, body, error)) return r;
      stream_.reset();
    }
    return std::nullopt;
  }

 private:
  bool Connect(std::string* error) {
    auto fd = Dial(ep_.host, ep_.port, kConnectTimeoutMs);
    if (!fd.ok()) {
      *error = fd.status().message();
      return false;
    }
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    ::getsockname(*fd, reinterpret_cast<sockaddr*>(&local), &len);
    beast::error_code ec;
    stream_.emplace(ioc_);
    stream_->socket().assign(
        local.ss_family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), *fd, ec);
    if (ec) {
      ::close(*fd);
      stream_.reset();
      *error = "connection: " + ec.message();
      return false;
    }
    buffer_.clear();
    return true;
  }

  // Runs one asynchronous operation to its end (the stream's expiry bounds it).
  template <typename Start>
  beast::error_code Run(Start start) {
    beast::error_code result = asio::error::would_block;
    start([&result](beast::error_code ec, std::size_t) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result;
  }

  std::optional<Response> Exchange(bhttp::verb method, const std::string& path,
                                   const std::string& query, const std::string& body,
                                   std::string* error) {
    std::string target = path + (query.empty() ? "" : "?" + query);
    bhttp::request<bhttp::string_body> req{method, target, 11};
    Sign(std::string(bhttp::to_string(method)), path, query, req);
    req.body() = body;
    req.prepare_payload();
    stream_->expires_after(kRequestTimeout);
    beast::error_code ec = Run([&](auto handler) { bhttp::async_write(*stream_, req, handler); });
    if (ec) {
      *error = "sending the request: " + ec.message();
      return std::nullopt;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    ec = Run([&](auto handler) { bhttp::async_read(*stream_, buffer_, parser, handler); });
    if (ec) {
      *error = "reading the response: " + ec.message();
      return std::nullopt;
    }
    Response r;
    r.status = static_cast<int>(parser.get().result_int());
    r.body = std::move(parser.get().body());
    if (!parser.get().keep_alive()) stream_.reset();
    return r;
  }

  // SigV4 (UNSIGNED-PAYLOAD) with the client-side signer of auth/signer.h.
  void Sign(const std::string& method, const std::string& path, const std::string& query,
            bhttp::request<bhttp::string_body>& req) {
    std::string host = ep_.host + ":" + std::to_string(ep_.port);
    auth::RequestToSign to_sign{method, path, query, {{"host", host}}};
    auth::SigningResult signed_req = signer_.Sign(to_sign, UnixNowNs() / 1'000'000'000);
    req.set(bhttp::field::host, host);
    for (const auto& [name, value] : signed_req.headers) req.set(name, value);
  }

  AdminOptions ep_;
  auth::Signer signer_;
  asio::io_context ioc_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
};

// From STRATA_ROOT_USER/PASSWORD, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or DIR/root-credentials.
std::optional<Credentials> FindCredentials(const AdminOptions& admin) {
  for (auto [user, pass] : {std::pair{"STRATA_ROOT_USER", "STRATA_ROOT_PASSWORD"},
                            std::pair{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}}) {
    if (std::getenv(user) && std::getenv(pass))
      return Credentials{std::getenv(user), std::getenv(pass)};
  }
  Credentials c;
  std::ifstream in(admin.data_dir + "/root-credentials");
  if (in && std::getline(in, c.access_key) && std::getline(in, c.secret_key)) return c;
  std::fprintf(stderr,
               "strata: no credentials: set STRATA_ROOT_USER/STRATA_ROOT_PASSWORD or "
               "pass --data DIR of the server\n");
  return std::nullopt;
}

// What a failed request said: the admin API's {"error": ...}, else the body or the error.
std::string Failure(const std::optional<Response>& r, const std::string& error) {
  if (!r) return error;
  std::string ignored;
  if (auto e = admin::DecodeError(r->body, &ignored)) return e->error;
  return "HTTP " + std::to_string(r->status) + ": " + r->body;
}

void ProgressBar(uint64_t scanned, uint64_t rebuilt, uint64_t bad, const std::string& current) {
  static const char kSpin[] = "|/-\\";
  std::string shown = current.size() > 40 ? "..." + current.substr(current.size() - 37) : current;
  std::fprintf(stderr,
               "\r%c healing: %llu objects scanned, %llu shards rebuilt, %llu unrecoverable  %-40s",
               kSpin[scanned % 4], static_cast<unsigned long long>(scanned),
               static_cast<unsigned long long>(rebuilt), static_cast<unsigned long long>(bad),
               shown.c_str());
}

struct HealTotals {
  uint64_t scanned = 0, rebuilt = 0, unrecoverable = 0, errors = 0;

  // count_piece_errors: a heal-object reply's "errors" counts as an error (a
  // bucket marker's does not: buckets made before markers existed have none).
  void Add(const std::optional<Response>& r, bool count_piece_errors) {
    std::string ignored;
    std::optional<admin::HealReply> h;
    if (r && r->status == 200) h = admin::DecodeHeal(r->body, &ignored);
    if (!h) {
      ++errors;
      return;
    }
    rebuilt += h->shards_rebuilt;
    unrecoverable += h->unrecoverable;
    errors += count_piece_errors && !h->errors.empty();
  }
};

}  // namespace

int RunAdminDrives(const AdminOptions& options) {
  auto creds = FindCredentials(options);
  if (!creds) return 2;
  Client client(options, *creds);
  std::string error;
  auto r = client.Send(bhttp::verb::get, "/_strata/admin/drives", "", &error);
  std::optional<admin::DrivesReply> reply;
  if (r && r->status == 200) reply = admin::DecodeDrives(r->body, &error);
  if (!reply) {
    std::fprintf(stderr, "strata: drives request failed: %s\n", Failure(r, error).c_str());
    return 1;
  }
  if (!reply->erasure_coded) {
    std::printf("%s\n", reply->layout.c_str());
    return 0;
  }
  std::printf("erasure coding %d+%d\n%-4s %-12s %-12s %s\n", reply->k, reply->m, "pos", "state",
              "shard files", "path / detail");
  int bad = 0;
  for (const admin::DriveEntry& d : reply->drives) {
    bad += d.state != "online";
    std::printf("%-4d %-12s %-12llu %s %s\n", d.position, d.state.c_str(),
                static_cast<unsigned long long>(d.shard_files), d.path.c_str(), d.detail.c_str());
  }
  return bad ? 1 : 0;
}

int RunAdminHeal(const AdminOptions& options, const std::string& bucket_only,
                 const std::string& prefix) {
  auto creds = FindCredentials(options);
  if (!creds) return 2;
  Client client(options, *creds);
  std::string error;

  std::vector<std::string> buckets;
  if (!bucket_only.empty()) {
    buckets.push_back(bucket_only);
  } else {
    auto r = client.Send(bhttp::verb::get, "/", "", &error);
    if (!r || r->status != 200) {
      std::fprintf(stderr, "strata: cannot list buckets: %s\n", Failure(r, error).c_str());
      return 1;
    }
    pugi::xml_document doc;
    doc.load_buffer(r->body.data(), r->body.size());
    for (auto b : doc.child("ListAllMyBucketsResult").child("Buckets").children("Bucket")) {
      buckets.emplace_back(b.child_value("Name"));
    }
  }
  HealTotals totals;
  for (const std::string& bucket : buckets) {
    if (prefix.empty()) {  // the bucket's own marker first
      totals.Add(client.Send(bhttp::verb::post, "/_strata/admin/heal-bucket",
                             "bucket=" + UriEncode(bucket, true), &error),
                 /*count_piece_errors=*/false);
    }
    // Every version and delete marker (ListObjectVersions): old versions
    // are what a backup restores from, they need their redundancy too.
    std::string key_marker, version_marker;
    bool more = true;
    while (more) {
      std::string query = "versions&max-keys=1000";
      if (!prefix.empty()) query += "&prefix=" + UriEncode(prefix, true);
      if (!key_marker.empty()) {
        query += "&key-marker=" + UriEncode(key_marker, true);
        if (!version_marker.empty()) query += "&version-id-marker=" + UriEncode(version_marker, true);
      }
      auto r = client.Send(bhttp::verb::get, "/" + bucket, query, &error);
      if (!r || r->status != 200) {
        std::fprintf(stderr, "\nstrata: cannot list %s: %s\n", bucket.c_str(),
                     r ? r->body.c_str() : error.c_str());
        return 1;
      }
      pugi::xml_document doc;
      doc.load_buffer(r->body.data(), r->body.size());
      auto result = doc.child("ListVersionsResult");
      more = std::string(result.child_value("IsTruncated")) == "true";
      key_marker = result.child_value("NextKeyMarker");
      version_marker = result.child_value("NextVersionIdMarker");
      for (auto c : result.children()) {
        const std::string element = c.name();
        if (element != "Version" && element != "DeleteMarker") continue;
        std::string key = c.child_value("Key");
        std::string version_id = c.child_value("VersionId");
        totals.Add(client.Send(bhttp::verb::post, "/_strata/admin/heal-object",
                               "bucket=" + UriEncode(bucket, true) + "&key=" + UriEncode(key, true) +
                                   "&versionId=" + UriEncode(version_id, true),
                               &error),
                   /*count_piece_errors=*/true);
        ++totals.scanned;
        ProgressBar(totals.scanned, totals.rebuilt, totals.unrecoverable, bucket + "/" + key);
      }
    }
  }
  std::fprintf(stderr, "\n");
  std::printf(
      "heal summary: %llu objects scanned, %llu shards rebuilt, %llu unrecoverable, "
      "%llu errors\n",
      static_cast<unsigned long long>(totals.scanned),
      static_cast<unsigned long long>(totals.rebuilt),
      static_cast<unsigned long long>(totals.unrecoverable),
      static_cast<unsigned long long>(totals.errors));
  return totals.unrecoverable || totals.errors ? 1 : 0;
}

namespace {

std::string Str(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
}
unsigned long long Num(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_number_unsigned() ? j[k].get<unsigned long long>() : 0;
}

// strata admin audit verify | checkpoint | query (docs/audit.md).
int PrintAudit(const AdminIamCommand& cmd, const nlohmann::json& j) {
  if (cmd.action == "audit-query") {
    if (!j.contains("records") || !j["records"].is_array()) {
      std::printf("%s\n", j.dump().c_str());
      return 0;
    }
    if (!cmd.json_lines) {
      std::printf("%-8s %-24s %-8s %-20s %-28s %-14s %s\n", "seq", "time", "kind", "identity",
                  "operation", "result", "bucket/key");
    }
    for (const auto& r : j["records"]) {
      if (cmd.json_lines) {
        std::printf("%s\n", r.dump().c_str());
        continue;
      }
      std::string target = Str(r, "bucket");
      if (!Str(r, "key").empty()) target += "/" + Str(r, "key");
      std::string result = Str(r, "result");
      if (Num(r, "http_status")) result += " " + std::to_string(Num(r, "http_status"));
      std::printf("%-8llu %-24s %-8s %-20s %-28s %-14s %s\n", Num(r, "seq"),
                  Str(r, "time").c_str(), Str(r, "kind").c_str(),
                  Str(r, "identity").empty() ? "(anonymous)" : Str(r, "identity").c_str(),
                  Str(r, "operation").c_str(), result.c_str(), target.c_str());
    }
    if (Num(j, "next_after")) {
      std::fprintf(stderr, "more: run again with --after %llu\n", Num(j, "next_after"));
    }
    return 0;
  }
  const nlohmann::json cp = j.value("latest_checkpoint", nlohmann::json::object());
  if (cmd.action == "audit-verify") {
    if (j.value("ok", false)) {
      std::printf("audit trail OK: %llu records, %llu gaps (writes that never committed), "
                  "%llu checkpoints verified, %llu not yet chained\n",
                  Num(j, "records"), Num(j, "gaps"), Num(j, "checkpoints"), Num(j, "unsealed"));
      std::printf("head: seq %llu hash %s\n", Num(j, "head_seq"), Str(j, "head_hash").c_str());
    } else {
      std::printf("audit trail DAMAGED (%s) at seq %llu: %s\n", Str(j, "problem").c_str(),
                  Num(j, "problem_seq"), Str(j, "detail").c_str());
      std::printf("verified before it: %llu records, %llu checkpoints\n", Num(j, "records"),
                  Num(j, "checkpoints"));
    }
  } else if (!j.value("ok", false)) {
    std::printf("checkpoint made, but the trail is damaged: %s\n", Str(j, "detail").c_str());
  }
  if (Num(cp, "seq")) {
    std::printf("latest checkpoint: seq %llu at %s\n  hash %s\n  mac  %s\n", Num(cp, "seq"),
                Str(cp, "time").c_str(), Str(cp, "hash").c_str(), Str(cp, "mac").c_str());
  }
  return j.value("ok", false) ? 0 : 1;
}

double Dbl(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0;
}

std::string Bytes(double b) { return advisor::HumanBytes(b); }

void PrintExecutor(const nlohmann::json& e) {
  std::printf("executor: %s, %s; today %s of %s moved",
              e.value("enabled", false) ? "enabled" : "STOPPED",
              e.value("in_window", false) ? "inside its window" : "outside its window",
              Bytes(Dbl(e, "bytes_today")).c_str(), Bytes(Dbl(e, "budget_bytes")).c_str());
  if (!Str(e, "running").empty()) std::printf("; running %s", Str(e, "running").c_str());
  if (!Str(e, "waiting").empty()) std::printf("; waiting: %s", Str(e, "waiting").c_str());
  std::printf("\n");
}

// strata admin advisor ... (docs/advisor.md).
int PrintAdvisor(const AdminIamCommand& cmd, const nlohmann::json& j) {
  if (cmd.action == "advisor-list") {
    if (cmd.json_lines) {
      for (const auto& r : j["recommendations"]) std::printf("%s\n", r.dump().c_str());
      return 0;
    }
    std::printf("%-16s %-9s %-6s %12s  %s\n", "id", "state", "kind", "to move", "summary");
    for (const auto& r : j["recommendations"]) {
      std::printf("%-16s %-9s %-6s %12s  %s\n", Str(r, "id").c_str(), Str(r, "state").c_str(),
                  Str(r, "kind").c_str(), Bytes(Dbl(r, "bytes_to_move")).c_str(),
                  Str(r, "summary").c_str());
    }
    if (j["recommendations"].empty()) std::printf("(no recommendations)\n");
    PrintExecutor(j["executor"]);
    return 0;
  }
  if (cmd.action == "advisor-show") {
    std::printf("%s  [%s]\n%s\n\n", Str(j, "id").c_str(), Str(j, "state").c_str(),
                Str(j, "summary").c_str());
    std::printf("evidence (window %llu days):\n", Num(j, "window_days"));
    std::printf("  %llu objects, %s in the prefix; %llu reads in the window on %llu days "
                "(%.0f per active day, %.1f per object); idle %.1f days\n",
                Num(j, "objects"), Bytes(Dbl(j, "bytes")).c_str(), Num(j, "reads_in_window"),
                Num(j, "active_days"), Dbl(j, "reads_per_active_day"),
                Dbl(j, "rereads_per_object"), Dbl(j, "idle_days"));
    std::printf("  by class:");
    for (const auto& [cls, n] : j["by_class"].items()) {
      std::printf(" %s %llu objects %s;", cls.c_str(), Num(n, "objects"), Bytes(Dbl(n, "bytes")).c_str());
    }
    std::printf("\n  sizes:");
    for (size_t i = 0; i < j["size_hist"].size() && i < j["size_buckets"].size(); ++i) {
      std::printf(" %s=%llu", j["size_buckets"][i].get<std::string>().c_str(),
                  j["size_hist"][i].get<unsigned long long>());
    }
    std::printf("\n  ages:");
    for (size_t i = 0; i < j["age_hist"].size() && i < j["age_buckets"].size(); ++i) {
      std::printf(" %s=%llu", j["age_buckets"][i].get<std::string>().c_str(),
                  j["age_hist"][i].get<unsigned long long>());
    }
    const std::string cur = j.contains("model") ? Str(j["model"], "currency") : "";
    std::printf("\nexpected effect (modelled):\n  moves %llu objects, %s from %s to %s\n",
                Num(j, "objects_to_move"), Bytes(Dbl(j, "bytes_to_move")).c_str(),
                Str(j, "from_media").c_str(), Str(j, "to_media").c_str());
    for (const auto& [pool, delta] : j["capacity_change"].items()) {
      const double d = delta.get<double>();
      std::printf("  pool %s: %s%s\n", pool.c_str(), d < 0 ? "-" : "+", Bytes(d < 0 ? -d : d).c_str());
    }
    std::printf("  power %.3f W -> %.3f W; cost %.2f -> %.2f %s/month\n", Dbl(j, "watts_before"),
                Dbl(j, "watts_after"), Dbl(j, "cost_month_before"), Dbl(j, "cost_month_after"),
                cur.c_str());
    std::printf("action: %s\n", Str(j, "action").c_str());
    if (!Str(j, "lifecycle_rule").empty()) {
      std::printf("lifecycle rule: %s\n", Str(j, "lifecycle_rule").c_str());
    }
    std::printf("progress: %llu objects (%s) moved, %llu skipped, %llu locked, %llu failed",
                Num(j, "moved_objects"), Bytes(Dbl(j, "moved_bytes")).c_str(), Num(j, "skipped"),
                Num(j, "locked"), Num(j, "failed"));
    if (!Str(j, "waiting").empty()) std::printf("; waiting: %s", Str(j, "waiting").c_str());
    if (!Str(j, "decided_by").empty()) std::printf("; decided by %s", Str(j, "decided_by").c_str());
    if (!Str(j, "reason").empty()) std::printf("; reason: %s", Str(j, "reason").c_str());
    std::printf("\n");
    return 0;
  }
  if (cmd.action == "advisor-stats") {
    std::printf("%-24s %-32s %12s %12s %26s\n", "bucket", "prefix", "reads", "bytes read",
                "last read");
    for (const auto& p : j["prefixes"]) {
      std::printf("%-24s %-32s %12.0f %12s %26s\n", Str(p, "bucket").c_str(),
                  Str(p, "prefix").empty() ? "(top)" : Str(p, "prefix").c_str(), Dbl(p, "reads"),
                  Bytes(Dbl(p, "bytes_read")).c_str(), Str(p, "last_read").c_str());
    }
    std::printf("%llu prefixes tracked, %llu dropped (reads decay; the least read go first)\n",
                Num(j, "tracked"), Num(j, "dropped"));
    return 0;
  }
  if (cmd.action == "advisor-run") {
    std::printf("analysed %llu objects in %llu prefixes: %llu recommendations (%llu new, %llu "
                "refreshed, %llu expired)%s\n",
                Num(j, "objects"), Num(j, "prefixes"), Num(j, "recommended"), Num(j, "added"),
                Num(j, "refreshed"), Num(j, "expired"),
                j.value("truncated", false) ? "; inventory truncated" : "");
    return 0;
  }
  if (j.contains("done")) {
    std::printf("ok: %s\n", j["done"].get<std::string>().c_str());
    return 0;
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

}  // namespace

int RunAdminIam(const AdminIamCommand& cmd) {
  auto creds = FindCredentials(cmd.admin);
  if (!creds) return 2;
  std::string body;
  if (!cmd.body_file.empty()) {
    std::istream* in = &std::cin;
    std::ifstream file;
    if (cmd.body_file != "-") {
      file.open(cmd.body_file, std::ios::binary);
      if (!file) {
        std::fprintf(stderr, "strata: cannot read %s\n", cmd.body_file.c_str());
        return 2;
      }
      in = &file;
    }
    body.assign(std::istreambuf_iterator<char>(*in), std::istreambuf_iterator<char>());
  }
  std::string query;
  for (const auto& [k, v] : cmd.query) {
    query += (query.empty() ? "" : "&") + k + "=" + UriEncode(v, true);
  }
  Client client(cmd.admin, *creds);
  std::string error;
  auto r = client.Send(bhttp::string_to_verb(cmd.method), "/_strata/admin/" + cmd.action, query,
                       &error, body);
  if (!r || r->status != 200) {
    std::fprintf(stderr, "strata: %s failed: %s\n", cmd.action.c_str(), Failure(r, error).c_str());
    return 1;
  }
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded()) {
    std::printf("%s\n", r->body.c_str());
    return 0;
  }
  if (cmd.action == "key-create") {  // the one time the secret is shown
    std::printf("user:       %s\naccess key: %s\nsecret key: %s\n"
                "(the secret key is shown only now: store it; strata keeps it sealed)\n",
                j.value("user", "").c_str(), j.value("access_key", "").c_str(),
                j.value("secret_key", "").c_str());
    return 0;
  }
  if (cmd.action.starts_with("audit-")) return PrintAudit(cmd, j);
  if (cmd.action.starts_with("advisor-")) return PrintAdvisor(cmd, j);
  if (cmd.action == "energy" && j.contains("node")) {
    const auto& n = j["node"];
    std::printf("node: %.3f J modelled (%.3f CPU-seconds, %llu bytes)",
                n.value("modelled_joules", 0.0), n.value("process_cpu_seconds", 0.0),
                static_cast<unsigned long long>(n.value("bytes", uint64_t{0})));
    if (n.contains("measured_joules")) {
      std::printf(", %.3f J measured (RAPL:", n["measured_joules"].get<double>());
      for (const auto& d : j["rapl_domains"]) std::printf(" %s", d.get<std::string>().c_str());
      std::printf(")");
    } else {
      std::printf("; no RAPL counters readable: modelled only");
    }
    std::printf("\n%-13s %-32s %12s %14s %14s %14s\n", "kind", "name", "cpu s", "bytes",
                "modelled J", "measured J");
    for (const auto& w : j["workloads"]) {
      char measured[32] = "-";
      if (w.contains("measured_joules")) {
        std::snprintf(measured, sizeof measured, "%.3f", w["measured_joules"].get<double>());
      }
      std::printf("%-13s %-32s %12.3f %14llu %14.3f %14s\n", w.value("kind", "").c_str(),
                  w.value("name", "").c_str(), w.value("cpu_seconds", 0.0),
                  static_cast<unsigned long long>(w.value("bytes", uint64_t{0})),
                  w.value("modelled_joules", 0.0), measured);
    }
    const auto& c = j["coefficients"];
    std::printf("model: %g J per CPU-second, %g J/byte network, %g J/byte storage "
                "(docs/energy.md)\n",
                c.value("cpu_joules_per_second", 0.0), c.value("network_joules_per_byte", 0.0),
                c.value("storage_joules_per_byte", 0.0));
    return 0;
  }
  if (cmd.action == "tiers" && j.contains("pools")) {
    std::printf("%-10s %-10s %-22s %10s %14s %14s %14s\n", "pool", "media", "layout", "objects",
                "bytes", "used", "free");
    for (const auto& p : j["pools"]) {
      const uint64_t cap = p.value("capacity_bytes", uint64_t{0});
      const uint64_t free = p.value("free_bytes", uint64_t{0});
      std::printf("%-10s %-10s %-22s %10llu %14llu %14llu %14llu\n",
                  p.value("name", "").c_str(), p.value("media", "").c_str(),
                  p.value("layout", "").c_str(),
                  static_cast<unsigned long long>(p.value("objects", uint64_t{0})),
                  static_cast<unsigned long long>(p.value("bytes", uint64_t{0})),
                  static_cast<unsigned long long>(cap - free), static_cast<unsigned long long>(free));
      for (const auto& [cls, n] : p["by_class"].items()) {
        std::printf("  %-20s %10llu objects %14llu bytes\n", cls.c_str(),
                    static_cast<unsigned long long>(n.value("objects", uint64_t{0})),
                    static_cast<unsigned long long>(n.value("bytes", uint64_t{0})));
      }
      if (p.value("restored_copies", uint64_t{0}) > 0) {
        std::printf("  restored copies      %10llu (%llu bytes)\n",
                    static_cast<unsigned long long>(p.value("restored_copies", uint64_t{0})),
                    static_cast<unsigned long long>(p.value("restored_bytes", uint64_t{0})));
      }
    }
    std::printf("storage classes:");
    for (const auto& [cls, pool] : j["storage_classes"].items()) {
      std::printf(" %s->%s", cls.c_str(), pool.get<std::string>().c_str());
    }
    std::printf("\nin flight: %llu restores, %llu uncommitted writes\n",
                static_cast<unsigned long long>(j["in_flight"].value("restores", uint64_t{0})),
                static_cast<unsigned long long>(j["in_flight"].value("uncommitted_writes", uint64_t{0})));
    return 0;
  }
  if (j.contains("done")) {
    std::printf("ok: %s\n", j["done"].get<std::string>().c_str());
    return 0;
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

}  // namespace strata::server
