// strata KV-cache client: one authenticated TCP connection to a strata KV
// listener (protocol: docs/formats/kv-protocol.md).
//
// Every call is a batch on a namespace handle and costs one round trip.
// Data never passes through an intermediate buffer in this library:
//   - Get() reads the response's status table, then recv()s each block
//     straight into the caller's destination buffer, and checks it against
//     the CRC32C the server stored with it (a mismatch is kCorrupt: a miss);
//   - Put() computes each block's CRC32C, then sends the request header and
//     the caller's block memory with one scatter send (sendmsg/iovec), never
//     copying the blocks.
//
// Pipelined: the *Async calls send their request and return; a receiver
// thread of the client matches replies to requests by id, reads GET bytes
// straight into the destinations and runs the completion callback. Any
// number of requests may be in flight on one connection, from any number of
// threads; the synchronous calls are the asynchronous ones plus a wait. A
// callback runs on the receiver thread: it must be short and must not call a
// synchronous method of the same client (that would wait for itself).
// After an I/O or protocol error the connection is unusable (everything in
// flight and every later call gets the error or kClosed); namespace handles
// belong to the connection, so reconnect and reopen.
//
// Errors are values (KvStatus), never exceptions.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::kv {

// Result codes. 0..9 are the wire status codes (kv-protocol.md "Status
// codes"); 100 and up arise in the client only.
enum class KvCode : uint8_t {
  kOk = 0,
  kNotFound = 1,          // key or namespace absent
  kExists = 2,            // put-if-absent: the key was already stored
  kInvalid = 3,           // malformed request (or bad argument, client side)
  kAuthFailed = 4,        // wrong access key or secret
  kDenied = 5,            // not authenticated, or namespace not allowed
  kTooLarge = 6,          // block length differs from block_bytes, or over quota
  kUnavailable = 7,       // storage failure on the server, retry later
  kInternal = 8,          // server bug
  kBadChecksum = 9,       // PUT: the block's bytes do not match the CRC32C sent (not stored)
  kIoError = 100,         // socket error or timeout; the connection is closed
  kProtocolError = 101,   // the server's reply did not parse; the connection is closed
  kClosed = 102,          // the connection was closed by an earlier error or Close()
  kBufferTooSmall = 103,  // a GET reply item was longer than its destination buffer
  kCorrupt = 104,         // a GET item's bytes do not match its stored CRC32C (treat as a miss)
};

// Stable upper-case name ("OK", "NOT_FOUND", ..., "BUFFER_TOO_SMALL").
const char* KvCodeName(KvCode code);

// The CRC32C (Castagnoli) of the protocol's blocks, extended over `n` more
// bytes: ExtendCrc32c(ExtendCrc32c(0, a), b) == ExtendCrc32c(0, a || b). Also what S3's
// x-amz-checksum-crc32c carries (big-endian, base64).
uint32_t ExtendCrc32c(uint32_t crc, const void* data, size_t n);

class [[nodiscard]] KvStatus {
 public:
  KvStatus() = default;
  KvStatus(KvCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static KvStatus OK() { return KvStatus(); }
  bool ok() const { return code_ == KvCode::kOk; }
  KvCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;  // "NOT_FOUND: message"

 private:
  KvCode code_ = KvCode::kOk;
  std::string message_;
};

// Identity of a namespace (OPEN_NAMESPACE payload). Two descriptors that differ
// in any field except quota_bytes and ttl_s name different namespaces.
struct NamespaceDescriptor {
  std::string model_id;
  std::string weights_fingerprint;
  std::string kv_dtype;   // e.g. "float16"
  std::string kv_layout;  // e.g. "vllm-flash-NHD"
  uint32_t tokens_per_block = 16;
  uint64_t block_bytes = 0;  // every block of the namespace has exactly this size
  uint16_t tp_size = 1;
  uint16_t tp_rank = 0;
  uint16_t pp_size = 1;
  uint16_t pp_rank = 0;
  std::string hash_algorithm = "sha256";
  uint64_t hash_seed = 0;
  std::string tenant_salt;
  uint64_t quota_bytes = 0;  // 0: server default
  uint32_t ttl_s = 0;        // 0: no TTL
  // Not identity: the engine's configuration, stored with the namespace by
  // its first opener (<= kMaxManifestBytes); empty: none offered.
  std::string manifest;
};

struct NamespaceInfo {
  uint64_t handle = 0;               // valid on this connection only
  std::array<uint8_t, 32> digest{};  // SHA-256 of the descriptor's identity fields
  std::string bucket;                // S3 bucket holding the blocks
  std::string manifest;              // the manifest stored with the namespace ("" if none)
  bool manifest_matches = true;      // the one offered equals it (true if none offered)
};

inline constexpr size_t kMinKeyBytes = 16;
inline constexpr size_t kMaxKeyBytes = 64;
inline constexpr size_t kMaxMetaBytes = 1024;             // per-block metadata
inline constexpr size_t kMaxManifestBytes = 64 * 1024;    // namespace manifest

// Keys are 16..64 opaque bytes (content hashes chained over the token prefix).
using KeyView = std::string_view;

struct GetItem {
  // In.
  KeyView key;
  uint64_t offset = 0;  // byte offset within the block
  uint64_t length = 0;  // bytes wanted; 0 = to the end of the block
  void* dst = nullptr;  // where the bytes go
  uint64_t dst_capacity = 0;
  // Optional: where the block's metadata goes (kMaxMetaBytes is always enough).
  void* meta_dst = nullptr;
  uint32_t meta_capacity = 0;
  // Out.
  KvCode status = KvCode::kOk;
  uint64_t bytes = 0;     // bytes written into dst (when status is kOk)
  uint32_t meta_len = 0;  // the block's metadata size (copied when it fit meta_capacity)
  bool crc_checked = false;  // a whole-block read whose CRC32C matched (ranges carry none)
  uint32_t crc32c = 0;       // the block's CRC32C, when crc_checked
};

struct PutItem {
  // In.
  KeyView key;
  KeyView parent;  // the previous block of the chain; empty = chain root
  const void* data = nullptr;
  uint64_t length = 0;
  std::string_view meta;  // per-block metadata stored with it (<= kMaxMetaBytes)
  // Out: kOk (stored), kExists, kTooLarge, kBadChecksum, kUnavailable.
  KvCode status = KvCode::kOk;
};

struct NamespaceStats {
  uint64_t blocks = 0;
  uint64_t bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_served = 0;
  uint64_t bytes_requested = 0;
  uint64_t evictions = 0;
  uint64_t lookups = 0;
  uint64_t lookup_keys = 0;  // keys probed by LOOKUP / LOOKUP_EACH
  uint64_t lookup_ns = 0;    // server time on those requests (payload decoded to reply queued)
};

// EVENTS: the namespace's stored/removed notifications, from a cursor.
struct KvEvent {
  enum class Kind : uint8_t { kStored = 1, kRemoved = 2 } kind = Kind::kStored;
  std::string key;
  std::string parent;  // stored events of chained blocks
};
struct EventsResult {
  uint64_t next = 0;  // the cursor to poll from next
  uint64_t lost = 0;  // events no longer held (~0: unknown, e.g. after a server restart)
  std::vector<KvEvent> events;
};

// Completion of an asynchronous call: the status the synchronous call would return.
using KvCallback = std::function<void(const KvStatus&)>;

struct ConnectOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7450;
  std::string access_key;
  std::string secret_key;
  uint32_t timeout_ms = 60000;  // a request unanswered this long breaks the connection; 0 = none
  // TLS (a server started with --kv-tls): the server's certificate must
  // chain to tls_ca_file (PEM; "" = the system's trust store) and name
  // tls_server_name ("" = host).
  bool tls = false;
  std::string tls_ca_file;
  std::string tls_server_name;
};

