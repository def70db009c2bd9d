#include "kvcache/block_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace strata::kvcache {
namespace {

// A 16-byte key: "chain" letter + position, padded.
std::string Key(char chain, int pos) {
  std::string k(16, '\0');
  k[0] = chain;
  k[1] = static_cast<char>(pos);
  k[2] = static_cast<char>(pos >> 8);
  return k;
}

// Inserts a chain of n blocks of `len` bytes at times t, t+1, ...
void PutChain(BlockIndex& idx, char chain, int n, uint64_t len, uint64_t t) {
  for (int i = 0; i < n; ++i) {
    idx.Insert(Key(chain, i), i == 0 ? "" : Key(chain, i - 1), len, t + i);
  }
}

std::vector<std::string_view> Views(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

// The stored set is prefix-closed along chain `chain` of length n.
void ExpectPrefixClosed(const BlockIndex& idx, char chain, int n) {
  bool hole = false;
  for (int i = 0; i < n; ++i) {
    bool present = idx.Find(Key(chain, i)).has_value();
    if (!present) hole = true;
    EXPECT_FALSE(hole && present) << "block " << i << " of chain " << chain << " after a hole";
  }
}

TEST(BlockIndex, LookupPrefixSemantics) {
  BlockIndex idx(1);
  PutChain(idx, 'a', 5, 100, 1000);
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back(Key('a', i));
  auto views = Views(keys);
  EXPECT_EQ(idx.PrefixLength(views), 5u);
  EXPECT_EQ(idx.PrefixLength(std::span(views).first(3)), 3u);
  EXPECT_EQ(idx.PrefixLength({}), 0u);
  // A missing first key: 0 even though later ones exist.
  std::vector<std::string_view> gap = {Key('z', 0), keys[1]};
  std::string z = Key('z', 0);
  gap[0] = z;
  EXPECT_EQ(idx.PrefixLength(gap), 0u);
  // Keys of the wrong size are simply absent.
  std::vector<std::string_view> bad = {"short"};
  EXPECT_EQ(idx.PrefixLength(bad), 0u);
  EXPECT_EQ(idx.blocks(), 5u);
  EXPECT_EQ(idx.bytes(), 500u);
  EXPECT_EQ(*idx.Find(keys[2]), 100u);
}

TEST(BlockIndex, LookupHasNoSideEffects) {
  BlockIndex idx(2);
  idx.Insert(Key('a', 0), "", 10, 1);
  idx.Insert(Key('b', 0), "", 10, 2);
  auto before = idx.LeafOrder();
  std::string a = Key('a', 0);
  std::vector<std::string_view> q = {a};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(idx.PrefixLength(q), 1u);
    EXPECT_TRUE(idx.Find(a).has_value());
  }
  EXPECT_EQ(idx.LeafOrder(), before);
  // A GET (Touch) does refresh recency.
  EXPECT_TRUE(idx.Touch(a, 3));
  EXPECT_EQ(idx.LeafOrder(), (std::vector<std::string>{Key('b', 0), Key('a', 0)}));
  std::vector<std::string> evicted;
  ASSERT_TRUE(idx.MakeRoom(10, 0, "", &evicted));
  EXPECT_EQ(evicted, std::vector<std::string>{Key('b', 0)});
}

TEST(BlockIndex, EvictionIsTailFirstUnderQuota) {
  BlockIndex idx(3);
  PutChain(idx, 'a', 4, 10, 100);  // a0..a3 at t=100..103
  PutChain(idx, 'b', 3, 10, 200);  // b0..b2 at t=200..202
  // Only the chain tails are candidates.
  EXPECT_EQ(idx.LeafOrder(), (std::vector<std::string>{Key('a', 3), Key('b', 2)}));
  std::vector<std::string> evicted;
  ASSERT_TRUE(idx.MakeRoom(50, 0, "", &evicted));  // 70 -> 50
  // a3 (oldest leaf), then a2 (became a leaf, older than b2).
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('a', 3), Key('a', 2)}));
  ExpectPrefixClosed(idx, 'a', 4);
  ExpectPrefixClosed(idx, 'b', 3);
  // Reading a1 makes a the recent chain: b is evicted from its tail next.
  idx.Touch(Key('a', 0), 300);
  idx.Touch(Key('a', 1), 301);
  evicted.clear();
  ASSERT_TRUE(idx.MakeRoom(30, 0, "", &evicted));
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('b', 2), Key('b', 1)}));
  ExpectPrefixClosed(idx, 'b', 3);
  EXPECT_EQ(idx.bytes(), 30u);
  // Room for 10 more bytes: b0 goes (a0 was read after it).
  evicted.clear();
  ASSERT_TRUE(idx.MakeRoom(30, 10, "", &evicted));
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('b', 0)}));
  // More than the quota can never fit, and nothing is evicted for it.
  evicted.clear();
  EXPECT_FALSE(idx.MakeRoom(30, 31, "", &evicted));
  EXPECT_TRUE(evicted.empty());
}

