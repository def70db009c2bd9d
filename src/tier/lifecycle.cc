#include "tier/lifecycle.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <limits>
#include <pugixml.hpp>
#include <set>

#include "common/encoding.h"

namespace strata::tier {

namespace {

constexpr std::string_view kNamespace = "http://s3.amazonaws.com/doc/2006-03-01/";
constexpr size_t kMaxRules = 1000;
constexpr size_t kMaxIdLength = 255;
constexpr uint32_t kMaxNewerNoncurrent = 100;
constexpr uint32_t kMinInfrequentDays = 30;                        // STANDARD_IA, ONEZONE_IA
constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();   // xs:int: the Days fields
constexpr int64_t kMaxLong = std::numeric_limits<int64_t>::max();  // xs:long: the sizes
constexpr int64_t kNsPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86400;
// Dates are four-digit years: 0000-01-01 to 9999-12-31 (days since the epoch).
constexpr int64_t kFirstDay =
    std::chrono::sys_days(std::chrono::year(0) / 1 / 1).time_since_epoch().count();
constexpr int64_t kLastDay =
    std::chrono::sys_days(std::chrono::year(9999) / 12 / 31).time_since_epoch().count();
// AWS answers every schema violation with this one message.
constexpr const char* kMalformedMessage =
    "The XML you provided was not well-formed or did not validate against our published schema";

// One parse: the first refusal wins; every helper returns false once it is set.
struct Ctx {
  const KnownClass& known_class;
  std::optional<ParseError> error;

  bool Fail(Problem p, std::string message) {
    if (!error) error = ParseError{p, std::move(message)};
    return false;
  }
  bool Malformed() { return Fail(Problem::kMalformedXml, kMalformedMessage); }
  bool Invalid(std::string message) { return Fail(Problem::kInvalidArgument, std::move(message)); }
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Between the elements of a container only formatting blanks may stand.
bool IsFormatting(pugi::xml_node n) {
  if (n.type() != pugi::node_pcdata && n.type() != pugi::node_cdata) return true;
  return Trim(n.value()).empty();
}


// A leaf's text: its text and CDATA pieces joined (pugixml splits the text
// around the comments it skips). An element inside breaks the schema.
bool Text(Ctx& ctx, pugi::xml_node n, std::string* out) {
  out->clear();
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_element) return ctx.Malformed();
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out->append(c.value());
  }
  return true;
}

// Calls `each` on the element children of a container in order. Text other
// than formatting blanks breaks the schema, and so does an element `each`
// returns false for without saying why.
template <typename F>
bool Elements(Ctx& ctx, pugi::xml_node n, F each) {
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_element ? !each(c) : !IsFormatting(c)) {
      return ctx.error ? false : ctx.Malformed();
    }
  }
  return true;
}

// The element children of a container, each named in `names` at most once
// (slots[i] <- names[i], null when absent).
template <size_t N>
bool Singles(Ctx& ctx, pugi::xml_node n, const std::array<std::string_view, N>& names,
             std::array<pugi::xml_node, N>* slots) {
  return Elements(ctx, n, [&](pugi::xml_node c) {
    auto it = std::find(names.begin(), names.end(), std::string_view(c.name()));
    if (it == names.end() || (*slots)[it - names.begin()]) return false;
    (*slots)[it - names.begin()] = c;
    return true;
  });
}

// A typed value (a number, a boolean, a date, an enumeration): blanks around
// it are the schema's whitespace collapsing, not part of it.
bool Value(Ctx& ctx, pugi::xml_node n, std::string* out) {
  if (!Text(ctx, n, out)) return false;
  *out = std::string(Trim(*out));
  return true;
}

// An integer of the schema's type (xs:int or xs:long); anything else breaks
// the schema. Its range is the caller's to judge.
bool Integer(Ctx& ctx, pugi::xml_node n, int64_t max, int64_t* out) {
  std::string text;
  if (!Value(ctx, n, &text)) return false;
  std::string_view s = text;
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return ctx.Malformed();
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > max || v < -max - 1) {
    return ctx.Malformed();
  }
  *out = v;
  return true;
}

// A Days-like count (xs:int) within [min, max], else InvalidArgument `message`.
bool Count(Ctx& ctx, pugi::xml_node n, int64_t min, int64_t max, const char* message,
           uint32_t* out) {
  int64_t v;
  if (!Integer(ctx, n, kMaxInt, &v)) return false;
  if (v < min || v > max) return ctx.Invalid(message);
  *out = static_cast<uint32_t>(v);
  return true;
}

bool Boolean(Ctx& ctx, pugi::xml_node n, bool* out) {
  std::string s;
  if (!Value(ctx, n, &s)) return false;
  if (s != "true" && s != "1" && s != "false" && s != "0") return ctx.Malformed();  // xs:boolean
  *out = s == "true" || s == "1";
  return true;
}

