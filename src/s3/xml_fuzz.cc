// libFuzzer target: the XML request bodies S3 accepts (s3/xml.h). input[0]
// picks the mode:
//   0-3: ParseDeleteRequest / ParseCompleteMultipartUpload / ParseTagging /
//        ParseCreateBucketConfiguration over input[1..] (any bytes);
//   7-10: ParseVersioningConfiguration / ParseObjectLockConfiguration /
//        ParseRetention / ParseLegalHold (any bytes);
//   11: ParseEncryptionConfiguration (any bytes);
//   12: ParseRestoreRequest (any bytes);
//   4-6: round trip: input[1..] split at NUL bytes into strings, written as
//        a Delete / Tagging / CompleteMultipartUpload document with XmlWriter
//        (how clients escape; RenderTagging is GetObjectTagging's own) and parsed back: every string S3 allows in a
//        key, tag or ETag (UTF-8, no NUL) must come back unchanged.
// Seeds: tests/fuzz/s3_xml/ (bodies as boto3 sends them).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/encoding.h"
#include "fuzz_util.h"
#include "s3/xml.h"

using namespace strata::s3;

namespace {

std::vector<std::string> SplitAtNul(std::string_view in) {
  std::vector<std::string> out;
  while (!in.empty()) {
    size_t z = in.find('\0');
    out.emplace_back(in.substr(0, z));
    in.remove_prefix(z == std::string_view::npos ? in.size() : z + 1);
  }
  return out;
}

void RoundTripDelete(const std::vector<std::string>& keys) {
  if (keys.empty() || keys.size() > 1000) return;
  for (const std::string& k : keys) {
    if (k.empty() || !strata::IsValidUtf8(k)) return;
  }
  XmlWriter w;
  w.Open("Delete");
  w.Element("Quiet", "true");
  for (const std::string& k : keys) {
    w.Open("Object");
    w.Element("Key", k);
    w.Close("Object");
  }
  w.Close("Delete");
  auto parsed = ParseDeleteRequest(w.Finish());
  FUZZ_CHECK(parsed.has_value());
  FUZZ_CHECK(parsed->quiet);
  FUZZ_CHECK(parsed->keys == keys);
}

void RoundTripTagging(const std::vector<std::string>& strings) {
  std::vector<std::pair<std::string, std::string>> tags;
  for (size_t i = 0; i + 1 < strings.size(); i += 2) {
    if (!strata::IsValidUtf8(strings[i]) || !strata::IsValidUtf8(strings[i + 1])) return;
    tags.emplace_back(strings[i], strings[i + 1]);
  }
  auto parsed = ParseTagging(RenderTagging(tags));
  FUZZ_CHECK(parsed.has_value());
  FUZZ_CHECK(*parsed == tags);
}

void RoundTripComplete(const std::vector<std::string>& etags) {
  XmlWriter w;
  w.Open("CompleteMultipartUpload");
  for (size_t i = 0; i < etags.size(); ++i) {
    if (!strata::IsValidUtf8(etags[i])) return;
    w.Open("Part");
    w.Element("PartNumber", std::to_string(i + 1));
    w.Element("ETag", "\"" + etags[i] + "\"");
    w.Close("Part");
  }
  w.Close("CompleteMultipartUpload");
  auto parsed = ParseCompleteMultipartUpload(w.Finish());
  FUZZ_CHECK(parsed.has_value());
  FUZZ_CHECK(parsed->size() == etags.size());
  for (size_t i = 0; i < etags.size(); ++i) {
    FUZZ_CHECK((*parsed)[i].part_number == static_cast<long>(i + 1));
    FUZZ_CHECK((*parsed)[i].etag == etags[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 13) {
    case 0:
      if (auto d = ParseDeleteRequest(in)) {
        FUZZ_CHECK(!d->keys.empty() && d->keys.size() <= 1000);
        FUZZ_CHECK(d->version_ids.size() == d->keys.size());
      }
      break;
    case 1:
      if (auto parts = ParseCompleteMultipartUpload(in)) {
        for (const auto& p : *parts) FUZZ_CHECK(p.part_number >= 0 && p.part_number <= 999999999);
      }
      break;
    case 2:
      (void)ParseTagging(in);
      break;
    case 3:
      (void)ParseCreateBucketConfiguration(in);
      break;
    case 4:
      RoundTripDelete(SplitAtNul(in));
      break;
    case 5:
      RoundTripTagging(SplitAtNul(in));
      break;
    case 6:
      RoundTripComplete(SplitAtNul(in));
      break;
    case 7:
      (void)ParseVersioningConfiguration(in);
      break;
    case 8:
      if (auto c = ParseObjectLockConfiguration(in)) {
        FUZZ_CHECK(c->has_rule || !c->has_default_retention);
      }
      break;
    case 9:
      (void)ParseRetention(in);
      break;
    case 10:
      (void)ParseLegalHold(in);
      break;
    case 11:
      if (auto c = ParseEncryptionConfiguration(in)) {
        FUZZ_CHECK(c->has_default || (c->algorithm.empty() && !c->kms_key_id));
      }
      break;
    case 12:
      (void)ParseRestoreRequest(in);
      break;
  }
  return 0;
}
