#include "remote/s3_client.h"


#include <charconv>
#include <cstring>
#include <chrono>
#include <thread>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"
#include "http/client.h"
#include "remote/s3_replies.h"

namespace strata::remote {

namespace {

constexpr size_t kMaxReplyBytes = 8 << 20;  // XML replies (a list page is ~300 KB)
constexpr int kIdleConnections = 8;          // http::Client pools at most this many
constexpr int kAttempts = 3;

}  // namespace

bool ParseEndpointUrl(std::string_view url, Endpoint* out) {
  http::ClientEndpoint e;
  e.https = out->https;
  std::string target;
  if (!http::ParseHttpUrl(url, &e, &target) || target != "/") return false;
  out->https = e.https;
  out->host = std::move(e.host);
  out->port = e.port;
  return true;
}

struct S3Client::Request {
  std::string method;
  std::string key;    // "" for requests on the bucket
  std::string query;  // encoded, without '?'
  std::vector<std::pair<std::string, std::string>> headers;  // signed besides host
  std::string body;
  size_t reply_limit = kMaxReplyBytes;
};

Result<std::unique_ptr<S3Client>> S3Client::Create(Endpoint endpoint) {
  if (endpoint.host.empty() || endpoint.port <= 0 || endpoint.bucket.empty()) {
    return InvalidArgument("a remote S3 endpoint needs a host, a port and a bucket");
  }
  if (!http::HeaderSafe(endpoint.host) || endpoint.bucket.find('/') != std::string::npos ||
      !http::HeaderSafe(endpoint.bucket)) {
    return InvalidArgument("bad remote host or bucket name");
  }
  http::ClientEndpoint he{endpoint.https, endpoint.host, endpoint.port, endpoint.ca_file,
                          endpoint.timeout_ms};
  ASSIGN_OR_RETURN(auto client, http::Client::Create(std::move(he)));
  std::unique_ptr<S3Client> c(new S3Client(std::move(endpoint)));
  c->http_ = std::move(client);
  return c;
}

S3Client::S3Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
S3Client::~S3Client() = default;

std::string S3Client::Describe() const { return http_->Describe() + "/" + endpoint_.bucket; }

Result<S3Client::Response> S3Client::ExchangeOnce(const Request& req, bool* retry) {
  *retry = false;
  std::string path = "/" + endpoint_.bucket;
  if (!req.key.empty()) path += "/" + UriEncode(req.key, /*encode_slash=*/false);
  const std::string payload_hash = Sha256Hex(req.body);
  auth::RequestToSign to_sign{req.method, path, req.query, {{"host", http_->host_header()}},
                              payload_hash};
  for (const auto& h : req.headers) {
    if (!http::HeaderSafe(h.first) || !http::HeaderSafe(h.second)) {
      return InvalidArgument("a header for " + Describe() + " holds a control character");
    }
    to_sign.headers.push_back(h);
  }
  auth::Signer signer(endpoint_.credentials);
  auth::SigningResult sig = signer.Sign(to_sign, UnixNowNs() / 1'000'000'000);
  http::ClientRequest out;
  out.method = req.method;
  out.target = path + (req.query.empty() ? "" : "?" + req.query);
  out.headers = req.headers;
  for (const auto& h : sig.headers) out.headers.push_back(h);
  out.body = req.body;
  out.reply_limit = req.reply_limit;
  // A reused connection the endpoint closed while idle fails with *retry
  // set: Exchange tries again at once on a fresh one.
  auto r = http_->ExchangeOnce(out, retry);
  if (!r.ok()) return r.status().WithContext("remote endpoint " + Describe());
  if (r->status == 500 || r->status == 503) *retry = true;
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
    pooled_left = http_->HasIdle();
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
