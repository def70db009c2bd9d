// libFuzzer target: PutBucketLogging bodies (s3/access_log.h). The input is
// the body, any bytes. What parses must round-trip: the rendered document
// (GetBucketLogging's, and what the bucket record keeps) parses back to the
// same settings and renders to the same bytes; and a record formatted with
// the settings' target as its fields is one line of 26 fields.
// Seeds: tests/fuzz/access_logging/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_util.h"
#include "s3/access_log.h"

using namespace strata::s3;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  ParsedLogging parsed = ParseBucketLoggingStatus(in);
  if (auto* e = std::get_if<LoggingError>(&parsed)) {
    FUZZ_CHECK(!e->message.empty());
    return 0;
  }
  const auto& t = std::get<std::optional<LoggingTarget>>(parsed);
  const std::string doc = RenderBucketLoggingStatus(t);
  ParsedLogging again = ParseBucketLoggingStatus(doc);
  const auto* back = std::get_if<std::optional<LoggingTarget>>(&again);
  FUZZ_CHECK(back != nullptr);
  FUZZ_CHECK(*back == t);
  FUZZ_CHECK(RenderBucketLoggingStatus(*back) == doc);
  if (t) {
    AccessRecord r;
    r.bucket = t->bucket;
    r.key = t->prefix;
    r.user_agent = t->prefix;
    r.requester = t->bucket;
    const std::string line = FormatAccessRecord(r);
    FUZZ_CHECK(!line.empty() && line.back() == '\n');
    FUZZ_CHECK(line.find('\n') == line.size() - 1);
  }
  return 0;
}
