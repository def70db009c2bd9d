#include "kvcache/block_index.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace strata::kvcache {
namespace {

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t Mix(uint64_t h) {  // MurmurHash3 fmix64
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

constexpr size_t kMinBuckets = 16;

}  // namespace

BlockIndex::BlockIndex(uint64_t hash_seed) : seed_(hash_seed), table_(kMinBuckets, 0) {}

// Keys are content hashes, but clients choose them: mix in a per-index seed so
// one tenant cannot aim collisions at the table.
uint64_t BlockIndex::Hash(std::string_view key) const {
  assert(key.size() >= 8);
  uint64_t a = Load64(key.data());
  uint64_t b = Load64(key.data() + key.size() - 8);
  return Mix(a ^ seed_ ^ Mix(b + key.size()));
}

uint32_t BlockIndex::FindSlot(std::string_view key) const {
  if (key.size() < proto::kMinKeyBytes || key.size() > proto::kMaxKeyBytes) return kNone;
  const size_t mask = table_.size() - 1;
  for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
    uint32_t v = table_[i];
    if (v == 0) return kNone;
    const Entry& e = At(v - 1);
    if (e.key_len == key.size() && std::memcmp(e.key, key.data(), key.size()) == 0) return v - 1;
  }
}

void BlockIndex::TableInsert(uint32_t slot) {
  if ((count_ + 1) * 4 > table_.size() * 3) Rehash(table_.size() * 2);
  const size_t mask = table_.size() - 1;
  size_t i = Hash(KeyOf(At(slot))) & mask;
  while (table_[i] != 0) i = (i + 1) & mask;
  table_[i] = slot + 1;
}

// Linear probing with backward-shift deletion: no tombstones.
void BlockIndex::TableErase(uint32_t slot) {
  const size_t mask = table_.size() - 1;
  size_t i = Hash(KeyOf(At(slot))) & mask;
  while (table_[i] != slot + 1) {
    assert(table_[i] != 0);
    i = (i + 1) & mask;
  }
  size_t j = i;
  while (true) {
    j = (j + 1) & mask;
    if (table_[j] == 0) break;
    size_t home = Hash(KeyOf(At(table_[j] - 1))) & mask;
    // Move j back to i unless its home lies cyclically in (i, j].
    bool home_in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
    if (!home_in_range) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i] = 0;
}

void BlockIndex::Rehash(size_t buckets) {
  std::vector<uint32_t> old;
  old.swap(table_);
  table_.assign(buckets, 0);
  const size_t mask = buckets - 1;
  for (uint32_t v : old) {
    if (v == 0) continue;
    size_t i = Hash(KeyOf(At(v - 1))) & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = v;
  }
}

uint32_t BlockIndex::AllocSlot() {
  if (free_head_ != kNone) {
    uint32_t s = free_head_;
    free_head_ = At(s).next;
    return s;
  }
  if (slots_used_ == chunks_.size() * kChunkEntries) {
    chunks_.push_back(std::make_unique<Entry[]>(kChunkEntries));
  }
  return slots_used_++;
}

uint64_t BlockIndex::NextStamp(uint64_t now_ns) {
  last_stamp_ = std::max(now_ns, last_stamp_ + 1);
  return last_stamp_;
}

// ---- leaf list ---------------------------------------------------------------

void BlockIndex::LeafUnlink(uint32_t slot) {
  Entry& e = At(slot);
  assert(e.flags & kInLeafList);
  if (e.prev != kNone)
    At(e.prev).next = e.next;
  else
    leaf_head_ = e.next;
  if (e.next != kNone)
    At(e.next).prev = e.prev;
  else
    leaf_tail_ = e.prev;
  e.prev = e.next = kNone;
  e.flags &= ~kInLeafList;
}

void BlockIndex::LeafAppend(uint32_t slot) {
  Entry& e = At(slot);
  e.prev = leaf_tail_;
  e.next = kNone;
  if (leaf_tail_ != kNone)
    At(leaf_tail_).next = slot;
  else
    leaf_head_ = slot;
  leaf_tail_ = slot;
  e.flags |= kInLeafList;
}

