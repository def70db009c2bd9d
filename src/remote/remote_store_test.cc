#include "remote/remote_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <mutex>
#include <thread>

#include "common/encoding.h"

namespace strata::remote {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// An in-memory S3 bucket behind a real socket: just the requests the remote
// store makes (PUT, ranged GET, HEAD, DELETE, ListObjectsV2, multipart).
// Signatures are not checked here (the integration tests run against a real
// strata, which checks them). Faults: `fail_next` answers that many requests
// with 503; `close_idle` closes each connection after one exchange without
// saying so (a keep-alive the server dropped).
class FakeS3 {
 public:
  FakeS3() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeS3() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket poke(ioc_);
    poke.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
    for (auto& t : conns_) t.join();
  }
  int port() const { return port_; }

  std::map<std::string, std::string> objects;  // key -> bytes
  std::map<std::string, std::string> meta;     // key -> "name=value;..."
  std::map<std::string, std::map<int, std::string>> uploads;
  std::atomic<int> fail_next{0};
  std::atomic<bool> close_idle{false};
  std::atomic<int> requests{0};
  std::mutex mu;

 private:
  void Serve() {
    while (true) {
      tcp::socket s(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (stop_ || ec) return;
      conns_.emplace_back([this, s = std::move(s)]() mutable { Connection(std::move(s)); });
    }
  }

  void Connection(tcp::socket s) {
    boost::beast::flat_buffer buf;
    while (!stop_) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(64 << 20);
      boost::system::error_code ec;
      bhttp::read(s, buf, parser, ec);
      if (ec) return;
      ++requests;
      bhttp::response<bhttp::string_body> res = Handle(parser.get());
      res.keep_alive(true);
      if (parser.get().method() != bhttp::verb::head) res.prepare_payload();
      if (parser.get().method() == bhttp::verb::head) {
        bhttp::response_serializer<bhttp::string_body> sr(res);
        sr.split(true);
        bhttp::write_header(s, sr, ec);
      } else {
        bhttp::write(s, res, ec);
      }
      if (ec || close_idle) return;
    }
  }

  static std::string Param(std::string_view query, std::string_view name) {
    for (auto [n, v] : ParseQueryPairs(query)) {
      if (n == name) return v;
    }
    return {};
  }
  static std::vector<std::pair<std::string, std::string>> ParseQueryPairs(std::string_view q) {
    std::vector<std::pair<std::string, std::string>> out;
    while (!q.empty()) {
      size_t amp = q.find('&');
      std::string_view pair = q.substr(0, amp);
      size_t eq = pair.find('=');
      out.emplace_back(*UriDecode(pair.substr(0, eq)),
                       eq == std::string_view::npos ? "" : *UriDecode(pair.substr(eq + 1)));
      if (amp == std::string_view::npos) break;
      q.remove_prefix(amp + 1);
    }
    return out;
  }

