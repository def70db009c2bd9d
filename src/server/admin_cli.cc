#include "server/admin_cli.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <pugixml.hpp>
#include <string>

#include "auth/sigv4.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::server {

namespace {

struct Endpoint {
  std::string host = "127.0.0.1";
  std::string port = "9000";
  std::string access_key, secret_key;
};

struct Response {
  int status = 0;
  std::string body;
};

// One keep-alive connection, SigV4 (UNSIGNED-PAYLOAD) requests, Content-Length responses.
class Client {
 public:
  explicit Client(Endpoint ep) : ep_(std::move(ep)) {}
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }

  std::optional<Response> Send(const std::string& method, const std::string& path,
                               const std::string& query) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // once more on a stale connection
      if (fd_ < 0 && !Connect()) return std::nullopt;
      std::string req = Head(method, path, query);
      if (::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
        if (auto r = Read()) return r;
      }
      ::close(fd_);
      fd_ = -1;
    }
    return std::nullopt;
  }

 private:
  bool Connect() {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(ep_.host.c_str(), ep_.port.c_str(), &hints, &res) != 0) return false;
    fd_ = ::socket(res->ai_family, SOCK_STREAM, 0);
    bool ok = fd_ >= 0 && ::connect(fd_, res->ai_addr, res->ai_addrlen) == 0;
    freeaddrinfo(res);
    if (!ok && fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    return ok;
  }

  std::string Head(const std::string& method, const std::string& path, const std::string& query) {
    char date[32], amz_date[32];
    time_t now = time(nullptr);
    tm t;
    gmtime_r(&now, &t);
    strftime(date, sizeof(date), "%Y%m%d", &t);
    strftime(amz_date, sizeof(amz_date), "%Y%m%dT%H%M%SZ", &t);
    std::string host = ep_.host + ":" + ep_.port;
    std::string scope = std::string(date) + "/us-east-1/s3/aws4_request";
    std::string canonical = method + "\n" + auth::CanonicalUri(path) + "\n" +
                            auth::CanonicalQuery(query, false) + "\nhost:" + host +
                            "\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:" + amz_date +
                            "\n\nhost;x-amz-content-sha256;x-amz-date\nUNSIGNED-PAYLOAD";
    std::string to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" +
                          Sha256Hex(canonical);
    std::string key = auth::DeriveSigningKey(ep_.secret_key, date, "us-east-1", "s3");
    auto sig = HmacSha256(key, to_sign);
    std::string signature =
        HexEncode(std::string_view(reinterpret_cast<const char*>(sig.data()), sig.size()));
    return method + " " + path + (query.empty() ? "" : "?" + query) + " HTTP/1.1\r\nHost: " + host +
           "\r\nx-amz-date: " + amz_date +
           "\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\nAuthorization: AWS4-HMAC-SHA256 "
           "Credential=" + ep_.access_key + "/" + scope +
           ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + signature +
           "\r\nContent-Length: 0\r\n\r\n";
  }

  std::optional<Response> Read() {
    std::string buf;
    char chunk[65536];
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return std::nullopt;
      buf.append(chunk, n);
    }
    Response r;
    r.status = std::atoi(buf.c_str() + 9);
    size_t length = 0;
    std::string head = buf.substr(0, head_end);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t cl = head.find("content-length:");
    if (cl != std::string::npos) length = std::strtoul(head.c_str() + cl + 15, nullptr, 10);
    r.body = buf.substr(head_end + 4);
    while (r.body.size() < length) {
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return std::nullopt;
      r.body.append(chunk, n);
    }
    return r;
  }

  Endpoint ep_;
  int fd_ = -1;
};

// --endpoint URL, --data DIR (for generated credentials); the rest is positional.
std::optional<Endpoint> ParseEndpoint(const std::vector<std::string>& args,
                                      std::vector<std::string>* positional) {
  Endpoint ep;
  std::string data_dir = "./data";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--endpoint" && i + 1 < args.size()) {
      std::string url = args[++i];
      if (url.starts_with("http://")) url = url.substr(7);
      while (!url.empty() && url.back() == '/') url.pop_back();
      size_t colon = url.rfind(':');
      ep.host = url.substr(0, colon);
      if (colon != std::string::npos) ep.port = url.substr(colon + 1);
    } else if (args[i] == "--data" && i + 1 < args.size()) {
      data_dir = args[++i];
    } else {
      positional->push_back(args[i]);
    }
  }
  for (auto [user, pass] : {std::pair{"STRATA_ROOT_USER", "STRATA_ROOT_PASSWORD"},
                            std::pair{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}}) {
    if (std::getenv(user) && std::getenv(pass)) {
      ep.access_key = std::getenv(user);
      ep.secret_key = std::getenv(pass);
      return ep;
    }
  }
  std::ifstream in(data_dir + "/root-credentials");
  if (in && std::getline(in, ep.access_key) && std::getline(in, ep.secret_key)) return ep;
  std::fprintf(stderr, "strata: no credentials: set STRATA_ROOT_USER/STRATA_ROOT_PASSWORD or "
                       "pass --data DIR of the server\n");
  return std::nullopt;
}

// Value of "name": in a flat JSON object we produced ourselves.
std::string JsonField(const std::string& json, const std::string& name) {
  size_t p = json.find("\"" + name + "\":");
  if (p == std::string::npos) return "";
  p += name.size() + 3;
  if (json[p] == '"') {
    std::string out;
    for (size_t i = p + 1; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\' && i + 1 < json.size()) ++i;
      out.push_back(json[i]);
    }
    return out;
  }
  size_t end = json.find_first_of(",}", p);
  return json.substr(p, end - p);
}

