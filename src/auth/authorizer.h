// The one place where a request's fate is decided: the caller's identity
// policies and the bucket's policy, combined as AWS combines them within one
// account:
//   1. an explicit Deny in any of them refuses the request;
//   2. otherwise root is allowed (an account's root user needs no policy);
//   3. otherwise an Allow in an identity policy or the bucket policy allows it;
//   4. otherwise it is refused (implicit deny). Anonymous callers have no
//      identity policies: only a bucket policy naming "*" can let them in.
// Root is not bound by identity policies (it has none) but is by a bucket
// policy's explicit Deny, except for the bucket policy calls themselves
// (Get/Put/DeleteBucketPolicy): root can always repair a policy that locks
// everyone out. Object Lock is not a policy question: object/lock.h refuses
// what retention forbids whoever asks.
#pragma once

#include "auth/identities.h"
#include "auth/policy.h"

namespace strata::auth {

enum class AccessDecision { kAllow, kExplicitDeny, kImplicitDeny };

struct AccessQuery {
  std::string_view action;    // "s3:GetObject"
  std::string_view resource;  // "arn:aws:s3:::bucket/key"
  const ConditionContext* conditions = nullptr;
  // Get/Put/DeleteBucketPolicy: root passes even an explicit Deny.
  bool manages_bucket_policy = false;
};

AccessDecision Authorize(const Caller& caller, const Policy* bucket_policy,
                         const AccessQuery& query);

}  // namespace strata::auth
