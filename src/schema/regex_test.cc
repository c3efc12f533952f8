#include "schema/internal/regex.h"

#include <string>

#include <gtest/gtest.h>

namespace udon::schema::internal {
namespace {

RegexOutcome Search(std::string_view pattern, std::string_view subject) {
  auto regex = Regex::Compile(pattern, RegexLimits{});
  EXPECT_NE(regex, nullptr) << pattern;
  return regex == nullptr ? RegexOutcome::kLimit : regex->Search(subject);
}

TEST(RegexTest, SearchIsUnanchored) {
  EXPECT_EQ(Search("b+", "abbc"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^b", "abbc"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, DollarMatchesOnlyAtTheEnd) {
  EXPECT_EQ(Search("^abc$", "abc\n"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, DigitAndWordClassesStayAscii) {
  EXPECT_EQ(Search("^\\d$", "\xE0\xA7\xAA"), RegexOutcome::kNoMatch);  // BENGALI DIGIT FOUR
  EXPECT_EQ(Search("^\\w$", "\xC3\xA9"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, WhitespaceIsTheEcmaSet) {
  EXPECT_EQ(Search("^\\s$", "\xEF\xBB\xBF"), RegexOutcome::kMatch);  // U+FEFF
  EXPECT_EQ(Search("^\\s$", "\xE2\x80\x83"), RegexOutcome::kMatch);  // EM SPACE
  EXPECT_EQ(Search("^\\S$", "\xE2\x80\x83"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, DotExcludesLineTerminators) {
  EXPECT_EQ(Search("^.$", "\xE2\x80\xA8"), RegexOutcome::kNoMatch);  // U+2028
  EXPECT_EQ(Search("^.$", "\xF0\x9F\x90\xB2"), RegexOutcome::kMatch);  // one code point
}

TEST(RegexTest, UnicodeEscapes) {
  EXPECT_EQ(Search("^\\u00e9$", "\xC3\xA9"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^\\u{1F432}$", "\xF0\x9F\x90\xB2"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^\\uD83D\\uDC32$", "\xF0\x9F\x90\xB2"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^\\cJ$", "\n"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^\\p{Letter}+$", "\xC3\xA9t\xC3\xA9"), RegexOutcome::kMatch);
}

TEST(RegexTest, EmptyClasses) {
  EXPECT_EQ(Search("[]", "anything"), RegexOutcome::kNoMatch);
  EXPECT_EQ(Search("^[^]$", "\n"), RegexOutcome::kMatch);
}

TEST(RegexTest, NamedGroupsAndLookarounds) {
  EXPECT_EQ(Search("(?<year>\\d{4})-\\k<year>", "2020-2020"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("(?<=a)b", "ab"), RegexOutcome::kMatch);
  EXPECT_EQ(Search("a(?!b)", "ab"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, PcreOnlySyntaxIsRefused) {
  for (const char* pattern : {"a++", "a{2}+", "(?>a)", "(?i)a", "\\Aa", "a\\Z", "\\Qa\\E",
                              "\\a", "(?#comment)", "[a", "a]", "\\e", "(?P<n>a)"}) {
    std::string translated;
    EXPECT_EQ(Regex::Compile(pattern, RegexLimits{}), nullptr) << pattern;
  }
}

TEST(RegexTest, PosixClassSyntaxIsLiteral) {
  EXPECT_EQ(Search("^[[:alpha:]+$", ":["), RegexOutcome::kMatch);
  EXPECT_EQ(Search("^[[:alpha:]+$", "b"), RegexOutcome::kNoMatch);
}

TEST(RegexTest, BacktrackingLimitReportsLimit) {
  RegexLimits limits;
  limits.match_limit = 10000;
  auto regex = Regex::Compile("^(a|aa)+$", limits);
  ASSERT_NE(regex, nullptr);
  EXPECT_EQ(regex->Search(std::string(60, 'a') + "b"), RegexOutcome::kLimit);
}

TEST(RegexTest, PatternLengthLimit) {
  RegexLimits limits;
  limits.max_pattern_bytes = 8;
  bool too_long = false;
  EXPECT_EQ(Regex::Compile("abcdefghij", limits, &too_long), nullptr);
  EXPECT_TRUE(too_long);
}

}  // namespace
}  // namespace udon::schema::internal
