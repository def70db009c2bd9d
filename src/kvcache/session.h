// One KV connection: answers its frames in order. Resumable between frames:
// a worker thread calls ServeTurn when the connection is readable; the turn
// serves what is available and returns when the input runs dry, or after a
// turn's worth of frames once nothing is buffered (the server then parks the
// connection in its poll set, with the buffers released; input already there
// wakes a worker again at once, behind the connections already waiting).
// Internal to the server.
#pragma once

#include <deque>
#include <future>
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
// HELLO/AUTH/PING make sense (an access key of at most kMaxAccessKeyBytes);
// after it, a non-PUT request (keys, ranges) is bounded by kMaxBatchItems
// items of at most 81 bytes (a 64-byte key and a range).
inline constexpr size_t kMaxAccessKeyBytes = 256;
inline constexpr uint64_t kPreAuthMaxPayloadBytes = 2 + kMaxAccessKeyBytes;
inline constexpr uint64_t kMaxRequestPayloadBytes = 64ull << 20;
// Frames a connection may send before it is authenticated (HELLO, AUTH, PING).
inline constexpr int kPreAuthMaxFrames = 16;

class Session {
 public:
  enum class Turn {
    kPark,  // nothing buffered: wait in the poll set for input (which may be there already)
    kEnd,   // the peer closed the connection between frames
  };

  Session(const ServerContext* ctx, Connection* conn);
  // Serves frames while input is available. Before authentication it never
  // waits for the client: a frame (small) is served once wholly arrived, a
  // partial one stays buffered across the park. After it, a frame's rest is
  // waited for (the transport's I/O timeout bounds each wait). An error means
  // the connection must end (protocol violation, too many failed AUTHs,
  // transport or storage failure mid-frame, a stall).
  Result<Turn> ServeTurn();
  bool authenticated() const { return authenticated_; }
  // Bytes of buffer this session holds now (tests: parked ones hold none).
  size_t buffered_capacity() const;

 private:
  using WireStatus = proto::WireStatus;
  enum class Gather { kFrame, kPartial, kEnd };

  // Input. The buffer is allocated when needed (small before authentication)
  // and released when the connection parks with nothing buffered.
  void EnsureInput(size_t capacity);
  Result<size_t> ReadMore();  // appends to the buffer; 0 at end of stream
  void ReleaseBuffers();
  Result<Gather> GatherPreAuthFrame();
  Status ServeFrame();

  // Input, buffered. Before blocking on the socket, pending replies are flushed.
  Status ReadExact(char* dst, size_t n);
  // Up to `max` bytes as a view into the input buffer (valid until the next read).
  Result<std::string_view> ReadView(size_t max);
  Status Skip(uint64_t n);
  // Output: replies are gathered and sent when the input runs dry.
  void Reply(const proto::FrameHeader& req, WireStatus status, std::string_view payload = {});
  Status Flush();

  Status Dispatch(const proto::FrameHeader& h);
  Status DispatchOp(const proto::FrameHeader& h);
  Status HandleHello(const proto::FrameHeader& h, std::string_view payload);
  Status HandleAuth(const proto::FrameHeader& h, std::string_view payload);
  // Replies DENIED and ends the connection while its address backs off.
  Status RefuseIfThrottled(const proto::FrameHeader& h);
  void HandleOpen(const proto::FrameHeader& h, std::string_view payload);
  void HandleLookup(const proto::FrameHeader& h, std::string_view payload);
  void HandleLookupEach(const proto::FrameHeader& h, std::string_view payload);
  void CountLookup(Namespace* ns, size_t keys, uint64_t start_ns);
  void HandleEvents(const proto::FrameHeader& h, std::string_view payload);
  Status HandleGet(const proto::FrameHeader& h, std::string_view payload);
  Status ReadBlockMetas(Namespace* ns, const proto::GetRequest& req,
                        const std::vector<bool>& needs_meta, std::vector<proto::GetResult>* results,
                        std::string* metas);
  // An encrypted namespace: items whose block's key cannot be had change
  // status here (session_blocks.cc).
  Status CheckBlockKeys(Namespace* ns, const proto::GetRequest& req,
                        std::vector<proto::GetResult>* results, std::vector<bool>* needs_meta,
                        uint64_t* payload_len);
  Status SendGetReply(const proto::FrameHeader& h, Namespace* ns, const proto::GetRequest& req,
                      const std::vector<proto::GetResult>& results, std::string_view metas,
                      uint64_t payload_len);
  Status HandlePut(const proto::FrameHeader& h);
  void HandleDelete(const proto::FrameHeader& h, std::string_view payload);
  void HandleStats(const proto::FrameHeader& h, std::string_view payload);
  void HandlePin(const proto::FrameHeader& h, std::string_view payload, bool pin);

