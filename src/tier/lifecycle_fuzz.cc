// libFuzzer target: PutBucketLifecycleConfiguration bodies (tier/lifecycle.h).
// The input is the body, any bytes, parsed with the AWS transition classes
// known. What parses must hold AWS's limits (1 to 1000 rules, IDs unique,
// non-empty, at most 255 characters) and round-trip: the rendered document
// (GetBucketLifecycleConfiguration's, and what the bucket record keeps)
// parses back to an equal Configuration and renders to the same bytes. Each
// rule must match a version made from its own filter, and Evaluate must
// answer for it with the deciding rule's id.
// Seeds: tests/fuzz/lifecycle/ (bodies as boto3 and the aws cli send them).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_util.h"
#include "tier/lifecycle.h"

using namespace strata::tier;

namespace {

bool AwsClass(std::string_view c) {
  return c == "STANDARD_IA" || c == "ONEZONE_IA" || c == "INTELLIGENT_TIERING" ||
         c == "GLACIER_IR" || c == "GLACIER" || c == "DEEP_ARCHIVE";
}

// A version the rule's filter selects: its prefix as the key, its tags, a
// size inside its bounds (none exists when the bounds leave no room).
bool FromFilter(const Filter& f, VersionFacts* v) {
  uint64_t size = f.size_greater_than ? *f.size_greater_than + 1 : 0;
  if (f.size_greater_than && size == 0) return false;  // > UINT64_MAX: nothing
  if (f.size_less_than && size >= *f.size_less_than) return false;
  v->key = f.prefix;
  v->tags = f.tags;
  v->size_bytes = size;
  return true;
}

void CheckRules(const Configuration& c) {
  FUZZ_CHECK(!c.rules.empty() && c.rules.size() <= 1000);
  std::set<std::string> ids;
  for (const Rule& r : c.rules) {
    FUZZ_CHECK(!r.id.empty() && std::count_if(r.id.begin(), r.id.end(), [](unsigned char ch) {
                                  return (ch & 0xC0) != 0x80;  // characters, as AWS counts
                                }) <= 255);
    FUZZ_CHECK(ids.insert(r.id).second);
    FUZZ_CHECK(!(r.expiration && r.expired_object_delete_marker));
  }
  for (const Rule& r : c.rules) {
    VersionFacts v;
    if (!FromFilter(r.filter, &v)) continue;
    FUZZ_CHECK(Matches(r, v));
    // At the end of time every action of the rules is due: an enabled
    // expiration of an unversioned current version is a deletion.
    v.is_latest = true;
    Action a = Evaluate(c, v, std::numeric_limits<int64_t>::max(), 2'000'000'000);
    FUZZ_CHECK(a.kind == ActionKind::kNone || ids.count(a.rule_id) == 1);
    FUZZ_CHECK((a.kind == ActionKind::kTransition) == !a.storage_class.empty());
    if (r.enabled && r.expiration) FUZZ_CHECK(a.kind == ActionKind::kDelete);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseLifecycle(in, AwsClass);
  const Configuration* c = std::get_if<Configuration>(&parsed);
  if (!c) {
    FUZZ_CHECK(!std::get<ParseError>(parsed).message.empty());
    return 0;
  }
  CheckRules(*c);
  const std::string doc = RenderLifecycle(*c);
  auto again = ParseLifecycle(doc, AwsClass);
  const Configuration* back = std::get_if<Configuration>(&again);
  if (!back)
    std::fprintf(stderr, "refused: %s\n%s\n", std::get<ParseError>(again).message.c_str(),
                 doc.c_str());
  FUZZ_CHECK(back != nullptr);
  FUZZ_CHECK(*back == *c);
  FUZZ_CHECK(RenderLifecycle(*back) == doc);
  return 0;
}
