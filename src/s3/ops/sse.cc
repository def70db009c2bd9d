#include "s3/ops/sse.h"

#include <map>
#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/hash.h"
#include "kms/key_service.h"

namespace strata::s3 {

namespace {

constexpr size_t kCustomerKeyBytes = 32;  // AES-256
constexpr std::string_view kSse = "x-amz-server-side-encryption";
constexpr std::string_view kKmsKeyId = "x-amz-server-side-encryption-aws-kms-key-id";
constexpr std::string_view kContext = "x-amz-server-side-encryption-context";
constexpr std::string_view kBucketKey = "x-amz-server-side-encryption-bucket-key-enabled";

Error Invalid(std::string message) { return MakeError(ErrorCode::kInvalidArgument, std::move(message)); }

std::string Md5Base64(std::string_view data) {
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(data.data(), data.size());
  return Base64Encode(md5.Final());
}

// The SSE-C headers (or the copy source's): nullopt when none is present.
// `md5_required`: writes need the key's MD5; reads accept it missing (as AWS).
std::variant<std::optional<CustomerKey>, Error> CustomerKeyFrom(const OpContext& ctx,
                                                                const http::Request& req,
                                                                bool copy_source,
                                                                bool md5_required) {
  // Looked for on every GET and PUT: the names are constants, not built.
  struct Names {
    std::string_view algorithm, key, md5;
  };
  static constexpr Names kOwn{"x-amz-server-side-encryption-customer-algorithm",
                              "x-amz-server-side-encryption-customer-key",
                              "x-amz-server-side-encryption-customer-key-md5"};
  static constexpr Names kSource{"x-amz-copy-source-server-side-encryption-customer-algorithm",
                                 "x-amz-copy-source-server-side-encryption-customer-key",
                                 "x-amz-copy-source-server-side-encryption-customer-key-md5"};
  const Names& names = copy_source ? kSource : kOwn;
  const std::string* algorithm = req.Header(names.algorithm);
  const std::string* key = req.Header(names.key);
  const std::string* md5 = req.Header(names.md5);
  if (!algorithm && !key && !md5) return std::optional<CustomerKey>();
  if (!algorithm) {
    return Invalid("Requests specifying Server Side Encryption with Customer provided keys must "
                   "provide a valid encryption algorithm.");
  }
  if (*algorithm != "AES256") return MakeError(ErrorCode::kInvalidEncryptionAlgorithmError);
  if (!key) {
    return Invalid("Requests specifying Server Side Encryption with Customer provided keys must "
                   "provide an appropriate secret key.");
  }
  if (!md5 && md5_required) {
    return Invalid("Requests specifying Server Side Encryption with Customer provided keys must "
                   "provide the client calculated MD5 of the secret key.");
  }
  if (!ctx.http.secure && !ctx.config.sse_c_over_http) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "Requests specifying Server Side Encryption with Customer provided keys "
                     "must be made over a secure connection.");
  }
  auto raw = Base64Decode(*key);
  if (md5) {
    auto want = Base64Decode(*md5);
    if (!want || !raw || Md5Base64(*raw) != *md5) {
      return Invalid("The calculated MD5 hash of the key did not match the hash that was provided.");
    }
  }
  if (!raw || raw->empty()) return Invalid("The secret key was invalid for the specified algorithm.");
  std::string key_md5 = Md5Base64(*raw);
  return std::optional<CustomerKey>(CustomerKey{std::move(*raw), std::move(key_md5)});
}

bool HasSseHeader(const http::Request& req) {
  return req.Header(kSse) || req.Header(kKmsKeyId) || req.Header(kContext) ||
         req.Header(kBucketKey);
}

// The encryption context: the client's (base64 JSON of string values) or
// AWS's default, the object's ARN; canonical (sorted keys) so that the same
// context always binds the same bytes.
std::variant<std::string, Error> EncryptionContext(const OpContext& ctx, const http::Request& req) {
  std::map<std::string, std::string> context;
  if (const std::string* h = req.Header(kContext)) {
    const Error bad = Invalid(
        "The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string "
        "holding JSON which represents a string-string map");
    auto json = Base64Decode(*h);
    if (!json) return bad;
    nlohmann::json j = nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return bad;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_string()) return bad;
      context[it.key()] = it.value().get<std::string>();
    }
  }
  if (context.empty()) return kms::KeyService::DefaultContext(ctx.route.bucket, ctx.route.key);
  return nlohmann::json(context).dump();
}