  bhttp::response<bhttp::string_body> Handle(const bhttp::request<bhttp::string_body>& req) {
    bhttp::response<bhttp::string_body> res{bhttp::status::ok, 11};
    if (fail_next > 0) {
      --fail_next;
      res.result(503);
      res.body() = "<Error><Code>SlowDown</Code><Message>later</Message></Error>";
      return res;
    }
    std::string target(req.target());
    size_t qm = target.find('?');
    std::string path = target.substr(0, qm), query = qm == std::string::npos ? "" : target.substr(qm + 1);
    // "/bucket" or "/bucket/key"
    size_t slash = path.find('/', 1);
    std::string key = slash == std::string::npos ? "" : *UriDecode(path.substr(slash + 1));
    std::lock_guard lock(mu);
    auto not_found = [&](const char* code) {
      res.result(404);
      res.body() = std::string("<Error><Code>") + code + "</Code></Error>";
      return res;
    };
    const bhttp::verb m = req.method();
    if (key.empty()) {
      if (m == bhttp::verb::head) return res;
      if (query.find("uploads") != std::string::npos) {
        std::string body = "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>";
        for (const auto& [k, parts] : uploads) {
          size_t bar = k.find('|');
          body += "<Upload><Key>" + k.substr(0, bar) + "</Key><UploadId>" + k.substr(bar + 1) +
                  "</UploadId></Upload>";
        }
        res.body() = body + "</ListMultipartUploadsResult>";
        return res;
      }
      // ListObjectsV2, two keys a page so that tokens are exercised.
      std::string prefix = Param(query, "prefix"), token = Param(query, "continuation-token");
      std::string body = "<ListBucketResult>";
      int n = 0;
      std::string last;
      bool more = false;
      for (auto it = objects.upper_bound(token); it != objects.end(); ++it) {
        if (!it->first.starts_with(prefix)) continue;
        if (n == 2) {
          more = true;
          break;
        }
        body += "<Contents><Key>" + it->first + "</Key><Size>" +
                std::to_string(it->second.size()) + "</Size></Contents>";
        last = it->first;
        ++n;
      }
      body += more ? "<IsTruncated>true</IsTruncated><NextContinuationToken>" + last +
                         "</NextContinuationToken>"
                   : "<IsTruncated>false</IsTruncated>";
      res.body() = body + "</ListBucketResult>";
      return res;
    }
    const std::string upload = Param(query, "uploadId");
    if (m == bhttp::verb::post && query.starts_with("uploads")) {
      std::string id = "up" + std::to_string(uploads.size() + 1);
      uploads[key + "|" + id];
      res.body() = "<InitiateMultipartUploadResult><UploadId>" + id +
                   "</UploadId></InitiateMultipartUploadResult>";
      return res;
    }
    if (!upload.empty()) {
      auto it = uploads.find(key + "|" + upload);
      if (it == uploads.end()) return not_found("NoSuchUpload");
      if (m == bhttp::verb::put) {
        int n = std::stoi(Param(query, "partNumber"));
        it->second[n] = req.body();
        res.set(bhttp::field::etag, "\"p" + std::to_string(n) + "\"");
      } else if (m == bhttp::verb::post) {
        std::string all;
        for (const auto& [n, bytes] : it->second) all += bytes;
        objects[key] = all;
        uploads.erase(it);
        res.body() = "<CompleteMultipartUploadResult/>";
      } else if (m == bhttp::verb::delete_) {
        uploads.erase(it);
        res.result(204);
      }
      return res;
    }
    if (m == bhttp::verb::put) {
      objects[key] = req.body();
      std::string& md = meta[key];
      md.clear();
      for (const auto& f : req) {
        std::string name(f.name_string());
        if (AsciiLower(name).starts_with("x-amz-meta-")) md += AsciiLower(name) + "=" + std::string(f.value()) + ";";
      }
      return res;
    }
    if (m == bhttp::verb::delete_) {
      objects.erase(key);
      res.result(204);
      return res;
    }
    auto it = objects.find(key);
    if (it == objects.end()) return not_found("NoSuchKey");
    if (m == bhttp::verb::head) {
      res.content_length(it->second.size());
      std::string_view md = meta[key];
      while (!md.empty()) {
        size_t eq = md.find('='), semi = md.find(';');
        res.set(boost::beast::string_view(md.data(), eq),
                boost::beast::string_view(md.data() + eq + 1, semi - eq - 1));
        md.remove_prefix(semi + 1);
      }
      return res;
    }
    std::string range(req[bhttp::field::range]);  // bytes=A-B
    if (range.empty()) {
      res.body() = it->second;
      return res;
    }
    uint64_t a = std::stoull(range.substr(6)), b = std::stoull(range.substr(range.find('-') + 1));
    if (a >= it->second.size()) {
      res.result(416);
      return res;
    }
    res.result(206);
    res.body() = it->second.substr(a, b - a + 1);
    return res;
  }

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> conns_;
};

RemoteOptions Options(int port) {
  RemoteOptions o;
  o.endpoint.host = "127.0.0.1";
  o.endpoint.port = port;
  o.endpoint.bucket = "cold";
  o.endpoint.credentials = {"AK", "SK"};
  o.endpoint.timeout_ms = 5000;
  o.prefix = "site/";
  o.part_bytes = 5u << 20;
  return o;
}

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  return s;
}

