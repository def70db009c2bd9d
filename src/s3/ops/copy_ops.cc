// CopyObject and UploadPartCopy: server-side copies streamed from the source
// version into a new version or part, with the x-amz-copy-source-if-* checks.
#include <memory>

#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/request_headers.h"
#include "s3/ops/sse.h"
#include "s3/ops/versioning.h"
#include "s3/router.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr uint64_t kMaxCopyBytes = 5ull << 30;
constexpr size_t kCopyBufferBytes = 1 << 20;

// The source version, and x-amz-copy-source-version-id for the response
// (when the source bucket names versions).
std::variant<std::unique_ptr<object::ObjectReader>, Error> OpenSource(OpContext& ctx,
                                                                      const CopySource& src,
                                                                      http::Headers* h) {
  auto reader = ctx.engine.OpenVersion(src.bucket, src.key, src.version);
  if (!reader.ok()) {
    if (reader.status().code() != Code::kNotFound) return FromStatus(reader.status());
    return FromStatus(reader.status(), ErrorCode::kNoSuchKey);
  }
  const object::ObjectRecord& rec = (*reader)->record();
  if (rec.delete_marker) {
    if (src.version) {
      return MakeError(ErrorCode::kInvalidRequest,
                       "The source of a copy request may not specifically refer to a delete "
                       "marker by version id.");
    }
    return MakeError(ErrorCode::kNoSuchKey);
  }
  if (Archived(ctx, rec)) return MakeError(ErrorCode::kInvalidObjectState);
  // The source's key (x-amz-copy-source-server-side-encryption-customer-*
  // for SSE-C) before its conditions are told.
  auto data_key = SseForRead(ctx, rec.sse, /*copy_source=*/true);
  if (auto* e = std::get_if<Error>(&data_key)) return *e;
  if (rec.sse.on()) {
    Status unlocked = (*reader)->Unlock(std::get<std::string>(data_key));
    if (!unlocked.ok()) return FromStatus(unlocked);
  }
  if (auto e = CheckCopyConditions(ctx.http, rec)) return *e;
  auto b = ctx.engine.GetBucket(src.bucket);
  if (b.ok() && NamesVersions(*b)) h->emplace_back("x-amz-copy-source-version-id", rec.VersionId());
  return std::move(reader).value();
}

std::optional<Error> CopyRange(const object::ObjectReader& reader, uint64_t first, uint64_t length,
                               object::ObjectWriter& writer, ChecksumCheck& checksum) {
  auto buf = std::make_unique_for_overwrite<char[]>(kCopyBufferBytes);
  uint64_t offset = first, end = first + length;
  while (offset < end) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kCopyBufferBytes, end - offset));
    auto n = reader.ReadAt(offset, buf.get(), want);
    if (!n.ok()) return FromStatus(n.status());
    if (*n == 0) return MakeError(ErrorCode::kInternalError, "copy source ended early");
    checksum.Update(buf.get(), *n);
    Status st = writer.Append(std::string_view(buf.get(), *n));
    if (!st.ok()) return FromStatus(st);
    offset += *n;
  }
  return std::nullopt;
}

std::variant<std::string, Error> Directive(const http::Request& req, const char* header) {
  const std::string* d = req.Header(header);
  if (!d) return std::string("COPY");
  if (*d != "COPY" && *d != "REPLACE") {
    return MakeError(ErrorCode::kInvalidArgument, std::string("Unknown ") + header);
  }
  return *d;
}

OpResult SendCopyResult(OpContext& ctx, const char* root, const std::string& etag, int64_t mtime_ns,
                        const std::string& checksum_alg, const std::string& checksum,
                        const http::Headers& extra) {
  XmlWriter w;
  w.Open(root);
  w.Element("ETag", "\"" + etag + "\"");
  w.Element("LastModified", FormatIso8601(mtime_ns));
  if (!checksum.empty()) w.Element("Checksum" + checksum_alg, checksum);
  w.Close(root);
  return SendXml(ctx, w.Finish(), 200, extra);
}

}  // namespace

