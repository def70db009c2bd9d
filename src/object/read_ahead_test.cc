#include "object/read_ahead.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "crypto/chunk_cipher.h"
#include "common/thread_count_test_util.h"
#include "io/fault_fs.h"
#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "object/plain_engine_test_util.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

class ReadAheadTest : public PlainEngineTest {
 protected:

  std::string Put(const std::string& key, size_t n, WriteOptions o = {}) {
    std::string data(n, '\0');
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<char>((i * 7919) >> 5);
    auto w = engine_->NewWriter("b", key, {}, std::move(o));
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(data).ok());
    EXPECT_TRUE((*w)->Commit().ok());
    return data;
  }
  std::string Drain(ReadAhead& r, Status* failed = nullptr) {
    std::string out;
    while (true) {
      auto piece = r.Next();
      if (!piece.ok()) {
        if (failed) *failed = piece.status();
        return out;
      }
      if (piece->empty()) return out;
      out.append(*piece);
    }
  }
};

TEST_F(ReadAheadTest, ReturnsTheRangeInOrderPlainAndEncrypted) {
  WriteOptions sse;
  sse.sse.mode = SseMode::kS3;
  sse.sse.wrapped_key = "w";
  sse.data_key = std::string(32, 'k');
  const std::string plain = Put("plain", 5 * ReadAhead::kPieceBytes + 123);
  const std::string enc = Put("enc", 4 * ReadAhead::kPieceBytes + 7, sse);
  for (const auto& [key, data] : {std::pair{"plain", &plain}, std::pair{"enc", &enc}}) {
    auto reader = engine_->OpenObject("b", key);
    ASSERT_TRUE(reader.ok());
    if ((*reader)->record().sse.on()) ASSERT_TRUE((*reader)->Unlock(std::string(32, 'k')).ok());
    for (auto [from, to] : {std::pair<uint64_t, uint64_t>{0, data->size()}, {77, data->size() - 5},
                            {ReadAhead::kPieceBytes, ReadAhead::kPieceBytes + 1}, {3, 3}}) {
      ReadAhead ahead(**reader, from, to);
      EXPECT_TRUE(Drain(ahead) == data->substr(from, to - from)) << key << " " << from;
    }
  }
}

// The pieces' buffers outlive the ReadAhead in a pool: the next GET takes
// them back instead of faulting in (and zeroing) fresh memory; a range of
// one piece or less is read on the consumer's thread with one buffer.
TEST_F(ReadAheadTest, BuffersComeFromAPoolKeptAcrossReads) {
  const std::string data = Put("pooled", 3 * ReadAhead::kPieceBytes + 5);
  auto reader = engine_->OpenObject("b", "pooled");
  ASSERT_TRUE(reader.ok());
  {
    ReadAhead ahead(**reader, 0, data.size());
    EXPECT_TRUE(Drain(ahead) == data);
  }
  const size_t pooled = PieceBuffer::Pooled();
  EXPECT_GE(pooled, ReadAhead::kPieces);
  {
    ReadAhead ahead(**reader, 0, data.size());
    EXPECT_EQ(PieceBuffer::Pooled(), pooled - ReadAhead::kPieces);  // taken, not allocated
    EXPECT_TRUE(Drain(ahead) == data);
  }
  EXPECT_EQ(PieceBuffer::Pooled(), pooled);
  {
    // One piece: read by Next itself, one buffer taken only when it reads.
    ReadAhead ahead(**reader, 10, 10 + ReadAhead::kPieceBytes);
    EXPECT_EQ(PieceBuffer::Pooled(), pooled);
    auto piece = ahead.Next();
    ASSERT_TRUE(piece.ok());
    EXPECT_EQ(PieceBuffer::Pooled(), pooled - 1);
    EXPECT_TRUE(*piece == std::string_view(data).substr(10, ReadAhead::kPieceBytes));
    auto end = ahead.Next();
    ASSERT_TRUE(end.ok());
    EXPECT_TRUE(end->empty());
  }
  EXPECT_EQ(PieceBuffer::Pooled(), pooled);
  // The pool keeps at most kPooledBuffers idle buffers.
  {
    std::vector<PieceBuffer> many;
    for (size_t i = 0; i < PieceBuffer::kPooledBuffers + 3; ++i) many.push_back(PieceBuffer::Take());
  }
  EXPECT_EQ(PieceBuffer::Pooled(), PieceBuffer::kPooledBuffers);
}

