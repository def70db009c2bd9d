// One request/response exchange on a connection, for the HTTP server
// (http/server.cc): the request body as a ByteSource (Content-Length bodies
// read straight into the caller's buffer, chunked ones decoded by Beast's
// parser, a minimum rate enforced) and the ResponseWriter that frames the
// response (one sendmsg for head and body, sendfile for file bytes).
// Internal to the http module.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/byte_source.h"
#include "common/log.h"
#include "common/status.h"
#include "http/request.h"
#include "http/request_parse.h"
#include "http/timed_stream.h"

namespace strata::http {

using Parser = RequestParser;
using Clock = std::chrono::steady_clock;

// The reason phrase for a status code ("Status" for one Beast does not know).
std::string_view Reason(int status);

// Minimum body rate: a body that has delivered `bytes` after `start` may
// take until start + grace + bytes / rate for its next bytes.
struct BodyRate {
  int grace_ms;
  uint64_t min_bytes_per_s;
};


class BodySource : public ByteSource {
 public:
  BodySource(Parser& parser, TimedStream& stream, boost::beast::flat_buffer& buffer, bool expect_continue,
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
    size_t got = stream_.read_some(boost::asio::buffer(buf, want), ec);
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
    if (ec == boost::asio::error::timed_out) {
      return DeadlineExceeded("request body: client stalled or below the minimum rate");
    }
    if (ec == boost::asio::error::eof || ec == boost::beast::http::error::partial_message ||
        ec == boost::asio::error::connection_reset) {
      return Aborted("request body: connection closed early");
    }
    return InvalidArgument("request body: " + ec.message());
  }

  Parser& parser_;
  TimedStream& stream_;
  boost::beast::flat_buffer& buffer_;
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


}  // namespace strata::http
