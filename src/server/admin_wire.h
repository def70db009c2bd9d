// The JSON documents of the admin API (/_strata/admin/<action>; described in
// docs/admin-api.md): one definition of each, with its field names, used by
// the server to answer (admin_api.cc) and by `strata admin` to read the
// answers (admin_cli.cc). nlohmann::json underneath.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::server::admin {

// GET drives, one per drive of the pool.
struct DriveEntry {
  int position = 0;
  std::string path;
  std::string state;   // online | missing | unformatted | faulty
  std::string detail;  // why, when not online
  uint64_t shard_files = 0;
};

// GET drives. With erasure coding: {"k","m","drives"}; a single directory:
// {"layout": "single directory (no erasure coding)", "drives": []}.
struct DrivesReply {
  bool erasure_coded = false;
  int k = 0, m = 0;    // erasure_coded only
  std::string layout;  // !erasure_coded only
  std::vector<DriveEntry> drives;
};

// POST heal-object / heal-bucket.
struct HealReply {
  uint64_t shards_rebuilt = 0;
  bool unrecoverable = false;  // fewer than k good shards of some piece
  std::string errors;          // "" when every piece could be checked; else "; "-joined
};

// GET heal-status: the background healer's counters, or {"healer": "none (...)"}.
struct HealStatusReply {
  bool has_healer = false;
  std::string healer;  // !has_healer only
  uint64_t queued = 0, healed_from_queue = 0, scrubbed = 0, shards_rebuilt = 0, unrecoverable = 0,
           scrub_passes = 0;
};

// Any action that failed (HTTP status 4xx/5xx).
struct ErrorReply {
  std::string error;
};

std::string Encode(const DrivesReply& r);
std::string Encode(const HealReply& r);
std::string Encode(const HealStatusReply& r);
std::string Encode(const ErrorReply& r);

// Parse a body back; nullopt with *error set when it is not that document.
std::optional<DrivesReply> DecodeDrives(std::string_view body, std::string* error);
std::optional<HealReply> DecodeHeal(std::string_view body, std::string* error);
std::optional<HealStatusReply> DecodeHealStatus(std::string_view body, std::string* error);
std::optional<ErrorReply> DecodeError(std::string_view body, std::string* error);

}  // namespace strata::server::admin