// Usually O(1): a parent that becomes a leaf was last read before the child
// that was just evicted (the oldest leaf), so it lands at the head. Worst case
// walks the list.
void BlockIndex::LeafInsertSorted(uint32_t slot) {
  Entry& e = At(slot);
  uint32_t after = kNone;  // insert after this one
  if (leaf_tail_ != kNone && At(leaf_tail_).stamp <= e.stamp) {
    after = leaf_tail_;
  } else {
    for (uint32_t s = leaf_head_; s != kNone && At(s).stamp <= e.stamp; s = At(s).next) after = s;
  }
  if (after == leaf_tail_) {
    LeafAppend(slot);
    return;
  }
  uint32_t before = after == kNone ? leaf_head_ : At(after).next;
  e.prev = after;
  e.next = before;
  At(before).prev = slot;
  if (after != kNone)
    At(after).next = slot;
  else
    leaf_head_ = slot;
  e.flags |= kInLeafList;
}

void BlockIndex::MaybeBecomeLeaf(uint32_t slot) {
  Entry& e = At(slot);
  if (e.children == 0 && e.readers == 0 && !(e.flags & (kPinned | kInLeafList)) &&
      slot != protected_) {
    LeafInsertSorted(slot);
  }
}

// ---- queries -----------------------------------------------------------------

size_t BlockIndex::PrefixLength(std::span<const std::string_view> keys) const {
  size_t n = 0;
  while (n < keys.size() && FindSlot(keys[n]) != kNone) ++n;
  return n;
}

std::optional<uint64_t> BlockIndex::Find(std::string_view key) const {
  uint32_t s = FindSlot(key);
  if (s == kNone) return std::nullopt;
  return At(s).length;
}

bool BlockIndex::Touch(std::string_view key, uint64_t now_ns) {
  uint32_t s = FindSlot(key);
  if (s == kNone) return false;
  Entry& e = At(s);
  e.stamp = NextStamp(now_ns);
  if (e.flags & kInLeafList) {  // the newest stamp goes to the tail
    LeafUnlink(s);
    LeafAppend(s);
  }
  return true;
}

std::optional<BlockIndex::BlockInfo> BlockIndex::Acquire(std::string_view key, uint64_t now_ns) {
  uint32_t s = FindSlot(key);
  if (s == kNone) return std::nullopt;
  Entry& e = At(s);
  if (e.readers == 0xffff) return std::nullopt;
  e.stamp = NextStamp(now_ns);
  if (e.flags & kInLeafList) LeafUnlink(s);
  ++e.readers;
  BlockInfo info;
  info.length = e.length;
  if (e.flags & kHasCrc) info.crc32c = e.crc32c;
  info.has_meta = (e.flags & kHasMeta) != 0;
  return info;
}

void BlockIndex::Release(std::string_view key) {
  uint32_t s = FindSlot(key);
  if (s == kNone) return;  // deleted meanwhile
  Entry& e = At(s);
  if (e.readers == 0) return;  // deleted and stored again meanwhile
  if (--e.readers == 0) MaybeBecomeLeaf(s);
}

// ---- updates -----------------------------------------------------------------

void BlockIndex::Insert(std::string_view key, std::string_view parent, uint64_t length,
                        uint64_t now_ns, std::optional<uint32_t> crc32c, bool has_meta) {
  assert(proto::ValidKey(key) && FindSlot(key) == kNone);
  assert(length <= 0xffffffffu);
  uint32_t parent_slot = parent.empty() ? kNone : FindSlot(parent);
  uint32_t s = AllocSlot();
  Entry& e = At(s);
  std::memset(&e, 0, sizeof(e));
  std::memcpy(e.key, key.data(), key.size());
  e.key_len = static_cast<uint8_t>(key.size());
  e.length = static_cast<uint32_t>(length);
  e.stamp = NextStamp(now_ns);
  e.parent = parent_slot;
  e.children = 0;
  e.prev = e.next = kNone;
  e.crc32c = crc32c.value_or(0);
  e.flags = static_cast<uint8_t>(kInUse | InfoFlags(crc32c, has_meta));
  TableInsert(s);
  ++count_;
  bytes_ += length;
  if (shared_bytes_) shared_bytes_->fetch_add(length, std::memory_order_relaxed);
  if (parent_slot != kNone) {
    Entry& p = At(parent_slot);
    if (p.children++ == 0 && (p.flags & kInLeafList)) LeafUnlink(parent_slot);
  }
  LeafAppend(s);  // newest stamp: the tail
}