  // PUT. A block received and being committed on the commit pool.
  struct PendingPut {
    size_t index;  // its item's place in the frame
    const proto::PutItem* item;
    std::future<WireStatus> done;
  };
  // Commits one session may have in flight (bounds its open data files).
  static constexpr size_t kMaxCommitsInFlight = 16;
  // Takes in item `index`, whose bytes come next on the wire: sets its status,
  // or queues its commit in *pending. A non-OK Status means the connection
  // failed (the block was aborted, never visible).
  Status PutOne(Namespace* ns, size_t index, const proto::PutItem& item,
                std::deque<PendingPut>* pending, std::vector<WireStatus>* statuses);
  Result<WireStatus> ReceiveBlock(Namespace* ns, const proto::PutItem& item,
                                  std::unique_ptr<object::ObjectWriter>* writer);
  // Waits for a pending commit and records its outcome.
  void FinishPut(Namespace* ns, PendingPut& p, std::vector<WireStatus>* statuses);
  // Gives back an item's reserved bytes; a stored block enters the index.
  void ReleaseReservation(Namespace* ns, const proto::PutItem& item, bool stored);
  Namespace* Lookup(uint64_t handle) const;
  // The namespace of a decoded request's handle; on failure it has already
  // replied (INVALID when !decoded, NOT_FOUND for an unknown handle): null.
  // Also DENIED when the handle lacks the right the request needs.
  enum class Need { kRead, kWrite };
  Namespace* Resolve(const proto::FrameHeader& h, bool decoded, uint64_t handle, Need need);
  // Decodes a (ns, keys) request and resolves its handle; on failure it has
  // already replied (INVALID / NOT_FOUND) and returns null.
  Namespace* DecodeKeys(const proto::FrameHeader& h, std::string_view payload,
                        proto::KeysRequest* req, Need need);

  const ServerContext* ctx_;
  Connection* conn_;
  // The operation being dispatched: the namespace it named and the bytes it
  // moved (its payload, the block bytes served), for the energy figures.
  mutable Namespace* op_ns_ = nullptr;
  uint64_t op_bytes_ = 0;
  std::unique_ptr<char[]> in_;
  size_t in_cap_ = 0, in_pos_ = 0, in_end_ = 0;
  std::string out_;
  std::string payload_;
  std::unique_ptr<char[]> chunk_;  // GET: block bytes on their way out

  // Authentication state.
  std::string access_key_;  // from HELLO
  std::string nonce_;       // outstanding challenge ("" if none)
  bool authenticated_ = false;
  int pre_auth_frames_ = 0;
  uint32_t auth_failures_ = 0;
  std::string address_;  // the peer's, for the AUTH back-off
  std::string identity_;

  std::vector<Namespace*> handles_;  // handle h is handles_[h - 1]
  std::vector<NamespaceRights> rights_;  // of handles_[i], from its latest OPEN_NAMESPACE
  std::unordered_map<Namespace*, uint64_t> handle_of_;
};

}  // namespace strata::kvcache
