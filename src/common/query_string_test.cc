#include "common/query_string.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(QueryStringTest, DecodesPairsInOrderWithRepeats) {
  QueryString q = QueryString::Parse("prefix=dir+one%2F%C3%A9%2Bx&delimiter=%2F&a=1&a=2");
  EXPECT_FALSE(q.malformed());
  EXPECT_EQ(q.Pairs(), (Pairs{{"prefix", "dir one/\xC3\xA9+x"}, {"delimiter", "/"}, {"a", "1"},
                              {"a", "2"}}));
  ASSERT_NE(q.Find("a"), nullptr);
  EXPECT_EQ(*q.Find("a"), "1");  // the first of a repeated name
  EXPECT_EQ(q.Find("A"), nullptr);  // names are case-sensitive
  EXPECT_EQ(q.raw(), "prefix=dir+one%2F%C3%A9%2Bx&delimiter=%2F&a=1&a=2");
}

TEST(QueryStringTest, ValuelessAndEmptyParts) {
  QueryString q = QueryString::Parse("uploads&&x=&list-type=2&");
  EXPECT_EQ(q.Pairs(), (Pairs{{"uploads", ""}, {"x", ""}, {"list-type", "2"}}));
  EXPECT_EQ(q.ValuelessNames(), std::vector<std::string>{"uploads"});
  EXPECT_TRUE(q.Has("uploads"));
  EXPECT_TRUE(q.params()[1].has_value);  // "x=" has an (empty) value
  EXPECT_FALSE(q.params()[0].has_value);
  EXPECT_TRUE(QueryString::Parse("").empty());
  EXPECT_TRUE(QueryString::Parse("&&").empty());
  // Only the first '=' separates; the rest belongs to the value.
  EXPECT_EQ(QueryString::Parse("k=a=b").Pairs(), (Pairs{{"k", "a=b"}}));
}

TEST(QueryStringTest, BrokenEscapesKeepTheirRawText) {
  QueryString q = QueryString::Parse("ok=1&bad=%zz&%G0=v&tail=%4");
  EXPECT_TRUE(q.malformed());
  ASSERT_EQ(q.params().size(), 4u);
  EXPECT_TRUE(q.params()[0].decoded);
  EXPECT_FALSE(q.params()[1].decoded);
  EXPECT_EQ(q.params()[1].value, "%zz");
  EXPECT_EQ(q.params()[2].name, "%G0");
  EXPECT_EQ(q.params()[2].value, "v");
  EXPECT_EQ(q.params()[3].value, "%4");
  EXPECT_FALSE(QueryString::Parse("a=%41").malformed());
  EXPECT_EQ(*QueryString::Parse("a=%41").Find("a"), "A");
}

}  // namespace
}  // namespace strata
