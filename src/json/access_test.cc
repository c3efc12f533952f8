#include "json/access.h"

#include <gtest/gtest.h>

namespace udon::json {
namespace {

TEST(Access, ChildEscapesTheTokenAndAppendsIndices) {
  EXPECT_EQ(Child("/a", "b/c~d"), "/a/b~1c~0d");
  EXPECT_EQ(Child("", std::size_t{3}), "/3");
}

TEST(Access, AbsentOrMistypedMembersReadAsNothing) {
  const Value doc = {{"s", "text"}, {"n", 1}, {"a", {1, 2}}, {"o", {{"k", "v"}}}};
  EXPECT_EQ(StringMember(doc, "s"), "text");
  EXPECT_EQ(StringMember(doc, "n"), "");
  EXPECT_EQ(StringMember(doc, "missing"), "");
  EXPECT_EQ(StringMember(Value::array({1}), "s"), "");
  EXPECT_EQ(StringMember(nullptr, "s"), "");
  EXPECT_EQ(StringMember(Member(doc, "o"), "k"), "v");
  EXPECT_EQ(Member(Value(5), "s"), nullptr);
  EXPECT_EQ(Member(static_cast<const Value*>(nullptr), "s"), nullptr);
  ASSERT_NE(ArrayMember(doc, "a"), nullptr);
  EXPECT_EQ(ArrayMember(doc, "o"), nullptr);
  ASSERT_NE(ObjectMember(doc, "o"), nullptr);
  EXPECT_EQ(ObjectMember(doc, "a"), nullptr);
}

}  // namespace
}  // namespace udon::json
