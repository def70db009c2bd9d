#include "audit/query.h"

#include <memory>

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
  // The index to walk: the bucket's, else the identity's, else the records.
  std::string prefix;
  bool indexed = true;
  if (f.bucket) {
    prefix = BucketIndexPrefix(*f.bucket);
  } else if (f.identity) {
    prefix = IdentityIndexPrefix(*f.identity);
  } else {
    prefix = RecordPrefix();
    indexed = false;
  }
  std::string seek = prefix;
  PutFixed64BE(&seek, start);
  auto it = kv.NewIterator();
  uint64_t scanned = 0;
  for (it->Seek(seek); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (it->key().size() != prefix.size() + 8) continue;
    uint64_t seq = 0;
    SeqOfKey(it->key(), &seq);
    if (++scanned > kMaxScanned) {
      page.next_after = seq - 1;
      return page;
    }
    std::optional<std::string> raw;
    if (indexed) {
      ASSIGN_OR_RETURN(raw, kv.Get(RecordKey(seq)));
      if (!raw) continue;  // an index entry whose record is gone: verify's business
    } else {
      raw = std::string(it->value());
    }
    auto r = DecodeRecord(*raw);
    if (!r.ok()) continue;
    if (r->time_ns > f.to_ns) return page;  // times never decrease: nothing later matches
    if (!Matches(*r, f)) continue;
    page.records.push_back(std::move(*r));
    if (page.records.size() >= f.limit) {
      page.next_after = seq;
      return page;
    }
  }
  RETURN_IF_ERROR(it->status());
  return page;
}

}  // namespace strata::audit
