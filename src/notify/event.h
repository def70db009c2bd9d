// The event a change produces, and the AWS event document (eventVersion 2.1,
// as S3 sends to SQS / Lambda) that a webhook receives for it. Pure: which
// event a synced metadata batch means is decided here from the operation
// that made it (audit::Actor::operation) and the object record it writes or
// the version key it removes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata::object {
struct ObjectRecord;
}

namespace strata::notify {

// The event name (with the "s3:" prefix) that `operation` writing `record`
// means, or nullopt if that write is no event (a PUT's removal of the old
// null version, an intent, a retention change).
std::optional<std::string_view> EventOfPut(std::string_view operation,
                                           const object::ObjectRecord& record);
// The same for `operation` removing an object version.
std::optional<std::string_view> EventOfDelete(std::string_view operation);

struct Event {
  std::string name;  // "s3:ObjectCreated:Put"
  int64_t time_ns = 0;
  std::string region;
  std::string bucket, bucket_owner;
  std::string key;  // raw; the document URL-encodes it
  // Object facts: size and ETag for events of an object that exists after
  // it (not for removals), the version id of versioned objects.
  bool has_size = false;
  uint64_t size = 0;
  std::string etag;
  std::string version_id;
  std::string sequencer;  // orders the events of one key (hex, fixed width)
  std::string identity, request_id;
  std::string source;  // the client's address ("HOST:PORT" or "[V6]:PORT" as the actor has it)
  std::string storage_class;  // transitions and restores: where the data went
  int64_t restore_expiry_ns = 0;  // ObjectRestore:Completed
};

// {"Records":[{...}]} for the rule named `configuration_id`.
std::string RenderEvent(const Event& e, std::string_view configuration_id);
// The message S3 sends a destination when a configuration starts naming it:
// {"Service":"Amazon S3","Event":"s3:TestEvent","Time":...,"Bucket":...,
// "RequestId":...,"HostId":...}.
std::string RenderTestEvent(std::string_view bucket, int64_t time_ns,
                            std::string_view request_id);

}  // namespace strata::notify
