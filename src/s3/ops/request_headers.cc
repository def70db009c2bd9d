// See request_headers.h.
#include "s3/ops/request_headers.h"

#include <cstdio>

#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/ops/object_write.h"
#include "s3/router.h"

namespace strata::s3 {

std::variant<std::optional<ByteRange>, Error> ParseRange(const std::string& header, uint64_t size) {
  std::optional<ByteRange> none;
  if (!header.starts_with("bytes=")) return none;
  std::string spec = header.substr(6);
  if (spec.find(',') != std::string::npos) return none;  // multiple ranges: whole object
  size_t dash = spec.find('-');
  if (dash == std::string::npos) return none;
  std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
  auto parse = [](const std::string& s, uint64_t* v) {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *v = std::stoull(s);
    return true;
  };
  uint64_t first = 0, last = 0;
  if (a.empty()) {  // suffix range: last n bytes
    uint64_t n;
    if (!parse(b, &n)) return none;
    if (n == 0 || size == 0) return MakeError(ErrorCode::kInvalidRange);
    n = std::min(n, size);
    return std::optional<ByteRange>(ByteRange{size - n, n});
  }
  if (!parse(a, &first)) return none;
  if (b.empty()) {
    last = UINT64_MAX;
  } else if (!parse(b, &last) || last < first) {
    return none;
  }
  if (first >= size) return MakeError(ErrorCode::kInvalidRange);
  last = std::min(last, size - 1);
  return std::optional<ByteRange>(ByteRange{first, last - first + 1});
}

int EvaluateConditions(const http::Request& req, const object::ObjectRecord& rec) {
  int64_t mtime_s = rec.mtime_ns / 1000000000;
  const std::string* if_match = req.Header("if-match");
  const std::string* if_none_match = req.Header("if-none-match");
  if (if_match && !EtagMatches(*if_match, rec.etag)) return 412;
  if (!if_match) {
    if (const std::string* h = req.Header("if-unmodified-since")) {
      auto t = ParseHttpDate(*h);
      if (t && mtime_s > *t) return 412;
    }
  }
  if (if_none_match && EtagMatches(*if_none_match, rec.etag)) return 304;
  if (!if_none_match) {
    if (const std::string* h = req.Header("if-modified-since")) {
      auto t = ParseHttpDate(*h);
      if (t && mtime_s <= *t) return 304;
    }
  }
  return 0;
}

std::variant<CopySource, Error> ParseCopySource(const http::Request& req) {
  std::string raw = *req.Header("x-amz-copy-source");
  size_t q = raw.find('?');
  std::string query = q == std::string::npos ? "" : raw.substr(q + 1);
  raw = raw.substr(0, q);
  std::optional<object::VersionSelector> version;
  if (!query.empty()) {
    if (!query.starts_with("versionId=")) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid copy source query");
    }
    auto id = UriDecode(query.substr(10));
    version = id ? object::ParseVersionId(*id) : std::nullopt;
    if (!version) return MakeError(ErrorCode::kInvalidArgument, "Invalid version id specified");
  }
  auto decoded = UriDecode(raw);
  Error bad = MakeError(ErrorCode::kInvalidArgument, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey");
  if (!decoded) return bad;
  std::string_view path = *decoded;
  if (path.starts_with("/")) path.remove_prefix(1);
  size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == path.size()) return bad;
  CopySource src{std::string(path.substr(0, slash)), std::string(path.substr(slash + 1)), version};
  if (!IsValidBucketName(src.bucket)) return MakeError(ErrorCode::kInvalidBucketName);
  if (src.key.size() > 1024) return MakeError(ErrorCode::kKeyTooLongError);
  return src;
}

std::optional<Error> CheckCopyConditions(const http::Request& req, const object::ObjectRecord& src) {
  int64_t mtime_s = src.mtime_ns / 1000000000;
  const std::string* if_match = req.Header("x-amz-copy-source-if-match");
  const std::string* if_none = req.Header("x-amz-copy-source-if-none-match");
  bool fail = false;
  if (if_match) {
    fail |= !EtagMatches(*if_match, src.etag);
  } else if (const std::string* h = req.Header("x-amz-copy-source-if-unmodified-since")) {
    auto t = ParseHttpDate(*h);
    fail |= t && mtime_s > *t;
  }
  if (if_none) {
    fail |= EtagMatches(*if_none, src.etag);
  } else if (const std::string* h = req.Header("x-amz-copy-source-if-modified-since")) {
    auto t = ParseHttpDate(*h);
    fail |= t && mtime_s <= *t;
  }
  if (fail) return MakeError(ErrorCode::kPreconditionFailed);
  return std::nullopt;
}

std::variant<ByteRange, Error> ParseCopySourceRange(const std::string& header, uint64_t size) {
  unsigned long long a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(header.c_str(), "bytes=%llu-%llu%c", &a, &b, &tail) != 2 || a > b) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "The x-amz-copy-source-range value must be of the form bytes=first-last "
                     "where first and last are the zero-based offsets of the first and last "
                     "bytes to copy");
  }
  if (b >= size) return MakeError(ErrorCode::kInvalidRange);
  return ByteRange{a, b - a + 1};
}

}  // namespace strata::s3
