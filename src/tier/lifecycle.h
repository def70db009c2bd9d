// S3 lifecycle configurations (Put/Get/DeleteBucketLifecycleConfiguration):
// the parsed form, its validation with AWS's errors, its rendering, and the
// rules as pure functions (object facts + configuration + now -> action).
// The scanner (tier/scanner.h) applies what these functions decide; nothing
// here touches storage. docs/tiers.md describes the semantics.
//
// Time: a lifecycle "day" is `day_ns` nanoseconds (86400 s in production;
// `--lifecycle-day-seconds` shortens it for tests). As on AWS, an action
// "Days after" a time t is due at t + days * day, rounded up to the next
// multiple of day since the epoch (AWS: the next midnight UTC).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace strata::tier {

using Tags = std::vector<std::pair<std::string, std::string>>;

// Which objects a rule applies to: all of the set conditions (And).
struct Filter {
  std::string prefix;
  Tags tags;
  std::optional<uint64_t> size_greater_than;  // ObjectSizeGreaterThan (bytes, exclusive)
  std::optional<uint64_t> size_less_than;     // ObjectSizeLessThan (bytes, exclusive)
  bool operator==(const Filter&) const = default;
};

// How the rule named its filter, to render it back as it came.
enum class FilterForm : uint8_t {
  kLegacyPrefix,  // <Prefix> directly in <Rule> (deprecated, still accepted)
  kFilter,        // <Filter> with one of Prefix, Tag, ObjectSize*, or And
  kAnd,           // <Filter><And>...</And></Filter>
  kEmptyFilter,   // <Filter/> or <Filter></Filter>: every object
};

// A point in time given either as Days (after the object's creation, or
// after it became noncurrent) or as a Date (midnight UTC, epoch seconds).
struct When {
  std::optional<uint32_t> days;
  std::optional<int64_t> date_s;
  bool operator==(const When&) const = default;
};

struct TransitionAction {
  When when;
  std::string storage_class;
  bool operator==(const TransitionAction&) const = default;
};

struct NoncurrentTransitionAction {
  uint32_t noncurrent_days = 0;
  std::optional<uint32_t> newer_noncurrent_versions;
  std::string storage_class;
  bool operator==(const NoncurrentTransitionAction&) const = default;
};

struct Rule {
  std::string id;  // up to 255 characters; made up (unique) when absent
  bool enabled = true;
  FilterForm filter_form = FilterForm::kEmptyFilter;
  Filter filter;
  // Expiration of current versions (Days or Date), and/or of expired
  // object delete markers (a current marker with no other versions left).
  std::optional<When> expiration;
  bool expired_object_delete_marker = false;
  std::vector<TransitionAction> transitions;
  // NoncurrentVersionExpiration.
  std::optional<uint32_t> noncurrent_days;
  std::optional<uint32_t> newer_noncurrent_versions;
  std::vector<NoncurrentTransitionAction> noncurrent_transitions;
  // AbortIncompleteMultipartUpload DaysAfterInitiation.
  std::optional<uint32_t> abort_upload_days;
  bool operator==(const Rule&) const = default;
};

struct Configuration {
  std::vector<Rule> rules;  // 1 to 1000
  bool operator==(const Configuration&) const = default;
};

// Why a configuration was refused: the S3 error code to answer with, and a
// message as AWS words it.
enum class Problem : uint8_t {
  kMalformedXml,     // MalformedXML: not XML, unknown or repeated elements, Days with Date
  kInvalidArgument,  // InvalidArgument: a bad value (Days not positive, a Date not at midnight
                     // UTC, an unknown storage class, an ID over 255 characters, a duplicate ID)
  kInvalidRequest,   // InvalidRequest: rules that conflict or an action that cannot apply
};
struct ParseError {
  Problem problem;
  std::string message;
};

// Whether a storage class name (as x-amz-storage-class spells it) is one the
// server accepts as a transition target (tier/classes.h decides).
using KnownClass = std::function<bool(std::string_view)>;

// Parses and validates a LifecycleConfiguration document (AWS's XML, the
// namespace optional). Never throws; any input is either a Configuration or
// a ParseError.
std::variant<Configuration, ParseError> ParseLifecycle(std::string_view xml,
                                                       const KnownClass& known_class);
