// The strata KV-cache wire protocol, version 2: frame header, constants and
// the codec of every request/response payload. Format: docs/formats/kv-protocol.md.
//
// Shared by the server (src/kvcache/) and the client library (client/): pure
// code, depends only on common/. Decoders never read past their input and
// return false on truncated or malformed input (the output is then unspecified:
// possibly partly filled); decoded string_views point
// into the caller's buffer (no copy), so the buffer must outlive them.
//
// Frame header (kFrameHeaderBytes = 4 + 1 + 1 + 1 + 1 + 8 + 8 = 24), little-endian:
//   0  magic "SKV1"   4  version   5  opcode   6  status   7  flags
//   8  request_id (u64)            16 payload_len (u64, <= kMaxPayloadBytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/hash.h"

namespace strata::kvcache::proto {

inline constexpr char kMagic[4] = {'S', 'K', 'V', '1'};
inline constexpr uint8_t kVersion = 2;
inline constexpr size_t kFrameHeaderBytes = 4 + 1 + 1 + 1 + 1 + 8 + 8;
static_assert(kFrameHeaderBytes == 24);
inline constexpr uint64_t kMaxPayloadBytes = 1ull << 30;  // 1 GiB
// Keys are >= 128-bit content hashes; shorter ones would make collisions likely.
inline constexpr size_t kMinKeyBytes = 16;
// 64: a SHA-256 block hash plus a KV-group index (vLLM's 36-byte OffloadKey) fits.
inline constexpr size_t kMaxKeyBytes = 64;
// Per-block metadata stored with a block (LMCache's chunk shape/dtype/format).
inline constexpr size_t kMaxBlockMetaBytes = 1024;
// The namespace manifest (the engine's configuration, stored with the namespace).
inline constexpr size_t kMaxManifestBytes = 64 * 1024;
// Bounds one batch (a LOOKUP of 1M keys of 64 bytes is 65 MiB of payload).
inline constexpr uint32_t kMaxBatchItems = 1u << 20;
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;
inline constexpr size_t kDigestBytes = 32;
inline constexpr size_t kMaxStrBytes = 0xffff;  // `str` has a u16 length
// The MAC input: kAuthContext || nonce || access_key.
inline constexpr std::string_view kAuthContext = "strata-kv-v1";
// The S3 bucket of a namespace is kBucketPrefix + first 16 hex digits of its digest.
inline constexpr std::string_view kBucketPrefix = "kv-";

// Every opcode, once: X(enumerator, byte, name in logs and the spec).
#define STRATA_KV_OPS(X)                    \
  X(kHello, 0x01, "HELLO")                  \
  X(kAuth, 0x02, "AUTH")                    \
  X(kPing, 0x03, "PING")                    \
  X(kOpenNamespace, 0x10, "OPEN_NAMESPACE") \
  X(kLookup, 0x11, "LOOKUP")                \
  X(kGet, 0x12, "GET")                      \
  X(kPut, 0x13, "PUT")                      \
  X(kDelete, 0x14, "DELETE")                \
  X(kStats, 0x15, "STATS")                  \
  X(kPin, 0x16, "PIN")                      \
  X(kUnpin, 0x17, "UNPIN")                  \
  X(kLookupEach, 0x18, "LOOKUP_EACH")       \
  X(kEvents, 0x19, "EVENTS")

enum class Op : uint8_t {
#define STRATA_KV_OP_ENUM(name, byte, text) name = byte,
  STRATA_KV_OPS(STRATA_KV_OP_ENUM)
#undef STRATA_KV_OP_ENUM
};
bool IsKnownOp(uint8_t op);
std::string_view OpName(Op op);  // "UNKNOWN" for a byte no opcode has

// One byte, in frame headers (whole request) and per item in batch replies.
// Every status, once: X(enumerator, byte, name). The bytes run 0..kMaxWireStatus
// without gaps (the client's KvCode shares them, include/strata/kv_client.h).
#define STRATA_KV_WIRE_STATUSES(X)  \
  X(kOk, 0, "OK")                   \
  X(kNotFound, 1, "NOT_FOUND")      \
  X(kExists, 2, "EXISTS")           \
  X(kInvalid, 3, "INVALID")         \
  X(kAuthFailed, 4, "AUTH_FAILED")  \
  X(kDenied, 5, "DENIED")           \
  X(kTooLarge, 6, "TOO_LARGE")      \
  X(kUnavailable, 7, "UNAVAILABLE") \
  X(kInternal, 8, "INTERNAL")       \
  X(kBadChecksum, 9, "BAD_CHECKSUM")

enum class WireStatus : uint8_t {
#define STRATA_KV_STATUS_ENUM(name, byte, text) name = byte,
  STRATA_KV_WIRE_STATUSES(STRATA_KV_STATUS_ENUM)
#undef STRATA_KV_STATUS_ENUM
};
#define STRATA_KV_STATUS_COUNT(name, byte, text) +1
inline constexpr uint8_t kMaxWireStatus = 0 STRATA_KV_WIRE_STATUSES(STRATA_KV_STATUS_COUNT) - 1;
#undef STRATA_KV_STATUS_COUNT
std::string_view WireStatusName(WireStatus s);

struct FrameHeader {
  uint8_t version = kVersion;  // decoded as sent (kBadVersion when it is not kVersion)
  Op op = Op::kPing;  // may hold an unknown value after decoding: check IsKnownOp
  WireStatus status = WireStatus::kOk;
  uint8_t flags = 0;
  uint64_t request_id = 0;
  uint64_t payload_len = 0;
};

enum class HeaderCheck {
  kOk,
  kTruncated,   // fewer than kFrameHeaderBytes
  kBadMagic,    // nothing else trusted: close the connection without a reply
  kBadVersion,  // request_id valid: reply INVALID, then close (with the client's version byte)
  kTooLarge,    // payload_len > kMaxPayloadBytes; request_id valid: reply INVALID, then close
};

// Writes exactly kFrameHeaderBytes to `out`.
void EncodeFrameHeader(const FrameHeader& h, char* out);
void AppendFrameHeader(const FrameHeader& h, std::string* out);
// Decodes the first kFrameHeaderBytes of `in`. On kBadVersion/kTooLarge *out is filled.
HeaderCheck DecodeFrameHeader(std::string_view in, FrameHeader* out);

// Little-endian appender.
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v);
  void U32(uint32_t v);
  void U64(uint64_t v);
  void Bytes(std::string_view b) { out_->append(b); }
  // `str`: u16 length + bytes; the caller keeps s.size() <= kMaxStrBytes (asserted).
  void Str(std::string_view s);
  // `key`: u8 length + bytes; length 0 (a chain root's parent) or 16..64 (asserted).
  void Key(std::string_view k);

 private:
  std::string* out_;
};

