#include "s3/bucket_configs.h"

#include "common/log.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

// Far more buckets than a store has configurations for: past it the cache starts over.
constexpr size_t kMaxCachedBuckets = 100000;

std::shared_ptr<const auth::Policy> Compile(const std::string& bucket, const std::string& text) {
  auto parsed = auth::Policy::Parse(text, auth::Policy::Kind::kResource);
  if (auto* p = std::get_if<auth::Policy>(&parsed)) {
    return std::make_shared<const auth::Policy>(std::move(*p));
  }
  // PutBucketPolicy stores only what compiles; a later strata may read it
  // differently. Fail closed: deny everyone (root can still replace it).
  STRATA_LOG("bucket %s: stored policy does not compile (%s): denying every request to it",
             bucket.c_str(), std::get<auth::PolicyError>(parsed).message.c_str());
  auto deny_all = auth::Policy::Parse(
      R"({"Statement":[{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*"}]})",
      auth::Policy::Kind::kResource);
  return std::make_shared<const auth::Policy>(std::move(std::get<auth::Policy>(deny_all)));
}

}  // namespace

std::shared_ptr<const BucketConfig> BucketConfigs::Get(const std::string& bucket) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(bucket);
    if (it != cache_.end()) return it->second;
    generation = generation_;
  }
  auto rec = engine_->GetBucket(bucket);
  if (!rec.ok() && rec.status().code() != Code::kNotFound) return nullptr;  // not cached
  std::shared_ptr<BucketConfig> config;
  const bool acls = rec.ok() && rec->ownership != object::Ownership::kBucketOwnerEnforced;
  if (rec.ok() && (!rec->policy.empty() || !rec->cors.empty() || acls || !rec->lifecycle.empty() ||
                   !rec->logging.empty())) {
    config = std::make_shared<BucketConfig>();
    config->owner = rec->owner;
    if (!rec->logging.empty()) {
      ParsedLogging parsed = ParseBucketLoggingStatus(rec->logging);
      if (auto* t = std::get_if<std::optional<LoggingTarget>>(&parsed)) config->logging = *t;
    }
    if (acls) {
      config->acls_enabled = true;
      auto acl = rec->acl.empty() ? std::nullopt : auth::DecodeAcl(rec->acl);
      config->acl = acl ? std::move(*acl) : auth::PrivateAcl(rec->owner);
      config->acl.owner = rec->owner;
      config->ignore_public_acls = rec->public_access_block & object::kIgnorePublicAcls;
    }
    if (!rec->policy.empty()) {
      config->policy = Compile(bucket, rec->policy);
      config->restrict_public_policy =
          (rec->public_access_block & object::kRestrictPublicBuckets) && config->policy->IsPublic();
    }
    if (!rec->cors.empty()) {
      if (auto rules = ParseCorsConfiguration(rec->cors)) config->cors = std::move(*rules);
    }
    if (!rec->lifecycle.empty()) {
      // Stored only after it parsed: every class is accepted back.
      auto parsed = tier::ParseLifecycle(rec->lifecycle, [](std::string_view) { return true; });
      if (auto* c = std::get_if<tier::Configuration>(&parsed)) {
        config->lifecycle = std::make_shared<const tier::Configuration>(std::move(*c));
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == generation_) {
    if (cache_.size() >= kMaxCachedBuckets) cache_.clear();
    cache_[bucket] = config;
  }
  return config;
}

void BucketConfigs::Invalidate(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  cache_.erase(bucket);
}

}  // namespace strata::s3
