// The versions group: what versioning costs.
//  - ListObjectsV2 page latency (1000 keys a page) over version_keys keys
//    with 1 version each and with version_depth versions each, every key's
//    latest live. Target: the deep bucket's p50 ≤ 1.5× the shallow one's
//    (ListObjects seeks past old versions instead of reading them).
//  - PUT 4 KiB at c=16 into an Enabled bucket vs a never-versioned one, the
//    two measured alternately in each run. Target ≥ 90 %.
#include <cstdio>
#include <string>

#include "common/encoding.h"
#include "common/hash.h"
#include "pattern.h"
#include "s3_cases.h"
#include "workload.h"

namespace strata::bench {
namespace {

constexpr int kPageKeys = 1000;
constexpr char kMarkerBucket[] = "bench-populated";

std::string VersionKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "v/%07d", i);
  return buf;
}

void EnableVersioning(const Target& target, const std::string& bucket) {
  const std::string body =
      "<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>";
  S3Request req("PUT", "/" + bucket, "versioning");
  StreamHash md5(StreamHash::Kind::kMd5);  // AWS requires Content-MD5 on this call
  md5.Update(body.data(), body.size());
  req.extra_headers.emplace_back("Content-MD5", Base64Encode(md5.Final()));
  S3Response resp = target.NewClient()->Send(req, body);
  if (resp.status == 501) throw NotImplementedError("versioning not implemented");
  ExpectStatus(resp, 200, "PutBucketVersioning " + bucket);
}

// keys × depth versions (the last written is the latest), unless done before.
void Populate(const CaseOptions& opt, const Target& target, const std::string& bucket, int keys,
              int depth) {
  EnsureBucket(target, bucket);
  EnsureBucket(target, kMarkerBucket);
  EnableVersioning(target, bucket);
  auto client = target.NewClient();
  const std::string marker_path = ObjectPath(kMarkerBucket, bucket);
  const std::string want = std::to_string(keys) + "x" + std::to_string(depth);
  S3Response marker = client->Send({"GET", marker_path}, "");
  if (marker.status == 200 && marker.body == want) return;
  // Version d of every key before version d+1 of any: the keys' versions
  // interleave in time, as a store's do.
  for (int d = 0; d < depth; ++d) {
    PopulateKeys(target, bucket, keys, opt.populate_concurrency, VersionKey,
                 [](int) { return std::string_view(); });
  }
  // A new connection: the first one sat idle through the population (the
  // server closes idle keep-alive connections after 60 s).
  ExpectStatus(target.NewClient()->Send({"PUT", marker_path}, want), 200, "PUT populated marker");
}

Operation ListWorker(const Target& target, const std::string& bucket, int keys, int worker) {
  auto client = std::shared_ptr<S3Client>(target.NewClient());
  client->Connect();
  auto rng = std::make_shared<uint64_t>(0x2545F4914F6CDD1Dull + worker);
  return [client, rng, bucket, keys](uint64_t) {
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    const int page = std::min(kPageKeys, keys);
    const int last_full_start = keys - page - 1;
    int after = last_full_start < 0 ? -1 : static_cast<int>(*rng % (last_full_start + 2)) - 1;
    std::string query = "list-type=2&max-keys=" + std::to_string(page);
    if (after >= 0) query += "&start-after=" + UriEncode(VersionKey(after), true);
    S3Response resp = client->Send({"GET", "/" + bucket, query}, "");
    ExpectStatus(resp, 200, "ListObjectsV2");
    const size_t expected = std::min(page, keys - (after + 1));
    if (XmlCount(resp.body, "Key") != expected ||
        XmlElement(resp.body, "Key") != VersionKey(after + 1)) {
      throw BenchError("ListObjectsV2 of " + bucket + " after " + std::to_string(after) +
                       ": wrong page (" + std::to_string(XmlCount(resp.body, "Key")) + " keys)");
    }
  };
}

}  // namespace

void RunVersions(const CaseOptions& opt, const Target& target, Report& report) {
  const int keys = opt.version_keys;
  const std::string shallow = "bench-ver-" + std::to_string(keys) + "x1";
  const std::string deep =
      "bench-ver-" + std::to_string(keys) + "x" + std::to_string(opt.version_depth);
  Row& one = report.Add("list_versions_1", "LIST page, " + std::to_string(keys) +
                                               " keys x 1 version", Unit::kMilliseconds);
  Row& many = report.Add("list_versions_deep",
                         "LIST page, " + std::to_string(keys) + " keys x " +
                             std::to_string(opt.version_depth) + " versions",
                         Unit::kMilliseconds, {{"list_versions_1"}, "p50 @1 version", 1.5, true});
  Populate(opt, target, shallow, keys, 1);
  Populate(opt, target, deep, keys, opt.version_depth);
  // The two rows alternate run by run, so that what the server does in the
  // background after the population (RocksDB flushes and compactions) falls
  // on both alike.
  auto list_run = [&](const std::string& bucket) {
    TimedResult r = RunTimed(1, opt.duration_s, [&](int worker) {
      return ListWorker(target, bucket, keys, worker);
    });
    return RunFigure{r.PercentileUs(0.50) / 1e3, r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(one, run, opt.runs, [&](int) { return list_run(shallow); });
    report.MeasureRun(many, run, opt.runs, [&](int) { return list_run(deep); });
  }

  // PUT 4 KiB, c=16: never-versioned vs Enabled, alternating within each run.
  const std::string plain = "bench-put-unversioned", versioned = "bench-put-versioned";
  EnsureBucket(target, plain);
  EnsureBucket(target, versioned);
  EnableVersioning(target, versioned);
  constexpr int kConcurrency = 16;
  Row& put_plain = report.Add("put4k_unversioned", "PUT 4 KiB c=16, unversioned bucket",
                              Unit::kOpsPerSecond);
  Row& put_versioned =
      report.Add("put4k_versioned", "PUT 4 KiB c=16, versioned bucket", Unit::kOpsPerSecond,
                 {{"put4k_unversioned"}, "unversioned", 0.90});
  auto measure = [&](const std::string& bucket, int) {
    TimedResult r = RunTimed(kConcurrency, opt.duration_s, [&](int worker) -> Operation {
      auto client = std::shared_ptr<S3Client>(target.NewClient());
      client->Connect();
      // The same keys in every run: the versioned bucket keeps accumulating
      // versions of them (as a backup target does), the unversioned one replaces.
      std::string prefix = "w" + std::to_string(worker) + "/";
      return [client, prefix, bucket](uint64_t seq) {
        S3Response resp = client->Send({"PUT", ObjectPath(bucket, prefix + std::to_string(seq % 64))},
                                       SharedPattern().Slice(seq * 4099, 4096));
        ExpectStatus(resp, 200, "PUT 4 KiB");
      };
    });
    return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(put_plain, run, opt.runs, [&](int r) { return measure(plain, r); });
    report.MeasureRun(put_versioned, run, opt.runs, [&](int r) { return measure(versioned, r); });
  }
}

}  // namespace strata::bench
