// The HTTP server test fixture: an echo server on a loopback port and raw
// socket helpers (shared by server_test.cc and server_limits_test.cc).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "common/net.h"
#include "common/thread_wait.h"
#include "http/server.h"

namespace strata::http {

// Echo handler: reads the whole body, answers 200 with it (or, for
// /noread, answers without reading the body).
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(DefaultOptions()); }

  static ServerOptions DefaultOptions() {
    ServerOptions o;
    o.port = 0;
    o.worker_threads = 4;
    o.max_header_bytes = 8192;
    o.io_timeout_ms = 2000;
    return o;
  }

  // (Re)starts the server with `o`.
  void StartServer(const ServerOptions& o) {
    server_.reset();
    auto s = Server::Start(
        o,
        [this](const Request& req, ByteSource& body, ResponseWriter& out) {
          std::string data;
          if (req.raw_path == "/file") {  // the fixture's file_, zero-copy where the server can
            if (!out.can_send_file()) {
              out.Start(501, {}, 0).IgnoreError();
              return;
            }
            const uint64_t size = file_size_.load();
            if (out.Start(200, {}, size).ok()) {
              if (req.raw_query == "bulk") TurnThisThreadBulk();  // as a large GET does
              send_file_result_ = out.SendFile(file_fd_.load(), 0, size).ok() ? 1 : -1;
            }
            return;
          }
          if (req.raw_path == "/inject") {  // a handler that would inject a header
            out.Start(200, {{"X-Test", "a\r\nSet-Cookie: evil=1"}}, 0).IgnoreError();
            return;
          }
          if (req.raw_path != "/noread") {
            char buf[1000];
            while (true) {
              auto n = body.Read(buf, sizeof(buf));
              if (!n.ok()) {
                out.Start(400, {}, 0).IgnoreError();
                return;
              }
              if (*n == 0) break;
              data.append(buf, *n);
            }
          }
          std::string reply = req.method + " " + req.raw_path + " q=" + req.raw_query + " " + data;
          if (out.Start(200, {{"X-Test", "1"}}, reply.size(), req.method != "HEAD").ok()) {
            if (req.method != "HEAD") out.Write(reply).IgnoreError();
          }
        },
        [](ProtocolError e, ResponseWriter& out) {
          int status = 400;
          if (e == ProtocolError::kHeaderTooLarge) status = 431;
          if (e == ProtocolError::kUnsupportedTransferCoding) status = 501;
          if (e == ProtocolError::kOverloaded) status = 503;
          if (e == ProtocolError::kTimeout) status = 408;
          out.Start(status, {}, 0).IgnoreError();
        });
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }

  int Connect() {
    auto fd = Dial("127.0.0.1", static_cast<uint16_t>(server_->port()), 5000);
    EXPECT_TRUE(fd.ok()) << fd.status().ToString();
    return fd.ok() ? *fd : -1;
  }
  static void Send(int fd, const std::string& s) {
    ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // Reads until `count` complete responses (by Content-Length) or EOF.
  static std::string ReadResponses(int fd, int count) {
    std::string all;
    char buf[4096];
    while (true) {
      int complete = 0;
      size_t pos = 0;
      while (true) {
        size_t end = all.find("\r\n\r\n", pos);
        if (end == std::string::npos) break;
        size_t cl = all.find("Content-Length: ", pos);
        size_t len = (cl != std::string::npos && cl < end) ? std::stoul(all.substr(cl + 16)) : 0;
        if (all.compare(pos, 12, "HTTP/1.1 100") == 0) len = 0;
        else if (all.size() < end + 4 + len) break;
        else ++complete;
        pos = end + 4 + len;
      }
      if (complete >= count) return all;
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) return all;
      all.append(buf, n);
    }
  }
  std::unique_ptr<Server> server_;
  // What /file sends (a test opens it), and how its last SendFile ended:
  // 0 not yet, 1 sent, -1 failed.
  // (Atomics: set by the test thread, read by a worker; TSan cannot see the
  // socket between them.)
  std::atomic<int> file_fd_{-1};
  std::atomic<uint64_t> file_size_{0};
  std::atomic<int> send_file_result_{0};
};

}  // namespace strata::http
