// The erasure writer: buffers one stripe (k x B bytes), encodes its parity,
// appends each shard's block + CRC to DRIVE/shards/xx/<id>.part, and on
// Finish appends the footer, syncs and publishes every shard (rename to
// <id>, directory sync). Drives that fail drop only their shard while the
// write quorum holds (docs/formats/shard-file.md, "Writing").
#include <cstring>

#include "common/log.h"
#include "io/atomic_file.h"
#include "storage/erasure_internal.h"

namespace strata::storage::internal {
namespace {

class ErasureWriter : public DataWriter {
 public:
  ErasureWriter(ErasureStoreImpl* store, std::string id, const DataHeader& header);
  ~ErasureWriter() override {
    if (!finished_) Abort();
  }
  Status Init();
  Status Append(std::string_view data) override;
  Status Finish(std::string_view trailer) override;
  void Abort() override;

 private:
  struct Shard {
    std::unique_ptr<io::WritableFile> file;
    std::string temp;
    std::string final_path;
    bool active = false;
    bool renamed = false;
    Status error;
  };
  void Fail(int i, const Status& st);
  int ActiveCount() const;
  Status CheckQuorum();
  Status FlushStripe(size_t bytes);
  // Appends the footer to every active shard; returns those it reached.
  std::vector<int> AppendFooters(std::string_view trailer);
  // Sync + close every shard in `active` (no lock: nobody opens .part files).
  void SyncAll(const std::vector<int>& active);
  // Under the exclusive id lock: rename + directory sync of every shard in
  // `active`, then (quorum reached) removes the <id> a drive the write
  // missed may hold from an older generation.
  Status Publish(const std::vector<int>& active);
  void RemoveStale();
  void RemoveAll();

  ErasureStoreImpl* store_;
  std::string id_;
  DataHeader header_;
  int k_, m_, n_;
  size_t block_;
  std::vector<Shard> shards_;
  std::vector<uint8_t> stripe_;  // k * block bytes of data
  std::vector<std::vector<uint8_t>> parity_;
  size_t fill_ = 0;
  uint64_t size_ = 0;
  Status failed_;  // sticky
  bool finished_ = false;
};

ErasureWriter::ErasureWriter(ErasureStoreImpl* store, std::string id, const DataHeader& header)
    : store_(store),
      id_(std::move(id)),
      header_(header),
      k_(store->k()),
      m_(store->m()),
      n_(store->drive_count()),
      block_(store->block_bytes()),
      shards_(n_),
      stripe_(k_ * block_),
      parity_(m_, std::vector<uint8_t>(block_)) {}

Status ErasureWriter::Init() {
  ShardHeader h;
  h.id = id_;
  h.k = k_;
  h.m = m_;
  h.block_bytes = static_cast<uint32_t>(block_);
  h.data = header_;
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    sh.final_path = store_->ShardPath(i, id_);
    sh.temp = sh.final_path + kPartSuffix;
    const Drive& d = store_->drive(i);
    if (!d.online()) {
      sh.error = Unavailable(d.path + ": drive " + DriveStateName(d.state));
      continue;
    }
    auto file = store_->NewShardFile(i, sh.temp);
    if (!file.ok()) {
      sh.error = file.status().WithContext(d.path);
      continue;
    }
    sh.file = std::move(file).value();
    sh.active = true;
    h.shard_index = i;
    Status st = sh.file->Append(EncodeShardHeader(h));
    if (!st.ok()) Fail(i, st);
  }
  return CheckQuorum();
}

void ErasureWriter::Fail(int i, const Status& st) {
  Shard& sh = shards_[i];
  if (!sh.active) return;
  sh.active = false;
  store_->CountWriteError(i);
  sh.error = st.WithContext(store_->drive(i).path);
  if (sh.file) sh.file->Close().IgnoreError();
  sh.file.reset();
  store_->fs()->RemoveFile(sh.temp).IgnoreError();
  if (sh.renamed) store_->fs()->RemoveFile(sh.final_path).IgnoreError();
}

int ErasureWriter::ActiveCount() const {
  int n = 0;
  for (const Shard& sh : shards_) n += sh.active ? 1 : 0;
  return n;
}

Status ErasureWriter::CheckQuorum() {
  if (!failed_.ok()) return failed_;
  int active = ActiveCount();
  if (active >= store_->quorum()) return Status::OK();
  bool full = false;
  std::string detail;
  for (const Shard& sh : shards_) {
    if (sh.active || sh.error.ok()) continue;
    if (sh.error.code() == Code::kResourceExhausted) full = true;
    detail += "; " + sh.error.ToString();
  }
  std::string msg = "write quorum not reached for " + id_ + ": " + std::to_string(active) +
                    " of " + std::to_string(n_) + " shards writable, need " +
                    std::to_string(store_->quorum()) + detail;
  // Disk full on a drive is the actionable cause (507-style); otherwise the
  // pool is short of working drives (503).
  failed_ = full ? ResourceExhausted(msg) : Unavailable(msg);
  RemoveAll();
  return failed_;
}

Status ErasureWriter::Append(std::string_view data) {
  if (finished_) return Internal("append after finish");
  if (!failed_.ok()) return failed_;
  const size_t stripe_bytes = stripe_.size();
  while (!data.empty()) {
    size_t take = std::min(data.size(), stripe_bytes - fill_);
    std::memcpy(stripe_.data() + fill_, data.data(), take);
    fill_ += take;
    size_ += take;
    data.remove_prefix(take);
    if (fill_ == stripe_bytes) RETURN_IF_ERROR(FlushStripe(fill_));
  }
  return Status::OK();
}

Status ErasureWriter::FlushStripe(size_t bytes) {
  const size_t len = std::min(block_, (bytes + k_ - 1) / k_);
  STRATA_CHECK(bytes > 0 && bytes <= stripe_.size() && len * k_ >= bytes,
               "stripe of " + std::to_string(bytes) + " bytes, " + std::to_string(k_) + " x " +
                   std::to_string(block_) + " buffered");
  std::memset(stripe_.data() + bytes, 0, k_ * len - bytes);  // pad the last stripe
  std::vector<const uint8_t*> data(k_);
  std::vector<uint8_t*> parity(m_);
  for (int i = 0; i < k_; ++i) data[i] = stripe_.data() + i * len;
  for (int j = 0; j < m_; ++j) parity[j] = parity_[j].data();
  if (m_ > 0) store_->code().Encode(len, data.data(), parity.data());
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    if (!sh.active) continue;
    const uint8_t* block = i < k_ ? data[i] : parity[i - k_];
    std::string crc;
    PutFixed32LE(&crc, Crc32c(block, len));
    Status st = sh.file->Append(std::string_view(reinterpret_cast<const char*>(block), len));
    if (st.ok()) st = sh.file->Append(crc);
    if (!st.ok()) Fail(i, st);
  }
  fill_ = 0;
  return CheckQuorum();
}

