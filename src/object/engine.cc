#include "object/engine.h"

#include <algorithm>
#include <set>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>
#include <cstring>
#include <cstdio>
#include <functional>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "common/thread_wait.h"
#include "crypto/chunk_cipher.h"
#include "meta/keys.h"
#include "object/latest_index.h"
#include "object/lock.h"

namespace strata::object {

// ---------------------------------------------------------------- writer

// The MD5 (ETag) of the body. MD5 is the costliest per-byte step of a PUT
// (~0.67 GB/s on one core here), so once a body passes kAsyncAfterBytes the
// rest is hashed on a helper thread, pipelined with receiving and writing it.
// At most kMaxQueued pieces wait; their buffers are reused. A piece appended
// with AppendBuffer is queued as it is (the body was read into it); one
// appended with Append is copied into a spare first.
struct ObjectWriter::Md5State {
  static constexpr uint64_t kAsyncAfterBytes = 1 << 20;
  static constexpr size_t kMaxQueued = 3;

  StreamHash hash{StreamHash::Kind::kMd5};
  uint64_t seen_bytes = 0;
  bool async = false;
  bool stop = false;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Piece> queue;
  std::vector<Piece> spare;
  std::thread worker;

  ~Md5State() { Drain(); }

  // Whether `n` more bytes go to the helper (starting it past the first MiB).
  bool ToHelper(size_t n) {
    if (!async && seen_bytes >= kAsyncAfterBytes) {
      async = true;
      // Past its first MiB the body is bulk bytes: the thread receiving it
      // steps back for small requests (a pool's thread; common/thread_wait.h).
      TurnThisThreadBulk();
      worker = std::thread([this] { Run(); });
    }
    seen_bytes += n;
    return async;
  }

  void Update(std::string_view data) {
    if (!ToHelper(data.size())) {
      hash.Update(data.data(), data.size());
      return;
    }
    Piece piece = Spare(data.size());
    std::memcpy(piece.data.get(), data.data(), data.size());
    piece.size = data.size();
    Queue(std::move(piece));
  }

  // `piece` (its first `piece.size` bytes) hashed here, and the caller keeps
  // it; or moved to the helper's queue, leaving `piece` empty.
  void UpdatePiece(Piece& piece) {
    if (!ToHelper(piece.size)) {
      hash.Update(piece.data.get(), piece.size);
      return;  // the caller keeps it
    }
    Queue(std::move(piece));
    piece = Piece{};
  }

  // A buffer of at least n bytes: a spare one hashed before, or a new one.
  Piece Spare(size_t n) {
    {
      std::lock_guard lock(mu);
      for (size_t i = 0; i < spare.size(); ++i) {
        if (spare[i].capacity < n) continue;
        Piece p = std::move(spare[i]);
        spare.erase(spare.begin() + static_cast<ptrdiff_t>(i));
        return p;
      }
      // None fits: one too small goes, so that mixed sizes never grow the
      // number of buffers past the queue's and the caller's.
      if (!spare.empty()) spare.pop_back();
    }
    Piece p;
    p.data = std::make_unique_for_overwrite<char[]>(n);
    p.capacity = n;
    return p;
  }

  void Queue(Piece piece) {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return queue.size() < kMaxQueued; });
    queue.push_back(std::move(piece));
    cv.notify_all();
  }

  // Waits until everything queued is hashed and stops the helper.
  void Drain() {
    if (!async) return;
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
    async = false;
  }

  std::string Final() {
    Drain();
    return hash.Final();
  }

  void Run() {
    NameThisThread("md5");
    LowerThisThreadPriority();  // bulk hashing: small requests go first on busy cores
    std::unique_lock lock(mu);
    while (true) {
      cv.wait(lock, [this] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stopped and drained
      Piece piece = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      hash.Update(piece.data.get(), piece.size);
      lock.lock();
      spare.push_back(std::move(piece));
      cv.notify_all();
    }
  }
};

ObjectWriter::ObjectWriter(ObjectEngine* engine, std::string bucket, std::string key,
                           ObjectHeaders headers)
    : engine_(engine),
      bucket_(std::move(bucket)),
      key_(std::move(key)),
      headers_(std::move(headers)),
      md5_(std::make_unique<Md5State>()) {}

ObjectWriter::~ObjectWriter() {
  if (!done_) Abort();
}

