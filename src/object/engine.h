// The object engine: buckets and objects over a KvStore (metadata) and a
// FileSystem (data files). It owns the one commit protocol:
//
//   1. an intent record I<file id> is written (unsynced) before the data file
//      is created, so a crash leaves a findable orphan;
//   2. the data file is written, fdatasync'ed and its directory synced;
//   3. one atomic metadata batch (object record, removal of the intent and of
//      the replaced version, G<old file id> garbage record) is written with a
//      synced WAL; concurrent commits share one WAL sync (RocksDB write group);
//   4. only then is the write acknowledged; replaced data files are deleted
//      after the commit and their garbage record dropped.
//
// Start-up (Open) deletes the data files named by leftover I and G records.
// Objects up to the data store's inline limit are stored inside the metadata record.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "meta/kv_store.h"
#include "object/record.h"
#include "storage/data_store.h"

namespace strata::crypto {
class ChunkCipher;
}

namespace strata::object {

inline constexpr size_t kMaxKeyBytes = 1024;

class ObjectEngine;
class LatestIndex;

// A pool (tier, docs/tiers.md): a named data store. The engine's first pool
// is its primary: it holds the records kept on the drives (bucket and upload
// markers, manifests, tag / lock / ACL records) and the data of versions
// whose record names no pool (written before there were pools).
struct Pool {
  std::string name;
  storage::DataStore* store = nullptr;
};

struct WriteOptions {
  Tags tags;
  std::string storage_class;
  // The pool the data goes to ("" = the first); InvalidArgument if unknown.
  std::string pool;
  // false: no MD5 is computed (it bounds a stream to ~0.9 GB/s); the caller
  // gives the ETag with ObjectWriter::SetEtag before Commit (the KV tier: its
  // blocks are checked by their CRC32C).
  bool md5 = true;
  // Object Lock settings the request named (validated by the caller: the
  // bucket has Object Lock). The bucket's default retention applies when no
  // mode is named.
  std::optional<ObjectLock> lock;
  // Replacing a null version under GOVERNANCE retention is allowed.
  bool bypass_governance = false;
  // The new version's owner and ACL (ObjectRecord::owner / acl).
  std::string owner;
  std::string acl;
  // Server-side encryption (sse.mode != kNone): the version is stored in
  // sealed chunks under `data_key` (32 bytes: a fresh key the key service
  // wrapped into sse.wrapped_key, or the SSE-C customer's key). The engine
  // picks the salt and, for SSE-C, the key digest. ETags of SSE-KMS and
  // SSE-C versions are masked (crypto::ChunkCipher::MaskedEtag), as AWS's
  // are not their MD5; Md5() stays the plaintext's (Content-MD5 checks).
  Encryption sse;
  std::string data_key;
};

// Streams one new object version in; nothing is visible until Commit().
// Destroying an uncommitted writer aborts it (its data file is removed).
class ObjectWriter {
 public:
  ~ObjectWriter();
  Status Append(std::string_view data);
  // Append without a copy for the MD5 helper, for a body read in pieces:
  // Buffer(n) is memory for at least n bytes to read the next piece into;
  // AppendBuffer(len) appends its first len bytes. The buffer is the writer's
  // from then on (hashed on the helper thread past the first MiB, then
  // handed out again by a later Buffer): the caller must not touch it after.
  char* Buffer(size_t n);
  Status AppendBuffer(size_t len);
  uint64_t size_bytes() const { return size_bytes_; }
  // MD5 of everything appended (raw 16 bytes); valid after the last Append.
  const std::string& Md5();
  // The ETag (hex, no quotes) when WriteOptions::md5 is false.
  void SetEtag(std::string etag) { etag_ = std::move(etag); }
  // Stores an additional checksum with the version (computed by the caller).
  void SetChecksum(std::string algorithm, std::string value, std::string type);
  // Makes the object durable and visible. `check` runs under the key lock just
  // before the metadata commit with the current version (or nullopt): it can
  // refuse the write (conditional PUT).
  Result<ObjectRecord> Commit(
      std::function<Status(const std::optional<ObjectRecord>&)> check = nullptr);
  void Abort();

