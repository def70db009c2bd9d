#include "http/server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "common/thread_wait.h"
#include "http/exchange.h"
#include "http/request_parse.h"
#include "http/timed_stream.h"
#include "http/worker_pool.h"

namespace strata::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// Why a connection waits on its event loop.
enum class ParkReason {
  kIdle,         // between requests: closed quietly after the idle timeout
  kPartialHead,  // a request head has started: RequestTimeout at its deadline
};

// Who owns a connection. A thread that parks it sets kArming, arms it in
// epoll, then kParked; from kParked only the loop's leader takes it back
// (kOwned), when epoll reports it. So at any time one thread uses it.
enum ConnState : int { kOwned, kArming, kParked };

struct Connection : std::enable_shared_from_this<Connection> {
  Connection(int fd_in, Loop* loop_in, size_t buffer_limit, std::atomic<int>* open_count)
      : fd(fd_in), loop(loop_in), buffer(buffer_limit), open_count_(open_count) {}
  ~Connection() {
    if (fd >= 0) ::close(fd);
    Uncount();
  }
  // Out of the open-connection count (at close, not when freed).
  void Uncount() {
    if (counted_) open_count_->fetch_sub(1, std::memory_order_relaxed);
    counted_ = false;
  }
  int fd;                       // -1 once closed
  Loop* loop;                   // the event loop it parks on
  beast::flat_buffer buffer;    // bounded: a head, a chunk header, read-ahead
  std::optional<Parser> parser; // the request head being read, kept across parks
  std::unique_ptr<SSL, SslFree> ssl;  // TLS listeners: the session (handshake on first read)
  Clock::time_point head_deadline;
  bool expired = false;         // parked with a partial head past its deadline
  std::string remote;
  // Written by the thread that parks it before it is kParked (release), read
  // by the loop's leader (and its sweep) after seeing kParked (acquire).
  ParkReason parked_for = ParkReason::kIdle;
  Clock::time_point deadline;
  std::atomic<int> state{kOwned};
  bool registered = false;      // in its loop's epoll set (owner only)

 private:
  std::atomic<int>* open_count_;
  bool counted_ = true;
};

// An event loop: an epoll set holding the listener (shared by every loop,
// EPOLLEXCLUSIVE), the stop signal and its parked connections, each
// registered EPOLLONESHOT so that a readiness is delivered once and the
// connection then has one owner until it is armed again. One pool thread at a
// time leads it (waits on it and serves what it reports); a leader that would
// wait on anything but a core hands the loop to another thread first.
struct Loop {
  int epfd = -1;
  // Every open connection of the loop, for the deadline sweep.
  std::mutex conns_mu;
  std::unordered_map<Connection*, std::shared_ptr<Connection>> conns;
  // Closed connections, freed by the leader before its next epoll_wait: an
  // event fetched before a connection left the set may still name it.
  std::vector<std::shared_ptr<Connection>> closed;
  // The leader's state (passed on with the loop under the pool's lock).
  std::array<epoll_event, 64> events{};
  int count = 0;
  int next = 0;
  Clock::time_point next_sweep{};
  bool accept_paused = false;
  Clock::time_point accept_resume{};
  ~Loop() {
    if (epfd >= 0) ::close(epfd);
  }
};

namespace {

// Keep-alive clients usually send the next request right away: a pool
// worker waits this long (blocked in poll, no CPU) before parking the
// connection on its loop.
constexpr int kKeepAliveLingerMs = 1;
// Back-off before accepting again after running out of file descriptors.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(50);
// Pipelined requests a leader serves in a row before passing the
// connection to the pool (the other connections on its loop wait meanwhile).
constexpr int kMaxInlineInARow = 16;
// Connections accepted per listener readiness before the loop looks at the rest.
constexpr int kAcceptBatch = 64;

// What a worker does with a connection after serving it.
enum class After { kPark, kClosed };

char kListenTag;  // epoll_event.data.ptr of the listener
char kStopTag;    // ... and of the stop eventfd

class ServerImpl final : public Server, private PoolHost {
 public:
  ServerImpl(ServerOptions options, Handler handler, ErrorRenderer on_error)
      : options_(std::move(options)), handler_(std::move(handler)), on_error_(std::move(on_error)) {}

  ~ServerImpl() override {
    Stop();
    loops_.clear();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    if (spare_fd_ >= 0) ::close(spare_fd_);
  }

