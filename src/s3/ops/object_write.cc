#include "s3/ops/object_write.h"

#include <algorithm>
#include <memory>

#include "common/encoding.h"
#include "common/hash.h"
#include "tier/classes.h"

namespace strata::s3 {

namespace {
constexpr size_t kUserMetadataMaxBytes = 2048;  // AWS limit on x-amz-meta-* (names + values)
constexpr size_t kBodyBufferBytes = 1 << 20;

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A header name as it may be shown in an error message: printable ASCII only.
std::string ShownName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 128)) out.push_back(c > 0x20 && c < 0x7f ? c : '?');
  return out;
}
}  // namespace

std::variant<std::optional<std::string>, Error> ContentMd5(const http::Request& req) {
  const std::string* header = req.Header("content-md5");
  if (!header) return std::optional<std::string>();
  auto md5 = Base64Decode(*header);
  if (!md5 || md5->size() != 16) return MakeError(ErrorCode::kInvalidDigest);
  return md5;
}

std::variant<object::ObjectHeaders, Error> HeadersFromRequest(const http::Request& req) {
  object::ObjectHeaders h;
  size_t meta_bytes = 0;
  for (const auto& [name, value] : req.headers) {
    const bool stored = name == "content-type" || name == "content-encoding" ||
                        name == "content-disposition" || name == "content-language" ||
                        name == "cache-control" || name == "expires" ||
                        name.starts_with("x-amz-meta-");
    // These come back as response headers on every GET: a control character
    // (CR/LF above all, possible through POST form fields) would let a writer
    // inject headers into other clients' responses.
    if (stored && !http::IsSafeHeader(name, value)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "Header or metadata " + std::string(http::IsSafeHeader(name, "") ? "value" : "name") +
                           " contains characters that are not allowed: " + ShownName(name));
    }
    if (name == "content-type") h.content_type = value;
    else if (name == "content-encoding") h.content_encoding = value;
    else if (name == "content-disposition") h.content_disposition = value;
    else if (name == "content-language") h.content_language = value;
    else if (name == "cache-control") h.cache_control = value;
    else if (name == "expires") h.expires = value;
    else if (name.starts_with("x-amz-meta-")) {
      std::string meta_name = name.substr(11);
      // Non-ASCII values arrive RFC 2047-encoded (or as raw UTF-8) and are
      // stored decoded; GET/HEAD encode them again (object_get.cc).
      std::string decoded = Rfc2047Decode(value);
      meta_bytes += meta_name.size() + decoded.size();
      h.user_metadata.emplace_back(std::move(meta_name), std::move(decoded));
    }
  }
  // aws-chunked is a transfer detail of SigV4 streaming, not a stored encoding.
  if (h.content_encoding == "aws-chunked") h.content_encoding.clear();
  if (h.content_encoding.starts_with("aws-chunked,")) h.content_encoding.erase(0, 12);
  if (meta_bytes > kUserMetadataMaxBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Your metadata headers exceed the maximum allowed metadata size (2 KB)");
  }
  return h;
}

