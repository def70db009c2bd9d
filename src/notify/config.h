// A bucket's event notification configuration (S3's NotificationConfiguration
// document): which events of which keys go to which webhook target. Pure:
// parsing with every check AWS makes, rendering, and matching an event.
//
// Targets are the webhooks the operator declares in the config file
// ([notify.webhook.ID]); a bucket names one as the Queue of a
// QueueConfiguration, by the ARN "arn:strata:sqs::ID:webhook".
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata::notify {

struct Rule {
  std::string id;                   // Id (generated when the document has none)
  std::string target;               // the webhook id of its ARN
  std::vector<std::string> events;  // "s3:ObjectCreated:*", "s3:ObjectRemoved:Delete", ...
  std::string prefix, suffix;       // the key filter ("" = any)
  bool operator==(const Rule&) const = default;
};

struct Configuration {
  std::vector<Rule> rules;
  bool operator==(const Configuration&) const = default;
};

enum class Problem : unsigned char {
  kMalformedXml,     // MalformedXML: not XML, unknown / repeated / misplaced elements
  kInvalidArgument,  // InvalidArgument: an unknown event, target or filter rule name,
                     // overlapping configurations, a duplicate Id
  kNotImplemented,   // NotImplemented: topics, cloud functions, EventBridge
};

struct ParseError {
  Problem problem;
  std::string message;
};

// The ARN of webhook target `id`, and its inverse ("" if `arn` is not one).
std::string TargetArn(std::string_view id);
std::string TargetOfArn(std::string_view arn);
// A target id as the config file may declare it: 1-64 of [A-Za-z0-9_-].
bool ValidTargetId(std::string_view id);

// `known_target(id)`: whether the operator declared webhook `id`.
using KnownTarget = std::function<bool(std::string_view id)>;
std::variant<Configuration, ParseError> ParseConfiguration(std::string_view xml,
                                                           const KnownTarget& known_target);
// The document GetBucketNotificationConfiguration returns and the bucket
// record keeps: ParseConfiguration(RenderConfiguration(c)) == c.
std::string RenderConfiguration(const Configuration& c);

// Whether `event` (a concrete name: "s3:ObjectCreated:Put") is one strata
// emits, and whether configured name `pattern` (possibly "...:*") covers it.
bool IsEventName(std::string_view event);
bool EventCovers(std::string_view pattern, std::string_view event);
// The rules that want `event` for `key`, in document order.
std::vector<const Rule*> Matching(const Configuration& c, std::string_view event,
                                  std::string_view key);

}  // namespace strata::notify
