#include "auth/authorizer.h"

namespace strata::auth {

AccessDecision Authorize(const Caller& caller, const Policy* bucket_policy,
                         const AccessQuery& query) {
  EvalRequest req;
  req.principal = &caller.principal;
  req.action = query.action;
  req.resource = query.resource;
  req.conditions = query.conditions;
  const bool root = caller.principal.kind == Principal::Kind::kRoot;
  bool allowed = false;
  if (bucket_policy) {
    switch (bucket_policy->Evaluate(req)) {
      case Decision::kDeny:
        if (!(root && query.manages_bucket_policy)) return AccessDecision::kExplicitDeny;
        break;
      case Decision::kAllow: allowed = true; break;
      case Decision::kNotApplicable: break;
    }
  }
  for (const auto& policy : caller.policies) {
    switch (policy->Evaluate(req)) {
      case Decision::kDeny: return AccessDecision::kExplicitDeny;
      case Decision::kAllow: allowed = true; break;
      case Decision::kNotApplicable: break;
    }
  }
  if (root || allowed) return AccessDecision::kAllow;
  return AccessDecision::kImplicitDeny;
}

}  // namespace strata::auth