 private:
  friend class ObjectEngine;
  ObjectWriter(ObjectEngine* engine, std::string bucket, std::string key, ObjectHeaders headers);
  Status SpillToFile();
  // Encryption: buffers plaintext into chunks, sealing each full one.
  Status AppendPlaintext(std::string_view data);
  // Appends stored bytes (sealed chunks when encrypted): inline buffer or file.
  Status Store(std::string_view data);
  // Encryption: the cipher for this writer's data file, with a fresh salt.
  void StartEncryption(Encryption sse, std::string_view data_key);
  Status SealPending(bool last);

  ObjectEngine* engine_;
  std::string bucket_, key_;
  ObjectHeaders headers_;
  WriteOptions options_;
  std::string checksum_algorithm_, checksum_value_, checksum_type_;
  // Part mode (UploadPart): the part goes to its own file and a part record.
  std::string upload_id_;
  uint32_t part_number_ = 0;
  uint64_t size_bytes_ = 0;
  std::string buffer_;  // inline data until it exceeds the inline limit
  std::string pool_;    // the pool written to (its name, as the record keeps it)
  storage::DataStore* store_ = nullptr;  // its store
  std::string file_id_;
  std::unique_ptr<storage::DataWriter> file_;
  uint64_t version_stamp_ = 0;  // assigned when the write starts
  int64_t mtime_ns_ = 0;
  bool versioned_ = false;  // the bucket's versioning was Enabled when the write started
  ObjectLock lock_;         // the new version's lock (request or bucket default)
  bool delete_marker_ = false;  // ObjectEngine::AddDeleteMarker's writer
  struct Md5State;
  struct Piece {  // a body buffer (Buffer / AppendBuffer), not zero-filled
    std::unique_ptr<char[]> data;
    size_t capacity = 0;
    size_t size = 0;
  };
  std::unique_ptr<Md5State> md5_;
  Piece piece_;  // the caller's, between Buffer and AppendBuffer
  std::string md5_digest_;
  std::string etag_;  // given by the caller (WriteOptions::md5 false)
  bool done_ = false;
  // Encryption: the version's settings (with this file's salt), the cipher,
  // the plaintext chunk not sealed yet (the last is sealed at Commit, so that
  // it carries the last-chunk flag) and the chunk index.
  Encryption sse_;
  std::unique_ptr<crypto::ChunkCipher> cipher_;
  std::string pending_, sealed_;
  uint64_t chunk_index_ = 0;
};

// Reads one object version; its data files stay readable even if the version
// is replaced while reading (an open file outlives its unlink).
class ObjectReader {
 public:
  ~ObjectReader();
  const ObjectRecord& record() const { return record_; }
  // An encrypted version (record().sse.on()) reads only after this: the data
  // key (unwrapped by the key service, or the SSE-C customer's key, checked
  // against its digest: PermissionDenied, kSseKey, if it is not that key).
  // Without it ReadAt fails with PreconditionFailed (kSseKey).
  Status Unlock(std::string_view data_key);
  // Reads plaintext; an encrypted chunk that does not authenticate (altered,
  // swapped, cut) fails with Corruption, nothing of it returned.
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const;
  // A descriptor holding the object's bytes at offsets [0, size), unverified
  // (storage::DataReader::UnverifiedFd); -1 for inline, multipart and
  // erasure-coded objects.
  int UnverifiedFd() const;
  // Where stored bytes of the object lie as they are sent: in file `fd` at
  // [offset, offset + length). fd is -1 where they do not (inline, encrypted
  // and erasure-coded versions, remote tiers).
  struct FileSpan {
    int fd = -1;
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  // Checks the stored checksums of the object's bytes from `offset` on, at
  // least min(n, the end of the part holding `offset`) of them, and says
  // where they lie so that they can be sent with sendfile (zero-copy) by a
  // caller that sends them right away. `length` may run past n to the end
  // of the last block checked, never past the part. The blocks are read into
  // `scratch` (storage::DataReader::Check). Corruption as ReadAt.
  Result<FileSpan> CheckedSpan(uint64_t offset, uint64_t n, char* scratch,
                               size_t scratch_bytes) const;
  // Another reader of the same version, for a second thread: its own data
  // files (opened again), buffers and ciphers (unlocked if this one is).
  // NotFound if the version's data went away meanwhile.
  Result<std::unique_ptr<ObjectReader>> Fork() const;

