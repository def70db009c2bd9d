#include "http/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <optional>
#include <deque>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/encoding.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "common/thread_wait.h"
#include "http/request_parse.h"
#include "http/timed_stream.h"

namespace strata::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

const std::string* Request::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

const QueryString& Request::Query() const {
  if (!query_) query_ = QueryString::Parse(raw_query);
  return *query_;
}

bool IsSafeHeaderValue(std::string_view value) {
  for (char ch : value) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

bool IsSafeHeader(std::string_view name, std::string_view value) {
  // RFC 9110 token characters, as a table: every response header passes here.
  static constexpr auto kToken = [] {
    std::array<bool, 256> t{};
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
    return t;
  }();
  if (name.empty()) return false;
  for (char c : name) {
    if (!kToken[static_cast<unsigned char>(c)]) return false;
  }
  return IsSafeHeaderValue(value);
}

namespace {

// The reason phrase from Beast's table of RFC 9110 statuses ("Status" for a
// code it does not know; clients read only the number).
std::string_view Reason(int status) {
  bhttp::status s = bhttp::int_to_status(static_cast<unsigned>(status));
  if (s == bhttp::status::unknown) return "Status";
  boost::beast::string_view reason = bhttp::obsolete_reason(s);
  return std::string_view(reason.data(), reason.size());
}

using Parser = RequestParser;
using Clock = std::chrono::steady_clock;

// Why a connection waits on the network thread.
enum class ParkReason {
  kIdle,         // between requests: closed quietly after the idle timeout
  kPartialHead,  // a request head has started: RequestTimeout at its deadline
};

struct Connection {
  Connection(tcp::socket s, size_t buffer_limit, std::atomic<int>* open_count)
      : socket(std::move(s)), timer(socket.get_executor()), buffer(buffer_limit),
        open_count_(open_count) {}
  ~Connection() { open_count_->fetch_sub(1, std::memory_order_relaxed); }
  tcp::socket socket;
  asio::steady_timer timer;     // the park deadline (network thread only)
  beast::flat_buffer buffer;    // bounded: a head, a chunk header, read-ahead
  std::optional<Parser> parser; // the request head being read, kept across parks
  std::unique_ptr<SSL, SslFree> ssl;  // TLS listeners: the session (handshake on first read)
  Clock::time_point head_deadline;
  ParkReason parked_for = ParkReason::kIdle;
  bool expired = false;         // the park deadline passed
  std::string remote;

 private:
  std::atomic<int>* open_count_;
};

// Keep-alive clients usually send the next request right away: wait this
// long (blocked in poll, no CPU) before handing the connection back to the
// network thread, which would cost two thread switches.
constexpr int kKeepAliveLingerMs = 1;
// Back-off before accepting again after running out of file descriptors.
constexpr int kAcceptBackoffMs = 50;
// A worker thread beyond ServerOptions::worker_threads ends after this long
// without work.
constexpr auto kSpareWorkerIdle = std::chrono::seconds(10);

// Minimum body rate: a body that has delivered `bytes` after `start` may
// take until start + grace + bytes / rate for its next bytes.
struct BodyRate {
  int grace_ms;
  uint64_t min_bytes_per_s;
};

class BodySource : public ByteSource {
 public:
  BodySource(Parser& parser, TimedStream& stream, beast::flat_buffer& buffer, bool expect_continue,
             BodyRate rate)
      : parser_(parser), stream_(stream), buffer_(buffer), expect_continue_(expect_continue),
        rate_(rate) {
    // Content-Length bodies bypass Beast's parser: it would copy them through
    // its flat buffer, which stays small (512-byte reads, measured). Chunked
    // bodies still go through the parser, which decodes the framing.
    if (!parser_.chunked() && parser_.content_length()) {
      direct_ = true;
      remaining_ = *parser_.content_length();
    }
  }

  Result<size_t> Read(char* buf, size_t n) override {
    if (done() || n == 0) return size_t{0};
    if (expect_continue_) {
      expect_continue_ = false;
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      iovec iov{const_cast<char*>(kContinue), sizeof(kContinue) - 1};
      boost::system::error_code ec;
      if (!stream_.SendAll(&iov, 1, ec)) return Aborted("sending 100 Continue: " + ec.message());
    }
    if (!started_) {
      started_ = true;
      start_ = Clock::now();
    }
    if (rate_.min_bytes_per_s > 0) {
      auto allowed = std::chrono::milliseconds(rate_.grace_ms) +
                     std::chrono::milliseconds(received_ * 1000 / rate_.min_bytes_per_s);
      stream_.SetDeadline(start_ + allowed);
    }
    Result<size_t> r = direct_ ? ReadDirect(buf, n) : ReadParsed(buf, n);
    stream_.SetDeadline(std::nullopt);
    if (r.ok()) received_ += *r;
    return r;
  }
  bool failed() const { return failed_; }
  bool done() const { return direct_ ? remaining_ == 0 : parser_.is_done(); }

 private:
  Result<size_t> ReadDirect(char* buf, size_t n) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(n, remaining_));
    if (buffer_.size() > 0) {  // bytes that arrived together with the head
      size_t take = std::min(want, buffer_.size());
      std::memcpy(buf, buffer_.data().data(), take);
      buffer_.consume(take);
      remaining_ -= take;
      return take;
    }
    boost::system::error_code ec;
    size_t got = stream_.read_some(asio::buffer(buf, want), ec);
    if (ec) return Fail(ec);
    remaining_ -= got;
    return got;
  }

  Result<size_t> ReadParsed(char* buf, size_t n) {
    boost::system::error_code ec;
    size_t got = ReadParsedBody(stream_, buffer_, parser_, buf, n, ec);
    if (ec) return Fail(ec);
    return got;
  }

  Status Fail(const boost::system::error_code& ec) {
    failed_ = true;
    if (ec == asio::error::timed_out) {
      return DeadlineExceeded("request body: client stalled or below the minimum rate");
    }
    if (ec == asio::error::eof || ec == bhttp::error::partial_message ||
        ec == asio::error::connection_reset) {
      return Aborted("request body: connection closed early");
    }
    return InvalidArgument("request body: " + ec.message());
  }

  Parser& parser_;
  TimedStream& stream_;
  beast::flat_buffer& buffer_;
  bool expect_continue_;
  BodyRate rate_;
  bool started_ = false;
  Clock::time_point start_;
  uint64_t received_ = 0;
  bool direct_ = false;
  uint64_t remaining_ = 0;
  bool failed_ = false;
};

