// HttpRangeConnection (http_range.h): the reply head parsed by Beast, the body
// received straight into the caller's buffer.
#include "http_range.h"

#include <climits>
#include <cstring>
#include <sys/uio.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "common/encoding.h"
#include "common/net.h"
#include "kv_stream.h"

namespace strata::kv {

namespace bhttp = boost::beast::http;

namespace {

KvStatus Protocol(std::string m) { return KvStatus(KvCode::kProtocolError, std::move(m)); }

}  // namespace

const std::string* HttpReply::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

HttpRangeConnection::HttpRangeConnection(std::unique_ptr<Stream> stream)
    : stream_(std::move(stream)) {}
HttpRangeConnection::~HttpRangeConnection() = default;

KvStatus HttpRangeConnection::Connect(const HttpConnectOptions& options,
                                      std::unique_ptr<HttpRangeConnection>* out) {
  auto dialed = Dial(options.host, options.port,
                     static_cast<int>(std::min<uint32_t>(options.timeout_ms, INT_MAX)));
  if (!dialed.ok()) return KvStatus(KvCode::kIoError, dialed.status().message());
  std::unique_ptr<Stream> stream;
  if (options.tls) {
    const std::string& name =
        options.tls_server_name.empty() ? options.host : options.tls_server_name;
    KvStatus s = TlsStream(*dialed, options.timeout_ms, options.tls_ca_file, name, &stream);
    if (!s.ok()) return s;
  } else {
    stream = PlainStream(*dialed, options.timeout_ms);
  }
  out->reset(new HttpRangeConnection(std::move(stream)));
  return KvStatus::OK();
}

std::unique_ptr<HttpRangeConnection> HttpRangeConnection::OverSocket(int fd) {
  return std::unique_ptr<HttpRangeConnection>(new HttpRangeConnection(PlainStream(fd, 0)));
}

void HttpRangeConnection::Shutdown() {
  if (stream_) stream_->Shutdown();
}

void HttpRangeConnection::Drop() {
  if (stream_) stream_->Close();
  stream_.reset();
}

KvStatus HttpRangeConnection::Fail(KvStatus s) {
  Drop();
  return s;
}

// Receives until Beast has the whole head of the final reply; bytes after it
// (the body's first) go to *early, whether the connection stays open to
// *keep_alive. Interim 1xx heads (100 Continue, 103 Early Hints) are read
// past, as http.client does, at most kMaxInterim of them; a 101 (a switch of
// protocol nobody asked for) is refused.
KvStatus HttpRangeConnection::ReadHead(HttpReply* reply, std::string* early, bool* keep_alive) {
  std::string buf;
  for (int interim = 0;; ++interim) {
    bhttp::response_parser<bhttp::empty_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(kMaxHead));
    parser.skip(true);  // the body is read by Exchange, not by the parser
    size_t parsed = 0;
    bool fresh = !buf.empty();  // bytes left over from an interim head: parse them first
    while (true) {
      if (!fresh) {
        size_t old = buf.size();
        if (old >= kMaxHead + 1) return Fail(Protocol("reply head larger than 64 KiB"));
        buf.resize(std::min(old + 16384, kMaxHead + 1));
        size_t got = 0;
        KvStatus s = stream_->RecvSome(buf.data() + old, buf.size() - old, &got);
        if (!s.ok()) return Fail(s);
        buf.resize(old + got);
      }
      fresh = false;
      boost::system::error_code ec;
      while (parsed < buf.size() && !parser.is_header_done()) {
        size_t used = parser.put(boost::asio::buffer(buf.data() + parsed, buf.size() - parsed), ec);
        parsed += used;
        if (ec == bhttp::error::need_more) {
          ec = {};
          break;
        }
        if (ec) return Fail(Protocol("reply head: " + ec.message()));
        if (used == 0) break;
      }
      if (parser.is_header_done()) break;
    }
    const auto& head = parser.get();
    const int status = static_cast<int>(head.result_int());
    if (status == 101) return Fail(Protocol("reply 101: the server switched protocols"));
    if (status >= 100 && status < 200) {
      if (interim + 1 >= kMaxInterim) return Fail(Protocol("too many interim (1xx) replies"));
      buf.erase(0, parsed);  // the next head starts here
      continue;
    }
    reply->status = status;
    for (const auto& field : head) {
      reply->headers.emplace_back(AsciiLower(std::string_view(field.name_string().data(),
                                                              field.name_string().size())),
                                  std::string(field.value().data(), field.value().size()));
    }
    const bool framed = !parser.chunked() && parser.content_length().has_value();
    // Unknown (chunked, or until the connection closes): never read into the buffer.
    reply->content_length = framed ? *parser.content_length() : UINT64_MAX;
    *keep_alive = head.keep_alive();
    early->assign(buf, parsed, std::string::npos);
    return KvStatus::OK();
  }
}

KvStatus HttpRangeConnection::Exchange(std::string_view head, char* dest, size_t dest_len,
                                       bool exact, HttpReply* reply) {
  *reply = HttpReply();
  if (!stream_) return KvStatus(KvCode::kClosed, "the connection was closed by an earlier error");
  std::vector<iovec> iov{{const_cast<char*>(head.data()), head.size()}};
  if (KvStatus s = stream_->SendIov(iov); !s.ok()) return Fail(s);
  std::string early;
  bool keep_alive = true;
  if (KvStatus s = ReadHead(reply, &early, &keep_alive); !s.ok()) return s;
  const bool close = !keep_alive;
  const int st = reply->status;
  const uint64_t n = reply->content_length;
  const bool known = n != UINT64_MAX;
  const bool no_body = st == 204 || st == 304;
  if (no_body) {
    reply->content_length = 0;
    reply->body_read = true;
    if (!early.empty()) return Fail(Protocol("bytes after a reply without a body"));
    if (close) Drop();
    return KvStatus::OK();
  }
  if (early.size() > n) return Fail(Protocol("more bytes than the reply's Content-Length"));
  if (st == 200 || st == 206) {
    if (!known || (exact ? n != dest_len : n > dest_len)) {
      Drop();  // not what was asked for: the caller reads the head and refuses it
      return KvStatus::OK();
    }
    std::memcpy(dest, early.data(), early.size());
    if (KvStatus s = stream_->RecvExact(dest + early.size(), n - early.size()); !s.ok()) {
      return Fail(s);
    }
    reply->into_dest = n;
    reply->body_read = true;
    if (close) Drop();
    return KvStatus::OK();
  }
  // Any other reply: its (error) body, bounded.
  if (!known) {
    Drop();
    return KvStatus::OK();
  }
  const size_t keep = static_cast<size_t>(std::min<uint64_t>(n, kMaxOtherBody));
  reply->body = std::move(early);
  if (reply->body.size() < keep) {
    size_t have = reply->body.size();
    reply->body.resize(keep);
    if (KvStatus s = stream_->RecvExact(reply->body.data() + have, keep - have); !s.ok()) {
      return Fail(s);
    }
  }
  reply->body.resize(std::min(reply->body.size(), keep));
  reply->body_read = keep == n;
  if (!reply->body_read || close) Drop();
  return KvStatus::OK();
}

}  // namespace strata::kv