TEST_F(ReadAheadTest, AnErrorEndsTheRangeAndAStoppedConsumerJoins) {
  WriteOptions sse;
  sse.sse.mode = SseMode::kS3;
  sse.sse.wrapped_key = "w";
  sse.data_key = std::string(32, 'k');
  const std::string enc = Put("enc", 3 * ReadAhead::kPieceBytes, sse);
  auto reader = engine_->OpenObject("b", "enc");
  ASSERT_TRUE(reader.ok());
  {
    ReadAhead locked(**reader, 0, enc.size());  // no key: every read fails
    Status failed;
    EXPECT_EQ(Drain(locked, &failed), "");
    EXPECT_EQ(failed.detail(), Detail::kSseKey);
    EXPECT_FALSE(locked.Next().ok());  // stays failed
  }
  {
    ReadAhead small(**reader, 0, 100);  // read on this thread: the same answers
    Status failed;
    EXPECT_EQ(Drain(small, &failed), "");
    EXPECT_EQ(failed.detail(), Detail::kSseKey);
    EXPECT_FALSE(small.Next().ok());
  }
  ASSERT_TRUE((*reader)->Unlock(std::string(32, 'k')).ok());
  {
    ReadAhead abandoned(**reader, 0, enc.size());
    auto first = abandoned.Next();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->size(), ReadAhead::kPieceBytes);
  }  // destroyed mid-range: the helper stops and is joined
}

