// KvStore over RocksDB, the embedded default for metadata.
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "meta/keys.h"
#include "meta/kv_store.h"

namespace strata::meta {
namespace {

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  std::string msg = "rocksdb: " + s.ToString();
  switch (s.code()) {
    case rocksdb::Status::kNotFound:
      return NotFound(msg);
    case rocksdb::Status::kCorruption:
      return Corruption(msg);
    case rocksdb::Status::kNotSupported:
      return NotImplemented(msg);
    case rocksdb::Status::kInvalidArgument:
      return InvalidArgument(msg);
    case rocksdb::Status::kIOError:
      if (s.subcode() == rocksdb::Status::kNoSpace || s.subcode() == rocksdb::Status::kSpaceLimit)
        return ResourceExhausted(msg);
      if (s.IsPathNotFound()) return NotFound(msg);
      return IOError(msg);
    case rocksdb::Status::kShutdownInProgress:
    case rocksdb::Status::kTimedOut:
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTryAgain:
      return Unavailable(msg);
    case rocksdb::Status::kAborted:
      return Aborted(msg);
    default:
      return Internal(msg);
  }
}

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

class RocksDbIterator : public KvIterator {
 public:
  // Holds the DB so an iterator can never outlive it.
  RocksDbIterator(std::shared_ptr<rocksdb::DB> db, rocksdb::Iterator* it)
      : db_(std::move(db)), it_(it) {}
  ~RocksDbIterator() override { it_.reset(); }  // before db_, whatever the member order

  void Seek(std::string_view key) override { it_->Seek(ToSlice(key)); }
  bool Valid() const override { return it_->Valid(); }
  void Next() override { it_->Next(); }
  std::string_view key() const override { return ToView(it_->key()); }
  std::string_view value() const override { return ToView(it_->value()); }
  Status status() const override { return FromRocks(it_->status()); }

 private:
  std::shared_ptr<rocksdb::DB> db_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksDbStore : public KvStore {
 public:
  explicit RocksDbStore(std::shared_ptr<rocksdb::DB> db) : db_(std::move(db)) {}

  Result<std::optional<std::string>> Get(std::string_view key) override {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return FromRocks(s);
    return std::optional<std::string>(std::move(value));
  }

  Status Write(const WriteBatch& batch, bool sync) override {
    rocksdb::WriteBatch wb;
    for (const WriteBatch::Op& op : batch.ops()) {
      rocksdb::Status s =
          op.is_delete ? wb.Delete(ToSlice(op.key)) : wb.Put(ToSlice(op.key), ToSlice(op.value));
      if (!s.ok()) return FromRocks(s);
    }
    // Group commit comes from RocksDB itself: concurrent writers queue up, the
    // leader appends all their batches to the WAL in one write and, if any of
    // them asked for sync, syncs once for the group before waking them all.
    rocksdb::WriteOptions options;
    options.sync = sync;
    return FromRocks(db_->Write(options, &wb));
  }

  std::unique_ptr<KvIterator> NewIterator() override {
    // Without an explicit snapshot, a RocksDB iterator reads the state as of
    // its creation: the consistent snapshot KvIterator promises.
    return std::make_unique<RocksDbIterator>(db_, db_->NewIterator(rocksdb::ReadOptions()));
  }

  Status Checkpoint(const std::string& dir) override {
    // Hard links for immutable SST files where possible (same filesystem),
    // copies otherwise; the WAL is flushed into the copy first.
    rocksdb::Checkpoint* raw = nullptr;
    rocksdb::Status s = rocksdb::Checkpoint::Create(db_.get(), &raw);
    if (!s.ok()) return FromRocks(s);
    std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
    return FromRocks(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0));
  }

 private:
  std::shared_ptr<rocksdb::DB> db_;
};

// Where the memtable keeps an insert hint (the last insert's position) per
// group of keys: a key's group is its first two bytes (the registry prefix
// and the next byte), and for the audit trail's per-bucket and per-identity
// indexes ("Eb" / "Eu" + name + '\0' + BE64 seq) everything up to the '\0'.
// Keys that arrive in order within their group — the audit records and their
// index entries, queued events, objects named in sequence — then insert next
// to the previous one instead of descending the skip list from the top: that
// descent was ~11k instructions per key, and every audited PUT inserts three
// audit keys far from its object's (keys.h).
class InsertGroups : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "strata.InsertGroups"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    if (key.size() > 2 && key[0] == kAuditPrefix && (key[1] == 'b' || key[1] == 'u')) {
      const void* nul = std::memchr(key.data() + 2, '\0', key.size() - 2);
      if (nul != nullptr) {
        return rocksdb::Slice(key.data(), static_cast<const char*>(nul) - key.data() + 1);
      }
    }
    return rocksdb::Slice(key.data(), 2);
  }
  bool InDomain(const rocksdb::Slice& key) const override { return key.size() >= 2; }
};

rocksdb::Options MetadataOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);  // flush + compaction threads; metadata is small
  options.max_open_files = -1;     // keep every table open: no table-cache misses
  options.keep_log_file_num = 10;  // RocksDB's own info LOG files
  // Insert hints (InsertGroups); RocksDB uses them only when one thread
  // inserts a write group's batches, so concurrent memtable writes are off
  // (docs/performance.md: measured per audited PUT).
  options.memtable_insert_with_hint_prefix_extractor = std::make_shared<InsertGroups>();
  options.allow_concurrent_memtable_write = false;

  rocksdb::BlockBasedTableOptions table;
  // Point lookups (bucket records, intents) mostly hit or miss one key; a
  // bloom filter lets a miss skip reading data blocks.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  // LZ4 is cheap enough to leave on; use it only when this build has it.
  std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  bool has_lz4 =
      std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) != supported.end();
  options.compression = has_lz4 ? rocksdb::kLZ4Compression : rocksdb::kNoCompression;
  return options;
}

}  // namespace

Result<std::unique_ptr<KvStore>> OpenRocksDbStore(const std::string& dir) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(MetadataOptions(), dir, &raw);
  if (!s.ok()) return FromRocks(s).WithContext(dir);
  return std::unique_ptr<KvStore>(new RocksDbStore(std::shared_ptr<rocksdb::DB>(raw)));
}

}  // namespace strata::meta