void ObjectWriter::StartEncryption(Encryption sse, std::string_view data_key) {
  sse.salt = RandomBytes(crypto::kSaltBytes);
  if (sse.mode == SseMode::kCustomer && upload_id_.empty()) {
    sse.key_digest = crypto::CustomerKeyDigest(sse.salt, data_key);
  }
  cipher_ = std::make_unique<crypto::ChunkCipher>(data_key, sse.salt, SealIdentity(bucket_, key_));
  sse_ = std::move(sse);
  pending_.reserve(crypto::kChunkBytes);
}

Status ObjectWriter::SealPending(bool last) {
  sealed_.resize(pending_.size() + crypto::kTagBytes);
  cipher_->Seal(chunk_index_++, last, pending_, sealed_.data());
  pending_.clear();
  return Store(sealed_);
}

void ObjectWriter::SetChecksum(std::string algorithm, std::string value, std::string type) {
  checksum_algorithm_ = std::move(algorithm);
  checksum_value_ = std::move(value);
  checksum_type_ = std::move(type);
}

Status ObjectWriter::Append(std::string_view data) {
  if (done_) return Internal("append after commit/abort");
  if (options_.md5) md5_->Update(data);
  size_bytes_ += data.size();
  if (!cipher_) return Store(data);
  return AppendPlaintext(data);
}