// An allocation failing inside a read (std::bad_alloc from the io seam) ends
// the range with an error, on a bulk thread and on the consumer's: before,
// it ended the process (a bulk thread's task threw) or the consumer's call.
TEST_F(ReadAheadTest, AnExceptionInAReadEndsTheRangeWithAnError) {
  io::FaultFileSystem fault(mem_.get());
  auto kv = meta::NewMemStore();
  std::unique_ptr<storage::DataStore> store;
  std::unique_ptr<ObjectEngine> engine;
  OpenPlainEngine(&fault, "/faulty", kv.get(), &store, &engine);
  std::string data(3 * ReadAhead::kPieceBytes + 99, 'x');
  auto w = engine->NewWriter("b", "k", {}, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(data).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  auto reader = engine->OpenObject("b", "k");
  ASSERT_TRUE(reader.ok());
  io::FaultRule throws{io::FaultOp::kRead, "", IOError("unused")};
  throws.throw_bad_alloc = true;
  fault.AddRule(throws);
  for (uint64_t to : {data.size(), uint64_t{100}}) {  // on the bulk threads; on this thread
    ReadAhead ahead(**reader, 0, to);
    Status failed;
    EXPECT_EQ(Drain(ahead, &failed), "") << to;
    EXPECT_EQ(failed.code(), Code::kUnavailable) << to;
    EXPECT_FALSE(ahead.Next().ok()) << to;  // stays failed
  }
  fault.ClearRules();
  ReadAhead after(**reader, 0, data.size());  // and nothing is left stuck
  EXPECT_TRUE(Drain(after) == data);
}

// An encrypted range of more than two pieces is decrypted by two helpers
// taking pieces in turn; the consumer still gets them in order, and a chunk
// that does not authenticate ends the range exactly where it lies.
TEST_F(ReadAheadTest, EncryptedRangesAreDecryptedByTwoHelpersInOrder) {
  WriteOptions sse;
  sse.sse.mode = SseMode::kS3;
  sse.sse.wrapped_key = "w";
  sse.data_key = std::string(32, 'k');
  const std::string plain = Put("plain2", 6 * ReadAhead::kPieceBytes);
  const std::string enc = Put("enc2", 6 * ReadAhead::kPieceBytes + 99, sse);
  auto p = engine_->OpenObject("b", "plain2");
  auto e = engine_->OpenObject("b", "enc2");
  ASSERT_TRUE(p.ok() && e.ok());
  ASSERT_TRUE((*e)->Unlock(std::string(32, 'k')).ok());
  {
    ReadAhead ahead(**p, 0, plain.size());
    EXPECT_EQ(ahead.helpers(), 1u);
    EXPECT_TRUE(Drain(ahead) == plain);
  }
  for (int round = 0; round < 5; ++round) {
    ReadAhead ahead(**e, 5, enc.size());
    EXPECT_EQ(ahead.helpers(), ReadAhead::kDecryptHelpers);
    EXPECT_TRUE(Drain(ahead) == enc.substr(5));
  }
  {
    ReadAhead two_pieces(**e, 0, 2 * ReadAhead::kPieceBytes);  // not worth a second reader
    EXPECT_EQ(two_pieces.helpers(), 1u);
    EXPECT_TRUE(Drain(two_pieces) == enc.substr(0, 2 * ReadAhead::kPieceBytes));
  }
  // Damage a chunk in the middle of piece 3 (3.5 MiB in): pieces 0-2 arrive
  // whole, then the error, never the damaged piece.
  const std::string path = DataPath((*e)->record().file_id);
  const size_t chunk = (3 * ReadAhead::kPieceBytes + ReadAhead::kPieceBytes / 2) / crypto::kChunkBytes;
  FlipByte(path, chunk * crypto::kSealedChunkBytes + 20);
  auto damaged = engine_->OpenObject("b", "enc2");
  ASSERT_TRUE(damaged.ok());
  ASSERT_TRUE((*damaged)->Unlock(std::string(32, 'k')).ok());
  for (int round = 0; round < 5; ++round) {
    ReadAhead ahead(**damaged, 0, enc.size());
    Status failed;
    EXPECT_TRUE(Drain(ahead, &failed) == enc.substr(0, 3 * ReadAhead::kPieceBytes));
    EXPECT_EQ(failed.code(), Code::kCorruption);
    EXPECT_FALSE(ahead.Next().ok());  // stays failed
  }
}


// Ranges read ahead in steps on the shared bulk threads: 40 encrypted ranges
// at once (two lanes each) start no thread, read interleaved they arrive
// whole and in order, and ranges dropped with steps still queued cost
// nothing.
TEST_F(ReadAheadTest, ManyRangesShareTheBulkThreadsPieceByPiece) {
  WriteOptions sse;
  sse.sse.mode = SseMode::kS3;
  sse.sse.wrapped_key = "w";
  sse.data_key = std::string(32, 'k');
  const std::string data = Put("many", 5 * ReadAhead::kPieceBytes + 777, sse);
  constexpr int kRanges = 40;  // many more than the bulk threads
  std::vector<std::unique_ptr<ObjectReader>> readers;  // one each: a reader is not thread-safe
  for (int i = 0; i < 2 * kRanges; ++i) {
    auto r = engine_->OpenObject("b", "many");
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE((*r)->Unlock(std::string(32, 'k')).ok());
    readers.push_back(std::move(*r));
  }
  // Dropped at once, their first steps still queued: those do nothing (their
  // readers go too: a late read through one is a use after free for ASan),
  // and every buffer is back in the pool when the last destructor returns.
  constexpr int kDropped = 12;  // 4 buffers each: within the pool's cap
  const size_t pooled = PieceBuffer::Pooled();
  {
    std::vector<std::unique_ptr<ReadAhead>> dropped;
    for (int i = 0; i < kDropped; ++i) {
      dropped.push_back(std::make_unique<ReadAhead>(*readers[kRanges + i], 0, data.size()));
    }
  }
  for (int i = 0; i < kDropped; ++i) readers[kRanges + i].reset();
  EXPECT_EQ(PieceBuffer::Pooled(),
            std::min(PieceBuffer::kPooledBuffers, std::max<size_t>(pooled, 4 * kDropped)));
  const int before = ThreadsNow();
  std::vector<std::unique_ptr<ReadAhead>> ranges;
  std::vector<std::string> got(kRanges);
  for (int i = 0; i < kRanges; ++i) {
    const uint64_t from = (i * 40961) % ReadAhead::kPieceBytes;
    ranges.push_back(std::make_unique<ReadAhead>(*readers[i], from, data.size()));
    ASSERT_EQ(ranges.back()->helpers(), ReadAhead::kDecryptHelpers);
  }
  EXPECT_LE(ThreadsNow(), before) << "a thread started per range";
  for (bool more = true; more;) {  // one piece from each in turn
    more = false;
    for (int i = 0; i < kRanges; ++i) {
      auto piece = ranges[i]->Next();
      ASSERT_TRUE(piece.ok()) << piece.status().ToString();
      if (piece->empty()) continue;
      more = true;
      got[i].append(*piece);
    }
  }
  for (int i = 0; i < kRanges; ++i) {
    EXPECT_TRUE(got[i] == data.substr((i * 40961) % ReadAhead::kPieceBytes)) << i;
  }
}

}  // namespace
}  // namespace strata::object
