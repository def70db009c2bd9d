#include "s3/access.h"

#include <deque>
#include <optional>
#include <vector>

#include "common/encoding.h"
#include "common/log.h"
#include "common/query_string.h"
#include "common/time_util.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/request_headers.h"
#include "s3/ops/versioning.h"
#include "s3/post_policy.h"

namespace strata::s3 {

namespace {

using auth::Principal;

std::string_view HostOf(std::string_view addr) {
  // "1.2.3.4:5678", "::1:5678" (Asio's form, no brackets): drop the port.
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) return addr;
  return addr.substr(0, colon);
}

// The condition keys of one request, computed when a policy first asks for
// one (most policies test few or none) and kept for the rest of the request.
class RequestConditions : public auth::ConditionContext {
 public:
  RequestConditions(OpContext& ctx, std::string_view bucket, std::string_view key,
                    const auth::MapConditionContext* extra)
      : ctx_(ctx), bucket_(bucket), key_(key), extra_(extra) {}

  const std::vector<std::string>* Values(std::string_view k) const override {
    if (extra_) {
      if (const auto* v = extra_->Values(k)) return v;
    }
    for (const auto& [name, values] : cache_) {
      if (name == k) return values ? &*values : nullptr;
    }
    cache_.emplace_back(std::string(k), Compute(k));
    const auto& values = cache_.back().second;
    return values ? &*values : nullptr;
  }

 private:
  using Values_ = std::optional<std::vector<std::string>>;
  static Values_ One(std::string v) { return std::vector<std::string>{std::move(v)}; }
  Values_ Header(std::string_view name) const {
    const std::string* v = ctx_.http.Header(name);
    if (!v) return std::nullopt;
    return One(*v);
  }
  Values_ Query(std::string_view name) const {
    const std::string* v = ctx_.route.Query(name);
    if (!v) return std::nullopt;
    return One(*v);
  }
  const object::Tags* RequestTags() const {
    if (!request_tags_loaded_) {
      request_tags_loaded_ = true;
      if (const std::string* h = ctx_.http.Header("x-amz-tagging")) {
        auto tags = ParseTaggingHeader(*h);
        if (auto* t = std::get_if<object::Tags>(&tags)) request_tags_ = std::move(*t);
      }
    }
    return request_tags_ ? &*request_tags_ : nullptr;
  }
  const object::Tags* ExistingTags() const {
    if (!existing_tags_loaded_) {
      existing_tags_loaded_ = true;
      object::Version version;
      if (const std::string* id = ctx_.route.Query("versionId")) {
        auto v = ParseRequestVersionId(*id);
        if (auto* sel = std::get_if<object::VersionSelector>(&v)) version = *sel;
      }
      if (!key_.empty()) {
        auto rec = ctx_.engine.HeadVersion(std::string(bucket_), std::string(key_), version);
        if (rec.ok() && !rec->delete_marker) existing_tags_ = rec->tags;
      }
    }
    return existing_tags_ ? &*existing_tags_ : nullptr;
  }
  static Values_ TagValue(const object::Tags* tags, std::string_view tag_key) {
    if (!tags) return std::nullopt;
    for (const auto& [k, v] : *tags) {
      if (AsciiLower(k) == tag_key) return One(v);
    }
    return std::nullopt;
  }

