// The XML an S3 endpoint answers strata's remote client with (pugixml):
// errors, InitiateMultipartUploadResult, ListBucketResult (V2) and
// ListMultipartUploadsResult, plus the CompleteMultipartUpload request body.
// Parsers take hostile input (tests/fuzz: remote_replies): anything that is
// not the document S3 sends is nullopt, never a crash.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote/s3_client.h"

namespace strata::remote {

struct S3Error {
  std::string code;     // "NoSuchKey"
  std::string message;
};
std::optional<S3Error> ParseError(std::string_view xml);
// The UploadId of an InitiateMultipartUploadResult.
std::optional<std::string> ParseInitiate(std::string_view xml);
std::optional<ListPage> ParseListV2(std::string_view xml);
struct UploadsPage {
  std::vector<ListedUpload> uploads;
  bool truncated = false;
  std::string next_key_marker, next_upload_id_marker;
};
std::optional<UploadsPage> ParseListUploads(std::string_view xml);
// <CompleteMultipartUpload> naming parts 1..n with their ETags.
std::string CompleteBody(const std::vector<std::string>& etags);

}  // namespace strata::remote
