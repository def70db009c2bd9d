// The fixture of the erasure-coded store's tests (ErasureStoreTest, run over
// several k+m layouts): a pool of drives on mem_fs behind fault_fs, with
// helpers to write, read and damage shard files. Shared by
// erasure_store_test.cc (writes, reads, faults), erasure_heal_test.cc
// (losing drives, bitrot, heal) and erasure_format_test.cc (opening, drive
// formats, layouts).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "io/fault_fs.h"
#include "io/mem_fs.h"
#include "storage/erasure_store.h"
#include "storage/shard_format.h"

// A named namespace, not an anonymous one: the test files share one fixture
// type (GoogleTest refuses a suite name bound to two types).
namespace strata::storage::erasure_test {

inline constexpr size_t kBlock = 4096;

struct Geometry {
  int n, k, m;
};

inline std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 16);
  }
  return s;
}

inline std::string Id(int i) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%02x%030x", (i * 37) & 0xff, i);
  return buf;
}

class ErasureStoreTest : public ::testing::TestWithParam<Geometry> {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    fault_ = std::make_unique<io::FaultFileSystem>(mem_.get());
    g_ = GetParam();
    for (int i = 0; i < g_.n; ++i) drives_.push_back("/pool/d" + std::to_string(i));
    ASSERT_TRUE(Reopen().ok());
  }

  PoolOptions Options() {
    PoolOptions o;
    o.drives = drives_;
    o.k = g_.k;
    o.m = g_.m;
    o.block_bytes = kBlock;
    return o;
  }

  Status Reopen() { return Reopen(Options()); }
  Status Reopen(PoolOptions options) {
    store_.reset();
    auto s = ErasureDataStore::Open(fault_.get(), std::move(options));
    if (!s.ok()) return s.status();
    store_ = std::move(s).value();
    store_->SetHealCallback([this](const std::string& id) { healed_.push_back(id); });
    return Status::OK();
  }

  size_t stripe() const { return g_.k * kBlock; }
  int quorum() const { return g_.m >= 1 ? g_.k + 1 : g_.k; }
  // Whether a write survives `failing` drives failing.
  bool WritableWith(int failing) const { return g_.n - failing >= quorum(); }
  std::vector<size_t> Sizes() const {
    return {0, 1, kBlock - 1, kBlock, stripe(), stripe() + 1, 5 * stripe() + 123};
  }

  DataHeader Header(const std::string& key) {
    DataHeader h;
    h.bucket = "bkt";
    h.key = key;
    h.version_stamp = 42;
    return h;
  }

  Status Write(const std::string& id, const std::string& data, size_t piece = 1000,
               const std::string& trailer = "trailer") {
    auto w = store_->Create(id, Header("key-" + id));
    if (!w.ok()) return w.status();
    for (size_t off = 0; off < data.size(); off += piece) {
      Status st = (*w)->Append(std::string_view(data).substr(off, piece));
      if (!st.ok()) {
        (*w)->Abort();
        return st;
      }
    }
    Status st = (*w)->Finish(trailer);
    if (!st.ok()) (*w)->Abort();
    return st;
  }

  Result<std::string> Read(const std::string& id, uint64_t size, size_t piece = 1 << 20) {
    ASSIGN_OR_RETURN(auto r, store_->Open(id, size));
    if (r->size() != size) return Internal("size() mismatch");
    std::string out(size, '\0');
    size_t off = 0;
    while (off < size) {
      ASSIGN_OR_RETURN(size_t n, r->ReadAt(off, out.data() + off, std::min(piece, size - off)));
      if (n == 0) return Internal("unexpected EOF at " + std::to_string(off));
      off += n;
    }
    char extra;
    ASSIGN_OR_RETURN(size_t n, r->ReadAt(size, &extra, 1));
    if (n != 0) return Internal("read past the end");
    return out;
  }

  std::string ShardPath(int drive, const std::string& id) {
    return drives_[drive] + "/shards/" + id.substr(0, 2) + "/" + id;
  }

  std::string Slurp(const std::string& path) {
    auto f = mem_->NewReadableFile(path);
    EXPECT_TRUE(f.ok()) << path;
    if (!f.ok()) return "";
    std::string s((*f)->Size(), '\0');
    auto n = (*f)->ReadAt(0, s.data(), s.size());
    EXPECT_TRUE(n.ok());
    return s;
  }
  void Put(const std::string& path, const std::string& bytes) {
    auto f = mem_->NewWritableFile(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append(bytes).ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
    ASSERT_TRUE(mem_->SyncDir(path.substr(0, path.rfind('/'))).ok());
  }
  void FlipByte(const std::string& path, size_t offset) {
    std::string s = Slurp(path);
    ASSERT_LT(offset, s.size()) << path;
    s[offset] = static_cast<char>(s[offset] ^ 0x5a);
    Put(path, s);
  }
  size_t HeaderLen(const std::string& path) {
    std::string s = Slurp(path);
    auto len = ShardHeaderLength(s);
    EXPECT_TRUE(len.ok());
    return len.ok() ? *len : 0;
  }
  // Offset, in shard file `path`, of byte `at` of stripe s's block.
  size_t BlockByte(const std::string& path, uint64_t s, size_t at) {
    return HeaderLen(path) + s * (kBlock + kBlockCrcBytes) + at;
  }
  void RemoveShard(int drive, const std::string& id) {
    ASSERT_TRUE(mem_->RemoveFile(ShardPath(drive, id)).ok()) << ShardPath(drive, id);
  }
  // Removes every file on a drive (its directories stay: mem_fs has no rmdir).
  void Wipe(const std::string& dir) {
    auto names = mem_->ListDir(dir);
    if (!names.ok()) return;
    for (const std::string& name : *names) {
      std::string p = dir + "/" + name;
      if (!mem_->RemoveFile(p).ok()) Wipe(p);
    }
    mem_->SyncDir(dir).IgnoreError();
  }

  Geometry g_;
  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<io::FaultFileSystem> fault_;
  std::vector<std::string> drives_;
  std::unique_ptr<ErasureDataStore> store_;
  std::vector<std::string> healed_;
};

}  // namespace strata::storage::erasure_test
