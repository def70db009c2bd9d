#include "audit/chain.h"

#include <algorithm>
#include <map>
#include <vector>
#include <memory>

#include "audit/record.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::audit {

namespace {

std::string DigestString(const Sha256Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

// The entries under one "E" seq-keyed prefix, in seq order.
class Cursor {
 public:
  Cursor(meta::KvStore& kv, std::string prefix, uint64_t from)
      : it_(kv.NewIterator()), prefix_(std::move(prefix)) {
    std::string start = prefix_;
    PutFixed64BE(&start, from);
    it_->Seek(start);
    Load();
  }
  bool valid() const { return valid_; }
  uint64_t seq() const { return valid_ ? seq_ : UINT64_MAX; }
  std::string_view value() const { return it_->value(); }
  void Next() {
    it_->Next();
    Load();
  }
  Status status() const { return it_->status(); }

 private:
  void Load() {
    valid_ = it_->Valid() && it_->key().starts_with(prefix_) &&
             it_->key().size() == prefix_.size() + 8;
    if (valid_) seq_ = DecodeFixed64BE(it_->key().data() + prefix_.size());
  }
  std::unique_ptr<meta::KvIterator> it_;
  std::string prefix_;
  bool valid_ = false;
  uint64_t seq_ = 0;
};

std::string SeqPrefix(std::string key_of_zero) {
  key_of_zero.resize(key_of_zero.size() - 8);
  return key_of_zero;
}

// Every stored chain hash in seq order: the per-record "Eh" keys of an
// older trail, then the hash blocks (a seq in both is read once, from its
// block). A block whose length is not whole hashes yields its tail as one
// short hash, which matches nothing: verify names that seq altered.
class HashCursor {
 public:
  HashCursor(meta::KvStore& kv, uint64_t from)
      : legacy_(kv, SeqPrefix(HashKey(0)), from),
        blocks_(kv, HashBlockPrefix(), from > kHashesPerBlock ? from - kHashesPerBlock : 0) {
    LoadBlock();
    while (block_valid() && block_seq() < from) NextBlockEntry();
    Pick();
  }
  bool valid() const { return current_ != kNone; }
  uint64_t seq() const {
    return current_ == kLegacy ? legacy_.seq() : current_ == kBlock ? block_seq() : UINT64_MAX;
  }
  std::string_view value() const {
    if (current_ == kLegacy) return legacy_.value();
    return std::string_view(block_).substr(index_ * kHashBytes, kHashBytes);
  }
  void Next() {
    const uint64_t s = seq();
    if (legacy_.seq() == s) legacy_.Next();
    if (block_valid() && block_seq() == s) NextBlockEntry();
    Pick();
  }
  Status status() const {
    RETURN_IF_ERROR(legacy_.status());
    return blocks_.status();
  }

 private:
  enum Which { kNone, kLegacy, kBlock };
  bool block_valid() const { return blocks_.valid() && index_ * kHashBytes < block_.size(); }
  uint64_t block_seq() const { return blocks_.seq() + index_; }
  void LoadBlock() {
    index_ = 0;
    // An empty block (only ever a damaged one) holds nothing: step over it,
    // so its seqs read as hashes missing.
    while (blocks_.valid() && blocks_.value().empty()) blocks_.Next();
    if (blocks_.valid()) block_.assign(blocks_.value());
  }
  void NextBlockEntry() {
    if (++index_ * kHashBytes < block_.size()) return;
    blocks_.Next();
    LoadBlock();
  }
  void Pick() {
    const uint64_t a = legacy_.seq(), b = block_valid() ? block_seq() : UINT64_MAX;
    current_ = b <= a && b != UINT64_MAX ? kBlock : a != UINT64_MAX ? kLegacy : kNone;
  }

  Cursor legacy_, blocks_;
  std::string block_;  // the current block's bytes
  size_t index_ = 0;   // the hash within it
  Which current_ = kNone;
};

}  // namespace

std::string GenesisHash() { return std::string(kHashBytes, '\0'); }

std::string ChainHash(std::string_view prev, std::string_view record_bytes) {
  return DigestString(Sha256(prev, record_bytes));
}

std::string GapHash(std::string_view prev, uint64_t seq) {
  std::string in(prev);
  in.append("gap");
  PutFixed64BE(&in, seq);
  return DigestString(Sha256(in));
}

std::string CheckpointMac(std::string_view key, uint64_t seq, int64_t time_ns,
                          std::string_view hash) {
  std::string in = "strata-audit-checkpoint-v1";
  PutFixed64BE(&in, seq);
  PutFixed64BE(&in, static_cast<uint64_t>(time_ns));
  in.append(hash);
  return DigestString(HmacSha256(key, in));
}

std::string EncodeCheckpoint(const Checkpoint& c) {
  std::string out;
  PutFixed64BE(&out, static_cast<uint64_t>(c.time_ns));
  out.append(c.hash);
  out.append(c.mac);
  return out;
}

Result<Checkpoint> DecodeCheckpoint(uint64_t seq, std::string_view bytes) {
  if (bytes.size() != 8 + 2 * kHashBytes) return Corruption("audit checkpoint: bad size");
  Checkpoint c;
  c.seq = seq;
  c.time_ns = static_cast<int64_t>(DecodeFixed64BE(bytes.data()));
  c.hash.assign(bytes.substr(8, kHashBytes));
  c.mac.assign(bytes.substr(8 + kHashBytes));
  return c;
}

std::string EncodeSealState(const SealState& s) {
  std::string out;
  PutFixed64BE(&out, s.seq);
  out.append(s.hash);
  PutFixed64BE(&out, s.checkpoint_seq);
  PutFixed64BE(&out, static_cast<uint64_t>(s.checkpoint_time_ns));
  PutFixed64BE(&out, s.block_first);
  return out;
}

Result<SealState> LoadSealState(meta::KvStore& kv) {
  ASSIGN_OR_RETURN(auto raw, kv.Get(SealStateKey()));
  SealState s;
  if (!raw) return s;
  // 56 bytes: a trail from before hash blocks (no block open).
  const size_t legacy = 8 + kHashBytes + 16;
  if (raw->size() != legacy && raw->size() != legacy + 8) {
    return Corruption("audit seal state: bad size");
  }
  s.seq = DecodeFixed64BE(raw->data());
  s.hash = raw->substr(8, kHashBytes);
  s.checkpoint_seq = DecodeFixed64BE(raw->data() + 8 + kHashBytes);
  s.checkpoint_time_ns = static_cast<int64_t>(DecodeFixed64BE(raw->data() + 16 + kHashBytes));
  if (raw->size() == legacy) return s;
  s.block_first = DecodeFixed64BE(raw->data() + legacy);
  if (s.block_first == 0) return s;
  ASSIGN_OR_RETURN(auto block, kv.Get(HashBlockKey(s.block_first)));
  // The open block must end at the head. One that does not (removed or cut
  // behind the sealer's back) is left as it is for verify to name; the
  // chain goes on in a new block.
  if (block && block->size() % kHashBytes == 0 && s.block_first <= s.seq &&
      block->size() / kHashBytes == s.seq - s.block_first + 1 &&
      block->size() <= kHashesPerBlock * kHashBytes) {
    s.block = std::move(*block);
  } else {
    s.block_first = 0;
  }
  return s;
}

Result<uint64_t> Seal(meta::KvStore& kv, SealState* state, uint64_t end,
                      const std::set<uint64_t>& in_flight, uint64_t max, meta::WriteBatch* batch) {
  uint64_t chained = 0;
  uint64_t expected = state->seq + 1;
  Cursor records(kv, SeqPrefix(RecordKey(0)), expected);
  auto settled = [&](uint64_t seq) { return seq < end && !in_flight.contains(seq); };
  std::map<std::string, std::vector<uint64_t>, std::less<>> buckets, identities;
  bool block_dirty = false;
  while (chained < max && settled(expected)) {
    if (records.seq() == expected) {
      state->hash = ChainHash(state->hash, records.value());
      std::string_view identity, bucket;
      if (PeekRecordNames(records.value(), &identity, &bucket)) {  // else verify names it
        if (!bucket.empty()) {
          auto it = buckets.find(bucket);
          if (it == buckets.end()) it = buckets.emplace(std::string(bucket), std::vector<uint64_t>()).first;
          it->second.push_back(expected);
        }
        auto it = identities.find(identity);
        if (it == identities.end()) {
          it = identities.emplace(std::string(identity), std::vector<uint64_t>()).first;
        }
        it->second.push_back(expected);
      }
      records.Next();
    } else {  // never committed, and no longer in flight: a gap
      batch->Put(GapKey(expected), "");
      state->hash = GapHash(state->hash, expected);
    }
    if (state->block_first == 0 || state->block.size() >= kHashesPerBlock * kHashBytes) {
      if (block_dirty) batch->Put(HashBlockKey(state->block_first), state->block);
      state->block_first = expected;
      state->block.clear();
    }
    state->block.append(state->hash);
    block_dirty = true;
    state->seq = expected++;
    ++chained;
  }
  RETURN_IF_ERROR(records.status());
  if (chained == 0) return chained;
  if (block_dirty) batch->Put(HashBlockKey(state->block_first), state->block);
  for (const auto& [name, seqs] : buckets) {
    batch->Put(BucketPostingsKey(name, seqs.back()), EncodePostings(seqs));
  }
  for (const auto& [name, seqs] : identities) {
    batch->Put(IdentityPostingsKey(name, seqs.back()), EncodePostings(seqs));
  }
  batch->Put(SealStateKey(), EncodeSealState(*state));
  return chained;
}

Result<std::optional<std::string>> LoadChainHash(meta::KvStore& kv, uint64_t seq) {
  HashCursor hashes(kv, seq);
  RETURN_IF_ERROR(hashes.status());
  if (!hashes.valid() || hashes.seq() != seq) return std::optional<std::string>();
  return std::optional<std::string>(hashes.value());
}

void AddCheckpoint(std::string_view key, int64_t now_ns, SealState* state,
                   meta::WriteBatch* batch) {
  Checkpoint c{state->seq, now_ns, state->hash, CheckpointMac(key, state->seq, now_ns, state->hash)};
  batch->Put(CheckpointKey(c.seq), EncodeCheckpoint(c));
  state->checkpoint_seq = c.seq;
  state->checkpoint_time_ns = now_ns;
  batch->Put(SealStateKey(), EncodeSealState(*state));
}

Result<std::vector<std::string>> LoadChainHashes(meta::KvStore& kv, uint64_t first,
                                                 uint64_t last) {
  std::vector<std::string> out;
  if (first == 0 && last >= first) out.push_back(GenesisHash());  // hash(0)
  HashCursor hashes(kv, first);
  for (uint64_t s = std::max<uint64_t>(first, 1); s <= last; ++s) {
    while (hashes.valid() && hashes.seq() < s) hashes.Next();
    RETURN_IF_ERROR(hashes.status());
    if (!hashes.valid() || hashes.seq() != s || hashes.value().size() != kHashBytes) {
      return NotFound("the chain hash of seq " + std::to_string(s) + " is missing");
    }
    out.emplace_back(hashes.value());
  }
  return out;
}

std::string_view ProblemName(Problem p) {
  switch (p) {
    case Problem::kNone: return "none";
    case Problem::kAltered: return "altered";
    case Problem::kRemoved: return "removed";
    case Problem::kReordered: return "reordered";
    case Problem::kTruncated: return "truncated";
    case Problem::kCheckpoint: return "checkpoint";
  }
  return "unknown";
}

VerifyReport Verify(meta::KvStore& kv, std::string_view key) {
  VerifyReport rep;
  auto fail = [&](Problem p, uint64_t seq, std::string detail) {
    rep.problem = p;
    rep.problem_seq = seq;
    rep.detail = std::move(detail);
    return rep;
  };
  auto state = LoadSealState(kv);
  if (!state.ok()) return fail(Problem::kAltered, 0, state.status().message());
  Cursor records(kv, SeqPrefix(RecordKey(0)), 1);
  Cursor gaps(kv, SeqPrefix(GapKey(0)), 1);
  HashCursor hashes(kv, 1);
  Cursor checkpoints(kv, SeqPrefix(CheckpointKey(0)), 1);
  std::string prev = GenesisHash();
  uint64_t expected = 1;
  auto num = [](uint64_t s) { return std::to_string(s); };
  while (records.valid() || gaps.valid() || hashes.valid()) {
    const uint64_t s = std::min({records.seq(), gaps.seq(), hashes.seq()});
    const bool has_record = records.seq() == s, has_gap = gaps.seq() == s,
               has_hash = hashes.seq() == s;
    // The chain is contiguous; past its head (records not chained yet) a
    // seq may still be in flight, or a failed write the sealer will mark.
    if (s != expected && (has_hash || expected <= state->seq)) {
      return fail(Problem::kRemoved, expected,
                  "record " + num(expected) + " is missing: the trail goes on at " + num(s) +
                      " with no record and no gap marker in between");
    }
    if (!has_hash) {
      if (s <= state->seq) {
        return fail(Problem::kRemoved, s, "the chain hash of record " + num(s) + " is missing");
      }
      // The unsealed tail: records the sealer has not reached yet.
      if (has_record) ++rep.unsealed;
      if (has_record) records.Next();
      if (has_gap) gaps.Next();
      expected = s + 1;
      continue;
    }
    std::string h;
    if (has_record && has_gap) {
      return fail(Problem::kAltered, s, "seq " + num(s) + " is both a record and a gap marker");
    } else if (has_record) {
      auto r = DecodeRecord(records.value());
      if (!r.ok()) {
        return fail(Problem::kAltered, s, "record " + num(s) + " does not decode: " +
                                              r.status().message());
      }
      if (r->seq != s) {
        return fail(Problem::kReordered, s,
                    "the record at " + num(s) + " was written as record " + num(r->seq));
      }
      h = ChainHash(prev, records.value());
      ++rep.records;
      records.Next();
    } else if (has_gap) {
      h = GapHash(prev, s);
      ++rep.gaps;
      gaps.Next();
    } else {
      return fail(Problem::kRemoved, s,
                  "record " + num(s) + " was removed (its chain hash is still there)");
    }
    if (hashes.value() != h) {
      return fail(Problem::kAltered, s,
                  "record " + num(s) + " does not match its chain hash (altered or replaced)");
    }
    hashes.Next();
    while (checkpoints.valid() && checkpoints.seq() <= s) {
      auto c = DecodeCheckpoint(checkpoints.seq(), checkpoints.value());
      if (!c.ok() || checkpoints.seq() < s) {
        return fail(Problem::kCheckpoint, checkpoints.seq(),
                    "checkpoint " + num(checkpoints.seq()) + " is malformed");
      }
      if (c->mac != CheckpointMac(key, c->seq, c->time_ns, c->hash)) {
        return fail(Problem::kCheckpoint, s,
                    "checkpoint " + num(s) + " has a wrong MAC (forged, or not under this key)");
      }
      if (c->hash != h) {
        return fail(Problem::kCheckpoint, s,
                    "the chain up to " + num(s) +
                        " differs from what its checkpoint signed (records before it were "
                        "rewritten)");
      }
      rep.latest = *c;
      ++rep.checkpoints;
      checkpoints.Next();
    }
    prev = h;
    rep.head_seq = s;
    expected = s + 1;
  }
  for (const Status& st : {records.status(), gaps.status(), hashes.status(), checkpoints.status()}) {
    if (!st.ok()) return fail(Problem::kAltered, expected, "reading the trail: " + st.message());
  }
  if (checkpoints.valid()) {
    return fail(Problem::kTruncated, rep.head_seq + 1,
                "checkpoint " + num(checkpoints.seq()) + " signs records after " +
                    num(rep.head_seq) + " that are gone (the trail was cut)");
  }
  if (state->seq > rep.head_seq) {
    return fail(Problem::kTruncated, rep.head_seq + 1,
                "the chain was made up to " + num(state->seq) + " but ends at " +
                    num(rep.head_seq) + " (the trail was cut)");
  }
  if (state->checkpoint_seq > rep.latest.seq) {
    return fail(Problem::kTruncated, rep.latest.seq + 1,
                "checkpoint " + num(state->checkpoint_seq) + " was made but is gone");
  }
  rep.head_hash = HexEncode(prev);
  return rep;
}

}  // namespace strata::audit
