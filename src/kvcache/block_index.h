// The in-memory index of one KV namespace: which blocks are stored, their
// length, their chain parent, and what to evict first.
//
// Eviction is tail-first: only blocks with no stored children ("leaves") that
// are not pinned (and not being read) are candidates, oldest last access first. Evicting a leaf may
// turn its parent into a leaf, which then competes by its own last access. So
// whatever remains is always prefix-closed along each chain (a stored block's
// stored parent is never evicted before it), and LOOKUP's "longest stored
// prefix" never stops at a hole that hides stored blocks behind it.
//
// Memory per block (x86-64): one 104-byte Entry (key inline, no heap node),
// plus the open-addressing table: one u32 per bucket at a load factor between
// 3/8 and 3/4 while the index grows (5.3 to 10.7 bytes; the table never
// shrinks), plus at most one partly used chunk of kChunkEntries Entries.
// About 112 bytes per block in all (10M blocks = 1.1 GB; bench `kv_index`
// measures it); the block bytes themselves are on the drives.
// Pins live in a side map (only pinned blocks pay for them).
//
// Not thread-safe: the owner (one Namespace) serializes calls.
#pragma once

#include <atomic>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kvcache/proto/frame.h"

namespace strata::kvcache {

class BlockIndex {
 public:
  struct Entry {
    char key[proto::kMaxKeyBytes];
    uint64_t stamp;     // last access (PUT or GET), ns; strictly increasing per index
    uint32_t length;    // block bytes (blocks are at most 1 GiB)
    uint32_t parent;    // slot of the stored parent, kNone for a root or an absent parent
    uint32_t children;  // stored blocks naming this one as parent
    uint32_t prev;      // leaf list (evictable: no children, not pinned or read), oldest first;
    uint32_t next;      // the free list reuses `next`
    uint32_t crc32c;    // of the whole block, as the writer sent it (kHasCrc)
    uint16_t readers;   // GETs streaming this block now (Acquire/Release)
    uint8_t key_len;
    uint8_t flags;
  };
  static_assert(sizeof(Entry) == 104, "the per-block state: a 64-byte key and 40 bytes");
  static constexpr size_t kEntryBytes = sizeof(Entry);
  static constexpr size_t kChunkEntries = 4096;

  // What GET needs to know of a stored block besides its bytes.
  struct BlockInfo {
    uint64_t length = 0;
    std::optional<uint32_t> crc32c;  // absent: not recorded (the block must be read to know)
    bool has_meta = false;           // per-block metadata stored with the object
  };

  // A block found on the drives at start-up.
  struct Restored {
    std::string key;
    std::string parent;  // "" if none recorded
    uint64_t length = 0;
    uint64_t stamp = 0;  // e.g. the object's mtime
    std::optional<uint32_t> crc32c;
    bool has_meta = false;
  };

  explicit BlockIndex(uint64_t hash_seed);
  BlockIndex(const BlockIndex&) = delete;
  BlockIndex& operator=(const BlockIndex&) = delete;

  // LOOKUP: how many leading keys are stored. Changes nothing.
  size_t PrefixLength(std::span<const std::string_view> keys) const;
  // The block's length, or nullopt if absent. Changes nothing.
  std::optional<uint64_t> Find(std::string_view key) const;
  // GET: refreshes recency; false if absent.
  bool Touch(std::string_view key, uint64_t now_ns);
  // GET: refreshes recency and keeps the block from eviction until Release,
  // so a GET that announced the block's length can still read it. Returns
  // what GET needs of it; nullopt if absent (or read by 65535 GETs at once).
  std::optional<BlockInfo> Acquire(std::string_view key, uint64_t now_ns);
  void Release(std::string_view key);
  // Adds a block that is absent (asserted), linked to `parent` when that is
  // stored (an absent parent makes the block a chain root for eviction).
  void Insert(std::string_view key, std::string_view parent, uint64_t length, uint64_t now_ns,
              std::optional<uint32_t> crc32c = std::nullopt, bool has_meta = false);
  // Removes `key` and every stored descendant (they would be unreachable by a
  // prefix lookup anyway); appends their keys (`key` last) to *removed.
  bool Erase(std::string_view key, std::vector<std::string>* removed);
  // Pinned blocks are never evicted until `until_ns` (or Unpin).
  bool Pin(std::string_view key, uint64_t until_ns);
  bool Unpin(std::string_view key);
  // Releases pins that ran out by `now_ns`.
  void ExpirePins(uint64_t now_ns);

