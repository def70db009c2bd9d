// strata KV-cache client: one authenticated TCP connection to a strata KV
// listener (protocol: docs/formats/kv-protocol.md).
//
// Every call is a batch on a namespace handle and costs one round trip.
// Data never passes through an intermediate buffer in this library:
//   - Get() reads the response's status table, then recv()s each block
//     straight into the caller's destination buffer;
//   - Put() sends the request header and the caller's block memory with one
//     scatter send (sendmsg/iovec), never copying the blocks.
//
// A KvClient is thread-safe: calls on one client are serialized (one request
// in flight per connection; use one client per thread for parallelism). Every
// request carries a fresh request id that the response must echo, so the
// wire format is ready for pipelining. After an I/O or protocol error the
// connection is unusable (calls return kClosed); namespace handles belong to
// the connection, so reconnect and reopen.
//
// Errors are values (KvStatus), never exceptions.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::kv {

// Result codes. 0..8 are the wire status codes (kv-protocol.md "Status
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
  kIoError = 100,         // socket error or timeout; the connection is closed
  kProtocolError = 101,   // the server's reply did not parse; the connection is closed
  kClosed = 102,          // the connection was closed by an earlier error or Close()
  kBufferTooSmall = 103,  // a GET reply item was longer than its destination buffer
};

// Stable upper-case name ("OK", "NOT_FOUND", ..., "BUFFER_TOO_SMALL").
const char* KvCodeName(KvCode code);

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
};

struct NamespaceInfo {
  uint64_t handle = 0;               // valid on this connection only
  std::array<uint8_t, 32> digest{};  // SHA-256 of the descriptor's identity fields
  std::string bucket;                // S3 bucket holding the blocks
};

// Keys are 16..32 opaque bytes (content hashes chained over the token prefix).
using KeyView = std::string_view;

struct GetItem {
  // In.
  KeyView key;
  uint64_t offset = 0;  // byte offset within the block
  uint64_t length = 0;  // bytes wanted; 0 = to the end of the block
  void* dst = nullptr;  // where the bytes go
  uint64_t dst_capacity = 0;
  // Out.
  KvCode status = KvCode::kOk;
  uint64_t bytes = 0;  // bytes written into dst (when status is kOk)
};

struct PutItem {
  // In.
  KeyView key;
  KeyView parent;  // the previous block of the chain; empty = chain root
  const void* data = nullptr;
  uint64_t length = 0;
  // Out: kOk (stored), kExists, kTooLarge, kUnavailable.
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
};

struct ConnectOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9100;
  std::string access_key;
  std::string secret_key;
  uint32_t timeout_ms = 60000;  // per send/recv; 0 = none
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

  // Closes the connection; later calls return kClosed.
  void Close();
  bool connected() const;

 private:
  class Impl;
  explicit KvClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::kv
