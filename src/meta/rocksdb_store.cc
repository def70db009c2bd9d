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

#include "common/log.h"
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

// The open database and its column families. Two kinds of keys have a
// family of their own, each a whole registry prefix (keys.h): the
// latest-version entries ('T', "latest"), and the audit trail ('E', "audit"),
// whose four keys per audited change would otherwise fill the memtable every
// object lookup descends. Everything else is in "default". Shared by the
// store and its iterators, so an iterator never outlives it.
struct Family {
  const char* name;
  char prefix;  // 0: the default family
};
constexpr Family kFamilies[] = {{"default", 0}, {"latest", kLatestPrefix}, {"audit", kAuditPrefix}};
constexpr size_t kFamilyCount = std::size(kFamilies);

size_t FamilyOf(std::string_view key) {
  if (key.empty()) return 0;
  for (size_t f = 1; f < kFamilyCount; ++f) {
    if (key[0] == kFamilies[f].prefix) return f;
  }
  return 0;
}

struct Db {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // in kFamilies' order
  ~Db() {
    for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db.reset();
  }
  rocksdb::ColumnFamilyHandle* For(std::string_view key) const { return handles[FamilyOf(key)]; }
};

// The key space cut where the families change: a run of first bytes that
// one family holds. Default holds the runs between the others' prefixes.
struct Segment {
  int first, last;  // first bytes, inclusive
  size_t family;
};
std::vector<Segment> MakeSegments() {
  std::vector<Segment> out;
  for (int b = 0; b < 256; ++b) {
    size_t f = FamilyOf(std::string_view(reinterpret_cast<const char*>(&b), 1));
    if (!out.empty() && out.back().family == f) {
      out.back().last = b;
    } else {
      out.push_back({b, b, f});
    }
  }
  return out;
}
struct SegmentMap {
  std::vector<Segment> segments;
  uint8_t of[256];  // first byte -> its segment
};
const SegmentMap& Segments() {
  static const SegmentMap map = [] {
    SegmentMap m;
    m.segments = MakeSegments();
    for (size_t i = 0; i < m.segments.size(); ++i) {
      for (int b = m.segments[i].first; b <= m.segments[i].last; ++b) m.of[b] = static_cast<uint8_t>(i);
    }
    return m;
  }();
  return map;
}
size_t SegmentOf(std::string_view key) {
  return Segments().of[key.empty() ? 0 : static_cast<unsigned char>(key[0])];
}

// One ordered view of all column families, as of one moment: the iterator
// takes a RocksDB snapshot when it is made and reads every family at it.
// The families' keys never interleave — each holds whole first-byte runs
// (Segments) — so the view is the segments one after the other. A family's
// RocksDB iterator is made when a scan first enters one of its segments
// (most scans stay within one prefix, and making an iterator per family up
// front cost ~1.5k instructions each per scan), and a family already seeked
// for this scan is, having no keys in between, already where its next
// segment starts.
class RocksDbIterator : public KvIterator {
 public:
  explicit RocksDbIterator(std::shared_ptr<Db> db)
      : db_(std::move(db)), snapshot_(db_->db->GetSnapshot()), its_(kFamilyCount) {}
  ~RocksDbIterator() override {
    for (auto& it : its_) it.reset();  // before the snapshot and db_
    db_->db->ReleaseSnapshot(snapshot_);
  }

  void Seek(std::string_view key) override {
    target_.assign(key);
    seeked_ = 0;
    segment_ = SegmentOf(key);
    Enter();
  }
  bool Valid() const override { return current_ != nullptr; }
  void Next() override {
    current_->Next();
    if (current_->Valid() && SegmentOf(ToView(current_->key())) == segment_) return;
    ++segment_;
    Enter();
  }
  std::string_view key() const override { return ToView(current_->key()); }
  std::string_view value() const override { return ToView(current_->value()); }
  Status status() const override {
    for (const auto& it : its_) {
      if (it && !it->status().ok()) return FromRocks(it->status());
    }
    return Status::OK();
  }

 private:
  rocksdb::Iterator* Of(size_t family) {
    std::unique_ptr<rocksdb::Iterator>& it = its_[family];
    if (!it) {
      rocksdb::ReadOptions options;
      options.snapshot = snapshot_;
      it.reset(db_->db->NewIterator(options, db_->handles[family]));
    }
    return it.get();
  }

