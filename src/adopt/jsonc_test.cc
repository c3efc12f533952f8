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

// Issue 38 item 7: VS Code's reader ends a // comment at a lone CR, other hosts' readers
// do not; an entry hidden behind one would be run by one host and unseen by adopt. A line
// break the readers disagree on inside a // comment makes the file invalid.
TEST(Jsonc, ALineBreakTheHostsReadDifferentlyInACommentIsRefused) {
  const std::string hidden = "{ \"servers\": { // note\r\"evil\": { \"command\": \"sh\" },\n \"ok\": {} } }";
  auto lone_cr = ParseJsonc(hidden);
  ASSERT_FALSE(lone_cr.ok()) << lone_cr->dump();
  EXPECT_EQ(lone_cr.error().code, "adopt.file_invalid");
  for (const std::string ambiguous : {"\v", "\f", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    const std::string text = "{ \"servers\": { // a" + ambiguous + "\"evil\": {},\n \"ok\": {} } }";
    auto refused = ParseJsonc(text);
    ASSERT_FALSE(refused.ok()) << text;
    EXPECT_EQ(refused.error().code, "adopt.file_invalid") << text;
  }
  // CRLF ends a comment for every reader; in a string or a /* */ comment these end nothing.
  auto crlf = ParseJsonc("{ // note\r\n\"servers\": { \"a\": { \"x\": \"\\r\xE2\x80\xA8\" } } }");
  ASSERT_TRUE(crlf.ok()) << crlf.error().Describe();
  EXPECT_TRUE((*crlf)["servers"].contains("a"));
  EXPECT_TRUE(ParseJsonc("{ /* a\rb\x0b */ \"servers\": {} }").ok());
}

}  // namespace
}  // namespace udon::adopt