std::string ReadAll(storage::DataReader& r) {
  std::string out(r.size(), '\0');
  size_t done = 0;
  while (done < out.size()) {
    auto n = r.ReadAt(done, out.data() + done, std::min<size_t>(1 << 20, out.size() - done));
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    done += *n;
  }
  out.resize(done);
  return out;
}

const storage::DataHeader kHeader{"photos", "2026/a b.jpg", "", 0, 42};

TEST(RemoteFooterTest, RoundTripAndDamage) {
  std::string f = EncodeFooter({"b", "k", "u", 3, 7}, "trailer-bytes", 1234);
  auto len = FooterLength(std::string_view(f).substr(f.size() - kFooterTailBytes));
  ASSERT_TRUE(len);
  EXPECT_EQ(*len, f.size());
  auto d = DecodeFooter(f);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->header, (storage::DataHeader{"b", "k", "u", 3, 7}));
  EXPECT_EQ(d->trailer, "trailer-bytes");
  EXPECT_EQ(d->data_size, 1234u);
  for (size_t i = 0; i < f.size(); ++i) {
    std::string bad = f;
    bad[i] ^= 0x20;
    auto dd = DecodeFooter(bad);
    EXPECT_FALSE(dd && dd->header == d->header && dd->trailer == d->trailer &&
                 dd->data_size == d->data_size)
        << "a flipped byte at " << i << " went unnoticed";
  }
  EXPECT_FALSE(DecodeFooter(f.substr(1)));
}

TEST(RemoteStoreTest, SmallWriteIsOneObjectWithItsFooter) {
  FakeS3 s3;
  auto store = RemoteDataStore::Open(Options(s3.port()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Check().ok());
  auto w = (*store)->Create("00ab", kHeader);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("hello ").ok());
  ASSERT_TRUE((*w)->Append("cold world").ok());
  ASSERT_TRUE((*w)->Finish("the-record").ok());
  {
    std::lock_guard lock(s3.mu);
    ASSERT_EQ(s3.objects.count("site/00ab"), 1u);
    EXPECT_TRUE(s3.objects["site/00ab"].starts_with("hello cold world"));
    EXPECT_NE(s3.meta["site/00ab"].find("x-amz-meta-strata-size=16"), std::string::npos);
    EXPECT_NE(s3.meta["site/00ab"].find("x-amz-meta-strata-key=2026%2Fa%20b.jpg"), std::string::npos);
  }
  auto r = (*store)->Open("00ab", 16);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAll(**r), "hello cold world");
  char buf[8];
  auto n = (*r)->ReadAt(6, buf, 4);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf, *n), "cold");
  EXPECT_EQ(*(*r)->ReadAt(16, buf, 8), 0u);  // the footer is never data
  // A record that disagrees on the size is refused at the first read.
  auto wrong = (*store)->Open("00ab", 17);
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ((*wrong)->ReadAt(0, buf, 8).status().code(), Code::kCorruption);
  auto ht = (*store)->ReadHeaderAndTrailer("00ab");
  ASSERT_TRUE(ht.ok()) << ht.status().ToString();
  EXPECT_EQ(ht->first, kHeader);
  EXPECT_EQ(ht->second, "the-record");
  auto absent = (*store)->Open("ffff", 1);
  ASSERT_TRUE(absent.ok());  // no request yet
  EXPECT_EQ((*absent)->ReadAt(0, buf, 1).status().code(), Code::kNotFound);
}

TEST(RemoteStoreTest, LargeWriteGoesAsMultipartAndReadsBack) {
  FakeS3 s3;
  auto store = RemoteDataStore::Open(Options(s3.port()));
  ASSERT_TRUE(store.ok());
  const std::string data = Pattern(12u << 20 | 12345);  // three parts, the last short
  auto w = (*store)->Create("0c", kHeader);
  ASSERT_TRUE(w.ok());
  for (size_t at = 0; at < data.size(); at += 777777) {
    ASSERT_TRUE((*w)->Append(std::string_view(data).substr(at, 777777)).ok());
  }
  ASSERT_TRUE((*w)->Finish("rec").ok());
  {
    std::lock_guard lock(s3.mu);
    EXPECT_TRUE(s3.uploads.empty());
  }
  auto r = (*store)->Open("0c", data.size());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(ReadAll(**r) == data);
  auto ht = (*store)->ReadHeaderAndTrailer("0c");
  ASSERT_TRUE(ht.ok());
  EXPECT_EQ(ht->second, "rec");
}

