// The tier advisor's admin actions (docs/admin-api.md, docs/advisor.md):
//   GET  advisor-list[?state=]    recommendations (newest first), executor, model
//   GET  advisor-show?id=         one recommendation, with the model's coefficients
//   POST advisor-approve?id=      pending -> approved (409 with the reason if the
//                                 policy does not allow it)
//   POST advisor-reject?id=[&reason=]
//   GET  advisor-policy           the execution policy
//   PUT  advisor-policy           replace it (400 with the field at fault)
//   POST advisor-run              an analysis now; its summary
//   POST advisor-stop | advisor-resume   the policy's enabled false / true
//   GET  advisor-stats[?bucket=&limit=]  the most read prefixes
#include <algorithm>
#include <nlohmann/json.hpp>

#include "advisor/advisor.h"
#include "common/time_util.h"
#include "server/admin_api.h"

namespace strata::server {

namespace {

nlohmann::json ExecutorJson(const advisor::ExecutorStatus& s) {
  return {{"enabled", s.enabled},         {"in_window", s.in_window},
          {"day", s.day},                 {"bytes_today", s.bytes_today},
          {"budget_bytes", s.budget},     {"running", s.running},
          {"waiting", s.waiting},         {"moved_objects", s.moved_objects},
          {"moved_bytes", s.moved_bytes}};
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<std::pair<int, std::string>> HandleAdvisorAction(
    advisor::Advisor* a, const std::string& caller, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query,
    const std::string& body) {
  if (!action.starts_with("advisor-")) return std::nullopt;
  if (!a) return AdminError(409, "the tier advisor is off (--advisor off)");
  auto q = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : query) {
      if (k == name) return &v;
    }
    return nullptr;
  };
  auto need_id = [&]() -> const std::string* { return q("id"); };
  if (action == "advisor-list" && method == "GET") {
    const std::string* state = q("state");
    nlohmann::json recs = nlohmann::json::array();
    for (const advisor::Recommendation& r : a->List()) {
      if (state && r.state != *state) continue;
      recs.push_back(nlohmann::json::parse(advisor::RecommendationJson(r)));
    }
    nlohmann::json doc = {{"recommendations", recs},
                          {"executor", ExecutorJson(a->executor())},
                          {"policy", nlohmann::json::parse(advisor::PolicyJson(a->policy()))},
                          {"model", nlohmann::json::parse(a->ModelJson())}};
    return std::make_pair(200, Dump(doc));
  }
  if (action == "advisor-show" && method == "GET") {
    const std::string* id = need_id();
    if (!id) return AdminError(400, "advisor-show needs id");
    auto r = a->Get(*id);
    if (!r.ok()) return AdminErrorFrom(r.status());
    return std::make_pair(200, advisor::RecommendationJson(*r, &a->options().model));
  }
  if ((action == "advisor-approve" || action == "advisor-reject") && method == "POST") {
    const std::string* id = need_id();
    if (!id) return AdminError(400, action + " needs id");
    const std::string* reason = q("reason");
    Status st = action == "advisor-approve" ? a->Approve(*id, caller)
                                            : a->Reject(*id, caller, reason ? *reason : "");
    if (!st.ok()) return AdminErrorFrom(st);
    auto r = a->Get(*id);
    if (!r.ok()) return AdminErrorFrom(r.status());
    return std::make_pair(200, Dump({{"done", "recommendation " + *id + " " + r->state},
                                     {"recommendation", nlohmann::json::parse(
                                                            advisor::RecommendationJson(*r))}}));
  }
  if (action == "advisor-policy" && method == "GET") {
    return std::make_pair(200, advisor::PolicyJson(a->policy()));
  }
  if (action == "advisor-policy" && method == "PUT") {
    auto p = advisor::ParsePolicy(body);
    if (!p.ok()) return AdminErrorFrom(p.status());
    if (Status st = a->SetPolicy(*p); !st.ok()) return AdminErrorFrom(st);
    return std::make_pair(200, advisor::PolicyJson(*p));
  }
  if ((action == "advisor-stop" || action == "advisor-resume") && method == "POST") {
    advisor::Policy p = a->policy();
    p.enabled = action == "advisor-resume";
    if (Status st = a->SetPolicy(p); !st.ok()) return AdminErrorFrom(st);
    return std::make_pair(200, Dump({{"done", p.enabled ? "advisor execution resumed"
                                                        : "advisor execution stopped"}}));
  }
  if (action == "advisor-run" && method == "POST") {
    auto s = a->Analyze();
    if (!s.ok()) return AdminErrorFrom(s.status());
    return std::make_pair(
        200, Dump({{"objects", s->objects}, {"prefixes", s->prefixes},
                   {"recommended", s->recommended}, {"added", s->added},
                   {"refreshed", s->refreshed}, {"expired", s->expired},
                   {"truncated", s->truncated}, {"at", FormatIso8601(s->at_ns)}}));
  }
  if (action == "advisor-stats" && method == "GET") {
    const std::string* bucket = q("bucket");
    size_t limit = 100;
    if (const std::string* l = q("limit")) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(l->c_str(), &end, 10);
      if (l->empty() || *end != '\0' || n == 0 || n > 100000) {
        return AdminError(400, "advisor-stats: limit must be 1 to 100000");
      }
      limit = static_cast<size_t>(n);
    }
    const int64_t now = a->options().now();
    std::vector<advisor::PrefixStats> all = a->stats().Snapshot(now);
    if (bucket) {
      std::erase_if(all, [&](const advisor::PrefixStats& s) { return s.bucket != *bucket; });
    }
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.reads > y.reads; });
    if (all.size() > limit) all.resize(limit);
    const int64_t today = a->stats().DayOf(now);
    const int window = a->options().thresholds.window_days;
    nlohmann::json rows = nlohmann::json::array();
    for (const advisor::PrefixStats& s : all) {
      std::vector<uint64_t> days;
      for (int64_t d = today - window + 1; d <= today; ++d) days.push_back(s.ReadsOnDay(d));
      rows.push_back({{"bucket", s.bucket},
                      {"prefix", s.prefix},
                      {"reads", s.reads},
                      {"bytes_read", s.bytes_read},
                      {"total_reads", s.total_reads},
                      {"total_bytes", s.total_bytes},
                      {"last_read", s.last_read_ns ? FormatIso8601(s.last_read_ns) : ""},
                      {"daily_reads", days}});
    }
    return std::make_pair(200, Dump({{"prefixes", rows},
                                     {"tracked", a->stats().size()},
                                     {"dropped", a->stats().dropped()},
                                     {"window_days", window}}));
  }
  return AdminError(405, "unknown advisor action " + method + " " + action);
}

}  // namespace strata::server