Status ObjectWriter::AppendPlaintext(std::string_view data) {
  while (!data.empty()) {
    // A full chunk is sealed only once more data follows: the last chunk of
    // the version is sealed by Commit, flagged as the last.
    if (pending_.size() == crypto::kChunkBytes) RETURN_IF_ERROR(SealPending(false));
    const size_t take = std::min(crypto::kChunkBytes - pending_.size(), data.size());
    pending_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  return Status::OK();
}

char* ObjectWriter::Buffer(size_t n) {
  n = std::max<size_t>(n, 1);
  if (piece_.capacity < n) {
    // A spare one hashed before (the helper's), or a new one, not zero-filled.
    piece_ = md5_->Spare(n);
  }
  return piece_.data.get();
}

Status ObjectWriter::AppendBuffer(size_t len) {
  if (done_) return Internal("append after commit/abort");
  if (len > piece_.capacity) return InvalidArgument("appended past the buffer");
  if (!options_.md5) return Append(std::string_view(piece_.data.get(), len));
  // The bytes stay where they were read: queued for the helper as they are,
  // and stored from the same memory (both only read it) before this returns.
  // Once hashed the helper puts it with the spares; a later Buffer takes it.
  const char* data = piece_.data.get();
  piece_.size = len;
  md5_->UpdatePiece(piece_);
  size_bytes_ += len;
  std::string_view view(data, len);
  if (!cipher_) return Store(view);
  return AppendPlaintext(view);
}

Status ObjectWriter::Store(std::string_view data) {
  if (!file_ && !upload_id_.empty()) RETURN_IF_ERROR(SpillToFile());  // parts always get a file
  if (!file_) {
    buffer_.append(data);
    if (buffer_.size() <= store_->inline_max_bytes()) return Status::OK();
    return SpillToFile();
  }
  return file_->Append(data);
}

Status ObjectWriter::SpillToFile() {
  file_id_ = engine_->NewFileId();
  // The intent record makes the file findable by the start-up sweep if we die
  // before committing. A process kill keeps unsynced RocksDB writes (they are
  // in the OS); after a power loss the worst case is an orphan file, never a
  // lost acknowledged object.
  meta::WriteBatch intent;
  intent.Put(meta::IntentKey(file_id_), "");
  RETURN_IF_ERROR(engine_->kv_->Write(intent, /*sync=*/false));
  storage::DataHeader header{bucket_, key_, upload_id_, part_number_, version_stamp_};
  ASSIGN_OR_RETURN(file_, store_->Create(file_id_, header));
  Status st = file_->Append(buffer_);
  buffer_.clear();
  buffer_.shrink_to_fit();
  return st;
}

const std::string& ObjectWriter::Md5() {
  if (md5_digest_.empty()) md5_digest_ = md5_->Final();
  return md5_digest_;
}

Result<ObjectRecord> ObjectWriter::Commit(
    std::function<Status(const std::optional<ObjectRecord>&)> check) {
  if (done_) return Internal("commit twice");
  if (cipher_ && !pending_.empty()) RETURN_IF_ERROR(SealPending(true));
  // An empty part, or an empty object on a store that keeps nothing inline:
  // they get data files too (the drives must describe every object).
  if (!file_ && (!upload_id_.empty() || store_->inline_max_bytes() == 0)) {
    RETURN_IF_ERROR(SpillToFile());
  }
  ObjectRecord rec;
  rec.size_bytes = size_bytes_;
  if (!options_.md5 && etag_.empty() && !delete_marker_) return Internal("commit without an ETag");
  rec.etag = options_.md5 ? HexEncode(Md5()) : etag_;
  // Masked only where it would be the MD5 (the KV tier's CRC-based ETags stay).
  if (cipher_ && options_.md5 && (sse_.mode == SseMode::kKms || sse_.mode == SseMode::kCustomer)) {
    rec.etag = HexEncode(cipher_->MaskedEtag(Md5()));
  }
  rec.sse = sse_;
  rec.headers = std::move(headers_);
  rec.checksum_algorithm = checksum_algorithm_;
  rec.checksum_value = checksum_value_;
  rec.checksum_type = checksum_type_;
  rec.tags = std::move(options_.tags);
  rec.storage_class = std::move(options_.storage_class);
  rec.pool = pool_;
  rec.owner = std::move(options_.owner);
  rec.acl = std::move(options_.acl);
  rec.version_stamp = version_stamp_;
  rec.mtime_ns = mtime_ns_;
  rec.versioned = versioned_;
  rec.lock = lock_;
  rec.delete_marker = delete_marker_;
  // A part's Last-Modified is its commit time, in its trailer too (so that
  // rebuild-index restores the part record as it was).
  if (!upload_id_.empty()) rec.mtime_ns = engine_->NowNs();
  if (file_) {
    rec.is_inline = false;
    rec.file_id = file_id_;
    // The trailer makes the data self-describing (rebuild-index reads it).
    RETURN_IF_ERROR(file_->Finish(EncodeTrailer(
        upload_id_.empty() ? TrailerKind::kObject : TrailerKind::kPart, EncodeObjectRecord(rec))));
    file_.reset();
  } else {
    rec.is_inline = true;
    rec.inline_data = std::move(buffer_);
  }
  Status st;
  // Others' commits may join this one's and wait on it: not at the bulk priority.
  ScopedFullPriority full_priority;
  if (upload_id_.empty()) {
    st = engine_->CommitVersion(bucket_, key_, rec, check, options_.bypass_governance);
  } else {
    PartRecord part{rec.size_bytes, rec.etag, rec.mtime_ns, file_id_, checksum_value_, sse_.salt};
    st = engine_->CommitPart(bucket_, key_, upload_id_, part_number_, std::move(part));
  }
  if (!st.ok()) return st;  // the destructor aborts and removes the data file
  done_ = true;
  rec.inline_data.clear();
  return rec;
}

void ObjectWriter::Abort() {
  if (done_) return;
  done_ = true;
  if (file_) {
    file_->Abort();
    file_.reset();
  }
  if (!file_id_.empty()) engine_->CollectGarbage(file_id_);
}

// ---------------------------------------------------------------- engine

ObjectEngine::ObjectEngine(std::vector<Pool> pools, meta::KvStore* kv)
    : pools_(std::move(pools)), kv_(kv) {}

ObjectEngine::~ObjectEngine() = default;

Result<std::unique_ptr<ObjectEngine>> ObjectEngine::Open(storage::DataStore* data,
                                                         meta::KvStore* kv) {
  return Open(std::vector<Pool>{{"", data}}, kv);
}

Result<std::unique_ptr<ObjectEngine>> ObjectEngine::Open(std::vector<Pool> pools,
                                                         meta::KvStore* kv) {
  if (pools.empty()) return InvalidArgument("no pool");
  for (size_t i = 0; i < pools.size(); ++i) {
    if (!pools[i].store) return InvalidArgument("pool " + pools[i].name + " has no store");
    for (size_t j = 0; j < i; ++j) {
      if (pools[j].name == pools[i].name) return InvalidArgument("pool " + pools[i].name + " twice");
    }
  }
  std::unique_ptr<ObjectEngine> engine(new ObjectEngine(std::move(pools), kv));
  ASSIGN_OR_RETURN(engine->latest_, LatestIndex::Open(kv));
  engine->kv_ = engine->latest_->store();
  RETURN_IF_ERROR(engine->Recover());
  return engine;
}

storage::DataStore* ObjectEngine::PoolStore(const std::string& name) const {
  if (name.empty()) return pools_[0].store;
  for (const Pool& p : pools_) {
    if (p.name == name) return p.store;
  }
  return nullptr;
}

int64_t ObjectEngine::NowNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t ObjectEngine::NextVersionStamp() {
  uint64_t now = static_cast<uint64_t>(NowNs());
  uint64_t last = last_stamp_.load();
  while (true) {
    uint64_t next = std::max(now, last + 1);
    if (last_stamp_.compare_exchange_weak(last, next)) return next;
  }
}

std::string ObjectEngine::NewFileId() { return HexEncode(RandomBytes(16)); }

std::mutex& ObjectEngine::KeyLock(const std::string& bucket, const std::string& key) {
  size_t h = std::hash<std::string>()(bucket) * 31 + std::hash<std::string>()(key);
  return key_locks_[h % key_locks_.size()];
}

std::mutex& ObjectEngine::UploadLock(const std::string& upload_id) {
  return upload_locks_[std::hash<std::string>()(upload_id) % upload_locks_.size()];
}

std::shared_mutex& ObjectEngine::BucketLock(const std::string& bucket) {
  return bucket_locks_[std::hash<std::string>()(bucket) % bucket_locks_.size()];
}

// Deletes leftover data files: uncommitted writes (I) and replaced versions (G).
Status ObjectEngine::Recover() {
  for (char prefix : {meta::kIntentPrefix, meta::kGarbagePrefix}) {
    std::vector<std::string> ids;
    auto it = kv_->NewIterator();
    std::string p(1, prefix);
    for (it->Seek(p); it->Valid() && it->key().substr(0, 1) == p; it->Next()) {
      ids.emplace_back(it->key().substr(1));
    }
    RETURN_IF_ERROR(it->status());
    for (const std::string& id : ids) CollectGarbage(id);
    if (!ids.empty()) {
      STRATA_LOG("recovery: removed %zu %s data files", ids.size(),
                 prefix == meta::kIntentPrefix ? "uncommitted" : "replaced");
    }
  }
  RETURN_IF_ERROR(SweepUnreferencedData());
  // Keep stamps monotonic across restarts even if the clock went backwards.
  last_stamp_ = static_cast<uint64_t>(NowNs());
  return Status::OK();
}

// The intent record of step 1 is not synced (a WAL sync per large PUT would
// cost more than the leak), so a power cut between steps 2 and 4 can leave a
// synced data file whose intent vanished. At start-up no write is in flight:
// a data file that no object, part, intent or garbage record names is such
// an orphan. A self-describing store (an erasure pool) also holds the
// markers of buckets and uploads, named by their B and M records, and tag
// records and manifests, named by their versions (DataFiles). Deletes nothing
// when a record does not decode, or when most files look unreferenced, or
// (self-describing) when no bucket record exists: lost metadata is a case for
// the operator (rebuild-index), never for a sweep.
Status ObjectEngine::SweepUnreferencedData() {
  std::vector<Result<std::vector<std::string>>> listings;
  bool any = false;
  for (const Pool& pool : pools_) {
    listings.push_back(pool.store->ListIds());
    auto& listed = listings.back();
    if (!listed.ok() && pool.store->remote()) {
      // An endpoint that is away does not keep the server from starting;
      // what it holds is swept at a later start.
      STRATA_LOG("orphan sweep: pool '%s' skipped: %s", pool.name.c_str(),
                 listed.status().ToString().c_str());
    } else if (!listed.ok() && listed.status().code() != Code::kNotImplemented) {
      return listed.status().WithContext("orphan sweep: listing data ids of pool " + pool.name);
    }
    if (listed.ok() && !listed->empty()) any = true;
  }
  if (!any) return Status::OK();
  std::set<std::string> referenced;
  size_t buckets = 0;
  auto it = kv_->NewIterator();  // a snapshot taken after the listing
  for (char prefix : {meta::kObjectPrefix, meta::kPartPrefix, meta::kIntentPrefix,
                      meta::kGarbagePrefix, meta::kBucketPrefix, meta::kMultipartPrefix}) {
    const std::string p(1, prefix);
    for (it->Seek(p); it->Valid() && it->key().substr(0, 1) == p; it->Next()) {
      if (prefix == meta::kIntentPrefix || prefix == meta::kGarbagePrefix) {
        referenced.emplace(it->key().substr(1));
      } else if (prefix == meta::kBucketPrefix) {
        ++buckets;
        referenced.insert(BucketMarkerId(std::string(it->key().substr(1))));
      } else if (prefix == meta::kMultipartPrefix) {
        std::string bucket, key, upload_id;
        if (!meta::ParseUploadKey(it->key(), &bucket, &key, &upload_id)) {
          return Corruption("orphan sweep: an upload key does not parse; skipped");
        }
        referenced.insert(UploadMarkerId(upload_id));
      } else if (prefix == meta::kObjectPrefix) {
        auto rec = DecodeObjectRecord(it->value());
        if (!rec) return Corruption("orphan sweep: an object record does not decode; skipped");
        for (std::string& id : rec->DataFiles()) referenced.insert(std::move(id));
      } else {
        auto part = DecodePartRecord(it->value());
        if (!part) return Corruption("orphan sweep: a part record does not decode; skipped");
        if (!part->file_id.empty()) referenced.insert(part->file_id);
      }
    }
    RETURN_IF_ERROR(it->status());
  }
  size_t removed = 0;
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (!listings[p].ok()) continue;
    removed += SweepPool(pools_[p], *listings[p], referenced, buckets);
  }
  if (removed > 0) {
    STRATA_LOG("recovery: removed %zu data files no record referenced (left by a power loss)",
               removed);
  }
  return Status::OK();
}

