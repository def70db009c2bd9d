// libFuzzer target: the request headers S3 operations parse themselves:
// Range, If-*, x-amz-copy-source(-if-*, -range) (request_headers.h) and the
// write-side headers of object_write.h (x-amz-tagging, Content-MD5,
// x-amz-checksum-*, x-amz-decoded-content-length, x-amz-storage-class,
// metadata). Input text: <control byte><name>:<value>\n... (names
// lowercased as http::MakeRequest does). The object the conditions and ranges
// are checked against has a size and mtime picked by the control byte.
// Seeds: tests/fuzz/s3_headers/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_util.h"
#include "s3/ops/object_write.h"
#include "s3/ops/request_headers.h"
#include "s3/router.h"

using namespace strata::s3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  strata::http::Request req;
  req.headers = strata::fuzz::HeaderLines(in);
  if (control & 0x40) req.content_length = control;
  req.chunked = control & 0x20;

  static constexpr uint64_t kSizes[] = {0, 1, 2, 100, 1 << 20, uint64_t{5} << 30,
                                        uint64_t{1} << 62, ~uint64_t{0}};
  const uint64_t object_size = kSizes[control & 7];
  strata::object::ObjectRecord rec;
  rec.size_bytes = object_size;
  rec.etag = "9bb58f26192e4ba00f01e2e7b136bbd8";
  // 2013-05-24T00:00:00Z, +-2^k seconds.
  rec.mtime_ns = (1369353600ll + ((control & 8) ? -1 : 1) * (1ll << (((control >> 4) & 7) * 4))) *
                 1000000000ll;

  if (const std::string* range = req.Header("range")) {
    auto r = ParseRange(*range, object_size);
    if (auto* br = std::get_if<std::optional<ByteRange>>(&r); br && *br) {
      FUZZ_CHECK((*br)->length >= 1 && (*br)->first < object_size);
      FUZZ_CHECK((*br)->length <= object_size - (*br)->first);
    }
  }
  int status = EvaluateConditions(req, rec);
  FUZZ_CHECK(status == 0 || status == 304 || status == 412);
  if (req.Header("x-amz-copy-source")) {
    auto src = ParseCopySource(req);
    if (auto* s = std::get_if<CopySource>(&src)) {
      FUZZ_CHECK(IsValidBucketName(s->bucket));
      FUZZ_CHECK(!s->key.empty() && s->key.size() <= 1024);
    }
  }
  (void)CheckCopyConditions(req, rec);
  if (const std::string* range = req.Header("x-amz-copy-source-range")) {
    auto r = ParseCopySourceRange(*range, object_size);
    if (auto* br = std::get_if<ByteRange>(&r)) {
      FUZZ_CHECK(br->length >= 1 && br->first < object_size);
      FUZZ_CHECK(br->length <= object_size - br->first);
    }
  }
  if (const std::string* if_match = req.Header("if-match")) (void)EtagMatches(*if_match, rec.etag);

  if (auto md5 = ContentMd5(req); auto* v = std::get_if<std::optional<std::string>>(&md5)) {
    FUZZ_CHECK(!*v || (*v)->size() == 16);
  }
  (void)HeadersFromRequest(req);
  if (const std::string* tagging = req.Header("x-amz-tagging")) {
    auto tags = ParseTaggingHeader(*tagging);
    if (auto* t = std::get_if<strata::object::Tags>(&tags)) {
      FUZZ_CHECK(t->size() <= 10 && !ValidateTags(*t));
    }
  }
  (void)StorageClassFromRequest(req);
  (void)ChecksumCheck::FromRequest(req);
  (void)DeclaredSize(req);
  if (WriteCheck check = WriteConditions(req)) {
    (void)check(rec);
    (void)check(std::nullopt);
  }
  return 0;
}