// Whether `s` has the shape of `pattern`, where 'd' stands for a digit.
bool Shaped(std::string_view s, std::string_view pattern) {
  if (s.size() != pattern.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (pattern[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != pattern[i]) return false;
  }
  return true;
}

int64_t Number(std::string_view s, size_t pos, size_t n) {
  int64_t v = 0;
  for (char c : s.substr(pos, n)) v = v * 10 + (c - '0');
  return v;
}

// ISO 8601 "YYYY-MM-DDThh:mm:ss[.fff]" then "Z" or "+hh:mm"/"-hh:mm" ->
// epoch seconds, or nullopt; *midnight: whether it is midnight UTC exactly.
std::optional<int64_t> ParseTimestamp(std::string_view s, bool* midnight) {
  if (s.size() < 20 || !Shaped(s.substr(0, 19), "dddd-dd-ddTdd:dd:dd")) return std::nullopt;
  const int64_t y = Number(s, 0, 4), mo = Number(s, 5, 2), d = Number(s, 8, 2);
  int64_t t = Number(s, 11, 2) * 3600 + Number(s, 14, 2) * 60 + Number(s, 17, 2);
  std::string_view rest = s.substr(19);
  bool whole = true;
  if (rest.front() == '.') {
    size_t digits = rest.find_first_not_of("0123456789", 1);
    if (digits == 1 || digits == std::string_view::npos) return std::nullopt;
    whole = rest.find_first_not_of('0', 1) == digits;
    rest.remove_prefix(digits);
  }
  if (Shaped(rest, "+dd:dd") || Shaped(rest, "-dd:dd")) {
    if (Number(rest, 1, 2) > 23 || Number(rest, 4, 2) > 59) return std::nullopt;
    t -= (rest[0] == '+' ? 1 : -1) * (Number(rest, 1, 2) * 3600 + Number(rest, 4, 2) * 60);
  } else if (rest != "Z") {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(static_cast<int>(y)),
                                         std::chrono::month(static_cast<unsigned>(mo)),
                                         std::chrono::day(static_cast<unsigned>(d))};
  if (!date.ok() || Number(s, 11, 2) > 23 || Number(s, 14, 2) > 59 || Number(s, 17, 2) > 59)
    return std::nullopt;
  t += std::chrono::sys_days(date).time_since_epoch().count() * kSecondsPerDay;
  // An offset may carry the instant into year -1 or 10000.
  if (t < kFirstDay * kSecondsPerDay || t >= (kLastDay + 1) * kSecondsPerDay) return std::nullopt;
  *midnight = whole && t % kSecondsPerDay == 0;
  return t;
}

bool Date(Ctx& ctx, pugi::xml_node n, int64_t* out) {
  std::string text;
  if (!Value(ctx, n, &text)) return false;
  bool midnight = false;
  std::optional<int64_t> t = ParseTimestamp(text, &midnight);
  if (!t) return ctx.Invalid("'Date' must be an ISO 8601 date and time, at midnight GMT");
  if (!midnight) return ctx.Invalid("'Date' must be at midnight GMT");
  *out = *t;
  return true;
}

bool StorageClass(Ctx& ctx, pugi::xml_node n, std::string* out) {
  if (!Value(ctx, n, out)) return false;
  // A missing predicate accepts nothing (std::function would throw).
  if (!ctx.known_class || !ctx.known_class(*out)) return ctx.Invalid("'StorageClass' is invalid");
  return true;
}

// AWS's floor for the infrequent-access classes (30 days of minimum storage).
bool InfrequentMinimum(Ctx& ctx, const std::string& field, const std::string& storage_class,
                       uint32_t days) {
  if ((storage_class != "STANDARD_IA" && storage_class != "ONEZONE_IA") ||
      days >= kMinInfrequentDays) {
    return true;
  }
  return ctx.Invalid(field + " action must be greater than or equal to 30 for storageClass '" +
                     storage_class + "'");
}

bool NewerNoncurrent(Ctx& ctx, pugi::xml_node n, std::optional<uint32_t>* out) {
  if (!n) return true;
  return Count(ctx, n, 1, kMaxNewerNoncurrent,
               "'NewerNoncurrentVersions' must be between 1 and 100", &out->emplace());
}

bool ParseTag(Ctx& ctx, pugi::xml_node n, Tags* tags) {
  std::array<pugi::xml_node, 2> s;
  if (!Singles<2>(ctx, n, {"Key", "Value"}, &s)) return false;
  if (!s[0]) return ctx.Malformed();
  std::string key, value;
  if (!Text(ctx, s[0], &key) || (s[1] && !Text(ctx, s[1], &value))) return false;
  tags->emplace_back(std::move(key), std::move(value));
  return true;
}

// One predicate of a Filter or an And; `seen` catches a repeated Prefix or size.
bool ParsePredicate(Ctx& ctx, pugi::xml_node c, Filter* f, unsigned* seen) {
  std::string_view name = c.name();
  if (name == "Tag") return ParseTag(ctx, c, &f->tags);
  unsigned bit = name == "Prefix"                  ? 1
                 : name == "ObjectSizeGreaterThan" ? 2
                 : name == "ObjectSizeLessThan"    ? 4
                                                   : 0;
  if (bit == 0 || (*seen & bit)) return ctx.Malformed();
  *seen |= bit;
  if (bit == 1) return Text(ctx, c, &f->prefix);
  int64_t v;
  if (!Integer(ctx, c, kMaxLong, &v)) return false;
  if (v < 0) return ctx.Invalid("'" + std::string(name) + "' must be a non-negative integer");
  (bit == 2 ? f->size_greater_than : f->size_less_than) = static_cast<uint64_t>(v);
  return true;
}

// <Filter>: empty (every object), or exactly one of Prefix, Tag,
// ObjectSizeGreaterThan, ObjectSizeLessThan and And.
bool ParseFilter(Ctx& ctx, pugi::xml_node n, Rule* r) {
  pugi::xml_node only;
  if (!Elements(ctx, n, [&](pugi::xml_node c) { return !only && (only = c); })) return false;
  unsigned seen = 0;
  auto predicate = [&](pugi::xml_node c) { return ParsePredicate(ctx, c, &r->filter, &seen); };
  if (!only) {
    r->filter_form = FilterForm::kEmptyFilter;
    return true;
  }
  if (std::string_view(only.name()) != "And") {
    r->filter_form = FilterForm::kFilter;
    return predicate(only);
  }
  r->filter_form = FilterForm::kAnd;
  return Elements(ctx, only, predicate);
}

bool ParseExpiration(Ctx& ctx, pugi::xml_node n, Rule* r) {
  std::array<pugi::xml_node, 3> s;
  if (!Singles<3>(ctx, n, {"Date", "Days", "ExpiredObjectDeleteMarker"}, &s)) return false;
  auto [date, days, marker] = s;
  // One of the three: Days and Date exclude each other, and the marker flag
  // stands alone (AWS documents "cannot be specified with Days or Date").
  if ((date && days) || (marker && (date || days)) || !(date || days || marker)) {
    return ctx.Malformed();
  }
  if (marker) return Boolean(ctx, marker, &r->expired_object_delete_marker);
  When& w = r->expiration.emplace();
  if (days) {
    return Count(ctx, days, 1, kMaxInt, "'Days' for Expiration action must be a positive integer",
                 &w.days.emplace());
  }
  return Date(ctx, date, &w.date_s.emplace());
}

bool ParseTransition(Ctx& ctx, pugi::xml_node n, Rule* r) {
  std::array<pugi::xml_node, 3> s;
  if (!Singles<3>(ctx, n, {"Date", "Days", "StorageClass"}, &s)) return false;
  auto [date, days, storage_class] = s;
  if ((date && days) || !(date || days) || !storage_class) return ctx.Malformed();
  TransitionAction t;
  if (!StorageClass(ctx, storage_class, &t.storage_class)) return false;
  if (days) {
    uint32_t& d = t.when.days.emplace();
    if (!Count(ctx, days, 0, kMaxInt, "'Days' in Transition action must be a non-negative integer",
               &d)) {
      return false;
    }
    if (!InfrequentMinimum(ctx, "'Days' in Transition", t.storage_class, d)) return false;
  } else if (!Date(ctx, date, &t.when.date_s.emplace())) {
    return false;
  }
  r->transitions.push_back(std::move(t));
  return true;
}

bool ParseNoncurrentExpiration(Ctx& ctx, pugi::xml_node n, Rule* r) {
  std::array<pugi::xml_node, 2> s;
  if (!Singles<2>(ctx, n, {"NoncurrentDays", "NewerNoncurrentVersions"}, &s)) return false;
  if (!s[0]) return ctx.Malformed();
  return Count(ctx, s[0], 1, kMaxInt,
               "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer",
               &r->noncurrent_days.emplace()) &&
         NewerNoncurrent(ctx, s[1], &r->newer_noncurrent_versions);
}

bool ParseNoncurrentTransition(Ctx& ctx, pugi::xml_node n, Rule* r) {
  std::array<pugi::xml_node, 3> s;
  if (!Singles<3>(ctx, n, {"NoncurrentDays", "StorageClass", "NewerNoncurrentVersions"}, &s)) {
    return false;
  }
  if (!s[0] || !s[1]) return ctx.Malformed();
  NoncurrentTransitionAction t;
  if (!StorageClass(ctx, s[1], &t.storage_class)) return false;
  if (!Count(
          ctx, s[0], 0, kMaxInt,
          "'NoncurrentDays' in NoncurrentVersionTransition action must be a non-negative integer",
          &t.noncurrent_days)) {
    return false;
  }
  if (!InfrequentMinimum(ctx, "'NoncurrentDays' in NoncurrentVersionTransition", t.storage_class,
                         t.noncurrent_days) ||
      !NewerNoncurrent(ctx, s[2], &t.newer_noncurrent_versions)) {
    return false;
  }
  r->noncurrent_transitions.push_back(std::move(t));
  return true;
}

bool ParseAbort(Ctx& ctx, pugi::xml_node n, Rule* r) {
  std::array<pugi::xml_node, 1> s;
  if (!Singles<1>(ctx, n, {"DaysAfterInitiation"}, &s)) return false;
  if (!s[0]) return ctx.Malformed();
  return Count(
      ctx, s[0], 1, kMaxInt,
      "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer",
      &r->abort_upload_days.emplace());
}

// One transition of a rule, for the checks across them: its class's rank,
// when (Days or epoch seconds: one rule never mixes them) and its class.
struct Step {
  int rank;
  int64_t at;
  std::string_view storage_class;
};

// The transitions of a rule (or its noncurrent ones) and the expiration after
// them: no class twice, a colder class strictly later than every warmer one
// (in time order, the colder first on a tie, no step is warmer than one
// before it), the expiration after the last. Sorted, not compared in pairs:
// a document may hold many steps.
bool CheckSchedule(Ctx& ctx, std::vector<Step> steps, std::optional<int64_t> expires,
                   const std::string& action, const std::string& expiration,
                   const std::string& unit, const std::string& prefix) {
  std::set<std::string_view> classes;
  for (const Step& s : steps) {
    if (!classes.insert(s.storage_class).second) {
      return ctx.Invalid("'StorageClass' must be different for '" + action +
                         "' actions in same 'Rule' with prefix '" + prefix + "'");
    }
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    return a.at != b.at ? a.at < b.at : a.rank > b.rank;
  });
  const Step* coldest = nullptr;  // so far
  for (const Step& s : steps) {
    if (coldest && s.rank < coldest->rank) {
      return ctx.Invalid(unit + " in the " + action + " action for StorageClass '" +
                         std::string(coldest->storage_class) + "' must be greater than " + unit +
                         " in the " + action + " action for StorageClass '" +
                         std::string(s.storage_class) + "'");
    }
    if (!coldest || s.rank > coldest->rank) coldest = &s;
  }
  if (expires && !steps.empty() && *expires <= steps.back().at) {
    return ctx.Invalid(unit + " in the " + expiration + " action for prefix '" + prefix +
                       "' must be greater than " + unit + " in the " + action + " action");
  }
  return true;
}