// Bounds-checked little-endian reader over a string_view; every method returns
// false (and consumes nothing) when the input is too short or malformed.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v);
  bool U16(uint16_t* v);
  bool U32(uint32_t* v);
  bool U64(uint64_t* v);
  bool Bytes(size_t n, std::string_view* out);
  bool Str(std::string_view* out);
  // A key of kMinKeyBytes..kMaxKeyBytes.
  bool Key(std::string_view* out);
  // A key, or the empty key (length 0).
  bool KeyOrEmpty(std::string_view* out);
  size_t remaining() const { return in_.size(); }
  bool empty() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

bool ValidKey(std::string_view key);  // kMinKeyBytes <= size <= kMaxKeyBytes

// ---- HELLO / AUTH ----------------------------------------------------------
std::string EncodeHelloRequest(std::string_view access_key);
bool DecodeHelloRequest(std::string_view payload, std::string_view* access_key);
// HELLO's reply is the kNonceBytes nonce; AUTH's request is the kMacBytes MAC.
// HMAC-SHA256(secret_key, kAuthContext || nonce || access_key), 32 raw bytes.
std::string ComputeAuthMac(std::string_view secret_key, std::string_view nonce,
                           std::string_view access_key);

// ---- OPEN_NAMESPACE --------------------------------------------------------
struct NamespaceDescriptor {
  std::string model_id;
  std::string weights_fingerprint;
  std::string kv_dtype;
  std::string kv_layout;
  uint32_t tokens_per_block = 0;
  uint64_t block_bytes = 0;
  uint16_t tp_size = 1;
  uint16_t tp_rank = 0;
  uint16_t pp_size = 1;
  uint16_t pp_rank = 0;
  std::string hash_algorithm;
  uint64_t hash_seed = 0;
  std::string tenant_salt;
  // Not part of the identity (not in the digest):
  uint64_t quota_bytes = 0;  // 0: the server's default
  uint32_t ttl_s = 0;        // 0: no expiry
  // The manifest offered (u32 length + bytes, <= kMaxManifestBytes; empty: none).
  std::string manifest;
};

