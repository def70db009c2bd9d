#include "common/log.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(LogTest, JsonStringEscapesAndKeepsLinesParsable) {
  EXPECT_EQ(JsonString("plain"), "\"plain\"");
  EXPECT_EQ(JsonString("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(JsonString(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // valid UTF-8 stays
  EXPECT_EQ(JsonString("bad\xff"), "\"bad\\u00ff\"");       // not UTF-8: escaped bytes
}

TEST(LogTest, LinesAreJsonObjectsOrText) {
  testing::internal::CaptureStderr();
  STRATA_LOG("moved %d objects to \"%s\"", 3, "cold");
  std::string line = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(line.starts_with("{\"time\":\"")) << line;
  EXPECT_NE(line.find("\"level\":\"info\",\"source\":\"log_test.cc:"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with(",\"msg\":\"moved 3 objects to \\\"cold\\\"\"}\n")) << line;

  SetLogFormat(LogFormat::kText);
  testing::internal::CaptureStderr();
  STRATA_LOG("plain %s", "words");
  line = testing::internal::GetCapturedStderr();
  SetLogFormat(LogFormat::kJson);
  EXPECT_NE(line.find("Z log_test.cc:"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with(" plain words\n")) << line;

  testing::internal::CaptureStderr();
  LogJson("\"type\":\"access\",\"status\":200");
  line = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(line.starts_with("{\"time\":\"")) << line;
  EXPECT_TRUE(line.ends_with("\",\"type\":\"access\",\"status\":200}\n")) << line;
}

}  // namespace
}  // namespace strata
