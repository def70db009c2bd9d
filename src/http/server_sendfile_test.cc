// ResponseWriter::SendFile: body bytes from a file, page cache to socket
// (sendfile), on a keep-alive connection and against a reader that stalls.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/thread_count_test_util.h"
#include "http/server_test_util.h"

namespace strata::http {
namespace {

using namespace std::chrono_literals;

class SendFileTest : public HttpServerTest {
 protected:
  void TearDown() override {
    server_.reset();  // workers done before the file goes
    if (file_fd_ >= 0) ::close(file_fd_);
  }
  // A temporary file of `size` patterned bytes, opened for /file.
  std::string MakeFile(size_t size) {
    char path[] = "/tmp/strata-sendfile-XXXXXX";
    int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    ::unlink(path);
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
    EXPECT_EQ(::pwrite(fd, data.data(), size, 0), static_cast<ssize_t>(size));
    file_fd_ = fd;
    file_size_ = size;
    return data;
  }
  // A connection that asks for /file and never reads it.
  int StalledReader() {
    int fd = Connect();
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    Send(fd, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n");
    return fd;
  }
};

TEST_F(SendFileTest, FileBytesArriveAndTheConnectionIsReused) {
  const std::string data = MakeFile((3 << 20) + 12345);
  int fd = Connect();
  Send(fd, "GET /file HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string all = ReadResponses(fd, 2);
  close(fd);
  size_t head_end = all.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos);
  ASSERT_EQ(all.compare(0, 15, "HTTP/1.1 200 OK"), 0) << all.substr(0, 200);
  EXPECT_NE(all.find("Content-Length: " + std::to_string(data.size())), std::string::npos);
  ASSERT_GE(all.size(), head_end + 4 + data.size());
  EXPECT_TRUE(all.compare(head_end + 4, data.size(), data) == 0) << "file bytes differ";
  // The next response on the same connection follows the file's last byte.
  EXPECT_NE(all.find("GET /after", head_end + 4 + data.size()), std::string::npos);
  EXPECT_EQ(send_file_result_.load(), 1);
}

TEST_F(SendFileTest, AReaderThatStallsIsCutOffAndFreesTheWorker) {
  ServerOptions o = DefaultOptions();
  o.io_timeout_ms = 300;
  o.worker_threads = 1;  // the stalled send holds the only worker until it is cut off
  StartServer(o);
  MakeFile(64 << 20);
  int stalled = Connect();
  int small = 4096;
  setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  Send(stalled, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n");
  // Never read: the server's sendfile fills the socket buffers and waits.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (send_file_result_.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(send_file_result_.load(), -1) << "the stalled send was not cut off";
  // The worker is free again: a well-behaved client is served.
  int fd = Connect();
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  close(fd);
  close(stalled);
}

TEST_F(SendFileTest, APipelinedRequestAfterBulkWorkIsAnswered) {
  // After a reply that turned its thread bulk the worker stops between
  // requests; the next one, already read with the first, must still be served.
  const std::string data = MakeFile(3 << 20);
  int fd = Connect();
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  Send(fd, "GET /file?bulk HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string all = ReadResponses(fd, 2);
  close(fd);
  EXPECT_EQ(send_file_result_.load(), 1);
  EXPECT_NE(all.find("GET /after"), std::string::npos) << "the pipelined request went unanswered";
}

TEST_F(SendFileTest, ReadersThatDoNotReadHoldNoRunningWorker) {
  ServerOptions o = DefaultOptions();
  o.io_timeout_ms = 30000;  // the stalled sends are not cut off during the test
  o.worker_threads = 1;
  StartServer(o);
  MakeFile(64 << 20);
  std::vector<int> stalled;
  for (int i = 0; i < 3; ++i) stalled.push_back(StalledReader());
  std::this_thread::sleep_for(200ms);  // their workers are waiting on full send buffers
  // The one running slot was handed on each time: a good client is served
  // now, not when a stalled send times out.
  int fd = Connect();
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  EXPECT_EQ(send_file_result_.load(), 0) << "a stalled send ended: the test proves nothing";
  close(fd);
  for (int s : stalled) close(s);
}

// At start-up each thread that takes a loop wakes a thread for the next
// one; the pool's threads still starting meet those wakes. (Each used to
// start a spare thread too: up to one more per loop, for 10 s, appearing
// after Start had returned.)
TEST_F(SendFileTest, StartingStartsThePoolAndNoSpareThreads) {
  ServerOptions o = DefaultOptions();
  o.worker_threads = 4;
  o.max_worker_threads = 64;
  o.event_loops = 16;
  StartServer(o);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(ThreadsNamed("http-worker"), 4 + 16);
  int fd = Connect();  // and it serves
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  close(fd);
  EXPECT_EQ(ThreadsNamed("http-worker"), 4 + 16);
}

TEST_F(SendFileTest, ThreadsStayWithinTheCap) {
  ServerOptions o = DefaultOptions();
  o.io_timeout_ms = 1000;
  o.worker_threads = 1;
  o.max_worker_threads = 2;  // both taken by stalled readers
  o.event_loops = 1;         // plus one leading the loop, and one in reserve for it
  StartServer(o);
  MakeFile(64 << 20);
  std::vector<int> stalled;
  for (int i = 0; i < 3; ++i) stalled.push_back(StalledReader());
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(ThreadsNamed("http-worker"), 4);
  // A request with a body is the pool's work: served only once a stalled
  // send was cut off and its thread came free.
  int fd = Connect();
  Send(fd, "PUT /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_NE(ReadResponses(fd, 1).find("PUT /ok q= hi"), std::string::npos);
  EXPECT_EQ(send_file_result_.load(), -1);
  EXPECT_LE(ThreadsNamed("http-worker"), 4);
  close(fd);
  for (int s : stalled) close(s);
}

TEST_F(SendFileTest, ALoopsLeaderServesWhileStalledRepliesHoldEveryWorker) {
  ServerOptions o = DefaultOptions();
  o.io_timeout_ms = 30000;  // the stalled sends are not cut off during the test
  o.worker_threads = 1;
  o.max_worker_threads = 2;
  o.event_loops = 1;
  StartServer(o);
  MakeFile(64 << 20);
  std::vector<int> stalled;
  for (int i = 0; i < 2; ++i) stalled.push_back(StalledReader());
  std::this_thread::sleep_for(200ms);
  // Two stalled replies hold the pool's cap of 2 (a worker pool alone would
  // serve nothing more until one is cut off), but the loop keeps a leader:
  // it serves a small GET at once.
  int fd = Connect();
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  EXPECT_EQ(send_file_result_.load(), 0) << "a stalled send ended: the test proves nothing";
  EXPECT_LE(ThreadsNamed("http-worker"), 4);
  close(fd);
  for (int s : stalled) close(s);
}

TEST_F(SendFileTest, AClientThatHangsUpMidBodyCostsAnErrorNotTheProcess) {
  // sendfile has no MSG_NOSIGNAL: with SIGPIPE at its default, a write to a
  // connection the peer has closed would kill the process. Server::Start
  // ignores it where nobody chose otherwise.
  ::signal(SIGPIPE, SIG_DFL);
  StartServer(DefaultOptions());
  MakeFile(32 << 20);
  for (int i = 0; i < 5; ++i) {
    send_file_result_ = 0;
    int fd = Connect();
    Send(fd, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n");
    char buf[4096];
    ASSERT_GT(recv(fd, buf, sizeof(buf), 0), 0);
    close(fd);  // unread bytes: the kernel answers the server's next segments with a reset
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (send_file_result_.load() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(send_file_result_.load(), -1) << i;
  }
  int fd = Connect();  // still here, still serving
  Send(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  close(fd);
}

}  // namespace
}  // namespace strata::http
