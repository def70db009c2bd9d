#include "kvcache/conn_pool.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include "common/log.h"
#include "common/time_util.h"

namespace strata::kvcache {
namespace {

constexpr uint64_t kStopId = 0;  // epoll data of the stop eventfd; connections count from 1
constexpr int64_t kMsNs = 1'000'000;

}  // namespace

ConnectionPool::ConnectionPool(const ServerContext* ctx) : ctx_(ctx) {}

ConnectionPool::~ConnectionPool() {
  Stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

Status ConnectionPool::Start() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return ErrnoStatus(errno, "kv: epoll_create1");
  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) return ErrnoStatus(errno, "kv: eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;  // level-triggered: wakes every worker once written
  ev.data.u64 = kStopId;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev) != 0) {
    return ErrnoStatus(errno, "kv: epoll_ctl");
  }
  const ThreadFactory& make = ctx_->options.thread_factory;
  try {
    reaper_ = make([this] { ReapLoop(); });
  } catch (const std::exception& e) {
    return Unavailable(std::string("kv: cannot start the reaper thread: ") + e.what());
  }
  const int wanted = std::max(ctx_->options.worker_threads, 1);
  std::string failure;
  for (int i = 0; i < wanted; ++i) {
    try {
      workers_.push_back(make([this] { WorkLoop(); }));
    } catch (const std::exception& e) {
      failure = e.what();
      break;
    }
  }
  if (workers_.empty()) {
    Stop();
    return Unavailable("kv: cannot start a worker thread: " + failure);
  }
  if (static_cast<int>(workers_.size()) < wanted) {
    STRATA_LOG("kv: started %zu of %d worker threads (%s); serving with those", workers_.size(),
               wanted, failure.c_str());
  }
  return Status::OK();
}

void ConnectionPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, c] : conns_) c->conn->Shutdown();  // unblocks workers mid-frame
  }
  reaper_cv_.notify_all();
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    ssize_t ignored = ::write(stop_fd_, &one, sizeof(one));
    (void)ignored;
  }
  if (reaper_.joinable()) reaper_.join();
  for (std::thread& t : workers_) t.join();
  std::unordered_map<uint64_t, ConnPtr> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    conns.swap(conns_);
    deadlines_.clear();
    per_address_.clear();
    parked_ = 0;
  }
  // conns close here.
}

ServerStats ConnectionPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ServerStats s;
  s.connections = conns_.size();
  s.parked = parked_;
  for (const auto& [id, c] : conns_) {
    if (c->state == State::kParked) s.parked_buffer_bytes += c->session->buffered_capacity();
  }
  s.workers = static_cast<int>(workers_.size());
  s.refused = refused_;
  s.auth_timeouts = auth_timeouts_;
  s.idle_timeouts = idle_timeouts_;
  return s;
}

void ConnectionPool::Add(std::unique_ptr<Connection> conn) {
  const ServerOptions& o = ctx_->options;
  const int fd = conn->PollFd();
  std::string address = conn->peer_address();
  std::lock_guard<std::mutex> lock(mu_);  // `conn`, if refused, closes after the unlock
  if (stopping_) return;
  if (fd < 0) {
    STRATA_LOG("kv: connection %s: the transport gives no poll handle; closed",
               conn->peer().c_str());
    return;
  }
  size_t& from_address = per_address_[address];
  const bool over_total = conns_.size() >= o.max_connections;
  if (over_total || from_address >= o.max_connections_per_address) {
    ++refused_;
    if (from_address == 0) per_address_.erase(address);
    const int64_t now = SteadyNowNs();
    if (now - last_refusal_log_ns_ > 1000 * kMsNs) {  // at most one line a second
      last_refusal_log_ns_ = now;
      STRATA_LOG("kv: refusing %s: %s (refused so far: %llu)", conn->peer().c_str(),
                 over_total ? "max_connections reached" : "max_connections_per_address reached",
                 static_cast<unsigned long long>(refused_));
    }
    return;
  }
  auto c = std::make_unique<Conn>();
  c->id = next_id_++;
  c->fd = fd;
  c->address = std::move(address);
  c->session = std::make_unique<Session>(ctx_, conn.get());
  c->conn = std::move(conn);
  c->auth_deadline_ns = SteadyNowNs() + int64_t{o.auth_timeout_ms} * kMsNs;
  c->state = State::kServing;  // not parked until registered
  Conn* p = c.get();
  conns_.emplace(p->id, std::move(c));
  ++from_address;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.u64 = p->id;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    STRATA_LOG("kv: epoll_ctl add: %s", std::strerror(errno));
    ConnPtr dead = RemoveLocked(p);
    return;  // closes under the lock: rare
  }
  p->state = State::kParked;
  ++parked_;
  p->deadline_ns = p->auth_deadline_ns;
  deadlines_.emplace(p->deadline_ns, p->id);
  if (reaper_wakes_at_ns_ == 0 || p->deadline_ns < reaper_wakes_at_ns_) reaper_cv_.notify_one();
}

