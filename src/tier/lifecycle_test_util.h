// Helpers of the lifecycle tests (lifecycle_test.cc: parsing and rendering;
// lifecycle_eval_test.cc: the rules as functions).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tier/lifecycle.h"

namespace strata::tier::lifecycle_test {

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kDay = 86400 * kSecond;   // production's lifecycle day
inline constexpr int64_t kEpoch2024 = 1704067200;  // 2024-01-01T00:00:00Z, a midnight

// `day` days and `hour` hours after 2024-01-01T00:00:00Z, in nanoseconds.
constexpr int64_t At(int64_t day, int64_t hour = 0) {
  return (kEpoch2024 + day * 86400 + hour * 3600) * kSecond;
}

inline bool AwsClass(std::string_view c) {
  return c == "STANDARD_IA" || c == "ONEZONE_IA" || c == "INTELLIGENT_TIERING" ||
         c == "GLACIER_IR" || c == "GLACIER" || c == "DEEP_ARCHIVE";
}

inline When InDays(uint32_t days) {
  When w;
  w.days = days;
  return w;
}
inline When OnDate(int64_t date_s) {
  When w;
  w.date_s = date_s;
  return w;
}
inline Filter Pre(std::string prefix) { return Filter{std::move(prefix), {}, {}, {}}; }

inline std::string Doc(std::string_view rules) {
  return "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" +
         std::string(rules) + "</LifecycleConfiguration>";
}

inline Configuration Parse(std::string_view xml) {
  auto r = ParseLifecycle(xml, AwsClass);
  if (const ParseError* e = std::get_if<ParseError>(&r)) {
    ADD_FAILURE() << "refused (" << static_cast<int>(e->problem) << ": " << e->message
                  << "): " << xml;
    return {};
  }
  return std::get<Configuration>(r);
}

inline std::optional<ParseError> Refusal(std::string_view xml,
                                         const KnownClass& known = AwsClass) {
  auto r = ParseLifecycle(xml, known);
  if (const ParseError* e = std::get_if<ParseError>(&r)) return *e;
  return std::nullopt;
}

// Document pieces: a rule with the id "r", an empty filter, Enabled and
// `actions` (Act), or a filter (WithFilter), and the actions' elements.
inline std::string R(std::string_view body) { return Doc("<Rule>" + std::string(body) + "</Rule>"); }
// A rule with the id "r", an empty filter, Enabled and `actions`.
inline std::string Act(std::string_view actions) {
  return R("<ID>r</ID><Filter/><Status>Enabled</Status>" + std::string(actions));
}
inline std::string Exp(std::string_view days) {
  return "<Expiration><Days>" + std::string(days) + "</Days></Expiration>";
}
inline std::string Tr(std::string_view when, std::string_view c) {
  return "<Transition>" + std::string(when) + "<StorageClass>" + std::string(c) +
         "</StorageClass></Transition>";
}
inline std::string Days(int d) { return "<Days>" + std::to_string(d) + "</Days>"; }
inline std::string Date(std::string_view d) { return "<Date>" + std::string(d) + "</Date>"; }
inline std::string Nct(int d, std::string_view c) {
  return "<NoncurrentVersionTransition><NoncurrentDays>" + std::to_string(d) +
         "</NoncurrentDays><StorageClass>" + std::string(c) +
         "</StorageClass></NoncurrentVersionTransition>";
}
inline std::string Nve(std::string_view inner) {
  return "<NoncurrentVersionExpiration>" + std::string(inner) + "</NoncurrentVersionExpiration>";
}
inline std::string Abort(std::string_view d) {
  return "<AbortIncompleteMultipartUpload><DaysAfterInitiation>" + std::string(d) +
         "</DaysAfterInitiation></AbortIncompleteMultipartUpload>";
}
inline std::string WithFilter(std::string_view filter, std::string_view actions) {
  return R("<ID>r</ID><Filter>" + std::string(filter) + "</Filter><Status>Enabled</Status>" +
           std::string(actions));
}

inline const std::string kOk = Exp("1");
inline const std::string kTag = "<Tag><Key>k</Key><Value>v</Value></Tag>";

// A rule expiring after a day with this filter.
inline Rule Simple(std::string id, FilterForm form, Filter f) {
  Rule r;
  r.id = std::move(id);
  r.filter_form = form;
  r.filter = std::move(f);
  r.expiration = InDays(1);
  return r;
}

}  // namespace strata::tier::lifecycle_test
