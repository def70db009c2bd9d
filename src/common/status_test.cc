#include "common/status.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(StatusTest, DetailTravelsWithTheStatus) {
  EXPECT_EQ(Status::OK().detail(), Detail::kNone);
  EXPECT_EQ(NotFound("x").detail(), Detail::kNone);
  const Status st = NotFound(Detail::kUpload, "upload u");
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(st.detail(), Detail::kUpload);
  const Status wrapped = st.WithContext("complete");
  EXPECT_EQ(wrapped.detail(), Detail::kUpload);
  EXPECT_EQ(wrapped.message(), "complete: upload u");
  Result<int> r = InvalidArgument(Detail::kTrailer, "t");
  EXPECT_EQ(r.status().detail(), Detail::kTrailer);
  // An OK code carries no detail, whatever is passed.
  EXPECT_TRUE(Status(Code::kOk, "", Detail::kKey).ok());
  EXPECT_EQ(Status(Code::kOk, "", Detail::kKey).detail(), Detail::kNone);
}

}  // namespace
}  // namespace strata