  Values_ Compute(std::string_view k) const {
    const Principal& p = ctx_.caller->principal;
    const bool anonymous = p.kind == Principal::Kind::kAnonymous;
    if (k == "aws:sourceip") return One(std::string(HostOf(ctx_.http.remote_addr)));
    if (k == "aws:securetransport") return One(ctx_.http.secure ? "true" : "false");
    if (k == "aws:currenttime") return One(FormatIso8601(UnixNowNs()));
    if (k == "aws:epochtime") return One(std::to_string(UnixNowNs() / 1000000000));
    if (k == "aws:username") {
      if (p.kind != Principal::Kind::kUser) return std::nullopt;
      return One(p.username);
    }
    if (k == "aws:userid") return One(anonymous ? std::string("anonymous") : p.user_id);
    if (k == "aws:principalarn") return anonymous ? std::nullopt : One(p.arn);
    if (k == "aws:principalaccount") return anonymous ? std::nullopt : One(p.account);
    if (k == "aws:principaltype") {
      return One(anonymous ? "Anonymous" : p.kind == Principal::Kind::kRoot ? "Account" : "User");
    }
    if (k == "aws:referer") return Header("referer");
    if (k == "aws:useragent") return Header("user-agent");
    if (k == "s3:prefix") {
      auto v = Query("prefix");
      return v ? v : One("");
    }
    if (k == "s3:delimiter") return Query("delimiter");
    if (k == "s3:max-keys") return Query("max-keys");
    if (k == "s3:versionid") return Query("versionId");
    if (k == "s3:signatureversion") {
      if (!ctx_.auth || anonymous) return std::nullopt;
      return One(ctx_.auth->version == auth::SignatureVersion::kV4 ? "AWS4-HMAC-SHA256" : "AWS");
    }
    if (k == "s3:authtype") {
      if (anonymous) return std::nullopt;
      if (!ctx_.auth) return One("POST");
      return One(ctx_.auth->presigned ? "REST-QUERY-STRING" : "REST-HEADER");
    }
    if (k == "s3:object-lock-mode") return Header("x-amz-object-lock-mode");
    if (k == "s3:object-lock-retain-until-date") return Header("x-amz-object-lock-retain-until-date");
    if (k == "s3:object-lock-legal-hold") return Header("x-amz-object-lock-legal-hold");
    if (k == "s3:object-lock-remaining-retention-days") {
      const std::string* until = ctx_.http.Header("x-amz-object-lock-retain-until-date");
      if (!until) return std::nullopt;
      auto ns = ParseRetainUntil(*until);
      if (!ns) return std::nullopt;
      int64_t days = (*ns - UnixNowNs()) / (86400LL * 1000000000LL);
      return One(std::to_string(days < 0 ? 0 : days));
    }
    if (k.starts_with("s3:x-amz-")) return Header(k.substr(3));
    constexpr std::string_view kExisting = "s3:existingobjecttag/";
    constexpr std::string_view kRequest = "s3:requestobjecttag/";
    if (k.starts_with(kExisting)) return TagValue(ExistingTags(), k.substr(kExisting.size()));
    if (k.starts_with(kRequest)) return TagValue(RequestTags(), k.substr(kRequest.size()));
    if (k == "s3:requestobjecttagkeys") {
      const object::Tags* tags = RequestTags();
      if (!tags) return std::nullopt;
      std::vector<std::string> keys;
      for (const auto& [tk, tv] : *tags) keys.push_back(tk);
      return keys;
    }
    return std::nullopt;
  }

