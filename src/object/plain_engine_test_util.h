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

  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

}  // namespace strata::object
