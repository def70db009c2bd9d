// What the request path needs of a bucket's configuration, decoded once per
// change and cached: the compiled bucket policy (s3/access.h) and the CORS
// rules (s3/cors.h), and what ACL evaluation needs. Read from the bucket record on first use; dropped by
// Invalidate when PutBucketPolicy / DeleteBucketPolicy / Put/DeleteBucketCors
// / CreateBucket / DeleteBucket change it (all of which go through this
// server; a generation counter keeps a load that raced a change out).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/acl.h"
#include "auth/policy.h"
#include "object/engine.h"
#include "s3/access_log.h"
#include "s3/cors.h"
#include "tier/lifecycle.h"

namespace strata::s3 {

struct BucketConfig {
  std::shared_ptr<const auth::Policy> policy;  // null: none
  std::vector<CorsRule> cors;                  // empty: none
  // RestrictPublicBuckets is set and the policy is public: it grants
  // nothing to anonymous callers (s3/access.cc).
  bool restrict_public_policy = false;
  // Object ownership enables ACLs (not BucketOwnerEnforced): the bucket's
  // ACL decoded (its owner as BucketRecord::owner stores it), and whether
  // IgnorePublicAcls makes public grants count for nothing.
  bool acls_enabled = false;
  auth::Acl acl;
  bool ignore_public_acls = false;
  // The lifecycle configuration (x-amz-expiration on PUT / GET / HEAD); null: none.
  std::shared_ptr<const tier::Configuration> lifecycle;
  // Server access logging (s3/access_log.h): where the records go, and the
  // bucket's owner they are written for; nullopt: off.
  std::optional<LoggingTarget> logging;
  std::string owner;
};

class BucketConfigs {
 public:
  explicit BucketConfigs(object::ObjectEngine* engine) : engine_(engine) {}
  // nullptr when the bucket has neither (or does not exist).
  std::shared_ptr<const BucketConfig> Get(const std::string& bucket);
  void Invalidate(const std::string& bucket);

 private:
  object::ObjectEngine* engine_;
  std::mutex mu_;
  uint64_t generation_ = 0;
  std::unordered_map<std::string, std::shared_ptr<const BucketConfig>> cache_;
};

}  // namespace strata::s3
