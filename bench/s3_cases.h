// The S3 cases of the benchmark. Each adds its rows to the report; every
// response is checked (status code, and the bytes of every GET against the
// pattern they were written with), so a wrong answer fails the row instead of
// producing a fast-looking figure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "report.h"
#include "s3_client.h"

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
  int populate_concurrency = 64;  // concurrent 0-byte PUTs when creating keys
};

// 4 KiB PUT and GET at concurrency 1, 16, 64.
void RunSmallPut(const CaseOptions& opt, const Target& target, Report& report);
void RunSmallGet(const CaseOptions& opt, const Target& target, Report& report);
// Large object: one stream, and `large_streams` multipart parts / ranges.
void RunLargePut(const CaseOptions& opt, const Target& target, Report& report);
void RunLargeGet(const CaseOptions& opt, const Target& target, Report& report);
// ListObjectsV2 page latency on buckets of list_small_keys and list_large_keys.
void RunList(const CaseOptions& opt, const Target& target, Report& report);

}  // namespace strata::bench