// What AWS checks across the actions of one rule, once each parsed alone.
bool CheckRule(Ctx& ctx, const Rule& r) {
  const Filter& f = r.filter;
  std::set<std::string_view> keys;
  for (const auto& [k, v] : f.tags) {
    if (!keys.insert(k).second) return ctx.Invalid("Duplicate Tag Keys are not allowed.");
  }
  if (f.size_greater_than && f.size_less_than && *f.size_greater_than >= *f.size_less_than) {
    return ctx.Invalid("'ObjectSizeGreaterThan' must be less than 'ObjectSizeLessThan'");
  }
  if (!r.expiration && !r.expired_object_delete_marker && r.transitions.empty() &&
      !r.noncurrent_days && r.noncurrent_transitions.empty() && !r.abort_upload_days) {
    return ctx.Fail(Problem::kInvalidRequest,
                    "At least one action needs to be specified in a rule");
  }
  if (r.expired_object_delete_marker && !f.tags.empty()) {
    return ctx.Invalid("Tag based filter cannot be used with ExpiredObjectDeleteMarker action");
  }
  // Uploads have no tags and no size yet: such a rule could never abort one.
  if (r.abort_upload_days && !f.tags.empty()) {
    return ctx.Fail(Problem::kInvalidRequest,
                    "AbortIncompleteMultipartUpload cannot be specified with Tags.");
  }
  if (r.abort_upload_days && (f.size_greater_than || f.size_less_than)) {
    return ctx.Fail(
        Problem::kInvalidRequest,
        "AbortIncompleteMultipartUpload cannot be specified with an object size filter.");
  }
  auto at = [](const When& w) { return w.days ? int64_t{*w.days} : w.date_s.value_or(0); };
  bool by_days = r.expiration && r.expiration->days, by_date = r.expiration && r.expiration->date_s;
  std::vector<Step> steps;
  for (const TransitionAction& t : r.transitions) {
    by_days |= t.when.days.has_value();
    by_date |= t.when.date_s.has_value();
    steps.push_back({ClassRank(t.storage_class), at(t.when), t.storage_class});
  }
  if (by_days && by_date) {
    return ctx.Invalid(
        "Found mixed 'Date' and 'Days' based Expiration and Transition actions in lifecycle rule "
        "for prefix '" + f.prefix + "'");
  }
  std::optional<int64_t> expires;
  if (r.expiration) expires = at(*r.expiration);
  if (!CheckSchedule(ctx, std::move(steps), expires, "Transition", "Expiration",
                     by_date ? "'Date'" : "'Days'", f.prefix)) {
    return false;
  }
  steps.clear();
  for (const NoncurrentTransitionAction& t : r.noncurrent_transitions) {
    steps.push_back({ClassRank(t.storage_class), t.noncurrent_days, t.storage_class});
  }
  return CheckSchedule(ctx, std::move(steps), r.noncurrent_days, "NoncurrentVersionTransition",
                       "NoncurrentVersionExpiration", "'NoncurrentDays'", f.prefix);
}

