#include "advisor/access_stats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

namespace strata::advisor {

std::string_view PrefixView(std::string_view key, int depth) {
  size_t end = 0;
  for (int i = 0; i < depth; ++i) {
    size_t slash = key.find('/', end);
    if (slash == std::string_view::npos) break;
    end = slash + 1;
  }
  return key.substr(0, end);
}

std::string PrefixOf(std::string_view key, int depth) { return std::string(PrefixView(key, depth)); }

uint64_t PrefixStats::ReadsOnDay(int64_t day) const {
  if (day > last_day || day <= last_day - kDays || day < 0) return 0;
  return day_reads[static_cast<size_t>(day % kDays)];
}

uint64_t PrefixStats::ReadsInWindow(int64_t today, int window) const {
  uint64_t n = 0;
  for (int64_t d = today - window + 1; d <= today; ++d) n += ReadsOnDay(d);
  return n;
}

int PrefixStats::ActiveDays(int64_t today, int window) const {
  int n = 0;
  for (int64_t d = today - window + 1; d <= today; ++d) n += ReadsOnDay(d) > 0;
  return n;
}

AccessStats::AccessStats(StatsOptions options)
    : options_(options),
      per_shard_(std::max<size_t>(1, options.max_prefixes / kShards)),
      shards_(new Shard[kShards]) {
  if (options_.sample_every == 0) options_.sample_every = 1;
  if (options_.day_ns <= 0) options_.day_ns = 86400ll * 1'000'000'000;
  if (options_.half_life_days <= 0) options_.half_life_days = 7;
}

void AccessStats::Decay(PrefixStats& s, int64_t now_ns, bool coarse) const {
  if (now_ns <= s.as_of_ns) return;
  if (coarse && now_ns - s.as_of_ns < options_.day_ns / 1024) return;
  const double days = static_cast<double>(now_ns - s.as_of_ns) / static_cast<double>(options_.day_ns);
  const double f = std::exp2(-days / options_.half_life_days);
  s.reads *= f;
  s.bytes_read *= f;
  s.as_of_ns = now_ns;
}

void AccessStats::Add(PrefixStats& s, double weight, uint64_t bytes, int64_t now_ns) const {
  Decay(s, now_ns, /*coarse=*/true);
  s.reads += weight;
  s.bytes_read += weight * static_cast<double>(bytes);
  s.total_reads += static_cast<uint64_t>(weight);
  s.total_bytes += static_cast<uint64_t>(weight) * bytes;
  if (s.first_read_ns == 0 || now_ns < s.first_read_ns) s.first_read_ns = now_ns;
  s.last_read_ns = std::max(s.last_read_ns, now_ns);
  const int64_t day = DayOf(now_ns);
  if (day > s.last_day) {
    for (int64_t d = std::max(s.last_day + 1, day - kDays + 1); d <= day; ++d) {
      s.day_reads[static_cast<size_t>(d % kDays)] = 0;
    }
    s.last_day = day;
  }
  if (day > s.last_day - kDays) {
    uint32_t& slot = s.day_reads[static_cast<size_t>(day % kDays)];
    slot = static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, slot + static_cast<uint64_t>(weight)));
  }
}

void AccessStats::RecordRead(std::string_view bucket, std::string_view key, uint64_t bytes,
                             int64_t now_ns) {
  if (options_.sample_every > 1) {
    thread_local uint32_t countdown = 0;
    if (countdown > 0) {
      --countdown;
      return;
    }
    countdown = options_.sample_every - 1;
  }
  // The id in a buffer this thread keeps: no allocation once it has grown.
  thread_local std::string id;
  const std::string_view prefix = PrefixView(key, options_.prefix_depth);
  id.assign(bucket).push_back('\0');
  id.append(prefix);
  const size_t hash = IdHash{}(id);
  Shard& shard = shards_[hash % kShards];
  std::lock_guard lock(shard.mu);
  auto it = shard.map.find(std::string_view(id));
  if (it == shard.map.end()) {
    if (shard.map.size() >= per_shard_) Trim(shard, now_ns);
    PrefixStats fresh;
    fresh.bucket = std::string(bucket);
    fresh.prefix = std::string(prefix);
    fresh.as_of_ns = now_ns;
    fresh.last_day = DayOf(now_ns);
    it = shard.map.emplace(id, std::move(fresh)).first;
  }
  Add(it->second, options_.sample_every, bytes, now_ns);
  recorded_.fetch_add(1, std::memory_order_relaxed);
}

void AccessStats::Trim(Shard& shard, int64_t now_ns) {
  std::vector<std::pair<double, std::string>> by_reads;
  by_reads.reserve(shard.map.size());
  for (auto& [id, s] : shard.map) {
    Decay(s, now_ns);
    by_reads.emplace_back(s.reads, id);
  }
  const size_t drop = std::max<size_t>(1, by_reads.size() / 8);
  std::nth_element(by_reads.begin(), by_reads.begin() + static_cast<ptrdiff_t>(drop - 1),
                   by_reads.end());
  for (size_t i = 0; i < drop; ++i) shard.map.erase(by_reads[i].second);
  dropped_.fetch_add(drop, std::memory_order_relaxed);
}

