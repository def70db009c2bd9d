#include "object/read_ahead.h"

#include <gtest/gtest.h>

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
  ASSERT_TRUE((*reader)->Unlock(std::string(32, 'k')).ok());
  {
    ReadAhead abandoned(**reader, 0, enc.size());
    auto first = abandoned.Next();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->size(), ReadAhead::kPieceBytes);
  }  // destroyed mid-range: the helper stops and is joined
}

}  // namespace
}  // namespace strata::object