class KvClient {
 public:
  // Connects and authenticates (HELLO, then AUTH with
  // HMAC-SHA256(secret, "strata-kv-v1" || nonce || access_key)).
  static KvStatus Connect(const ConnectOptions& options, std::unique_ptr<KvClient>* out);

  ~KvClient();
  KvClient(const KvClient&) = delete;
  KvClient& operator=(const KvClient&) = delete;

  KvStatus Ping();
  KvStatus OpenNamespace(const NamespaceDescriptor& descriptor, NamespaceInfo* info);

  // Length of the longest prefix of `keys` that is stored. No side effects.
  KvStatus Lookup(uint64_t ns, std::span<const KeyView> keys, uint32_t* prefix_len);
  // Whether each key is stored (one bit per key, one round trip). No side effects.
  KvStatus LookupEach(uint64_t ns, std::span<const KeyView> keys, std::vector<bool>* present);

  // Reads blocks (or ranges of them) into the items' destinations; each item
  // gets its own status. The returned status is not OK only when the whole
  // request failed.
  KvStatus Get(uint64_t ns, std::span<GetItem> items);

  // Stores blocks put-if-absent; each item gets kOk or kExists (or an error).
  // The data must stay untouched until Put returns.
  KvStatus Put(uint64_t ns, std::span<PutItem> items);

  KvStatus Delete(uint64_t ns, std::span<const KeyView> keys, std::vector<KvCode>* statuses);
  KvStatus Pin(uint64_t ns, uint32_t ttl_ms, std::span<const KeyView> keys,
               std::vector<KvCode>* statuses);
  KvStatus Unpin(uint64_t ns, std::span<const KeyView> keys, std::vector<KvCode>* statuses);
  KvStatus Stats(uint64_t ns, NamespaceStats* stats);
  // Up to max_events events from cursor `since` (0: the oldest held).
  KvStatus Events(uint64_t ns, uint64_t since, uint32_t max_events, EventsResult* out);

  // Asynchronous forms: the request is sent before the call returns; `done`
  // runs once, on the receiver thread (or at once on a bad argument or a
  // closed connection). Items, keys, outputs and destination buffers must
  // stay alive and untouched until then.
  void GetAsync(uint64_t ns, std::span<GetItem> items, KvCallback done);
  void PutAsync(uint64_t ns, std::span<PutItem> items, KvCallback done);
  void LookupAsync(uint64_t ns, std::span<const KeyView> keys, uint32_t* prefix_len,
                   KvCallback done);
  void LookupEachAsync(uint64_t ns, std::span<const KeyView> keys, std::vector<bool>* present,
                       KvCallback done);
  // Requests sent and not yet answered.
  size_t in_flight() const;
  // Waits for an asynchronous call's completion, which `done(wait)` reports
  // (blocking up to `wait` for it), reading replies on this thread while no
  // other thread does: a caller that waits right away gets the synchronous
  // call's latency (no hand-off through the receiver thread).
  void WaitUntil(const std::function<bool(std::chrono::microseconds)>& done);

  // Closes the connection; later calls return kClosed.
  void Close();
  bool connected() const;

  class Impl;  // opaque (client/kv_client.cc)

 private:
  explicit KvClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::kv
