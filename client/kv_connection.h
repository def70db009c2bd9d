// The connection under KvClient (internal to client/): one TCP stream
// carrying any number of requests at once. Senders (any thread) register a
// request under its id and send it whole under the send lock; replies are
// read by whoever holds the reader role (a synchronous caller waiting for
// its own reply, else the receiver thread), matched by id, handed to their
// request's reply reader and completed. The per-operation encoding and
// decoding is in kv_client.cc.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kv_stream.h"
#include "kvcache/proto/frame.h"
#include "strata/kv_client.h"

namespace strata::kv {

namespace proto = strata::kvcache::proto;

namespace detail {

inline KvCode FromWire(proto::WireStatus s) { return static_cast<KvCode>(s); }
inline KvStatus ProtocolError(std::string m) {
  return KvStatus(KvCode::kProtocolError, std::move(m));
}
inline KvStatus Closed() { return KvStatus(KvCode::kClosed, "connection is closed"); }

}  // namespace detail

class KvClient::Impl {
 public:
  using Op = proto::Op;
  using Clock = std::chrono::steady_clock;

  // Reads the OK reply's payload (exactly h.payload_len bytes) from the
  // stream; a non-OK status means the stream is no longer in step.
  using ReplyReader = std::function<KvStatus(Impl&, const proto::FrameHeader&)>;

  Impl(std::unique_ptr<Stream> stream, uint32_t timeout_ms);
  ~Impl();

  bool connected() const;
  size_t in_flight() const;

  void Close();

  // Registers a request and sends it: `head` (frame header + payload start),
  // then `extra` (PUT blocks) in one scatter send. `done` runs exactly once.
  void Send(Op op, std::string head, std::vector<iovec> extra, ReplyReader reader, KvCallback done);

  // A small request/reply; `parse` gets the OK reply's payload (<= max_reply).
  void Small(Op op, std::string_view payload, uint64_t max_reply, std::function<KvStatus(std::string_view)> parse, KvCallback done);

  static std::string FrameStart(Op op, uint64_t payload_len);

  KvStatus RecvExact(void* buf, size_t n);

  KvStatus Discard(uint64_t n);

 private:
  struct Pending {
    Op op;
    ReplyReader reader;
    KvCallback done;
    Clock::time_point sent;
  };

  KvStatus SendIov(std::vector<iovec>& iov) { return stream_->SendIov(iov); }

  // The stream is out of step (or closed): fail everything in flight and
  // every later call.
  void Break(KvStatus why);

  // Waits for the next reply header. While requests are in flight it waits
  // at most timeout_ms past the oldest one's send; idle, it waits forever.
  KvStatus WaitForReply();

  // Reads and dispatches one reply; the caller holds reader_mu_. False once
  // the stream is broken (everything in flight has been failed).
  bool ReceiveOne();

  // The receiver thread: reads replies whenever no synchronous caller is
  // reading them itself (Await), so that asynchronous calls complete.
  void ReceiveLoop();

 public:
  // Waits for a synchronous call's result. The caller reads replies itself
  // while nobody else does (the same thread sends and receives: no hand-off
  // to the receiver thread on the latency path), dispatching whatever
  // replies come first to their requests.
  KvStatus Await(std::future<KvStatus>& f);
  // The same for any completion: done(wait) says whether it completed,
  // blocking up to `wait` for it (KvClient::WaitUntil).
  void WaitUntil(const std::function<bool(std::chrono::microseconds)>& done);

 private:
  const std::unique_ptr<Stream> stream_;
  const uint32_t timeout_ms_;
  std::mutex send_mu_;  // one request on the wire at a time; guards next_id_
  uint64_t next_id_ = 1;
  mutable std::mutex mu_;  // guards the fields below
  std::map<uint64_t, Pending> pending_;
  KvStatus broken_;
  bool closing_ = false;
  std::mutex reader_mu_;  // held by whoever reads replies (receiver thread or Await)
  std::thread receiver_;
};


}  // namespace strata::kv
