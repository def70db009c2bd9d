// A test fixture: an object engine over a 2+2 erasure-coded pool of four
// drives on mem_fs (a self-describing store), with helpers to write parts,
// complete uploads and read objects back. Used by rebuild_test.cc and
// orphan_sweep_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/encoding.h"
#include "common/hash.h"
#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/erasure_store.h"

namespace strata::object {

inline std::string Md5Hex(const std::string& s) {
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(s.data(), s.size());
  return HexEncode(md5.Final());
}

// Every byte of an (unlocked) object, read through ReadAt.
inline Result<std::string> ReadWhole(const ObjectReader& r) {
  std::string out(r.record().size_bytes, '\0');
  for (size_t off = 0; off < out.size();) {
    ASSIGN_OR_RETURN(size_t n, r.ReadAt(off, out.data() + off, out.size() - off));
    if (n == 0) return Corruption("short read");
    off += n;
  }
  return out;
}

class PoolEngineTest : public ::testing::Test {
 protected:
  static constexpr int kDrives = 4;

  // Opens the pool and the engine on it (the engine's Open runs the start-up
  // recovery and orphan sweep); `absent`: drive 3 unmounted.
  void Open(bool absent = false) {
    engine_.reset();
    store_.reset();
    storage::PoolOptions o;
    for (int i = 0; i < kDrives; ++i) o.drives.push_back("/pool/d" + std::to_string(i));
    if (absent) o.drives[3] = "/unmounted/d3";
    o.k = 2;
    o.m = 2;
    o.block_bytes = 4096;
    auto s = storage::ErasureDataStore::Open(mem_.get(), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    auto e = ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }

  void PutPart(const std::string& key, const std::string& upload, uint32_t n,
               const std::string& body) {
    auto w = engine_->NewPartWriter("b", key, upload, n);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  // Completes `upload` of bucket "b" with parts 1..n of these bodies.
  void Complete(const std::string& key, const std::string& upload,
                const std::vector<std::string>& bodies) {
    std::vector<CompletePart> parts;
    for (size_t i = 0; i < bodies.size(); ++i) {
      parts.push_back({static_cast<uint32_t>(i + 1), Md5Hex(bodies[i])});
    }
    CompleteProblem problem;
    auto rec = engine_->CompleteUpload("b", key, upload, parts, &problem);
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  }
  // `data_key`: an encrypted version's (ObjectReader::Unlock).
  Result<std::string> Get(const std::string& bucket, const std::string& key,
                          std::string_view data_key = {}) {
    ASSIGN_OR_RETURN(auto r, engine_->OpenObject(bucket, key));
    if (!data_key.empty()) RETURN_IF_ERROR(r->Unlock(data_key));
    return ReadWhole(*r);
  }

  std::unique_ptr<io::MemFileSystem> mem_ = io::NewMemFileSystem();
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::unique_ptr<storage::ErasureDataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

}  // namespace strata::object