std::vector<PrefixStats> AccessStats::Snapshot(int64_t now_ns) const {
  std::vector<PrefixStats> out;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mu);
    for (const auto& [id, s] : shards_[i].map) {
      out.push_back(s);
      Decay(out.back(), now_ns);
    }
  }
  std::sort(out.begin(), out.end(), [](const PrefixStats& a, const PrefixStats& b) {
    return std::tie(a.bucket, a.prefix) < std::tie(b.bucket, b.prefix);
  });
  return out;
}

size_t AccessStats::size() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mu);
    n += shards_[i].map.size();
  }
  return n;
}

std::string AccessStats::Serialize() const {
  nlohmann::json prefixes = nlohmann::json::array();
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mu);
    for (const auto& [id, s] : shards_[i].map) {
      prefixes.push_back({{"b", s.bucket},
                          {"p", s.prefix},
                          {"r", s.reads},
                          {"br", s.bytes_read},
                          {"tr", s.total_reads},
                          {"tb", s.total_bytes},
                          {"f", s.first_read_ns},
                          {"l", s.last_read_ns},
                          {"a", s.as_of_ns},
                          {"ld", s.last_day},
                          {"d", s.day_reads}});
    }
  }
  nlohmann::json doc = {{"version", 1}, {"prefixes", std::move(prefixes)}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Times and day numbers restored must leave room for the arithmetic on them
// (a day added, two subtracted): 2^62 ns is the year 2116.
constexpr uint64_t kMaxRestoredTime = uint64_t{1} << 62;

// The document's fields, checked before anything is taken from them: a
// damaged record is refused (InvalidArgument), never trusted.
Status RestoreOne(const nlohmann::json& p, PrefixStats* s) {
  if (!p.is_object()) return InvalidArgument("advisor statistics: a prefix is not an object");
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = p.find(name);
    return it == p.end() ? nullptr : &*it;
  };
  auto text = [&](const char* name, std::string* out) -> Status {
    const nlohmann::json* v = field(name);
    if (!v || !v->is_string()) return InvalidArgument(std::string("advisor statistics: ") + name + " must be a string");
    *out = v->get<std::string>();
    return Status::OK();
  };
  auto figure = [&](const char* name, double* out) -> Status {
    const nlohmann::json* v = field(name);
    if (!v || !v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
      return InvalidArgument(std::string("advisor statistics: ") + name + " must be a number >= 0");
    }
    *out = v->get<double>();
    return Status::OK();
  };
  auto count = [&](const char* name, uint64_t max, uint64_t* out) -> Status {
    const nlohmann::json* v = field(name);
    if (!v || !v->is_number_unsigned() || v->get<uint64_t>() > max) {
      return InvalidArgument(std::string("advisor statistics: ") + name +
                             " must be a whole number from 0 to " + std::to_string(max));
    }
    *out = v->get<uint64_t>();
    return Status::OK();
  };
  uint64_t first = 0, last = 0, as_of = 0, last_day = 0;
  for (Status st : {text("b", &s->bucket), text("p", &s->prefix), figure("r", &s->reads),
                    figure("br", &s->bytes_read), count("tr", UINT64_MAX, &s->total_reads),
                    count("tb", UINT64_MAX, &s->total_bytes), count("f", kMaxRestoredTime, &first),
                    count("l", kMaxRestoredTime, &last), count("a", kMaxRestoredTime, &as_of),
                    count("ld", kMaxRestoredTime, &last_day)}) {
    if (!st.ok()) return st;
  }
  s->first_read_ns = static_cast<int64_t>(first);
  s->last_read_ns = static_cast<int64_t>(last);
  s->as_of_ns = static_cast<int64_t>(as_of);
  s->last_day = static_cast<int64_t>(last_day);
  const nlohmann::json* days = field("d");
  if (!days || !days->is_array() || days->size() != kDays) {
    return InvalidArgument("advisor statistics: d must be a list of " + std::to_string(kDays) + " counts");
  }
  for (size_t i = 0; i < kDays; ++i) {
    const nlohmann::json& d = (*days)[i];
    if (!d.is_number_unsigned() || d.get<uint64_t>() > UINT32_MAX) {
      return InvalidArgument("advisor statistics: d must hold whole numbers from 0 to 4294967295");
    }
    s->day_reads[i] = static_cast<uint32_t>(d.get<uint64_t>());
  }
  return Status::OK();
}

}  // namespace

Status AccessStats::Restore(std::string_view bytes) {
  nlohmann::json doc = nlohmann::json::parse(bytes, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgument("advisor statistics: not a JSON object");
  }
  auto version = doc.find("version");
  auto prefixes = doc.find("prefixes");
  if (version == doc.end() || !version->is_number_unsigned() || version->get<uint64_t>() != 1 ||
      prefixes == doc.end() || !prefixes->is_array()) {
    return InvalidArgument("advisor statistics: not a version 1 document");
  }
  std::vector<PrefixStats> loaded;
  loaded.reserve(prefixes->size());
  for (const auto& p : *prefixes) {
    PrefixStats s;
    if (Status st = RestoreOne(p, &s); !st.ok()) return st;
    loaded.push_back(std::move(s));
  }
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mu);
    shards_[i].map.clear();
  }
  for (PrefixStats& s : loaded) {
    std::string id = s.bucket + '\0' + s.prefix;
    Shard& shard = shards_[IdHash{}(id) % kShards];
    std::lock_guard lock(shard.mu);
    if (shard.map.size() >= per_shard_) continue;
    shard.map.emplace(std::move(id), std::move(s));
  }
  return Status::OK();
}

}  // namespace strata::advisor
