// ByteSource: a pull stream of bytes (a request body, a decoded aws-chunked
// body, a file). Read returns 0 only at the end of the stream.
//
// Error codes a body source uses (s3/errors maps them to S3 codes):
//   kAborted            the peer closed or reset the connection mid-body
//   kDeadlineExceeded   the peer stopped sending (read timeout)
//   kOutOfRange         fewer/more bytes than declared (IncompleteBody)
//   kInvalidArgument    malformed framing (aws-chunked, chunked)
//   kPermissionDenied   a chunk signature did not verify (SignatureDoesNotMatch)
//   kCorruption         the payload hash did not match what was signed/declared
#pragma once

#include <cstddef>

#include "common/status.h"

namespace strata {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
};

}  // namespace strata
