#include "s3/errors.h"

#include "s3/xml.h"

namespace strata::s3 {

namespace {
struct Info {
  std::string_view code;
  int status;
  std::string_view message;
};
constexpr Info kInfo[] = {
#define STRATA_S3_INFO(e, code, status, msg) {code, status, msg},
    STRATA_S3_ERRORS(STRATA_S3_INFO)
#undef STRATA_S3_INFO
};
const Info& Lookup(ErrorCode code) { return kInfo[static_cast<int>(code)]; }
}  // namespace

std::string_view Error::CodeString() const { return Lookup(code).code; }
int Error::HttpStatus() const { return Lookup(code).status; }
std::string_view Error::Message() const {
  return message.empty() ? Lookup(code).message : std::string_view(message);
}

namespace {
// What a NotFound is about, by its Detail; `fallback` for an untagged one.
ErrorCode NotFoundCode(Detail what, ErrorCode fallback) {
  switch (what) {
    case Detail::kBucket: return ErrorCode::kNoSuchBucket;
    case Detail::kKey: return ErrorCode::kNoSuchKey;
    case Detail::kUpload: return ErrorCode::kNoSuchUpload;
    case Detail::kVersion: return ErrorCode::kNoSuchVersion;
    case Detail::kLockConfig: return ErrorCode::kObjectLockConfigurationNotFoundError;
    case Detail::kObjectLock: return ErrorCode::kNoSuchObjectLockConfiguration;
    case Detail::kKmsKey: return ErrorCode::kKmsNotFound;
    case Detail::kNone:
    case Detail::kTrailer:
    case Detail::kLocked:
    case Detail::kBucketState:
    case Detail::kKmsDisabled:
    case Detail::kKmsCiphertext:
    case Detail::kSseKey: break;
  }
  return fallback;
}
}  // namespace

Error FromStatus(const Status& status, ErrorCode not_found) {
  switch (status.code()) {
    case Code::kNotFound:
      if (status.detail() == Detail::kKmsKey) return MakeError(ErrorCode::kKmsNotFound, status.message());
      return MakeError(NotFoundCode(status.detail(), not_found));
    case Code::kResourceExhausted: return MakeError(ErrorCode::kInsufficientStorage);
    case Code::kUnavailable: return MakeError(ErrorCode::kServiceUnavailable);
    case Code::kPreconditionFailed:
      if (status.detail() == Detail::kBucketState) {
        return MakeError(ErrorCode::kInvalidBucketState, status.message());
      }
      if (status.detail() == Detail::kKmsDisabled) {
        return MakeError(ErrorCode::kKmsDisabled, status.message());
      }
      if (status.detail() == Detail::kSseKey) {
        return MakeError(ErrorCode::kInvalidRequest,
                         "The object was stored using a form of Server Side Encryption. The "
                         "correct parameters must be provided to retrieve the object.");
      }
      return MakeError(ErrorCode::kPreconditionFailed);
    case Code::kPermissionDenied:
      if (status.detail() == Detail::kLocked) {
        return MakeError(ErrorCode::kAccessDenied,
                         "Access Denied because object protected by object lock.");
      }
      if (status.detail() == Detail::kSseKey) return MakeError(ErrorCode::kAccessDenied);
      if (status.detail() == Detail::kKmsCiphertext) {
        return MakeError(ErrorCode::kAccessDenied,
                         "The object's data key does not open under its KMS key and encryption "
                         "context.");
      }
      return MakeError(ErrorCode::kInternalError);  // the server's own files (EACCES)
    case Code::kInvalidArgument: return MakeError(ErrorCode::kInvalidArgument, status.message());
    case Code::kCorruption:
      return MakeError(ErrorCode::kInternalError,
                       "The object's stored data failed its checksum and is not served; the "
                       "server log names the damaged file.");
    default: return MakeError(ErrorCode::kInternalError);
  }
}

Error FromBodyStatus(const Status& status) {
  switch (status.code()) {
    case Code::kOutOfRange: return MakeError(ErrorCode::kIncompleteBody);
    case Code::kAborted: return MakeError(ErrorCode::kIncompleteBody);
    case Code::kDeadlineExceeded: return MakeError(ErrorCode::kRequestTimeout);
    case Code::kPermissionDenied: return MakeError(ErrorCode::kSignatureDoesNotMatch);
    case Code::kCorruption: return MakeError(ErrorCode::kXAmzContentSHA256Mismatch);
    case Code::kInvalidArgument:
      // Broken aws-chunked framing: AWS answers IncompleteBody, or
      // MalformedTrailerError when the trailer section is what is broken.
      if (status.detail() == Detail::kTrailer) return MakeError(ErrorCode::kMalformedTrailerError);
      return MakeError(ErrorCode::kIncompleteBody, "Malformed request body: " + status.message());
    default: return FromStatus(status);
  }
}

Error FromAuthError(const auth::AuthError& e) {
  using K = auth::AuthErrorKind;
  switch (e.kind) {
    case K::kMissing: return MakeError(ErrorCode::kAccessDenied, e.message);
    case K::kMalformedHeader: return MakeError(ErrorCode::kAuthorizationHeaderMalformed, e.message);
    case K::kMalformedQuery:
      return MakeError(ErrorCode::kAuthorizationQueryParametersError, e.message);
    case K::kUnsupportedAlgorithm:
      return MakeError(ErrorCode::kInvalidRequest,
                       "The authorization mechanism you have provided is not supported. Please "
                       "use AWS4-HMAC-SHA256.");
    case K::kInvalidAccessKeyId: return MakeError(ErrorCode::kInvalidAccessKeyId);
    case K::kSignatureDoesNotMatch: return MakeError(ErrorCode::kSignatureDoesNotMatch);
    case K::kRequestTimeTooSkewed: return MakeError(ErrorCode::kRequestTimeTooSkewed);
    case K::kExpired: return MakeError(ErrorCode::kAccessDenied, "Request has expired");
    case K::kNotYetValid: return MakeError(ErrorCode::kAccessDenied, "Request is not valid yet");
    case K::kMissingDate:
      return MakeError(ErrorCode::kAccessDenied,
                       "AWS authentication requires a valid Date or x-amz-date header");
    case K::kInvalidContentSha256:
      return MakeError(ErrorCode::kInvalidArgument, "x-amz-content-sha256 must be a SHA-256 hex "
                                                    "digest or a supported payload mode");
    case K::kHeadersNotSigned: {
      Error error = MakeError(ErrorCode::kHeadersNotSigned);
      std::string names;
      for (const std::string& name : e.headers_not_signed) {
        names.append(names.empty() ? "" : ", ").append(name);
      }
      error.details.emplace_back("HeadersNotSigned", std::move(names));
      return error;
    }
  }
  return MakeError(ErrorCode::kAccessDenied);
}

std::string RenderErrorXml(const Error& error, std::string_view resource,
                           std::string_view request_id) {
  XmlWriter w;
  w.Open("Error");
  w.Element("Code", error.CodeString());
  w.Element("Message", error.Message());
  w.Element("Resource", resource);
  w.Element("RequestId", request_id);
  for (const auto& [name, value] : error.details) w.Element(name, value);
  w.Close("Error");
  return w.Finish();
}

}  // namespace strata::s3