void ProgressBar(uint64_t scanned, uint64_t rebuilt, uint64_t bad, const std::string& current) {
  static const char kSpin[] = "|/-\\";
  std::string shown = current.size() > 40 ? "..." + current.substr(current.size() - 37) : current;
  std::fprintf(stderr, "\r%c healing: %llu objects scanned, %llu shards rebuilt, %llu unrecoverable  %-40s",
               kSpin[scanned % 4], static_cast<unsigned long long>(scanned),
               static_cast<unsigned long long>(rebuilt), static_cast<unsigned long long>(bad),
               shown.c_str());
}

}  // namespace

int AdminDrivesCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  auto ep = ParseEndpoint(args, &positional);
  if (!ep) return 2;
  Client client(*ep);
  auto r = client.Send("GET", "/_strata/admin/drives", "");
  if (!r || r->status != 200) {
    std::fprintf(stderr, "strata: drives request failed: %s\n", r ? r->body.c_str() : "no connection");
    return 1;
  }
  std::string k = JsonField(r->body, "k"), m = JsonField(r->body, "m");
  if (k.empty()) {
    std::printf("%s\n", JsonField(r->body, "layout").c_str());
    return 0;
  }
  std::printf("erasure coding %s+%s\n%-4s %-12s %-12s %s\n", k.c_str(), m.c_str(), "pos", "state",
              "shard files", "path / detail");
  size_t p = r->body.find("\"drives\":[");
  int bad = 0;
  while ((p = r->body.find('{', p + 1)) != std::string::npos) {
    std::string entry = r->body.substr(p, r->body.find('}', p) - p + 1);
    std::string state = JsonField(entry, "state");
    bad += state != "online";
    std::printf("%-4s %-12s %-12s %s %s\n", JsonField(entry, "position").c_str(), state.c_str(),
                JsonField(entry, "shard_files").c_str(), JsonField(entry, "path").c_str(),
                JsonField(entry, "detail").c_str());
  }
  return bad ? 1 : 0;
}

int AdminHealCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  auto ep = ParseEndpoint(args, &positional);
  if (!ep) return 2;
  std::string target = positional.empty() ? "" : positional[0];
  std::string bucket_only = target.substr(0, target.find('/'));
  std::string prefix = target.find('/') == std::string::npos ? "" : target.substr(target.find('/') + 1);
  Client client(*ep);

  std::vector<std::string> buckets;
  if (!bucket_only.empty()) {
    buckets.push_back(bucket_only);
  } else {
    auto r = client.Send("GET", "/", "");
    if (!r || r->status != 200) {
      std::fprintf(stderr, "strata: cannot list buckets: %s\n", r ? r->body.c_str() : "no connection");
      return 1;
    }
    pugi::xml_document doc;
    doc.load_buffer(r->body.data(), r->body.size());
    for (auto b : doc.child("ListAllMyBucketsResult").child("Buckets").children("Bucket")) {
      buckets.emplace_back(b.child_value("Name"));
    }
  }
  uint64_t scanned = 0, rebuilt = 0, unrecoverable = 0, errors = 0;
  for (const std::string& bucket : buckets) {
    if (prefix.empty()) {  // the bucket's own marker first
      auto h = client.Send("POST", "/_strata/admin/heal-bucket", "bucket=" + UriEncode(bucket, true));
      if (!h || h->status != 200) {
        ++errors;
      } else {
        rebuilt += std::strtoull(JsonField(h->body, "shards_rebuilt").c_str(), nullptr, 10);
        unrecoverable += JsonField(h->body, "unrecoverable") == "true";
      }
    }
    std::string token;
    bool more = true;
    while (more) {
      std::string query = "list-type=2&max-keys=1000";
      if (!prefix.empty()) query += "&prefix=" + UriEncode(prefix, true);
      if (!token.empty()) query += "&continuation-token=" + UriEncode(token, true);
      auto r = client.Send("GET", "/" + bucket, query);
      if (!r || r->status != 200) {
        std::fprintf(stderr, "\nstrata: cannot list %s: %s\n", bucket.c_str(),
                     r ? r->body.c_str() : "no connection");
        return 1;
      }
      pugi::xml_document doc;
      doc.load_buffer(r->body.data(), r->body.size());
      auto result = doc.child("ListBucketResult");
      more = std::string(result.child_value("IsTruncated")) == "true";
      token = result.child_value("NextContinuationToken");
      for (auto c : result.children("Contents")) {
        std::string key = c.child_value("Key");
        auto h = client.Send("POST", "/_strata/admin/heal-object",
                             "bucket=" + UriEncode(bucket, true) + "&key=" + UriEncode(key, true));
        ++scanned;
        if (!h || h->status != 200) {
          ++errors;
        } else {
          rebuilt += std::strtoull(JsonField(h->body, "shards_rebuilt").c_str(), nullptr, 10);
          unrecoverable += JsonField(h->body, "unrecoverable") == "true";
          errors += !JsonField(h->body, "errors").empty();
        }
        ProgressBar(scanned, rebuilt, unrecoverable, bucket + "/" + key);
      }
    }
  }
  std::fprintf(stderr, "\n");
  std::printf("heal summary: %llu objects scanned, %llu shards rebuilt, %llu unrecoverable, "
              "%llu errors\n",
              static_cast<unsigned long long>(scanned), static_cast<unsigned long long>(rebuilt),
              static_cast<unsigned long long>(unrecoverable),
              static_cast<unsigned long long>(errors));
  return unrecoverable || errors ? 1 : 0;
}

}  // namespace strata::server
