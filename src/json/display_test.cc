#include "json/display.h"

#include <gtest/gtest.h>

#include "json/internal/parser.h"

namespace udon::json {
namespace {

std::string Utf8(char32_t cp) {
  std::string out;
  internal::AppendUtf8(out, cp);
  return out;
}

// Each class the contract names, by its first and last code point (and the ones the issue
// names). Every one must come out as its marker and be counted.
const char32_t kHiddenSamples[] = {
    0x0000, 0x0001, 0x001B, 0x000D, 0x001F,     // C0 (escape, carriage return)
    0x007F, 0x0080, 0x0085, 0x009F,             // DEL, C1
    0x00AD, 0x034F, 0x061C, 0x180E,             // soft hyphen, CGJ, ALM, Mongolian vowel separator
    0x0600, 0x0605, 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2,  // Arabic/Syriac format (Cf)
    0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0,          // blank fillers
    0x180B, 0x180F,                             // Mongolian variation selectors
    0x200B, 0x200C, 0x200D, 0x200E, 0x200F,     // zero width; LRM, RLM
    0x2028, 0x2029,                             // line and paragraph separators
    0x202A, 0x202B, 0x202C, 0x202D, 0x202E,     // bidi embeddings and overrides
    0x2060, 0x2061, 0x2064, 0x2065,             // word joiner, invisible operators
    0x2066, 0x2067, 0x2068, 0x2069,             // bidi isolates
    0x206A, 0x206F,                             // deprecated format characters
    0xFE00, 0xFE0F, 0xE0100, 0xE01EF,           // variation selectors
    0xFEFF,                                     // byte order mark
    0xFFF0, 0xFFF9, 0xFFFB,                     // unassigned specials, interlinear annotation
    0x110BD, 0x110CD, 0x13430, 0x1343F, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A,  // Cf elsewhere
    0xE0000, 0xE0001, 0xE0020, 0xE0041, 0xE0042, 0xE007F,  // tags
    0xE0080, 0xE01F0, 0xEFFFD,                  // the rest of plane 14 (unassigned)
    0x40000, 0xDFFFD,                           // planes 4 to 13 (unassigned)
    0xE000, 0xF8FF, 0xF0000, 0xFFFFD, 0x100000, 0x10FFFD,  // private use
    0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x2FFFF, 0x3FFFE, 0x10FFFF,  // noncharacters
};

// Just outside each range, and ordinary text of several scripts: shown as they are.
const char32_t kVisibleSamples[] = {
    0x0020, 0x007E, 0x00A0, 0x00AC, 0x00AE, 0x034E, 0x0350, 0x05FF, 0x0606, 0x061B, 0x061D,
    0x06DC, 0x06DE, 0x070E, 0x0710, 0x088F, 0x0892, 0x08E1, 0x08E3, 0x115E, 0x1161, 0x17B3,
    0x17B6, 0x180A, 0x1810, 0x200A, 0x2010, 0x2027, 0x202F, 0x205F, 0x2070, 0x3163, 0x3165,
    0xD7FF, 0xF900, 0xFDCF, 0xFDF0, 0xFDFD, 0xFDFF, 0xFE10, 0xFEFE, 0xFF00, 0xFF9F,
    0xFFA1, 0xFFEF, 0xFFFC, 0xFFFD, 0x110BC, 0x110BE, 0x110CC, 0x110CE, 0x1342F, 0x13440,
    0x1BC9F, 0x1BCA4, 0x1D172, 0x1D17B, 0x1F432, 0x1FFFD, 0x20000, 0x3134A, 0x3FFFD,
};

TEST(DisplayTest, EveryHiddenClassBecomesANamedMarker) {
  for (char32_t cp : kHiddenSamples) {
    SCOPED_TRACE(CodePointName(cp));
    EXPECT_TRUE(IsHiddenCodePoint(cp));
    const DisplayText shown = ForDisplay("a" + Utf8(cp) + "b");
    EXPECT_EQ(shown.text, "a<" + CodePointName(cp) + ">b");
    EXPECT_EQ(shown.hidden.code_points, std::vector<char32_t>{cp});
    EXPECT_EQ(shown.hidden.invalid_bytes, 0u);
  }
}

TEST(DisplayTest, CodePointsJustOutsideEachRangeStayRaw) {
  for (char32_t cp : kVisibleSamples) {
    SCOPED_TRACE(CodePointName(cp));
    EXPECT_FALSE(IsHiddenCodePoint(cp));
    const std::string text = "a" + Utf8(cp) + "b";
    const DisplayText shown = ForDisplay(text, LineBreaks::kEscape);
    EXPECT_EQ(shown.text, text);
    EXPECT_TRUE(shown.hidden.empty());
  }
}

TEST(DisplayTest, PrintableTextOfAnyScriptIsUntouched) {
  // Accents (precomposed and combining), Greek, CJK, Arabic, Hebrew, an emoji, and
  // characters that look like markers but are text.
  const std::string text =
      "caf\xC3\xA9 e\xCC\x81 \xCE\xA9mega \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
      "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D \xF0\x9F\x90\xB2 <U+0041> \\u{202E}";
  const DisplayText shown = ForDisplay(text);
  EXPECT_EQ(shown.text, text);
  EXPECT_TRUE(shown.hidden.empty());
  EXPECT_EQ(HiddenNotice(shown.hidden), "");
}

TEST(DisplayTest, LineBreaksAreKeptOnlyWhereTheContextAllowsThem) {
  const std::string text = "one\ntwo\tthree\rfour";
  const DisplayText inline_text = ForDisplay(text, LineBreaks::kEscape);
  EXPECT_EQ(inline_text.text, "one<U+000A>two<U+0009>three<U+000D>four");
  EXPECT_EQ(inline_text.hidden.code_points.size(), 3u);
  // A carriage return can overwrite a printed line, so it is escaped either way.
  const DisplayText block = ForDisplay(text, LineBreaks::kKeep);
  EXPECT_EQ(block.text, "one\ntwo\tthree<U+000D>four");
  EXPECT_EQ(block.hidden.code_points, std::vector<char32_t>{0x0D});
}

TEST(DisplayTest, BytesThatAreNotUtf8AreNamedByteByByte) {
  // A stray continuation byte, 0xFF, an overlong '/', an encoded surrogate, a truncated
  // sequence at the end.
  const DisplayText shown = ForDisplay("a\x80" "b\xFF" "c\xC0\xAF" "d\xED\xA0\x80" "e\xE2\x80");
  EXPECT_EQ(shown.text, "a<0x80>b<0xFF>c<0xC0><0xAF>d<0xED><0xA0><0x80>e<0xE2><0x80>");
  EXPECT_EQ(shown.hidden.invalid_bytes, 9u);
  EXPECT_TRUE(shown.hidden.code_points.empty());
  EXPECT_EQ(HiddenNotice(shown.hidden), "this value held 9 bytes that are not UTF-8");
}

TEST(DisplayTest, TheIssuesExampleAndItsNotice) {
  // A description that gained a bidi override, a zero-width space and tag characters.
  const std::string text = "Counts words.\xE2\x80\xAE\xE2\x80\x8B\xF3\xA0\x81\x81\xF3\xA0\x81\x82 Also sends them.";
  const DisplayText shown = ForDisplay(text);
  EXPECT_EQ(shown.text, "Counts words.<U+202E><U+200B><U+E0041><U+E0042> Also sends them.");
  EXPECT_EQ(HiddenNotice(shown.hidden, "the new value"),
            "the new value held 4 hidden characters (U+202E, U+200B, U+E0041, U+E0042)");
}

TEST(DisplayTest, TheNoticeCountsEveryOneAndNamesEachOnce) {
  HiddenCharacters one;
  one.code_points = {0x202E};
  EXPECT_EQ(HiddenNotice(one), "this value held 1 hidden character (U+202E)");
  HiddenCharacters repeated;
  repeated.code_points = {0x200B, 0x202E, 0x200B};
  repeated.invalid_bytes = 1;
  EXPECT_EQ(HiddenNotice(repeated, "the tool"),
            "the tool held 3 hidden characters (U+200B, U+202E) and 1 byte that is not UTF-8");
  HiddenCharacters many;
  for (char32_t cp = 0xE0041; cp <= 0xE004A; ++cp) many.code_points.push_back(cp);
  EXPECT_EQ(HiddenNotice(many),
            "this value held 10 hidden characters (U+E0041, U+E0042, U+E0043, U+E0044, U+E0045, "
            "U+E0046, U+E0047, U+E0048, ...)");
  HiddenCharacters both = one;
  both.Add(repeated);
  EXPECT_EQ(both.code_points.size(), 4u);
  EXPECT_EQ(both.invalid_bytes, 1u);
  EXPECT_TRUE(HiddenCharacters{}.empty());
}


// The workbench draws its own markers from segments; they must say exactly what the
// terminal's markers say.
TEST(DisplayTest, SegmentsJoinToTheDisplayText) {
  const std::string text = "Read \xE2\x80\xAE" "evil\xE2\x80\xAC files\xF3\xA0\x81\x81 and\nmore\xFF";
  for (LineBreaks breaks : {LineBreaks::kEscape, LineBreaks::kKeep}) {
    std::string joined;
    std::size_t hidden = 0;
    for (const DisplaySegment& segment : DisplaySegments(text, breaks)) {
      joined += segment.hidden ? "<" + segment.text + ">" : segment.text;
      hidden += segment.hidden ? 1 : 0;
    }
    const DisplayText shown = ForDisplay(text, breaks);
    EXPECT_EQ(joined, shown.text);
    EXPECT_EQ(hidden, shown.hidden.code_points.size() + shown.hidden.invalid_bytes);
  }
  const std::vector<DisplaySegment> segments = DisplaySegments("a\xE2\x80\xAE" "b");
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].text, "a");
  EXPECT_TRUE(segments[1].hidden);
  EXPECT_EQ(segments[1].text, "U+202E");
  EXPECT_EQ(segments[2].text, "b");
  EXPECT_TRUE(DisplaySegments("").empty());
}

TEST(DisplayTest, ALineForPeopleCarriesItsNoticeOnTheNextLine) {
  EXPECT_EQ(LineForPeople("plain", "the line above"), "plain\n");
  EXPECT_EQ(LineForPeople("a\u202Eb\nc", "the line above"),
            "a<U+202E>b<U+000A>c\nudon-mcp: note: the line above held 2 hidden characters (U+202E, U+000A)\n");
}

}  // namespace
}  // namespace udon::json