size_t ObjectEngine::SweepPool(const Pool& pool, const std::vector<std::string>& listed,
                               const std::set<std::string>& referenced, size_t buckets) {
  storage::DataStore* store = pool.store;
  const bool self_describing = store->inline_max_bytes() == 0;
  std::vector<std::string> orphans;
  for (const std::string& id : listed) {
    if (!referenced.count(id)) orphans.push_back(id);
  }
  if (orphans.empty()) return 0;
  if ((orphans.size() > 16 && orphans.size() * 2 > listed.size()) ||
      (self_describing && buckets == 0)) {
    STRATA_LOG("orphan sweep: %zu of %zu data files of pool '%s' are referenced by no record; is "
               "the metadata lost? Deleting nothing.", orphans.size(), listed.size(),
               pool.name.c_str());
    return 0;
  }
  size_t removed = 0;
  for (const std::string& id : orphans) {
    if (self_describing) {
      // Only what the sweep can name: a readable piece with a known trailer.
      // The leftovers of an id removed while a drive was offline (NotFound:
      // a tombstone covers them) are heal's; unreadable or unknown pieces
      // are left to heal and rebuild-index.
      auto ht = store->ReadHeaderAndTrailer(id);
      if (!ht.ok()) {
        if (ht.status().code() != Code::kNotFound) {
          STRATA_LOG("orphan sweep: %s is unreadable; kept (%s)", id.c_str(),
                     ht.status().ToString().c_str());
        }
        continue;
      }
      if (!DecodeTrailer(ht->second)) {
        STRATA_LOG("orphan sweep: %s has an unknown trailer; kept", id.c_str());
        continue;
      }
    }
    Status st = store->Remove(id);
    if (!st.ok() && st.code() != Code::kNotFound) {
      STRATA_LOG("orphan sweep: cannot remove %s: %s", id.c_str(), st.ToString().c_str());
      continue;
    }
    ++removed;
  }
  return removed;
}

