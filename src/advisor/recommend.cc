#include "advisor/recommend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "common/hash.h"

namespace strata::advisor {

// Persisted and served as JSON; every field optional on the way in (older
// documents read as defaults).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ClassTotals, objects, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    Recommendation, id, kind, bucket, prefix, from_media, to_media, from_classes, from_pool,
    to_pool, to_class, summary, window_days, reads_in_window, active_days, reads_per_active_day,
    rereads_per_object, last_read_ns, idle_days, objects, bytes, daily_reads, size_hist, age_hist,
    by_class, kv_lookups, kv_hits, kv_misses, kv_ttl_s, objects_to_move, bytes_to_move, capacity_change, watts_before, watts_after,
    cost_month_before, cost_month_after, action, lifecycle_rule, state, created_ns, updated_ns,
    decided_ns, finished_ns, decided_by, reason, waiting, moved_objects, moved_bytes, skipped,
    locked, failed, resume_after)

std::string RecommendationJson(const Recommendation& r, const Coefficients* model) {
  nlohmann::json j = r;
  j["size_buckets"] = SizeBucketNames();
  j["age_buckets"] = AgeBucketNames();
  if (model) {
    nlohmann::json m = nlohmann::json::object();
    for (size_t i = 0; i < model->media.size(); ++i) {
      m[std::string(tier::MediaName(static_cast<tier::Media>(i)))] = {
          {"watts_per_tib", model->media[i].watts_per_tib},
          {"cost_per_tib_month", model->media[i].cost_per_tib_month}};
    }
    j["model"] = {{"kind", "modelled"}, {"currency", model->currency}, {"media", m}};
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

bool HasFraction(const nlohmann::json& j) {
  if (j.is_number_float()) return true;
  if (j.is_structured()) {
    for (const auto& v : j) {
      if (HasFraction(v)) return true;
    }
  }
  return false;
}

}  // namespace

Result<Recommendation> ParseRecommendation(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("recommendation: not a JSON object");
  // Only these fields are held as doubles; a float read into any other
  // (a count, a time) is undefined once out of the integer's range, so a
  // damaged record saying 1e300 is refused here rather than trusted.
  static const std::set<std::string, std::less<>> kDoubles = {
      "reads_per_active_day", "rereads_per_object", "idle_days", "watts_before", "watts_after",
      "cost_month_before", "cost_month_after"};
  static const nlohmann::json kMembers = Recommendation{};  // what the fields are; others are ignored
  for (const auto& [name, value] : j.items()) {
    if (kMembers.contains(name) && !kDoubles.count(name) && HasFraction(value)) {
      return InvalidArgument("recommendation: " + name + " must hold whole numbers only");
    }
  }
  try {
    return j.get<Recommendation>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("recommendation: ") + e.what());
  }
}

std::string HumanBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[u]);
  return buf;
}

namespace {

constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;

std::string Count(double n) {
  char buf[32];
  if (n >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fM", n / 1e6);
  } else if (n >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.0fk", n / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", n);
  }
  return buf;
}

std::string RuleXml(const Recommendation& r, int days) {
  pugi::xml_document doc;
  pugi::xml_node rule = doc.append_child("Rule");
  rule.append_child("ID").text().set(("advisor-" + r.id).c_str());
  rule.append_child("Filter").append_child("Prefix").text().set(r.prefix.c_str());
  rule.append_child("Status").text().set("Enabled");
  pugi::xml_node t = rule.append_child("Transition");
  t.append_child("Days").text().set(days);
  t.append_child("StorageClass").text().set(r.to_class.c_str());
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return out.str();
}

// The class a step from `from` lands in, by media.
const char* TargetClass(tier::Media to) {
  switch (to) {
    case tier::Media::kHot: return "STANDARD";
    case tier::Media::kWarm: return "STANDARD_IA";
    case tier::Media::kCold: return "GLACIER";
    case tier::Media::kGpuDirect: return "EXPRESS_ONEZONE";
  }
  return "STANDARD";
}

struct Group {
  tier::Media media;
  std::string pool;
  std::vector<std::string> classes;
  uint64_t objects = 0, bytes = 0;
};

// The prefix's bytes grouped by the pool (and media) their class lives in.
std::vector<Group> Groups(const PrefixInventory& inv, const tier::ClassMap& classes) {
  std::vector<Group> out;
  for (const auto& [cls, n] : inv.by_class) {
    const std::string& pool = classes.PoolOf(cls);
    auto it = std::find_if(out.begin(), out.end(), [&](const Group& g) { return g.pool == pool; });
    if (it == out.end()) {
      out.push_back({classes.MediaOf(pool), pool, {}, 0, 0});
      it = out.end() - 1;
    }
    it->classes.push_back(cls);
    it->objects += n.objects;
    it->bytes += n.bytes;
  }
  return out;
}

