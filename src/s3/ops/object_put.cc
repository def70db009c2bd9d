// PutObject: streams the body into a new object version and commits it.
#include <memory>

#include "common/encoding.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

namespace {

constexpr size_t kUserMetadataMaxBytes = 2048;  // AWS limit on x-amz-meta-* (names + values)
constexpr size_t kPutBufferBytes = 1 << 20;

std::variant<object::ObjectHeaders, Error> CollectHeaders(const http::Request& req) {
  object::ObjectHeaders h;
  size_t meta_bytes = 0;
  for (const auto& [name, value] : req.headers) {
    if (name == "content-type") h.content_type = value;
    else if (name == "content-encoding") h.content_encoding = value;
    else if (name == "content-disposition") h.content_disposition = value;
    else if (name == "content-language") h.content_language = value;
    else if (name == "cache-control") h.cache_control = value;
    else if (name == "expires") h.expires = value;
    else if (name.starts_with("x-amz-meta-")) {
      std::string meta_name = name.substr(11);
      meta_bytes += meta_name.size() + value.size();
      h.user_metadata.emplace_back(std::move(meta_name), value);
    }
  }
  // aws-chunked is a transfer detail of SigV4 streaming, not a stored encoding.
  if (h.content_encoding == "aws-chunked") h.content_encoding.clear();
  if (h.content_encoding.starts_with("aws-chunked,")) h.content_encoding.erase(0, 12);
  if (meta_bytes > kUserMetadataMaxBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Your metadata headers exceed the maximum allowed metadata size (2 KB)");
  }
  return h;
}

// The object size the client declared, if it did (not for chunked transfer).
std::variant<std::optional<uint64_t>, Error> DeclaredSize(const http::Request& req) {
  if (const std::string* decoded = req.Header("x-amz-decoded-content-length")) {
    char* end = nullptr;
    uint64_t v = std::strtoull(decoded->c_str(), &end, 10);
    if (decoded->empty() || *end != '\0') {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid x-amz-decoded-content-length");
    }
    return std::optional<uint64_t>(v);
  }
  if (req.content_length) return std::optional<uint64_t>(*req.content_length);
  if (req.chunked) return std::optional<uint64_t>();
  return MakeError(ErrorCode::kMissingContentLength);
}

}  // namespace

OpResult PutObject(OpContext& ctx) {
  auto declared = DeclaredSize(ctx.http);
  if (auto* e = std::get_if<Error>(&declared)) return *e;
  std::optional<uint64_t> size = std::get<std::optional<uint64_t>>(declared);
  if (size && *size > ctx.config.max_object_bytes) return MakeError(ErrorCode::kEntityTooLarge);

  std::optional<std::string> want_md5;
  if (const std::string* md5 = ctx.http.Header("content-md5")) {
    want_md5 = Base64Decode(*md5);
    if (!want_md5 || want_md5->size() != 16) return MakeError(ErrorCode::kInvalidDigest);
  }
  if (const std::string* sc = ctx.http.Header("x-amz-storage-class")) {
    if (*sc != "STANDARD" && *sc != "REDUCED_REDUNDANCY" && *sc != "STANDARD_IA" &&
        *sc != "ONEZONE_IA" && *sc != "INTELLIGENT_TIERING" && *sc != "GLACIER" &&
        *sc != "DEEP_ARCHIVE" && *sc != "GLACIER_IR") {
      return MakeError(ErrorCode::kInvalidStorageClass);
    }
  }
  auto headers = CollectHeaders(ctx.http);
  if (auto* e = std::get_if<Error>(&headers)) return *e;

  auto writer = ctx.engine.NewWriter(ctx.route.bucket, ctx.route.key,
                                     std::move(std::get<object::ObjectHeaders>(headers)));
  if (!writer.ok()) return FromStatus(writer.status(), ErrorCode::kNoSuchBucket);

  auto buf = std::make_unique<char[]>(kPutBufferBytes);
  while (true) {
    auto n = ctx.body.Read(buf.get(), kPutBufferBytes);
    if (!n.ok()) return FromBodyStatus(n.status());
    if (*n == 0) break;
    if ((*writer)->size_bytes() + *n > ctx.config.max_object_bytes) {
      return MakeError(ErrorCode::kEntityTooLarge);
    }
    Status st = (*writer)->Append(std::string_view(buf.get(), *n));
    if (!st.ok()) return FromStatus(st);
  }
  if (size && (*writer)->size_bytes() != *size) return MakeError(ErrorCode::kIncompleteBody);
  if (want_md5 && *want_md5 != (*writer)->Md5()) return MakeError(ErrorCode::kBadDigest);

  auto rec = (*writer)->Commit();
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200, {{"ETag", "\"" + rec->etag + "\""}});
}

}  // namespace strata::s3