 private:
  friend class ObjectEngine;
  // Plaintext [offset, offset + n) of data file `i` (plaintext size `size`),
  // at most kMaxSealedRead bytes of it per call.
  Result<size_t> ReadSealed(size_t i, uint64_t size, uint64_t offset, char* buf, size_t n) const;
  ObjectRecord record_;
  std::string bucket_, key_;
  mutable std::vector<std::unique_ptr<storage::DataReader>> files_;  // one, or one per part
  storage::DataStore* store_ = nullptr;  // where files_ were opened (Fork)
  std::vector<std::string> file_ids_;    // and as what
  std::vector<uint64_t> file_sizes_;
  std::vector<uint64_t> part_starts_;                     // offset of each part
  mutable std::vector<std::unique_ptr<crypto::ChunkCipher>> ciphers_;  // per data file, once unlocked
  // Sealed bytes read from a data file (inline data is opened in place) and
  // one chunk of plaintext for partial chunks; not zero-filled.
  mutable std::unique_ptr<char[]> sealed_buf_, plain_buf_;
  mutable size_t sealed_capacity_ = 0;
};

// Multipart uploads.
struct UploadInfo {
  std::string key;
  std::string upload_id;
  UploadRecord record;
};

struct PartInfo {
  uint32_t part_number = 0;
  PartRecord record;
};

struct CompletePart {
  uint32_t part_number = 0;
  std::string etag;  // hex, without quotes
};

// Why CompleteUpload refused the part list (with Status InvalidArgument).
enum class CompleteProblem { kNone, kInvalidPart, kInvalidPartOrder, kEntityTooSmall };

struct ListUploadsParams {
  std::string prefix;
  std::string delimiter;
  std::string key_marker;
  std::string upload_id_marker;
  int max_uploads = 1000;
};

struct ListUploadsResult {
  std::vector<UploadInfo> uploads;
  std::vector<std::string> common_prefixes;
  bool is_truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

inline constexpr uint64_t kMinPartBytes = 5ull << 20;
inline constexpr uint32_t kMaxParts = 10000;

// Versions (object/versions.cc). A version is named by an optional
// VersionSelector (record.h): nullopt = the latest (which may be a delete
// marker), {null} = the version "null", else the version with that stamp.
using Version = std::optional<VersionSelector>;

struct DeleteOptions {
  // May remove a version under GOVERNANCE retention (x-amz-bypass-governance-
  // retention from an identity allowed s3:BypassGovernanceRetention).
  bool bypass_governance = false;
  // Lifecycle: act only if the version is still the one the scanner saw —
  // the version deleted (or, for a marker, the latest) must have this stamp;
  // PreconditionFailed otherwise (a write came in between).
  std::optional<uint64_t> only_if_stamp;
  // Lifecycle: run under the key lock just before the delete (or the marker)
  // with the version and every version of the key as they are now, newest
  // first; an error cancels the delete (the rule no longer applies to it).
  std::function<Status(const ObjectRecord& version, const std::vector<ObjectRecord>& versions)>
      keep;
};

// What a DELETE did, for its response headers.
struct DeleteOutcome {
  bool delete_marker = false;  // a marker was created, or the version removed was one
  std::string version_id;      // the marker created or the version removed; "" if none
};

enum class RestoreRequestOutcome { kStarted, kInProgress, kExtended };

// What one pool holds (ObjectEngine::Usage): versions (delete markers not
// counted) and their bytes per storage class ("" = STANDARD), and restored
// copies kept in it.
struct PoolUsage {
  std::string pool;  // as ObjectEngine::pools() names it
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> by_class;  // objects, bytes
  uint64_t restored_copies = 0, restored_bytes = 0;
};
struct EngineUsage {
  std::vector<PoolUsage> pools;  // in pools() order
  uint64_t restores_ongoing = 0;
  uint64_t writes_in_flight = 0;  // data files written and not committed yet (intent records)
};

struct ListVersionsParams {
  std::string prefix;
  std::string delimiter;
  std::string key_marker;         // resume after this key ...
  std::string version_id_marker;  // ... or after this version of it ("null" allowed)
  int max_keys = 1000;
};

struct VersionEntry {
  std::string key;
  ObjectRecord record;  // inline_data cleared; record.delete_marker for markers
  bool is_latest = false;
};

struct ListVersionsResult {
  std::vector<VersionEntry> versions;  // versions and delete markers, in order
  std::vector<std::string> common_prefixes;
  bool is_truncated = false;
  std::string next_key_marker;
  std::string next_version_id_marker;  // "" after a common prefix
};

struct ListParams {
  std::string prefix;
  std::string delimiter;
  std::string start_after;  // exclusive; a key or a common prefix
  int max_keys = 1000;
};

struct ListEntry {
  std::string key;
  ObjectRecord record;  // inline_data cleared
};

struct ListResult {
  std::vector<ListEntry> objects;
  std::vector<std::string> common_prefixes;
  bool is_truncated = false;
  std::string last_emitted;  // key or prefix to resume after
};

class ObjectEngine {
 public:
  // `root` is the data directory; data files live under root/objects.
  // Sweeps the data left by interrupted writes (I and G records) before returning.
  static Result<std::unique_ptr<ObjectEngine>> Open(storage::DataStore* data, meta::KvStore* kv);
  // Several pools (names unique; the first is the primary, see Pool).
  static Result<std::unique_ptr<ObjectEngine>> Open(std::vector<Pool> pools, meta::KvStore* kv);
  ~ObjectEngine();
  const std::vector<Pool>& pools() const { return pools_; }
  // The store of a pool as a record names it ("" = the first); nullptr if
  // no pool of that name is configured.
  storage::DataStore* PoolStore(const std::string& name) const;