// Strings must fit a `str` (<= kMaxStrBytes); false otherwise.
bool EncodeNamespaceDescriptor(const NamespaceDescriptor& d, std::string* out);
bool DecodeNamespaceDescriptor(std::string_view payload, NamespaceDescriptor* out);
// The identity fields, encoded as on the wire, in wire order (everything but quota_bytes, ttl_s).
std::string CanonicalNamespaceIdentity(const NamespaceDescriptor& d);
// SHA-256 of CanonicalNamespaceIdentity.
Sha256Digest NamespaceDigest(const NamespaceDescriptor& d);
std::string DigestHex(const Sha256Digest& digest);  // 64 lowercase hex
// "kv-" + first 16 hex digits of the digest.
std::string NamespaceBucket(const Sha256Digest& digest);
// "<64 hex digest>/<hex key>": the S3 key of a block.
std::string BlockObjectKey(const Sha256Digest& digest, std::string_view key);

struct OpenNamespaceResponse {
  uint64_t handle = 0;
  Sha256Digest digest{};
  std::string bucket;
  // The manifest stored with the namespace (its first opener's; empty: none)
  // and whether the one offered equals it (true when none was offered).
  bool manifest_matches = true;
  std::string manifest;
};
std::string EncodeOpenNamespaceResponse(const OpenNamespaceResponse& r);
bool DecodeOpenNamespaceResponse(std::string_view payload, OpenNamespaceResponse* out);

// ---- LOOKUP / DELETE / UNPIN (u64 ns, u32 n, n x key) ----------------------
struct KeysRequest {
  uint64_t ns = 0;
  std::vector<std::string_view> keys;  // into the decoded payload
};
// Keys must be valid (asserted); at most kMaxBatchItems.
std::string EncodeKeysRequest(uint64_t ns, std::span<const std::string_view> keys);
bool DecodeKeysRequest(std::string_view payload, KeysRequest* out);

// LOOKUP's reply: u32 prefix_len.
std::string EncodeLookupResponse(uint32_t prefix_len);
bool DecodeLookupResponse(std::string_view payload, uint32_t* prefix_len);

// LOOKUP_EACH's reply: u32 n, then ceil(n / 8) bytes, bit i (LSB first) set
// when key i is stored.
std::string EncodeLookupEachResponse(const std::vector<bool>& present);
bool DecodeLookupEachResponse(std::string_view payload, size_t expected_n,
                              std::vector<bool>* present);

// ---- PIN (u64 ns, u32 ttl_ms, u32 n, n x key) ------------------------------
struct PinRequest {
  uint64_t ns = 0;
  uint32_t ttl_ms = 0;
  std::vector<std::string_view> keys;
};
std::string EncodePinRequest(uint64_t ns, uint32_t ttl_ms, std::span<const std::string_view> keys);
bool DecodePinRequest(std::string_view payload, PinRequest* out);

// ---- Batch replies of PUT / DELETE / PIN / UNPIN: n x u8 status -------------
std::string EncodeStatusList(std::span<const WireStatus> statuses);
// `expected_n`: the item count of the request; false on a length mismatch or unknown status.
bool DecodeStatusList(std::string_view payload, size_t expected_n, std::vector<WireStatus>* out);

// ---- GET -------------------------------------------------------------------
struct GetItem {
  std::string_view key;
  uint64_t offset = 0;
  uint64_t length = 0;  // 0: to the end of the block
};
struct GetRequest {
  uint64_t ns = 0;
  std::vector<GetItem> items;
};
std::string EncodeGetRequest(uint64_t ns, std::span<const GetItem> items);
bool DecodeGetRequest(std::string_view payload, GetRequest* out);

// The reply: n x (u8 status, u64 length, u8 flags, u32 crc32c, u16 meta_len)
// — the "head" — then the OK items' metadata bytes in order (meta_len each),
// then their block bytes in order (length each). Non-OK items carry zeros.
// flags bit 0 (kGetCrcValid): crc32c is the CRC32C of the bytes sent (a
// whole-block read); a range carries none.
inline constexpr uint8_t kGetCrcValid = 1;
struct GetResult {
  WireStatus status = WireStatus::kOk;
  uint64_t length = 0;
  uint8_t flags = 0;
  uint32_t crc32c = 0;
  uint16_t meta_len = 0;
};
inline constexpr size_t kGetResultBytes = 1 + 8 + 1 + 4 + 2;
void AppendGetResponseHead(std::span<const GetResult> results, std::string* out);
// Decodes the head of a GET reply for a request of `n` items from the first
// n * kGetResultBytes bytes of `payload`. False if too short, on an unknown
// status, unknown flags, a meta_len over kMaxBlockMetaBytes or a non-OK item
// with a nonzero field.
bool DecodeGetResponseHead(std::string_view payload, size_t n, std::vector<GetResult>* out);