std::variant<object::Tags, Error> ParseTaggingHeader(std::string_view header) {
  object::Tags tags;
  while (!header.empty()) {
    size_t amp = header.find('&');
    std::string_view item = header.substr(0, amp);
    header = amp == std::string_view::npos ? std::string_view() : header.substr(amp + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    auto k = UriDecode(item.substr(0, eq), true);
    auto v = UriDecode(eq == std::string_view::npos ? "" : item.substr(eq + 1), true);
    const char* kHeaderRule =
        "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query "
        "parameters without tag name duplicates.";
    if (!k || !v || k->empty()) return MakeError(ErrorCode::kInvalidArgument, kHeaderRule);
    for (const auto& [existing, _] : tags) {
      if (existing == *k) return MakeError(ErrorCode::kInvalidArgument, kHeaderRule);
    }
    tags.emplace_back(std::move(*k), std::move(*v));
  }
  if (auto e = ValidateTags(tags)) return *e;
  return tags;
}

std::optional<Error> ValidateTags(const object::Tags& tags, size_t max_tags) {
  if (tags.size() > max_tags) {
    return MakeError(ErrorCode::kBadRequestTagCount,
                     max_tags == 10 ? "Object tags cannot be greater than 10"
                                    : "Bucket tag count cannot be greater than " +
                                          std::to_string(max_tags));
  }
  for (size_t i = 0; i < tags.size(); ++i) {
    const auto& [k, v] = tags[i];
    if (k.empty() || Utf8Length(k) > 128 || !IsValidUtf8(k)) {
      return MakeError(ErrorCode::kInvalidTag, "The TagKey you have provided is invalid");
    }
    if (Utf8Length(v) > 256 || !IsValidUtf8(v)) {
      return MakeError(ErrorCode::kInvalidTag, "The TagValue you have provided is invalid");
    }
    for (size_t j = 0; j < i; ++j) {
      if (tags[j].first == k) {
        return MakeError(ErrorCode::kInvalidTag, "Cannot provide multiple Tags with the same key");
      }
    }
  }
  return std::nullopt;
}

std::variant<std::string, Error> StorageClassFromRequest(const http::Request& req) {
  const std::string* sc = req.Header("x-amz-storage-class");
  if (!sc || *sc == "STANDARD") return std::string();
  if (tier::IsStorageClass(*sc)) return *sc;
  return MakeError(ErrorCode::kInvalidStorageClass);
}

std::string PoolOfClass(const ServiceConfig& config, const std::string& storage_class) {
  if (!config.classes) return "";
  return config.classes->PoolOf(storage_class.empty() ? "STANDARD" : storage_class);
}

std::variant<ChecksumCheck, Error> ChecksumCheck::FromRequest(
    const http::Request& req, std::optional<ChecksumAlgorithm> default_algorithm) {
  ChecksumCheck c;
  int declared = 0;
  for (const auto& [name, value] : req.headers) {
    if (!name.starts_with("x-amz-checksum-")) continue;
    auto alg = ParseChecksumAlgorithm(name.substr(15));
    if (!alg) continue;  // -algorithm, -type, -mode
    ++declared;
    c.algorithm_ = alg;
    c.declared_base64_ = value;
    auto raw = Base64Decode(value);
    if (!raw || raw->size() != ChecksumSize(*alg)) {
      return MakeError(ErrorCode::kInvalidRequest, "Value for " + name + " header is invalid.");
    }
  }
  if (declared > 1) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "Expecting a single x-amz-checksum- header. Multiple checksum Types are not "
                     "allowed.");
  }
  if (const std::string* trailer = req.Header("x-amz-trailer")) {
    std::string name = *trailer;
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name.starts_with("x-amz-checksum-")) {
      auto alg = ParseChecksumAlgorithm(name.substr(15));
      if (!alg || declared) {
        return MakeError(ErrorCode::kInvalidRequest, "Invalid x-amz-trailer: " + *trailer);
      }
      c.algorithm_ = alg;
      c.from_trailer_ = true;
    }
  }
  // x-amz-sdk-checksum-algorithm names the algorithm of a checksum sent in
  // a header or trailer; alone or disagreeing with it, AWS refuses it.
  if (const std::string* sdk = req.Header("x-amz-sdk-checksum-algorithm")) {
    auto named = ParseChecksumAlgorithm(*sdk);
    if (!named || (c.algorithm_ && *named != *c.algorithm_)) {
      return MakeError(ErrorCode::kInvalidRequest,
                       "Value for x-amz-sdk-checksum-algorithm header is invalid.");
    }
    if (!c.algorithm_) {
      return MakeError(ErrorCode::kInvalidRequest,
                       "x-amz-sdk-checksum-algorithm specified, but no corresponding "
                       "x-amz-checksum-* or x-amz-trailer headers were found.");
    }
  }
  if (!c.algorithm_) c.algorithm_ = default_algorithm;
  if (c.algorithm_) c.hasher_ = Checksummer::Create(*c.algorithm_);
  return c;
}

std::optional<Error> ChecksumCheck::Finish(const OpContext& ctx) {
  if (!algorithm_) return std::nullopt;
  raw_ = hasher_->Final();
  value_base64_ = Base64Encode(raw_);
  std::string declared = declared_base64_;
  if (from_trailer_) {
    std::string header(ChecksumHeader(*algorithm_));
    bool found = false;
    if (ctx.trailers) {
      for (const auto& [name, value] : *ctx.trailers) {
        std::string lower = name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower == header) {
          declared = value;
          found = true;
        }
      }
    }
    if (!found) {
      return MakeError(ErrorCode::kMalformedTrailerError,
                       "The trailer " + header + " announced in x-amz-trailer was not sent.");
    }
    auto raw = Base64Decode(declared);
    if (!raw || raw->size() != ChecksumSize(*algorithm_)) {
      return MakeError(ErrorCode::kInvalidRequest, "Value for " + header + " trailer is invalid.");
    }
  }
  if (!declared.empty() && declared != value_base64_) {
    return MakeError(ErrorCode::kBadDigest, "The " + std::string(ChecksumName(*algorithm_)) +
                                                " you specified did not match the calculated "
                                                "checksum.");
  }
  return std::nullopt;
}

std::variant<std::optional<uint64_t>, Error> DeclaredSize(const http::Request& req) {
  // The wire framing comes first: a body with neither Content-Length nor
  // chunked framing has no knowable length (AWS: 411), whatever
  // x-amz-decoded-content-length says.
  if (!req.content_length && !req.chunked) return MakeError(ErrorCode::kMissingContentLength);
  if (const std::string* decoded = req.Header("x-amz-decoded-content-length")) {
    if (decoded->empty() || decoded->size() > 19 ||
        decoded->find_first_not_of("0123456789") != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid x-amz-decoded-content-length");
    }
    return std::optional<uint64_t>(std::stoull(*decoded));
  }
  if (req.content_length) return std::optional<uint64_t>(*req.content_length);
  return std::optional<uint64_t>();  // chunked: known at its end
}