  Status CreateBucket(const std::string& name, const BucketRecord& record);
  Result<BucketRecord> GetBucket(const std::string& name);
  // The same without a copy (the request path: policy, CORS and ACL
  // documents can be kilobytes). The record never changes once returned.
  Result<std::shared_ptr<const BucketRecord>> BucketOf(const std::string& name);
  // Replaces the bucket's tag set (empty: none). NotFound if no such bucket.
  Status SetBucketTags(const std::string& name, Tags tags);
  // Replaces the bucket policy / CORS configuration ("" removes it).
  // NotFound if no such bucket.
  Status SetBucketPolicy(const std::string& name, std::string policy);
  Status SetBucketCors(const std::string& name, std::string cors);
  Status SetPublicAccessBlock(const std::string& name, uint8_t flags);
  Status SetBucketAcl(const std::string& name, std::string acl);
  Status SetBucketOwnership(const std::string& name, Ownership ownership);
  // PutBucketEncryption (mode kNone: DeleteBucketEncryption).
  Status SetBucketEncryption(const std::string& name, SseMode mode, std::string kms_key,
                             bool bucket_key);
  // PutBucketLifecycleConfiguration (the document as tier/lifecycle.h renders
  // it; "" removes it).
  Status SetBucketLifecycle(const std::string& name, std::string lifecycle,
                            uint64_t min_transition_bytes = 0);
  // PutBucketNotificationConfiguration (the document as notify/config.h
  // renders it; "" removes it).
  Status SetBucketNotification(const std::string& name, std::string notification);
  // PutBucketLogging (the document as s3/access_log.h renders it; "" turns it off).
  Status SetBucketLogging(const std::string& name, std::string logging);
  Status DeleteBucket(const std::string& name);  // PreconditionFailed if not empty
  Result<std::vector<std::pair<std::string, BucketRecord>>> ListBuckets();

