// libFuzzer target: the metadata key parsers (meta/keys.h) over raw keys as
// a scan of the KvStore returns them: ParseObjectVersionKey, ParseUploadKey,
// ParsePartNumber. input[0] % 3 picks the parser; whatever parses must be
// rebuilt byte for byte by the matching key builder.
// Seeds: tests/fuzz/meta_keys/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "meta/keys.h"

using namespace strata::meta;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string raw(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string bucket, key, id;
  uint64_t stamp = 0;
  switch (data[0] % 3) {
    case 0:
      if (ParseObjectVersionKey(raw, &bucket, &key, &stamp)) {
        FUZZ_CHECK(ObjectVersionKey(bucket, key, stamp) == raw);
        FUZZ_CHECK(raw.starts_with(ObjectKeyPrefix(bucket, key)));
      }
      break;
    case 1:
      if (ParseUploadKey(raw, &bucket, &key, &id)) {
        FUZZ_CHECK(UploadKey(bucket, key, id) == raw);
      }
      break;
    case 2: {
      // A part key is PartPrefix(upload id) + 4 bytes of part number.
      uint32_t n = ParsePartNumber(raw);
      if (raw.size() >= 5) {
        FUZZ_CHECK(PartKey(raw.substr(1, raw.size() - 5), n).substr(1) == raw.substr(1));
      }
      break;
    }
  }
  return 0;
}