bool ConnectionPool::ParkLocked(Conn* c, int64_t deadline_ns) {
  c->state = State::kParked;
  c->deadline_ns = deadline_ns;
  if (deadline_ns != 0) deadlines_.emplace(deadline_ns, c->id);
  ++parked_;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.u64 = c->id;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
    STRATA_LOG("kv: epoll_ctl mod: %s", std::strerror(errno));
    return false;
  }
  if (deadline_ns != 0 && (reaper_wakes_at_ns_ == 0 || deadline_ns < reaper_wakes_at_ns_)) {
    reaper_cv_.notify_one();
  }
  return true;
}

ConnectionPool::ConnPtr ConnectionPool::RemoveLocked(Conn* c) {
  if (c->state == State::kParked) {
    --parked_;
    if (c->deadline_ns != 0) deadlines_.erase({c->deadline_ns, c->id});
  }
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd, nullptr);
  auto a = per_address_.find(c->address);
  if (a != per_address_.end() && --a->second == 0) per_address_.erase(a);
  auto it = conns_.find(c->id);
  ConnPtr out = std::move(it->second);
  conns_.erase(it);
  return out;
}

void ConnectionPool::ReapLoop() {
  std::vector<ConnPtr> expired;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const int64_t now = SteadyNowNs();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      Conn* c = conns_.at(deadlines_.begin()->second).get();
      if (c->session->authenticated()) {
        ++idle_timeouts_;
      } else {
        ++auth_timeouts_;
      }
      expired.push_back(RemoveLocked(c));
    }
    if (!expired.empty()) {
      lock.unlock();
      expired.clear();  // closes them outside the lock
      lock.lock();
      continue;
    }
    if (deadlines_.empty()) {
      reaper_wakes_at_ns_ = 0;
      reaper_cv_.wait(lock);
    } else {
      reaper_wakes_at_ns_ = deadlines_.begin()->first;
      reaper_cv_.wait_for(lock, std::chrono::nanoseconds(reaper_wakes_at_ns_ - now));
    }
  }
}

void ConnectionPool::WorkLoop() {
  while (true) {
    epoll_event ev;
    int n = ::epoll_wait(epoll_fd_, &ev, 1, -1);
    if (n < 0 && errno != EINTR) {
      STRATA_LOG("kv: epoll_wait: %s", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (n <= 0) continue;
    Conn* c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // epoll_event is packed on x86-64, so data.u64 is misaligned: copy it out
      // before anything binds a reference to it (find takes const&; UBSan).
      const uint64_t id = ev.data.u64;
      if (stopping_ || id == kStopId) return;
      auto it = conns_.find(id);
      // Gone (expired while this event was on its way) or not parked: nothing to do.
      if (it == conns_.end() || it->second->state != State::kParked) continue;
      c = it->second.get();
      if (c->deadline_ns != 0) deadlines_.erase({c->deadline_ns, c->id});
      c->deadline_ns = 0;
      c->state = State::kServing;
      --parked_;
    }
    AfterTurn(c, Serve(c));
  }
}

Result<Session::Turn> ConnectionPool::Serve(Conn* c) {
  try {
    return c->session->ServeTurn();
  } catch (const std::exception& e) {  // e.g. bad_alloc under a memory limit
    return Internal(std::string("exception: ") + e.what());
  }
}

void ConnectionPool::LogClose(const Conn& c, const Status& why) {
  if (why.code() == Code::kAborted) return;  // the peer went away: routine
  // At most kLinesPerSecond a second: hostile clients must not flood the log.
  constexpr int kLinesPerSecond = 10;
  const int64_t second = SteadyNowNs() / (1000 * kMsNs);
  uint64_t suppressed = 0;
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    if (second != log_second_) {
      suppressed = log_suppressed_;
      log_second_ = second;
      log_lines_ = 0;
      log_suppressed_ = 0;
    }
    if (++log_lines_ > kLinesPerSecond) {
      ++log_suppressed_;
      return;
    }
  }
  if (suppressed > 0) {
    STRATA_LOG("kv: %llu more connection errors not logged",
               static_cast<unsigned long long>(suppressed));
  }
  STRATA_LOG("kv: connection %s: %s", c.conn->peer().c_str(), why.ToString().c_str());
}

void ConnectionPool::AfterTurn(Conn* c, const Result<Session::Turn>& turn) {
  if (!turn.ok()) LogClose(*c, turn.status());
  ConnPtr dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      dead = RemoveLocked(c);
    } else if (turn.ok() && *turn == Session::Turn::kPark) {
      const ServerOptions& o = ctx_->options;
      const int64_t now = SteadyNowNs();
      int64_t deadline = c->auth_deadline_ns;
      if (c->session->authenticated()) {
        deadline = o.idle_timeout_ms == 0 ? 0 : now + int64_t{o.idle_timeout_ms} * kMsNs;
      }
      if (deadline != 0 && deadline <= now) {
        ++auth_timeouts_;  // only the fixed pre-auth deadline can be in the past
      } else if (ParkLocked(c, deadline)) {
        return;
      }
      dead = RemoveLocked(c);
    } else {
      dead = RemoveLocked(c);
    }
  }
  // dead closes here, outside the lock.
}

}  // namespace strata::kvcache
