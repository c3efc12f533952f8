#include "adopt/jsonc.h"

#include <gtest/gtest.h>

namespace udon::adopt {
namespace {

TEST(Jsonc, CommentsAndTrailingCommasBecomeSpacesKeepingOffsets) {
  const std::string text = "{ // note\n  \"a\": \"x // y\", /* b */ \"b\": [1, 2,],\n}";
  auto blanked = BlankJsonc(text);
  ASSERT_TRUE(blanked.ok());
  EXPECT_EQ(blanked->size(), text.size());
  EXPECT_EQ(blanked->find("note"), std::string::npos);
  EXPECT_NE(blanked->find("\"x // y\""), std::string::npos);  // inside a string: kept
  auto value = ParseJsonc(text);
  ASSERT_TRUE(value.ok()) << value.error().Describe();
  EXPECT_EQ((*value)["b"].size(), 2u);
}

TEST(Jsonc, UnterminatedCommentAndDuplicateNamesAreInvalid) {
  EXPECT_EQ(ParseJsonc("{ /* open").error().code, "adopt.file_invalid");
  auto duplicate = ParseJsonc("{\"a\": 1, \"a\": 2}");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code, "adopt.file_invalid");
  EXPECT_EQ(duplicate.error().details["jsonCode"], "json.duplicate_key");
}

TEST(Jsonc, FindMemberGivesTheValueBytesAndTheIndentOfItsLine) {
  const std::string text =
      "{\n  \"servers\": {\n    // c\n    \"m\\u0065m\": { \"command\": \"x\" }, \"t\": 1\n  }\n}\n";
  auto blanked = BlankJsonc(text);
  ASSERT_TRUE(blanked.ok());
  auto span = FindMember(*blanked, {"servers", "mem"});
  ASSERT_TRUE(span.ok()) << span.error().Describe();
  EXPECT_EQ(text.substr(span->begin, span->end - span->begin), "{ \"command\": \"x\" }");
  EXPECT_EQ(span->indent, "    ");
  EXPECT_EQ(text.substr(span->key_begin, 10), "\"m\\u0065m\"");
  auto members = ObjectMembers(*blanked, *span);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 1u);
  EXPECT_EQ((*members)[0].first, "command");
  EXPECT_EQ(FindMember(*blanked, {"servers", "nope"}).error().code, "adopt.entry_missing");
  EXPECT_EQ(FindMember(*blanked, {"servers", "t", "x"}).error().code, "adopt.entry_missing");
}

}  // namespace
}  // namespace udon::adopt