bool ParseRule(Ctx& ctx, pugi::xml_node n, Rule* r) {
  // The elements a rule holds once; Transition and NoncurrentVersionTransition repeat.
  static constexpr std::array<std::string_view, 7> kSingles = {
      "ID", "Status", "Prefix", "Filter", "Expiration", "NoncurrentVersionExpiration",
      "AbortIncompleteMultipartUpload"};
  std::array<pugi::xml_node, 7> s;
  bool ok = Elements(ctx, n, [&](pugi::xml_node c) {
    std::string_view name = c.name();
    if (name == "Transition") return ParseTransition(ctx, c, r);
    if (name == "NoncurrentVersionTransition") return ParseNoncurrentTransition(ctx, c, r);
    auto it = std::find(kSingles.begin(), kSingles.end(), name);
    if (it == kSingles.end() || s[it - kSingles.begin()]) return false;
    s[it - kSingles.begin()] = c;
    return true;
  });
  if (!ok) return false;
  auto [id, status, prefix, filter, expiration, noncurrent, abort] = s;
  // Exactly one of the legacy Prefix and Filter names the objects.
  if (!status || !prefix == !filter) return ctx.Malformed();
  if (id) {
    if (!Text(ctx, id, &r->id)) return false;
    // Characters, not bytes: UTF-8 continuation bytes do not count.
    if (std::count_if(r->id.begin(), r->id.end(), [](unsigned char c) {
          return (c & 0xC0) != 0x80;
        }) > static_cast<std::ptrdiff_t>(kMaxIdLength)) {
      return ctx.Invalid("ID length should not exceed allowed limit of 255");
    }
  }
  std::string st;
  if (!Value(ctx, status, &st)) return false;
  if (st != "Enabled" && st != "Disabled") return ctx.Malformed();
  r->enabled = st == "Enabled";
  if (prefix) {
    r->filter_form = FilterForm::kLegacyPrefix;
    if (!Text(ctx, prefix, &r->filter.prefix)) return false;
  } else if (!ParseFilter(ctx, filter, r)) {
    return false;
  }
  if (expiration && !ParseExpiration(ctx, expiration, r)) return false;
  if (noncurrent && !ParseNoncurrentExpiration(ctx, noncurrent, r)) return false;
  if (abort && !ParseAbort(ctx, abort, r)) return false;
  return CheckRule(ctx, *r);
}

