#include "object/latest_index.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "meta/keys.h"
#include "object/record.h"

namespace strata::object {

namespace {

// What a key's 'T' entry holds for its newest version's stored value:
// nothing for a delete marker; the record without its inline data (listing
// never returns bytes) otherwise. A value that does not decode is kept as it
// is, so that ListObjects reports it as the corruption it is.
std::optional<std::string> LatestValue(std::string_view value) {
  auto rec = DecodeObjectRecord(value);
  if (!rec) return std::string(value);
  if (rec->delete_marker) return std::nullopt;
  return EncodeListedRecord(std::move(*rec));
}

// One key's 'O' operations in a batch: the last operation on each version
// key (a later op in a batch overrides an earlier one), newest version first.
struct KeyOps {
  std::string bucket, key;
  std::map<std::string, const meta::WriteBatch::Op*> last;
};

// Adds to `out` what the 'T' entry of ops.key needs after the batch, given
// the versions stored before it (read through `it`).
Status IndexKey(meta::KvIterator* it, const KeyOps& ops, meta::WriteBatch* out) {
  const std::string prefix = meta::ObjectKeyPrefix(ops.bucket, ops.key);
  // The newest stored version, and the newest one the batch leaves in place.
  std::optional<std::string> newest_before;
  std::optional<std::string> kept_key;
  std::string_view kept_value;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view k = it->key();
    if (!newest_before) newest_before = std::string(k);
    auto op = ops.last.find(std::string(k));
    if (op != ops.last.end() && op->second->is_delete) continue;
    kept_key = std::string(k);
    kept_value = op != ops.last.end() ? std::string_view(op->second->value) : it->value();
    break;
  }
  RETURN_IF_ERROR(it->status());
  // The newest version the batch puts (version keys sort newest first).
  const meta::WriteBatch::Op* put = nullptr;
  std::string put_key;
  for (const auto& [k, op] : ops.last) {
    if (!op->is_delete) {
      put = op;
      put_key = k;
      break;
    }
  }
  std::optional<std::string> newest_key;
  std::string_view newest_value;
  if (kept_key && (!put || *kept_key <= put_key)) {
    newest_key = kept_key;
    newest_value = kept_value;
  } else if (put) {
    newest_key = put_key;
    newest_value = put->value;
  }
  const std::string latest_key = meta::LatestKey(ops.bucket, ops.key);
  if (!newest_key) {
    if (newest_before) out->Delete(latest_key);
    return Status::OK();
  }
  const bool rewritten = ops.last.count(*newest_key) > 0;
  if (newest_key == newest_before && !rewritten) return Status::OK();  // entry unchanged
  if (auto v = LatestValue(newest_value)) {
    out->Put(latest_key, *v);
  } else {
    out->Delete(latest_key);
  }
  return Status::OK();
}

}  // namespace

class LatestIndex::Store : public meta::ExtendingStore {
 public:
  explicit Store(LatestIndex* x) : x_(x) {}
  Result<std::optional<std::string>> Get(std::string_view key) override {
    return x_->inner_->Get(key);
  }
  Status Apply(const meta::WriteBatch& batch, meta::WriteBatch* owned, bool sync) override {
    meta::ExtendedBatch out(batch, owned);
    std::map<std::string, KeyOps> touched;  // bucket '\0' key -> its ops
    for (const meta::WriteBatch::Op& op : batch.ops()) {
      std::string bucket, key;
      uint64_t stamp = 0;
      if (!meta::ParseObjectVersionKey(op.key, &bucket, &key, &stamp)) continue;
      KeyOps& k = touched[bucket + '\0' + key];
      if (k.last.empty()) {
        k.bucket = std::move(bucket);
        k.key = std::move(key);
      }
      k.last[op.key] = &op;
    }
    if (touched.empty()) return out.Forward(*x_->inner_, sync);
    // Writers of one key, one at a time from reading its versions to
    // committing: the entry is computed from the state it replaces.
    std::vector<size_t> stripes;
    for (const auto& [name, ops] : touched) {
      stripes.push_back(std::hash<std::string>{}(name) % x_->key_locks_.size());
    }
    std::sort(stripes.begin(), stripes.end());
    stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
    std::vector<std::unique_lock<std::mutex>> held;
    held.reserve(stripes.size());
    for (size_t s : stripes) held.emplace_back(x_->key_locks_[s]);

    // Into a batch of their own first: `touched` points into the batch's ops.
    meta::WriteBatch entries;
    auto it = x_->inner_->NewIterator();
    for (const auto& [name, ops] : touched) RETURN_IF_ERROR(IndexKey(it.get(), ops, &entries));
    it.reset();
    touched.clear();
    out.get().Append(std::move(entries));
    return out.Forward(*x_->inner_, sync);
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return x_->inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return x_->inner_->Checkpoint(dir); }

 private:
  LatestIndex* x_;
};

LatestIndex::LatestIndex(meta::KvStore* inner)
    : inner_(inner), store_(std::make_unique<Store>(this)) {}

LatestIndex::~LatestIndex() = default;

meta::KvStore* LatestIndex::store() { return store_.get(); }

Result<std::unique_ptr<LatestIndex>> LatestIndex::Open(meta::KvStore* inner) {
  std::unique_ptr<LatestIndex> x(new LatestIndex(inner));
  ASSIGN_OR_RETURN(auto ready, inner->Get(meta::LatestIndexReadyKey()));
  if (!ready) RETURN_IF_ERROR(x->Build());
  return x;
}

// Runs before anyone writes through store(). In batches, so that a store of
// millions of versions is not one batch in memory; the ready key goes last.
Status LatestIndex::Build() {
  constexpr size_t kBatchOps = 10000;
  meta::WriteBatch batch;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::OK();
    Status s = inner_->Write(batch, /*sync=*/false);
    batch = meta::WriteBatch();
    return s;
  };
  // Entries of an earlier build that did not finish.
  {
    const std::string prefix(1, meta::kLatestPrefix);
    auto it = inner_->NewIterator();
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      batch.Delete(it->key());
      if (batch.ops().size() >= kBatchOps) RETURN_IF_ERROR(flush());
    }
    RETURN_IF_ERROR(it->status());
  }
  const std::string prefix(1, meta::kObjectPrefix);
  auto it = inner_->NewIterator();
  std::string last;  // bucket '\0' key of the previous record
  uint64_t versions = 0;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string bucket, key;
    uint64_t stamp = 0;
    if (!meta::ParseObjectVersionKey(it->key(), &bucket, &key, &stamp)) continue;
    ++versions;
    std::string name = bucket + '\0' + key;
    if (name == last) continue;  // an older version of the key just indexed
    last = std::move(name);
    if (auto v = LatestValue(it->value())) {
      batch.Put(meta::LatestKey(bucket, key), *v);
      ++built_;
    }
    if (batch.ops().size() >= kBatchOps) RETURN_IF_ERROR(flush());
  }
  RETURN_IF_ERROR(it->status());
  batch.Put(meta::LatestIndexReadyKey(), "");
  RETURN_IF_ERROR(inner_->Write(batch, /*sync=*/true));
  if (versions > 0) {
    STRATA_LOG("latest-version index: made %llu entries from %llu object versions (they were "
               "written before the index was kept)",
               static_cast<unsigned long long>(built_), static_cast<unsigned long long>(versions));
  }
  return Status::OK();
}

}  // namespace strata::object
