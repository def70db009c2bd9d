// KvClient::Impl: the pipelined connection (kv_connection.h).
#include "kv_connection.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace strata::kv {

using detail::Closed;
using detail::FromWire;
using detail::ProtocolError;
using proto::WireStatus;

namespace {

// Replies to requests other than GET and EVENTS are small; anything larger is a broken server.
constexpr uint64_t kMaxSmallReplyBytes = 64 << 10;

}  // namespace

KvClient::Impl::Impl(std::unique_ptr<Stream> stream, uint32_t timeout_ms)
    : stream_(std::move(stream)), timeout_ms_(timeout_ms) {
  receiver_ = std::thread([this] { ReceiveLoop(); });
}

KvClient::Impl::~Impl() {
  Close();
  if (receiver_.joinable()) receiver_.join();  // closed from a callback: join here
}

bool KvClient::Impl::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_.ok();
}

size_t KvClient::Impl::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void KvClient::Impl::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return;
    closing_ = true;
  }
  stream_->Shutdown();  // the receiver sees the end and fails what is in flight
  // From a callback (the receiver thread itself) the loop ends once it
  // returns, and the destructor joins it.
  if (receiver_.get_id() == std::this_thread::get_id()) return;
  if (receiver_.joinable()) receiver_.join();
  std::lock_guard<std::mutex> reader(reader_mu_);  // a synchronous caller reading has left
  std::lock_guard<std::mutex> sender(send_mu_);    // and a sender sending
  stream_->Close();
}

void KvClient::Impl::Send(Op op, std::string head, std::vector<iovec> extra, ReplyReader reader, KvCallback done) {
  KvStatus refused;
  {
    std::lock_guard<std::mutex> send_lock(send_mu_);
    uint64_t id = next_id_++;
    // The request id sits at offset 8 of the frame header.
    for (int i = 0; i < 8; ++i) head[8 + i] = static_cast<char>(id >> (8 * i));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (broken_.ok() && !closing_) {
        // Registered before it is sent: the reply may come back at once.
        pending_.emplace(id, Pending{op, std::move(reader), std::move(done), Clock::now()});
      } else {
        refused = KvStatus(KvCode::kClosed, broken_.ok() ? "connection is closed"
                                                         : "connection is closed: " +
                                                               broken_.ToString());
      }
    }
    if (refused.ok()) {
      std::vector<iovec> iov;
      iov.reserve(extra.size() + 1);
      iov.push_back({head.data(), head.size()});
      for (const iovec& v : extra) {
        if (v.iov_len) iov.push_back(v);
      }
      KvStatus s = SendIov(iov);
      if (s.ok()) return;
      refused = s;  // Break below fails this request with the others
    }
  }
  if (refused.code() == KvCode::kClosed) {
    done(refused);
  } else {
    Break(refused);
  }
}

void KvClient::Impl::Small(Op op, std::string_view payload, uint64_t max_reply, std::function<KvStatus(std::string_view)> parse, KvCallback done) {
  std::string head = FrameStart(op, payload.size());
  head.append(payload);
  Send(
      op, std::move(head), {},
      [op, max_reply, parse = std::move(parse)](Impl& impl, const proto::FrameHeader& h) {
        if (h.payload_len > max_reply) {
          return ProtocolError(std::string(proto::OpName(op)) + " reply of " +
                               std::to_string(h.payload_len) + " bytes");
        }
        std::string reply(h.payload_len, '\0');
        KvStatus s = impl.RecvExact(reply.data(), reply.size());
        if (!s.ok()) return s;
        return parse ? parse(reply) : KvStatus::OK();
      },
      std::move(done));
}

std::string KvClient::Impl::FrameStart(Op op, uint64_t payload_len) {
  proto::FrameHeader h;
  h.op = op;
  h.payload_len = payload_len;  // request_id is filled in by Send
  std::string out;
  out.reserve(proto::kFrameHeaderBytes + 64);
  proto::AppendFrameHeader(h, &out);
  return out;
}

KvStatus KvClient::Impl::RecvExact(void* buf, size_t n) { return stream_->RecvExact(buf, n); }

KvStatus KvClient::Impl::Discard(uint64_t n) {
  char scratch[64 << 10];
  while (n > 0) {
    size_t chunk = std::min<uint64_t>(n, sizeof(scratch));
    KvStatus s = RecvExact(scratch, chunk);
    if (!s.ok()) return s;
    n -= chunk;
  }
  return KvStatus::OK();
}

