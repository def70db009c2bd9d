// Browser-based uploads (POST Object, SigV4 flavour), the pure parts: a
// streaming multipart/form-data reader and the POST policy (parse + evaluate).
// No engine, no sockets: the reader pulls from a ByteSource, the policy is
// evaluated over the form fields. s3/ops/post_object.cc puts them together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/byte_source.h"
#include "s3/errors.h"

namespace strata::s3 {

// ---- multipart/form-data ---------------------------------------------------

// True if the media type of a Content-Type value is multipart/form-data.
bool IsMultipartFormData(std::string_view content_type);
// The boundary parameter of a multipart/form-data Content-Type (unquoted);
// nullopt if the type differs or the boundary is missing or invalid (RFC 2046:
// 1-70 characters).
std::optional<std::string> MultipartBoundary(std::string_view content_type);

struct FormField {
  std::string name;  // lowercased: form field names are case-insensitive
  std::string value;
};

struct FormLimits {
  size_t max_field_bytes = 64 * 1024;   // one field's value (and its part headers)
  size_t max_total_bytes = 1024 * 1024;  // everything before the file content
};

// Reads a multipart/form-data body: the fields up to the part named "file",
// then that part's content as a stream. The content is never held whole: the
// closing delimiter is searched across read boundaries, keeping back only the
// bytes that could start one. Whatever follows the file part is ignored (AWS).
class FormDataReader {
 public:
  FormDataReader(ByteSource* source, std::string_view boundary, FormLimits limits = {});

  // Reads the fields before the file part and the file part's headers.
  // Errors: MalformedPOSTRequest (bad framing, missing name, body ends early),
  // MaxPostPreDataLengthExceededError (a field or the fields over the limits),
  // InvalidArgument (no file part), or the body stream's own error.
  std::optional<Error> ReadFields();
  const std::vector<FormField>& fields() const { return fields_; }
  // The file part's filename parameter as sent ("" if none) and Content-Type.
  const std::string& file_name() const { return file_name_; }
  const std::string& file_content_type() const { return file_content_type_; }

  // The next piece of the file content; an empty view once the file part is
  // complete. The view stays valid until the next call.
  std::variant<std::string_view, Error> NextFileChunk();

  // After the file part: reads and drops what follows (parts after the file
  // are ignored), up to max_bytes. True if the body was read to its end.
  bool SkipRest(size_t max_bytes);

 private:
  // Reads more of the body into buf_; false at the end of the body.
  std::optional<Error> Fill(bool* got);
  // 1: buf_[at] starts a delimiter (followed by "--", CRLF or padding);
  // 0: it does not; -1: more bytes are needed to tell.
  int DelimiterAt(size_t at) const;
  // Offset (from pos_) of the next delimiter, reading as needed; the bytes
  // before it may be at most `limit`.
  std::variant<size_t, Error> FindDelimiter(size_t limit);
  // Consumes a delimiter at pos_ and the rest of its line; *close is set for
  // the final "--boundary--".
  std::optional<Error> ConsumeDelimiter(bool* close);
  // Reads a line ending in CRLF (the CRLF consumed, not returned).
  std::variant<std::string, Error> ReadLine(size_t limit);
  Error PreDataTooLarge() const;
  size_t PreDataLeft() const;

  ByteSource* source_;
  std::string delimiter_;  // "\r\n--" + boundary
  FormLimits limits_;
  std::unique_ptr<char[]> scratch_;  // one read's worth
  std::string buf_;
  size_t pos_ = 0;        // consumed up to here
  size_t scan_ = 0;       // file phase: no delimiter starts before this offset
  uint64_t dropped_ = 0;  // bytes removed from the front of buf_
  bool eof_ = false;
  bool in_file_ = false;
  bool file_done_ = false;
  bool body_closed_ = false;  // the close delimiter was seen
  std::vector<FormField> fields_;
  std::string file_name_;
  std::string file_content_type_;
};

// The text after the last '/' or '\' of a client-supplied file name.
std::string BaseFileName(std::string_view file_name);
// Replaces every "${filename}" in `value`.
std::string ExpandFilename(std::string_view value, std::string_view file_name);

// ---- POST policy -------------------------------------------------------------

struct PolicyCondition {
  enum class Kind { kEq, kStartsWith, kContentLengthRange };
  Kind kind = Kind::kEq;
  std::string field;  // lowercased, without the '$'
  std::string value;
  int64_t min = 0, max = 0;  // content-length-range
  // As AWS quotes it in errors: ["eq", "$key", "value"].
  std::string ToString() const;
};

struct PostPolicy {
  int64_t expiration_ms = 0;  // unix milliseconds
  std::vector<PolicyCondition> conditions;
  // The intersection of the content-length-range conditions, if any.
  std::optional<std::pair<int64_t, int64_t>> length_range;
};

// Parses the decoded policy document. InvalidPolicyDocument if it is not a
// JSON object with expiration and conditions, or a condition is malformed.
std::variant<PostPolicy, Error> ParsePostPolicy(std::string_view json);

// Fields that need no condition: x-amz-signature, file, policy, x-ignore-*.
bool IsExemptFromPolicy(std::string_view lower_name);

// Checks the expiration, every condition but content-length-range against
// the fields (already ${filename}-expanded; repeated fields match as their
// values joined by ','; "$bucket" is the request's bucket), and that every
// field (but the exempt ones) is named by some condition. AccessDenied
// "Invalid according to Policy: ..." otherwise.
std::optional<Error> EvaluatePostPolicy(const PostPolicy& policy,
                                        const std::vector<FormField>& fields,
                                        std::string_view bucket, int64_t now_ms);

// content-length-range against the size of the file: EntityTooSmall /
// EntityTooLarge.
std::optional<Error> CheckPostContentLength(const PostPolicy& policy, uint64_t size);

}  // namespace strata::s3