// The document GetBucketLifecycleConfiguration returns (and the bucket record
// keeps): ParseLifecycle(RenderLifecycle(c)) == c.
std::string RenderLifecycle(const Configuration& c);

// ---- Evaluation (pure) ----------------------------------------------------

// What the scanner knows of one version when it asks what to do with it.
struct VersionFacts {
  std::string key;
  uint64_t size_bytes = 0;
  int64_t mtime_ns = 0;  // creation (Last-Modified)
  Tags tags;
  std::string storage_class;  // "" = STANDARD
  bool is_latest = false;
  bool delete_marker = false;
  // Noncurrent versions: when the version became noncurrent (its successor's
  // creation) and how many noncurrent versions of the key are newer than it.
  int64_t noncurrent_since_ns = 0;
  uint32_t newer_noncurrent = 0;
  // A current delete marker: whether it is the key's only version left.
  bool only_version = false;
  // The bucket's versioning is Enabled or Suspended (expiring a current
  // version then adds a delete marker instead of removing it).
  bool versioned_bucket = false;
  // x-amz-transition-default-minimum-object-size: a version smaller than
  // this is never transitioned by a rule whose filter names no size.
  uint64_t min_transition_bytes = 0;
};

enum class ActionKind : uint8_t {
  kNone,
  kDelete,       // remove this version (unversioned expiration, noncurrent expiration,
                 // an expired object delete marker)
  kAddMarker,    // expire the current version of a versioned bucket: add a delete marker
  kTransition,   // move this version to `storage_class`
};

struct Action {
  ActionKind kind = ActionKind::kNone;
  std::string storage_class;  // kTransition
  std::string rule_id;        // the rule that decided
  bool operator==(const Action&) const = default;
};

// Orders storage classes from hot to cold: STANDARD / EXPRESS_ONEZONE /
// REDUCED_REDUNDANCY (0), INTELLIGENT_TIERING, STANDARD_IA, ONEZONE_IA,
// GLACIER_IR, GLACIER, DEEP_ARCHIVE. A transition only goes colder.
int ClassRank(std::string_view storage_class);
// Whether a lifecycle transition may move a version of class `from` to `to`
// (AWS's supported transitions: from the STANDARD family to any of the six
// targets; STANDARD_IA to INTELLIGENT_TIERING, ONEZONE_IA and the Glacier
// classes; INTELLIGENT_TIERING to ONEZONE_IA and the Glacier classes;
// ONEZONE_IA to GLACIER and DEEP_ARCHIVE; GLACIER_IR to GLACIER and
// DEEP_ARCHIVE; GLACIER to DEEP_ARCHIVE; never back to STANDARD).
bool TransitionAllowed(std::string_view from, std::string_view to);

// Whether `rule`'s filter matches the version (prefix, every tag, sizes).
bool Matches(const Rule& rule, const VersionFacts& v);

// The one action due for the version at `now_ns` among the enabled rules:
// a deletion wins over a transition, which wins over adding a delete marker
// (AWS's precedence); among due transitions the coldest class. kNone if
// nothing is due. Object Lock is not judged here (object/lock.h is the only
// gate; the scanner asks it).
Action Evaluate(const Configuration& c, const VersionFacts& v, int64_t now_ns, int64_t day_ns);

// Whether an incomplete multipart upload of `key` initiated at
// `initiated_ns` is due to be aborted (a rule with AbortIncompleteMultipartUpload
// whose prefix filter matches; tag and size filters never match uploads).
std::optional<std::string> AbortDue(const Configuration& c, std::string_view key,
                                    int64_t initiated_ns, int64_t now_ns, int64_t day_ns);

// x-amz-expiration for a current version: when the first enabled
// Expiration rule that matches will expire it, and that rule's id; nullopt
// if none applies.
struct ExpirationInfo {
  int64_t expiry_ns = 0;
  std::string rule_id;
};
std::optional<ExpirationInfo> ExpirationOf(const Configuration& c, const VersionFacts& v,
                                           int64_t day_ns);

// t + days * day, rounded up to the next multiple of day since the epoch.
int64_t DueAfterDays(int64_t t_ns, uint32_t days, int64_t day_ns);

}  // namespace strata::tier
