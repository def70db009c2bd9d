// A minimal S3 client for the load generator: one keep-alive connection,
// SigV4 header signing with auth::Signer (auth/signer.h), and
// streaming request/response bodies.
//
// Payload mode: every request is signed with x-amz-content-sha256:
// UNSIGNED-PAYLOAD. The body is then not part of the signature, so neither
// side hashes it with SHA-256; the server still computes the MD5 ETag. This is
// what the PUT targets are defined against (see docs/performance.md), and it
// keeps the client's CPU cost per byte at "just send it".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/signer.h"
#include "net.h"

namespace strata::bench {

using Credentials = auth::SigningCredentials;

struct S3Request {
  S3Request(std::string m, std::string p, std::string q = "")
      : method(std::move(m)), path(std::move(p)), query(std::move(q)) {}

  std::string method;
  std::string path;   // as sent, URI-encoded: "/bucket/key"
  std::string query;  // as sent, URI-encoded, without '?'; "" if none
  std::vector<std::pair<std::string, std::string>> extra_headers;  // unsigned, e.g. Range
  uint64_t body_size = 0;
};

struct S3Response {
  MessageHead head;
  int status = 0;
  std::string body;  // filled only when no BodySink was given
};

// Writes exactly body_size bytes after the request head has been sent.
using BodyWriter = std::function<void(Socket&)>;

class S3Client {
 public:
  S3Client(std::string host, int port, Credentials credentials);

  // Opens the connection now (otherwise the first request does), so that
  // timed loops do not include the TCP handshake.
  void Connect();

  // Sends a request whose whole body is in memory (may be empty).
  S3Response Send(const S3Request& req, std::string_view body, const BodySink* sink = nullptr);
  // Sends a request whose body is produced by `writer` (large uploads).
  S3Response SendStreaming(const S3Request& req, const BodyWriter& writer,
                           const BodySink* sink = nullptr);

 private:
  std::string RequestHead(const S3Request& req);
  S3Response ReadResponse(const S3Request& req, const BodySink* sink);

  std::string host_;
  int port_;
  std::string host_header_;
  auth::Signer signer_;  // keeps the day's signing key, as SDKs do
  Socket socket_;
  MessageReader reader_;
};

// "/bucket/key" with the key URI-encoded ('/' kept).
std::string ObjectPath(std::string_view bucket, std::string_view key);
// Throws BenchError naming `what` unless the response has status `expected`.
void ExpectStatus(const S3Response& resp, int expected, std::string_view what);
// Text of the first <tag>...</tag> in an XML body ("" if absent).
std::string XmlElement(std::string_view xml, std::string_view tag);
// Number of <tag> elements in an XML body.
size_t XmlCount(std::string_view xml, std::string_view tag);

}  // namespace strata::bench