  // Evicts leaves, oldest first, until bytes() + extra_bytes <= quota_bytes;
  // `protect` (the parent of the block about to be added) is not evicted.
  // Appends evicted keys to *evicted. False if the room cannot be made (then
  // some blocks may have been evicted; none if extra_bytes > quota_bytes).
  bool MakeRoom(uint64_t quota_bytes, uint64_t extra_bytes, std::string_view protect,
                std::vector<std::string>* evicted);
  // TTL: evicts leaves last accessed before `cutoff_ns`, tail-first (a parent
  // whose children all go and that is itself idle goes too).
  void EvictIdle(uint64_t cutoff_ns, std::vector<std::string>* evicted);

  // Start-up: adds blocks (absent keys, lengths <= UINT32_MAX) and links
  // their parents once all are in; loops in recorded parents are cut.
  void Restore(std::vector<Restored> blocks);

  size_t blocks() const { return count_; }
  uint64_t bytes() const { return bytes_; }
  // The newest access stamp (PUT or GET since start-up, or the newest stamp
  // restored: a block's write time); 0 for an index that never held a block.
  uint64_t last_access_ns() const { return last_stamp_; }
  // A counter shared by every namespace's index (the KV tier's global cap):
  // bytes() changes are added to it as they happen. Null: none.
  void set_shared_bytes(std::atomic<uint64_t>* total) { shared_bytes_ = total; }
  // Memory held by the index structures (for STATS/reports).
  size_t memory_bytes() const;
  // Keys in eviction order (tests).
  std::vector<std::string> LeafOrder() const;

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  enum Flags : uint8_t { kInUse = 1, kPinned = 2, kInLeafList = 4, kHasCrc = 8, kHasMeta = 16 };
  static uint8_t InfoFlags(const std::optional<uint32_t>& crc32c, bool has_meta) {
    return static_cast<uint8_t>((crc32c ? kHasCrc : 0) | (has_meta ? kHasMeta : 0));
  }

  Entry& At(uint32_t slot) { return chunks_[slot / kChunkEntries][slot % kChunkEntries]; }
  const Entry& At(uint32_t slot) const {
    return chunks_[slot / kChunkEntries][slot % kChunkEntries];
  }
  static std::string_view KeyOf(const Entry& e) { return {e.key, e.key_len}; }
  uint64_t Hash(std::string_view key) const;
  uint32_t FindSlot(std::string_view key) const;  // kNone if absent
  void TableInsert(uint32_t slot);
  void TableErase(uint32_t slot);
  void Rehash(size_t buckets);
  uint32_t AllocSlot();
  uint64_t NextStamp(uint64_t now_ns);
  // Leaf list.
  void LeafUnlink(uint32_t slot);
  void LeafAppend(uint32_t slot);
  void LeafInsertSorted(uint32_t slot);
  // Puts a block into the leaf list if it now qualifies.
  void MaybeBecomeLeaf(uint32_t slot);
  // Removes a block with no children; updates its parent.
  void RemoveSlot(uint32_t slot);
  void EvictHead(std::vector<std::string>* evicted);

  uint64_t seed_;
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  uint32_t slots_used_ = 0;  // high-water mark of allocated slots
  uint32_t free_head_ = kNone;
  std::vector<uint32_t> table_;  // slot + 1; 0 = empty bucket; size is a power of two
  size_t count_ = 0;
  uint64_t bytes_ = 0;
  std::atomic<uint64_t>* shared_bytes_ = nullptr;
  uint64_t last_stamp_ = 0;
  uint32_t leaf_head_ = kNone, leaf_tail_ = kNone;
  std::unordered_map<uint32_t, uint64_t> pins_;  // slot -> until_ns
  uint32_t protected_ = kNone;                   // kept out of the leaf list during MakeRoom
};

}  // namespace strata::kvcache
