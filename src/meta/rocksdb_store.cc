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
#include <string>
#include <vector>

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

// What NewIterator returns when RocksDB cannot make one: never valid, and
// says why.
class FailedIterator : public KvIterator {
 public:
  explicit FailedIterator(Status s) : s_(std::move(s)) {}
  void Seek(std::string_view) override {}
  bool Valid() const override { return false; }
  void Next() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  Status status() const override { return s_; }

 private:
  Status s_;
};

// The open database and its column families: "default" for every key but
// the latest-version entries, "latest" for those (kLatestPrefix, keys.h).
// Shared by the store and its iterators, so an iterator never outlives it.
struct Db {
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::ColumnFamilyHandle* latest = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // as opened: default, latest
  ~Db() {
    for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db.reset();
  }
  rocksdb::ColumnFamilyHandle* For(std::string_view key) const {
    return !key.empty() && key[0] == kLatestPrefix ? latest : db->DefaultColumnFamily();
  }
};

// One ordered view of both column families, as of one moment (RocksDB's
// NewIterators reads them at the same sequence number). Their keys never
// interleave: every 'T' key is in "latest", every other key in "default", so
// the view is the default keys below "T", then the 'T' keys, then the default
// keys above them. A Seek therefore positions only the family its key falls
// in; the other is seeked (to the same key) only when the scan runs out of
// the first or crosses into the other's range — most scans stay within one
// prefix and never pay for the second.
class RocksDbIterator : public KvIterator {
 public:
  RocksDbIterator(std::shared_ptr<Db> db, std::vector<rocksdb::Iterator*> its)
      : db_(std::move(db)), main_(its[0]), latest_(its[1]) {}
  ~RocksDbIterator() override {  // before db_, whatever the member order
    main_.reset();
    latest_.reset();
  }

  void Seek(std::string_view key) override {
    target_.assign(key);
    const bool in_latest = !key.empty() && key[0] == kLatestPrefix;
    main_pending_ = in_latest;
    latest_pending_ = !in_latest;
    (in_latest ? latest_ : main_)->Seek(ToSlice(key));
    Pick();
  }
  bool Valid() const override { return current_ != nullptr; }
  void Next() override {
    current_->Next();
    Pick();
  }
  std::string_view key() const override { return ToView(current_->key()); }
  std::string_view value() const override { return ToView(current_->value()); }
  Status status() const override {
    if (!main_->status().ok()) return FromRocks(main_->status());
    return FromRocks(latest_->status());
  }

 private:
  void Pick() {
    if (latest_pending_) {
      // Every default key below "T" comes before every 'T' key.
      if (main_->Valid() && main_->key().compare(rocksdb::Slice(&kLatestPrefix, 1)) < 0) {
        current_ = main_.get();
        return;
      }
      latest_->Seek(ToSlice(target_));
      latest_pending_ = false;
    } else if (main_pending_) {
      // The default keys at or after a 'T' target all come after the 'T' keys.
      if (latest_->Valid()) {
        current_ = latest_.get();
        return;
      }
      main_->Seek(ToSlice(target_));
      main_pending_ = false;
    }
    const bool a = main_->Valid(), b = latest_->Valid();
    if (a && b) {
      current_ = main_->key().compare(latest_->key()) <= 0 ? main_.get() : latest_.get();
    } else {
      current_ = a ? main_.get() : b ? latest_.get() : nullptr;
    }
  }

  std::shared_ptr<Db> db_;
  std::unique_ptr<rocksdb::Iterator> main_, latest_;
  rocksdb::Iterator* current_ = nullptr;
  std::string target_;          // the last Seek's key
  bool main_pending_ = false;   // main_ not yet seeked to target_
  bool latest_pending_ = false; // latest_ not yet seeked to target_
};

class RocksDbStore : public KvStore {
 public:
  explicit RocksDbStore(std::shared_ptr<Db> db) : db_(std::move(db)) {}