  Status Listen() {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(options_.host, ec);
    if (ec) return InvalidArgument("bad listen address " + options_.host);
    tcp::endpoint ep(addr, static_cast<unsigned short>(options_.port));
    const std::string where = options_.host + ":" + std::to_string(options_.port);
    listen_fd_ = ::socket(ep.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (listen_fd_ < 0 ||
        ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        ::bind(listen_fd_, ep.data(), static_cast<socklen_t>(ep.size())) != 0 ||
        ::listen(listen_fd_, 1024) != 0) {
      return Unavailable("listen on " + where + ": " + std::strerror(errno));
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      return Unavailable("listen on " + where + ": " + std::strerror(errno));
    }
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    // One descriptor held in reserve: when the process runs out, it is given
    // up to accept and close the waiting connection, so the listener neither
    // spins on EMFILE nor leaves clients hanging.
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd_ < 0) return Unavailable(std::string("eventfd: ") + std::strerror(errno));
    int loops = options_.event_loops > 0
                    ? options_.event_loops
                    : static_cast<int>(std::clamp(4 * std::thread::hardware_concurrency(), 4u, 64u));
    for (int i = 0; i < loops; ++i) {
      auto loop = std::make_unique<Loop>();
      loop->epfd = ::epoll_create1(EPOLL_CLOEXEC);
      epoll_event stop{};
      stop.events = EPOLLIN;
      stop.data.ptr = &kStopTag;
      if (loop->epfd < 0 || ::epoll_ctl(loop->epfd, EPOLL_CTL_ADD, stop_fd_, &stop) != 0 ||
          !WatchListener(*loop)) {
        return Unavailable(std::string("epoll: ") + std::strerror(errno));
      }
      loops_.push_back(std::move(loop));
    }
    const auto sweep = std::chrono::milliseconds(
        std::min(options_.header_timeout_ms, options_.idle_timeout_ms) / 8);
    sweep_interval_ = std::clamp<Clock::duration>(sweep, std::chrono::milliseconds(5),
                                                  std::chrono::milliseconds(500));
    std::vector<Loop*> loops_led;
    for (auto& l : loops_) loops_led.push_back(l.get());
    pool_.Start(loops_led);
    return Status::OK();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    if (stop_fd_ >= 0) {
      uint64_t one = 1;  // level-triggered in every loop: each leader sees it
      [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof(one));
    }
    pool_.Stop();
    if (listen_fd_ >= 0) ::close(listen_fd_);  // the kernel completes no more handshakes
    listen_fd_ = -1;
    for (auto& loop : loops_) {  // every thread is gone: the connections go
      std::lock_guard lock(loop->conns_mu);
      loop->conns.clear();
    }
  }

 private:
  bool WatchListener(Loop& loop) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;  // one loop woken per connection, not all
    ev.data.ptr = &kListenTag;
    return ::epoll_ctl(loop.epfd, EPOLL_CTL_ADD, listen_fd_, &ev) == 0;
  }

  // ---- the event loops ---------------------------------------------------------

  // Leads `loop` until this thread hands it on (it then returns once the
  // request that made it wait is done) or the server stops.
  void Lead(Loop& loop) override {
    while (WorkerPool::Leads(loop)) {
      if (loop.next == loop.count) {
        if (stopped_.load(std::memory_order_relaxed)) break;
        WaitForEvents(loop);
        continue;
      }
      const epoll_event ev = loop.events[loop.next++];
      if (ev.data.ptr == &kStopTag) break;
      if (ev.data.ptr == &kListenTag) {
        AcceptSome(loop);
        continue;
      }
      Ready(static_cast<Connection*>(ev.data.ptr));
    }
  }

  // Between batches: the deadline sweep, the accept back-off, then epoll.
  void WaitForEvents(Loop& loop) {
    std::vector<std::shared_ptr<Connection>> closed;
    {
      std::lock_guard lock(loop.conns_mu);
      closed.swap(loop.closed);
    }
    closed.clear();
    auto now = Clock::now();
    if (now >= loop.next_sweep) {
      Sweep(loop, now);
      loop.next_sweep = now + sweep_interval_;
    }
    if (loop.accept_paused && now >= loop.accept_resume) {
      loop.accept_paused = !WatchListener(loop);
      if (loop.accept_paused) loop.accept_resume = now + kAcceptBackoff;
    }
    auto wake = loop.next_sweep;
    if (loop.accept_paused) wake = std::min(wake, loop.accept_resume);
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    int n = ::epoll_wait(loop.epfd, loop.events.data(), static_cast<int>(loop.events.size()),
                         static_cast<int>(std::max<int64_t>(ms, 0)));
    if (n < 0) {
      if (errno != EINTR) STRATA_LOG("http: epoll_wait: %s", std::strerror(errno));
      n = 0;
    }
    loop.count = n;
    loop.next = 0;
  }

