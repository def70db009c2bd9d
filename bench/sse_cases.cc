// The sse group: what server-side encryption costs (issue 13).
//  - AES-256-GCM sealing of 64 KiB chunks on one core (crypto::ChunkCipher,
//    what every encrypted PUT and GET does), by this thread's CPU clock.
//  - PUT and GET of one large object (1 GiB; smoke: --large-mib) into a bucket
//    whose default encryption is SSE-S3 vs a bucket without, the two
//    alternating run by run. Targets >= 90 %.
//  - GET 4 KiB at c=16 from the SSE-S3 bucket vs the plain one. Target >= 95 %.
// Every GET is checked byte for byte against the pattern it was written with.
#include <unistd.h>

#include <algorithm>
#include <string>

#include "common/hash.h"
#include "crypto/chunk_cipher.h"
#include "pattern.h"
#include "s3_cases.h"
#include "workload.h"

namespace strata::bench {
namespace {

constexpr char kPlainBucket[] = "bench-sse-plain";
constexpr char kSseBucket[] = "bench-sse-s3";
constexpr char kLargeKey[] = "large";
constexpr int kSmallKeys = 256;
constexpr size_t kSmallBytes = 4096;

std::string SmallKey(int i) { return "small/" + std::to_string(i); }

RunFigure SealRun(double duration_s) {
  crypto::ChunkCipher cipher(RandomBytes(crypto::kDataKeyBytes), RandomBytes(crypto::kSaltBytes),
                             std::string("bench-sse-s3\0large", 18));
  std::string_view plain = SharedPattern().Slice(0, crypto::kChunkBytes);
  std::string out(crypto::kSealedChunkBytes, '\0');
  uint64_t bytes = 0, index = 0;
  const double start = ThreadCpuSeconds();
  double now = start;
  while (now - start < duration_s) {
    for (int i = 0; i < 64; ++i) cipher.Seal(index++, false, plain, out.data());
    bytes += 64 * plain.size();
    now = ThreadCpuSeconds();
  }
  return RunFigure{bytes / (now - start)};
}

void SetDefaultSseS3(const Target& target, const std::string& bucket) {
  const std::string xml =
      "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>"
      "<SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule>"
      "</ServerSideEncryptionConfiguration>";
  S3Response r = target.NewClient()->Send({"PUT", "/" + bucket, "encryption"}, xml);
  if (r.status == 501) throw NotImplementedError("no bucket encryption");
  ExpectStatus(r, 200, "PutBucketEncryption " + bucket);
}

void PutLarge(const Target& target, const std::string& bucket, uint64_t size) {
  S3Request req("PUT", ObjectPath(bucket, kLargeKey));
  req.body_size = size;
  S3Response resp = target.NewClient()->SendStreaming(req, PatternBody(0, size));
  ExpectStatus(resp, 200, "PUT large object into " + bucket);
  const std::string* sse = resp.head.Header("x-amz-server-side-encryption");
  if ((bucket == kSseBucket) != (sse != nullptr)) {
    throw BenchError("PUT into " + bucket + ": encryption not as configured");
  }
}

void GetLarge(const Target& target, const std::string& bucket, uint64_t size) {
  auto client = target.NewClient();
  client->Connect();
  uint64_t received = 0;
  BodySink sink = VerifyingSink(0, &received);
  S3Response resp = client->Send({"GET", ObjectPath(bucket, kLargeKey)}, "", &sink);
  ExpectStatus(resp, 200, "GET large object from " + bucket);
  if (received != size) throw BenchError("GET large object from " + bucket + ": short");
}

Operation SmallGetWorker(const Target& target, const std::string& bucket, int worker) {
  auto client = std::shared_ptr<S3Client>(target.NewClient());
  client->Connect();
  auto rng = std::make_shared<uint64_t>(0x9E3779B97F4A7C15ull * (worker + 7));
  return [client, rng, bucket](uint64_t) {
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    int i = static_cast<int>(*rng % kSmallKeys);
    S3Response resp = client->Send({"GET", ObjectPath(bucket, SmallKey(i))}, "");
    ExpectStatus(resp, 200, "GET 4 KiB (" + bucket + ")");
    if (resp.body != SharedPattern().Slice(i * 4099, kSmallBytes)) {
      throw BenchError("GET 4 KiB: wrong data for " + bucket + "/" + SmallKey(i));
    }
  };
}

}  // namespace

void RunSse(const CaseOptions& opt, const Target& target, Report& report) {
  Row& seal = report.Add("aes_gcm", "AES-256-GCM seal, 64 KiB chunks, one core",
                         Unit::kBytesPerSecond);
  report.Measure(seal, opt.runs, [&](int) { return SealRun(opt.duration_s / 2); });

  EnsureBucket(target, kPlainBucket);
  EnsureBucket(target, kSseBucket);
  SetDefaultSseS3(target, kSseBucket);
  const uint64_t size = opt.large_bytes;
  const std::string label = SizeLabel(size);
  Row& put_plain = report.Add("sse_put_plain", "PUT " + label + ", 1 stream, unencrypted",
                              Unit::kBytesPerSecond);
  Row& put_sse = report.Add("sse_put_s3", "PUT " + label + ", 1 stream, SSE-S3",
                            Unit::kBytesPerSecond, {{"sse_put_plain"}, "unencrypted", 0.90});
  for (int run = 0; run < opt.runs; ++run) {
    for (auto [row, bucket] : {std::pair{&put_plain, kPlainBucket}, std::pair{&put_sse, kSseBucket}}) {
      report.MeasureRun(*row, run, opt.runs, [&, bucket = bucket](int) {
        double start = NowSeconds();
        PutLarge(target, bucket, size);
        return RunFigure{size / (NowSeconds() - start)};
      });
    }
  }
  // With each GET: how busy the whole machine was (load generator, server,
  // kernel) and the bytes per machine CPU-second. When the unencrypted GET
  // already keeps every core busy, the decryption's CPU cannot hide on a
  // spare core, and the wall-clock ratio falls to about the per-CPU-second
  // one: that ratio is what this machine can show, whatever the code does.
  Row& get_plain = report.Add("sse_get_plain", "GET " + label + ", 1 stream, unencrypted",
                              Unit::kBytesPerSecond);
  Row& get_sse = report.Add("sse_get_s3", "GET " + label + ", 1 stream, SSE-S3",
                            Unit::kBytesPerSecond, {{"sse_get_plain"}, "unencrypted", 0.90});
  Row& busy_plain = report.Add("sse_get_plain_busy", "  machine busy, unencrypted GET", Unit::kCores);
  Row& busy_sse = report.Add("sse_get_s3_busy", "  machine busy, SSE-S3 GET", Unit::kCores);
  Row& cpu_plain = report.Add("sse_get_plain_cpu", "  unencrypted GET, per machine CPU-s",
                              Unit::kBytesPerSecond);
  Row& cpu_sse = report.Add("sse_get_s3_cpu", "  SSE-S3 GET, per machine CPU-s", Unit::kBytesPerSecond,
                            {{"sse_get_plain_cpu"}, "unencrypted"});
  struct Rows {
    Row *rate, *busy, *cpu;
    const char* bucket;
  };
  for (int run = 0; run < opt.runs; ++run) {
    for (const Rows& r : {Rows{&get_plain, &busy_plain, &cpu_plain, kPlainBucket},
                          Rows{&get_sse, &busy_sse, &cpu_sse, kSseBucket}}) {
      double wall = 0, busy = 0;
      const bool ok = report.MeasureRun(*r.rate, run, opt.runs, [&](int) {
        const double busy0 = MachineBusySeconds(), start = NowSeconds();
        GetLarge(target, r.bucket, size);
        wall = NowSeconds() - start;
        busy = MachineBusySeconds() - busy0;
        return RunFigure{size / wall};
      });
      if (!ok) continue;
      const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
      report.MeasureRun(*r.busy, run, opt.runs, [&](int) { return RunFigure{busy / wall}; });
      report.MeasureRun(*r.cpu, run, opt.runs,
                        [&](int) { return RunFigure{size / std::max(busy, tick)}; });
    }
  }

  for (const char* bucket : {kPlainBucket, kSseBucket}) {
    PopulateKeys(target, bucket, kSmallKeys, 16, SmallKey,
                 [](int i) { return SharedPattern().Slice(i * 4099, kSmallBytes); });
  }
  constexpr int kConcurrency = 16;
  Row& small_plain = report.Add("sse_get4k_plain", "GET 4 KiB c=16, unencrypted",
                                Unit::kOpsPerSecond);
  Row& small_sse = report.Add("sse_get4k_s3", "GET 4 KiB c=16, SSE-S3", Unit::kOpsPerSecond,
                              {{"sse_get4k_plain"}, "unencrypted", 0.95});
  auto measure = [&](const std::string& bucket) {
    TimedResult r = RunTimed(kConcurrency, opt.duration_s,
                             [&](int worker) { return SmallGetWorker(target, bucket, worker); });
    return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(small_plain, run, opt.runs, [&](int) { return measure(kPlainBucket); });
    report.MeasureRun(small_sse, run, opt.runs, [&](int) { return measure(kSseBucket); });
  }
}

}  // namespace strata::bench
