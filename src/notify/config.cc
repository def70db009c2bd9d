#include "notify/config.h"

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <sstream>

namespace strata::notify {
namespace {

constexpr const char* kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";
constexpr const char* kMalformed =
    "The XML you provided was not well-formed or did not validate against our published schema";
constexpr size_t kMaxRules = 100;       // far more than any real bucket has
constexpr size_t kMaxFilterBytes = 1024;  // S3's key length limit

// The events strata emits, and their groups ("s3:ObjectCreated:*").
constexpr std::array<std::string_view, 15> kEvents = {
    "s3:ObjectCreated:Put",          "s3:ObjectCreated:Post",
    "s3:ObjectCreated:Copy",         "s3:ObjectCreated:CompleteMultipartUpload",
    "s3:ObjectRemoved:Delete",       "s3:ObjectRemoved:DeleteMarkerCreated",
    "s3:ObjectRestore:Post",         "s3:ObjectRestore:Completed",
    "s3:ObjectRestore:Delete",       "s3:LifecycleTransition",
    "s3:LifecycleExpiration:Delete", "s3:LifecycleExpiration:DeleteMarkerCreated",
    "s3:ObjectTagging:Put",          "s3:ObjectTagging:Delete",
    "s3:ObjectAcl:Put"};
constexpr std::array<std::string_view, 5> kGroups = {
    "s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:ObjectRestore:*", "s3:LifecycleExpiration:*",
    "s3:ObjectTagging:*"};
// AWS event types that cannot happen in strata (no replication, no reduced
// redundancy losses, no Intelligent-Tiering archive tiers): accepted, as AWS
// accepts them on a bucket without those features, and never sent.
constexpr std::array<std::string_view, 7> kNeverEmitted = {
    "s3:ReducedRedundancyLostObject",
    "s3:Replication:*",
    "s3:Replication:OperationFailedReplication",
    "s3:Replication:OperationNotTracked",
    "s3:Replication:OperationMissedThreshold",
    "s3:Replication:OperationReplicatedAfterThreshold",
    "s3:IntelligentTiering"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

struct Parser {
  const KnownTarget& known_target;
  std::optional<ParseError> error;

  bool Fail(Problem p, std::string message) {
    if (!error) error = ParseError{p, std::move(message)};
    return false;
  }
  bool Malformed() { return Fail(Problem::kMalformedXml, kMalformed); }
  bool Invalid(std::string m) { return Fail(Problem::kInvalidArgument, std::move(m)); }

  // The text of a leaf element (CDATA included); an element inside is malformed.
  bool Text(pugi::xml_node n, std::string* out) {
    out->clear();
    for (pugi::xml_node c : n.children()) {
      if (c.type() == pugi::node_element) return Malformed();
      if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out->append(c.value());
    }
    return true;
  }
  // An identifier-like value: surrounding blanks are not part of it.
  bool Trimmed(pugi::xml_node n, std::string* out) {
    if (!Text(n, out)) return false;
    size_t a = 0, b = out->size();
    while (a < b && IsBlank((*out)[a])) ++a;
    while (b > a && IsBlank((*out)[b - 1])) --b;
    *out = out->substr(a, b - a);
    return true;
  }
  // Text children of a container may only be formatting.
  bool OnlyFormatting(pugi::xml_node c) {
    if (c.type() != pugi::node_pcdata && c.type() != pugi::node_cdata) return true;
    for (const char* p = c.value(); *p; ++p) {
      if (!IsBlank(*p)) return false;
    }
    return true;
  }

  bool FilterRule(pugi::xml_node n, Rule* r, bool* has_prefix, bool* has_suffix) {
    std::string name, value;
    bool seen_name = false, seen_value = false;
    for (pugi::xml_node c : n.children()) {
      if (c.type() != pugi::node_element) {
        if (!OnlyFormatting(c)) return Malformed();
        continue;
      }
      const std::string_view tag = c.name();
      if (tag == "Name" && !seen_name) {
        seen_name = true;
        if (!Trimmed(c, &name)) return false;
      } else if (tag == "Value" && !seen_value) {
        seen_value = true;
        if (!Text(c, &value)) return false;
      } else {
        return Malformed();
      }
    }
    if (!seen_name || !seen_value) return Malformed();
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (value.size() > kMaxFilterBytes) {
      return Invalid("The filter rule value is longer than 1024 characters");
    }
    for (unsigned char ch : value) {
      if (ch < 0x20 || ch == 0x7f) return Invalid("The filter rule value holds a control character");
    }
    if (lower == "prefix") {
      if (*has_prefix) return Invalid("Cannot specify more than one prefix rule in a filter.");
      *has_prefix = true;
      r->prefix = value;
    } else if (lower == "suffix") {
      if (*has_suffix) return Invalid("Cannot specify more than one suffix rule in a filter.");
      *has_suffix = true;
      r->suffix = value;
    } else {
      return Invalid("filter rule name must be either prefix or suffix");
    }
    return true;
  }

  bool Filter(pugi::xml_node n, Rule* r) {
    bool seen_key = false, has_prefix = false, has_suffix = false;
    for (pugi::xml_node c : n.children()) {
      if (c.type() != pugi::node_element) {
        if (!OnlyFormatting(c)) return Malformed();
        continue;
      }
      if (std::string_view(c.name()) != "S3Key" || seen_key) return Malformed();
      seen_key = true;
      for (pugi::xml_node f : c.children()) {
        if (f.type() != pugi::node_element) {
          if (!OnlyFormatting(f)) return Malformed();
          continue;
        }
        if (std::string_view(f.name()) != "FilterRule") return Malformed();
        if (!FilterRule(f, r, &has_prefix, &has_suffix)) return false;
      }
    }
    return true;
  }

  bool Queue(pugi::xml_node n, Rule* r) {
    bool seen_id = false, seen_queue = false, seen_filter = false;
    std::string arn;
    for (pugi::xml_node c : n.children()) {
      if (c.type() != pugi::node_element) {
        if (!OnlyFormatting(c)) return Malformed();
        continue;
      }
      const std::string_view tag = c.name();
      if (tag == "Id" && !seen_id) {
        seen_id = true;
        if (!Text(c, &r->id)) return false;
      } else if ((tag == "Queue" || tag == "QueueArn") && !seen_queue) {
        seen_queue = true;
        if (!Trimmed(c, &arn)) return false;
      } else if (tag == "Event") {
        std::string e;
        if (!Trimmed(c, &e)) return false;
        if (!IsEventName(e) && !In(kGroups, e) && !In(kNeverEmitted, e)) {
          return Invalid("The event is not supported for notifications: " + e);
        }
        if (std::find(r->events.begin(), r->events.end(), e) == r->events.end()) {
          r->events.push_back(std::move(e));
        }
      } else if (tag == "Filter" && !seen_filter) {
        seen_filter = true;
        if (!Filter(c, r)) return false;
      } else {
        return Malformed();
      }
    }
    if (!seen_queue || r->events.empty()) return Malformed();
    if (r->id.size() > 255) return Invalid("The Id is longer than 255 characters");
    r->target = TargetOfArn(arn);
    if (r->target.empty() || !known_target(r->target)) {
      return Invalid("Unable to validate the following destination configurations: " + arn +
                     " (declare the webhook in the server's config file as [notify.webhook.ID] "
                     "and name it as arn:strata:sqs::ID:webhook)");
    }
    return true;
  }

  bool Document(std::string_view xml, Configuration* out) {
    pugi::xml_document doc;
    if (xml.find_first_not_of(" \t\r\n") == std::string_view::npos) return Malformed();
    pugi::xml_parse_result res =
        doc.load_buffer(xml.data(), xml.size(), pugi::parse_default & ~pugi::parse_eol);
    if (!res) return Malformed();
    pugi::xml_node root;
    for (pugi::xml_node c : doc.children()) {
      if (c.type() == pugi::node_element) {
        if (root) return Malformed();
        root = c;
      }
    }
    if (!root || std::string_view(root.name()) != "NotificationConfiguration") return Malformed();
    for (pugi::xml_node c : root.children()) {
      if (c.type() != pugi::node_element) {
        if (!OnlyFormatting(c)) return Malformed();
        continue;
      }
      const std::string_view tag = c.name();
      if (tag == "QueueConfiguration") {
        if (out->rules.size() >= kMaxRules) {
          return Invalid("A bucket takes at most 100 notification configurations");
        }
        Rule r;
        if (!Queue(c, &r)) return false;
        out->rules.push_back(std::move(r));
      } else if (tag == "TopicConfiguration" || tag == "CloudFunctionConfiguration" ||
                 tag == "EventBridgeConfiguration") {
        return Fail(Problem::kNotImplemented,
                    std::string(tag) + " is not supported: strata delivers to the webhook "
                                       "queues of its config file (QueueConfiguration)");
      } else {
        return Malformed();
      }
    }
    return Finish(out);
  }

  static bool Overlap(std::string_view a, std::string_view b, bool prefix) {
    const std::string_view shorter = a.size() <= b.size() ? a : b;
    const std::string_view longer = a.size() <= b.size() ? b : a;
    return prefix ? longer.starts_with(shorter) : longer.ends_with(shorter);
  }
  static bool ShareEvent(const Rule& a, const Rule& b) {
    for (const std::string& x : a.events) {
      for (const std::string& y : b.events) {
        if (x == y || EventCovers(x, y) || EventCovers(y, x)) return true;
      }
    }
    return false;
  }

  bool Finish(Configuration* c) {
    // Ids: generated where missing (stable: the rule's place), never twice.
    for (size_t i = 0; i < c->rules.size(); ++i) {
      if (c->rules[i].id.empty()) {
        c->rules[i].id = "notification-" + std::to_string(i + 1);
      }
    }
    for (size_t i = 0; i < c->rules.size(); ++i) {
      for (size_t j = i + 1; j < c->rules.size(); ++j) {
        const Rule& a = c->rules[i];
        const Rule& b = c->rules[j];
        if (a.id == b.id) return Invalid("Duplicate Id: " + a.id);
        if (ShareEvent(a, b) && Overlap(a.prefix, b.prefix, true) &&
            Overlap(a.suffix, b.suffix, false)) {
          return Invalid(
              "Configurations overlap. Configurations on the same bucket cannot share a common "
              "event type.");
        }
      }
    }
    return true;
  }
};

}  // namespace

std::string TargetArn(std::string_view id) {
  return "arn:strata:sqs::" + std::string(id) + ":webhook";
}

std::string TargetOfArn(std::string_view arn) {
  constexpr std::string_view kHead = "arn:strata:sqs::", kTail = ":webhook";
  if (!arn.starts_with(kHead) || !arn.ends_with(kTail) ||
      arn.size() <= kHead.size() + kTail.size()) {
    return "";
  }
  std::string_view id = arn.substr(kHead.size(), arn.size() - kHead.size() - kTail.size());
  return ValidTargetId(id) ? std::string(id) : "";
}

bool ValidTargetId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

std::variant<Configuration, ParseError> ParseConfiguration(std::string_view xml,
                                                           const KnownTarget& known_target) {
  Parser p{known_target, std::nullopt};
  Configuration c;
  if (!p.Document(xml, &c)) return *p.error;
  return c;
}

std::string RenderConfiguration(const Configuration& c) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("NotificationConfiguration");
  root.append_attribute("xmlns") = kNamespace;
  auto leaf = [](pugi::xml_node parent, const char* name, const std::string& text) {
    parent.append_child(name).append_child(pugi::node_pcdata).set_value(text.c_str());
  };
  for (const Rule& r : c.rules) {
    pugi::xml_node q = root.append_child("QueueConfiguration");
    leaf(q, "Id", r.id);
    leaf(q, "Queue", TargetArn(r.target));
    for (const std::string& e : r.events) leaf(q, "Event", e);
    if (!r.prefix.empty() || !r.suffix.empty()) {
      pugi::xml_node key = q.append_child("Filter").append_child("S3Key");
      for (auto [name, value] : {std::pair{"prefix", &r.prefix}, std::pair{"suffix", &r.suffix}}) {
        if (value->empty()) continue;
        pugi::xml_node fr = key.append_child("FilterRule");
        leaf(fr, "Name", name);
        leaf(fr, "Value", *value);
      }
    }
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + out.str();
}

bool IsEventName(std::string_view event) { return In(kEvents, event); }

bool EventCovers(std::string_view pattern, std::string_view event) {
  if (pattern == event) return true;
  if (!pattern.ends_with(":*")) return false;
  pattern.remove_suffix(1);  // "s3:ObjectCreated:"
  return event.starts_with(pattern) && event.size() > pattern.size();
}

std::vector<const Rule*> Matching(const Configuration& c, std::string_view event,
                                  std::string_view key) {
  std::vector<const Rule*> out;
  for (const Rule& r : c.rules) {
    if (!key.starts_with(r.prefix) || !key.ends_with(r.suffix)) continue;
    for (const std::string& e : r.events) {
      if (EventCovers(e, event)) {
        out.push_back(&r);
        break;
      }
    }
  }
  return out;
}

}  // namespace strata::notify