  Result<std::optional<std::string>> Get(std::string_view key) override {
    std::string value;
    rocksdb::Status s = db_->db->Get(rocksdb::ReadOptions(), db_->For(key), ToSlice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return FromRocks(s);
    return std::optional<std::string>(std::move(value));
  }

  Status Write(const WriteBatch& batch, bool sync) override {
    rocksdb::WriteBatch wb;
    for (const WriteBatch::Op& op : batch.ops()) {
      rocksdb::ColumnFamilyHandle* cf = db_->For(op.key);
      rocksdb::Status s = op.is_delete ? wb.Delete(cf, ToSlice(op.key))
                                       : wb.Put(cf, ToSlice(op.key), ToSlice(op.value));
      if (!s.ok()) return FromRocks(s);
    }
    // Group commit comes from RocksDB itself: concurrent writers queue up, the
    // leader appends all their batches to the WAL in one write and, if any of
    // them asked for sync, syncs once for the group before waking them all.
    rocksdb::WriteOptions options;
    options.sync = sync;
    return FromRocks(db_->db->Write(options, &wb));
  }

  std::unique_ptr<KvIterator> NewIterator() override {
    // Without an explicit snapshot, RocksDB's iterators read the state as of
    // their creation: the consistent snapshot KvIterator promises, here
    // across both column families.
    std::vector<rocksdb::Iterator*> its;
    rocksdb::Status s = db_->db->NewIterators(rocksdb::ReadOptions(), db_->handles, &its);
    if (!s.ok()) return std::make_unique<FailedIterator>(FromRocks(s));
    return std::make_unique<RocksDbIterator>(db_, std::move(its));
  }

  Status Checkpoint(const std::string& dir) override {
    // Hard links for immutable SST files where possible (same filesystem),
    // copies otherwise; the WAL is flushed into the copy first.
    rocksdb::Checkpoint* raw = nullptr;
    rocksdb::Status s = rocksdb::Checkpoint::Create(db_->db.get(), &raw);
    if (!s.ok()) return FromRocks(s);
    std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
    return FromRocks(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0));
  }

 private:
  std::shared_ptr<Db> db_;
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

// The latest-version entries ('T') in their own column family, tuned for a
// listing right after a burst of new versions (docs/performance.md
// "Versioning", session 21):
//  - a 1 MiB memtable: every new version of a key rewrites its entry, and a
//    memtable keeps every rewrite until it is flushed, each one an entry a
//    listing must step over; flushed, only the newest of each key remains;
//  - levels sized to that memtable (RocksDB's rule of thumb: level 1 = memtable
//    × level-0 files before a compaction), so compacting the small, often
//    flushed level 0 never rewrites a large level 1;
//  - no compression and no bloom filter, to keep those flushes and
//    compactions cheap;
//  - a listing steps over up to 64 hidden entries of a key with Next before
//    it re-seeks (default 8): right after a burst a key has one per level-0
//    file and a few in the memtable, and a re-seek costs more than that.
constexpr char kLatestFamily[] = "latest";
constexpr size_t kLatestWriteBuffer = 1 << 20;
constexpr uint64_t kLatestSkips = 64;

Result<std::unique_ptr<KvStore>> OpenRocksDbStore(const std::string& dir) {
  rocksdb::Options options = MetadataOptions();
  // A store written before the family existed gets it made on open.
  options.create_missing_column_families = true;
  rocksdb::ColumnFamilyOptions latest(options);
  latest.write_buffer_size = kLatestWriteBuffer;
  latest.max_sequential_skip_in_iterations = kLatestSkips;
  latest.max_bytes_for_level_base = kLatestWriteBuffer * latest.level0_file_num_compaction_trigger;
  latest.target_file_size_base = kLatestWriteBuffer;
  // Small and rewritten often: no compression and no bloom filter (nothing
  // looks a 'T' key up by itself), so its flushes and compactions cost little.
  latest.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  latest.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(options)},
      {kLatestFamily, latest}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::DBOptions(options), dir, families, &handles, &raw);
  if (!s.ok()) return FromRocks(s).WithContext(dir);
  auto db = std::make_shared<Db>();
  db->db.reset(raw);
  db->handles = std::move(handles);
  db->latest = db->handles[1];
  return std::unique_ptr<KvStore>(new RocksDbStore(std::move(db)));
}

}  // namespace strata::meta