void Fill(Recommendation& r, const PrefixInventory& inv, const PrefixStats* s, const Group& g,
          tier::Media to, const std::string& to_pool, const Thresholds& t, const Coefficients& m,
          int64_t now_ns, int64_t day_ns, const std::string& kind) {
  r.kind = kind;
  r.bucket = inv.bucket;
  r.prefix = inv.prefix;
  r.from_media = std::string(tier::MediaName(g.media));
  r.to_media = std::string(tier::MediaName(to));
  r.from_classes = g.classes;
  r.from_pool = g.pool;
  r.to_pool = to_pool;
  r.to_class = TargetClass(to);
  r.id = Sha256Hex(r.bucket + '\0' + r.prefix + '\0' + r.from_pool + '\0' + r.to_class).substr(0, 16);
  r.window_days = t.window_days;
  const int64_t today = now_ns / day_ns;
  if (s) {
    r.reads_in_window = s->ReadsInWindow(today, t.window_days);
    r.active_days = s->ActiveDays(today, t.window_days);
    r.last_read_ns = s->last_read_ns;
    for (int64_t d = today - t.window_days + 1; d <= today; ++d) {
      r.daily_reads.push_back(s->ReadsOnDay(d));
    }
  } else {
    r.daily_reads.assign(static_cast<size_t>(t.window_days), 0);
  }
  r.reads_per_active_day = r.active_days ? static_cast<double>(r.reads_in_window) / r.active_days : 0;
  r.rereads_per_object =
      inv.objects ? static_cast<double>(r.reads_in_window) / static_cast<double>(inv.objects) : 0;
  const int64_t last_touch = std::max(r.last_read_ns, inv.newest_mtime_ns);
  r.idle_days = std::max<double>(0, static_cast<double>(now_ns - last_touch) / day_ns);
  r.objects = inv.objects;
  r.bytes = inv.bytes;
  r.size_hist.assign(inv.size_hist.begin(), inv.size_hist.end());
  r.age_hist.assign(inv.age_hist.begin(), inv.age_hist.end());
  r.by_class = inv.by_class;
  r.objects_to_move = g.objects;
  r.bytes_to_move = g.bytes;
  r.capacity_change[g.pool.empty() ? "default" : g.pool] = -static_cast<int64_t>(g.bytes);
  r.capacity_change[to_pool.empty() ? "default" : to_pool] = static_cast<int64_t>(g.bytes);
  const double tib = static_cast<double>(g.bytes) / kTiB;
  r.watts_before = tib * m.of(g.media).watts_per_tib;
  r.watts_after = tib * m.of(to).watts_per_tib;
  r.cost_month_before = tib * m.of(g.media).cost_per_tib_month;
  r.cost_month_after = tib * m.of(to).cost_per_tib_month;
  r.created_ns = r.updated_ns = now_ns;
}

}  // namespace

