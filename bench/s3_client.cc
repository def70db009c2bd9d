#include "s3_client.h"

#include "common/encoding.h"
#include "common/time_util.h"

namespace strata::bench {
namespace {

constexpr char kUnsignedPayload[] = "UNSIGNED-PAYLOAD";
// "<tag>" or "</tag>" (built with append: GCC 12 warns falsely on "<" + string).
std::string XmlTag(std::string_view opener, std::string_view tag) {
  std::string out;
  out.append(opener).append(tag).append(">");
  return out;
}

}  // namespace

S3Client::S3Client(std::string host, int port, Credentials credentials)
    : host_(std::move(host)),
      port_(port),
      host_header_(host_ + ":" + std::to_string(port)),
      signer_(std::move(credentials)),
      reader_(&socket_) {}

void S3Client::Connect() {
  if (socket_.valid()) return;
  socket_ = Socket::Connect(host_, port_);
  reader_.Reset();
}

std::string S3Client::RequestHead(const S3Request& req) {
  auth::RequestToSign to_sign{req.method, req.path, req.query, {{"host", host_header_}},
                              kUnsignedPayload};
  auth::SigningResult signed_req = signer_.Sign(to_sign, UnixNowNs() / 1'000'000'000);
  std::string head;
  head.reserve(512);
  head.append(req.method).append(" ").append(req.path);
  if (!req.query.empty()) head.append("?").append(req.query);
  head.append(" HTTP/1.1\r\nHost: ").append(host_header_);
  for (const auto& [name, value] : signed_req.headers) {  // x-amz-date, ..., Authorization
    head.append("\r\n").append(name).append(": ").append(value);
  }
  head.append("\r\nContent-Length: ").append(std::to_string(req.body_size));
  for (const auto& [name, value] : req.extra_headers) {
    head.append("\r\n").append(name).append(": ").append(value);
  }
  head.append("\r\n\r\n");
  return head;
}

S3Response S3Client::ReadResponse(const S3Request& req, const BodySink* sink) {
  S3Response resp;
  if (!reader_.ReadHead(&resp.head)) {
    socket_.Close();
    throw BenchError(req.method + " " + req.path + ": server closed the connection");
  }
  resp.status = resp.head.StatusCode();
  uint64_t length = req.method == "HEAD" ? 0 : resp.head.content_length.value_or(0);
  if (!resp.head.content_length && req.method != "HEAD" && resp.status >= 200 &&
      resp.status != 204 && resp.status != 304) {
    socket_.Close();
    throw BenchError(req.method + " " + req.path + ": response without Content-Length");
  }
  if (sink != nullptr && resp.status / 100 == 2) {
    reader_.ReadBody(length, sink);
  } else {  // error bodies are always collected, for the message
    BodySink collect = [&resp](const char* data, size_t n) { resp.body.append(data, n); };
    reader_.ReadBody(length, &collect);
  }
  if (resp.head.connection_close) socket_.Close();  // the next request reconnects
  return resp;
}

S3Response S3Client::Send(const S3Request& req, std::string_view body, const BodySink* sink) {
  Connect();
  S3Request sized = req;
  sized.body_size = body.size();
  socket_.WriteAll2(RequestHead(sized), body);
  return ReadResponse(sized, sink);
}

S3Response S3Client::SendStreaming(const S3Request& req, const BodyWriter& writer,
                                   const BodySink* sink) {
  Connect();
  socket_.WriteAll2(RequestHead(req), {});
  try {
    writer(socket_);
  } catch (const BenchError& send_error) {
    // A server that rejects an upload early (e.g. 501 for an operation it
    // lacks) answers and closes without reading the body; report its answer
    // rather than the broken pipe.
    try {
      S3Response early = ReadResponse(req, nullptr);
      socket_.Close();
      return early;
    } catch (const BenchError&) {
      socket_.Close();
      throw send_error;
    }
  }
  return ReadResponse(req, sink);
}

std::string ObjectPath(std::string_view bucket, std::string_view key) {
  std::string path;
  path.append("/").append(bucket).append("/").append(UriEncode(key, /*encode_slash=*/false));
  return path;
}

void ExpectStatus(const S3Response& resp, int expected, std::string_view what) {
  if (resp.status == expected) return;
  std::string code = XmlElement(resp.body, "Code");
  std::string message = XmlElement(resp.body, "Message");
  throw BenchError(std::string(what) + ": HTTP " + std::to_string(resp.status) + " (expected " +
                   std::to_string(expected) + ")" + (code.empty() ? "" : " " + code) +
                   (message.empty() ? "" : ": " + message));
}

std::string XmlElement(std::string_view xml, std::string_view tag) {
  std::string open = XmlTag("<", tag);
  std::string close = XmlTag("</", tag);
  size_t start = xml.find(open);
  if (start == std::string_view::npos) return "";
  start += open.size();
  size_t end = xml.find(close, start);
  if (end == std::string_view::npos) return "";
  return std::string(xml.substr(start, end - start));
}

size_t XmlCount(std::string_view xml, std::string_view tag) {
  std::string open = XmlTag("<", tag);
  size_t count = 0;
  for (size_t pos = xml.find(open); pos != std::string_view::npos; pos = xml.find(open, pos + 1)) {
    ++count;
  }
  return count;
}

}  // namespace strata::bench