TEST(BlockIndex, MakeRoomProtectsTheNewBlocksParent) {
  BlockIndex idx(4);
  PutChain(idx, 'a', 2, 10, 100);
  idx.Insert(Key('b', 0), "", 10, 200);
  // a1 is the oldest leaf, but a child of a1 is about to be added.
  std::vector<std::string> evicted;
  ASSERT_TRUE(idx.MakeRoom(30, 10, Key('a', 1), &evicted));
  EXPECT_EQ(evicted, std::vector<std::string>{Key('b', 0)});
  EXPECT_TRUE(idx.Find(Key('a', 1)));
  idx.Insert(Key('a', 2), Key('a', 1), 10, 300);
  EXPECT_EQ(idx.LeafOrder(), std::vector<std::string>{Key('a', 2)});
  // Only the protected chain is left: no room can be made without breaking it.
  evicted.clear();
  EXPECT_FALSE(idx.MakeRoom(30, 10, Key('a', 2), &evicted));
  EXPECT_EQ(idx.blocks(), 3u);
}

TEST(BlockIndex, TtlExpiryTailFirst) {
  BlockIndex idx(5);
  PutChain(idx, 'a', 3, 10, 100);  // a0..a2 at 100..102
  PutChain(idx, 'b', 2, 10, 500);
  idx.Touch(Key('a', 0), 600);  // a0 read recently, but it has children
  std::vector<std::string> evicted;
  idx.EvictIdle(200, &evicted);
  // a2 and a1 are idle and go tail-first; a0 stays (read at 600); b is young.
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('a', 2), Key('a', 1)}));
  EXPECT_TRUE(idx.Find(Key('a', 0)));
  evicted.clear();
  idx.EvictIdle(550, &evicted);
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('b', 1), Key('b', 0)}));
  evicted.clear();
  idx.EvictIdle(601, &evicted);
  EXPECT_EQ(evicted, std::vector<std::string>{Key('a', 0)});
  EXPECT_EQ(idx.blocks(), 0u);
  EXPECT_EQ(idx.bytes(), 0u);
}

TEST(BlockIndex, PinnedBlocksAreExempt) {
  BlockIndex idx(6);
  PutChain(idx, 'a', 3, 10, 100);
  idx.Insert(Key('b', 0), "", 10, 200);
  ASSERT_TRUE(idx.Pin(Key('a', 2), 1000));
  EXPECT_FALSE(idx.Pin(Key('z', 0), 1000));
  std::vector<std::string> evicted;
  // Everything but the pinned chain can go; the pinned tail holds its ancestors.
  EXPECT_FALSE(idx.MakeRoom(10, 0, "", &evicted));
  EXPECT_EQ(evicted, std::vector<std::string>{Key('b', 0)});
  evicted.clear();
  idx.EvictIdle(999, &evicted);
  EXPECT_TRUE(evicted.empty());
  // Pins run out.
  idx.ExpirePins(999);
  EXPECT_TRUE(idx.LeafOrder().empty());
  idx.ExpirePins(1000);
  EXPECT_EQ(idx.LeafOrder(), std::vector<std::string>{Key('a', 2)});
  // Unpin releases at once.
  ASSERT_TRUE(idx.Pin(Key('a', 2), 5000));
  ASSERT_TRUE(idx.Unpin(Key('a', 2)));
  evicted.clear();
  ASSERT_TRUE(idx.MakeRoom(10, 0, "", &evicted));
  EXPECT_EQ(evicted, (std::vector<std::string>{Key('a', 2), Key('a', 1)}));
}

TEST(BlockIndex, BlocksBeingReadAreNotEvicted) {
  BlockIndex idx(10);
  idx.Insert(Key('a', 0), "", 10, 1);
  idx.Insert(Key('b', 0), "", 10, 2);
  ASSERT_EQ(idx.Acquire(Key('a', 0), 3).value_or(BlockIndex::BlockInfo{}).length, 10u);
  ASSERT_EQ(idx.Acquire(Key('a', 0), 4).value_or(BlockIndex::BlockInfo{}).length, 10u);  // two GETs at once
  EXPECT_FALSE(idx.Acquire(Key('z', 0), 5));
  std::vector<std::string> evicted;
  EXPECT_FALSE(idx.MakeRoom(0, 0, "", &evicted));
  EXPECT_EQ(evicted, std::vector<std::string>{Key('b', 0)});
  idx.Release(Key('a', 0));
  EXPECT_TRUE(idx.LeafOrder().empty());
  idx.Release(Key('a', 0));
  EXPECT_EQ(idx.LeafOrder(), std::vector<std::string>{Key('a', 0)});
  idx.Release(Key('a', 0));  // unbalanced releases are ignored
  idx.Release(Key('z', 0));
  // An explicit delete still removes a block being read.
  ASSERT_EQ(idx.Acquire(Key('a', 0), 6).value_or(BlockIndex::BlockInfo{}).length, 10u);
  std::vector<std::string> removed;
  EXPECT_TRUE(idx.Erase(Key('a', 0), &removed));
  idx.Release(Key('a', 0));
  EXPECT_EQ(idx.blocks(), 0u);
}

