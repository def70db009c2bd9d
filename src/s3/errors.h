// The one place that knows S3 error codes, their HTTP statuses and default
// messages, and how they render as the XML body SDKs parse.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/sigv4.h"
#include "common/status.h"

namespace strata::s3 {

// X(enum, "Code", http status, "default message")
#define STRATA_S3_ERRORS(X)                                                                     \
  X(kAccessDenied, "AccessDenied", 403, "Access Denied")                                        \
  X(kAccessControlListNotSupported, "AccessControlListNotSupported", 400,                       \
    "The bucket does not allow ACLs")                                                           \
  X(kAccessForbidden, "AccessForbidden", 403, "CORSResponse: This CORS request is not allowed.") \
  X(kBadRequest, "BadRequest", 400, "Bad Request")                                              \
  X(kHeadersNotSigned, "AccessDenied", 403,                                                     \
    "There were headers present in the request which were not signed")                         \
  X(kAuthorizationHeaderMalformed, "AuthorizationHeaderMalformed", 400,                         \
    "The authorization header is malformed.")                                                   \
  X(kAuthorizationQueryParametersError, "AuthorizationQueryParametersError", 400,               \
    "Error parsing the X-Amz-Credential parameter.")                                            \
  X(kBadRequestTagCount, "BadRequest", 400, "Object tags cannot be greater than 10")             \
  X(kBadDigest, "BadDigest", 400, "The Content-MD5 you specified did not match what we received.") \
  X(kBucketAlreadyOwnedByYou, "BucketAlreadyOwnedByYou", 409,                                   \
    "Your previous request to create the named bucket succeeded and you already own it.")      \
  X(kBucketNotEmpty, "BucketNotEmpty", 409, "The bucket you tried to delete is not empty.")     \
  X(kEntityTooSmall, "EntityTooSmall", 400,                                                     \
    "Your proposed upload is smaller than the minimum allowed object size.")                    \
  X(kEntityTooLarge, "EntityTooLarge", 400,                                                     \
    "Your proposed upload exceeds the maximum allowed object size.")                            \
  X(kIllegalLocationConstraintException, "IllegalLocationConstraintException", 400,              \
    "The location constraint is incompatible for the region specific endpoint this request "   \
    "was sent to.")                                                                             \
  X(kIncompleteBody, "IncompleteBody", 400,                                                     \
    "You did not provide the number of bytes specified by the Content-Length HTTP header.")     \
  X(kInternalError, "InternalError", 500,                                                       \
    "We encountered an internal error. Please try again.")                                      \
  X(kInvalidAccessKeyId, "InvalidAccessKeyId", 403,                                             \
    "The AWS access key Id you provided does not exist in our records.")                        \
  X(kInvalidArgument, "InvalidArgument", 400, "Invalid Argument")                               \
  X(kInvalidBucketAclWithObjectOwnership, "InvalidBucketAclWithObjectOwnership", 400,           \
    "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")            \
  X(kInvalidBucketName, "InvalidBucketName", 400, "The specified bucket is not valid.")         \
  X(kOwnershipControlsNotFoundError, "OwnershipControlsNotFoundError", 404,                     \
    "The bucket ownership controls were not found")                                             \
  X(kUnresolvableGrantByEmailAddress, "UnresolvableGrantByEmailAddress", 400,                   \
    "The e-mail address you provided does not match any account on record.")                    \
  X(kInvalidTargetBucketForLogging, "InvalidTargetBucketForLogging", 400,                       \
    "The target bucket for logging does not exist, is not owned by you, or does not have the "  \
    "appropriate settings.")                                                                    \
  X(kInvalidBucketState, "InvalidBucketState", 409,                                             \
    "The request is not valid with the current state of the bucket.")                            \
  X(kInvalidDigest, "InvalidDigest", 400, "The Content-MD5 you specified is not valid.")        \
  X(kInvalidPart, "InvalidPart", 400,                                                           \
    "One or more of the specified parts could not be found. The part may not have been "        \
    "uploaded, or the specified entity tag may not match the part's entity tag.")               \
  X(kInvalidPartNumber, "InvalidPartNumber", 416, "The requested partnumber is not satisfiable") \
  X(kInvalidPartOrder, "InvalidPartOrder", 400,                                                 \
    "The list of parts was not in ascending order. Parts must be ordered by part number.")      \
  X(kInvalidRange, "InvalidRange", 416, "The requested range is not satisfiable")               \
  X(kInvalidRequest, "InvalidRequest", 400, "Invalid Request")                                  \
  X(kInvalidStorageClass, "InvalidStorageClass", 400,                                           \
    "The storage class you specified is not valid.")                                            \
  X(kInsufficientStorage, "InsufficientStorage", 507, "Insufficient storage to complete the request.") \
  X(kInvalidTag, "InvalidTag", 400, "The tag provided was not a valid tag.")                   \
  X(kKeyTooLongError, "KeyTooLongError", 400, "Your key is too long.")                          \
  X(kMalformedTrailerError, "MalformedTrailerError", 400,                                       \
    "The request contained trailing data that was not well-formed or did not conform to our "   \
    "published schema.")                                                                        \
  X(kMalformedXML, "MalformedXML", 400,                                                         \
    "The XML you provided was not well-formed or did not validate against our published schema.") \
  X(kMethodNotAllowed, "MethodNotAllowed", 405,                                                 \
    "The specified method is not allowed against this resource.")                               \
  X(kMalformedPOSTRequest, "MalformedPOSTRequest", 400,                                         \
    "The body of your POST request is not well-formed multipart/form-data.")                    \
  X(kMissingSecurityHeader, "MissingSecurityHeader", 400,                                       \
    "Your request was missing a required header.")                                              \
  X(kMissingContentLength, "MissingContentLength", 411,                                         \
    "You must provide the Content-Length HTTP header.")                                         \
  X(kMalformedACLError, "MalformedACLError", 400,                                               \
    "The XML you provided was not well-formed or did not validate against our published schema") \
  X(kMalformedPolicy, "MalformedPolicy", 400, "Policies must be valid JSON and the first byte must be '{'") \
  X(kNoSuchBucket, "NoSuchBucket", 404, "The specified bucket does not exist.")                 \
  X(kNoSuchBucketPolicy, "NoSuchBucketPolicy", 404, "The bucket policy does not exist")         \
  X(kNoSuchPublicAccessBlockConfiguration, "NoSuchPublicAccessBlockConfiguration", 404,         \
    "The public access block configuration was not found")                                      \
  X(kNoSuchCORSConfiguration, "NoSuchCORSConfiguration", 404,                                   \
    "The CORS configuration does not exist")                                                    \
  X(kNoSuchKey, "NoSuchKey", 404, "The specified key does not exist.")                          \
  X(kNoSuchTagSet, "NoSuchTagSet", 404, "The TagSet does not exist")                              \
  X(kNoSuchUpload, "NoSuchUpload", 404,                                                         \
    "The specified multipart upload does not exist. The upload ID might be invalid, or the "    \
    "multipart upload might have been aborted or completed.")                                   \
  X(kNoSuchObjectLockConfiguration, "NoSuchObjectLockConfiguration", 404,                       \
    "The specified object does not have a ObjectLock configuration")                             \
  X(kObjectLockConfigurationNotFoundError, "ObjectLockConfigurationNotFoundError", 404,         \
    "Object Lock configuration does not exist for this bucket")                                  \
  X(kNoSuchVersion, "NoSuchVersion", 404,                                                       \
    "The version ID specified in the request does not match an existing version.")              \
  X(kNotImplemented, "NotImplemented", 501,                                                     \
    "A header or query you provided implies functionality that is not implemented.")            \
  X(kPolicyTooLarge, "PolicyTooLarge", 400,                                                     \
    "Policy exceeds the maximum allowed document size.")                                        \
  X(kPreconditionFailed, "PreconditionFailed", 412,                                             \
    "At least one of the preconditions you specified did not hold.")                            \
  X(kRequestHeaderSectionTooLarge, "RequestHeaderSectionTooLarge", 400,                         \
    "Your request header section exceeds the maximum allowed size.")                            \
  X(kRequestTimeout, "RequestTimeout", 400,                                                     \
    "Your socket connection to the server was not read from or written to within the timeout period.") \
  X(kRequestTimeTooSkewed, "RequestTimeTooSkewed", 403,                                         \
    "The difference between the request time and the server's time is too large.")             \
  X(kServiceUnavailable, "ServiceUnavailable", 503, "Please reduce your request rate.")         \
  X(kSlowDown, "SlowDown", 503, "Please reduce your request rate.")                             \
  X(kSignatureDoesNotMatch, "SignatureDoesNotMatch", 403,                                       \
    "The request signature we calculated does not match the signature you provided. Check "     \
    "your key and signing method.")                                                             \
  X(kUnexpectedContent, "UnexpectedContent", 400, "This request does not support content.")     \
  X(kXAmzContentSHA256Mismatch, "XAmzContentSHA256Mismatch", 400,                               \
    "The provided 'x-amz-content-sha256' header does not match what was computed.")            \
  X(kInvalidPolicyDocument, "InvalidPolicyDocument", 400,                                       \
    "The content of the form does not meet the conditions specified in the policy document.")  \
  X(kMaxPostPreDataLengthExceeded, "MaxPostPreDataLengthExceededError", 400,                    \
    "Your POST request fields preceding the upload file were too large.")                      \
  X(kInvalidEncryptionAlgorithmError, "InvalidEncryptionAlgorithmError", 400,                   \
    "The Encryption request you specified is not valid. Supported value: AES256.")             \
  X(kKmsNotFound, "KMS.NotFoundException", 400, "Invalid keyId")                               \
  X(kKmsDisabled, "KMS.DisabledException", 400, "The KMS key is disabled.")                    \
  X(kServerSideEncryptionConfigurationNotFoundError,                                            \
    "ServerSideEncryptionConfigurationNotFoundError", 404,                                      \
    "The server side encryption configuration was not found")                                  \
  X(kNoSuchLifecycleConfiguration, "NoSuchLifecycleConfiguration", 404,                         \
    "The lifecycle configuration does not exist")                                               \
  X(kInvalidObjectState, "InvalidObjectState", 403,                                             \
    "The operation is not valid for the object's storage class")                               \
  X(kRestoreAlreadyInProgress, "RestoreAlreadyInProgress", 409,                                 \
    "Object restore is already in progress")

enum class ErrorCode {
#define STRATA_S3_ENUM(e, code, status, msg) e,
  STRATA_S3_ERRORS(STRATA_S3_ENUM)
#undef STRATA_S3_ENUM
};

struct Error {
  ErrorCode code;
  std::string message;  // empty: the default message
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
  // Extra elements of the XML body, after RequestId (e.g. HeadersNotSigned).
  std::vector<std::pair<std::string, std::string>> details;

  std::string_view CodeString() const;
  int HttpStatus() const;
  std::string_view Message() const;
};

inline Error MakeError(ErrorCode code, std::string message = {}) {
  return Error{code, std::move(message), {}, {}};
}

// Maps an engine/storage Status onto an S3 error. A NotFound tagged with what
// is missing (Detail::kBucket, kKey, kUpload, kVersion) becomes NoSuchBucket,
// NoSuchKey, NoSuchUpload or NoSuchVersion; `not_found` is what an untagged
// NotFound means in the caller's context.
Error FromStatus(const Status& status, ErrorCode not_found = ErrorCode::kNoSuchKey);

// Maps a request-body stream error (see common/byte_source.h).
Error FromBodyStatus(const Status& status);

// Maps an authentication failure (typed by its kind) onto an S3 error.
Error FromAuthError(const auth::AuthError& e);

// <Error><Code/><Message/><Resource/><RequestId/>[details]</Error>
std::string RenderErrorXml(const Error& error, std::string_view resource,
                           std::string_view request_id);

}  // namespace strata::s3