  // NotFound if the bucket does not exist.
  Result<std::unique_ptr<ObjectWriter>> NewWriter(const std::string& bucket,
                                                  const std::string& key, ObjectHeaders headers,
                                                  WriteOptions options = {});
  // The latest version; NotFound (kKey) if there is none or it is a delete marker.
  Result<ObjectRecord> HeadObject(const std::string& bucket, const std::string& key);
  Result<std::unique_ptr<ObjectReader>> OpenObject(const std::string& bucket,
                                                   const std::string& key);
  // A version, delete markers included (record().delete_marker: no data).
  // NotFound: kBucket, kKey (no versions at all / latest asked) or kVersion.
  Result<ObjectRecord> HeadVersion(const std::string& bucket, const std::string& key,
                                   const Version& version);
  Result<std::unique_ptr<ObjectReader>> OpenVersion(const std::string& bucket,
                                                    const std::string& key,
                                                    const Version& version);
  // OK if the key does not exist (S3 semantics); NotFound if the bucket does not.
  // The latest version goes (unversioned buckets) or a delete marker is added.
  Status DeleteObject(const std::string& bucket, const std::string& key);
  // S3 DeleteObject: without a version, a delete marker in an Enabled bucket,
  // the null version replaced by a null marker in a Suspended one, the
  // object removed in an unversioned one; with one, exactly that version
  // (OK if it does not exist). PermissionDenied (kLocked) if Object Lock
  // protects the version (object/lock.h).
  Result<DeleteOutcome> DeleteVersion(const std::string& bucket, const std::string& key,
                                      const Version& version, DeleteOptions options = {});
  // Latest versions only; keys whose latest is a delete marker are left out.
  Result<ListResult> ListObjects(const std::string& bucket, const ListParams& params);
  Result<ListVersionsResult> ListVersions(const std::string& bucket,
                                          const ListVersionsParams& params);
  // Replaces the owner and ACL of a version (NotFound if none; a delete
  // marker: InvalidArgument), durable on the drives as its tags are.
  Status SetObjectAcl(const std::string& bucket, const std::string& key, const Version& version,
                      std::string owner, std::string acl);
  // Replaces the tags of a version (NotFound if none; MethodNotAllowed-worthy
  // delete markers: InvalidArgument).
  Status SetTags(const std::string& bucket, const std::string& key, Tags tags,
                 const Version& version = std::nullopt);
  // Object Lock on a version (object/lock.h decides). PreconditionFailed
  // (kBucketState) if the bucket has no Object Lock; PermissionDenied
  // (kLocked) if the change is not allowed. mode kNone removes the retention.
  Status SetRetention(const std::string& bucket, const std::string& key, const Version& version,
                      LockMode mode, int64_t until_ns, bool bypass_governance);
  Status SetLegalHold(const std::string& bucket, const std::string& key, const Version& version,
                      bool on);
  // PutBucketVersioning. PreconditionFailed (kBucketState): suspending a
  // bucket with Object Lock.
  Status SetBucketVersioning(const std::string& name, Versioning state);
  // PutObjectLockConfiguration: turns Object Lock on (PreconditionFailed,
  // kBucketState, unless versioning is Enabled) and sets the default rule.
  Status SetObjectLockConfiguration(const std::string& name, const DefaultRetention& rule);

  // Multipart (object/multipart.cc). NotFound means no such upload (or bucket).
  // record.sse names the parts' encryption; SSE-C: `customer_key` is the
  // key the parts must repeat (only its salted digest is kept).
  Result<std::string> CreateUpload(const std::string& bucket, const std::string& key,
                                   UploadRecord record, std::string_view customer_key = {});
  Result<UploadRecord> GetUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id);
  // A writer whose Commit() stores part `part_number` (replacing an earlier one).
  // An encrypted upload's parts need its data key (`data_key`; SSE-C: checked
  // against the upload's key digest, PermissionDenied kSseKey if another;
  // missing: PreconditionFailed kSseKey).
  Result<std::unique_ptr<ObjectWriter>> NewPartWriter(const std::string& bucket,
                                                      const std::string& key,
                                                      const std::string& upload_id,
                                                      uint32_t part_number,
                                                      std::string_view data_key = {});
  Result<std::vector<PartInfo>> ListParts(const std::string& upload_id);
  // Assembles the object from the parts without copying data. `check` as in
  // ObjectWriter::Commit. On a bad part list returns InvalidArgument and sets *problem.
  Result<ObjectRecord> CompleteUpload(
      const std::string& bucket, const std::string& key, const std::string& upload_id,
      const std::vector<CompletePart>& parts, CompleteProblem* problem,
      const std::function<Status(const std::optional<ObjectRecord>&)>& check = nullptr,
      const std::function<Result<std::string>(const ObjectRecord&)>& object_checksum = nullptr);
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id);
  Result<ListUploadsResult> ListUploads(const std::string& bucket,
                                        const ListUploadsParams& params);

  // Tiers (docs/tiers.md): moves the data of version `stamp` of `key` into
  // pool `to_pool` and names it `storage_class`, nothing else of it changed
  // (key, version id, ETag, checksums, metadata, tags, lock, ACL). The
  // stored bytes (sealed chunks as they are) are copied into new files of the
  // destination, synced, the record switched in one synced batch, then the
  // old files removed; a crash at any point leaves one readable copy, and
  // the start-up sweep removes the other. Aborted (Code::kAborted) if the
  // version changed while its data was copied (the caller retries later);
  // NotFound if it no longer exists. `keep` runs under the key lock just
  // before the switch with the current record: an error from it cancels the
  // move (a lifecycle rule that no longer applies).
  Status MoveVersion(const std::string& bucket, const std::string& key, uint64_t stamp,
                     const std::string& to_pool, const std::string& storage_class,
                     const std::function<Status(const ObjectRecord&)>& keep = nullptr);