// Garbage and intent records name ids, not pools: ids are unique across
// pools, so the id is removed wherever it is.
// A data id lives in one pool: the local pools are asked first, and the
// search stops at the pool that had it, so that a remote pool (a round trip)
// is asked only for what no local pool holds.
void ObjectEngine::CollectGarbage(const std::string& file_id) {
  auto remove = [&]() -> bool {  // false: keep the record, retried at the next start-up
    for (bool remote : {false, true}) {
      for (const Pool& pool : pools_) {
        if (pool.store->remote() != remote) continue;
        Status st = pool.store->Remove(file_id);
        if (st.ok()) return true;
        if (st.code() != Code::kNotFound) {
          STRATA_LOG("gc: cannot remove %s from pool '%s': %s", file_id.c_str(),
                     pool.name.c_str(), st.ToString().c_str());
          return false;
        }
      }
    }
    return true;
  };
  if (!remove()) return;
  meta::WriteBatch batch;
  batch.Delete(meta::IntentKey(file_id));
  batch.Delete(meta::GarbageKey(file_id));
  kv_->Write(batch, /*sync=*/false).IgnoreError();
}

Result<std::optional<std::pair<std::string, ObjectRecord>>> ObjectEngine::LatestVersion(
    const std::string& bucket, const std::string& key) {
  std::string prefix = meta::ObjectKeyPrefix(bucket, key);
  auto it = kv_->NewIterator();
  it->Seek(prefix);
  RETURN_IF_ERROR(it->status());
  if (!it->Valid() || !it->key().starts_with(prefix)) {
    return std::optional<std::pair<std::string, ObjectRecord>>();
  }
  auto rec = DecodeObjectRecord(it->value());
  if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
  return std::optional<std::pair<std::string, ObjectRecord>>(
      std::make_pair(std::string(it->key()), std::move(*rec)));
}

