// PostObject: browser-based upload with a signed POST policy (SigV4, or SigV2
// unless --sigv2 off). The request carries no Authorization header: service.cc
// skips header/query auth for a multipart/form-data POST on a bucket, and this
// operation has auth/ verify the form's signature over the base64 policy,
// evaluates the policy, then streams the `file` part into a new object version.
#include <algorithm>
#include <cctype>

#include "auth/post_policy_signature.h"
#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/access.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/versioning.h"
#include "s3/ops/sse.h"
#include "s3/post_policy.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr size_t kSkipAfterFileBytes = 1 << 20;  // parts after the file: read and ignored

const std::string* Field(const std::vector<FormField>& fields, std::string_view name) {
  for (const FormField& f : fields) {
    if (f.name == name) return &f.value;
  }
  return nullptr;
}

Error MissingField(std::string_view name) {
  return MakeError(ErrorCode::kInvalidArgument,
                   "Bucket POST must contain a field named '" + std::string(name) +
                       "'.  If it is specified, please check the order of the fields.");
}

auth::PostSignatureFields SignatureFields(const std::vector<FormField>& fields) {
  auth::PostSignatureFields f;
  f.algorithm = Field(fields, "x-amz-algorithm");
  f.credential = Field(fields, "x-amz-credential");
  f.date = Field(fields, "x-amz-date");
  f.signature = Field(fields, "x-amz-signature");
  f.v2_access_key = Field(fields, "awsaccesskeyid");
  f.v2_signature = Field(fields, "signature");
  return f;
}

Error FromPostSignatureError(const auth::PostSignatureError& e) {
  using K = auth::PostSignatureErrorKind;
  switch (e.kind) {
    case K::kMissingField: return MissingField(e.field);
    case K::kUnsupportedAlgorithm:
      return MakeError(ErrorCode::kInvalidRequest,
                       "The authorization mechanism you have provided is not supported. Please "
                       "use AWS4-HMAC-SHA256.");
    case K::kMalformedCredential:
      return MakeError(ErrorCode::kInvalidArgument,
                       "Invalid x-amz-credential: expected <access key>/<date>/<region>/s3/"
                       "aws4_request");
    case K::kInvalidAccessKeyId: return MakeError(ErrorCode::kInvalidAccessKeyId);
    case K::kSignatureDoesNotMatch: return MakeError(ErrorCode::kSignatureDoesNotMatch);
  }
  return MakeError(ErrorCode::kAccessDenied);
}


// The object's URL as the client addressed the bucket (path or virtual host).
std::string ObjectUrl(const OpContext& ctx, const std::string& key) {
  const std::string* host = ctx.http.Header("host");
  std::string url = "http://" + (host ? *host : std::string("localhost"));
  std::string_view path = ctx.http.raw_path;
  std::string bucket_prefix = "/" + ctx.route.bucket;
  bool path_style = path == bucket_prefix || path.starts_with(bucket_prefix + "/");
  if (path_style) url += bucket_prefix;
  return url + "/" + UriEncode(key, false);
}

}  // namespace