OpResult CopyObject(OpContext& ctx) {
  auto parsed = ParseCopySource(ctx.http);
  if (auto* e = std::get_if<Error>(&parsed)) return *e;
  const CopySource& src = std::get<CopySource>(parsed);
  auto metadata_directive = Directive(ctx.http, "x-amz-metadata-directive");
  if (auto* e = std::get_if<Error>(&metadata_directive)) return *e;
  auto tagging_directive = Directive(ctx.http, "x-amz-tagging-directive");
  if (auto* e = std::get_if<Error>(&tagging_directive)) return *e;
  bool replace_meta = std::get<std::string>(metadata_directive) == "REPLACE";
  bool replace_tags = std::get<std::string>(tagging_directive) == "REPLACE";
  auto storage_class = StorageClassFromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&storage_class)) return *e;

  http::Headers response_headers;
  auto opened = OpenSource(ctx, src, &response_headers);
  if (auto* e = std::get_if<Error>(&opened)) return *e;
  auto& reader = std::get<std::unique_ptr<object::ObjectReader>>(opened);
  const object::ObjectRecord& src_rec = reader->record();
  auto dest_bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!dest_bucket.ok()) return FromStatus(dest_bucket.status(), ErrorCode::kNoSuchBucket);
  if (src_rec.size_bytes > kMaxCopyBytes) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "The specified copy source is larger than the maximum allowable size for a "
                     "copy source: 5368709120");
  }
  bool same = src.bucket == ctx.route.bucket && src.key == ctx.route.key && !src.version;
  const bool changes_encryption =
      ctx.http.Header("x-amz-server-side-encryption") != nullptr ||
      ctx.http.Header("x-amz-server-side-encryption-customer-algorithm") != nullptr;
  if (same && !replace_meta && ctx.http.Header("x-amz-storage-class") == nullptr &&
      ctx.http.Header("x-amz-checksum-algorithm") == nullptr && !changes_encryption) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "This copy request is illegal because it is trying to copy an object to "
                     "itself without changing the object's metadata, storage class, website "
                     "redirect location or encryption attributes.");
  }

  object::ObjectHeaders headers = src_rec.headers;
  if (replace_meta) {
    auto h = HeadersFromRequest(ctx.http);
    if (auto* e = std::get_if<Error>(&h)) return *e;
    headers = std::get<object::ObjectHeaders>(h);
  }
  object::WriteOptions options;
  options.storage_class = std::get<std::string>(storage_class);
  options.pool = PoolOfClass(ctx.config, options.storage_class);
  options.tags = src_rec.tags;
  auto lock = LockFromRequest(ctx.http, *dest_bucket, ctx.engine.NowNs());
  if (auto* e = std::get_if<Error>(&lock)) return *e;
  options.lock = std::get<std::optional<object::ObjectLock>>(lock);
  options.bypass_governance = BypassGovernance(ctx, ctx.route.key);
  auto acl = AclForNewObject(ctx, ctx.http, *dest_bucket);  // a copy's ACL is the request's
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  options.owner = std::move(std::get<NewObjectAcl>(acl).owner);
  options.acl = std::move(std::get<NewObjectAcl>(acl).acl);
  // An encrypted source is never copied into plaintext: without headers or a
  // bucket default the copy gets SSE-S3 (AWS's baseline).
  auto sse = SseForWrite(ctx, ctx.http, *dest_bucket,
                         src_rec.sse.on() ? object::SseMode::kS3 : object::SseMode::kNone);
  if (auto* e = std::get_if<Error>(&sse)) return *e;
  SseWrite& enc = std::get<SseWrite>(sse);
  options.sse = enc.sse;
  options.data_key = enc.data_key;
  if (replace_tags) {
    options.tags.clear();
    if (const std::string* tagging = ctx.http.Header("x-amz-tagging")) {
      auto tags = ParseTaggingHeader(*tagging);
      if (auto* e = std::get_if<Error>(&tags)) return *e;
      options.tags = std::get<object::Tags>(tags);
    }
  }
  // The copy keeps the source's checksum algorithm unless another is asked for.
  std::optional<ChecksumAlgorithm> alg;
  if (const std::string* a = ctx.http.Header("x-amz-checksum-algorithm")) {
    alg = ParseChecksumAlgorithm(*a);
    if (!alg) return MakeError(ErrorCode::kInvalidRequest, "Invalid x-amz-checksum-algorithm");
  } else if (!src_rec.checksum_algorithm.empty()) {
    alg = ParseChecksumAlgorithm(src_rec.checksum_algorithm);
  }
  http::Request no_headers;  // the copy's body is the source, not the request
  auto checksum = ChecksumCheck::FromRequest(no_headers, alg);
  ChecksumCheck& check = std::get<ChecksumCheck>(checksum);

  auto writer = ctx.engine.NewWriter(ctx.route.bucket, ctx.route.key, std::move(headers),
                                     std::move(options));
  if (!writer.ok()) return FromStatus(writer.status(), ErrorCode::kNoSuchBucket);
  if (auto e = CopyRange(*reader, 0, src_rec.size_bytes, **writer, check)) return *e;
  if (auto e = check.Finish(ctx)) return *e;
  if (check.algorithm()) {
    (*writer)->SetChecksum(std::string(ChecksumName(*check.algorithm())), check.value_base64(),
                           "FULL_OBJECT");
  }
  auto rec = (*writer)->Commit(WriteConditions(ctx.http));
  if (!rec.ok()) return WriteConditionError(rec.status());
  if (NamesVersions(*dest_bucket)) response_headers.emplace_back("x-amz-version-id", rec->VersionId());
  AddSseHeaders(rec->sse, enc.customer_key_md5, &response_headers);
  return SendCopyResult(ctx, "CopyObjectResult", rec->etag, rec->mtime_ns, rec->checksum_algorithm,
                        rec->checksum_value, response_headers);
}

