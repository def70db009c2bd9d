// The KV index case group of s3bench (`--only kv_index`): the per-namespace
// block index (src/kvcache/block_index.h) in process, at two sizes
// (10^4 and 10^7 blocks; smoke: 10^4 and 10^5):
//  - memory per block: the index's own accounting and the process RSS growth
//    while it was filled (36-byte keys, as vLLM's OffloadKey);
//  - LOOKUP (prefix) and LOOKUP_EACH of 1000 stored keys: index time per
//    call, and the ratio of the large index to the small one (target <= 1.5x:
//    lookups must not slow down as the tier fills).
// The server's time for LOOKUP_EACH over the wire is in the kv group.
#pragma once

#include "report.h"
#include "s3_cases.h"

namespace strata::bench {

// Rows: kv_index_bytes_<n> (bytes/block, RSS), kv_index_lookup1000_<n>,
// kv_index_each1000_<n> (microseconds), kv_index_each_ratio.
void RunKvIndex(const CaseOptions& opt, uint64_t large_blocks, Report& report);

}  // namespace strata::bench