  OpContext& ctx_;
  std::string_view bucket_, key_;
  const auth::MapConditionContext* extra_;
  mutable std::deque<std::pair<std::string, Values_>> cache_;
  mutable bool request_tags_loaded_ = false, existing_tags_loaded_ = false;
  mutable std::optional<object::Tags> request_tags_, existing_tags_;
};

bool ManagesBucketPolicy(Op op) {
  return op == Op::kGetBucketPolicy || op == Op::kPutBucketPolicy ||
         op == Op::kDeleteBucketPolicy;
}

// What the bucket's ACL, or the object version's, grants (auth/acl.h maps
// actions to permissions). `version`: the version the request names.
bool AclGrants(OpContext& ctx, const BucketConfig& config, std::string_view action,
               const std::string& bucket, std::string_view key, const object::Version& version) {
  const Principal& p = ctx.caller->principal;
  const std::string bucket_owner = BucketOwnerId(ctx, config.acl.owner);
  if (uint8_t need = auth::BucketAclPermissionFor(action)) {
    // Buckets made before identities store the root's access key as owner.
    std::optional<auth::Acl> legacy;
    if (bucket_owner != config.acl.owner) {
      legacy = config.acl;
      legacy->owner = bucket_owner;
    }
    if (auth::AclAllows(legacy ? *legacy : config.acl, p, need, config.ignore_public_acls)) {
      return true;
    }
  }
  uint8_t need = auth::ObjectAclPermissionFor(action);
  if (need == 0 || key.empty()) return false;
  auto rec = ctx.engine.HeadVersion(bucket, std::string(key), version);
  if (!rec.ok() || rec->delete_marker) return false;  // the handler reports what is missing
  const std::string owner = rec->owner.empty() ? bucket_owner : rec->owner;
  return auth::AclAllows(StoredOrPrivate(rec->acl, owner), p, need, config.ignore_public_acls);
}

// The version the request's own object names (?versionId).
object::Version RouteVersion(const OpContext& ctx) {
  if (const std::string* id = ctx.route.Query("versionId")) {
    auto v = ParseRequestVersionId(*id);
    if (auto* sel = std::get_if<object::VersionSelector>(&v)) return *sel;
  }
  return std::nullopt;
}

bool Check(OpContext& ctx, std::string_view action, const std::string& bucket,
           std::string_view key, const auth::MapConditionContext* extra,
           bool manages_policy = false, const object::Version& version = std::nullopt) {
  std::shared_ptr<const BucketConfig> config;
  if (!bucket.empty() && ctx.config.bucket_configs) config = ctx.config.bucket_configs->Get(bucket);
  const auth::Policy* bucket_policy = config ? config->policy.get() : nullptr;
  const auth::Caller& caller = *ctx.caller;
  // Root with no bucket policy in the way: nothing to evaluate.
  if (caller.principal.kind == Principal::Kind::kRoot && !bucket_policy) return true;
  std::string resource = bucket.empty() ? std::string("arn:aws:s3:::*")
                         : key.empty()  ? BucketArn(bucket)
                                        : ObjectArn(bucket, key);
  RequestConditions conditions(ctx, bucket, key, extra);
  auth::AccessQuery query{action, resource, &conditions, manages_policy};
  const auth::AccessDecision decision = auth::Authorize(caller, bucket_policy, query);
  bool allowed = decision == auth::AccessDecision::kAllow;
  // RestrictPublicBuckets: what a public policy allows is for the account's
  // own identities only; anonymous callers get nothing from it.
  if (allowed && config && config->restrict_public_policy &&
      caller.principal.kind == Principal::Kind::kAnonymous) {
    allowed = false;
  }
  // An ACL grant allows what no policy denied explicitly.
  if (!allowed && decision == auth::AccessDecision::kImplicitDeny && config &&
      config->acls_enabled) {
    allowed = AclGrants(ctx, *config, action, bucket, key, version);
  }
  return allowed;
}

bool WritesNewObject(Op op) {
  return op == Op::kPutObject || op == Op::kCopyObject || op == Op::kCreateMultipartUpload;
}

}  // namespace

std::string BucketArn(std::string_view bucket) { return "arn:aws:s3:::" + std::string(bucket); }
std::string ObjectArn(std::string_view bucket, std::string_view key) {
  return "arn:aws:s3:::" + std::string(bucket) + "/" + std::string(key);
}

Error AccessDeniedError() { return MakeError(ErrorCode::kAccessDenied); }