void BlockIndex::RemoveSlot(uint32_t slot) {
  Entry& e = At(slot);
  assert((e.flags & kInUse) && e.children == 0);
  if (e.flags & kInLeafList) LeafUnlink(slot);
  if (e.flags & kPinned) pins_.erase(slot);
  TableErase(slot);
  --count_;
  bytes_ -= e.length;
  if (shared_bytes_) shared_bytes_->fetch_sub(e.length, std::memory_order_relaxed);
  uint32_t parent = e.parent;
  e.flags = 0;
  e.next = free_head_;
  free_head_ = slot;
  if (parent != kNone) {
    assert(At(parent).children > 0);
    --At(parent).children;
    MaybeBecomeLeaf(parent);
  }
}

bool BlockIndex::Erase(std::string_view key, std::vector<std::string>* removed) {
  uint32_t x = FindSlot(key);
  if (x == kNone) return false;
  if (At(x).children > 0) {
    // Mark x's subtree: walk up from every block, memoizing (no cycles exist:
    // a new block is never anyone's parent, and Restore cuts loops).
    enum : uint8_t { kUnknown, kInside, kOutside };
    std::vector<uint8_t> state(slots_used_, kUnknown);
    state[x] = kInside;
    std::vector<uint32_t> path;
    std::vector<uint32_t> inside;
    for (uint32_t s = 0; s < slots_used_; ++s) {
      if (!(At(s).flags & kInUse) || state[s] != kUnknown) continue;
      path.clear();
      uint32_t v = s;
      uint8_t verdict = kOutside;
      while (true) {
        if (state[v] != kUnknown) {
          verdict = state[v];
          break;
        }
        path.push_back(v);
        if (At(v).parent == kNone) break;
        v = At(v).parent;
      }
      for (uint32_t p : path) {
        state[p] = verdict;
        if (verdict == kInside) inside.push_back(p);
      }
    }
    // Cut the subtree's internal links, then drop its blocks one by one.
    for (uint32_t s : inside) {
      At(s).parent = kNone;
      At(s).children = 0;
    }
    for (uint32_t s : inside) {
      removed->emplace_back(KeyOf(At(s)));
      RemoveSlot(s);
    }
    At(x).children = 0;
  }
  removed->emplace_back(KeyOf(At(x)));
  RemoveSlot(x);
  return true;
}

bool BlockIndex::Pin(std::string_view key, uint64_t until_ns) {
  uint32_t s = FindSlot(key);
  if (s == kNone) return false;
  Entry& e = At(s);
  if (e.flags & kInLeafList) LeafUnlink(s);
  e.flags |= kPinned;
  pins_[s] = until_ns;
  return true;
}

bool BlockIndex::Unpin(std::string_view key) {
  uint32_t s = FindSlot(key);
  if (s == kNone) return false;
  Entry& e = At(s);
  if (e.flags & kPinned) {
    e.flags &= ~kPinned;
    pins_.erase(s);
    MaybeBecomeLeaf(s);
  }
  return true;
}

void BlockIndex::ExpirePins(uint64_t now_ns) {
  std::vector<uint32_t> done;
  for (const auto& [slot, until] : pins_) {
    if (until <= now_ns) done.push_back(slot);
  }
  for (uint32_t s : done) {
    At(s).flags &= ~kPinned;
    pins_.erase(s);
    MaybeBecomeLeaf(s);
  }
}

// ---- eviction ----------------------------------------------------------------

void BlockIndex::EvictHead(std::vector<std::string>* evicted) {
  uint32_t s = leaf_head_;
  assert(s != kNone);
  evicted->emplace_back(KeyOf(At(s)));
  RemoveSlot(s);
}

