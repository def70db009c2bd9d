// The hash chain over the audit records, its HMAC checkpoints, and verify.
//
// Records are committed with the changes they describe, by many writers at
// once (group commit), so their order of arrival is not their seq order and
// a record whose batch failed leaves a hole. The chain is therefore made
// behind the writers, by the sealer (audit/log.h): for seq = 1, 2, ... it
// computes hash(seq) = SHA-256(hash(seq-1) || record bytes) and stores it in
// a hash block ("EH", 64 hashes a key); a seq whose write failed or died
// with the process (never committed, not in flight) becomes a gap marker
// "Eg", chained as SHA-256(hash(seq-1) || "gap" || BE64 seq). In the same
// batch it adds the chained records to their bucket's and identity's
// posting lists ("EB", "EU": one key per name and pass), which queries walk.
// Every N records / T seconds a checkpoint "Ec" signs (seq, time, hash(seq))
// with HMAC-SHA256 under the operator's audit key, so rewriting records and
// recomputing the hashes after them is caught by the first checkpoint at or
// after the change. Trails from before session 23 have one "Eh" hash and
// "Eb"/"Eu" index key per record; they are read as before, never written.
// docs/audit.md has the whole story.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::audit {

inline constexpr size_t kHashBytes = 32;

std::string GenesisHash();  // 32 zero bytes: hash(0)
std::string ChainHash(std::string_view prev, std::string_view record_bytes);
std::string GapHash(std::string_view prev, uint64_t seq);

struct Checkpoint {
  uint64_t seq = 0;
  int64_t time_ns = 0;
  std::string hash;  // hash(seq)
  std::string mac;   // HMAC-SHA256(key, "strata-audit-checkpoint-v1" || BE64 seq || BE64 time || hash)
};
std::string CheckpointMac(std::string_view key, uint64_t seq, int64_t time_ns,
                          std::string_view hash);
std::string EncodeCheckpoint(const Checkpoint& c);  // BE64 time || hash || mac
Result<Checkpoint> DecodeCheckpoint(uint64_t seq, std::string_view bytes);

// "Es": how far the chain is made.
struct SealState {
  uint64_t seq = 0;                  // every seq <= this is chained
  std::string hash = GenesisHash();  // hash(seq)
  uint64_t checkpoint_seq = 0;       // the latest checkpoint (0: none yet)
  int64_t checkpoint_time_ns = 0;
  // The hash block being filled: its first seq (0: none; the next hash
  // starts one) and its hashes so far, first..seq. Only `block_first` is in
  // "Es"; LoadSealState reads the block.
  uint64_t block_first = 0;
  std::string block;
};
std::string EncodeSealState(const SealState& s);
Result<SealState> LoadSealState(meta::KvStore& kv);  // the initial state when absent

// Chains what can be chained after `state`: records and gaps with seq < end,
// stopping at the first seq still in flight (or after `max` entries). Adds
// the hash blocks, "Eg" gap markers, posting lists and the new "Es" to
// `batch` and advances `state`. Returns the number of entries chained.
Result<uint64_t> Seal(meta::KvStore& kv, SealState* state, uint64_t end,
                      const std::set<uint64_t>& in_flight, uint64_t max, meta::WriteBatch* batch);

// hash(seq) as stored (a hash block, or a trail's older per-record key);
// nullopt when the store has none.
Result<std::optional<std::string>> LoadChainHash(meta::KvStore& kv, uint64_t seq);
// hash(first) .. hash(last), in one walk (hash(0): the genesis hash); NotFound
// naming the first missing.
Result<std::vector<std::string>> LoadChainHashes(meta::KvStore& kv, uint64_t first, uint64_t last);

// Adds a checkpoint of `state`'s head to `batch` (and records it in state).
void AddCheckpoint(std::string_view key, int64_t now_ns, SealState* state,
                   meta::WriteBatch* batch);

enum class Problem {
  kNone,
  kAltered,      // a record's bytes do not give its chain hash (or do not decode)
  kRemoved,      // a seq inside the chain has no record and no gap marker
  kReordered,    // a record sits at another seq than the one it was written as
  kTruncated,    // a checkpoint or the seal state names records that are gone
  kCheckpoint,   // a checkpoint whose MAC or hash is wrong (forged, or chain rewritten)
};
std::string_view ProblemName(Problem p);

struct VerifyReport {
  Problem problem = Problem::kNone;
  uint64_t problem_seq = 0;
  std::string detail;        // what is wrong, for a person
  uint64_t records = 0;      // chained records checked
  uint64_t gaps = 0;         // gap markers (writes that never committed)
  uint64_t checkpoints = 0;  // checkpoints whose MAC and hash matched
  uint64_t unsealed = 0;     // records after the chain's head (not yet chained)
  uint64_t head_seq = 0;     // the chain's last seq
  std::string head_hash;     // hex
  Checkpoint latest;         // the latest good checkpoint (seq 0: none)
  bool ok() const { return problem == Problem::kNone; }
};

// Walks the whole trail and reports the first problem. No sealer may run
// meanwhile (AuditLog::Verify holds it off): the walk reads several key
// ranges, each its own snapshot.
VerifyReport Verify(meta::KvStore& kv, std::string_view key);

}  // namespace strata::audit
