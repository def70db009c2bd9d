#include "advisor/policy.h"

#include <nlohmann/json.hpp>
#include <set>

#include "tier/classes.h"

namespace strata::advisor {

bool GlobMatch(std::string_view pattern, std::string_view s) {
  // Iterative '*' matching with one backtrack point (linear in practice).
  size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pattern.size() && pattern[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

Status CheckMove(const std::string& m) {
  if (m == kKvExpireMove) return Status::OK();
  size_t arrow = m.find("->");
  if (arrow == std::string::npos) {
    return InvalidArgument("advisor policy: moves: \"" + m + "\" is not FROM->TO (e.g. hot->warm)");
  }
  for (std::string_view media : {std::string_view(m).substr(0, arrow),
                                 std::string_view(m).substr(arrow + 2)}) {
    if (!tier::ParseMedia(media)) {
      return InvalidArgument("advisor policy: moves: unknown media \"" + std::string(media) +
                             "\" (gpu-direct, hot, warm, cold; or kv->expire)");
    }
  }
  return Status::OK();
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("advisor policy: not a JSON object");
  }
  static const std::set<std::string> kFields = {
      "enabled", "require_approval", "buckets", "prefixes", "moves", "max_bytes_per_day",
      "window_start_hour", "window_end_hour", "max_objects_per_second"};
  for (const auto& [k, v] : j.items()) {
    if (!kFields.count(k)) return InvalidArgument("advisor policy: unknown field \"" + k + "\"");
  }
  Policy p;
  auto boolean = [&](const char* name, bool* out) -> Status {
    if (!j.contains(name)) return Status::OK();
    if (!j[name].is_boolean()) return InvalidArgument(std::string("advisor policy: ") + name + " must be true or false");
    *out = j[name].get<bool>();
    return Status::OK();
  };
  auto strings = [&](const char* name, std::vector<std::string>* out) -> Status {
    if (!j.contains(name)) return Status::OK();
    if (!j[name].is_array()) return InvalidArgument(std::string("advisor policy: ") + name + " must be a list of strings");
    out->clear();
    for (const auto& v : j[name]) {
      if (!v.is_string()) return InvalidArgument(std::string("advisor policy: ") + name + " must be a list of strings");
      out->push_back(v.get<std::string>());
    }
    return Status::OK();
  };
  auto number = [&](const char* name, uint64_t max, uint64_t* out) -> Status {
    if (!j.contains(name)) return Status::OK();
    if (!j[name].is_number_unsigned() || j[name].get<uint64_t>() > max) {
      return InvalidArgument(std::string("advisor policy: ") + name + " must be a whole number from 0 to " + std::to_string(max));
    }
    *out = j[name].get<uint64_t>();
    return Status::OK();
  };
  uint64_t start = 0, end = 24, rate = p.max_objects_per_second;
  for (Status st : {boolean("enabled", &p.enabled), boolean("require_approval", &p.require_approval),
                    strings("buckets", &p.buckets), strings("prefixes", &p.prefixes),
                    strings("moves", &p.moves),
                    number("max_bytes_per_day", UINT64_MAX, &p.max_bytes_per_day),
                    number("window_start_hour", 24, &start), number("window_end_hour", 24, &end),
                    number("max_objects_per_second", 1'000'000, &rate)}) {
    if (!st.ok()) return st;
  }
  for (const std::string& m : p.moves) {
    if (Status st = CheckMove(m); !st.ok()) return st;
  }
  p.window_start_hour = static_cast<int>(start);
  p.window_end_hour = static_cast<int>(end);
  p.max_objects_per_second = static_cast<uint32_t>(rate);
  return p;
}

std::string PolicyJson(const Policy& p) {
  nlohmann::json j = {{"enabled", p.enabled},
                      {"require_approval", p.require_approval},
                      {"buckets", p.buckets},
                      {"prefixes", p.prefixes},
                      {"moves", p.moves},
                      {"max_bytes_per_day", p.max_bytes_per_day},
                      {"window_start_hour", p.window_start_hour},
                      {"window_end_hour", p.window_end_hour},
                      {"max_objects_per_second", p.max_objects_per_second}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PolicyRefusal(const Policy& p, const Recommendation& r) {
  const std::string move = r.from_media + "->" + r.to_media;
  bool move_ok = false;
  for (const std::string& m : p.moves) move_ok |= m == move;
  if (!move_ok) {
    std::string allowed;
    for (const std::string& m : p.moves) allowed += (allowed.empty() ? "" : ", ") + m;
    return "the execution policy does not allow " + move + " moves (allowed: " +
           (allowed.empty() ? "none" : allowed) + ")";
  }
  bool bucket_ok = false;
  for (const std::string& b : p.buckets) bucket_ok |= GlobMatch(b, r.bucket);
  if (!bucket_ok) return "the execution policy does not cover bucket " + r.bucket;
  if (!p.prefixes.empty()) {
    bool prefix_ok = false;
    for (const std::string& pre : p.prefixes) prefix_ok |= r.prefix.starts_with(pre);
    if (!prefix_ok) return "the execution policy does not cover prefix " + r.prefix;
  }
  return "";
}

bool InWindow(const Policy& p, int64_t unix_ns) {
  if (p.window_start_hour == p.window_end_hour) return false;  // an empty window
  const int hour = static_cast<int>((unix_ns / 1'000'000'000 / 3600) % 24);
  if (p.window_start_hour < p.window_end_hour) {
    return hour >= p.window_start_hour && hour < p.window_end_hour;
  }
  return hour >= p.window_start_hour || hour < p.window_end_hour;
}

}  // namespace strata::advisor