OpResult PostObject(OpContext& ctx) {
  const std::string* content_type = ctx.http.Header("content-type");
  if (!content_type || !IsMultipartFormData(*content_type)) {
    return MakeError(ErrorCode::kPreconditionFailed,
                     "Bucket POST must be of the enclosure-type multipart/form-data");
  }
  auto boundary = MultipartBoundary(*content_type);
  if (!boundary) return MakeError(ErrorCode::kMalformedPOSTRequest);

  FormDataReader form(&ctx.body, *boundary);
  if (auto e = form.ReadFields()) return e;
  std::vector<FormField> fields = form.fields();

  // Authentication: the signature covers the policy exactly as sent. A form
  // without a policy is an anonymous upload (as S3: its signature fields, if
  // any, mean nothing without one), which only a bucket policy granting
  // s3:PutObject to everyone allows (checked below, once the key is known).
  const std::string* policy_b64 = Field(fields, "policy");
  std::optional<PostPolicy> policy;
  std::optional<auth::SignatureVersion> signed_with;
  if (policy_b64) {
    auto signed_by = auth::VerifyPostSignature(SignatureFields(fields), *policy_b64,
                                               ctx.config.secrets, ctx.config.sigv2);
    if (auto* e = std::get_if<auth::PostSignatureError>(&signed_by)) {
      return FromPostSignatureError(*e);
    }
    const auth::PostSignature& signature = std::get<auth::PostSignature>(signed_by);
    ctx.access_key = signature.access_key;
    signed_with = signature.version;
    ctx.caller = ctx.config.identities->Resolve(signature.access_key);
    if (!ctx.caller) return MakeError(ErrorCode::kInvalidAccessKeyId);
    if (signature.version == auth::SignatureVersion::kV2) {
      // Like x-amz-signature in a SigV4 form, the SigV2 credentials stand
      // outside the policy's conditions.
      std::erase_if(fields, [](const FormField& f) {
        return f.name == "awsaccesskeyid" || f.name == "signature";
      });
      policy_b64 = Field(fields, "policy");  // the erase moved the fields
    }
    // Some encoders wrap base64 in lines; the signature covers the text as sent.
    std::string compact;
    for (char c : *policy_b64) {
      if (c != '\r' && c != '\n' && c != ' ' && c != '\t') compact.push_back(c);
    }
    auto policy_json = Base64Decode(compact);
    if (!policy_json) {
      return MakeError(ErrorCode::kInvalidPolicyDocument,
                       "Invalid Policy: Invalid Base64 encoding.");
    }
    auto parsed = ParsePostPolicy(*policy_json);
    if (auto* e = std::get_if<Error>(&parsed)) return *e;
    policy = std::move(std::get<PostPolicy>(parsed));
  }

  // ${filename} is expanded in every field before the policy is checked.
  std::string file_name = BaseFileName(form.file_name());
  for (FormField& f : fields) {
    if (f.name != "policy" && f.name != "x-amz-signature") {
      f.value = ExpandFilename(f.value, file_name);
    }
  }
  const std::string* key_field = Field(fields, "key");
  if (!key_field) return MissingField("key");
  std::string key = *key_field;
  if (key.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "User key must have a length greater than 0.");
  }
  if (key.size() > object::kMaxKeyBytes) return MakeError(ErrorCode::kKeyTooLongError);
  if (!IsValidUtf8(key) || key.find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "Object key must be valid UTF-8 without NUL");
  }
  if (policy) {
    if (auto e = EvaluatePostPolicy(*policy, fields, ctx.route.bucket, UnixNowNs() / 1000000)) {
      return e;
    }
  }
  // The signer's (or, without a policy, everyone's) rights: s3:PutObject on the key, and the actions its tag
  // and Object Lock fields need (as the PUT headers would).
  // The condition keys a PUT takes from its signature and headers come from
  // the form: its signature's version, its x-amz-* fields, `acl` as x-amz-acl.
  auth::MapConditionContext form_keys;
  if (signed_with) {
    form_keys.Set("s3:signatureversion",
                  *signed_with == auth::SignatureVersion::kV4 ? "AWS4-HMAC-SHA256" : "AWS");
  }
  for (const FormField& f : fields) {
    if (f.name.starts_with("x-amz-")) form_keys.Set("s3:" + f.name, f.value);
  }
  if (const std::string* acl = Field(fields, "acl")) form_keys.Set("s3:x-amz-acl", *acl);
  const std::string* lock_mode = Field(fields, "x-amz-object-lock-mode");
  const std::string* lock_until = Field(fields, "x-amz-object-lock-retain-until-date");
  const std::string* legal_hold = Field(fields, "x-amz-object-lock-legal-hold");
  if (lock_mode) form_keys.Set("s3:object-lock-mode", *lock_mode);
  if (legal_hold) form_keys.Set("s3:object-lock-legal-hold", *legal_hold);
  if (lock_until) {
    form_keys.Set("s3:object-lock-retain-until-date", *lock_until);
    if (auto until_ns = ParseRetainUntil(*lock_until)) {
      int64_t days = (*until_ns - UnixNowNs()) / (86400LL * 1000000000LL);
      form_keys.Set("s3:object-lock-remaining-retention-days", std::to_string(days < 0 ? 0 : days));
    }
  }
  const bool retention = lock_mode || lock_until;
  if (!Allows(ctx, "s3:PutObject", key, &form_keys) ||
      !AllowsWriteOptions(ctx, key, Field(fields, "tagging") != nullptr, retention,
                          legal_hold != nullptr, &form_keys)) {
    return AccessDeniedError();
  }
  // The redirect target becomes a Location header: no control characters.
  for (const char* name : {"success_action_redirect", "redirect"}) {
    const std::string* v = Field(fields, name);
    if (v && !http::IsSafeHeaderValue(*v)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string(name) + " contains characters not allowed in a URL");
    }
  }

  // The fields that PUT takes as headers, as a request the PUT helpers read.
  http::Request as_put;
  for (const FormField& f : fields) {
    if (f.name == "x-amz-trailer" || f.name == "x-amz-decoded-content-length") continue;
    if (f.name == "x-amz-checksum-algorithm") {
      as_put.headers.emplace_back("x-amz-sdk-checksum-algorithm", f.value);
      continue;
    }
    as_put.headers.emplace_back(f.name, f.value);
  }
  http::Request with_acl;  // the acl field, as x-amz-acl (AclForNewObject below)
  if (const std::string* acl = Field(fields, "acl")) with_acl.headers.emplace_back("x-amz-acl", *acl);
  std::optional<std::string> want_md5;
  if (const std::string* md5 = Field(fields, "content-md5")) {
    want_md5 = Base64Decode(*md5);
    if (!want_md5 || want_md5->size() != 16) return MakeError(ErrorCode::kInvalidDigest);
  }
  object::WriteOptions options;
  auto storage_class = StorageClassFromRequest(as_put);
  if (auto* e = std::get_if<Error>(&storage_class)) return *e;
  options.storage_class = std::get<std::string>(storage_class);
  options.pool = PoolOfClass(ctx.config, options.storage_class);
  if (const std::string* tagging = Field(fields, "tagging")) {
    auto tags = ParseTagging(*tagging);
    if (!tags) return MakeError(ErrorCode::kMalformedXML);
    if (auto e = ValidateTags(*tags)) return e;
    options.tags = std::move(*tags);
  }
  auto headers = HeadersFromRequest(as_put);
  if (auto* e = std::get_if<Error>(&headers)) return *e;
  auto checksum = ChecksumCheck::FromRequest(as_put);
  if (auto* e = std::get_if<Error>(&checksum)) return *e;
  ChecksumCheck& check = std::get<ChecksumCheck>(checksum);
  // Object Lock form fields (x-amz-object-lock-*) as PUT takes them.
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  auto lock = LockFromRequest(as_put, *bucket, ctx.engine.NowNs());
  if (auto* e = std::get_if<Error>(&lock)) return *e;
  options.lock = std::get<std::optional<object::ObjectLock>>(lock);
  auto acl = AclForNewObject(ctx, with_acl, *bucket);
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  options.owner = std::move(std::get<NewObjectAcl>(acl).owner);
  options.acl = std::move(std::get<NewObjectAcl>(acl).acl);
  // x-amz-server-side-encryption* and the SSE-C fields, as PUT takes them.
  auto sse = SseForWrite(ctx, as_put, *bucket);
  if (auto* e = std::get_if<Error>(&sse)) return *e;
  SseWrite& enc = std::get<SseWrite>(sse);
  options.sse = enc.sse;
  options.data_key = std::move(enc.data_key);

  auto writer = ctx.engine.NewWriter(ctx.route.bucket, key,
                                     std::move(std::get<object::ObjectHeaders>(headers)),
                                     std::move(options));
  if (!writer.ok()) return FromStatus(writer.status(), ErrorCode::kNoSuchBucket);
  uint64_t max_bytes = ctx.config.max_object_bytes;
  if (policy && policy->length_range) {
    max_bytes = std::min<uint64_t>(max_bytes, static_cast<uint64_t>(policy->length_range->second));
  }
  while (true) {
    auto chunk = form.NextFileChunk();
    if (auto* e = std::get_if<Error>(&chunk)) return *e;
    std::string_view data = std::get<std::string_view>(chunk);
    if (data.empty()) break;
    if ((*writer)->size_bytes() + data.size() > max_bytes) {
      return MakeError(ErrorCode::kEntityTooLarge);
    }
    check.Update(data.data(), data.size());
    Status st = (*writer)->Append(data);
    if (!st.ok()) return FromStatus(st);
  }
  if (policy) {
    if (auto e = CheckPostContentLength(*policy, (*writer)->size_bytes())) return e;
  }
  if (auto e = check.Finish(ctx)) return e;
  if (want_md5 && *want_md5 != (*writer)->Md5()) return MakeError(ErrorCode::kBadDigest);
  if (check.algorithm()) {
    (*writer)->SetChecksum(std::string(ChecksumName(*check.algorithm())), check.value_base64(),
                           "FULL_OBJECT");
  }
  // Whatever follows the file is ignored; read it so the connection stays usable.
  form.SkipRest(kSkipAfterFileBytes);

  auto rec = (*writer)->Commit();
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchBucket);

  std::string etag = "\"" + rec->etag + "\"";
  std::string location = ObjectUrl(ctx, key);
  http::Headers h = {{"ETag", etag}, {"Location", location}};
  AddChecksumHeaders(*rec, &h);
  AddSseHeaders(rec->sse, enc.customer_key_md5, &h);
  if (NamesVersions(*bucket)) h.emplace_back("x-amz-version-id", rec->VersionId());

  const std::string* redirect = Field(fields, "success_action_redirect");
  if (!redirect) redirect = Field(fields, "redirect");
  if (redirect && (redirect->starts_with("http://") || redirect->starts_with("https://"))) {
    std::string target = *redirect;
    target += target.find('?') == std::string::npos ? '?' : '&';
    target += "bucket=" + UriEncode(ctx.route.bucket, true) + "&key=" + UriEncode(key, true) +
              "&etag=" + UriEncode(etag, true);
    http::Headers rh = {{"ETag", etag}, {"Location", target}};
    return SendEmpty(ctx, 303, rh);
  }
  const std::string* status = Field(fields, "success_action_status");
  if (status && *status == "201") {
    XmlWriter w;
    w.Open("PostResponse");
    w.Element("Location", location);
    w.Element("Bucket", ctx.route.bucket);
    w.Element("Key", key);
    w.Element("ETag", etag);
    w.Close("PostResponse");
    std::string xml = w.Finish();
    http::Headers xh = BaseHeaders(ctx);
    xh.insert(xh.end(), h.begin(), h.end());
    xh.emplace_back("Content-Type", "application/xml");
    if (ctx.out.Start(201, xh, xml.size()).ok()) ctx.out.Write(xml).IgnoreError();
    return std::nullopt;
  }
  return SendEmpty(ctx, status && *status == "200" ? 200 : 204, h);
}

}  // namespace strata::s3