// The route's action, refined as AWS refines it when a version is named.
std::string_view RouteAction(const OpContext& ctx) {
  const bool versioned = ctx.route.Has("versionId");
  switch (ctx.route.op) {
    case Op::kGetObject:
    case Op::kHeadObject: return versioned ? "s3:GetObjectVersion" : "s3:GetObject";
    case Op::kDeleteObject: return versioned ? "s3:DeleteObjectVersion" : "s3:DeleteObject";
    case Op::kGetObjectTagging:
      return versioned ? "s3:GetObjectVersionTagging" : "s3:GetObjectTagging";
    case Op::kPutObjectTagging:
      return versioned ? "s3:PutObjectVersionTagging" : "s3:PutObjectTagging";
    case Op::kDeleteObjectTagging:
      return versioned ? "s3:DeleteObjectVersionTagging" : "s3:DeleteObjectTagging";
    case Op::kGetObjectAttributes:
      return versioned ? "s3:GetObjectVersionAttributes" : "s3:GetObjectAttributes";
    default: return RequiredAction(ctx.route.op);
  }
}


bool Allows(OpContext& ctx, std::string_view action, std::string_view key,
            const auth::MapConditionContext* extra) {
  return Check(ctx, action, ctx.route.bucket, key, extra, false,
               key == ctx.route.key ? RouteVersion(ctx) : std::nullopt);
}

bool AllowsWriteOptions(OpContext& ctx, std::string_view key, bool tagging, bool retention,
                        bool legal_hold, const auth::MapConditionContext* extra) {
  return (!tagging || Allows(ctx, "s3:PutObjectTagging", key, extra)) &&
         (!retention || Allows(ctx, "s3:PutObjectRetention", key, extra)) &&
         (!legal_hold || Allows(ctx, "s3:PutObjectLegalHold", key, extra));
}

OpResult AuthorizeRequest(OpContext& ctx) {
  const Op op = ctx.route.op;
  const auth::Principal& p = ctx.caller->principal;
  if (op == Op::kAdmin) {  // the admin API is root's alone
    if (p.kind == Principal::Kind::kRoot) return std::nullopt;
    return AccessDeniedError();
  }
  // Their handlers check each key they write or delete (a browser form's
  // signer is known once PostObject has read the form).
  const std::string* content_type = ctx.http.Header("content-type");
  const bool form = content_type && IsMultipartFormData(*content_type);
  if ((op == Op::kPostObject && form) || op == Op::kDeleteObjects) return std::nullopt;
  // A browser's preflight carries no credentials (the CORS rules decide).
  if (op == Op::kPreflightCors) return std::nullopt;
  // Their bodies hold condition keys: checked by their handlers.
  if (op == Op::kPutObjectTagging || op == Op::kPutObjectRetention) return std::nullopt;
  if (!Check(ctx, RouteAction(ctx), ctx.route.bucket, ctx.route.key, nullptr,
             ManagesBucketPolicy(op), RouteVersion(ctx))) {
    return AccessDeniedError();
  }
  if (op == Op::kGetObjectAttributes) {
    std::string_view read = ctx.route.Has("versionId") ? "s3:GetObjectVersion" : "s3:GetObject";
    if (!Check(ctx, read, ctx.route.bucket, ctx.route.key, nullptr, false, RouteVersion(ctx))) {
      return AccessDeniedError();
    }
  }
  if (WritesNewObject(op)) {
    const auto& h = ctx.http;
    const bool retention =
        h.Header("x-amz-object-lock-mode") || h.Header("x-amz-object-lock-retain-until-date");
    if (!AllowsWriteOptions(ctx, ctx.route.key, h.Header("x-amz-tagging") != nullptr, retention,
                            h.Header("x-amz-object-lock-legal-hold") != nullptr)) {
      return AccessDeniedError();
    }
  }
  std::string_view source_action = CopySourceAction(op);
  if (!source_action.empty()) {
    auto source = ParseCopySource(ctx.http);
    // A malformed source is the handler's error to report; nothing is read.
    if (auto* s = std::get_if<CopySource>(&source)) {
      std::string_view action = s->version ? "s3:GetObjectVersion" : source_action;
      if (!Check(ctx, action, s->bucket, s->key, nullptr, false, s->version)) {
        return AccessDeniedError();
      }
    }
  }
  return std::nullopt;
}

}  // namespace strata::s3
