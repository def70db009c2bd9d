#include "audit/query.h"

#include <memory>

#include "audit/chain.h"
#include "common/encoding.h"

namespace strata::audit {

namespace {

// The seq of the first record at or after `seq`, and its time; false if none.
bool FirstAtOrAfter(meta::KvIterator& it, uint64_t seq, uint64_t* found, int64_t* time) {
  const std::string prefix = RecordPrefix();
  for (it.Seek(RecordKey(seq)); it.Valid() && it.key().starts_with(prefix); it.Next()) {
    if (!SeqOfKey(it.key(), found)) continue;
    auto r = DecodeRecord(it.value());
    if (!r.ok()) continue;  // verify reports it; a query steps over it
    *time = r->time_ns;
    return true;
  }
  return false;
}

// The smallest seq whose record is not older than `from_ns`.
uint64_t FirstSeqFrom(meta::KvStore& kv, int64_t from_ns) {
  if (from_ns <= 0) return 1;
  auto it = kv.NewIterator();
  uint64_t lo = 1, hi = uint64_t{1} << 62;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    uint64_t found = 0;
    int64_t time = 0;
    if (!FirstAtOrAfter(*it, mid, &found, &time) || time >= from_ns) {
      hi = mid;
    } else {
      lo = found + 1;
    }
  }
  return lo;
}

bool Matches(const Record& r, const QueryFilter& f) {
  if (r.time_ns < f.from_ns || r.time_ns > f.to_ns) return false;
  if (f.identity && r.identity != *f.identity) return false;
  if (f.bucket && r.bucket != *f.bucket) return false;
  if (!f.key_prefix.empty() && !r.key.starts_with(f.key_prefix)) return false;
  if (!f.operation.empty() && r.operation != f.operation) return false;
  if (!f.kind.empty() && KindName(r.kind) != f.kind) return false;
  if (f.result == "error") return r.result != "OK";
  if (!f.result.empty() && r.result != f.result) return false;
  return true;
}

constexpr uint64_t kMaxScanned = 200'000;  // per page: a page ends early rather than late

}  // namespace

Status CheckFilter(const QueryFilter& f) {
  if (!f.kind.empty() && f.kind != "change" && f.kind != "request" && f.kind != "denied" &&
      f.kind != "system") {
    return InvalidArgument("kind must be change, request, denied or system");
  }
  if (f.from_ns > f.to_ns) return InvalidArgument("the time range ends before it starts");
  if (f.limit == 0) return InvalidArgument("limit must be at least 1");
  return Status::OK();
}

Result<QueryPage> Query(meta::KvStore& kv, const QueryFilter& f) {
  RETURN_IF_ERROR(CheckFilter(f));
  QueryPage page;
  const uint64_t start = std::max(FirstSeqFrom(kv, f.from_ns), f.after_seq + 1);
  // The records the index covers: every chained seq (the sealer writes the
  // posting lists in the batch that advances the seal state). Past it, the
  // unsealed tail is read record by record.
  // A seal state that does not read (verify names it) indexes nothing: the
  // query then reads every record from `start`.
  auto loaded = LoadSealState(kv);
  const SealState sealed = loaded.ok() ? std::move(*loaded) : SealState{};
  uint64_t scanned = 0;
  uint64_t last = start - 1;  // the last seq looked at
  // Looks at one record; false when the page is done.
  auto visit = [&](uint64_t seq, std::string_view raw) -> bool {
    last = seq;
    if (++scanned > kMaxScanned) {
      page.next_after = seq - 1;
      return false;
    }
    auto r = DecodeRecord(raw);
    if (!r.ok()) return true;  // verify reports it; a query steps over it
    if (r->time_ns > f.to_ns) return false;  // times never decrease: nothing later matches
    if (!Matches(*r, f)) return true;
    page.records.push_back(std::move(*r));
    if (page.records.size() >= f.limit) {
      page.next_after = seq;
      return false;
    }
    return true;
  };
  auto visit_seq = [&](uint64_t seq, bool* go_on) -> Status {
    ASSIGN_OR_RETURN(auto raw, kv.Get(RecordKey(seq)));
    *go_on = raw ? visit(seq, *raw) : (last = seq, true);  // a gone record: verify's business
    return Status::OK();
  };

  if (f.bucket || f.identity) {
    const bool by_bucket = f.bucket.has_value();
    const std::string& name = by_bucket ? *f.bucket : *f.identity;
    // An older trail's per-record entries first (all below the posting lists).
    {
      const std::string prefix = by_bucket ? BucketIndexPrefix(name) : IdentityIndexPrefix(name);
      std::string seek = prefix;
      PutFixed64BE(&seek, start);
      auto it = kv.NewIterator();
      bool go_on = true;
      for (it->Seek(seek); go_on && it->Valid() && it->key().starts_with(prefix); it->Next()) {
        if (it->key().size() != prefix.size() + 8) continue;
        uint64_t seq = 0;
        SeqOfKey(it->key(), &seq);
        if (seq > sealed.seq) break;
        RETURN_IF_ERROR(visit_seq(seq, &go_on));
      }
      RETURN_IF_ERROR(it->status());
      if (!go_on) return page;
    }
    // Then the posting lists, each keyed by its last seq.
    {
      const std::string prefix =
          by_bucket ? BucketPostingsPrefix(name) : IdentityPostingsPrefix(name);
      std::string seek = prefix;
      PutFixed64BE(&seek, last + 1);
      auto it = kv.NewIterator();
      bool go_on = true;
      for (it->Seek(seek); go_on && it->Valid() && it->key().starts_with(prefix); it->Next()) {
        if (it->key().size() != prefix.size() + 8) continue;
        auto seqs = DecodePostings(it->value());
        if (!seqs.ok()) continue;  // a damaged list: the records are still in the trail
        for (uint64_t seq : *seqs) {
          if (seq <= last) continue;
          if (seq > sealed.seq) {
            go_on = false;
            break;
          }
          RETURN_IF_ERROR(visit_seq(seq, &go_on));
          if (!go_on) return page;
        }
      }
      RETURN_IF_ERROR(it->status());
    }
  }
  // The records themselves: all of them from start without an index, else
  // the unsealed tail.
  const uint64_t from = (f.bucket || f.identity) ? std::max(start, sealed.seq + 1) : start;
  const std::string prefix = RecordPrefix();
  auto it = kv.NewIterator();
  for (it->Seek(RecordKey(from)); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (it->key().size() != prefix.size() + 8) continue;
    uint64_t seq = 0;
    SeqOfKey(it->key(), &seq);
    if (!visit(seq, it->value())) return page;
  }
  RETURN_IF_ERROR(it->status());
  return page;
}

}  // namespace strata::audit
