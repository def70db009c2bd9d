#include "remote/s3_client.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>
#include <cstring>
#include <chrono>
#include <thread>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/net.h"
#include "common/time_util.h"
#include "common/tls.h"
#include "http/timed_stream.h"
#include "remote/s3_replies.h"

namespace strata::remote {

namespace bhttp = boost::beast::http;

namespace {

constexpr size_t kMaxReplyBytes = 8 << 20;  // XML replies (a list page is ~300 KB)
constexpr int kIdleConnections = 8;
constexpr int kAttempts = 3;

bool HeaderSafe(std::string_view v) {
  for (unsigned char c : v) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

bool ParseEndpointUrl(std::string_view url, Endpoint* out) {
  Endpoint e = *out;
  if (url.starts_with("https://")) {
    e.https = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    e.https = false;
    url.remove_prefix(7);
  } else {
    return false;
  }
  if (!url.empty() && url.back() == '/') url.remove_suffix(1);
  if (url.empty() || url.find('/') != std::string_view::npos ||
      url.find_first_of("?#@ ") != std::string_view::npos) {
    return false;
  }
  std::string_view host = url, port;
  if (url.front() == '[') {
    size_t close = url.find(']');
    if (close == std::string_view::npos) return false;
    host = url.substr(1, close - 1);
    std::string_view rest = url.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
    }
  } else if (size_t colon = url.rfind(':'); colon != std::string_view::npos) {
    host = url.substr(0, colon);
    port = url.substr(colon + 1);
  }
  if (host.empty()) return false;
  int p = e.https ? 443 : 80;
  if (!port.empty() || url.back() == ':') {
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) return false;
  }
  e.host = std::string(host);
  e.port = p;
  *out = std::move(e);
  return true;
}

struct S3Client::Connection {
  Connection(int fd, SSL* ssl, int timeout_ms) : fd(fd), ssl(ssl), stream(fd, timeout_ms, ssl) {}
  ~Connection() {
    if (ssl) SSL_free(ssl);
    ::close(fd);
  }
  int fd;
  SSL* ssl;
  http::TimedStream stream;
  boost::beast::flat_buffer buffer;
};

struct S3Client::Request {
  std::string method;
  std::string key;    // "" for requests on the bucket
  std::string query;  // encoded, without '?'
  std::vector<std::pair<std::string, std::string>> headers;  // signed besides host
  std::string body;
  size_t reply_limit = kMaxReplyBytes;
};

struct S3Client::Response {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case

  std::string_view Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return v;
    }
    return {};
  }
};

Result<std::unique_ptr<S3Client>> S3Client::Create(Endpoint endpoint) {
  if (endpoint.host.empty() || endpoint.port <= 0 || endpoint.bucket.empty()) {
    return InvalidArgument("a remote S3 endpoint needs a host, a port and a bucket");
  }
  if (!HeaderSafe(endpoint.host) || endpoint.bucket.find('/') != std::string::npos ||
      !HeaderSafe(endpoint.bucket)) {
    return InvalidArgument("bad remote host or bucket name");
  }
  std::unique_ptr<S3Client> c(new S3Client(std::move(endpoint)));
  const Endpoint& e = c->endpoint_;
  const bool v6 = e.host.find(':') != std::string::npos;
  c->host_header_ = v6 ? "[" + e.host + "]" : e.host;
  if (e.port != (e.https ? 443 : 80)) c->host_header_ += ":" + std::to_string(e.port);
  if (e.https) {
    ASSIGN_OR_RETURN(c->tls_, TlsClientContext::Create(e.ca_file));
  }
  return c;
}

S3Client::S3Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
S3Client::~S3Client() = default;

std::string S3Client::Describe() const {
  return std::string(endpoint_.https ? "https://" : "http://") + host_header_ + "/" +
         endpoint_.bucket;
}

