#include "server/admin_wire.h"

#include <nlohmann/json.hpp>

namespace strata::server::admin {

using nlohmann::json;

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DriveEntry, position, path, state, detail, shard_files)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HealReply, shards_rebuilt, unrecoverable, errors)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ErrorReply, error)

void to_json(json& j, const DrivesReply& r) {
  if (r.erasure_coded) {
    j = json{{"k", r.k}, {"m", r.m}, {"drives", r.drives}};
  } else {
    j = json{{"layout", r.layout}, {"drives", r.drives}};
  }
}

void from_json(const json& j, DrivesReply& r) {
  r.erasure_coded = j.contains("k");
  if (r.erasure_coded) {
    j.at("k").get_to(r.k);
    j.at("m").get_to(r.m);
  } else {
    j.at("layout").get_to(r.layout);
  }
  j.at("drives").get_to(r.drives);
}

void to_json(json& j, const HealStatusReply& r) {
  if (!r.has_healer) {
    j = json{{"healer", r.healer}};
    return;
  }
  j = json{{"queued", r.queued},
           {"healed_from_queue", r.healed_from_queue},
           {"scrubbed", r.scrubbed},
           {"shards_rebuilt", r.shards_rebuilt},
           {"unrecoverable", r.unrecoverable},
           {"scrub_passes", r.scrub_passes}};
}

void from_json(const json& j, HealStatusReply& r) {
  r.has_healer = !j.contains("healer");
  if (!r.has_healer) {
    j.at("healer").get_to(r.healer);
    return;
  }
  j.at("queued").get_to(r.queued);
  j.at("healed_from_queue").get_to(r.healed_from_queue);
  j.at("scrubbed").get_to(r.scrubbed);
  j.at("shards_rebuilt").get_to(r.shards_rebuilt);
  j.at("unrecoverable").get_to(r.unrecoverable);
  j.at("scrub_passes").get_to(r.scrub_passes);
}

namespace {

template <typename T>
std::string Dump(const T& value) {
  // Replace, not throw, on invalid UTF-8 (paths and messages are bytes).
  return json(value).dump(-1, ' ', false, json::error_handler_t::replace);
}

template <typename T>
std::optional<T> Parse(std::string_view body, std::string* error) {
  try {
    return json::parse(body).get<T>();
  } catch (const json::exception& e) {
    *error = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::string Encode(const DrivesReply& r) { return Dump(r); }
std::string Encode(const HealReply& r) { return Dump(r); }
std::string Encode(const HealStatusReply& r) { return Dump(r); }
std::string Encode(const ErrorReply& r) { return Dump(r); }

std::optional<DrivesReply> DecodeDrives(std::string_view body, std::string* error) {
  return Parse<DrivesReply>(body, error);
}
std::optional<HealReply> DecodeHeal(std::string_view body, std::string* error) {
  return Parse<HealReply>(body, error);
}
std::optional<HealStatusReply> DecodeHealStatus(std::string_view body, std::string* error) {
  return Parse<HealStatusReply>(body, error);
}
std::optional<ErrorReply> DecodeError(std::string_view body, std::string* error) {
  return Parse<ErrorReply>(body, error);
}

}  // namespace strata::server::admin