std::optional<Error> StreamBodyInto(OpContext& ctx, object::ObjectWriter& writer,
                                    ChecksumCheck& checksum, uint64_t max_bytes) {
  auto declared = DeclaredSize(ctx.http);
  if (auto* e = std::get_if<Error>(&declared)) return *e;
  std::optional<uint64_t> size = std::get<std::optional<uint64_t>>(declared);
  if (size && *size > max_bytes) return MakeError(ErrorCode::kEntityTooLarge);
  // A buffer the size of the body, up to 1 MiB, left uninitialised: zeroing
  // 1 MiB for every 4 KiB PUT was 15 % of the server's CPU on that workload.
  // The writer's (Buffer / AppendBuffer): the body is read straight into
  // memory the MD5 helper then hashes, without a copy.
  const size_t buf_bytes = size ? static_cast<size_t>(std::clamp<uint64_t>(*size, 1, kBodyBufferBytes))
                                : kBodyBufferBytes;
  while (true) {
    char* buf = writer.Buffer(buf_bytes);
    auto n = ctx.body.Read(buf, buf_bytes);
    if (!n.ok()) return FromBodyStatus(n.status());
    if (*n == 0) break;
    // More than the declared size (an aws-chunked body longer than its
    // x-amz-decoded-content-length): the answer at the end would be the same,
    // and reading on through a buffer sized for the declared length would
    // cost one read per few bytes.
    if (size && writer.size_bytes() + *n > *size) return MakeError(ErrorCode::kIncompleteBody);
    if (writer.size_bytes() + *n > max_bytes) return MakeError(ErrorCode::kEntityTooLarge);
    checksum.Update(buf, *n);
    Status st = writer.AppendBuffer(*n);
    if (!st.ok()) return FromStatus(st);
  }
  if (size && writer.size_bytes() != *size) return MakeError(ErrorCode::kIncompleteBody);
  return checksum.Finish(ctx);
}

WriteCheck WriteConditions(const http::Request& req) {
  const std::string* if_match = req.Header("if-match");
  const std::string* if_none_match = req.Header("if-none-match");
  if (!if_match && !if_none_match) return nullptr;
  std::string match = if_match ? *if_match : "";
  std::string none_match = if_none_match ? *if_none_match : "";
  auto strip = [](std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
  };
  return [has_match = if_match != nullptr, has_none = if_none_match != nullptr,
          match = strip(match), none_match = strip(none_match)](const std::optional<object::ObjectRecord>& current) -> Status {
    if (has_none) {
      if (none_match == "*" && current) return PreconditionFailed("the key exists");
      if (none_match != "*" && current && current->etag == none_match) {
        return PreconditionFailed("the etag matches");
      }
    }
    if (has_match) {
      if (!current) return NotFound(Detail::kKey, "the key does not exist");
      if (match != "*" && current->etag != match) return PreconditionFailed("the etag differs");
    }
    return Status::OK();
  };
}

Error WriteConditionError(const Status& status) {
  if (status.code() == Code::kPreconditionFailed && status.detail() == Detail::kNone) {
    return MakeError(ErrorCode::kPreconditionFailed);
  }
  return FromStatus(status, ErrorCode::kNoSuchKey);
}

void AddChecksumHeaders(const object::ObjectRecord& rec, http::Headers* headers) {
  if (rec.checksum_algorithm.empty() || rec.checksum_value.empty()) return;
  auto alg = ParseChecksumAlgorithm(rec.checksum_algorithm);
  if (!alg) return;
  headers->emplace_back(std::string(ChecksumHeader(*alg)), rec.checksum_value);
  if (!rec.checksum_type.empty()) headers->emplace_back("x-amz-checksum-type", rec.checksum_type);
}

// Encryption headers on an operation that does not apply them (a DELETE, a
// tagging call, ...): refused rather than ignored, so that no client believes
// them obeyed. The operations that take them: s3/ops/sse.h.
std::optional<Error> RefuseEncryptionHeaders(const http::Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (name.starts_with("x-amz-server-side-encryption") ||
        name.starts_with("x-amz-copy-source-server-side-encryption")) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "The header " + name + " is not supported for this operation.");
    }
  }
  return std::nullopt;
}

std::optional<Error> CheckBodyIntegrity(OpContext& ctx, const std::string& body, bool required) {
  auto md5 = ContentMd5(ctx.http);
  if (auto* e = std::get_if<Error>(&md5)) return *e;
  auto checksum = ChecksumCheck::FromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&checksum)) return *e;
  ChecksumCheck& check = std::get<ChecksumCheck>(checksum);
  const auto& want = std::get<std::optional<std::string>>(md5);
  if (required && !want && !check.algorithm()) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "Missing required header for this request: Content-MD5");
  }
  if (want) {
    StreamHash h(StreamHash::Kind::kMd5);
    h.Update(body.data(), body.size());
    if (h.Final() != *want) return MakeError(ErrorCode::kBadDigest);
  }
  check.Update(body.data(), body.size());
  return check.Finish(ctx);
}

}  // namespace strata::s3
