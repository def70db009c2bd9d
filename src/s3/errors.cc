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

Error FromStatus(const Status& status, ErrorCode not_found) {
  switch (status.code()) {
    case Code::kNotFound: return MakeError(not_found);
    case Code::kResourceExhausted: return MakeError(ErrorCode::kInsufficientStorage);
    case Code::kUnavailable: return MakeError(ErrorCode::kServiceUnavailable);
    case Code::kPreconditionFailed: return MakeError(ErrorCode::kPreconditionFailed);
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
      if (status.message().find("trailer") != std::string::npos) {
        return MakeError(ErrorCode::kMalformedTrailerError);
      }
      return MakeError(ErrorCode::kIncompleteBody, "Malformed request body: " + status.message());
    default: return FromStatus(status);
  }
}

std::string RenderErrorXml(const Error& error, std::string_view resource,
                           std::string_view request_id) {
  XmlWriter w;
  w.Open("Error");
  w.Element("Code", error.CodeString());
  w.Element("Message", error.Message());
  w.Element("Resource", resource);
  w.Element("RequestId", request_id);
  w.Close("Error");
  return w.Finish();
}

}  // namespace strata::s3