TEST(RemoteStoreTest, AbortAndStaleUploadsLeaveNothing) {
  FakeS3 s3;
  auto store = RemoteDataStore::Open(Options(s3.port()));
  ASSERT_TRUE(store.ok());
  {
    auto w = (*store)->Create("0d", kHeader);
    ASSERT_TRUE((*w)->Append(Pattern(6u << 20)).ok());  // one part sent
    (*w)->Abort();
  }
  {
    // A writer dropped without Finish (a crash would leave this upload behind).
    auto w = (*store)->Create("0e", kHeader);
    ASSERT_TRUE((*w)->Append(Pattern(6u << 20)).ok());
    std::lock_guard lock(s3.mu);
    EXPECT_EQ(s3.uploads.size(), 1u);
    s3.uploads["site/0f|leftover"];  // left by an earlier process
  }
  auto aborted = (*store)->AbortStaleUploads();
  ASSERT_TRUE(aborted.ok()) << aborted.status().ToString();
  EXPECT_EQ(*aborted, 1u);
  std::lock_guard lock(s3.mu);
  EXPECT_TRUE(s3.uploads.empty());
  EXPECT_TRUE(s3.objects.empty());
}

TEST(RemoteStoreTest, ListIdsPagesAndSkipsForeignNames) {
  FakeS3 s3;
  auto store = RemoteDataStore::Open(Options(s3.port()));
  ASSERT_TRUE(store.ok());
  for (const char* id : {"01", "02", "0a", "ff"}) {
    auto w = (*store)->Create(id, kHeader);
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  {
    std::lock_guard lock(s3.mu);
    s3.objects["site/README"] = "not ours";
    s3.objects["other/03"] = "another prefix";
  }
  auto ids = (*store)->ListIds();
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, (std::vector<std::string>{"01", "02", "0a", "ff"}));
  ASSERT_TRUE((*store)->Remove("02").ok());
  EXPECT_EQ((*store)->ListIds()->size(), 3u);
}

TEST(RemoteStoreTest, RetriesBusyEndpointAndDroppedKeepAlive) {
  FakeS3 s3;
  auto store = RemoteDataStore::Open(Options(s3.port()));
  ASSERT_TRUE(store.ok());
  s3.fail_next = 2;  // two 503s, then served
  auto w = (*store)->Create("0a", kHeader);
  ASSERT_TRUE((*w)->Finish("").ok());
  EXPECT_EQ(s3.requests.load(), 3);
  // Every connection is closed after its exchange; the pooled one is stale.
  s3.close_idle = true;
  for (int i = 0; i < 3; ++i) {
    auto ht = (*store)->ReadHeaderAndTrailer("0a");
    EXPECT_TRUE(ht.ok()) << ht.status().ToString();
  }
  s3.close_idle = false;
  s3.fail_next = 5;  // more than the retries
  auto busy = (*store)->ListIds();  // a GET: the error document names the code
  EXPECT_EQ(busy.status().code(), Code::kUnavailable) << busy.status().ToString();
  EXPECT_NE(busy.status().message().find("SlowDown"), std::string::npos);
}

TEST(RemoteStoreTest, EndpointAwayIsUnavailable) {
  int port;
  {
    FakeS3 s3;
    port = s3.port();
  }
  auto store = RemoteDataStore::Open(Options(port));
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Check().code(), Code::kUnavailable);
  auto w = (*store)->Create("0a", kHeader);
  ASSERT_TRUE(w.ok());
  Status st = (*w)->Finish("");
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
}

}  // namespace
}  // namespace strata::remote