Status ObjectEngine::CommitVersion(
    const std::string& bucket, const std::string& key, ObjectRecord& record,
    const std::function<Status(const std::optional<ObjectRecord>&)>& check,
    bool bypass_governance) {
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  return CommitVersionLocked(bucket, key, record, check, {}, {}, bypass_governance);
}

// A versioned record (Enabled bucket) is added beside the others; a null one
// replaces the version "null" (the only version in an unversioned bucket, or
// wherever it is among the versions of a suspended one) if Object Lock lets
// it go.
Status ObjectEngine::CommitVersionLocked(
    const std::string& bucket, const std::string& key, ObjectRecord& record,
    const std::function<Status(const std::optional<ObjectRecord>&)>& check,
    meta::WriteBatch batch, const std::vector<std::string>& extra_garbage,
    bool bypass_governance) {
  ASSIGN_OR_RETURN(auto bucket_value, kv_->Get(meta::BucketKey(bucket)));
  if (!bucket_value) return NotFound(Detail::kBucket, "bucket " + bucket);
  ASSIGN_OR_RETURN(auto latest, LatestVersion(bucket, key));
  if (check) {
    std::optional<ObjectRecord> current;  // a delete marker is no object
    if (latest && !latest->second.delete_marker) current = latest->second;
    RETURN_IF_ERROR(check(current));
  }
  std::optional<std::pair<std::string, ObjectRecord>> replaced;
  if (!record.versioned && latest) {
    if (!latest->second.versioned) {
      replaced = std::move(latest);
    } else {
      ASSIGN_OR_RETURN(replaced, NullVersion(bucket, key));
    }
    if (replaced) RETURN_IF_ERROR(CheckRemovable(replaced->second, NowNs(), bypass_governance));
  }
  // Stamp and Last-Modified are fixed when the write starts (they are in the
  // data's trailer already); records built at commit time get them now.
  if (record.version_stamp == 0) record.version_stamp = NextVersionStamp();
  if (record.mtime_ns == 0) record.mtime_ns = NowNs();
  std::vector<std::string> garbage = extra_garbage;
  if (replaced) {
    batch.Delete(replaced->first);
    for (std::string& f : replaced->second.DataFiles()) garbage.push_back(std::move(f));
  }
  for (const std::string& f : garbage) batch.Put(meta::GarbageKey(f), "");
  if (!record.is_inline && !record.file_id.empty()) batch.Delete(meta::IntentKey(record.file_id));
  batch.Put(meta::ObjectVersionKey(bucket, key, record.version_stamp), EncodeObjectRecord(record));
  RETURN_IF_ERROR(kv_->Write(std::move(batch), /*sync=*/true));
  for (const std::string& f : garbage) CollectGarbage(f);
  return Status::OK();
}

bool ObjectEngine::SelfDescribing() const { return primary()->inline_max_bytes() == 0; }

Status ObjectEngine::WriteRecordPiece(const std::string& id, const storage::DataHeader& header,
                                      std::string_view trailer, bool intent) {
  if (intent) {
    meta::WriteBatch batch;
    batch.Put(meta::IntentKey(id), "");
    RETURN_IF_ERROR(kv_->Write(batch, /*sync=*/false));
  }
  Status st;
  {
    auto piece = primary()->Create(id, header);
    st = piece.ok() ? (*piece)->Finish(trailer) : piece.status();
  }  // a writer that failed aborts (removes its files) as it goes
  if (!st.ok() && intent) CollectGarbage(id);
  return st;
}

std::string ObjectEngine::BucketMarkerId(const std::string& name) {
  return Sha256Hex(name).substr(0, 32);
}

