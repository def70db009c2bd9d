// Server-side encryption on the S3 path (docs/encryption.md): what a request
// asks for (x-amz-server-side-encryption*, the SSE-C customer-key headers and
// their copy-source twins), validated with AWS's errors; the bucket default
// applied; data keys from the key service; the response headers.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "object/record.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

// The SSE-C key of a request: 32 bytes and the base64 MD5 to echo.
struct CustomerKey {
  std::string key;
  std::string key_md5;
};

// What a new version (or upload) is encrypted with.
struct SseWrite {
  object::Encryption sse;  // mode kNone: not encrypted
  std::string data_key;
  std::string customer_key_md5;  // SSE-C: to echo
};

// The encryption headers of a write (PutObject, CopyObject's destination,
// CreateMultipartUpload, POST), or the bucket's default when it names none;
// a fresh data key wrapped by the key service for SSE-S3 and SSE-KMS.
// `fallback` (kS3 or kNone) applies when neither names any.
// `req` holds the headers (ctx.http; POST: its form fields as headers).
std::variant<SseWrite, Error> SseForWrite(OpContext& ctx, const http::Request& req,
                                          const object::BucketRecord& bucket,
                                          object::SseMode fallback = object::SseMode::kNone);

// The data key of a multipart upload's parts (UploadPart, UploadPartCopy):
// the SSE-C key the request repeats, or the upload's wrapped key unwrapped.
std::variant<SseWrite, Error> SseForPart(OpContext& ctx, const object::UploadRecord& upload);

// The data key that opens `rec` (GET, HEAD, copy sources with `copy_source`):
// "" for an unencrypted version; the errors AWS gives for missing, wrong or
// needless SSE-C keys and for KMS keys that are disabled or gone. `key_md5`
// receives the SSE-C key's MD5 to echo.
std::variant<std::string, Error> SseForRead(OpContext& ctx, const object::Encryption& sse,
                                            bool copy_source, std::string* key_md5 = nullptr);

// x-amz-server-side-encryption, -aws-kms-key-id, -bucket-key-enabled, and
// the SSE-C algorithm / key-MD5 (with `customer_key_md5`).
void AddSseHeaders(const object::Encryption& sse, const std::string& customer_key_md5,
                   http::Headers* headers);

// x-amz-server-side-encryption headers (not SSE-C) on a request that must not
// carry them (GET, HEAD, UploadPart): InvalidArgument.
std::optional<Error> RefuseSseHeaders(const http::Request& req);

// Whether the operation reads or applies encryption headers; every other
// operation refuses them (s3/service.cc) rather than ignoring them.
bool HandlesEncryptionHeaders(Op op);

}  // namespace strata::s3
