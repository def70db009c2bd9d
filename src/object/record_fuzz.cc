// libFuzzer target: the metadata record decoders (object/record.h): object
// versions (every format), multipart uploads and parts, buckets, data
// trailers, tag, lock and ACL records, version ids. input[0] % 9 picks the decoder. docs/formats/metadata-records.md
// says decoders reject unknown formats and trailing bytes: whatever decodes
// must fail with one more byte appended, and must re-encode to bytes that
// decode to the same record (encoding is a fixed point after one round).
// Seeds: tests/fuzz/object_record/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "object/record.h"

using namespace strata::object;

namespace {

// Decode, Encode: the pair of one record type.
template <class DecodeFn, class EncodeFn>
void Check(std::string_view in, DecodeFn decode, EncodeFn encode) {
  auto r = decode(in);
  if (!r) return;
  FUZZ_CHECK(!decode(std::string(in) + '\0').has_value());
  std::string once = encode(*r);
  auto again = decode(once);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(encode(*again) == once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 10) {
    case 0: {
      Check(in, DecodeObjectRecord, EncodeObjectRecord);
      if (auto r = DecodeObjectRecord(in)) {
        FUZZ_CHECK(!r->is_inline || r->inline_data.size() == r->size_bytes);
        (void)r->DataFiles();
      }
      break;
    }
    case 1: Check(in, DecodeUploadRecord, EncodeUploadRecord); break;
    case 2: Check(in, DecodePartRecord, EncodePartRecord); break;
    case 3: Check(in, DecodeBucketRecord, EncodeBucketRecord); break;
    case 4:
      if (auto t = DecodeTrailer(in)) {
        FUZZ_CHECK(EncodeTrailer(t->first, t->second) == in);
      }
      break;
    case 5: Check(in, DecodeTagsRecord, EncodeTagsRecord); break;
    case 6: Check(in, DecodeLockRecord, EncodeLockRecord); break;
    case 7:
      // A version id parses only if it is the one its stamp prints as.
      if (auto v = ParseVersionId(in)) FUZZ_CHECK(v->null ? in == "null" : VersionIdOf(v->stamp) == in);
      break;
    case 8: Check(in, DecodeAclRecord, EncodeAclRecord); break;
    case 9:
      // A listed record (the latest-version index's) never carries inline
      // data, and is never one an object could be read from.
      Check(in, DecodeListedRecord, [](const ObjectRecord& r) { return EncodeListedRecord(r); });
      if (auto r = DecodeListedRecord(in)) {
        FUZZ_CHECK(r->inline_data.empty());
        FUZZ_CHECK(!r->is_inline || r->size_bytes == 0 || !DecodeObjectRecord(in).has_value());
      }
      break;
  }
  return 0;
}
