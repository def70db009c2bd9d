// A small blocking S3 client for strata's own use of another S3 endpoint
// (the cold tier as a remote bucket, remote/remote_store.h): path-style
// requests on one bucket, SigV4 with the body's SHA-256 signed (the remote
// side checks what it receives), over http/client.h (keep-alive connections
// pooled per client, TLS for https endpoints, a timeout on every wait).
//
// Thread-safe: each call takes an idle connection (or dials one) and gives
// it back when the exchange is complete. Requests are retried on a fresh
// connection when the connection fails or the endpoint answers 500 / 503
// (three attempts, 100 ms then 400 ms apart); every request strata makes is
// idempotent (the same key and bytes again).
//
// Errors: Unavailable (the endpoint cannot be reached, closed the connection,
// or answered 5xx after the retries), DeadlineExceeded (no progress within
// the timeout), NotFound (404: NoSuchKey / NoSuchUpload / NoSuchBucket;
// detail() says which where it matters), PermissionDenied (403), InvalidArgument
// (another 4xx), Corruption (a reply that is not what S3 sends). Messages name
// the endpoint and the S3 error code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/signer.h"
#include "common/status.h"

namespace strata::http {
class Client;
struct ClientResponse;
}  // namespace strata::http

namespace strata::remote {

struct Endpoint {
  bool https = false;
  std::string host;  // name or address (IPv6 without brackets)
  int port = 0;
  std::string bucket;
  auth::SigningCredentials credentials;
  std::string ca_file;       // https: PEM trust anchors ("" = the system's)
  int timeout_ms = 30'000;   // per wait (connect, each read or write)
};

// "http://HOST[:PORT]" or "https://HOST[:PORT]" (no path); false if not that.
bool ParseEndpointUrl(std::string_view url, Endpoint* out);

struct ListedObject {
  std::string key;
  uint64_t size = 0;
};
struct ListPage {
  std::vector<ListedObject> objects;
  std::string next_token;  // "" when this was the last page
};
struct ListedUpload {
  std::string key;
  std::string upload_id;
};

class S3Client {
 public:
  static Result<std::unique_ptr<S3Client>> Create(Endpoint endpoint);
  ~S3Client();

  // x-amz-meta-* headers to store with an object (names without the prefix).
  using Metadata = std::vector<std::pair<std::string, std::string>>;

  Status HeadBucket();
  Status PutObject(const std::string& key, std::string body, const Metadata& meta);
  Result<std::string> CreateMultipartUpload(const std::string& key, const Metadata& meta);
  // The part's ETag.
  Result<std::string> UploadPart(const std::string& key, const std::string& upload_id,
                                 int part_number, std::string body);
  Status CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                 const std::vector<std::string>& etags);
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id);
  // The object's size and x-amz-meta-* headers (names lower-case, without the prefix).
  struct Head {
    uint64_t size = 0;
    Metadata meta;
  };
  Result<Head> HeadObject(const std::string& key);
  // Reads [offset, offset + n) into buf; the bytes read (short only at the
  // object's end; an offset at or past the end reads 0).
  Result<size_t> GetRange(const std::string& key, uint64_t offset, char* buf, size_t n);
  Status DeleteObject(const std::string& key);
  Result<ListPage> ListObjects(const std::string& prefix, const std::string& token);
  Result<std::vector<ListedUpload>> ListMultipartUploads(const std::string& prefix);

  const Endpoint& endpoint() const { return endpoint_; }
  // "http://host:port/bucket", for messages.
  std::string Describe() const;

 private:
  struct Request;
  using Response = http::ClientResponse;
  explicit S3Client(Endpoint endpoint);
  Result<Response> Exchange(const Request& req);
  Result<Response> ExchangeOnce(const Request& req, bool* retry);
  Status Failure(const Response& r, std::string_view what) const;

  Endpoint endpoint_;
  std::unique_ptr<http::Client> http_;  // the connections (http/client.h)
};

}  // namespace strata::remote