class Writer : public ResponseWriter {
 public:
  // `body` (optional) tells whether the request body was consumed; if not,
  // the connection cannot be reused and the response says so.
  Writer(TimedStream& stream, bool close, const BodySource* body = nullptr)
      : stream_(stream), close_(close), body_(body) {}

  Status Start(int status, const Headers& headers, uint64_t content_length,
               bool send_body = true) override {
    if (started_) return Internal("response started twice");
    // The last line of defence against header injection: nothing with a CR,
    // LF or other control character goes on the wire (inputs are checked
    // earlier; this catches what slipped through).
    for (const auto& [k, v] : headers) {
      if (!IsSafeHeader(k, v)) {
        STRATA_LOG("refusing to send unsafe response header '%s'", k.c_str());
        return Internal("unsafe response header " + k);
      }
    }
    started_ = true;
    remaining_ = send_body ? content_length : 0;
    if (body_ && !body_->done()) close_ = true;
    head_ = "HTTP/1.1 " + std::to_string(status) + " " + std::string(Reason(status)) + "\r\n";
    for (const auto& [k, v] : headers) {
      head_.append(k).append(": ").append(v).append("\r\n");
    }
    head_.append("Content-Length: ").append(std::to_string(content_length)).append("\r\n");
    if (close_) head_.append("Connection: close\r\n");
    head_.append("\r\n");
    if (remaining_ == 0) return Flush({});
    return Status::OK();
  }

  Status Write(std::string_view data) override {
    if (!started_) return Internal("write before start");
    if (data.size() > remaining_) return Internal("response body longer than Content-Length");
    remaining_ -= data.size();
    return Flush(data);
  }

