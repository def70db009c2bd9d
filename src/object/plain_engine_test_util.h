// A test fixture: an object engine over a plain data store on mem_fs, with
// bucket "b" created. Used by versions_test.cc, encryption_test.cc and
// read_ahead_test.cc (pool_engine_test_util.h is the erasure-coded twin).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"

namespace strata::object {

// Opens a plain store at `root` of `fs` and an engine over it and `kv`, and
// creates bucket "b".
inline void OpenPlainEngine(io::FileSystem* fs, const std::string& root, meta::KvStore* kv,
                            std::unique_ptr<storage::DataStore>* store,
                            std::unique_ptr<ObjectEngine>* engine) {
  auto s = storage::OpenPlainDataStore(fs, root);
  ASSERT_TRUE(s.ok());
  *store = std::move(s).value();
  auto e = ObjectEngine::Open(store->get(), kv);
  ASSERT_TRUE(e.ok());
  *engine = std::move(e).value();
  ASSERT_TRUE((*engine)->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
}

class PlainEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    OpenPlainEngine(mem_.get(), "/data", kv_.get(), &store_, &engine_);
  }

  // The data files of the plain store, as bytes (tests that damage them).
  std::string FileBytes(const std::string& path) {
    auto f = mem_->NewReadableFile(path);
    std::string s(f.ok() ? (*f)->Size() : 0, '\0');
    if (f.ok()) (void)(*f)->ReadAt(0, s.data(), s.size());
    return s;
  }
  std::string DataPath(const std::string& id) {
    return "/data/objects/" + id.substr(0, 2) + "/" + id;
  }
  void FlipByte(const std::string& path, size_t at) {
    std::string s = FileBytes(path);
    ASSERT_LT(at, s.size());
    s[at] ^= 0x01;
    auto w = mem_->NewWritableFile(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(s).ok());
    ASSERT_TRUE((*w)->Sync().ok());
    ASSERT_TRUE((*w)->Close().ok());
  }

  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

}  // namespace strata::object
