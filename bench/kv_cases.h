// The KV-cache case group of s3bench (`--only kv`): the lean KV protocol
// (docs/formats/kv-protocol.md) through the C++ client (include/strata/
// kv_client.h) against the S3 path of the same server, and loopback TCP
// measured in the same run:
//  - LOOKUP latency of 1, 100 and 1000 keys (p50/p99, one connection, the
//    keys stored beforehand), and the server time of a 1000-key LOOKUP as
//    estimated from round trips (the server does not report its own time);
//  - GET and PUT throughput of 2 MiB blocks (Llama-3-8B fp16, 16 tokens:
//    32 layers x K,V x 8 KV heads x 128 x 2 bytes x 16) with 1 and 8
//    connections, GET as a fraction of loopback TCP;
//  - the same 2 MiB blocks fetched as objects with S3 GetObject;
//  - 64 KiB blocks: KV GET ops/s against S3 GetObject ops/s of the same
//    block objects (one block per request; and KV batches of 32 blocks);
//  - bytes served / bytes requested from the server's STATS.
// Every block read is compared byte for byte with what was written.
#pragma once

#include <string>

#include "report.h"
#include "s3_cases.h"

namespace strata::bench {

struct KvCaseOptions {
  int get_blocks = 64;      // 2 MiB blocks stored for the GET cases (128 MiB)
  int small_blocks = 1000;  // 64 KiB blocks stored for the ops/s cases
  int batch = 8;            // 2 MiB blocks per KV GET/PUT request (16 MiB)
  int small_batch = 32;     // 64 KiB blocks per request in the batched row
};

// The KV listener of the server behind `s3` (same credentials).
struct KvEndpoint {
  std::string host;
  int port = 0;
};

// Rows (ids): kv_loopback; kv_lookup_1, kv_lookup_100, kv_lookup_1000,
// kv_lookup_server (microseconds); kv_get2m_c1/_c8, kv_put2m_c1/_c8,
// s3_get2m_c1/_c8 (bytes/s); kv_get64k_c1/_c8, kv_get64k_batch_c1,
// s3_get64k_c1/_c8 (ops/s); plus summary notes after the table. Throws
// BenchError if the blocks cannot be stored beforehand.
void RunKvCache(const CaseOptions& opt, const KvCaseOptions& kv_opt, const Target& s3,
                const KvEndpoint& kv, Report& report);

}  // namespace strata::bench