bool ParseDocument(Ctx& ctx, std::string_view xml, Configuration* config) {
  if (XmlHasNul(xml)) return ctx.Malformed();  // "<Prefix>a&#0;b</Prefix>" would read as "a"
  // parse_ws_pcdata_single keeps a blank-only text (<Prefix> </Prefix> is the
  // prefix " ") while the blanks between elements are still dropped.
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata_single,
                       pugi::encoding_utf8)) {
    return ctx.Malformed();
  }
  pugi::xml_node root;
  if (!Elements(ctx, doc, [&](pugi::xml_node c) { return !root && (root = c); }) || !root ||
      std::string_view(root.name()) != "LifecycleConfiguration") {
    return ctx.Malformed();
  }
  if (pugi::xml_attribute ns = root.attribute("xmlns");
      ns && std::string_view(ns.value()) != kNamespace) {
    return ctx.Malformed();
  }
  bool ok = Elements(ctx, root, [&](pugi::xml_node c) {
    if (std::string_view(c.name()) != "Rule" || config->rules.size() == kMaxRules) return false;
    Rule& r = config->rules.emplace_back();
    return ParseRule(ctx, c, &r);
  });
  if (!ok || config->rules.empty()) return ctx.Malformed();
  std::set<std::string> ids;
  for (const Rule& r : config->rules) {
    if (!r.id.empty() && !ids.insert(r.id).second) {
      return ctx.Invalid("Rule ID must be unique. Found same ID for more than one rule");
    }
  }
  // A rule without an ID (or an empty one) gets "rule-<position>", made
  // unique against every given ID by a "-<k>" suffix: deterministic, so a
  // document parses the same every time, and stored once rendered.
  for (size_t i = 0; i < config->rules.size(); ++i) {
    if (!config->rules[i].id.empty()) continue;
    std::string base = "rule-" + std::to_string(i + 1), id = base;
    for (size_t k = 1; !ids.insert(id).second; ++k) id = base + "-" + std::to_string(k);
    config->rules[i].id = std::move(id);
  }
  return true;
}