TEST(BlockIndex, EraseTakesDescendants) {
  BlockIndex idx(7);
  PutChain(idx, 'a', 4, 10, 100);
  idx.Insert(Key('c', 0), Key('a', 1), 10, 200);  // a branch off a1
  idx.Insert(Key('b', 0), "", 10, 300);
  std::vector<std::string> removed;
  ASSERT_TRUE(idx.Erase(Key('a', 1), &removed));
  std::set<std::string> got(removed.begin(), removed.end());
  EXPECT_EQ(got, (std::set<std::string>{Key('a', 1), Key('a', 2), Key('a', 3), Key('c', 0)}));
  EXPECT_EQ(removed.back(), Key('a', 1));
  EXPECT_EQ(idx.blocks(), 2u);
  // a0 is a leaf again, older than b0.
  EXPECT_EQ(idx.LeafOrder(), (std::vector<std::string>{Key('a', 0), Key('b', 0)}));
  EXPECT_FALSE(idx.Erase(Key('a', 1), &removed));
}

TEST(BlockIndex, RestoreLinksParentsAndCutsLoops) {
  BlockIndex idx(8);
  std::vector<BlockIndex::Restored> blocks = {
      {Key('a', 2), Key('a', 1), 10, 102}, {Key('a', 0), "", 10, 100},
      {Key('a', 1), Key('a', 0), 10, 101}, {Key('x', 0), Key('x', 1), 10, 50},
      {Key('x', 1), Key('x', 0), 10, 51},  {Key('o', 0), Key('g', 0), 10, 10},
  };
  idx.Restore(blocks);
  EXPECT_EQ(idx.blocks(), 6u);
  std::vector<std::string> evicted;
  ASSERT_TRUE(idx.MakeRoom(2000, 1000, "", &evicted));  // nothing to do
  EXPECT_TRUE(evicted.empty());
  // Evict everything: every chain goes tail-first, and the loop terminates.
  ASSERT_TRUE(idx.MakeRoom(0, 0, "", &evicted));
  EXPECT_EQ(idx.blocks(), 0u);
  auto pos = [&](const std::string& k) {
    return std::find(evicted.begin(), evicted.end(), k) - evicted.begin();
  };
  EXPECT_LT(pos(Key('a', 2)), pos(Key('a', 1)));
  EXPECT_LT(pos(Key('a', 1)), pos(Key('a', 0)));
  // Stamps continue after the restored ones.
  idx.Insert(Key('n', 0), "", 1, 0);
  idx.Insert(Key('m', 0), "", 1, 0);
  EXPECT_EQ(idx.LeafOrder(), (std::vector<std::string>{Key('n', 0), Key('m', 0)}));
}

// Random operations against a simple model: the table, the byte count and the
// prefix-closure invariant must hold throughout.
TEST(BlockIndex, RandomOperationsKeepInvariants) {
  BlockIndex idx(9);
  std::mt19937 rng(42);
  std::map<std::string, uint64_t> model;
  constexpr int kChains = 20, kLen = 30;
  uint64_t t = 1;
  for (int step = 0; step < 20000; ++step) {
    int c = rng() % kChains;
    int op = rng() % 10;
    if (op < 6) {
      // Extend chain c by its next missing block, if its prefix is complete.
      int i = 0;
      while (i < kLen && model.count(Key('A' + c, i))) ++i;
      if (i < kLen) {
        uint64_t len = 1 + rng() % 50;
        std::vector<std::string> ev;
        if (idx.MakeRoom(2000, len, i ? Key('A' + c, i - 1) : "", &ev)) {
          idx.Insert(Key('A' + c, i), i ? Key('A' + c, i - 1) : "", len, t++);
          model[Key('A' + c, i)] = len;
        }
        for (auto& k : ev) model.erase(k);
      }
    } else if (op < 8) {
      idx.Touch(Key('A' + c, rng() % kLen), t++);
    } else if (op < 9) {
      std::vector<std::string> rm;
      idx.Erase(Key('A' + c, rng() % kLen), &rm);
      for (auto& k : rm) model.erase(k);
    } else {
      std::vector<std::string> ev;
      idx.EvictIdle(t > 3000 ? t - 3000 : 0, &ev);
      for (auto& k : ev) model.erase(k);
    }
    if (step % 500 == 0) {
      uint64_t bytes = 0;
      for (auto& [k, len] : model) bytes += len;
      ASSERT_EQ(idx.blocks(), model.size());
      ASSERT_EQ(idx.bytes(), bytes);
      for (int cc = 0; cc < kChains; ++cc) ExpectPrefixClosed(idx, 'A' + cc, kLen);
      for (auto& [k, len] : model) ASSERT_EQ(idx.Find(k), len);
    }
  }
  EXPECT_LE(idx.bytes(), 2000u);
}

}  // namespace
}  // namespace strata::kvcache