std::optional<Error> NoKeyService(const OpContext& ctx) {
  if (ctx.config.kms) return std::nullopt;
  return MakeError(ErrorCode::kNotImplemented, "This server runs without a key service.");
}

}  // namespace

std::variant<SseWrite, Error> SseForWrite(OpContext& ctx, const http::Request& req,
                                          const object::BucketRecord& bucket,
                                          object::SseMode fallback) {
  auto customer = CustomerKeyFrom(ctx, req, /*copy_source=*/false, /*md5_required=*/true);
  if (auto* e = std::get_if<Error>(&customer)) return *e;
  auto& ckey = std::get<std::optional<CustomerKey>>(customer);
  const std::string* mode = req.Header(kSse);
  if (ckey && HasSseHeader(req)) {
    return Invalid("Server Side Encryption with Customer provided key is incompatible with the "
                   "encryption method specified");
  }
  SseWrite out;
  if (ckey) {
    if (ckey->key.size() != kCustomerKeyBytes) {
      return Invalid("The secret key was invalid for the specified algorithm.");
    }
    out.sse.mode = object::SseMode::kCustomer;
    out.data_key = std::move(ckey->key);
    out.customer_key_md5 = std::move(ckey->key_md5);
    return out;
  }
  object::SseMode want = object::SseMode::kNone;
  std::string key_ref;
  bool bucket_key = false;
  if (mode) {
    if (*mode == "AES256") {
      want = object::SseMode::kS3;
    } else if (*mode == "aws:kms") {
      want = object::SseMode::kKms;
    } else {
      return Invalid("The encryption method specified is not supported");
    }
  }
  const std::string* key_id = req.Header(kKmsKeyId);
  const std::string* bucket_key_header = req.Header(kBucketKey);
  if ((key_id || req.Header(kContext)) && want != object::SseMode::kKms) {
    return Invalid("Server Side Encryption with AWS KMS managed key requires HTTP header "
                   "x-amz-server-side-encryption : aws:kms");
  }
  if (bucket_key_header) {
    const std::string v = AsciiLower(*bucket_key_header);  // boto3 sends "True"
    if (v != "true" && v != "false") {
      return Invalid("Invalid value for x-amz-server-side-encryption-bucket-key-enabled: " +
                     *bucket_key_header);
    }
    bucket_key = v == "true";
  }
  if (key_id) {
    if (key_id->empty()) return Invalid("KMS key id must not be empty");
    key_ref = *key_id;
  }
  if (want == object::SseMode::kNone && bucket.default_sse != object::SseMode::kNone) {
    want = bucket.default_sse;
    key_ref = bucket.default_kms_key;
    if (!bucket_key_header) bucket_key = bucket.default_bucket_key;
  } else if (want == object::SseMode::kKms && !key_id &&
             bucket.default_sse == object::SseMode::kKms) {
    key_ref = bucket.default_kms_key;  // aws:kms named, the bucket's key
    if (!bucket_key_header) bucket_key = bucket.default_bucket_key;
  }
  if (want == object::SseMode::kNone) want = fallback;
  if (want == object::SseMode::kNone) return out;
  if (auto e = NoKeyService(ctx)) return *e;
  out.sse.mode = want;
  if (want == object::SseMode::kS3) {
    auto dk = ctx.config.kms->GenerateDataKey(kms::kSseS3Alias, "");
    if (!dk.ok()) return FromStatus(dk.status());
    out.sse.wrapped_key = std::move(dk->wrapped);
    out.data_key = std::move(dk->plaintext);
    return out;
  }
  auto context = EncryptionContext(ctx, req);
  if (auto* e = std::get_if<Error>(&context)) return *e;
  auto dk = ctx.config.kms->GenerateDataKey(key_ref, std::get<std::string>(context));
  if (!dk.ok()) return FromStatus(dk.status());
  out.sse.wrapped_key = std::move(dk->wrapped);
  out.sse.key_arn = std::move(dk->key_arn);
  out.sse.context = std::move(std::get<std::string>(context));
  out.sse.bucket_key = bucket_key;
  out.data_key = std::move(dk->plaintext);
  return out;
}

