// PlainDataStore: one file per data id, with a CRC32C per 64 KiB block kept
// in a footer (docs/formats/data-files.md), verified on every read so a
// flipped bit on disk fails the read instead of being served.
#include "storage/plain_store.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "common/checksum.h"
#include "common/encoding.h"
#include "common/log.h"
#include "io/dirs.h"
#include "storage/shard_format.h"

namespace strata::storage {

namespace {

constexpr uint32_t kBlockBytes = 64 * 1024;
constexpr std::string_view kFooterMagic = "STRCRC01";
constexpr size_t kFooterBytes = 24;  // magic(8) block_bytes(4) table_crc(4) data_size(8)

static_assert(kBlockBytes <= DataReader::kCheckScratchMin, "Check's scratch holds a block");

uint64_t BlockCount(uint64_t size) { return (size + kBlockBytes - 1) / kBlockBytes; }
uint64_t ChecksummedFileSize(uint64_t size) { return size + 4 * BlockCount(size) + kFooterBytes; }

class PlainWriter : public DataWriter {
 public:
  PlainWriter(io::FileSystem* fs, std::string path, std::unique_ptr<io::WritableFile> file)
      : fs_(fs), path_(std::move(path)), file_(std::move(file)) {}
  ~PlainWriter() override {
    if (file_) Abort();
  }
  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(file_->Append(data));
    size_ += data.size();
    while (!data.empty()) {  // the CRC of each block, across Append boundaries
      size_t take = std::min<size_t>(data.size(), kBlockBytes - block_fill_);
      block_crc_->Update(data.data(), take);
      block_fill_ += take;
      data.remove_prefix(take);
      if (block_fill_ == kBlockBytes) CloseBlock();
    }
    return Status::OK();
  }
  Status Finish(std::string_view) override {
    if (block_fill_ > 0) CloseBlock();
    std::string footer(kFooterMagic);
    PutFixed32LE(&footer, kBlockBytes);
    PutFixed32LE(&footer, Crc32c(table_.data(), table_.size()));
    PutFixed64LE(&footer, size_);
    RETURN_IF_ERROR(file_->Append(table_));
    RETURN_IF_ERROR(file_->Append(footer));
    RETURN_IF_ERROR(file_->Sync());
    RETURN_IF_ERROR(file_->Close());
    file_.reset();
    return fs_->SyncDir(path_.substr(0, path_.rfind('/')));
  }
  void Abort() override {
    file_.reset();  // closed unsynced, without writing what a bulk file staged
    fs_->RemoveFile(path_).IgnoreError();
  }

 private:
  void CloseBlock() {
    std::string raw = block_crc_->Final();  // big-endian, and resets the checksummer
    uint32_t v = 0;
    for (unsigned char c : raw) v = v << 8 | c;
    PutFixed32LE(&table_, v);
    block_fill_ = 0;
  }

  io::FileSystem* fs_;
  std::string path_;
  std::unique_ptr<io::WritableFile> file_;
  std::unique_ptr<Checksummer> block_crc_ = Checksummer::Create(ChecksumAlgorithm::kCrc32c);
  size_t block_fill_ = 0;
  uint64_t size_ = 0;
  std::string table_;  // one little-endian CRC32C per block
};

// Reads a legacy file (written before checksums: exactly the object's bytes).
class LegacyReader : public DataReader {
 public:
  explicit LegacyReader(std::unique_ptr<io::ReadableFile> file) : file_(std::move(file)) {}
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    return file_->ReadAt(offset, buf, n);
  }
  uint64_t size() const override { return file_->Size(); }
  int UnverifiedFd() const override { return file_->NativeFd(); }
  // Nothing to check (ReadAt serves these bytes unchecked too).
  Result<size_t> Check(uint64_t offset, size_t n, char*, size_t) override {
    if (file_->NativeFd() < 0) return NotImplemented("no descriptor to send from");
    return static_cast<size_t>(std::min<uint64_t>(n, file_->Size() - std::min(offset, file_->Size())));
  }

 private:
  std::unique_ptr<io::ReadableFile> file_;
};

