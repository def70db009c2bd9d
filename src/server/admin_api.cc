#include "server/admin_api.h"

#include <cstdio>

namespace strata::server {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

namespace {
std::pair<int, std::string> JsonError(int status, std::string_view message) {
  return {status, "{\"error\":" + JsonString(message) + "}"};
}

const char* StateName(storage::DriveState s) {
  switch (s) {
    case storage::DriveState::kOnline: return "online";
    case storage::DriveState::kMissing: return "missing";
    case storage::DriveState::kUnformatted: return "unformatted";
    case storage::DriveState::kFaulty: return "faulty";
  }
  return "unknown";
}
}  // namespace

std::pair<int, std::string> ServerAdminApi::Handle(
    const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query) {
  auto q = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : query) {
      if (k == name) return &v;
    }
    return nullptr;
  };
  if (action == "drives" && method == "GET") return Drives();
  if (action == "heal-status" && method == "GET") return HealStatus();
  if (action == "heal-object" && method == "POST") {
    const std::string* bucket = q("bucket");
    const std::string* key = q("key");
    if (!bucket || !key) return JsonError(400, "heal-object needs bucket and key");
    return HealObject(*bucket, *key);
  }
  if (action == "heal-bucket" && method == "POST") {
    const std::string* bucket = q("bucket");
    if (!bucket) return JsonError(400, "heal-bucket needs bucket");
    return HealBucket(*bucket);
  }
  return JsonError(404, "unknown admin action " + method + " " + action);
}

std::pair<int, std::string> ServerAdminApi::Drives() {
  if (!store_) {
    return {200, "{\"layout\":\"single directory (no erasure coding)\",\"drives\":[]}"};
  }
  std::string out = "{\"k\":" + std::to_string(store_->k()) + ",\"m\":" +
                    std::to_string(store_->m()) + ",\"drives\":[";
  bool first = true;
  for (const storage::DriveInfo& d : store_->Drives()) {
    if (!first) out += ",";
    first = false;
    out += "{\"position\":" + std::to_string(d.position) + ",\"path\":" + JsonString(d.path) +
           ",\"state\":\"" + StateName(d.state) + "\",\"detail\":" + JsonString(d.detail) +
           ",\"shard_files\":" + std::to_string(d.shard_files) + "}";
  }
  return {200, out + "]}"};
}

std::pair<int, std::string> ServerAdminApi::HealObject(const std::string& bucket,
                                                        const std::string& key) {
  auto rec = engine_->HeadObject(bucket, key);
  if (!rec.ok()) {
    return JsonError(rec.status().code() == Code::kNotFound ? 404 : 500, rec.status().ToString());
  }
  int rebuilt = 0;
  bool unrecoverable = false;
  std::string errors;
  if (store_) {
    for (const std::string& id : rec->DataFiles()) {
      auto r = store_->Heal(id);
      if (!r.ok()) {
        errors += (errors.empty() ? "" : "; ") + id + ": " + r.status().ToString();
        continue;
      }
      rebuilt += r->shards_rebuilt;
      unrecoverable |= r->unrecoverable;
    }
  }
  return {200, "{\"shards_rebuilt\":" + std::to_string(rebuilt) +
                   ",\"unrecoverable\":" + (unrecoverable ? "true" : "false") +
                   ",\"errors\":" + JsonString(errors) + "}"};
}

// The bucket's marker (what rebuild-index restores empty buckets from).
std::pair<int, std::string> ServerAdminApi::HealBucket(const std::string& bucket) {
  auto rec = engine_->GetBucket(bucket);
  if (!rec.ok()) {
    return JsonError(rec.status().code() == Code::kNotFound ? 404 : 500, rec.status().ToString());
  }
  if (!store_) return {200, "{\"shards_rebuilt\":0,\"unrecoverable\":false,\"errors\":\"\"}"};
  auto r = store_->Heal(object::ObjectEngine::BucketMarkerId(bucket));
  if (!r.ok()) {
    return {200, "{\"shards_rebuilt\":0,\"unrecoverable\":false,\"errors\":" +
                     JsonString(r.status().ToString()) + "}"};
  }
  return {200, "{\"shards_rebuilt\":" + std::to_string(r->shards_rebuilt) +
                   ",\"unrecoverable\":" + (r->unrecoverable ? "true" : "false") +
                   ",\"errors\":\"\"}"};
}

std::pair<int, std::string> ServerAdminApi::HealStatus() {
  if (!healer_) return {200, "{\"healer\":\"none (single directory)\"}"};
  storage::HealerStats s = healer_->stats();
  return {200, "{\"queued\":" + std::to_string(s.queued) +
                   ",\"healed_from_queue\":" + std::to_string(s.healed_from_queue) +
                   ",\"scrubbed\":" + std::to_string(s.scrubbed) +
                   ",\"shards_rebuilt\":" + std::to_string(s.shards_rebuilt) +
                   ",\"unrecoverable\":" + std::to_string(s.unrecoverable) +
                   ",\"scrub_passes\":" + std::to_string(s.scrub_passes) + "}"};
}

}  // namespace strata::server