  // RestoreObject (docs/tiers.md). RequestRestore marks version `stamp` as
  // being restored for `days` (kStarted), or, when a copy exists, extends it
  // to `extend_to_ns` (kExtended); kInProgress if a restore is already under
  // way. CompleteRestore then copies the data into `to_pool` and records the
  // copy (readable until expiry_of(days); OpenVersion reads it); ExpireRestore
  // drops the copy. All three go through the commit protocol as MoveVersion.
  Result<RestoreRequestOutcome> RequestRestore(const std::string& bucket, const std::string& key,
                                               uint64_t stamp, uint32_t days,
                                               int64_t extend_to_ns);
  Status CompleteRestore(const std::string& bucket, const std::string& key, uint64_t stamp,
                         const std::string& to_pool,
                         const std::function<int64_t(uint32_t days)>& expiry_of);
  Status ExpireRestore(const std::string& bucket, const std::string& key, uint64_t stamp);
  // Per pool, what the metadata says is in it: a scan of every version
  // record (for `strata admin tiers`; not on a request path).
  Result<EngineUsage> Usage();
  // The record of version `stamp`, the null version included (HeadVersion
  // names that one "null" only). NotFound (kVersion) if none.
  Result<ObjectRecord> RecordOfStamp(const std::string& bucket, const std::string& key,
                                     uint64_t stamp);

  int64_t NowNs() const;
  // The data id of a bucket's marker on a self-describing store.
  static std::string BucketMarkerId(const std::string& name);