std::vector<int> ErasureWriter::AppendFooters(std::string_view trailer) {
  const std::string footer = EncodeShardFooter(size_, trailer);
  std::vector<int> active;
  for (int i = 0; i < n_; ++i) {
    if (!shards_[i].active) continue;
    Status st = shards_[i].file->Append(footer);
    if (!st.ok()) {
      Fail(i, st);
    } else {
      active.push_back(i);
    }
  }
  return active;
}

void ErasureWriter::SyncAll(const std::vector<int>& active) {
  // Drives are independent: overlap their latencies.
  std::vector<Status> results(n_);
  ForEachParallel(active, [&](int i) { results[i] = io::SyncAndClose(shards_[i].file.get()); });
  for (int i : active) {
    shards_[i].file.reset();
    if (!results[i].ok()) Fail(i, results[i]);
  }
}

Status ErasureWriter::Publish(const std::vector<int>& active) {
  std::unique_lock lock(store_->IdLock(id_));  // exclusive: see IdLock
  std::vector<Status> results(n_);
  io::FileSystem* fs = store_->fs();
  ForEachParallel(active, [&](int i) {
    Shard& sh = shards_[i];
    if (sh.active) results[i] = io::PublishFile(fs, sh.temp, sh.final_path, &sh.renamed);
  });
  for (int i : active) {
    if (!results[i].ok()) Fail(i, results[i]);
  }
  RETURN_IF_ERROR(CheckQuorum());  // below quorum: every shard removed, under the lock
  RemoveStale();
  return Status::OK();
}

void ErasureWriter::RemoveStale() {
  for (int i = 0; i < n_; ++i) {
    if (shards_[i].active || !store_->drive(i).online()) continue;
    store_->fs()->RemoveFile(shards_[i].final_path).IgnoreError();  // NotFound: nothing stale
  }
}

Status ErasureWriter::Finish(std::string_view trailer) {
  if (finished_) return Internal("finish twice");
  if (!failed_.ok()) return failed_;
  if (trailer.size() > kTrailerMax) return InvalidArgument("trailer too large");
  if (fill_ > 0) RETURN_IF_ERROR(FlushStripe(fill_));
  std::vector<int> active = AppendFooters(trailer);
  RETURN_IF_ERROR(CheckQuorum());
  SyncAll(active);
  RETURN_IF_ERROR(CheckQuorum());
  RETURN_IF_ERROR(Publish(active));
  finished_ = true;
  int written = ActiveCount();
  if (written < n_) {
    STRATA_LOG("data %s written with %d of %d shards; queued for heal", id_.c_str(), written, n_);
    store_->ReportHeal(id_);  // restore full redundancy as soon as possible (no lock held)
  }
  return Status::OK();
}

void ErasureWriter::RemoveAll() {
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    if (sh.file) sh.file->Close().IgnoreError();
    sh.file.reset();
    sh.active = false;
    if (!store_->drive(i).online()) continue;
    store_->fs()->RemoveFile(sh.temp).IgnoreError();
    if (sh.renamed) store_->fs()->RemoveFile(sh.final_path).IgnoreError();
  }
}

void ErasureWriter::Abort() {
  if (finished_) return;
  finished_ = true;
  RemoveAll();
}

}  // namespace

Result<std::unique_ptr<DataWriter>> ErasureStoreImpl::Create(const std::string& id,
                                                             const DataHeader& header) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  auto writer = std::make_unique<ErasureWriter>(this, id, header);
  RETURN_IF_ERROR(writer->Init());
  return std::unique_ptr<DataWriter>(std::move(writer));
}

}  // namespace strata::storage::internal
