// The streaming aws-chunked body decoder: STREAMING-AWS4-HMAC-SHA256-PAYLOAD,
// its -TRAILER variant (both verify every chunk signature against the chain
// seeded by the request signature) and STREAMING-UNSIGNED-PAYLOAD-TRAILER.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "auth/sigv4.h"
#include "common/byte_source.h"

namespace strata::auth {

// Decodes an aws-chunked body from `raw`, verifying each chunk signature
// (signed modes) and, at the end, the trailer signature. Reading returns the
// decoded payload; no byte of a signed chunk is returned before that chunk's
// signature has been checked. Errors follow byte_source.h (kPermissionDenied
// for a bad chunk signature, kInvalidArgument for malformed framing,
// kOutOfRange when the decoded length differs from x-amz-decoded-content-length).
// Trailing headers (e.g. x-amz-checksum-crc32) are collected in trailers().
class AwsChunkedSource : public ByteSource {
 public:
  AwsChunkedSource(ByteSource* raw, const AuthContext& ctx, uint64_t decoded_length);
  Result<size_t> Read(char* buf, size_t n) override;
  const std::vector<std::pair<std::string, std::string>>& trailers() const { return trailers_; }
  // Bytes of buffer the decoder holds (read-ahead plus the chunk being
  // verified): it grows with the bytes that arrived, not with the sizes that
  // chunk headers declare. For tests and memory accounting.
  size_t buffer_capacity() const;

 private:
  struct State;
  ByteSource* raw_;
  AuthContext ctx_;
  uint64_t decoded_length_;
  uint64_t produced_ = 0;
  std::vector<std::pair<std::string, std::string>> trailers_;
  std::shared_ptr<State> state_;
};

}  // namespace strata::auth