Result<std::unique_ptr<S3Client::Connection>> S3Client::Take(bool* reused) {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      *reused = true;
      return c;
    }
  }
  *reused = false;
  ASSIGN_OR_RETURN(int fd, Dial(endpoint_.host, static_cast<uint16_t>(endpoint_.port),
                                endpoint_.timeout_ms));
  // Non-blocking: the stream waits in poll with its own timeout.
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  SSL* ssl = nullptr;
  if (tls_) {
    auto s = tls_->NewSession(fd, endpoint_.host);
    if (!s.ok()) {
      ::close(fd);
      return s.status();
    }
    ssl = *s;
  }
  return std::make_unique<Connection>(fd, ssl, endpoint_.timeout_ms);
}

void S3Client::GiveBack(std::unique_ptr<Connection> c) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kIdleConnections) idle_.push_back(std::move(c));
}

Result<S3Client::Response> S3Client::ExchangeOnce(const Request& req, bool* retry) {
  *retry = false;
  bool reused = false;
  auto taken = Take(&reused);
  if (!taken.ok()) {
    const Code code = taken.status().code();
    *retry = code == Code::kUnavailable || code == Code::kDeadlineExceeded;
    return taken.status().WithContext("remote endpoint " + Describe());
  }
  std::unique_ptr<Connection> conn = std::move(taken).value();

  std::string path = "/" + endpoint_.bucket;
  if (!req.key.empty()) path += "/" + UriEncode(req.key, /*encode_slash=*/false);
  const std::string payload_hash = Sha256Hex(req.body);
  auth::RequestToSign to_sign{req.method, path, req.query, {{"host", host_header_}}, payload_hash};
  for (const auto& h : req.headers) {
    if (!HeaderSafe(h.first) || !HeaderSafe(h.second)) {
      return InvalidArgument("a header for " + Describe() + " holds a control character");
    }
    to_sign.headers.push_back(h);
  }
  auth::Signer signer(endpoint_.credentials);
  auth::SigningResult sig = signer.Sign(to_sign, UnixNowNs() / 1'000'000'000);
  std::string head = req.method + " " + path + (req.query.empty() ? "" : "?" + req.query) +
                     " HTTP/1.1\r\nHost: " + host_header_ + "\r\n";
  for (const auto& [n, v] : req.headers) head += n + ": " + v + "\r\n";
  for (const auto& [n, v] : sig.headers) head += n + ": " + v + "\r\n";
  if (!req.body.empty() || req.method == "PUT" || req.method == "POST") {
    head += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
  }
  head += "\r\n";

  // A reused connection the endpoint closed while idle fails here: that is
  // retried at once on a fresh one, without counting as an attempt.
  auto broken = [&](const boost::system::error_code& ec, const char* what) -> Status {
    *retry = true;
    std::string text = "remote endpoint " + Describe() + ": " + what + ": " + ec.message();
    if (ec == boost::asio::error::timed_out) return DeadlineExceeded(text);
    return Unavailable(text);
  };
  iovec iov[2] = {{head.data(), head.size()},
                  {const_cast<char*>(req.body.data()), req.body.size()}};
  boost::system::error_code ec;
  if (!conn->stream.SendAll(iov, 2, ec)) return broken(ec, "sending the request");

  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(64 << 10);
  parser.body_limit(req.reply_limit);
  if (req.method == "HEAD") parser.skip(true);
  bhttp::read(conn->stream, conn->buffer, parser, ec);
  if (ec) {
    if (ec == bhttp::error::body_limit || ec == bhttp::error::header_limit) {
      return Corruption(Describe() + ": " + req.method + " reply larger than expected");
    }
    const bool closed = ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message;
    if (!closed && ec.category() == make_error_code(bhttp::error::bad_target).category()) {
      return Corruption(Describe() + ": a reply that is not HTTP: " + ec.message());
    }
    return broken(ec, "reading the reply");
  }
  Response r;
  auto& msg = parser.get();
  r.status = static_cast<int>(msg.result_int());
  r.body = std::move(msg.body());
  for (const auto& f : msg) {
    r.headers.emplace_back(AsciiLower(std::string_view(f.name_string().data(), f.name_string().size())),
                           std::string(f.value()));
  }
  if (r.status == 500 || r.status == 503) *retry = true;
  if (msg.keep_alive()) GiveBack(std::move(conn));
  return r;
}

Result<S3Client::Response> S3Client::Exchange(const Request& req) {
  Result<Response> last = Unavailable(Describe() + ": not tried");
  int fresh_failures = 0;
  for (int attempt = 0; attempt < kAttempts + kIdleConnections; ++attempt) {
    bool retry = false;
    last = ExchangeOnce(req, &retry);
    if (!retry) return last;
    // Stale pooled connections do not count; fresh failures back off.
    bool pooled_left = false;
    {
      std::lock_guard lock(mu_);
      pooled_left = !idle_.empty();
    }
    if (last.ok() || !pooled_left) {
      if (++fresh_failures >= kAttempts) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (fresh_failures - 1))));
    }
  }
  if (last.ok() && last->status >= 500) return Failure(*last, req.method);
  return last;
}

