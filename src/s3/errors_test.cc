// How statuses become S3 errors: by code and Detail, never by message text.
#include "s3/errors.h"

#include <gtest/gtest.h>

#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"

namespace strata::s3 {
namespace {

TEST(FromStatusTest, NotFoundBecomesTheErrorOfWhatIsMissing) {
  EXPECT_EQ(FromStatus(NotFound(Detail::kBucket, "x")).code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(FromStatus(NotFound(Detail::kKey, "x"), ErrorCode::kNoSuchBucket).code,
            ErrorCode::kNoSuchKey);
  EXPECT_EQ(FromStatus(NotFound(Detail::kUpload, "x")).code, ErrorCode::kNoSuchUpload);
  EXPECT_EQ(FromStatus(NotFound(Detail::kVersion, "x")).code, ErrorCode::kNoSuchVersion);
  // Untagged: the caller's reading, whatever the text says.
  EXPECT_EQ(FromStatus(NotFound("bucket b")).code, ErrorCode::kNoSuchKey);
  EXPECT_EQ(FromStatus(NotFound("upload u"), ErrorCode::kNoSuchBucket).code,
            ErrorCode::kNoSuchBucket);
  // Context wrapping keeps the tag.
  EXPECT_EQ(FromStatus(NotFound(Detail::kUpload, "u").WithContext("complete")).code,
            ErrorCode::kNoSuchUpload);
}

TEST(FromBodyStatusTest, AMalformedTrailerIsToldByItsDetail) {
  EXPECT_EQ(FromBodyStatus(InvalidArgument(Detail::kTrailer, "aws-chunked: too many")).code,
            ErrorCode::kMalformedTrailerError);
  // The word alone decides nothing: framing errors stay IncompleteBody.
  EXPECT_EQ(FromBodyStatus(InvalidArgument("aws-chunked: malformed trailer")).code,
            ErrorCode::kIncompleteBody);
  EXPECT_EQ(FromBodyStatus(InvalidArgument("aws-chunked: invalid chunk size")).code,
            ErrorCode::kIncompleteBody);
  EXPECT_EQ(FromBodyStatus(PermissionDenied("aws-chunked: trailer signature does not match")).code,
            ErrorCode::kSignatureDoesNotMatch);
}

// The engine tags each NotFound with what is missing; FromStatus turns that
// into the S3 code whatever the caller's fallback.
class EngineNotFoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    auto store = storage::OpenPlainDataStore(fs_.get(), "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auto engine = object::ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    object::BucketRecord bucket;
    bucket.region = "us-east-1";
    ASSERT_TRUE(engine_->CreateBucket("b", bucket).ok());
  }

  static ErrorCode Mapped(const Status& st) {
    EXPECT_EQ(st.code(), Code::kNotFound) << st.ToString();
    return FromStatus(st, ErrorCode::kInternalError).code;
  }

  std::unique_ptr<io::MemFileSystem> fs_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<object::ObjectEngine> engine_;
};

TEST_F(EngineNotFoundTest, BucketKeyAndUpload) {
  EXPECT_EQ(Mapped(engine_->GetBucket("nope").status()), ErrorCode::kNoSuchBucket);
  EXPECT_EQ(Mapped(engine_->HeadObject("nope", "k").status()), ErrorCode::kNoSuchBucket);
  EXPECT_EQ(Mapped(engine_->HeadObject("b", "k").status()), ErrorCode::kNoSuchKey);
  EXPECT_EQ(Mapped(engine_->OpenObject("b", "k").status()), ErrorCode::kNoSuchKey);
  EXPECT_EQ(Mapped(engine_->NewWriter("nope", "k", {}).status()), ErrorCode::kNoSuchBucket);
  EXPECT_EQ(Mapped(engine_->DeleteObject("nope", "k")), ErrorCode::kNoSuchBucket);
  EXPECT_EQ(Mapped(engine_->GetUpload("b", "k", "not-an-id").status()), ErrorCode::kNoSuchUpload);
  EXPECT_EQ(Mapped(engine_->CreateUpload("nope", "k", {}).status()), ErrorCode::kNoSuchBucket);
  object::CompleteProblem problem = object::CompleteProblem::kNone;
  EXPECT_EQ(Mapped(engine_->CompleteUpload("b", "k", "not-an-id", {{1, "e"}}, &problem).status()),
            ErrorCode::kNoSuchUpload);
}

TEST_F(EngineNotFoundTest, BucketDeletedWhileAWriteWasInFlight) {
  // PutObject's commit on a bucket deleted meanwhile: NoSuchBucket, not NoSuchKey.
  auto writer = engine_->NewWriter("b", "k", {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("data").ok());
  ASSERT_TRUE(engine_->DeleteBucket("b").ok());
  EXPECT_EQ(FromStatus((*writer)->Commit().status(), ErrorCode::kNoSuchKey).code,
            ErrorCode::kNoSuchBucket);
}

}  // namespace
}  // namespace strata::s3
