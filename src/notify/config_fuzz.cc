// libFuzzer target: PutBucketNotificationConfiguration bodies (notify/config.h).
// The input is the body, any bytes, parsed with the targets "hook" and
// "other" declared. What parses must hold the checks (known targets, unique
// ids, no two rules sharing an event for keys both filters take) and
// round-trip: the rendered document (GetBucketNotificationConfiguration's,
// and what the bucket record keeps) parses back to an equal Configuration and
// renders to the same bytes. A key made of a rule's prefix and suffix, for
// an event its patterns cover, must be matched by that rule alone.
// Seeds: tests/fuzz/notify_config/ (bodies as boto3 sends them).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_util.h"
#include "notify/config.h"

using namespace strata::notify;

namespace {

bool Known(std::string_view id) { return id == "hook" || id == "other"; }

// A concrete event that `pattern` covers ("" for types strata never emits).
std::string EventOf(const std::string& pattern) {
  for (const char* e :
       {"s3:ObjectCreated:Put", "s3:ObjectRemoved:Delete", "s3:ObjectRestore:Post",
        "s3:LifecycleExpiration:Delete", "s3:ObjectTagging:Put", "s3:LifecycleTransition",
        "s3:ObjectAcl:Put"}) {
    if (EventCovers(pattern, e)) return e;
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseConfiguration(in, Known);
  const Configuration* c = std::get_if<Configuration>(&parsed);
  if (!c) {
    FUZZ_CHECK(!std::get<ParseError>(parsed).message.empty());
    return 0;
  }
  std::set<std::string> ids;
  for (const Rule& r : c->rules) {
    FUZZ_CHECK(Known(r.target) && !r.events.empty() && !r.id.empty());
    FUZZ_CHECK(ids.insert(r.id).second);
    for (const std::string& e : r.events) {
      const std::string event = EventOf(e);
      if (event.empty()) continue;
      // The shortest key both filters take (the suffix may overlap the prefix).
      const std::string key = r.prefix + r.suffix;
      auto m = Matching(*c, event, key);
      FUZZ_CHECK(m.size() == 1 && m[0] == &r);
    }
  }
  const std::string doc = RenderConfiguration(*c);
  auto again = ParseConfiguration(doc, Known);
  const Configuration* back = std::get_if<Configuration>(&again);
  FUZZ_CHECK(back != nullptr);
  FUZZ_CHECK(*back == *c);
  FUZZ_CHECK(RenderConfiguration(*back) == doc);
  return 0;
}