Status ObjectEngine::CreateBucket(const std::string& name, const BucketRecord& record) {
  std::unique_lock lock(BucketLock(name));
  ASSIGN_OR_RETURN(auto existing, kv_->Get(meta::BucketKey(name)));
  if (existing) return AlreadyExists("bucket " + name);
  if (SelfDescribing()) {
    // A marker on the drives lets rebuild-index restore empty buckets too. A
    // bucket made again after a delete rewrites the same id: a fresh stamp
    // tells the generations apart.
    storage::DataHeader header{name, "", "", 0, NextVersionStamp()};
    RETURN_IF_ERROR(WriteRecordPiece(BucketMarkerId(name), header,
                                     EncodeTrailer(TrailerKind::kBucket, EncodeBucketRecord(record)),
                                     /*intent=*/false));
  }
  meta::WriteBatch batch;
  batch.Put(meta::BucketKey(name), EncodeBucketRecord(record));
  Status st = kv_->Write(batch, /*sync=*/true);
  ForgetBucket(name);
  return st;
}

Status ObjectEngine::ChangeBucket(const std::string& name,
                                  const std::function<void(BucketRecord&)>& change) {
  std::unique_lock lock(BucketLock(name));
  ASSIGN_OR_RETURN(BucketRecord rec, GetBucket(name));
  change(rec);
  return WriteBucketLocked(name, rec);
}

Status ObjectEngine::SetBucketTags(const std::string& name, Tags tags) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.tags = std::move(tags); });
}

Status ObjectEngine::SetBucketPolicy(const std::string& name, std::string policy) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.policy = std::move(policy); });
}

Status ObjectEngine::SetBucketCors(const std::string& name, std::string cors) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.cors = std::move(cors); });
}

Status ObjectEngine::SetPublicAccessBlock(const std::string& name, uint8_t flags) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.public_access_block = flags; });
}

Status ObjectEngine::SetBucketAcl(const std::string& name, std::string acl) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.acl = std::move(acl); });
}

Status ObjectEngine::SetBucketOwnership(const std::string& name, Ownership ownership) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.ownership = ownership; });
}

Status ObjectEngine::SetBucketEncryption(const std::string& name, SseMode mode,
                                         std::string kms_key, bool bucket_key) {
  if (mode == SseMode::kCustomer) return InvalidArgument("SSE-C is no bucket default");
  return ChangeBucket(name, [&](BucketRecord& r) {
    r.default_sse = mode;
    r.default_kms_key = mode == SseMode::kKms ? std::move(kms_key) : std::string();
    r.default_bucket_key = mode != SseMode::kNone && bucket_key;
  });
}

Status ObjectEngine::SetBucketLifecycle(const std::string& name, std::string lifecycle,
                                        uint64_t min_transition_bytes) {
  return ChangeBucket(name, [&](BucketRecord& r) {
    r.lifecycle = std::move(lifecycle);
    r.lifecycle_min_transition_bytes = r.lifecycle.empty() ? 0 : min_transition_bytes;
  });
}

Status ObjectEngine::SetBucketNotification(const std::string& name, std::string notification) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.notification = std::move(notification); });
}

Status ObjectEngine::SetBucketLogging(const std::string& name, std::string logging) {
  return ChangeBucket(name, [&](BucketRecord& r) { r.logging = std::move(logging); });
}

Status ObjectEngine::WriteBucketLocked(const std::string& name, const BucketRecord& rec) {
  if (SelfDescribing()) {  // the marker carries the record: a newer generation of it
    storage::DataHeader header{name, "", "", 0, NextVersionStamp()};
    RETURN_IF_ERROR(WriteRecordPiece(BucketMarkerId(name), header,
                                     EncodeTrailer(TrailerKind::kBucket, EncodeBucketRecord(rec)),
                                     /*intent=*/false));
  }
  meta::WriteBatch batch;
  batch.Put(meta::BucketKey(name), EncodeBucketRecord(rec));
  Status st = kv_->Write(batch, /*sync=*/true);
  ForgetBucket(name);
  return st;
}

void ObjectEngine::ForgetBucket(const std::string& name) {
  std::lock_guard<std::mutex> lock(bucket_cache_mu_);
  ++bucket_cache_generation_;
  bucket_cache_.erase(name);
}

