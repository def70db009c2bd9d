// One KV connection: reads frames in a loop and answers each, in order.
// Internal to the server.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kvcache/proto/frame.h"
#include "kvcache/server.h"
#include "kvcache/transport.h"

namespace strata::kvcache {

// Payload limits enforced before any allocation: before authentication only
// HELLO/AUTH/PING make sense; after it, a non-PUT request (keys, ranges) is
// bounded by kMaxBatchItems items of at most 49 bytes.
inline constexpr uint64_t kPreAuthMaxPayloadBytes = 2 + proto::kMaxStrBytes;
inline constexpr uint64_t kMaxRequestPayloadBytes = 64ull << 20;

class Session {
 public:
  Session(const ServerContext* ctx, Connection* conn);
  // Serves requests until the peer closes (OK) or the connection must end
  // (a protocol violation or a transport/storage failure mid-frame).
  Status Run();

 private:
  using WireStatus = proto::WireStatus;

  // Input, buffered. Before blocking on the socket, pending replies are flushed.
  Status ReadExact(char* dst, size_t n);
  // Up to `max` bytes as a view into the input buffer (valid until the next read).
  Result<std::string_view> ReadView(size_t max);
  Status Skip(uint64_t n);
  // Output: replies are gathered and sent when the input runs dry.
  void Reply(const proto::FrameHeader& req, WireStatus status, std::string_view payload = {});
  Status Flush();

  Status Dispatch(const proto::FrameHeader& h);
  void HandleHello(const proto::FrameHeader& h, std::string_view payload);
  void HandleAuth(const proto::FrameHeader& h, std::string_view payload);
  void HandleOpen(const proto::FrameHeader& h, std::string_view payload);
  void HandleLookup(const proto::FrameHeader& h, std::string_view payload);
  Status HandleGet(const proto::FrameHeader& h, std::string_view payload);
  Status SendGetReply(const proto::FrameHeader& h, Namespace* ns, const proto::GetRequest& req,
                      const std::vector<proto::GetResult>& results, uint64_t payload_len);
  Status HandlePut(const proto::FrameHeader& h);
  void HandleDelete(const proto::FrameHeader& h, std::string_view payload);
  void HandleStats(const proto::FrameHeader& h, std::string_view payload);
  void HandlePin(const proto::FrameHeader& h, std::string_view payload, bool pin);

  // Stores one PUT item whose bytes come next on the wire; a non-OK Status
  // means the connection failed (the block was aborted, never visible).
  Result<WireStatus> PutOne(Namespace* ns, const proto::PutItem& item);
  Result<WireStatus> WriteBlock(Namespace* ns, const proto::PutItem& item);
  Namespace* Lookup(uint64_t handle) const;
  // Decodes a (ns, keys) request and resolves its handle; on failure it has
  // already replied (INVALID / NOT_FOUND) and returns null.
  Namespace* DecodeKeys(const proto::FrameHeader& h, std::string_view payload,
                        proto::KeysRequest* req);

  const ServerContext* ctx_;
  Connection* conn_;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_end_ = 0;
  std::string out_;
  std::string payload_;
  std::unique_ptr<char[]> chunk_;  // GET: block bytes on their way out

  // Authentication state.
  std::string access_key_;  // from HELLO
  std::string nonce_;       // outstanding challenge ("" if none)
  bool authenticated_ = false;
  std::string identity_;

  std::vector<Namespace*> handles_;  // handle h is handles_[h - 1]
  std::unordered_map<Namespace*, uint64_t> handle_of_;
};

}  // namespace strata::kvcache
