// Parsers of the request headers that select bytes or gate a read/copy:
// Range, the If-* conditions of GET/HEAD, x-amz-copy-source with its
// x-amz-copy-source-if-* conditions and x-amz-copy-source-range. Pure
// functions over the request (moved out of object_get.cc / copy_ops.cc so
// they can be unit-tested and fuzzed: request_headers_fuzz.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "http/request.h"
#include "object/record.h"
#include "s3/errors.h"

namespace strata::s3 {

struct ByteRange {
  uint64_t first;
  uint64_t length;
};

// Parses "bytes=a-b", "bytes=a-", "bytes=-n" against an object of `size`.
// nullopt+ok: no usable range (ignored, like AWS does for syntax it rejects).
// Error: unsatisfiable (InvalidRange).
std::variant<std::optional<ByteRange>, Error> ParseRange(const std::string& header, uint64_t size);

// AWS precedence: If-Match, If-Unmodified-Since (ignored when If-Match is
// present), If-None-Match, If-Modified-Since (ignored when If-None-Match is).
// Returns the status to answer with (412/304) or 0 to proceed.
int EvaluateConditions(const http::Request& req, const object::ObjectRecord& rec);

struct CopySource {
  std::string bucket;
  std::string key;
  std::optional<object::VersionSelector> version;  // ?versionId=; nullopt: the latest
};

// "x-amz-copy-source: /bucket/key[?versionId=ID]" (URL-encoded, leading '/'
// optional). The request must carry the header. A malformed version id is
// InvalidArgument.
std::variant<CopySource, Error> ParseCopySource(const http::Request& req);

// x-amz-copy-source-if-* in AWS's precedence (a true If-Match overrides a
// false If-Unmodified-Since; a true If-None-Match overrides If-Modified-Since).
std::optional<Error> CheckCopyConditions(const http::Request& req, const object::ObjectRecord& src);

// x-amz-copy-source-range "bytes=first-last" against a source of `size`:
// InvalidArgument if malformed, InvalidRange if last is past the end.
std::variant<ByteRange, Error> ParseCopySourceRange(const std::string& header, uint64_t size);

}  // namespace strata::s3