  bool can_send_file() const override { return !stream_.tls(); }
  Status SendFile(int fd, uint64_t offset, uint64_t n) override {
    if (!started_) return Internal("write before start");
    if (n > remaining_) return Internal("response body longer than Content-Length");
    if (n == 0) return Status::OK();
    if (!head_.empty()) RETURN_IF_ERROR(Flush({}, /*more=*/true));
    remaining_ -= n;
    boost::system::error_code ec;
    if (!stream_.SendFile(fd, offset, n, ec)) {
      failed_ = true;
      return Aborted("sending response: " + ec.message());
    }
    return Status::OK();
  }
  bool started() const override { return started_; }
  void CloseAfterResponse() override { close_ = true; }
  bool close() const { return close_; }
  bool complete() const { return started_ && remaining_ == 0 && head_.empty() && !failed_; }

 private:
  // Sends the pending head (if any) together with data in one sendmsg.
  Status Flush(std::string_view data, bool more = false) {
    iovec iov[2] = {{head_.data(), head_.size()}, {const_cast<char*>(data.data()), data.size()}};
    boost::system::error_code ec;
    bool ok = stream_.SendAll(iov, 2, ec, more);
    head_.clear();
    if (!ok) {
      failed_ = true;
      return Aborted("sending response: " + ec.message());
    }
    return Status::OK();
  }

  TimedStream& stream_;
  bool close_;
  const BodySource* body_;
  bool started_ = false;
  bool failed_ = false;
  uint64_t remaining_ = 0;
  std::string head_;
};

// What a worker does with a connection after serving it.
enum class After { kPark, kClosed };

class ServerImpl final : public Server, private ThreadWaitObserver {
 public:
  ServerImpl(ServerOptions options, Handler handler, ErrorRenderer on_error)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        on_error_(std::move(on_error)),
        acceptor_(ioc_),
        accept_backoff_(ioc_) {}

  ~ServerImpl() override {
    Stop();
    if (spare_fd_ >= 0) ::close(spare_fd_);
  }

