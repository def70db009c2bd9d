// libFuzzer target: the POST policy (s3::ParsePostPolicy, EvaluatePostPolicy,
// CheckPostContentLength) and the small form helpers. Input text:
//   <control byte><policy JSON>\n--\n<name>=<value>\n...   (the form fields)
// The fields are evaluated against the policy for bucket "bucket" at
// 2024-01-01T00:00:00Z (moved by the control byte); the field values also
// drive ParseIso8601Ms, MultipartBoundary, BaseFileName and ExpandFilename.
// Seeds: tests/fuzz/post_policy/ (policies as boto3's generate_presigned_post
// writes them).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_util.h"
#include "common/time_util.h"
#include "s3/post_policy.h"

using namespace strata::s3;

namespace {
constexpr int64_t kNowMs = 1704067200000;  // 2024-01-01T00:00:00Z
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t sep = in.find("\n--\n");
  std::string_view json = in.substr(0, sep);
  std::vector<FormField> fields;
  if (sep != std::string_view::npos) {
    std::string_view rest = in.substr(sep + 4);
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      size_t eq = line.find('=');
      std::string name(line.substr(0, eq));
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      fields.push_back(FormField{name, std::string(eq == std::string_view::npos ? "" : line.substr(eq + 1))});
    }
  }

  auto parsed = ParsePostPolicy(json);
  if (auto* policy = std::get_if<PostPolicy>(&parsed)) {
    for (const PolicyCondition& c : policy->conditions) {
      FUZZ_CHECK(!c.ToString().empty());
      if (c.kind == PolicyCondition::Kind::kContentLengthRange) {
        FUZZ_CHECK(c.min >= 0 && c.max >= 0);
        FUZZ_CHECK(policy->length_range.has_value());
      }
    }
    const int64_t now = kNowMs + (static_cast<int64_t>(control) - 0x80) * 3600 * 1000;
    auto verdict = EvaluatePostPolicy(*policy, fields, "bucket", now);
    // Expired policies are refused whatever the fields say.
    if (now > policy->expiration_ms) FUZZ_CHECK(verdict.has_value());
    for (uint64_t len : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 40, ~uint64_t{0}}) {
      auto e = CheckPostContentLength(*policy, len);
      if (!policy->length_range) FUZZ_CHECK(!e.has_value());
    }
  }
  for (const FormField& f : fields) {
    (void)strata::ParseIso8601Ms(f.value);
    if (auto b = MultipartBoundary(f.value)) {
      FUZZ_CHECK(IsMultipartFormData(f.value));
      FUZZ_CHECK(!b->empty() && b->size() <= 70);
    }
    std::string base = BaseFileName(f.value);
    FUZZ_CHECK(base.find('/') == std::string::npos && base.find('\\') == std::string::npos);
    std::string expanded = ExpandFilename(f.value, base);
    if (f.value.find("${filename}") == std::string::npos) FUZZ_CHECK(expanded == f.value);
  }
  return 0;
}
