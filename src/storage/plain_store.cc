#include "storage/plain_store.h"

#include <cstdio>

namespace strata::storage {

namespace {

class PlainWriter : public DataWriter {
 public:
  PlainWriter(io::FileSystem* fs, std::string path, std::unique_ptr<io::WritableFile> file)
      : fs_(fs), path_(std::move(path)), file_(std::move(file)) {}
  ~PlainWriter() override {
    if (file_) Abort();
  }
  Status Append(std::string_view data) override { return file_->Append(data); }
  Status Finish(std::string_view) override {
    RETURN_IF_ERROR(file_->Sync());
    RETURN_IF_ERROR(file_->Close());
    file_.reset();
    return fs_->SyncDir(path_.substr(0, path_.rfind('/')));
  }
  void Abort() override {
    if (file_) file_->Close().IgnoreError();
    file_.reset();
    fs_->RemoveFile(path_).IgnoreError();
  }

 private:
  io::FileSystem* fs_;
  std::string path_;
  std::unique_ptr<io::WritableFile> file_;
};

class PlainReader : public DataReader {
 public:
  explicit PlainReader(std::unique_ptr<io::ReadableFile> file) : file_(std::move(file)) {}
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override {
    return file_->ReadAt(offset, buf, n);
  }
  uint64_t size() const override { return file_->Size(); }

 private:
  std::unique_ptr<io::ReadableFile> file_;
};

class PlainDataStore : public DataStore {
 public:
  PlainDataStore(io::FileSystem* fs, std::string root) : fs_(fs), root_(std::move(root)) {}

  Result<std::unique_ptr<DataWriter>> Create(const std::string& id, const DataHeader&) override {
    std::string path = Path(id);
    ASSIGN_OR_RETURN(auto file, fs_->NewWritableFile(path));
    return std::unique_ptr<DataWriter>(new PlainWriter(fs_, path, std::move(file)));
  }
  Result<std::unique_ptr<DataReader>> Open(const std::string& id, uint64_t size) override {
    ASSIGN_OR_RETURN(auto file, fs_->NewReadableFile(Path(id)));
    if (file->Size() != size) return Corruption("data file " + id + " has the wrong size");
    return std::unique_ptr<DataReader>(new PlainReader(std::move(file)));
  }
  Status Remove(const std::string& id) override { return fs_->RemoveFile(Path(id)); }
  size_t inline_max_bytes() const override { return 128 * 1024; }
  // Plain data files have no header or trailer, and small objects live only
  // in the metadata: nothing to rebuild an index from.
  Result<std::vector<std::string>> ListIds() override {
    return NotImplemented("the plain data store does not describe its data (rebuild-index needs "
                          "an erasure-coded pool)");
  }
  Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(const std::string&) override {
    return NotImplemented("the plain data store keeps no headers or trailers");
  }

  Status Init() {
    for (int i = 0; i < 256; ++i) {
      char sub[8];
      std::snprintf(sub, sizeof(sub), "%02x", i);
      RETURN_IF_ERROR(fs_->CreateDirs(root_ + "/objects/" + sub));
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