void KvClient::Impl::Break(KvStatus why) {
  std::map<uint64_t, Pending> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_.ok()) broken_ = why;
    why = broken_;
    failed.swap(pending_);
  }
  stream_->Shutdown();
  for (auto& [id, p] : failed) p.done(why);
}

KvStatus KvClient::Impl::WaitForReply() {
  while (true) {
    // Idle, it wakes now and then to see requests sent since (a timeout is
    // late by at most this much).
    int wait_ms = timeout_ms_ > 0 ? static_cast<int>(std::min<uint32_t>(1000, timeout_ms_)) : 1000;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) return Closed();
      if (timeout_ms_ > 0 && !pending_.empty()) {
        auto oldest = pending_.begin()->second.sent;  // ids rise with send order
        auto age = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - oldest);
        if (age.count() >= timeout_ms_) {
          return KvStatus(KvCode::kIoError,
                          "no reply for " + std::to_string(timeout_ms_) + " ms: timed out");
        }
        wait_ms = static_cast<int>(std::min<int64_t>(wait_ms, timeout_ms_ - age.count()));
      }
    }
    int r = stream_->Readable(wait_ms);
    if (r > 0) return KvStatus::OK();
    if (r < 0 && errno != EINTR) {
      return KvStatus(KvCode::kIoError, std::string("poll: ") + std::strerror(errno));
    }
  }
}

bool KvClient::Impl::ReceiveOne() {
  char buf[proto::kFrameHeaderBytes];
  KvStatus s = RecvExact(buf, sizeof(buf));
  if (!s.ok()) {
    bool closing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing = closing_;
    }
    Break(closing ? Closed() : s);
    return false;
  }
  proto::FrameHeader h;
  if (proto::DecodeFrameHeader(std::string_view(buf, sizeof(buf)), &h) !=
      proto::HeaderCheck::kOk) {
    Break(ProtocolError("bad reply header"));
    return false;
  }
  Pending p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(h.request_id);
    if (it == pending_.end() || it->second.op != h.op) {
      s = ProtocolError("reply to request " + std::to_string(h.request_id) + " (" +
                        std::string(proto::OpName(h.op)) + ") that is not in flight");
    } else {
      p = std::move(it->second);
      pending_.erase(it);
    }
  }
  if (s.ok() && static_cast<uint8_t>(h.status) > proto::kMaxWireStatus) {
    s = ProtocolError("unknown reply status");
  }
  KvStatus result;
  if (s.ok() && h.status != WireStatus::kOk) {
    // The whole request failed: skip its payload (normally empty).
    if (h.payload_len > kMaxSmallReplyBytes) {
      s = ProtocolError("oversized error reply");
    } else {
      s = Discard(h.payload_len);
    }
    result = KvStatus(FromWire(h.status),
                      std::string(proto::OpName(h.op)) + " refused by the server");
  } else if (s.ok()) {
    s = p.reader(*this, h);
  }
  if (!s.ok()) {
    // Broken first: a caller woken by done() must see connected() false.
    Break(s);
    if (p.done) p.done(s);
    return false;
  }
  p.done(result);
  return true;
}

void KvClient::Impl::ReceiveLoop() {
  while (true) {
    KvStatus s = WaitForReply();
    if (!s.ok()) {
      std::lock_guard<std::mutex> reader(reader_mu_);
      bool closing;
      {
        std::lock_guard<std::mutex> lock(mu_);
        closing = closing_;
      }
      Break(closing ? Closed() : s);
      return;
    }
    std::lock_guard<std::mutex> reader(reader_mu_);
    if (stream_->Readable(0) <= 0) continue;  // a synchronous caller read it meanwhile
    if (!ReceiveOne()) return;
  }
}

void KvClient::Impl::WaitUntil(const std::function<bool(std::chrono::microseconds)>& done) {
  using namespace std::chrono_literals;
  while (!done(0us)) {
    std::unique_lock<std::mutex> reader(reader_mu_, std::try_to_lock);
    if (!reader.owns_lock()) {
      if (done(200us)) return;  // another thread is reading; it may dispatch ours
      continue;
    }
    if (done(0us)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!broken_.ok() || closing_) break;
    }
    if (!ReceiveOne()) break;
  }
  // Broken or closed: Break fails every call in flight; wait for ours.
  while (!done(1000000us)) {
  }
}

KvStatus KvClient::Impl::Await(std::future<KvStatus>& f) {
  WaitUntil([&f](std::chrono::microseconds d) { return f.wait_for(d) == std::future_status::ready; });
  return f.get();
}

}  // namespace strata::kv
