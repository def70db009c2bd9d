// One audit record (what happened, who did it, with what result), its byte
// encoding and JSON rendering, and the "E" keys of the audit trail in the
// metadata store (meta/keys.h registers the prefix; the layouts are in
// docs/formats/audit-trail.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::audit {

enum class Kind : uint8_t {
  kChange = 1,   // a client's change, written in the same batch as the change
  kRequest = 2,  // a mutating request that changed nothing (it failed, or had nothing to do)
  kDenied = 3,   // a request refused by authentication or policy
  kSystem = 4,   // the server's own change (lifecycle, restore, heal), in the change's batch
};
std::string_view KindName(Kind kind);

struct Record {
  uint64_t seq = 0;     // position in the trail (1, 2, ...), also in the record's key
  int64_t time_ns = 0;  // Unix time; never decreases along the trail
  Kind kind = Kind::kChange;
  std::string identity;    // access key id, "" for anonymous, "strata:<part>" for the server
  std::string source;      // client address ("" for the server's own actions)
  std::string request_id;  // as the client saw it (x-amz-request-id)
  std::string operation;   // S3 operation name (PutObject, ...) or the system action
  std::string bucket, key;
  std::string version;     // version id of the version the change wrote or removed
  std::string result;      // "OK", or the S3 error code
  int http_status = 0;     // 0 for a change record (written before the answer)
  uint64_t bytes = 0;      // request body bytes read when the record was written
  uint32_t part = 0;       // the n-th change of one request (DeleteObjects: one per key)
};

// Encoding: version byte 1, then the fixed fields and length-prefixed strings.
std::string EncodeRecord(const Record& r);
// Corruption if `bytes` is not one whole record.
Result<Record> DecodeRecord(std::string_view bytes);
// One JSON object, no newline.
std::string RecordJson(const Record& r);

// Keys. BE64: 8 bytes big-endian, so that seq order is key order. The
// record is the only key written with the change; the sealer writes the
// others (audit/chain.h).
std::string RecordKey(uint64_t seq);      // "Er" + BE64 seq      -> EncodeRecord
std::string RecordPrefix();               // "Er"
std::string GapKey(uint64_t seq);         // "Eg" + BE64 seq      -> "" (never committed)
std::string CheckpointKey(uint64_t seq);  // "Ec" + BE64 seq      -> checkpoint (chain.h)
std::string CheckpointPrefix();           // "Ec"
std::string SealStateKey();               // "Es"                 -> seal state (chain.h)
// "EH" + BE64 first: the chain hashes of seqs first, first+1, ... (32 bytes
// each, at most kHashesPerBlock).
inline constexpr size_t kHashesPerBlock = 64;
std::string HashBlockKey(uint64_t first);
std::string HashBlockPrefix();  // "EH"
// Posting lists: "EB" bucket \0 BE64 last / "EU" identity \0 BE64 last ->
// EncodePostings(the seqs of that bucket's / identity's records chained in
// one sealer pass, ascending, `last` the greatest).
std::string BucketPostingsKey(std::string_view bucket, uint64_t last);
std::string BucketPostingsPrefix(std::string_view bucket);
std::string IdentityPostingsKey(std::string_view identity, uint64_t last);
std::string IdentityPostingsPrefix(std::string_view identity);
std::string EncodePostings(const std::vector<uint64_t>& seqs);  // varint count, varint deltas
Result<std::vector<uint64_t>> DecodePostings(std::string_view bytes);
// The keys trails written before session 23 have (one per record, written
// with it): read, never written any more.
std::string HashKey(uint64_t seq);  // "Eh" + BE64 seq -> 32-byte chain hash
std::string BucketIndexKey(std::string_view bucket, uint64_t seq);  // "Eb" bucket \0 BE64 -> ""
std::string BucketIndexPrefix(std::string_view bucket);
std::string IdentityIndexKey(std::string_view identity, uint64_t seq);  // "Eu" identity \0 BE64
std::string IdentityIndexPrefix(std::string_view identity);
// A record's identity and bucket as views into `bytes`, without copying the
// rest; false where DecodeRecord would fail.
bool PeekRecordNames(std::string_view bytes, std::string_view* identity, std::string_view* bucket);
// The seq at the end of one of the keys above; false if `key` is too short.
bool SeqOfKey(std::string_view key, uint64_t* seq);

}  // namespace strata::audit
