#include "machine_limits.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/hash.h"
#include "net.h"
#include "pattern.h"

namespace strata::bench {
namespace {

constexpr size_t kStreamWriteBytes = 1 << 20;
constexpr size_t kEchoBytes = 4096;

// ---- loopback stream ---------------------------------------------------------

struct ReceiverResult {
  uint64_t bytes = 0;
  double end_s = 0;
  std::string error;
};

// Reads everything until the sender closes.
void ReceiveAll(Socket* listener, ReceiverResult* out) {
  try {
    Socket conn = listener->Accept();
    std::vector<char> buf(kStreamWriteBytes);
    while (size_t got = conn.ReadSome(buf.data(), buf.size())) out->bytes += got;
    out->end_s = NowSeconds();
  } catch (const std::exception& e) {
    out->error = e.what();
  }
}

// ---- echo server ---------------------------------------------------------------

// Answers every "request" (an HTTP head with Content-Length plus body) with
// a 4 KiB response, one thread per connection, until the client closes.
class EchoServer {
 public:
  EchoServer() : listener_(Socket::ListenLoopback()), port_(listener_.LocalPort()) {
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~EchoServer() {
    // shutdown() wakes the blocked accept(); connection threads end when
    // their clients disconnect (the workers close them before we get here).
    ::shutdown(listener_.fd(), SHUT_RDWR);
    acceptor_.join();
    for (std::thread& t : connections_) t.join();
  }
  int port() const { return port_; }

 private:
  void AcceptLoop() {
    for (;;) {
      Socket conn;
      try {
        conn = listener_.Accept();
      } catch (const BenchError&) {
        return;  // listener shut down
      }
      connections_.emplace_back([c = std::move(conn)]() mutable { Serve(std::move(c)); });
    }
  }

  static void Serve(Socket conn) {
    static const std::string response_head =
        "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kEchoBytes) + "\r\n\r\n";
    std::string_view body = SharedPattern().Slice(0, kEchoBytes);
    MessageReader reader(&conn);
    MessageHead head;
    try {
      while (reader.ReadHead(&head)) {
        reader.ReadBody(head.content_length.value_or(0), nullptr);
        conn.WriteAll2(response_head, body);
      }
    } catch (const BenchError&) {
      // client went away mid-request: nothing to report from the server side
    }
  }

  Socket listener_;
  int port_;
  std::thread acceptor_;
  std::vector<std::thread> connections_;  // only touched by the acceptor, joined after it
};

// One echo client: a 4 KiB request, a 4 KiB response, checked for its length.
Operation EchoClient(int port) {
  auto conn = std::make_shared<Socket>(Socket::Connect("127.0.0.1", port));
  auto reader = std::make_shared<MessageReader>(conn.get());
  std::string head =
      "PUT /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(kEchoBytes) +
      "\r\n\r\n";
  return [conn, reader, head](uint64_t) {
    conn->WriteAll2(head, SharedPattern().Slice(0, kEchoBytes));
    MessageHead resp;
    if (!reader->ReadHead(&resp) || resp.content_length != kEchoBytes) {
      throw BenchError("echo server: bad response");
    }
    reader->ReadBody(kEchoBytes, nullptr);
  };
}

}  // namespace

double MeasureLoopbackBytesPerSecond(double duration_s) {
  Socket listener = Socket::ListenLoopback();
  ReceiverResult received;
  std::thread receiver(ReceiveAll, &listener, &received);
  double start_s = NowSeconds();
  try {
    Socket sender = Socket::Connect("127.0.0.1", listener.LocalPort());
    std::string_view chunk = SharedPattern().Slice(0, kStreamWriteBytes);
    double deadline = start_s + duration_s;
    while (NowSeconds() < deadline) sender.WriteAll(chunk.data(), chunk.size());
  } catch (...) {
    ::shutdown(listener.fd(), SHUT_RDWR);
    receiver.join();
    throw;
  }  // the sender closes here; the receiver sees EOF
  receiver.join();
  if (!received.error.empty()) throw BenchError("loopback receiver: " + received.error);
  return static_cast<double>(received.bytes) / (received.end_s - start_s);
}

TimedResult MeasureEchoRequestResponse(int concurrency, double duration_s) {
  EchoServer server;
  int port = server.port();
  return RunTimed(concurrency, duration_s, [port](int) { return EchoClient(port); });
}

// Timed by this thread's CPU clock, not the wall clock: the figure is what one
// core can hash, whatever else the shared machine is running meanwhile.
double MeasureMd5BytesPerSecond(double duration_s) {
  std::string_view buf = SharedPattern().Slice(0, kStreamWriteBytes);
  StreamHash md5(StreamHash::Kind::kMd5);
  uint64_t bytes = 0;
  double start_s = ThreadCpuSeconds();
  double end_s = start_s;
  while (end_s - start_s < duration_s) {
    md5.Update(buf.data(), buf.size());
    bytes += buf.size();
    end_s = ThreadCpuSeconds();
  }
  md5.Final();
  return static_cast<double>(bytes) / (end_s - start_s);
}

// ---- durable file writes ---------------------------------------------------

TimedResult MeasureDurableFileWrites(const std::string& dir, uint64_t file_bytes,
                                     int concurrency, double duration_s) {
  namespace fs = std::filesystem;
  const std::string content(
      SharedPattern().Slice(0, std::min<uint64_t>(file_bytes, Pattern::kMaxSlice)));
  auto fail = [](const std::string& what) {
    throw BenchError("durable file write limit: " + what + ": " + std::strerror(errno));
  };
  TimedResult r = RunTimed(concurrency, duration_s, [&](int worker) -> Operation {
    auto sub = std::make_shared<std::string>(dir + "/w" + std::to_string(worker));
    fs::create_directories(*sub);
    return [sub, file_bytes, &content, fail](uint64_t seq) {
      const std::string path = *sub + "/f" + std::to_string(seq);
      int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) fail("open " + path);
      for (uint64_t left = file_bytes; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, content.size()));
        ssize_t w = ::write(fd, content.data(), n);
        if (w <= 0) fail("write " + path);
        left -= static_cast<uint64_t>(w);
      }
      if (::fdatasync(fd) != 0) fail("fdatasync " + path);
      ::close(fd);
      int dfd = ::open(sub->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0 || ::fsync(dfd) != 0) fail("fsync " + *sub);
      ::close(dfd);
    };
  });
  std::error_code ec;
  for (int w = 0; w < concurrency; ++w) fs::remove_all(dir + "/w" + std::to_string(w), ec);
  return r;
}