  // Positions on the first entry of segment_ or a later one.
  void Enter() {
    const std::vector<Segment>& segs = Segments().segments;
    for (; segment_ < segs.size(); ++segment_) {
      const size_t f = segs[segment_].family;
      rocksdb::Iterator* it = Of(f);
      if (!(seeked_ & (1u << f))) {
        seeked_ |= 1u << f;
        if (SegmentOf(target_) == segment_) {
          it->Seek(ToSlice(target_));
        } else {
          const char first = static_cast<char>(segs[segment_].first);
          it->Seek(rocksdb::Slice(&first, 1));
        }
      }
      if (it->Valid() && SegmentOf(ToView(it->key())) == segment_) {
        current_ = it;
        return;
      }
    }
    current_ = nullptr;
  }

  std::shared_ptr<Db> db_;
  const rocksdb::Snapshot* snapshot_;
  std::vector<std::unique_ptr<rocksdb::Iterator>> its_;  // in kFamilies' order, made on first use
  unsigned seeked_ = 0;                                  // families seeked for this scan (bits)
  rocksdb::Iterator* current_ = nullptr;
  size_t segment_ = 0;
  std::string target_;  // the last Seek's key
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
    return std::make_unique<RocksDbIterator>(db_);
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
// posting lists ("EB" / "EU" + name + '\0' + BE64 seq) everything up to the
// '\0'. Keys that arrive in
// order within their group — the audit records, queued events, objects
// named in sequence — then insert next to the previous one instead of
// descending the skip list from the top (~11k instructions per key when
// each audited PUT inserted three audit keys far from its object's).
class InsertGroups : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "strata.InsertGroups"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    if (key.size() > 2 && key[0] == kAuditPrefix && (key[1] == 'B' || key[1] == 'U')) {
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
constexpr size_t kLatestWriteBuffer = 1 << 20;
constexpr uint64_t kLatestSkips = 64;

namespace {

// A store written before a family existed has that family's keys in
// "default", where no read looks any more: move them, a few thousand per
// atomic batch, so a crash part-way leaves every key in exactly one family
// and the next open finishes the move. One seek per family when there is
// nothing to move.
Status MoveIntoFamilies(Db& db) {
  rocksdb::ColumnFamilyHandle* from = db.handles[0];
  for (size_t f = 1; f < kFamilyCount; ++f) {
    const char prefix = kFamilies[f].prefix;
    uint64_t total = 0;
    for (;;) {
      rocksdb::WriteBatch wb;
      size_t moved = 0;
      std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), from));
      for (it->Seek(rocksdb::Slice(&prefix, 1));
           it->Valid() && it->key().size() > 0 && it->key()[0] == prefix && moved < 4096;
           it->Next(), ++moved) {
        rocksdb::Status s = wb.Put(db.handles[f], it->key(), it->value());
        if (s.ok()) s = wb.Delete(from, it->key());
        if (!s.ok()) return FromRocks(s);
      }
      if (!it->status().ok()) return FromRocks(it->status());
      it.reset();
      if (moved == 0) break;
      rocksdb::WriteOptions sync;
      sync.sync = true;
      RETURN_IF_ERROR(FromRocks(db.db->Write(sync, &wb)));
      // A large audit trail takes a while: say so now and then.
      if (total == 0 || (total + moved) / 1'000'000 != total / 1'000'000) {
        STRATA_LOG("metadata: moving the '%c' keys into the \"%s\" column family: %llu so far",
                   prefix, kFamilies[f].name, static_cast<unsigned long long>(total + moved));
      }
      total += moved;
    }
    if (total > 0) {
      STRATA_LOG("metadata: moved %llu '%c' keys into the \"%s\" column family",
                 static_cast<unsigned long long>(total), prefix, kFamilies[f].name);
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<KvStore>> OpenRocksDbStore(const std::string& dir) {
  rocksdb::Options options = MetadataOptions();
  // A store written before a family existed gets it made on open (and its
  // keys moved into it, MoveIntoFamilies).
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
  // The audit trail: appended in seq order, read back by the sealer, verify
  // and queries; the default family's settings suit it.
  rocksdb::ColumnFamilyOptions audit(options);
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const Family& f : kFamilies) {
    families.emplace_back(f.prefix == 0 ? rocksdb::kDefaultColumnFamilyName : f.name,
                          f.prefix == kLatestPrefix ? latest
                          : f.prefix == kAuditPrefix ? audit
                                                     : rocksdb::ColumnFamilyOptions(options));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(rocksdb::DBOptions(options), dir, families, &handles, &raw);
  if (!s.ok()) return FromRocks(s).WithContext(dir);
  auto db = std::make_shared<Db>();
  db->db.reset(raw);
  db->handles = std::move(handles);
  if (Status moved = MoveIntoFamilies(*db); !moved.ok()) return moved.WithContext(dir);
  return std::unique_ptr<KvStore>(new RocksDbStore(std::move(db)));
}

}  // namespace strata::meta