Result<std::shared_ptr<const BucketRecord>> ObjectEngine::BucketOf(const std::string& name) {
  constexpr size_t kMaxCachedBuckets = 100000;  // far more than a store has: then start over
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(bucket_cache_mu_);
    auto it = bucket_cache_.find(name);
    if (it != bucket_cache_.end()) return it->second;
    generation = bucket_cache_generation_;
  }
  ASSIGN_OR_RETURN(auto value, kv_->Get(meta::BucketKey(name)));
  if (!value) return NotFound(Detail::kBucket, "bucket " + name);
  auto rec = DecodeBucketRecord(*value);
  if (!rec) return Corruption("undecodable bucket record " + name);
  auto shared = std::make_shared<const BucketRecord>(std::move(*rec));
  std::lock_guard<std::mutex> lock(bucket_cache_mu_);
  if (generation == bucket_cache_generation_) {
    if (bucket_cache_.size() >= kMaxCachedBuckets) bucket_cache_.clear();
    bucket_cache_[name] = shared;
  }
  return shared;
}

Result<BucketRecord> ObjectEngine::GetBucket(const std::string& name) {
  ASSIGN_OR_RETURN(auto shared, BucketOf(name));
  return *shared;
}

Status ObjectEngine::DeleteBucket(const std::string& name) {
  std::unique_lock lock(BucketLock(name));
  ASSIGN_OR_RETURN(auto existing, kv_->Get(meta::BucketKey(name)));
  if (!existing) return NotFound(Detail::kBucket, "bucket " + name);
  auto it = kv_->NewIterator();
  std::string prefix = meta::ObjectPrefix(name);
  it->Seek(prefix);
  RETURN_IF_ERROR(it->status());
  if (it->Valid() && it->key().starts_with(prefix)) return PreconditionFailed("bucket not empty");
  // Unfinished multipart uploads go with the bucket.
  meta::WriteBatch batch;
  std::vector<std::string> garbage;
  std::string uploads = meta::UploadPrefix(name);
  std::vector<std::pair<std::string, std::string>> pending;  // key, upload id
  for (it->Seek(uploads); it->Valid() && it->key().starts_with(uploads); it->Next()) {
    std::string b, key, id;
    if (meta::ParseUploadKey(it->key(), &b, &key, &id)) pending.emplace_back(key, id);
  }
  for (const auto& [key, id] : pending) {
    ASSIGN_OR_RETURN(auto files, DropUpload(name, key, id, &batch));
    garbage.insert(garbage.end(), files.begin(), files.end());
  }
  for (const std::string& f : garbage) batch.Put(meta::GarbageKey(f), "");
  batch.Delete(meta::BucketKey(name));
  Status written = kv_->Write(batch, /*sync=*/true);
  ForgetBucket(name);
  RETURN_IF_ERROR(written);
  for (const std::string& f : garbage) CollectGarbage(f);
  if (SelfDescribing()) primary()->Remove(BucketMarkerId(name)).IgnoreError();
  return Status::OK();
}

Result<std::vector<std::pair<std::string, BucketRecord>>> ObjectEngine::ListBuckets() {
  std::vector<std::pair<std::string, BucketRecord>> out;
  auto it = kv_->NewIterator();
  std::string prefix(1, meta::kBucketPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rec = DecodeBucketRecord(it->value());
    if (!rec) return Corruption("undecodable bucket record");
    out.emplace_back(std::string(it->key().substr(1)), std::move(*rec));
  }
  RETURN_IF_ERROR(it->status());
  return out;
}

Result<std::unique_ptr<ObjectWriter>> ObjectEngine::NewWriter(const std::string& bucket,
                                                              const std::string& key,
                                                              ObjectHeaders headers,
                                                              WriteOptions options) {
  ASSIGN_OR_RETURN(BucketRecord b, GetBucket(bucket));
  if (options.lock && !b.object_lock) {
    return PreconditionFailed(Detail::kBucketState, "bucket " + bucket + " has no Object Lock");
  }
  storage::DataStore* store = PoolStore(options.pool);
  if (!store) return InvalidArgument("no pool named " + options.pool);
  auto writer = std::unique_ptr<ObjectWriter>(new ObjectWriter(this, bucket, key, std::move(headers)));
  writer->pool_ = options.pool;
  writer->store_ = store;
  writer->version_stamp_ = NextVersionStamp();
  writer->mtime_ns_ = NowNs();
  writer->versioned_ = b.versioning == Versioning::kEnabled;
  writer->lock_ = InitialLock(b, options.lock, writer->mtime_ns_);
  if (options.sse.on()) {
    if (options.data_key.size() != crypto::kDataKeyBytes) {
      return InvalidArgument("an encrypted write needs a 32-byte data key");
    }
    writer->StartEncryption(options.sse, options.data_key);
    std::fill(options.data_key.begin(), options.data_key.end(), '\0');
  }
  writer->options_ = std::move(options);
  return writer;
}

}  // namespace strata::object