std::variant<std::string, Error> SseForRead(OpContext& ctx, const object::Encryption& sse,
                                            bool copy_source, std::string* key_md5) {
  auto customer = CustomerKeyFrom(ctx, ctx.http, copy_source, /*md5_required=*/false);
  if (auto* e = std::get_if<Error>(&customer)) return *e;
  auto& ckey = std::get<std::optional<CustomerKey>>(customer);
  if (sse.mode == object::SseMode::kCustomer) {
    if (!ckey) return FromStatus(Status(Code::kPreconditionFailed, "", Detail::kSseKey));
    // The engine checks the key against the stored digest (AccessDenied).
    if (key_md5) *key_md5 = ckey->key_md5;
    return std::move(ckey->key);
  }
  if (ckey) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "The encryption parameters are not applicable to this object.");
  }
  if (!sse.on()) return std::string();
  if (auto e = NoKeyService(ctx)) return *e;
  auto key = ctx.config.kms->Decrypt(sse.wrapped_key,
                                     sse.mode == object::SseMode::kKms ? sse.context : "");
  if (!key.ok()) return FromStatus(key.status());
  return std::move(*key);
}

std::variant<SseWrite, Error> SseForPart(OpContext& ctx, const object::UploadRecord& upload) {
  if (HasSseHeader(ctx.http)) {
    return Invalid("x-amz-server-side-encryption headers are not supported for this operation; "
                   "the upload's encryption applies to its parts.");
  }
  SseWrite out;
  out.sse = upload.sse;
  auto key = SseForRead(ctx, upload.sse, /*copy_source=*/false, &out.customer_key_md5);
  if (auto* e = std::get_if<Error>(&key)) return *e;
  out.data_key = std::move(std::get<std::string>(key));
  if (upload.sse.mode == object::SseMode::kCustomer && out.data_key.size() != kCustomerKeyBytes) {
    return Invalid("The secret key was invalid for the specified algorithm.");
  }
  return out;
}

void AddSseHeaders(const object::Encryption& sse, const std::string& customer_key_md5,
                   http::Headers* h) {
  switch (sse.mode) {
    case object::SseMode::kNone: return;
    case object::SseMode::kS3: h->emplace_back(std::string(kSse), "AES256"); return;
    case object::SseMode::kKms:
      h->emplace_back(std::string(kSse), "aws:kms");
      h->emplace_back(std::string(kKmsKeyId), sse.key_arn);
      if (sse.bucket_key) h->emplace_back(std::string(kBucketKey), "true");
      return;
    case object::SseMode::kCustomer:
      h->emplace_back("x-amz-server-side-encryption-customer-algorithm", "AES256");
      if (!customer_key_md5.empty()) {
        h->emplace_back("x-amz-server-side-encryption-customer-key-MD5", customer_key_md5);
      }
      return;
  }
}

std::optional<Error> RefuseSseHeaders(const http::Request& req) {
  if (!HasSseHeader(req)) return std::nullopt;
  return Invalid("x-amz-server-side-encryption header is not supported for this operation.");
}

bool HandlesEncryptionHeaders(Op op) {
  switch (op) {
    case Op::kPutObject:
    case Op::kPostObject:
    case Op::kCopyObject:
    case Op::kCreateMultipartUpload:
    case Op::kUploadPart:
    case Op::kUploadPartCopy:
    case Op::kCompleteMultipartUpload:
    case Op::kListParts:
    case Op::kGetObject:
    case Op::kHeadObject:
    case Op::kGetObjectAttributes:
      return true;
    default:
      return false;
  }
}

}  // namespace strata::s3