Status S3Client::Failure(const Response& r, std::string_view what) const {
  std::string code, message;
  if (auto e = ParseError(r.body)) {
    code = e->code;
    message = e->message;
  }
  std::string text = Describe() + ": " + std::string(what) + ": HTTP " + std::to_string(r.status) +
                     (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + message);
  if (r.status == 404) {
    if (code == "NoSuchUpload") return NotFound(Detail::kUpload, text);
    if (code == "NoSuchBucket") return NotFound(Detail::kBucket, text);
    return NotFound(Detail::kKey, text);
  }
  if (r.status == 403) return PermissionDenied(text);
  if (r.status >= 500) return Unavailable(text);
  return InvalidArgument(text);
}

namespace {

std::vector<std::pair<std::string, std::string>> MetaHeaders(const S3Client::Metadata& meta) {
  std::vector<std::pair<std::string, std::string>> h;
  for (const auto& [n, v] : meta) h.emplace_back("x-amz-meta-" + n, v);
  return h;
}

std::string Query(std::initializer_list<std::pair<std::string_view, std::string_view>> params) {
  std::string q;
  for (const auto& [n, v] : params) {
    if (!q.empty()) q += "&";
    q += UriEncode(n, true) + "=" + UriEncode(v, true);
  }
  return q;
}

}  // namespace

Status S3Client::HeadBucket() {
  ASSIGN_OR_RETURN(Response r, Exchange({"HEAD", "", "", {}, ""}));
  if (r.status != 200) return Failure(r, "HEAD bucket");
  return Status::OK();
}

Status S3Client::PutObject(const std::string& key, std::string body, const Metadata& meta) {
  ASSIGN_OR_RETURN(Response r, Exchange({"PUT", key, "", MetaHeaders(meta), std::move(body)}));
  if (r.status != 200) return Failure(r, "PUT " + key);
  return Status::OK();
}

Result<std::string> S3Client::CreateMultipartUpload(const std::string& key, const Metadata& meta) {
  ASSIGN_OR_RETURN(Response r, Exchange({"POST", key, "uploads=", MetaHeaders(meta), ""}));
  if (r.status != 200) return Failure(r, "CreateMultipartUpload " + key);
  auto id = ParseInitiate(r.body);
  if (!id) return Corruption(Describe() + ": CreateMultipartUpload: not an InitiateMultipartUploadResult");
  return *id;
}

Result<std::string> S3Client::UploadPart(const std::string& key, const std::string& upload_id,
                                         int part_number, std::string body) {
  std::string n = std::to_string(part_number);
  ASSIGN_OR_RETURN(Response r,
                   Exchange({"PUT", key, Query({{"partNumber", n}, {"uploadId", upload_id}}), {},
                             std::move(body)}));
  if (r.status != 200) return Failure(r, "UploadPart " + key + " #" + n);
  std::string etag(r.Header("etag"));
  if (etag.empty()) return Corruption(Describe() + ": UploadPart: no ETag in the reply");
  return etag;
}

Status S3Client::CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                         const std::vector<std::string>& etags) {
  ASSIGN_OR_RETURN(Response r, Exchange({"POST", key, Query({{"uploadId", upload_id}}),
                                         {{"content-type", "application/xml"}},
                                         CompleteBody(etags)}));
  // S3 may answer 200 with an <Error> body when the completion failed late.
  if (r.status != 200 || ParseError(r.body)) return Failure(r, "CompleteMultipartUpload " + key);
  return Status::OK();
}