// ---- Rendering --------------------------------------------------------------

void Escape(std::string* out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      // clang-format off
      case '&': *out += "&amp;"; break;
      case '<': *out += "&lt;"; break;
      case '>': *out += "&gt;"; break;
      case '"': *out += "&quot;"; break;
      case '\'': *out += "&apos;"; break;
      case '\r': *out += "&#13;"; break;  // a raw CR would be read back as LF
      default: out->push_back(c);
      // clang-format on
    }
  }
}

void Element(std::string* out, std::string_view name, std::string_view text) {
  out->append("<").append(name).append(">");
  Escape(out, text);
  out->append("</").append(name).append(">");
}

void Open(std::string* out, std::string_view name) { out->append("<").append(name).append(">"); }
void Close(std::string* out, std::string_view name) { out->append("</").append(name).append(">"); }

std::string RenderDate(int64_t date_s) {
  // A hand-built Date beyond the years parsing accepts is clamped.
  const int64_t days =
      std::clamp(date_s / kSecondsPerDay - (date_s % kSecondsPerDay < 0), kFirstDay, kLastDay);
  const std::chrono::year_month_day date{std::chrono::sys_days(std::chrono::days(days))};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT00:00:00.000Z", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
  return buf;
}

void RenderWhen(std::string* out, const When& w) {
  if (w.date_s) Element(out, "Date", RenderDate(*w.date_s));
  if (w.days) Element(out, "Days", std::to_string(*w.days));
}

void RenderTag(std::string* out, const std::pair<std::string, std::string>& tag) {
  Open(out, "Tag");
  Element(out, "Key", tag.first);
  Element(out, "Value", tag.second);
  Close(out, "Tag");
}

// The filter as the rule named it; a form that cannot hold the filter's
// conditions (only a hand-built Rule has that) falls back to one that can,
// so the document always says what Matches does.
void RenderFilter(std::string* out, const Rule& r) {
  const Filter& f = r.filter;
  const size_t conditions = f.tags.size() + f.size_greater_than.has_value() +
                            f.size_less_than.has_value() + !f.prefix.empty();
  const bool prefix_only = conditions == (f.prefix.empty() ? 0 : 1);
  FilterForm form = r.filter_form;
  if ((form == FilterForm::kLegacyPrefix && !prefix_only) ||
      (form == FilterForm::kEmptyFilter && conditions > 0)) {
    form = FilterForm::kFilter;
  }
  if (form == FilterForm::kFilter && conditions > 1) form = FilterForm::kAnd;
  if (form == FilterForm::kLegacyPrefix) return Element(out, "Prefix", f.prefix);
  Open(out, "Filter");
  if (form == FilterForm::kAnd) Open(out, "And");
  // <Filter><Prefix></Prefix></Filter> is a Filter of its own, unlike <Filter/>.
  if (!f.prefix.empty() || (form == FilterForm::kFilter && conditions == 0)) {
    Element(out, "Prefix", f.prefix);
  }
  for (const auto& tag : f.tags) RenderTag(out, tag);
  if (f.size_greater_than) {
    Element(out, "ObjectSizeGreaterThan", std::to_string(*f.size_greater_than));
  }
  if (f.size_less_than) Element(out, "ObjectSizeLessThan", std::to_string(*f.size_less_than));
  if (form == FilterForm::kAnd) Close(out, "And");
  Close(out, "Filter");
}

int64_t DateNs(int64_t date_s) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / kNsPerSecond;
  return std::clamp(date_s, -kMax, kMax) * kNsPerSecond;  // saturates (hand-built dates)
}

// When `w` falls for a version whose clock started at `from_ns`.
int64_t DueAt(const When& w, int64_t from_ns, int64_t day_ns) {
  if (w.date_s) return DateNs(*w.date_s);
  if (w.days) return DueAfterDays(from_ns, *w.days, day_ns);
  return std::numeric_limits<int64_t>::max();
}

}  // namespace

