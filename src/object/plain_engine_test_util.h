// A test fixture: an object engine over a plain data store on mem_fs, with
// bucket "b" created. Used by versions_test.cc, encryption_test.cc and
// read_ahead_test.cc (pool_engine_test_util.h is the erasure-coded twin).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"

namespace strata::object {

class PlainEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    auto store = storage::OpenPlainDataStore(mem_.get(), "/data");
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
    auto e = ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(e.ok());
    engine_ = std::move(e).value();
    ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
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
