// GetObject and HeadObject: conditional headers, single byte ranges,
// response-* overrides, streamed body.
#include <memory>

#include "common/encoding.h"
#include "common/thread_wait.h"
#include "common/time_util.h"
#include "object/check_ahead.h"
#include "object/read_ahead.h"
#include "s3/ops/object_write.h"
#include "s3/ops/request_headers.h"
#include "s3/ops/sse.h"
#include "s3/ops/versioning.h"

namespace strata::s3 {

namespace {

constexpr size_t kGetBufferBytes = object::ReadAhead::kPieceBytes;
constexpr size_t kSmallBufferBytes = 64 << 10;
// The first span of a sendfile reply, checked on the worker before the head
// goes out. A body of one span or less is checked whole, so a bad block in it
// is still a 500, not a cut stream. A longer one (where a bad block past the
// first span cuts the stream anyway) starts after 64 KiB, so its first bytes
// leave soon even with hundreds of replies starting at once; the spans after
// it are checked on the bulk threads.
constexpr uint64_t kSpanBytes = object::CheckAhead::kSpanBytes;
constexpr uint64_t kFirstSpanBytes = 64 << 10;

void AddObjectHeaders(const OpContext& ctx, const object::ObjectRecord& rec, http::Headers* h) {
  const object::ObjectHeaders& oh = rec.headers;
  auto pick = [&](const char* param, const std::string& stored) -> const std::string* {
    if (const std::string* v = ctx.route.Query(param)) return v;
    return stored.empty() ? nullptr : &stored;
  };
  static const std::string kDefaultType = "binary/octet-stream";
  const std::string* type = pick("response-content-type", oh.content_type);
  h->emplace_back("Content-Type", type ? *type : kDefaultType);
  struct { const char* header; const char* param; const std::string& stored; } fields[] = {
      {"Content-Encoding", "response-content-encoding", oh.content_encoding},
      {"Content-Disposition", "response-content-disposition", oh.content_disposition},
      {"Content-Language", "response-content-language", oh.content_language},
      {"Cache-Control", "response-cache-control", oh.cache_control},
      {"Expires", "response-expires", oh.expires},
  };
  for (const auto& f : fields) {
    if (const std::string* v = pick(f.param, f.stored)) h->emplace_back(f.header, *v);
  }
  for (const auto& [name, value] : oh.user_metadata) {
    h->emplace_back("x-amz-meta-" + name, Rfc2047EncodeIfNeeded(value));  // as AWS: mail-safe
  }
}

// Sends [first, first + length) of `reader` span by span from its data
// files: `span` (checked, fd >= 0) first, the rest checked ahead on a
// helper (object/check_ahead.h) while this thread sends.
std::optional<Error> SendSpans(const OpContext& ctx, const object::ObjectReader& reader, int status,
                               const http::Headers& h, uint64_t first, uint64_t length,
                               object::ObjectReader::FileSpan span) {
  if (!ctx.out.Start(status, h, length).ok()) return std::nullopt;
  const uint64_t first_len = std::min(span.length, length);
  object::CheckAhead ahead(reader, first + first_len, first + length);  // checks while we send
  if (!ctx.out.SendFile(span.fd, span.offset, first_len).ok()) return std::nullopt;
  // The reply has started; the rest is bulk bytes, behind new requests on
  // busy cores (common/thread_wait.h).
  if (ahead.threaded()) TurnThisThreadBulk();
  while (true) {
    auto next = ahead.Next();
    if (!next.ok()) {
      // Headers are gone already: cut the connection (a short body the
      // client sees and retries), as the copying path does.
      ctx.out.CloseAfterResponse();
      return std::nullopt;
    }
    if (next->length == 0) return std::nullopt;
    if (!ctx.out.SendFile(next->fd, next->offset, next->length).ok()) return std::nullopt;
  }
}

}  // namespace

bool EtagMatches(const std::string& header, const std::string& etag) {
  // Comma-separated list of quoted (or bare) etags, or '*'.
  size_t pos = 0;
  while (pos <= header.size()) {
    size_t comma = header.find(',', pos);
    std::string item = header.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) {
      item = item.substr(b, e - b + 1);
      if (item.starts_with("W/")) item.erase(0, 2);
      if (item.size() >= 2 && item.front() == '"' && item.back() == '"') item = item.substr(1, item.size() - 2);
      if (item == "*" || item == etag) return true;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return false;
}

Error NotFoundError(OpContext& ctx) {
  auto b = ctx.engine.GetBucket(ctx.route.bucket);
  if (!b.ok() && b.status().code() == Code::kNotFound) return MakeError(ErrorCode::kNoSuchBucket);
  return MakeError(ErrorCode::kNoSuchKey);
}

// x-amz-version-id and the lock headers of `rec`. A versioned record or a
// marker says that its bucket names versions; a null version needs the
// bucket's record to tell.
void AddVersionHeadersOf(OpContext& ctx, const object::ObjectRecord& rec, http::Headers* h) {
  if (rec.versioned || rec.delete_marker) {  // names its version whatever the bucket says
    object::BucketRecord versioned;
    versioned.versioning = object::Versioning::kEnabled;
    return AddVersionHeaders(versioned, rec, h);
  }
  if (auto b = ctx.engine.BucketOf(ctx.route.bucket); b.ok()) return AddVersionHeaders(**b, rec, h);
  AddVersionHeaders(object::BucketRecord{}, rec, h);
}

OpResult GetObject(OpContext& ctx, bool head) {
  auto version = RequestVersion(ctx.route);
  if (auto* e = std::get_if<Error>(&version)) return *e;
  for (const char* param : {"response-content-type", "response-content-encoding",
                            "response-content-disposition", "response-content-language",
                            "response-cache-control", "response-expires"}) {
    const std::string* v = ctx.route.Query(param);
    if (v && !http::IsSafeHeaderValue(*v)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string(param) + " contains characters not allowed in a header");
    }
  }
  const object::Version& wanted = std::get<object::Version>(version);
  auto reader = ctx.engine.OpenVersion(ctx.route.bucket, ctx.route.key, wanted);
  if (!reader.ok()) {
    if (reader.status().code() == Code::kNotFound) {
      return FromStatus(reader.status(), ErrorCode::kNoSuchKey);
    }
    return FromStatus(reader.status());
  }
  const object::ObjectRecord& rec = (*reader)->record();
  if (rec.delete_marker) return DeleteMarkerError(rec, wanted.has_value());
  if (auto e = RefuseSseHeaders(ctx.http)) return *e;
  if (!head && Archived(ctx, rec)) return MakeError(ErrorCode::kInvalidObjectState);
  // The key before anything about the object is told (as AWS: a missing or
  // wrong SSE-C key gets its error, not the object's headers).
  std::string customer_key_md5;
  auto data_key = SseForRead(ctx, rec.sse, /*copy_source=*/false, &customer_key_md5);
  if (auto* e = std::get_if<Error>(&data_key)) return *e;
  if (rec.sse.on()) {
    Status unlocked = (*reader)->Unlock(std::get<std::string>(data_key));
    if (!unlocked.ok()) return FromStatus(unlocked);
  }
  http::Headers h = BaseHeaders(ctx);
  AddVersionHeadersOf(ctx, rec, &h);
  h.emplace_back("ETag", "\"" + rec.etag + "\"");
  h.emplace_back("Last-Modified", FormatHttpDate(rec.mtime_ns));
  if (int status = EvaluateConditions(ctx.http, rec)) {
    if (status == 412) return MakeError(ErrorCode::kPreconditionFailed);
    ctx.out.Start(304, h, 0, false).IgnoreError();
    return std::nullopt;
  }
  h.emplace_back("Accept-Ranges", "bytes");
  AddObjectHeaders(ctx, rec, &h);
  AddSseHeaders(rec.sse, customer_key_md5, &h);
  if (!rec.storage_class.empty()) h.emplace_back("x-amz-storage-class", rec.storage_class);
  if (!rec.tags.empty()) h.emplace_back("x-amz-tagging-count", std::to_string(rec.tags.size()));
  AddRestoreHeader(rec, &h);
  if (!ctx.route.Query("versionId")) {  // the current version: a rule may expire it
    if (auto exp = ExpirationHeader(ctx, ctx.route.key, rec)) h.emplace_back("x-amz-expiration", *exp);
  }

  uint64_t first = 0, length = rec.size_bytes;
  int status = 200;
  const std::string* part_number = ctx.route.Query("partNumber");
  const std::string* range = ctx.http.Header("range");
  if (part_number && range) {
    return MakeError(ErrorCode::kInvalidRequest, "Cannot specify both Range header and partNumber");
  }
  if (part_number) {
    // The byte range of one part (a non-multipart object has one part).
    long n = std::atol(part_number->c_str());
    size_t count = rec.parts.empty() ? 1 : rec.parts.size();
    if (n < 1 || n > 10000 || part_number->find_first_not_of("0123456789") != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "Part number must be an integer between 1 and 10000, inclusive");
    }
    if (static_cast<size_t>(n) > count) return MakeError(ErrorCode::kInvalidPartNumber);
    if (!rec.parts.empty()) {
      for (long i = 0; i < n - 1; ++i) first += rec.parts[i].size_bytes;
      length = rec.parts[n - 1].size_bytes;
      status = 206;
      h.emplace_back("x-amz-mp-parts-count", std::to_string(count));
      h.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                          std::to_string(first + length - 1) + "/" +
                                          std::to_string(rec.size_bytes));
    }
  } else if (const std::string* mode = ctx.http.Header("x-amz-checksum-mode");
             mode && *mode == "ENABLED" && !range) {
    AddChecksumHeaders(rec, &h);
  }
  if (range) {
    auto parsed = ParseRange(*range, rec.size_bytes);
    if (auto* e = std::get_if<Error>(&parsed)) {
      Error err = *e;
      err.headers.emplace_back("Content-Range", "bytes */" + std::to_string(rec.size_bytes));
      return err;
    }
    if (auto r = std::get<std::optional<ByteRange>>(parsed)) {
      first = r->first;
      length = r->length;
      status = 206;
      h.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                          std::to_string(first + length - 1) + "/" +
                                          std::to_string(rec.size_bytes));
    }
  }
  // Zero-copy where it can be: a body above 64 KiB (smaller ones go out with
  // their head in one send) on a plain TCP connection, of a version whose
  // bytes lie as stored in its data files (plain store, not encrypted) goes
  // page cache -> socket with sendfile, a span at a time (see kFirstSpanBytes,
  // then kSpanBytes), each span's block checksums checked first
  // (ObjectReader::CheckedSpan; past the first span on the bulk threads,
  // object/check_ahead.h). The first span is checked before answering, as the
  // first piece below.
  if (!head && length > kSmallBufferBytes && ctx.out.can_send_file()) {
    object::PieceBuffer scratch = object::PieceBuffer::Take();
    auto span = (*reader)->CheckedSpan(first, length <= kSpanBytes ? length : kFirstSpanBytes,
                                       scratch.data(), object::ReadAhead::kPieceBytes);
    if (!span.ok()) return FromStatus(span.status());
    if (span->fd >= 0) {
      scratch = object::PieceBuffer();  // back to the pool: the check-ahead takes its own
      return SendSpans(ctx, **reader, status, h, first, length, *span);
    }
  }
  // The first piece is read before answering, so a read failure (too few
  // good shards, disk error) is still an S3 error (500/503), not a cut stream.
  // Small bodies get a buffer of their size; larger ones a pooled 1 MiB one
  // (object::PieceBuffer: no page faults, no memset per request).
  std::unique_ptr<char[]> small;
  object::PieceBuffer pooled;
  char* buf = nullptr;
  size_t first_n = 0;
  if (!head && length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kGetBufferBytes, length));
    if (want <= kSmallBufferBytes) {
      small = std::make_unique_for_overwrite<char[]>(want);
      buf = small.get();
    } else {
      pooled = object::PieceBuffer::Take();
      buf = pooled.data();
    }
    auto n = (*reader)->ReadAt(first, buf, want);
    if (!n.ok()) return FromStatus(n.status());
    if (*n == 0) return MakeError(ErrorCode::kInternalError, "object data ended early");
    first_n = *n;
  }
  if (!ctx.out.Start(status, h, length, !head).ok() || head || length == 0) return std::nullopt;
  if (!ctx.out.Write(std::string_view(buf, first_n)).ok()) return std::nullopt;
  // The rest is read (and, encrypted, decrypted) pieces ahead in steps on
  // the bulk threads while this one sends (object/read_ahead.h).
  const uint64_t offset = first + first_n, end = first + length;
  if (offset >= end) return std::nullopt;
  object::ReadAhead ahead(**reader, offset, end);
  // The reply has started; more than a piece to go is bulk bytes (as above).
  if (end - offset > object::ReadAhead::kPieceBytes) TurnThisThreadBulk();
  while (true) {
    auto piece = ahead.Next();
    if (!piece.ok()) {
      // Headers are gone already: the only honest signal left is to cut the
      // connection, so the client sees a short body and retries.
      ctx.out.CloseAfterResponse();
      return std::nullopt;
    }
    if (piece->empty()) return std::nullopt;
    if (!ctx.out.Write(*piece).ok()) return std::nullopt;
  }
}

}  // namespace strata::s3