 private:
  friend class ObjectWriter;
  ObjectEngine(std::vector<Pool> pools, meta::KvStore* kv);
  // The primary pool's store (records on the drives).
  storage::DataStore* primary() const { return pools_[0].store; }
  Status Recover();
  Status SweepUnreferencedData();
  // Pools (object/move.cc): version `stamp`'s record (encoded, decoded).
  Result<std::pair<std::string, ObjectRecord>> ReadVersion(const std::string& bucket,
                                                           const std::string& key, uint64_t stamp);
  // Copies the stored bytes of `rec`'s data (its file, or its parts) from
  // one store into new files of another (each with an intent record); the
  // new ids, in order. Nothing is left behind on failure.
  Result<std::vector<std::string>> CopyData(const std::string& bucket, const std::string& key,
                                            const ObjectRecord& rec, storage::DataStore* from,
                                            storage::DataStore* to, const std::string& to_pool);
  // Under the bucket and key locks: if the record is still `before` (and
  // `keep` agrees), puts `after` with the intents of `new_files` dropped and
  // `old_files` made garbage, in one synced batch; then collects them. On
  // any refusal the new files are collected instead.
  Status SwitchRecord(const std::string& bucket, const std::string& key,
                      const std::string& version_key, const std::string& before,
                      const ObjectRecord& after, const std::vector<std::string>& new_files,
                      const std::vector<std::string>& old_files,
                      const std::function<Status(const ObjectRecord&)>& keep);
  // One pool's part of it: removes its orphans among `listed`; the count.
  size_t SweepPool(const Pool& pool, const std::vector<std::string>& listed,
                   const std::set<std::string>& referenced, size_t buckets);
  std::string NewFileId();
  uint64_t NextVersionStamp();
  Result<std::optional<std::pair<std::string, ObjectRecord>>> LatestVersion(
      const std::string& bucket, const std::string& key);
  // The version named (nullopt: latest), with its metadata key; nullopt if none.
  Result<std::optional<std::pair<std::string, ObjectRecord>>> FindVersion(
      const std::string& bucket, const std::string& key, const Version& version);
  // The null version of a key, wherever it is among the versions.
  Result<std::optional<std::pair<std::string, ObjectRecord>>> NullVersion(
      const std::string& bucket, const std::string& key);
  // Writes the bucket record (and its marker on self-describing stores);
  // the bucket lock is held exclusively.
  Status WriteBucketLocked(const std::string& name, const BucketRecord& rec);
  // Read-modify-write of a bucket record under its lock.
  Status ChangeBucket(const std::string& name, const std::function<void(BucketRecord&)>& change);
  // A version's tags or ACL (`what`, for the error of a delete marker):
  // `change` edits the record, `piece` gives the id and trailer of the
  // setting's record piece on self-describing stores (written first).
  Status RewriteVersion(
      const std::string& bucket, const std::string& key, const Version& version,
      std::string_view what, const std::function<void(ObjectRecord&)>& change,
      const std::function<std::pair<std::string, std::string>(ObjectRecord&)>& piece);
  // Under the key lock: the version's record rewritten after `change`, with
  // the lock record on the drives first (self-describing stores).
  Status UpdateLock(const std::string& bucket, const std::string& key, const Version& version,
                    const std::function<Status(const BucketRecord&, ObjectLock&)>& change);
  // Commits a delete marker as the newest version (through a writer, so that
  // it is a self-describing piece where the store needs one).
  Result<ObjectRecord> AddDeleteMarker(const std::string& bucket, const std::string& key,
                                       bool bypass_governance,
                                       std::optional<uint64_t> only_if_latest = std::nullopt,
                                       const DeleteOptions* lifecycle = nullptr);
  // Every version of a key, newest first (lifecycle re-checks; the key lock held).
  Result<std::vector<ObjectRecord>> KeyVersions(const std::string& bucket, const std::string& key);
  // Under the bucket (shared) and key locks: replaces the current version with
  // `record` in one synced batch together with `extra`.
  Status CommitVersion(const std::string& bucket, const std::string& key, ObjectRecord& record,
                       const std::function<Status(const std::optional<ObjectRecord>&)>& check,
                       bool bypass_governance);
  // The same with the locks already held; `extra` joins the batch and
  // `extra_garbage` files are collected after the commit.
  Status CommitVersionLocked(const std::string& bucket, const std::string& key,
                             ObjectRecord& record,
                             const std::function<Status(const std::optional<ObjectRecord>&)>& check,
                             meta::WriteBatch extra, const std::vector<std::string>& extra_garbage,
                             bool bypass_governance = false);
  Status CommitPart(const std::string& bucket, const std::string& key,
                    const std::string& upload_id, uint32_t part_number, PartRecord part);
  // Deletes the upload and part records into `batch`; returns the part files.
  Result<std::vector<std::string>> DropUpload(const std::string& bucket, const std::string& key,
                                              const std::string& upload_id,
                                              meta::WriteBatch* batch);
  void CollectGarbage(const std::string& file_id);
  std::mutex& KeyLock(const std::string& bucket, const std::string& key);
  std::shared_mutex& BucketLock(const std::string& bucket);
  std::mutex& UploadLock(const std::string& upload_id);
  // A store that keeps nothing inline is self-describing: bucket markers,
  // upload markers, multipart manifests and tag records are written to it so
  // rebuild-index can recover all (docs/formats/metadata-records.md).
  bool SelfDescribing() const;
  // Writes one such record (no bytes, only its trailer) as data `id`. With
  // `intent`, an I record makes it findable by the start-up sweep until the
  // caller's batch deletes it (new ids only: the sweep removes the id).
  Status WriteRecordPiece(const std::string& id, const storage::DataHeader& header,
                          std::string_view trailer, bool intent);

  std::vector<Pool> pools_;
  // Every metadata access goes through the latest-version index
  // (object/latest_index.h), which wraps the store Open was given.
  std::unique_ptr<LatestIndex> latest_;
  meta::KvStore* kv_;
  std::atomic<uint64_t> last_stamp_{0};
  std::array<std::mutex, 256> key_locks_;
  std::array<std::shared_mutex, 64> bucket_locks_;
  std::array<std::mutex, 64> upload_locks_;  // lock order: bucket, key, upload

  // Decoded bucket records (GetBucket), so a request does not read and decode
  // its bucket's record — policy, CORS and ACL documents included — from the
  // metadata each time. Every write of a bucket record goes through this
  // engine (CreateBucket, WriteBucketLocked, DeleteBucket), which forgets the
  // entry after writing; the generation keeps a read that raced a write out.
  void ForgetBucket(const std::string& name);
  std::mutex bucket_cache_mu_;
  uint64_t bucket_cache_generation_ = 0;  // guarded by bucket_cache_mu_
  std::unordered_map<std::string, std::shared_ptr<const BucketRecord>> bucket_cache_;
};

}  // namespace strata::object
