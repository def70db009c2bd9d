// ErasureDataStore: what Open accepts and refuses (sizes, drives of another
// deployment, swapped drives, layouts and options), the default layouts and
// the invariant checks.
#include "storage/erasure_store_test_util.h"

#include "common/check.h"

namespace strata::storage::erasure_test {
namespace {

TEST_P(ErasureStoreTest, WrongSizeIsRefusedAtOpen) {
  ASSERT_TRUE(Write(Id(1), Pattern(100, 1)).ok());
  auto r = store_->Open(Id(1), 101);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorruption);
  EXPECT_EQ(store_->Open(Id(2), 5).status().code(), Code::kNotFound);
}

TEST_P(ErasureStoreTest, DrivesOfAnotherDeploymentAreRefused) {
  // A second pool elsewhere on the same filesystem.
  PoolOptions other = Options();
  for (auto& d : other.drives) d = "/other" + d;
  auto second = ErasureDataStore::Open(fault_.get(), other);
  ASSERT_TRUE(second.ok());
  second->reset();
  PoolOptions mixed = Options();
  mixed.drives.back() = other.drives.back();
  Status st = Reopen(mixed);
  if (g_.n > 1) {  // (one drive is a whole pool: naming no deployment accepts it)
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), Code::kPreconditionFailed);
    EXPECT_NE(st.message().find(other.drives.back()), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("deployment"), std::string::npos);
  }
  // A named deployment must match.
  PoolOptions named = Options();
  named.deployment_id = "feedfacefeedface";
  st = Reopen(named);
  EXPECT_EQ(st.code(), Code::kPreconditionFailed) << st.ToString();
  EXPECT_NE(st.message().find("feedfacefeedface"), std::string::npos);
  ASSERT_TRUE(Reopen().ok());
}

TEST_P(ErasureStoreTest, SwappedDrivesAreRefused) {
  if (g_.n < 2) GTEST_SKIP();
  PoolOptions swapped = Options();
  std::swap(swapped.drives[0], swapped.drives[1]);
  Status st = Reopen(swapped);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kPreconditionFailed);
  EXPECT_NE(st.message().find(drives_[1]), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("position 1"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("listed at position 0"), std::string::npos) << st.ToString();
  ASSERT_TRUE(Reopen().ok());
}

TEST_P(ErasureStoreTest, LayoutMismatchAndBadOptionsAreRefused) {
  PoolOptions o = Options();
  o.drives.push_back("/pool/extra");
  o.k += 1;
  EXPECT_EQ(Reopen(o).code(), Code::kPreconditionFailed);  // formatted for n drives
  o = Options();
  o.drives.push_back(o.drives[0]);
  EXPECT_EQ(Reopen(o).code(), Code::kInvalidArgument);  // listed twice
  o = Options();
  o.k = g_.n + 1;
  o.m = 0;
  EXPECT_EQ(Reopen(o).code(), Code::kInvalidArgument);
  if (g_.m > 0) {
    o = Options();
    o.k = g_.k + 1;
    o.m = g_.m - 1;
    Status st = Reopen(o);
    EXPECT_EQ(st.code(), Code::kPreconditionFailed);
    EXPECT_NE(st.message().find("formatted for"), std::string::npos) << st.ToString();
  }
  // Defaults adopt the format (block size included).
  o = Options();
  o.k = 0;
  o.m = -1;
  o.block_bytes = 1 << 20;
  ASSERT_TRUE(Reopen(o).ok());
  EXPECT_EQ(store_->k(), g_.k);
  const std::string data = Pattern(2 * stripe() + 1, 1);
  ASSERT_TRUE(Write(Id(1), data).ok());
  ASSERT_TRUE(Reopen().ok());
  auto got = Read(Id(1), data.size());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == data);
}

// The store's invariants (k >= 1, k + m == drives, shard index < k + m, ...)
// are STRATA_CHECKs: they abort in the RelWithDebInfo build we test, where
// assert() is compiled out.
TEST(ErasureInvariantTest, ChecksAbortInEveryBuild) {
#ifdef NDEBUG
  const bool asserts_compiled_out = true;
#else
  const bool asserts_compiled_out = false;
#endif
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(STRATA_CHECK(1 + 1 == 3, "detail " + std::to_string(7)),
               "STRATA_CHECK\\(1 \\+ 1 == 3\\) failed: detail 7");
  std::printf("asserts compiled out in this build: %s\n", asserts_compiled_out ? "yes" : "no");
}

TEST(ErasureLayoutTest, Defaults) {
  int k, m;
  std::vector<std::pair<int, std::pair<int, int>>> want = {
      {1, {1, 0}}, {2, {1, 1}}, {3, {2, 1}}, {4, {2, 2}},  {5, {3, 2}},  {6, {4, 2}},
      {7, {5, 2}}, {8, {6, 2}}, {9, {6, 3}}, {11, {8, 3}}, {12, {8, 4}}, {16, {12, 4}}};
  for (auto& [n, km] : want) {
    DefaultLayout(n, &k, &m);
    EXPECT_EQ(std::make_pair(k, m), km) << n;
  }
}

TEST(ErasureLayoutTest, DefaultLayoutOpensAndFormatsEveryDrive) {
  auto mem = io::NewMemFileSystem();
  PoolOptions o;
  for (int i = 0; i < 4; ++i) o.drives.push_back("/d" + std::to_string(i) + "/");
  o.block_bytes = 1024;
  auto store = ErasureDataStore::Open(mem.get(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->k(), 2);
  EXPECT_EQ((*store)->m(), 2);
  std::string dep;
  for (int i = 0; i < 4; ++i) {
    auto f = mem->NewReadableFile("/d" + std::to_string(i) + "/format");
    ASSERT_TRUE(f.ok());
    std::string text((*f)->Size(), '\0');
    ASSERT_TRUE((*f)->ReadAt(0, text.data(), text.size()).ok());
    auto fmt = DecodeDriveFormat(text);
    ASSERT_TRUE(fmt.ok());
    EXPECT_EQ(fmt->position, static_cast<uint32_t>(i));
    EXPECT_EQ(fmt->block_bytes, 1024u);
    if (i == 0) dep = fmt->deployment_id;
    EXPECT_EQ(fmt->deployment_id, dep);
  }
  // A crash right after Open keeps the formats (they are synced).
  mem->SimulateCrash();
  store->reset();
  store = ErasureDataStore::Open(mem.get(), o);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->Drives()[0].detail.empty());
}

}  // namespace
}  // namespace strata::storage::erasure_test