OpResult UploadPartCopy(OpContext& ctx) {
  const std::string* n = ctx.route.Query("partNumber");
  if (!n || n->empty() || n->size() > 5 || n->find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(*n) < 1 || std::stoul(*n) > object::kMaxParts) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Part number must be an integer between 1 and 10000, inclusive");
  }
  const std::string* upload_id = ctx.route.Query("uploadId");
  auto upload = ctx.engine.GetUpload(ctx.route.bucket, ctx.route.key, *upload_id);
  if (!upload.ok()) {
    if (upload.status().code() != Code::kNotFound) return FromStatus(upload.status());
    auto b = ctx.engine.GetBucket(ctx.route.bucket);
    return MakeError(b.ok() ? ErrorCode::kNoSuchUpload : ErrorCode::kNoSuchBucket);
  }
  auto parsed = ParseCopySource(ctx.http);
  if (auto* e = std::get_if<Error>(&parsed)) return *e;
  http::Headers response_headers;
  auto opened = OpenSource(ctx, std::get<CopySource>(parsed), &response_headers);
  if (auto* e = std::get_if<Error>(&opened)) return *e;
  auto& reader = std::get<std::unique_ptr<object::ObjectReader>>(opened);
  uint64_t size = reader->record().size_bytes;
  uint64_t first = 0, length = size;
  if (const std::string* range = ctx.http.Header("x-amz-copy-source-range")) {
    auto parsed_range = ParseCopySourceRange(*range, size);
    if (auto* e = std::get_if<Error>(&parsed_range)) return *e;
    first = std::get<ByteRange>(parsed_range).first;
    length = std::get<ByteRange>(parsed_range).length;
  }
  if (length > kMaxCopyBytes) return MakeError(ErrorCode::kEntityTooLarge);
  std::optional<ChecksumAlgorithm> alg;
  if (!upload->checksum_algorithm.empty()) alg = ParseChecksumAlgorithm(upload->checksum_algorithm);
  http::Request no_headers;
  ChecksumCheck check = std::get<ChecksumCheck>(ChecksumCheck::FromRequest(no_headers, alg));
  auto part_key = SseForPart(ctx, *upload);
  if (auto* e = std::get_if<Error>(&part_key)) return *e;
  const SseWrite& enc = std::get<SseWrite>(part_key);
  auto writer = ctx.engine.NewPartWriter(ctx.route.bucket, ctx.route.key, *upload_id,
                                         static_cast<uint32_t>(std::stoul(*n)), enc.data_key);
  if (!writer.ok()) return FromStatus(writer.status(), ErrorCode::kNoSuchUpload);
  if (auto e = CopyRange(*reader, first, length, **writer, check)) return *e;
  if (auto e = check.Finish(ctx)) return *e;
  if (alg) (*writer)->SetChecksum(upload->checksum_algorithm, check.value_base64(), "");
  auto rec = (*writer)->Commit();
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchUpload);
  AddSseHeaders(upload->sse, enc.customer_key_md5, &response_headers);
  return SendCopyResult(ctx, "CopyPartResult", rec->etag, rec->mtime_ns, upload->checksum_algorithm,
                        alg ? check.value_base64() : "", response_headers);
}

}  // namespace strata::s3
