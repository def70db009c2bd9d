// The S3 cases of the benchmark. Each adds its rows to the report; every
// response is checked (status code, and the bytes of every GET against the
// pattern they were written with), so a wrong answer fails the row instead of
// producing a fast-looking figure.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "report.h"
#include "s3_client.h"
#include "workload.h"

namespace strata::bench {

// Where the S3 traffic goes.
struct Target {
  std::string host;
  int port = 0;
  Credentials credentials;

  std::unique_ptr<S3Client> NewClient() const {
    return std::make_unique<S3Client>(host, port, credentials);
  }
};

struct CaseOptions {
  double duration_s = 5;      // per timed run
  int runs = 3;               // figures are medians of this many runs
  int small_get_keys = 1000;  // 4 KiB objects pre-created for the GET case
  uint64_t large_bytes = 1ull << 30;
  int large_streams = 8;  // parallel parts / ranges
  int list_small_keys = 10'000;
  int list_large_keys = 1'000'000;
  int populate_concurrency = 64;     // concurrent 0-byte PUTs when creating keys
  uint64_t ec_bytes = 256ull << 20;  // object size of the erasure-coding group (ec_cases.h)
  int version_keys = 2000;   // keys of the versions group's listing buckets
  int version_depth = 100;   // versions per key of the deep one
  int mixed_max_connections = 8192;  // the mixed group's largest count of open connections
  pid_t server_pid = -1;  // the server s3bench started (its memory is reported); -1: --endpoint
};

// Helpers shared by the S3 case groups (s3_cases.cc, ec_cases.cc).
// "64 MiB", "1 GiB".
std::string SizeLabel(uint64_t bytes);
// CreateBucket, accepting BucketAlreadyOwnedByYou.
void EnsureBucket(const Target& target, const std::string& bucket);
// Writes n bytes of the shared pattern starting at stream offset `offset`.
BodyWriter PatternBody(uint64_t offset, uint64_t n);
// Checks arriving bytes against the pattern from `offset` (BenchError on a
// mismatch) and counts them in *received.
BodySink VerifyingSink(uint64_t offset, uint64_t* received);

// PUTs objects 0..count-1 (key_of(i), body_of(i)) from `concurrency`
// connections; prints progress for long populations.
void PopulateKeys(const Target& target, const std::string& bucket, int count, int concurrency,
                  const std::function<std::string(int)>& key_of,
                  const std::function<std::string_view(int)>& body_of);

// 4 KiB PUT and GET at concurrency 1, 16, 64.
void RunSmallPut(const CaseOptions& opt, const Target& target, Report& report);
inline constexpr char kSmallBucket[] = "bench-small";
// c workers PUTting fresh 4 KiB objects under `prefix` into the small bucket
// (which must exist) for duration_s.
TimedResult TimedSmallPuts(const Target& target, int c, double duration_s,
                           const std::string& prefix);
// The audit trail's cost (audit_cases.cc): PUT 4 KiB on a server with the
// trail on against one with --audit off, runs interleaved.
void RunAuditOverhead(const CaseOptions& opt, const std::string& binary, Report& report);
// Event notifications' cost (notify_cases.cc): PUT 4 KiB into a bucket
// without a notification configuration, one notified to a live receiver, and
// one notified to a receiver that is down, runs interleaved.
void RunNotifyOverhead(const CaseOptions& opt, const std::string& binary, Report& report);
// The time of a GET /metrics with `buckets` buckets (metrics_cases.cc).
void RunMetricsScrape(const CaseOptions& opt, const std::string& binary, int buckets,
                      Report& report);
void RunSmallGet(const CaseOptions& opt, const Target& target, Report& report);
// The GET case's objects: `keys` 4 KiB objects SmallGetKey(0..keys-1) in the
// small bucket, and c workers GETting them at random (every body checked).
inline std::string SmallGetKey(int i) { return "get/" + std::to_string(i); }
void PopulateSmallGetKeys(const Target& target, int keys);
TimedResult TimedSmallGets(const Target& target, int c, double duration_s, int keys);

// A feature's cost measured on two servers from one binary, feature off and
// on: their throughput rows (on against off, >= `target`) and, from the same
// timed runs, each server's CPU per operation (/proc/PID/stat; on against off,
// <= `cpu_target`), runs interleaved with the order alternating from run to
// run (the second of two back-to-back runs measures slower on this box, so
// the bias cancels in the median). `timed(target, run)` is one timed run.
struct FeatureSide {
  const Target* target;
  pid_t pid;
  std::string id, label;  // "put4k_audit_off_c16", "PUT 4 KiB, c=16, --audit off"
};
struct FeatureRows {
  Row *off, *on, *off_cpu, *on_cpu;
};
FeatureRows MeasureFeatureCost(const CaseOptions& opt, Report& report, const FeatureSide& off,
                               const FeatureSide& on, double target, double cpu_target,
                               const std::function<TimedResult(const Target&, int run)>& timed);
// The tier advisor's access statistics' cost (advisor_cases.cc): GET 4 KiB on
// a server counting every read against one with --advisor off, runs
// interleaved (issue 18: >= 97 %).
void RunAdvisorOverhead(const CaseOptions& opt, const std::string& binary, Report& report);
// Tail isolation and connection scale (issue 17), on a server of its own (mixed_cases.cc).
void RunMixed(const CaseOptions& opt, const std::string& binary, Report& report);
// Large object: one stream, and `large_streams` multipart parts / ranges.
void RunLargePut(const CaseOptions& opt, const Target& target, Report& report);
void RunLargeGet(const CaseOptions& opt, const Target& target, Report& report);
// ListObjectsV2 page latency on buckets of list_small_keys and list_large_keys.
void RunList(const CaseOptions& opt, const Target& target, Report& report);
// Versioning (version_cases.cc): ListObjectsV2 page latency over keys with 1
// and with version_depth versions each; PUT 4 KiB into a versioned bucket
// vs an unversioned one.
void RunVersions(const CaseOptions& opt, const Target& target, Report& report);
// Access control (access_cases.cc): policy evaluation cost; GET 4 KiB by a
// user through a 20-statement bucket policy vs root without one.
void RunAccess(const CaseOptions& opt, const Target& target, Report& report);
// Server-side encryption (sse_cases.cc): AES-256-GCM per core; large PUT/GET
// and GET 4 KiB into an SSE-S3 bucket vs a plain one.
void RunSse(const CaseOptions& opt, const Target& target, Report& report);

}  // namespace strata::bench
