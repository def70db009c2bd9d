#include "s3_cases.h"

#include <atomic>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/encoding.h"
#include "pattern.h"
#include "workload.h"

namespace strata::bench {
namespace {

constexpr size_t kSmallObjectBytes = 4096;
// Small object i holds the pattern from offset i * kSmallStride: distinct
// contents per key, so a GET answered with another key's data is caught.
constexpr uint64_t kSmallStride = 4099;
constexpr int kConcurrencies[] = {1, 16, 64};
constexpr int kListPageKeys = 1000;

constexpr char kLargeBucket[] = "bench-large";
constexpr char kLargeKey[] = "large-single";
constexpr char kMultipartKey[] = "large-multipart";
// Holds one object per complete listing bucket (named after it, written
// last), so a bucket populated by an earlier run against the same --endpoint
// is reused. A separate bucket, so the marker never shows up in a listing.
constexpr char kMarkerBucket[] = "bench-populated";

// ---- helpers ----------------------------------------------------------------

// Runs fn(0..n-1) on n threads; rethrows the first exception (keeping its
// type, so NotImplementedError stays n/a).
void RunParallel(int n, const std::function<void(int)>& fn) {
  std::mutex mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

std::string CountLabel(int n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return std::to_string(n / 1'000'000) + "M";
  if (n >= 1000 && n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

void ThrowIfNotImplemented(const S3Response& resp) {
  if (resp.status == 501) throw NotImplementedError("multipart not implemented");
}

}  // namespace

// PUTs objects 0..count-1 (key_of(i), body_of(i)) from `concurrency`
// connections; prints progress for long populations.
void PopulateKeys(const Target& target, const std::string& bucket, int count, int concurrency,
                  const std::function<std::string(int)>& key_of,
                  const std::function<std::string_view(int)>& body_of) {
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::atomic<bool> failed{false};
  double start_s = NowSeconds();
  std::thread progress;
  std::atomic<bool> finished{false};
  if (count >= 100'000) {
    progress = std::thread([&] {
      double last = NowSeconds();
      while (!finished) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (NowSeconds() - last < 15) continue;
        last = NowSeconds();
        std::fprintf(stderr, "[s3bench] creating %d keys in %s: %d done (%.0f/s)\n", count,
                     bucket.c_str(), done.load(), done / (last - start_s));
      }
    });
  }
  try {
    RunParallel(concurrency, [&](int) {
      auto client = target.NewClient();
      for (int i = next++; i < count && !failed; i = next++) {
        S3Response resp = client->Send({"PUT", ObjectPath(bucket, key_of(i))}, body_of(i));
        if (resp.status != 200) failed = true;
        ExpectStatus(resp, 200, "PUT while creating keys in " + bucket);
        ++done;
      }
    });
  } catch (...) {
    finished = true;
    if (progress.joinable()) progress.join();
    throw;
  }
  finished = true;
  if (progress.joinable()) progress.join();
  std::fprintf(stderr, "[s3bench] created %d keys in %s in %.1f s\n", count, bucket.c_str(),
               NowSeconds() - start_s);
}

namespace {

// GETs [offset, offset + length) of the large object (a Range request unless
// it is the whole object) and verifies every byte.
void GetAndVerify(S3Client& client, uint64_t object_size, uint64_t offset, uint64_t length) {
  S3Request req("GET", ObjectPath(kLargeBucket, kLargeKey));
  bool ranged = offset != 0 || length != object_size;
  if (ranged) {
    req.extra_headers.emplace_back(
        "Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1));
  }
  uint64_t received = 0;
  BodySink sink = VerifyingSink(offset, &received);
  S3Response resp = client.Send(req, "", &sink);
  ExpectStatus(resp, ranged ? 206 : 200, "GET large object");
  if (received != length) {
    throw BenchError("GET large object: " + std::to_string(received) + " bytes, expected " +
                     std::to_string(length));
  }
}

void PutLargeObject(const Target& target, uint64_t size) {
  S3Request req("PUT", ObjectPath(kLargeBucket, kLargeKey));
  req.body_size = size;
  S3Response resp = target.NewClient()->SendStreaming(req, PatternBody(0, size));
  ExpectStatus(resp, 200, "PUT large object");
}

// One multipart upload of `size` bytes in `parts` parallel parts, from
// CreateMultipartUpload to CompleteMultipartUpload.
void MultipartPut(const Target& target, uint64_t size, int parts) {
  const std::string path = ObjectPath(kLargeBucket, kMultipartKey);
  auto client = target.NewClient();
  S3Response created = client->Send({"POST", path, "uploads"}, "");
  ThrowIfNotImplemented(created);
  ExpectStatus(created, 200, "CreateMultipartUpload");
  std::string upload_id = XmlElement(created.body, "UploadId");
  if (upload_id.empty()) throw BenchError("CreateMultipartUpload: no UploadId in the response");
  const std::string encoded_id = UriEncode(upload_id, /*encode_slash=*/true);

  uint64_t part_size = (size + parts - 1) / parts;
  std::vector<std::string> etags(parts);
  RunParallel(parts, [&](int i) {
    uint64_t offset = i * part_size;
    uint64_t length = std::min(part_size, size - offset);
    S3Request req("PUT", path, "partNumber=" + std::to_string(i + 1) + "&uploadId=" + encoded_id);
    req.body_size = length;
    S3Response resp = target.NewClient()->SendStreaming(req, PatternBody(offset, length));
    ThrowIfNotImplemented(resp);
    ExpectStatus(resp, 200, "UploadPart " + std::to_string(i + 1));
    const std::string* etag = resp.head.Header("etag");
    if (etag == nullptr) throw BenchError("UploadPart: no ETag in the response");
    etags[i] = *etag;
  });

  std::string xml = "<CompleteMultipartUpload>";
  for (int i = 0; i < parts; ++i) {
    xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] +
           "</ETag></Part>";
  }
  xml += "</CompleteMultipartUpload>";
  S3Response completed = client->Send({"POST", path, "uploadId=" + encoded_id}, xml);
  ThrowIfNotImplemented(completed);
  ExpectStatus(completed, 200, "CompleteMultipartUpload");
  // S3 may report a failed completion inside a 200 response.
  if (completed.body.find("<Error>") != std::string::npos) {
    throw BenchError("CompleteMultipartUpload: error in 200 response: " +
                     XmlElement(completed.body, "Code"));
  }
}

// Small-object figures of one concurrency are compared with the echo
// request/response rate: at c=1 with RR c=1 (information only), at c=16 and
// c=64 with RR c=16, against which the targets are defined.
Comparison SmallComparison(int concurrency, double target) {
  if (concurrency == 1) return {{"rr_c1"}, "RR c=1", NAN};
  return {{"rr_c16"}, "RR c=16", target};
}

std::string ListKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k/%08d", i);
  return buf;
}

// Creates `count` empty objects in `bucket`, unless a previous run did.
void PopulateListBucket(const CaseOptions& opt, const Target& target, const std::string& bucket,
                        int count) {
  EnsureBucket(target, bucket);
  EnsureBucket(target, kMarkerBucket);
  auto client = target.NewClient();
  const std::string marker_path = ObjectPath(kMarkerBucket, bucket);
  S3Response marker = client->Send({"GET", marker_path}, "");
  if (marker.status == 200 && marker.body == std::to_string(count)) return;
  PopulateKeys(target, bucket, count, opt.populate_concurrency, ListKey,
               [](int) { return std::string_view(); });
  // A new connection: the first one sat idle through the population (1M
  // keys take minutes; the server closes idle keep-alive connections after 60 s).
  ExpectStatus(target.NewClient()->Send({"PUT", marker_path}, std::to_string(count)), 200,
               "PUT populated marker");
}

// One ListObjectsV2 page after a random key; checks that the page holds
// exactly the keys that follow it.
Operation ListWorker(const Target& target, const std::string& bucket, int count, int worker) {
  auto client = std::shared_ptr<S3Client>(target.NewClient());
  client->Connect();
  auto rng = std::make_shared<uint64_t>(0x2545F4914F6CDD1Dull + worker);
  return [client, rng, bucket, count](uint64_t) {
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    // after = -1: first page; otherwise start after key `after`, chosen so the
    // page is full whenever the bucket holds more than one page.
    int last_full_start = count - kListPageKeys - 1;
    int after = last_full_start < 0 ? -1 : static_cast<int>(*rng % (last_full_start + 2)) - 1;
    std::string query = "list-type=2&max-keys=" + std::to_string(kListPageKeys);
    if (after >= 0) query += "&start-after=" + UriEncode(ListKey(after), /*encode_slash=*/true);
    S3Response resp = client->Send({"GET", "/" + bucket, query}, "");
    ExpectStatus(resp, 200, "ListObjectsV2");
    size_t expected = std::min(kListPageKeys, count - (after + 1));
    size_t keys = XmlCount(resp.body, "Key");
    if (keys != expected || XmlElement(resp.body, "Key") != ListKey(after + 1)) {
      throw BenchError("ListObjectsV2 after " + std::to_string(after) + ": " +
                       std::to_string(keys) + " keys starting at " + XmlElement(resp.body, "Key") +
                       ", expected " + std::to_string(expected) + " from " + ListKey(after + 1));
    }
  };
}

}  // namespace

// ---- shared with ec_cases.cc ------------------------------------------------

std::string SizeLabel(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes >> 20) + " MiB";
}

void EnsureBucket(const Target& target, const std::string& bucket) {
  S3Response resp = target.NewClient()->Send({"PUT", "/" + bucket}, "");
  if (resp.status == 409 && XmlElement(resp.body, "Code") == "BucketAlreadyOwnedByYou") return;
  ExpectStatus(resp, 200, "CreateBucket " + bucket);
}

// Writes n pattern bytes starting at stream offset `offset`, 1 MiB at a time.
BodyWriter PatternBody(uint64_t offset, uint64_t n) {
  return [offset, n](Socket& socket) {
    for (uint64_t done = 0; done < n;) {
      size_t step = static_cast<size_t>(std::min<uint64_t>(n - done, Pattern::kMaxSlice));
      std::string_view slice = SharedPattern().Slice(offset + done, step);
      socket.WriteAll(slice.data(), slice.size());
      done += step;
    }
  };
}

// A sink that checks arriving bytes against the pattern from `offset` and
// counts them in *received.
BodySink VerifyingSink(uint64_t offset, uint64_t* received) {
  return [offset, received](const char* data, size_t n) {
    if (!SharedPattern().Matches(offset + *received, data, n)) {
      throw BenchError("GET data mismatch at object offset " + std::to_string(offset + *received));
    }
    *received += n;
  };
}

// ---- 4 KiB ----------------------------------------------------------------------

TimedResult TimedSmallPuts(const Target& target, int c, double duration_s,
                           const std::string& prefix) {
  // Fresh keys in every run: the figure is for creating objects.
  return RunTimed(c, duration_s, [&](int worker) -> Operation {
    auto client = std::shared_ptr<S3Client>(target.NewClient());
    client->Connect();
    std::string worker_prefix = prefix + "/w" + std::to_string(worker) + "/";
    return [client, worker_prefix](uint64_t seq) {
      S3Response resp =
          client->Send({"PUT", ObjectPath(kSmallBucket, worker_prefix + std::to_string(seq))},
                       SharedPattern().Slice(seq * kSmallStride, kSmallObjectBytes));
      ExpectStatus(resp, 200, "PUT 4 KiB");
    };
  });
}

void RunSmallPut(const CaseOptions& opt, const Target& target, Report& report) {
  EnsureBucket(target, kSmallBucket);
  for (int c : kConcurrencies) {
    Row& row = report.Add("put4k_c" + std::to_string(c), "PUT 4 KiB, c=" + std::to_string(c),
                          Unit::kOpsPerSecond, SmallComparison(c, 0.10));
    report.Measure(row, opt.runs, [&](int run) {
      TimedResult r = TimedSmallPuts(target, c, opt.duration_s,
                                     "put/c" + std::to_string(c) + "/r" + std::to_string(run));
      return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
}

void PopulateSmallGetKeys(const Target& target, int keys) {
  EnsureBucket(target, kSmallBucket);
  PopulateKeys(target, kSmallBucket, keys, std::min(16, keys), SmallGetKey,
               [](int i) { return SharedPattern().Slice(i * kSmallStride, kSmallObjectBytes); });
}

TimedResult TimedSmallGets(const Target& target, int c, double duration_s, int keys) {
  return RunTimed(c, duration_s, [&](int worker) -> Operation {
    auto client = std::shared_ptr<S3Client>(target.NewClient());
    client->Connect();
    auto rng = std::make_shared<uint64_t>(0x9E3779B97F4A7C15ull * (worker + 1));
    return [client, rng, keys](uint64_t) {
      *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
      int i = static_cast<int>(*rng % keys);
      S3Response resp = client->Send({"GET", ObjectPath(kSmallBucket, SmallGetKey(i))}, "");
      ExpectStatus(resp, 200, "GET 4 KiB");
      if (resp.body != SharedPattern().Slice(i * kSmallStride, kSmallObjectBytes)) {
        throw BenchError("GET 4 KiB: wrong data for " + SmallGetKey(i));
      }
    };
  });
}

void RunSmallGet(const CaseOptions& opt, const Target& target, Report& report) {
  PopulateSmallGetKeys(target, opt.small_get_keys);
  for (int c : kConcurrencies) {
    Row& row = report.Add("get4k_c" + std::to_string(c), "GET 4 KiB, c=" + std::to_string(c),
                          Unit::kOpsPerSecond, SmallComparison(c, 0.30));
    report.Measure(row, opt.runs, [&](int) {
      TimedResult r = TimedSmallGets(target, c, opt.duration_s, opt.small_get_keys);
      return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
  }
}

// ---- large objects --------------------------------------------------------------

void RunLargePut(const CaseOptions& opt, const Target& target, Report& report) {
  EnsureBucket(target, kLargeBucket);
  const uint64_t size = opt.large_bytes;
  const Comparison vs_put_limit{{"loopback", "md5"}, "min(loopback, MD5)", 0.80};
  Row& single = report.Add("put_large_1", "PUT " + SizeLabel(size) + ", 1 stream",
                           Unit::kBytesPerSecond, vs_put_limit);
  report.Measure(single, opt.runs, [&](int) {
    double start = NowSeconds();
    PutLargeObject(target, size);
    return RunFigure{size / (NowSeconds() - start)};
  });
  Row& multi = report.Add(
      "put_large_n",
      "PUT " + SizeLabel(size) + ", " + std::to_string(opt.large_streams) + " parts (multipart)",
      Unit::kBytesPerSecond, vs_put_limit);
  report.Measure(multi, opt.runs, [&](int) {
    double start = NowSeconds();
    MultipartPut(target, size, opt.large_streams);
    return RunFigure{size / (NowSeconds() - start)};
  });
}

void RunLargeGet(const CaseOptions& opt, const Target& target, Report& report) {
  EnsureBucket(target, kLargeBucket);
  const uint64_t size = opt.large_bytes;
  // The object the PUT case left behind, or a fresh one (--only get_large).
  S3Response head = target.NewClient()->Send({"HEAD", ObjectPath(kLargeBucket, kLargeKey)}, "");
  if (head.status != 200 || head.head.content_length != size) PutLargeObject(target, size);

  const Comparison vs_loopback{{"loopback"}, "loopback", 0.80};
  Row& single = report.Add("get_large_1", "GET " + SizeLabel(size) + ", 1 stream",
                           Unit::kBytesPerSecond, vs_loopback);
  report.Measure(single, opt.runs, [&](int) {
    auto client = target.NewClient();
    client->Connect();
    double start = NowSeconds();
    GetAndVerify(*client, size, 0, size);
    return RunFigure{size / (NowSeconds() - start)};
  });
  const int n = opt.large_streams;
  Row& multi =
      report.Add("get_large_n", "GET " + SizeLabel(size) + ", " + std::to_string(n) + " ranges",
                 Unit::kBytesPerSecond, vs_loopback);
  report.Measure(multi, opt.runs, [&](int) {
    std::vector<std::unique_ptr<S3Client>> clients;
    for (int i = 0; i < n; ++i) {
      clients.push_back(target.NewClient());
      clients.back()->Connect();
    }
    uint64_t range = (size + n - 1) / n;
    double start = NowSeconds();
    RunParallel(n, [&](int i) {
      uint64_t offset = i * range;
      GetAndVerify(*clients[i], size, offset, std::min(range, size - offset));
    });
    return RunFigure{size / (NowSeconds() - start)};
  });
}

// ---- listing ----------------------------------------------------------------------

void RunList(const CaseOptions& opt, const Target& target, Report& report) {
  struct Bucket {
    const char* id;
    int keys;
  };
  const Bucket buckets[] = {{"list_small", opt.list_small_keys},
                            {"list_large", opt.list_large_keys}};
  for (const Bucket& b : buckets) {
    std::string bucket = "bench-list-" + std::to_string(b.keys);
    std::string label = "LIST page, " + CountLabel(b.keys) + " keys";
    Comparison vs_small;
    if (std::string(b.id) == "list_large") {
      vs_small = {{"list_small"}, "p50 @" + CountLabel(opt.list_small_keys), 1.5, true};
    }
    Row& row = report.Add(b.id, label, Unit::kMilliseconds, vs_small);
    try {
      PopulateListBucket(opt, target, bucket, b.keys);
    } catch (const BenchError& e) {
      row.note = std::string("FAILED: creating keys: ") + e.what();
      row.failed = true;
      continue;
    }
    report.Measure(row, opt.runs, [&](int) {
      TimedResult r = RunTimed(1, opt.duration_s, [&](int worker) {
        return ListWorker(target, bucket, b.keys, worker);
      });
      return RunFigure{r.PercentileUs(0.50) / 1e3, r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
    // The server's memory with this many keys stored, after the PUTs that made them and
    // the listing runs (issue 17: RSS with 1M stored objects and after 1M requests).
    if (opt.server_pid > 0) {
      char note[200];
      std::snprintf(note, sizeof note,
                    "%s: server RSS %.0f MiB, peak %.0f MiB (every key created so far stored)",
                    label.c_str(), ProcessMemoryBytes(opt.server_pid, "VmRSS") / 1048576.0,
                    ProcessMemoryBytes(opt.server_pid, "VmHWM") / 1048576.0);
      report.AddNote(note);
    }
  }
}

FeatureRows MeasureFeatureCost(const CaseOptions& opt, Report& report, const FeatureSide& off,
                               const FeatureSide& on, double target, double cpu_target,
                               const std::function<TimedResult(const Target&, int run)>& timed) {
  FeatureRows rows;
  rows.off = &report.Add(off.id, off.label, Unit::kOpsPerSecond);
  Comparison vs_off;
  vs_off.limit_ids = {rows.off->id};
  vs_off.limit_label = "same, off";
  vs_off.target = target;
  rows.on = &report.Add(on.id, on.label, Unit::kOpsPerSecond, vs_off);
  // The server's CPU per operation in the same runs: less at the mercy of how
  // the two shared cores are scheduled than throughput is.
  rows.off_cpu = &report.Add(off.id + "_cpu", "  server CPU per op, off", Unit::kMicroseconds);
  Comparison cpu_vs_off;
  cpu_vs_off.limit_ids = {rows.off_cpu->id};
  cpu_vs_off.limit_label = "same, off";
  cpu_vs_off.target = cpu_target;
  cpu_vs_off.at_most = true;
  rows.on_cpu = &report.Add(on.id + "_cpu", "  server CPU per op, on", Unit::kMicroseconds, cpu_vs_off);
  struct Side {
    Row* row;
    Row* cpu;
    const FeatureSide* side;
  };
  for (int run = 0; run < opt.runs; ++run) {
    Side order[] = {{rows.off, rows.off_cpu, &off}, {rows.on, rows.on_cpu, &on}};
    if (run % 2 == 1) std::swap(order[0], order[1]);
    for (const Side& s : order) {
      double cpu_us = NAN;
      report.MeasureRun(*s.row, run, opt.runs, [&](int r) {
        const double cpu0 = ProcessCpuSeconds(s.side->pid);
        TimedResult t = timed(*s.side->target, r);
        if (t.ops > 0) cpu_us = (ProcessCpuSeconds(s.side->pid) - cpu0) * 1e6 / t.ops;
        return RunFigure{t.OpsPerSecond(), t.PercentileUs(0.50), t.PercentileUs(0.99)};
      });
      report.MeasureRun(*s.cpu, run, opt.runs, [&](int) { return RunFigure{cpu_us}; });
    }
  }
  return rows;
}

}  // namespace strata::bench