std::variant<Configuration, ParseError> ParseLifecycle(std::string_view xml,
                                                       const KnownClass& known_class) {
  // Nothing here throws but allocation, and known_class (the caller's).
  try {
    Ctx ctx{known_class, std::nullopt};
    Configuration config;
    if (!ParseDocument(ctx, xml, &config)) return *ctx.error;
    return config;
  } catch (...) {
    return ParseError{Problem::kInvalidRequest, "The lifecycle configuration could not be read"};
  }
}

std::string RenderLifecycle(const Configuration& c) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LifecycleConfiguration xmlns=\"";
  out.append(kNamespace).append("\">");
  // The element order of AWS's PutBucketLifecycleConfiguration syntax.
  for (const Rule& r : c.rules) {
    Open(&out, "Rule");
    if (r.expiration || r.expired_object_delete_marker) {
      Open(&out, "Expiration");
      if (r.expiration) RenderWhen(&out, *r.expiration);
      if (!r.expiration) Element(&out, "ExpiredObjectDeleteMarker", "true");
      Close(&out, "Expiration");
    }
    Element(&out, "ID", r.id);
    RenderFilter(&out, r);
    Element(&out, "Status", r.enabled ? "Enabled" : "Disabled");
    for (const TransitionAction& t : r.transitions) {
      Open(&out, "Transition");
      RenderWhen(&out, t.when);
      Element(&out, "StorageClass", t.storage_class);
      Close(&out, "Transition");
    }
    for (const NoncurrentTransitionAction& t : r.noncurrent_transitions) {
      Open(&out, "NoncurrentVersionTransition");
      Element(&out, "NoncurrentDays", std::to_string(t.noncurrent_days));
      Element(&out, "StorageClass", t.storage_class);
      if (t.newer_noncurrent_versions) {
        Element(&out, "NewerNoncurrentVersions", std::to_string(*t.newer_noncurrent_versions));
      }
      Close(&out, "NoncurrentVersionTransition");
    }
    if (r.noncurrent_days) {
      Open(&out, "NoncurrentVersionExpiration");
      Element(&out, "NoncurrentDays", std::to_string(*r.noncurrent_days));
      if (r.newer_noncurrent_versions) {
        Element(&out, "NewerNoncurrentVersions", std::to_string(*r.newer_noncurrent_versions));
      }
      Close(&out, "NoncurrentVersionExpiration");
    }
    if (r.abort_upload_days) {
      Open(&out, "AbortIncompleteMultipartUpload");
      Element(&out, "DaysAfterInitiation", std::to_string(*r.abort_upload_days));
      Close(&out, "AbortIncompleteMultipartUpload");
    }
    Close(&out, "Rule");
  }
  out.append("</LifecycleConfiguration>");
  return out;
}

int ClassRank(std::string_view storage_class) {
  static constexpr std::pair<std::string_view, int> kRanks[] = {
      {"INTELLIGENT_TIERING", 1}, {"STANDARD_IA", 2}, {"ONEZONE_IA", 3},
      {"GLACIER_IR", 4},          {"GLACIER", 5},     {"DEEP_ARCHIVE", 6}};
  for (const auto& [name, rank] : kRanks) {
    if (name == storage_class) return rank;
  }
  return 0;  // STANDARD, EXPRESS_ONEZONE, REDUCED_REDUNDANCY, "" and names unknown here
}

bool TransitionAllowed(std::string_view from, std::string_view to) {
  if (ClassRank(to) == 0) return false;  // not a transition target
  if (from == "STANDARD_IA") return to != "STANDARD_IA";
  if (from == "INTELLIGENT_TIERING") return to != "INTELLIGENT_TIERING" && to != "STANDARD_IA";
  if (from == "ONEZONE_IA" || from == "GLACIER_IR") return to == "GLACIER" || to == "DEEP_ARCHIVE";
  if (from == "GLACIER") return to == "DEEP_ARCHIVE";
  if (from == "DEEP_ARCHIVE") return false;
  return true;  // the STANDARD family: STANDARD, "", EXPRESS_ONEZONE, REDUCED_REDUNDANCY
}

bool Matches(const Rule& rule, const VersionFacts& v) {
  const Filter& f = rule.filter;
  if (!std::string_view(v.key).starts_with(f.prefix)) return false;
  if (f.size_greater_than && v.size_bytes <= *f.size_greater_than) return false;
  if (f.size_less_than && v.size_bytes >= *f.size_less_than) return false;
  return std::all_of(f.tags.begin(), f.tags.end(), [&](const auto& tag) {
    return std::find(v.tags.begin(), v.tags.end(), tag) != v.tags.end();
  });
}