// Reads whole blocks and checks each against its CRC before any byte of it
// is returned. Block-aligned reads land in the caller's buffer directly; a
// read inside a block goes through one cached block.
class CheckedReader : public DataReader {
 public:
  CheckedReader(std::string id, std::unique_ptr<io::ReadableFile> file, uint64_t size,
                std::string table)
      : id_(std::move(id)), file_(std::move(file)), size_(size), table_(std::move(table)) {}

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    if (offset >= size_ || n == 0) return size_t{0};
    uint64_t block = offset / kBlockBytes;
    if (offset % kBlockBytes == 0 && n >= BlockLen(block)) {
      // As many whole blocks as fit, straight into the caller's buffer.
      uint64_t last = block;
      size_t total = BlockLen(block);
      while (last + 1 < BlockCount(size_) && total + BlockLen(last + 1) <= n) {
        total += BlockLen(++last);
      }
      RETURN_IF_ERROR(ReadFull(offset, buf, total));
      for (uint64_t b = block; b <= last; ++b) {
        RETURN_IF_ERROR(Verify(b, buf + (b - block) * kBlockBytes));
      }
      return total;
    }
    std::lock_guard lock(mu_);
    if (cached_block_ != block) {
      cached_block_ = UINT64_MAX;
      cache_.resize(kBlockBytes);
      RETURN_IF_ERROR(ReadFull(block * kBlockBytes, cache_.data(), BlockLen(block)));
      RETURN_IF_ERROR(Verify(block, cache_.data()));
      cached_block_ = block;
    }
    size_t in_block = offset - block * kBlockBytes;
    size_t take = std::min<uint64_t>(n, BlockLen(block) - in_block);
    std::memcpy(buf, cache_.data() + in_block, take);
    return take;
  }
  uint64_t size() const override { return size_; }
  // The bytes come first in the file, the CRC table after them.
  int UnverifiedFd() const override { return file_->NativeFd(); }
  // Reads the blocks into the caller's scratch (a pooled buffer, warm in the
  // CPU cache) and checks them; the caller's sendfile then hands the same
  // page-cache pages to the socket, so the bytes pass through user space once
  // instead of twice. (Checking through an mmap would skip even that copy,
  // but a read error or a file cut short would then arrive as SIGBUS instead
  // of a Status.)
  Result<size_t> Check(uint64_t offset, size_t n, char* scratch, size_t scratch_bytes) override {
    if (file_->NativeFd() < 0) return NotImplemented("no descriptor to send from");
    if (scratch_bytes < kBlockBytes) return InvalidArgument("check scratch below one block");
    if (offset >= size_ || n == 0) return size_t{0};
    const uint64_t end = std::min<uint64_t>(size_, offset + n);
    const uint64_t last = (end - 1) / kBlockBytes;
    const uint64_t per_read = scratch_bytes / kBlockBytes;
    for (uint64_t b = offset / kBlockBytes; b <= last;) {
      const uint64_t upto = std::min(last, b + per_read - 1);
      const size_t len = static_cast<size_t>((upto - b) * kBlockBytes + BlockLen(upto));
      RETURN_IF_ERROR(ReadFull(b * kBlockBytes, scratch, len));
      for (uint64_t i = b; i <= upto; ++i) {
        RETURN_IF_ERROR(Verify(i, scratch + (i - b) * kBlockBytes));
      }
      b = upto + 1;
    }
    return static_cast<size_t>(std::min<uint64_t>(size_, (last + 1) * kBlockBytes) - offset);
  }

 private:
  size_t BlockLen(uint64_t block) const {
    return static_cast<size_t>(std::min<uint64_t>(kBlockBytes, size_ - block * kBlockBytes));
  }
  Status ReadFull(uint64_t offset, char* buf, size_t n) const {
    size_t got = 0;
    while (got < n) {
      ASSIGN_OR_RETURN(size_t r, file_->ReadAt(offset + got, buf + got, n - got));
      if (r == 0) return Corruption("data file " + id_ + " is shorter than its footer says");
      got += r;
    }
    return Status::OK();
  }
  Status Verify(uint64_t block, const char* data) const {
    uint32_t want = DecodeFixed32LE(table_.data() + 4 * block);
    if (Crc32c(data, BlockLen(block)) == want) return Status::OK();
    STRATA_LOG("data file %s: block %llu fails its CRC32C (bitrot or a torn write); refusing "
               "to serve it", id_.c_str(), static_cast<unsigned long long>(block));
    return Corruption("data file " + id_ + " block " + std::to_string(block) +
                      " fails its checksum");
  }

  std::string id_;
  std::unique_ptr<io::ReadableFile> file_;
  uint64_t size_;
  std::string table_;
  std::mutex mu_;
  std::vector<char> cache_;
  uint64_t cached_block_ = UINT64_MAX;
};