  Status Listen() {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(options_.host, ec);
    if (ec) return InvalidArgument("bad listen address " + options_.host);
    tcp::endpoint ep(addr, static_cast<unsigned short>(options_.port));
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(1024, ec);
    if (ec) return Unavailable("listen on " + options_.host + ":" + std::to_string(options_.port) +
                               ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    // One descriptor held in reserve: when the process runs out, it is given
    // up to accept and close the waiting connection, so the listener neither
    // spins on EMFILE nor leaves clients hanging.
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    // The pool's settings before the first connection can reach them.
    options_.worker_threads = std::max(options_.worker_threads, 1);
    options_.max_worker_threads = std::max(options_.max_worker_threads, options_.worker_threads);
    base_nice_ = ThisThreadNice();
    {
      std::lock_guard lock(mu_);
      threads_ = options_.worker_threads;
    }
    for (int i = 0; i < options_.worker_threads; ++i) StartWorker();
    Accept();
    net_thread_ = std::thread([this] {
      NameThisThread("http-net");
      ioc_.run();
    });
    return Status::OK();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    asio::post(ioc_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
    if (net_thread_.joinable()) net_thread_.join();
    std::unordered_map<std::thread::id, std::thread> workers;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      queue_.clear();
      workers.swap(workers_);  // no thread is added once stopping_ is set
    }
    cv_.notify_all();
    for (auto& [id, t] : workers) t.join();
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
        if (ec == asio::error::no_descriptors || ec.value() == ENFILE ||
            ec == asio::error::no_buffer_space || ec == asio::error::no_memory) {
          ShedOneConnection();
          accept_backoff_.expires_after(std::chrono::milliseconds(kAcceptBackoffMs));
          accept_backoff_.async_wait([this](boost::system::error_code) {
            if (acceptor_.is_open()) Accept();
          });
          return;
        }
        Accept();
        return;
      }
      int open = open_connections_.fetch_add(1, std::memory_order_relaxed) + 1;
      auto conn = std::make_shared<Connection>(
          std::move(socket), options_.max_header_bytes + kBufferSlackBytes, &open_connections_);
      if (open > options_.max_connections) {
        RefuseOverloaded(*conn);
      } else if (options_.tls && !StartTls(*conn)) {
        boost::system::error_code ignored;
        conn->socket.close(ignored);
      } else if (!SetNonBlocking(*conn)) {
        boost::system::error_code ignored;
        conn->socket.close(ignored);
      } else {
        boost::system::error_code ignored;
        conn->socket.set_option(tcp::no_delay(true), ignored);
        auto ep = conn->socket.remote_endpoint(ignored);
        if (!ignored) conn->remote = ep.address().to_string() + ":" + std::to_string(ep.port());
        ParkNow(conn, ParkReason::kIdle);
      }
      Accept();
    });
  }

  // Out of descriptors: use the spare one to accept and drop the connection
  // at the head of the backlog, then take the spare back.
  void ShedOneConnection() {
    STRATA_LOG("accept: out of file descriptors (%d connections open); shedding", 
               open_connections_.load());
    if (spare_fd_ < 0) return;
    ::close(spare_fd_);
    int fd = ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  // O_NONBLOCK on the socket itself, not left to Asio (whose async_wait sets
  // it in some versions only): TimedStream's waits, and sendfile (which has no
  // MSG_DONTWAIT) answering EAGAIN instead of blocking past every timeout.
  static bool SetNonBlocking(Connection& conn) {
    int fd = conn.socket.native_handle();
    int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ((flags & O_NONBLOCK) || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
  }

  // A TLS session on the socket, whose reads and writes then never block
  // (the handshake happens on the first read, on a worker).
  bool StartTls(Connection& conn) {
    if (!SetNonBlocking(conn)) return false;
    int fd = conn.socket.native_handle();
    conn.ssl.reset(options_.tls->NewSession(fd));
    return conn.ssl != nullptr;
  }

  // Over the connection cap: a best-effort answer (never blocking the
  // network thread) and close. A TLS client would read plain text as a
  // broken record: it is closed without one.
  void RefuseOverloaded(Connection& conn) {
    if (options_.tls) {
      boost::system::error_code ec;
      conn.socket.close(ec);
      return;
    }
    TimedStream stream(conn.socket.native_handle(), 0);
    Writer out(stream, /*close=*/true);
    on_error_(ProtocolError::kOverloaded, out);
    boost::system::error_code ec;
    conn.socket.close(ec);
  }

  // From a worker: park on the network thread.
  void Park(std::shared_ptr<Connection> conn, ParkReason reason) {
    asio::post(ioc_, [this, conn, reason] { ParkNow(conn, reason); });
  }

  // On the network thread: wait until the connection has bytes to read or
  // its deadline passes (idle timeout, or the head deadline of a partial
  // head), then hand it to a worker.
  void ParkNow(const std::shared_ptr<Connection>& conn, ParkReason reason) {
    conn->parked_for = reason;
    conn->expired = false;
    if (reason == ParkReason::kPartialHead) {
      conn->timer.expires_at(conn->head_deadline);
    } else {
      conn->timer.expires_after(std::chrono::milliseconds(options_.idle_timeout_ms));
    }
    conn->timer.async_wait([conn](boost::system::error_code ec) {
      if (ec) return;  // cancelled: the connection became readable
      conn->expired = true;
      boost::system::error_code ignored;
      conn->socket.cancel(ignored);
    });
    conn->socket.async_wait(tcp::socket::wait_read, [this, conn](boost::system::error_code ec) {
      conn->timer.cancel();
      if (ec && !conn->expired) return;  // closed or server stopping
      if (conn->expired && conn->parked_for == ParkReason::kIdle) {
        boost::system::error_code ignored;
        conn->socket.close(ignored);
        return;
      }
      Enqueue(conn);
    });
  }

  void Enqueue(std::shared_ptr<Connection> conn) {
    std::unique_lock lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(conn));
    if (!WakeWorkerLocked()) return;
    lock.unlock();
    StartWorker();
  }

  // The worker pool. Under mu_: threads_ alive, idle_ of them waiting for
  // work (signaled_ of those woken and not yet up), waiting_ of them in a
  // ScopedWait (on their client, or a helper's next piece). The others are
  // running, and a connection is taken from the queue only while fewer than
  // worker_threads run: a thread that waits is replaced by another (up to
  // max_worker_threads), so the requests behind it are not held up by a
  // reader that does not read.
  int RunningLocked() const { return threads_ - (idle_ - signaled_) - waiting_ - bulk_; }

  bool CanTakeLocked() const {
    // Called by an idle thread: it is not among the running.
    return !queue_.empty() && threads_ - idle_ - waiting_ - bulk_ < options_.worker_threads;
  }

  // Work is queued: wakes an idle thread for it, if one may run. True when a
  // new thread is wanted instead: threads_ counts it already, and the caller
  // starts it with StartWorker once it has let go of mu_ (creating a thread
  // takes the process's memory-map lock, which page faults elsewhere hold:
  // not a wait for everyone queued behind mu_).
  bool WakeWorkerLocked() {
    if (stopping_ || queue_.empty() || RunningLocked() >= options_.worker_threads) return false;
    if (idle_ > signaled_) {
      ++signaled_;
      cv_.notify_one();
      return false;
    }
    if (threads_ >= options_.max_worker_threads) return false;
    ++threads_;
    return true;
  }

  // Starts a worker threads_ already counts (not holding mu_), and joins
  // those that ended.
  void StartWorker() {
    std::thread t;
    try {
      t = std::thread([this] {
        NameThisThread("http-worker");
        // A thread inherits its creator's priority: one started by a thread
        // lowered for bulk work (a retiring one) starts at the pool's own.
        if (ThisThreadNice() != base_nice_) SetThisThreadNice(base_nice_);
        SetThreadWaitObserver(this);
        Work();
      });
    } catch (const std::system_error& e) {  // out of threads (pids cgroup, RLIMIT_NPROC)
      STRATA_LOG("http: could not start a worker thread: %s", e.what());
      std::lock_guard lock(mu_);
      --threads_;
      return;
    }
    std::vector<std::thread> ended;
    std::unique_lock lock(mu_);
    if (stopping_) {  // Stop took the list already: this one is joined here
      lock.unlock();
      t.join();
      return;
    }
    const std::thread::id self = std::this_thread::get_id();
    for (auto id = finished_.begin(); id != finished_.end();) {
      auto it = *id == self ? workers_.end() : workers_.find(*id);
      if (it == workers_.end()) {  // this thread, or one not yet listed: later
        ++id;
        continue;
      }
      ended.push_back(std::move(it->second));
      workers_.erase(it);
      id = finished_.erase(id);
    }
    workers_.emplace(t.get_id(), std::move(t));
    lock.unlock();
    for (auto& e : ended) e.join();  // they have left mu_ for good
  }

  // A worker waits on its client or on a helper (common/thread_wait.h).
  void WaitBegins() override {
    std::unique_lock lock(mu_);
    ++waiting_;
    if (!WakeWorkerLocked()) return;
    lock.unlock();
    StartWorker();
  }
  void WaitEnds() override {
    std::lock_guard lock(mu_);
    --waiting_;
  }
  // The worker's request is bulk bytes from now on, at a lowered priority:
  // it no longer counts as running, and the thread ends with the request.
  void TurnsBulk() override {
    tls_bulk_ = true;
    std::unique_lock lock(mu_);
    ++bulk_;
    if (!WakeWorkerLocked()) return;
    lock.unlock();
    StartWorker();
  }

  void Work() {
    std::unique_lock lock(mu_);
    while (true) {
      ++idle_;
      bool expired = false;
      while (!stopping_ && !CanTakeLocked()) {
        if (threads_ > options_.worker_threads) {
          expired = cv_.wait_for(lock, kSpareWorkerIdle) == std::cv_status::timeout;
        } else {
          cv_.wait(lock);
        }
        if (signaled_ > 0) --signaled_;
        if (expired && !CanTakeLocked() && threads_ > options_.worker_threads) break;
        expired = false;
      }
      --idle_;
      if (stopping_ || expired) {
        --threads_;
        finished_.push_back(std::this_thread::get_id());
        return;
      }
      std::shared_ptr<Connection> conn = std::move(queue_.front());
      queue_.pop_front();
      const bool start = WakeWorkerLocked();  // more queued: another thread, if one may run
      lock.unlock();
      if (start) StartWorker();
      ParkReason reason = ParkReason::kIdle;
      After after = Serve(*conn, &reason);
      const bool was_bulk = tls_bulk_;  // the request turned bulk (TurnsBulk) and ended
      bool retire = false;
      if (was_bulk) {
        tls_bulk_ = false;
        retire = !EndThisThreadBulk();  // a priority it cannot raise back: this thread ends
      }
      if (after == After::kPark) {
        if (reason == ParkReason::kIdle && HasBufferedRequest(*conn)) {
          // After bulk work Serve stops between requests: the next one is here
          // already, and parking on the socket would not see it. (A partial
          // head parks: the network thread waits for its bytes.)
          Enqueue(std::move(conn));
        } else {
          Park(std::move(conn), reason);
        }
      }
      conn.reset();
      lock.lock();
      if (was_bulk) --bulk_;
      if (retire) {
        --threads_;
        const bool replace = WakeWorkerLocked();
        lock.unlock();
        // Listed as ended only once done with StartWorker, so no thread ever
        // joins one that is itself joining.
        if (replace) StartWorker();
        lock.lock();
        finished_.push_back(std::this_thread::get_id());
        return;
      }
    }
  }

  // Bytes of a next request already read (or decrypted) and waiting: parking
  // on the socket would not see them.
  static bool HasBufferedRequest(Connection& conn) {
    return conn.buffer.size() > 0 || (conn.ssl && SSL_pending(conn.ssl.get()) > 0);
  }

  // Reads as much of a request head as has arrived, without blocking: a head
  // still incomplete goes back to the network thread (kPartialHead) with its
  // parser and bytes, so a client trickling a head holds no worker.
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

  // Serves requests on the connection while they keep coming; kPark (with
  // *reason) to wait on the network thread for more, kClosed when closed.
  After Serve(Connection& conn, ParkReason* reason) {
    int fd = conn.socket.native_handle();
    TimedStream stream(fd, options_.io_timeout_ms, conn.ssl.get());
    while (true) {
      After after = After::kClosed;
      if (!ReadHead(conn, stream, &after, reason)) return after;
      Parser& parser = *conn.parser;
      Request req = http::MakeRequest(parser, conn.remote);
      req.secure = conn.ssl != nullptr;
      if (auto framing = http::CheckFraming(req)) {
        STRATA_LOG("refusing request framing from %s", conn.remote.c_str());
        return RespondAndClose(conn, stream, *framing);
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
        if (!stream.SendAll(&iov, 1, send_ec)) return Close(conn, false);
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
      if (out.close() || !out.complete() || !body_done) return Close(conn, !body_done);
      if (tls_bulk_) {  // after bulk work the pool decides whether this thread goes on
        *reason = ParkReason::kIdle;
        return After::kPark;
      }
      if (HasBufferedRequest(conn)) continue;  // pipelined, or decrypted and not yet read
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, kKeepAliveLingerMs) == 1) continue;
      *reason = ParkReason::kIdle;
      return After::kPark;
    }
  }

  // Closes the connection. With linger, first stops sending and drains what
  // the client still sends, for a bounded time and byte count, so it can
  // read our response instead of getting a reset.
  After Close(Connection& conn, bool linger) {
    int fd = conn.socket.native_handle();
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
    boost::system::error_code ec;
    conn.socket.close(ec);
    return After::kClosed;
  }

  ServerOptions options_;
  Handler handler_;
  ErrorRenderer on_error_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_backoff_;
  int spare_fd_ = -1;
  std::atomic<int> open_connections_{0};
  int port_ = 0;
  std::thread net_thread_;
  std::mutex mu_;  // the worker pool's state and queue
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Connection>> queue_;
  std::unordered_map<std::thread::id, std::thread> workers_;
  std::vector<std::thread::id> finished_;  // ended, to be joined
  int threads_ = 0;
  int idle_ = 0;
  int signaled_ = 0;
  int waiting_ = 0;
  int bulk_ = 0;  // turned bulk: lowered for the rest of their request
  int base_nice_ = 0;  // the workers' priority (Listen's thread's)
  bool stopping_ = false;
  static thread_local bool tls_bulk_;  // this worker's request turned bulk
  std::atomic<bool> stopped_{false};
};

thread_local bool ServerImpl::tls_bulk_ = false;

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