Action Evaluate(const Configuration& c, const VersionFacts& v, int64_t now_ns, int64_t day_ns) {
  const Rule* remove = nullptr;  // first rule whose deletion is due
  const Rule* marker = nullptr;  // first rule whose expiration (adding a marker) is due
  const Rule* move = nullptr;    // the rule of the coldest due transition so far
  std::string_view move_to;
  int move_rank = -1;  // of the coldest allowed transition due so far
  auto transition = [&](const Rule& r, std::string_view storage_class) {
    if (v.size_bytes < v.min_transition_bytes && !r.filter.size_greater_than &&
        !r.filter.size_less_than) {
      return;  // too small for the bucket's default minimum
    }
    if (!TransitionAllowed(v.storage_class, storage_class)) return;
    int rank = ClassRank(storage_class);
    if (rank > move_rank) move = &r, move_to = storage_class, move_rank = rank;
  };
  // NewerNoncurrentVersions keeps that many newest noncurrent versions.
  auto kept = [&](const std::optional<uint32_t>& newer) {
    return newer && v.newer_noncurrent < *newer;
  };
  for (const Rule& r : c.rules) {
    if (!r.enabled || !Matches(r, v)) continue;
    if (v.is_latest && v.delete_marker) {
      // Only ExpiredObjectDeleteMarker removes a current marker, and only
      // once it is the key's last version (Expiration Days never does).
      if (r.expired_object_delete_marker && v.only_version && !remove) remove = &r;
    } else if (v.is_latest) {
      if (r.expiration && now_ns >= DueAt(*r.expiration, v.mtime_ns, day_ns)) {
        const Rule*& slot = v.versioned_bucket ? marker : remove;
        if (!slot) slot = &r;
      }
      for (const TransitionAction& t : r.transitions) {
        if (now_ns >= DueAt(t.when, v.mtime_ns, day_ns)) transition(r, t.storage_class);
      }
    } else {
      if (r.noncurrent_days && !remove && !kept(r.newer_noncurrent_versions) &&
          now_ns >= DueAfterDays(v.noncurrent_since_ns, *r.noncurrent_days, day_ns)) {
        remove = &r;
      }
      if (v.delete_marker) continue;  // a marker has no data to move
      for (const NoncurrentTransitionAction& t : r.noncurrent_transitions) {
        if (!kept(t.newer_noncurrent_versions) &&
            now_ns >= DueAfterDays(v.noncurrent_since_ns, t.noncurrent_days, day_ns)) {
          transition(r, t.storage_class);
        }
      }
    }
  }
  if (remove) return {ActionKind::kDelete, "", remove->id};
  if (move) return {ActionKind::kTransition, std::string(move_to), move->id};
  if (marker) return {ActionKind::kAddMarker, "", marker->id};
  return {};
}

std::optional<std::string> AbortDue(const Configuration& c, std::string_view key,
                                    int64_t initiated_ns, int64_t now_ns, int64_t day_ns) {
  for (const Rule& r : c.rules) {
    const Filter& f = r.filter;
    if (!r.enabled || !r.abort_upload_days) continue;
    // An upload has no tags and no size yet: only a prefix can select it.
    if (!f.tags.empty() || f.size_greater_than || f.size_less_than) continue;
    if (!key.starts_with(f.prefix)) continue;
    if (now_ns >= DueAfterDays(initiated_ns, *r.abort_upload_days, day_ns)) return r.id;
  }
  return std::nullopt;
}

std::optional<ExpirationInfo> ExpirationOf(const Configuration& c, const VersionFacts& v,
                                           int64_t day_ns) {
  if (!v.is_latest || v.delete_marker) return std::nullopt;
  std::optional<ExpirationInfo> first;
  for (const Rule& r : c.rules) {
    if (!r.enabled || !r.expiration || !Matches(r, v)) continue;
    int64_t at = DueAt(*r.expiration, v.mtime_ns, day_ns);
    if (!first || at < first->expiry_ns) first = ExpirationInfo{at, r.id};
  }
  return first;
}

int64_t DueAfterDays(int64_t t_ns, uint32_t days, int64_t day_ns) {
  // In 128 bits: 2^32 days of 86400 s overflow 64-bit nanoseconds; the
  // result saturates. A day shorter than 1 ns counts as 1 ns.
  const __int128 day = std::max<int64_t>(day_ns, 1);
  __int128 due = static_cast<__int128>(t_ns) + static_cast<__int128>(days) * day;
  __int128 q = due / day;  // rounds toward zero: up for negatives already
  if (due % day != 0 && due > 0) ++q;
  due = q * day;
  if (due > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (due < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(due);
}

}  // namespace strata::tier