class PlainDataStore : public DataStore {
 public:
  PlainDataStore(io::FileSystem* fs, std::string root) : fs_(fs), root_(std::move(root)) {}

  Result<std::unique_ptr<DataWriter>> Create(const std::string& id, const DataHeader&) override {
    std::string path = Path(id);
    ASSIGN_OR_RETURN(auto file, fs_->NewBulkWritableFile(path));
    return std::unique_ptr<DataWriter>(new PlainWriter(fs_, path, std::move(file)));
  }
  Result<std::unique_ptr<DataReader>> Open(const std::string& id, uint64_t size) override {
    ASSIGN_OR_RETURN(auto file, fs_->NewReadableFile(Path(id)));
    if (file->Size() == size) {  // a legacy file: nothing to verify against
      return std::unique_ptr<DataReader>(new LegacyReader(std::move(file)));
    }
    if (file->Size() != ChecksummedFileSize(size)) {
      return Corruption("data file " + id + " has the wrong size");
    }
    const uint64_t table_bytes = 4 * BlockCount(size);
    std::string tail(table_bytes + kFooterBytes, '\0');
    size_t got = 0;
    while (got < tail.size()) {
      ASSIGN_OR_RETURN(size_t r, file->ReadAt(size + got, tail.data() + got, tail.size() - got));
      if (r == 0) return Corruption("data file " + id + ": footer cut short");
      got += r;
    }
    std::string_view footer = std::string_view(tail).substr(table_bytes);
    if (footer.substr(0, kFooterMagic.size()) != kFooterMagic ||
        DecodeFixed32LE(footer.data() + 8) != kBlockBytes ||
        DecodeFixed64LE(footer.data() + 16) != size ||
        Crc32c(tail.data(), table_bytes) != DecodeFixed32LE(footer.data() + 12)) {
      STRATA_LOG("data file %s: checksum footer is damaged; refusing to serve it", id.c_str());
      return Corruption("data file " + id + ": checksum footer is damaged");
    }
    tail.resize(table_bytes);
    return std::unique_ptr<DataReader>(
        new CheckedReader(id, std::move(file), size, std::move(tail)));
  }
  Status Remove(const std::string& id) override { return fs_->RemoveFile(Path(id)); }
  size_t inline_max_bytes() const override { return 128 * 1024; }
  Result<std::vector<std::string>> ListIds() override {
    std::vector<std::string> ids;
    for (int i = 0; i < 256; ++i) {
      char sub[8];
      std::snprintf(sub, sizeof(sub), "%02x", i);
      ASSIGN_OR_RETURN(std::vector<std::string> names, fs_->ListDir(root_ + "/objects/" + sub));
      for (std::string& name : names) {
        if (name.starts_with(sub)) ids.push_back(std::move(name));  // ids start with their dir
      }
    }
    return ids;
  }
  // Plain data files have no header or trailer, and small objects live only
  // in the metadata: nothing to rebuild an index from.
  Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(const std::string&) override {
    return NotImplemented("the plain data store keeps no headers or trailers");
  }

  Status Init() {
    for (int i = 0; i < 256; ++i) {
      char sub[8];
      std::snprintf(sub, sizeof(sub), "%02x", i);
      RETURN_IF_ERROR(io::CreateDirsDurably(fs_, root_ + "/objects/" + sub));
    }
    return Status::OK();
  }

 private:
  std::string Path(const std::string& id) const {
    return root_ + "/objects/" + id.substr(0, 2) + "/" + id;
  }
  io::FileSystem* fs_;
  std::string root_;
};

}  // namespace

Result<std::unique_ptr<DataStore>> OpenPlainDataStore(io::FileSystem* fs, std::string root) {
  auto store = std::make_unique<PlainDataStore>(fs, std::move(root));
  RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<DataStore>(std::move(store));
}

}  // namespace strata::storage