Status S3Client::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  ASSIGN_OR_RETURN(Response r, Exchange({"DELETE", key, Query({{"uploadId", upload_id}}), {}, ""}));
  if (r.status != 204 && r.status != 200) return Failure(r, "AbortMultipartUpload " + key);
  return Status::OK();
}

Result<S3Client::Head> S3Client::HeadObject(const std::string& key) {
  ASSIGN_OR_RETURN(Response r, Exchange({"HEAD", key, "", {}, ""}));
  if (r.status != 200) return Failure(r, "HEAD " + key);
  Head h;
  std::string_view len = r.Header("content-length");
  auto [end, ec] = std::from_chars(len.data(), len.data() + len.size(), h.size);
  if (len.empty() || ec != std::errc() || end != len.data() + len.size()) {
    return Corruption(Describe() + ": HEAD " + key + ": no Content-Length");
  }
  for (const auto& [n, v] : r.headers) {
    if (n.starts_with("x-amz-meta-")) h.meta.emplace_back(n.substr(11), v);
  }
  return h;
}

Result<size_t> S3Client::GetRange(const std::string& key, uint64_t offset, char* buf, size_t n) {
  if (n == 0) return size_t{0};
  Request req{"GET", key, "",
              {{"range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1)}},
              ""};
  req.reply_limit = n;
  ASSIGN_OR_RETURN(Response r, Exchange(req));
  if (r.status == 416) return size_t{0};  // the offset is at or past the end
  // 200: an endpoint that ignores Range sends the whole object (only
  // acceptable from offset 0 and within n: the reply limit holds it).
  if (r.status != 206 && !(r.status == 200 && offset == 0)) return Failure(r, "GET " + key);
  if (r.body.size() > n) return Corruption(Describe() + ": GET " + key + ": more bytes than asked");
  std::memcpy(buf, r.body.data(), r.body.size());
  return r.body.size();
}

Status S3Client::DeleteObject(const std::string& key) {
  ASSIGN_OR_RETURN(Response r, Exchange({"DELETE", key, "", {}, ""}));
  if (r.status != 204 && r.status != 200) return Failure(r, "DELETE " + key);
  return Status::OK();
}

Result<ListPage> S3Client::ListObjects(const std::string& prefix, const std::string& token) {
  std::string q = token.empty() ? Query({{"list-type", "2"}, {"prefix", prefix}})
                                : Query({{"continuation-token", token}, {"list-type", "2"},
                                         {"prefix", prefix}});
  ASSIGN_OR_RETURN(Response r, Exchange({"GET", "", q, {}, ""}));
  if (r.status != 200) return Failure(r, "ListObjectsV2");
  auto page = ParseListV2(r.body);
  if (!page) return Corruption(Describe() + ": ListObjectsV2: not a ListBucketResult");
  return *page;
}

Result<std::vector<ListedUpload>> S3Client::ListMultipartUploads(const std::string& prefix) {
  std::vector<ListedUpload> all;
  std::string key_marker, id_marker;
  while (true) {
    std::string q = key_marker.empty()
                        ? Query({{"prefix", prefix}, {"uploads", ""}})
                        : Query({{"key-marker", key_marker}, {"prefix", prefix},
                                 {"upload-id-marker", id_marker}, {"uploads", ""}});
    ASSIGN_OR_RETURN(Response r, Exchange({"GET", "", q, {}, ""}));
    if (r.status != 200) return Failure(r, "ListMultipartUploads");
    auto page = ParseListUploads(r.body);
    if (!page) return Corruption(Describe() + ": ListMultipartUploads: not a ListMultipartUploadsResult");
    for (auto& u : page->uploads) all.push_back(std::move(u));
    if (!page->truncated) return all;
    if (page->next_key_marker == key_marker && page->next_upload_id_marker == id_marker) {
      return Corruption(Describe() + ": ListMultipartUploads does not advance");
    }
    key_marker = page->next_key_marker;
    id_marker = page->next_upload_id_marker;
  }
}

}  // namespace strata::remote