// ---- PUT -------------------------------------------------------------------
// Payload: u64 ns, u32 n, n x (key, key parent (empty = chain root), u64 length,
// u32 crc32c of the block, u16 meta_len + meta), then the n blocks' bytes in
// order. The "head" is everything before the bytes.
struct PutItem {
  std::string_view key;
  std::string_view parent;  // empty: chain root
  uint64_t length = 0;
  uint32_t crc32c = 0;
  std::string_view meta;  // <= kMaxBlockMetaBytes
};
struct PutRequestHead {
  uint64_t ns = 0;
  std::vector<PutItem> items;
  size_t head_bytes = 0;  // where the block bytes start in the payload
};
std::string EncodePutRequestHead(uint64_t ns, std::span<const PutItem> items);
// Decodes the head from the front of `payload` (which may hold the block bytes
// or only part of them). False if the head is truncated or malformed.
bool DecodePutRequestHead(std::string_view payload, PutRequestHead* out);
// For streaming readers (the server reads a PUT head before its block bytes):
// scans the first bytes of a PUT payload. kComplete: *bytes = the head's size
// (decode in[0, *bytes)); kNeedMore: *bytes = a total the head needs at least
// (read up to it and scan again); kMalformed: a bad key length or item count.
// With `state`, a scan resumes where the previous one (over a shorter prefix
// of the same payload) stopped, so reading a head of n items costs O(n).
enum class HeadScan { kComplete, kNeedMore, kMalformed };
struct PutHeadScanState {
  size_t pos = 0;  // the first item not yet scanned starts here (0: not started)
  uint32_t items_done = 0;
};
HeadScan ScanPutRequestHead(std::string_view in, size_t* bytes, PutHeadScanState* state = nullptr);
// Sum of the items' lengths; false on overflow.
bool PutBlockBytes(std::span<const PutItem> items, uint64_t* total);

// ---- EVENTS ----------------------------------------------------------------
// Request: u64 ns, u64 since (the sequence number to start at), u32 max_events.
// Reply: u64 next (the sequence number after the last event returned), u64 lost
// (events at or after `since` that are no longer held), u32 n,
// n x (u8 kind, key, key parent (empty for removals and chain roots)).
enum class EventKind : uint8_t { kStored = 1, kRemoved = 2 };
struct EventsRequest {
  uint64_t ns = 0;
  uint64_t since = 0;
  uint32_t max_events = 0;
};
struct Event {
  EventKind kind = EventKind::kStored;
  std::string key;
  std::string parent;
};
struct EventsResponse {
  uint64_t next = 0;
  uint64_t lost = 0;
  std::vector<Event> events;
};
std::string EncodeEventsRequest(const EventsRequest& r);
bool DecodeEventsRequest(std::string_view payload, EventsRequest* out);
std::string EncodeEventsResponse(const EventsResponse& r);
bool DecodeEventsResponse(std::string_view payload, EventsResponse* out);

// ---- STATS -----------------------------------------------------------------
// Request: u64 ns. Reply: 10 x u64 in this order.
struct NamespaceStats {
  uint64_t blocks = 0;
  uint64_t bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_served = 0;
  uint64_t bytes_requested = 0;
  uint64_t evictions = 0;
  uint64_t lookups = 0;
  // Keys probed by LOOKUP / LOOKUP_EACH, and the server's nanoseconds spent
  // on those requests from their decoded payload to the queued reply (not
  // the network): the server-side cost of a probe, measured where it runs.
  uint64_t lookup_keys = 0;
  uint64_t lookup_ns = 0;
};
std::string EncodeNamespaceRequest(uint64_t ns);
bool DecodeNamespaceRequest(std::string_view payload, uint64_t* ns);
std::string EncodeStatsResponse(const NamespaceStats& s);
bool DecodeStatsResponse(std::string_view payload, NamespaceStats* out);

}  // namespace strata::kvcache::proto