std::vector<Recommendation> Recommend(const std::vector<PrefixInventory>& inventory,
                                      const std::vector<PrefixStats>& stats,
                                      const tier::ClassMap& classes, const Thresholds& t_in,
                                      const Coefficients& model, int64_t now_ns, int64_t day_ns) {
  Thresholds t = t_in;
  t.window_days = std::clamp(t.window_days, 1, kDays);
  std::map<std::pair<std::string, std::string>, const PrefixStats*> by_prefix;
  for (const PrefixStats& s : stats) by_prefix[{s.bucket, s.prefix}] = &s;
  std::vector<Recommendation> out;
  for (const PrefixInventory& inv : inventory) {
    auto found = by_prefix.find({inv.bucket, inv.prefix});
    const PrefixStats* s = found == by_prefix.end() ? nullptr : found->second;
    const std::string where = "`" + inv.bucket + "/" + inv.prefix + "`";
    for (const Group& g : Groups(inv, classes)) {
      // Colder: one media step down after cold_days (warm -> cold after archive_days).
      std::optional<tier::Media> down;
      int need_days = t.cold_days;
      if (g.media == tier::Media::kGpuDirect) down = tier::Media::kHot;
      if (g.media == tier::Media::kHot) down = tier::Media::kWarm;
      if (g.media == tier::Media::kWarm) {
        down = tier::Media::kCold;
        need_days = t.archive_days;
      }
      if (down && g.bytes >= t.min_bytes) {
        const std::string& to_pool = classes.PoolOf(TargetClass(*down));
        if (to_pool != g.pool && classes.MediaOf(to_pool) == *down) {
          Recommendation r;
          Fill(r, inv, s, g, *down, to_pool, t, model, now_ns, day_ns, "colder");
          if (r.idle_days >= need_days) {
            r.summary = "prefix " + where + " — " + HumanBytes(static_cast<double>(g.bytes)) +
                        " on " + r.from_media + ", " +
                        (r.last_read_ns ? "no reads" : "never read") + " for " +
                        std::to_string(static_cast<int64_t>(r.idle_days)) + " days → " +
                        r.to_media + " (" + r.to_class + ")";
            r.action = "move the " + std::to_string(g.objects) + " objects (" +
                       HumanBytes(static_cast<double>(g.bytes)) + ") of " + where + " in " +
                       r.from_media + " to storage class " + r.to_class + " (pool " +
                       (to_pool.empty() ? "default" : to_pool) + ") now";
            r.lifecycle_rule = RuleXml(r, need_days);
            out.push_back(std::move(r));
            continue;
          }
        }
      }
      // Hotter: sustained re-reads of data on warm media.
      if (g.media == tier::Media::kWarm && s) {
        const std::string& to_pool = classes.PoolOf(TargetClass(tier::Media::kHot));
        if (to_pool == g.pool || classes.MediaOf(to_pool) != tier::Media::kHot) continue;
        Recommendation r;
        Fill(r, inv, s, g, tier::Media::kHot, to_pool, t, model, now_ns, day_ns, "hotter");
        if (r.active_days >= t.hot_min_active_days && r.reads_per_active_day >= t.hot_reads_per_day &&
            r.rereads_per_object >= t.hot_min_rereads) {
          r.summary = where + " read " + Count(r.reads_per_active_day) + " times/day on " +
                      std::to_string(r.active_days) + " of the last " +
                      std::to_string(t.window_days) + " days from " + r.from_media + " → " +
                      r.to_media + " (" + r.to_class + ")";
          r.action = "move the " + std::to_string(g.objects) + " objects (" +
                     HumanBytes(static_cast<double>(g.bytes)) + ") of " + where + " in " +
                     r.from_media + " to storage class " + r.to_class + " (pool " +
                     (to_pool.empty() ? "default" : to_pool) + ") now";
          out.push_back(std::move(r));
        }
      }
    }
  }
  return out;
}

std::vector<Recommendation> RecommendKv(const std::vector<KvNamespaceFacts>& namespaces,
                                        const tier::ClassMap& classes, const Thresholds& t,
                                        const Coefficients& model, int64_t now_ns, int64_t day_ns) {
  std::vector<Recommendation> out;
  for (const KvNamespaceFacts& ns : namespaces) {
    if (ns.blocks == 0) continue;
    const double idle = std::max<double>(0, static_cast<double>(now_ns - ns.last_access_ns) / day_ns);
    if (idle < t.kv_idle_days) continue;
    Recommendation r;
    r.kind = "expire";
    r.bucket = ns.bucket;
    r.from_media = "kv";
    r.to_media = "expire";
    r.from_pool = ns.pool;
    r.id = Sha256Hex(r.bucket + '\0' + std::string(kKvExpireMove)).substr(0, 16);
    r.window_days = t.kv_idle_days;
    r.last_read_ns = ns.last_access_ns;
    r.idle_days = idle;
    r.objects = r.objects_to_move = ns.blocks;
    r.bytes = r.bytes_to_move = ns.bytes;
    r.kv_lookups = ns.lookups;
    r.kv_hits = ns.hits;
    r.kv_misses = ns.misses;
    r.kv_ttl_s = ns.ttl_s;
    r.capacity_change[ns.pool.empty() ? "default" : ns.pool] = -static_cast<int64_t>(ns.bytes);
    const double tib = static_cast<double>(ns.bytes) / kTiB;
    const MediaCost& cost = model.of(classes.MediaOf(ns.pool));
    r.watts_before = tib * cost.watts_per_tib;
    r.cost_month_before = tib * cost.cost_per_tib_month;
    const std::string size = HumanBytes(static_cast<double>(ns.bytes));
    r.summary = "KV namespace `" + ns.bucket + "` — " + size + " in " + std::to_string(ns.blocks) +
                " blocks, idle " + std::to_string(static_cast<int64_t>(idle)) + " days → expire";
    r.action = "remove the " + std::to_string(ns.blocks) + " blocks (" + size +
               ") of KV namespace " + ns.bucket +
               " (pinned blocks stay; engines see misses and recompute)";
    r.created_ns = r.updated_ns = now_ns;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace strata::advisor
