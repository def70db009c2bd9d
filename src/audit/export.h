// Sealed stretches of the audit trail as self-verifying documents, for
// export into an Object-Lock bucket (server/audit_admin.cc writes them):
// JSON lines, one header, one line per seq (the record's exact bytes in
// base64 with its chain hash), and the checkpoint that signs the last seq.
//   {"segment":1,"first":F,"last":L,"prev_hash":"<hex hash(F-1)>"}
//   {"seq":S,"hash":"<hex>","raw":"<base64 record bytes>","record":{...}}
//   {"seq":S,"hash":"<hex>","gap":true}
//   {"checkpoint":{"seq":L,"time_ns":T,"hash":"<hex>","mac":"<hex>"}}
// A segment verifies on its own (the chain from prev_hash, the MAC under the
// audit key) and against the store where the store still holds that stretch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::audit {

// first..last must be chained and `last` must have a checkpoint.
Result<std::string> RenderSegment(meta::KvStore& kv, uint64_t first, uint64_t last);

// The name of the segment's object: "segments/<first>-<last>.jsonl", both
// zero-padded to 20 digits so that names sort by seq.
std::string SegmentObjectName(uint64_t first, uint64_t last);

struct SegmentCheck {
  uint64_t first = 0, last = 0;
  std::string problem;  // "" when the segment is sound and agrees with the store
  bool ok() const { return problem.empty(); }
};
SegmentCheck CheckSegment(meta::KvStore& kv, std::string_view key, std::string_view doc);

// "Ex": the last seq exported (0: none).
Result<uint64_t> LoadExportedSeq(meta::KvStore& kv);
std::string ExportedSeqKey();

}  // namespace strata::audit