TimedResult MeasureDurableAppends(const std::string& dir, uint64_t append_bytes, int concurrency,
                                  double duration_s) {
  namespace fs = std::filesystem;
  constexpr uint64_t kFileBytes = 1ull << 30;
  const std::string content(
      SharedPattern().Slice(0, std::min<uint64_t>(append_bytes, Pattern::kMaxSlice)));
  auto fail = [](const std::string& what) {
    throw BenchError("durable append limit: " + what + ": " + std::strerror(errno));
  };
  struct Segment {
    int fd = -1;
    uint64_t size = 0;
    std::string path;
    ~Segment() {
      if (fd >= 0) ::close(fd);
    }
  };
  fs::create_directories(dir);
  TimedResult r = RunTimed(concurrency, duration_s, [&](int worker) -> Operation {
    auto seg = std::make_shared<Segment>();
    seg->path = dir + "/segment" + std::to_string(worker);
    return [seg, append_bytes, &content, fail](uint64_t) {
      if (seg->fd < 0 || seg->size >= kFileBytes) {
        if (seg->fd >= 0) ::close(seg->fd);
        ::unlink(seg->path.c_str());
        seg->fd = ::open(seg->path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
        if (seg->fd < 0) fail("open " + seg->path);
        seg->size = 0;
      }
      for (uint64_t left = append_bytes; left > 0;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(left, content.size()));
        ssize_t w = ::write(seg->fd, content.data(), n);
        if (w <= 0) fail("write " + seg->path);
        left -= static_cast<uint64_t>(w);
      }
      seg->size += append_bytes;
      if (::fdatasync(seg->fd) != 0) fail("fdatasync " + seg->path);
    };
  });
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace strata::bench