  // Parked connections past their deadline are re-armed for writing too, so
  // epoll reports them at once and Ready, the one place that takes a parked
  // connection back, expires them: idle ones are closed, a partial head goes
  // to the pool to be answered RequestTimeout. (A parker still arming is
  // kArming, not kParked: left for the next sweep.)
  void Sweep(Loop& loop, Clock::time_point now) {
    std::lock_guard lock(loop.conns_mu);
    for (auto& [p, c] : loop.conns) {
      if (c->state.load(std::memory_order_acquire) != kParked || c->deadline > now) continue;
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLOUT | EPOLLONESHOT;
      ev.data.ptr = c.get();
      ::epoll_ctl(loop.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    }
  }

  // Accepts what is waiting (a batch at most). Each connection goes to the
  // next loop in turn: which loop's epoll wakes for the listener is the
  // kernel's choice (often the same one), and a connection stays with its
  // loop for its life.
  void AcceptSome(Loop& loop) {
    for (int i = 0; i < kAcceptBatch && WorkerPool::Leads(loop); ++i) {
      sockaddr_storage sa{};
      socklen_t len = sizeof(sa);
      int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
          ShedOneConnection();
          // This loop stops watching the listener for a while (a readiness
          // it cannot act on would wake it at once, again and again).
          ::epoll_ctl(loop.epfd, EPOLL_CTL_DEL, listen_fd_, nullptr);
          loop.accept_paused = true;
          loop.accept_resume = Clock::now() + kAcceptBackoff;
          return;
        }
        if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM) continue;
        STRATA_LOG("http: accept: %s", std::strerror(err));
        return;
      }
      int open = open_connections_.fetch_add(1, std::memory_order_relaxed) + 1;
      Loop* home = loops_[next_loop_.fetch_add(1, std::memory_order_relaxed) % loops_.size()].get();
      auto conn = std::make_shared<Connection>(fd, home, options_.max_header_bytes + kBufferSlackBytes,
                                               &open_connections_);
      if (open > options_.max_connections) {
        RefuseOverloaded(*conn);
        continue;  // its destructor closes it
      }
      if (options_.tls) {
        conn->ssl.reset(options_.tls->NewSession(fd));
        if (!conn->ssl) continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      tcp::endpoint ep;
      if (len <= ep.capacity()) {
        std::memcpy(ep.data(), &sa, len);
        ep.resize(len);
        boost::system::error_code ignored;
        conn->remote = ep.address().to_string(ignored) + ":" + std::to_string(ep.port());
      }
      {
        std::lock_guard lock(home->conns_mu);
        home->conns.emplace(conn.get(), conn);
      }
      Park(conn, ParkReason::kIdle);
    }
  }

  // Out of descriptors: use the spare one to accept and drop the connection
  // at the head of the backlog, then take the spare back.
  void ShedOneConnection() {
    std::lock_guard lock(spare_mu_);
    STRATA_LOG("accept: out of file descriptors (%d connections open); shedding",
               open_connections_.load());
    if (spare_fd_ < 0) return;
    ::close(spare_fd_);
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  // Over the connection cap: a best-effort answer (never blocking the loop)
  // and close. A TLS client would read plain text as a broken record: it is
  // closed without one.
  void RefuseOverloaded(Connection& conn) {
    if (options_.tls) return;
    TimedStream stream(conn.fd, 0);
    Writer out(stream, /*close=*/true);
    on_error_(ProtocolError::kOverloaded, out);
  }

  // Parks the connection on its loop until it has bytes to read (or its
  // deadline: the idle timeout, or the head deadline of a partial head).
  // From here on the loop owns it.
  void Park(const std::shared_ptr<Connection>& conn, ParkReason reason) {
    const auto now = Clock::now();
    if (reason == ParkReason::kPartialHead && conn->head_deadline <= now) {
      conn->expired = true;  // past its deadline already: answered now
      Enqueue(conn);
      return;
    }
    conn->expired = false;
    conn->parked_for = reason;
    conn->deadline = reason == ParkReason::kPartialHead
                         ? conn->head_deadline
                         : now + std::chrono::milliseconds(options_.idle_timeout_ms);
    const int op = conn->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    conn->registered = true;
    conn->state.store(kArming, std::memory_order_release);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.ptr = conn.get();
    if (::epoll_ctl(conn->loop->epfd, op, conn->fd, &ev) != 0) {
      STRATA_LOG("http: epoll_ctl: %s", std::strerror(errno));
      conn->state.store(kOwned, std::memory_order_relaxed);  // no event can come
      Close(*conn, false);
      return;
    }
    // The last touch: once kParked, the leader may take it (and close it).
    conn->state.store(kParked, std::memory_order_release);
  }

  // Epoll reported a parked connection (bytes, a hang-up, or the sweep's
  // wake-up past its deadline): the leader owns it now.
  void Ready(Connection* c) {
    int st = c->state.load(std::memory_order_acquire);
    while (true) {
      if (st == kOwned) return;  // not parked: nothing to take (cannot happen)
      if (st == kArming) {       // its parker is between epoll_ctl and kParked
        std::this_thread::yield();
        st = c->state.load(std::memory_order_acquire);
        continue;
      }
      if (c->state.compare_exchange_weak(st, kOwned, std::memory_order_acq_rel)) break;
    }
    std::shared_ptr<Connection> conn = c->shared_from_this();
    if (Clock::now() >= conn->deadline) {
      if (conn->parked_for == ParkReason::kIdle) {
        Close(*conn, false);
      } else {
        conn->expired = true;  // the pool answers RequestTimeout (ReadHead)
        Enqueue(std::move(conn));
      }
      return;
    }
    if (conn->ssl) {  // TLS handshakes and records are work for the pool
      Enqueue(std::move(conn));
      return;
    }
    ServeOnLoop(conn);
  }

  // A GET or HEAD without a body is served by the leader itself: no
  // hand-off, and one epoll wait covers every connection that is ready.
  // Should it wait on anything but a core (a client not reading, a helper's
  // next piece, a large reply turning bulk), the leader hands its loop on
  // first (WaitBegins, TurnsBulk) and finishes as a pool worker. Every other
  // request may write and sync, copy, or wait on a body: the pool's. So is
  // everything once the pool has used its reserve of threads for hand-offs
  // (HandOverLocked), where a hand-off could find no thread and the loop
  // would wait with its leader.
  void ServeOnLoop(const std::shared_ptr<Connection>& conn) {
    TimedStream stream(conn->fd, options_.io_timeout_ms);
    for (int served = 0;; ++served) {
      After after = After::kClosed;
      ParkReason reason = ParkReason::kIdle;
      if (!ReadHead(*conn, stream, &after, &reason)) {
        if (after == After::kPark) Park(conn, reason);
        return;
      }
      if (served >= kMaxInlineInARow || !ServedOnLoop(*conn->parser) || pool_.AtReserve()) {
        Enqueue(conn);
        return;
      }
      if (!Exchange(*conn, stream)) return;
      const bool buffered = HasBufferedRequest(*conn);
      if (!WorkerPool::Leading()) {  // handed on: this thread is a worker now
        if (buffered) {
          Enqueue(conn);
        } else {
          Park(conn, ParkReason::kIdle);
        }
        return;
      }
      if (!buffered) {
        Park(conn, ParkReason::kIdle);
        return;
      }
    }
  }

  static bool ServedOnLoop(const Parser& parser) {
    const bhttp::verb method = parser.get().method();
    return (method == bhttp::verb::get || method == bhttp::verb::head) && parser.is_done();
  }

  // ---- the pool's work (PoolHost) -----------------------------------------------

  void Enqueue(std::shared_ptr<Connection> conn) { pool_.Enqueue(std::move(conn)); }

  // A connection from the pool's queue.
  void Serve(std::shared_ptr<Connection> conn) override {
    ParkReason reason = ParkReason::kIdle;
    if (Serve(*conn, &reason) != After::kPark) return;
    if (reason == ParkReason::kIdle && HasBufferedRequest(*conn)) {
      // After bulk work Serve stops between requests: the next one is here
      // already, and parking on the socket would not see it. (A partial head
      // parks: the loop waits for its bytes.)
      Enqueue(std::move(conn));
    } else {
      Park(conn, reason);
    }
  }

  // ---- serving requests ----------------------------------------------------------

  // Bytes of a next request already read (or decrypted) and waiting: parking
  // on the socket would not see them.
  static bool HasBufferedRequest(Connection& conn) {
    return conn.buffer.size() > 0 || (conn.ssl && SSL_pending(conn.ssl.get()) > 0);
  }

  // Reads as much of a request head as has arrived, without blocking: a head
  // still incomplete goes back to its loop (kPartialHead) with its parser and
  // bytes, so a client trickling a head holds no worker.
  // Returns true when the head is complete; otherwise *after says what next.
  bool ReadHead(Connection& conn, TimedStream& stream, After* after, ParkReason* reason) {
    if (!conn.parser) {
      conn.parser.emplace();
      ConfigureRequestParser(*conn.parser, options_.max_header_bytes);
      conn.head_deadline = Clock::now() + std::chrono::milliseconds(options_.header_timeout_ms);
    }
    if (conn.expired) {  // parked with a partial head past its deadline
      STRATA_LOG("request head from %s timed out", conn.remote.c_str());
      *after = RespondAndClose(conn, stream, ProtocolError::kTimeout);
      return false;
    }
    boost::system::error_code ec;
    stream.SetNonBlocking(true);
    bhttp::read_header(stream, conn.buffer, *conn.parser, ec);
    stream.SetNonBlocking(false);
    if (!ec) return true;
    if (ec == asio::error::would_block) {
      bool started = conn.buffer.size() > 0 || conn.parser->got_some();
      *reason = started ? ParkReason::kPartialHead : ParkReason::kIdle;
      if (!started) conn.parser.reset();  // an idle connection has no head deadline
      *after = After::kPark;
      return false;
    }
    if ((ec == asio::error::eof || ec == bhttp::error::end_of_stream) &&
        conn.buffer.size() == 0 && !conn.parser->got_some()) {
      *after = Close(conn, false);
      return false;
    }
    if (ec == asio::error::connection_aborted && conn.ssl) {
      // A failed TLS handshake (TLS < 1.2, no shared cipher, not TLS at all)
      // or a broken record: nothing can be answered on this connection.
      STRATA_LOG("TLS from %s failed: closed", conn.remote.c_str());
      *after = Close(conn, false);
      return false;
    }
    ProtocolError kind = ProtocolError::kMalformed;
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      kind = ProtocolError::kHeaderTooLarge;
    } else if (ec == asio::error::eof || ec == asio::error::connection_reset ||
               ec == bhttp::error::partial_message) {
      *after = Close(conn, false);
      return false;
    }
    STRATA_LOG("bad request head from %s: %s", conn.remote.c_str(), ec.message().c_str());
    *after = RespondAndClose(conn, stream, kind);
    return false;
  }

  After RespondAndClose(Connection& conn, TimedStream& stream, ProtocolError kind) {
    Writer out(stream, /*close=*/true);
    on_error_(kind, out);
    return Close(conn, true);
  }

  // Serves the request whose head conn.parser holds. False when the
  // connection was closed; true when it may carry another request.
  bool Exchange(Connection& conn, TimedStream& stream) {
    Parser& parser = *conn.parser;
    Request req = http::MakeRequest(parser, conn.remote);
    req.secure = conn.ssl != nullptr;
    if (auto framing = http::CheckFraming(req)) {
      STRATA_LOG("refusing request framing from %s", conn.remote.c_str());
      RespondAndClose(conn, stream, *framing);
      return false;
    }
    const std::string* expect = req.Header("expect");
    bool expect_continue = expect && beast::iequals(*expect, "100-continue");
    if (expect_continue && parser.is_done()) {
      // An empty body with Expect: 100-continue. RFC 9110 lets us answer
      // at once, but botocore < 1.43.77 (Debian 12's) then misreads the
      // connection (boto/botocore#3755); the interim response costs nothing.
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      iovec iov{const_cast<char*>(kContinue), sizeof(kContinue) - 1};
      boost::system::error_code send_ec;
      if (!stream.SendAll(&iov, 1, send_ec)) {
        Close(conn, false);
        return false;
      }
      expect_continue = false;
    }
    BodySource body(parser, stream, conn.buffer, expect_continue,
                    BodyRate{options_.body_grace_ms, options_.min_body_bytes_per_s});
    Writer out(stream, !parser.keep_alive(), &body);
    try {
      handler_(req, body, out);
    } catch (const std::exception& e) {
      STRATA_LOG("handler threw on %s %s: %s", req.method.c_str(), req.target.c_str(), e.what());
    }
    if (!out.started()) {
      out.CloseAfterResponse();
      out.Start(500, {}, 0).IgnoreError();
    }
    bool body_done = body.done() && !body.failed();
    conn.parser.reset();
    if (out.close() || !out.complete() || !body_done) {
      Close(conn, !body_done);
      return false;
    }
    return true;
  }

  // A pool worker serves requests on the connection while they keep coming;
  // kPark (with *reason) to wait on its loop for more, kClosed when closed.
  After Serve(Connection& conn, ParkReason* reason) {
    TimedStream stream(conn.fd, options_.io_timeout_ms, conn.ssl.get());
    while (true) {
      After after = After::kClosed;
      if (!ReadHead(conn, stream, &after, reason)) return after;
      if (!Exchange(conn, stream)) return After::kClosed;
      if (WorkerPool::TurnedBulk()) {  // after bulk work the pool decides whether this thread goes on
        *reason = ParkReason::kIdle;
        return After::kPark;
      }
      if (HasBufferedRequest(conn)) continue;  // pipelined, or decrypted and not yet read
      pollfd p{conn.fd, POLLIN, 0};
      if (::poll(&p, 1, kKeepAliveLingerMs) == 1) continue;
      *reason = ParkReason::kIdle;
      return After::kPark;
    }
  }

  // Closes the connection (its owner does). With linger, first stops sending
  // and drains what the client still sends, for a bounded time and byte
  // count, so it can read our response instead of getting a reset.
  After Close(Connection& conn, bool linger) {
    int fd = conn.fd;
    if (conn.ssl) {  // close_notify, best effort (non-blocking); its errors stay here
      ERR_clear_error();
      SSL_shutdown(conn.ssl.get());
      ERR_clear_error();
    }
    if (linger) {
      ScopedWait waiting;  // draining the client's bytes: another worker may run
      ::shutdown(fd, SHUT_WR);
      char sink[16384];
      size_t drained = 0;
      const auto deadline = Clock::now() + std::chrono::milliseconds(options_.linger_ms);
      while (drained < options_.max_linger_bytes) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd, POLLIN, 0};
        if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) break;
        ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n <= 0) break;
        drained += static_cast<size_t>(n);
      }
    }
    conn.parser.reset();
    // Out of the epoll set before the descriptor goes (a copy of it in a
    // child process would otherwise keep it there).
    ::epoll_ctl(conn.loop->epfd, EPOLL_CTL_DEL, fd, nullptr);  // ENOENT where not in it
    conn.registered = false;
    ::close(fd);
    conn.fd = -1;
    conn.Uncount();
    {
      std::lock_guard lock(conn.loop->conns_mu);
      auto it = conn.loop->conns.find(&conn);
      if (it != conn.loop->conns.end()) {
        conn.loop->closed.push_back(std::move(it->second));
        conn.loop->conns.erase(it);
      }
    }
    return After::kClosed;
  }

  ServerOptions options_;
  Handler handler_;
  ErrorRenderer on_error_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  std::mutex spare_mu_;
  int spare_fd_ = -1;
  std::vector<std::unique_ptr<Loop>> loops_;
  Clock::duration sweep_interval_{};
  std::atomic<int> open_connections_{0};
  int port_ = 0;
  std::atomic<size_t> next_loop_{0};  // the loop of the next accepted connection
  WorkerPool pool_{*this, options_.worker_threads, options_.max_worker_threads};
  std::atomic<bool> stopped_{false};
};

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Handler handler,
                                              ErrorRenderer on_error) {
  // sendfile (ResponseWriter::SendFile) has no MSG_NOSIGNAL: a peer that
  // closed mid-body must cost an EPIPE, not the process. Only where nobody
  // chose a handler for SIGPIPE.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }
  auto server = std::make_unique<ServerImpl>(std::move(options), std::move(handler),
                                             std::move(on_error));
  RETURN_IF_ERROR(server->Listen());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace strata::http