bool BlockIndex::MakeRoom(uint64_t quota_bytes, uint64_t extra_bytes, std::string_view protect,
                          std::vector<std::string>* evicted) {
  if (extra_bytes > quota_bytes) return false;
  uint32_t p = protect.empty() ? kNone : FindSlot(protect);
  if (p != kNone && (At(p).flags & kInLeafList)) LeafUnlink(p);
  protected_ = p;
  bool ok = true;
  while (bytes_ + extra_bytes > quota_bytes) {
    if (leaf_head_ == kNone) {
      ok = false;
      break;
    }
    EvictHead(evicted);
  }
  protected_ = kNone;
  if (p != kNone) MaybeBecomeLeaf(p);
  return ok;
}

void BlockIndex::EvictIdle(uint64_t cutoff_ns, std::vector<std::string>* evicted) {
  while (leaf_head_ != kNone && At(leaf_head_).stamp < cutoff_ns) EvictHead(evicted);
}

// ---- start-up ----------------------------------------------------------------

void BlockIndex::Restore(std::vector<Restored> blocks) {
  std::vector<std::pair<uint32_t, std::string>> parents;
  for (Restored& b : blocks) {
    if (!proto::ValidKey(b.key) || b.length > 0xffffffffu || FindSlot(b.key) != kNone) continue;
    uint32_t s = AllocSlot();
    Entry& e = At(s);
    std::memset(&e, 0, sizeof(e));
    std::memcpy(e.key, b.key.data(), b.key.size());
    e.key_len = static_cast<uint8_t>(b.key.size());
    e.length = static_cast<uint32_t>(b.length);
    e.stamp = b.stamp;
    e.parent = kNone;
    e.prev = e.next = kNone;
    e.crc32c = b.crc32c.value_or(0);
    e.flags = static_cast<uint8_t>(kInUse | InfoFlags(b.crc32c, b.has_meta));
    last_stamp_ = std::max(last_stamp_, b.stamp);
    TableInsert(s);
    ++count_;
    bytes_ += b.length;
    if (shared_bytes_) shared_bytes_->fetch_add(b.length, std::memory_order_relaxed);
    if (!b.parent.empty()) parents.emplace_back(s, std::move(b.parent));
  }
  for (auto& [s, parent] : parents) {
    uint32_t p = FindSlot(parent);
    if (p == kNone || p == s) continue;
    At(s).parent = p;
    ++At(p).children;
  }
  // Cut loops (metadata written through S3 could name any parent).
  std::vector<uint8_t> state(slots_used_, 0);  // 0 new, 1 on the current path, 2 done
  std::vector<uint32_t> path;
  for (uint32_t s = 0; s < slots_used_; ++s) {
    if (!(At(s).flags & kInUse) || state[s] != 0) continue;
    path.clear();
    uint32_t v = s;
    while (state[v] == 0) {
      state[v] = 1;
      path.push_back(v);
      uint32_t p = At(v).parent;
      if (p == kNone) break;
      if (state[p] == 1) {  // v -> p closes a loop: cut it
        At(v).parent = kNone;
        --At(p).children;
        break;
      }
      v = p;
    }
    for (uint32_t q : path) state[q] = 2;
  }
  // The leaf list, oldest first.
  std::vector<uint32_t> leaves;
  for (uint32_t s = 0; s < slots_used_; ++s) {
    const Entry& e = At(s);
    if ((e.flags & kInUse) && e.children == 0 && !(e.flags & (kPinned | kInLeafList))) {
      leaves.push_back(s);
    }
  }
  std::sort(leaves.begin(), leaves.end(),
            [this](uint32_t a, uint32_t b) { return At(a).stamp < At(b).stamp; });
  for (uint32_t s : leaves) LeafInsertSorted(s);
}

// ---- introspection -----------------------------------------------------------

size_t BlockIndex::memory_bytes() const {
  return chunks_.size() * kChunkEntries * sizeof(Entry) + table_.size() * sizeof(uint32_t) +
         pins_.size() * 32;
}

std::vector<std::string> BlockIndex::LeafOrder() const {
  std::vector<std::string> out;
  for (uint32_t s = leaf_head_; s != kNone; s = At(s).next) out.emplace_back(KeyOf(At(s)));
  return out;
}

}  // namespace strata::kvcache
