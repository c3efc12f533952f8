#include "json/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "json/internal/parser.h"
#include "json/internal/test_files.h"

namespace udon::json {
namespace {

Error ParseError(std::string_view text, ParseOptions options = {}) {
  auto result = Parse(text, options);
  EXPECT_FALSE(result.ok()) << "accepted: " << text;
  return result.ok() ? Error{} : result.error();
}

TEST(ParseTest, ReadsEveryKindOfValue) {
  auto result = Parse(R"({"a":[1,-2,3.5,true,false,null,"x\u00e9\ud83d\ude00"],"b":{}})");
  ASSERT_TRUE(result.ok()) << result.error().Describe();
  const Value& v = *result;
  EXPECT_EQ(v["a"][0].get<int>(), 1);
  EXPECT_EQ(v["a"][1].get<int>(), -2);
  EXPECT_DOUBLE_EQ(v["a"][2].get<double>(), 3.5);
  EXPECT_EQ(v["a"][6].get<std::string>(), "x\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_TRUE(v["b"].is_object());
}

TEST(ParseTest, KeepsLargeIntegersExactWhereTheyFit) {
  auto result = Parse("[18446744073709551615, -9223372036854775808, 18446744073709551616]");
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE((*result)[0].is_number_unsigned());
  EXPECT_TRUE((*result)[1].is_number_integer());
  EXPECT_TRUE((*result)[2].is_number_float());
}

// Integers of up to 19 digits are read without from_chars; the kinds must not change.
TEST(ParseTest, IntegerKindsAtTheFastPathBoundaries) {
  auto result = Parse(
      "[-0, 9223372036854775807, 9223372036854775808, -9223372036854775808,"
      " -9223372036854775809, 9999999999999999999, 10000000000000000000, 9007199254740993,"
      " 1e2, -0.0]");
  ASSERT_TRUE(result.ok()) << result.error().Describe();
  const Value& v = *result;
  EXPECT_TRUE(v[0].is_number_integer());
  EXPECT_EQ(v[0].get<std::int64_t>(), 0);
  EXPECT_TRUE(v[1].is_number_integer());
  EXPECT_EQ(v[1].get<std::int64_t>(), std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(v[2].is_number_unsigned());
  EXPECT_EQ(v[2].get<std::uint64_t>(), 9223372036854775808ull);
  EXPECT_TRUE(v[3].is_number_integer());
  EXPECT_EQ(v[3].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_TRUE(v[4].is_number_float());
  EXPECT_EQ(v[4].get<double>(), -9223372036854775808.0);
  EXPECT_TRUE(v[5].is_number_unsigned());
  EXPECT_EQ(v[5].get<std::uint64_t>(), 9999999999999999999ull);
  EXPECT_TRUE(v[6].is_number_unsigned());
  EXPECT_EQ(v[6].get<std::uint64_t>(), 10000000000000000000ull);
  EXPECT_TRUE(v[7].is_number_integer());
  EXPECT_EQ(v[7].get<std::int64_t>(), 9007199254740993);
  EXPECT_TRUE(v[8].is_number_float());
  EXPECT_TRUE(v[9].is_number_float());
  EXPECT_TRUE(std::signbit(v[9].get<double>()));
  Error error = ParseError("[1, -012]");
  EXPECT_EQ(error.code, "json.syntax");
  EXPECT_EQ(error.pointer, "/1");
  ASSERT_TRUE(error.location.has_value());
  EXPECT_EQ(error.location->offset, 6u);
}

// The member name in an error pointer survives the strings parsed after it, whether it was
// escaped (decoded into the parser's scratch space, which is reused) or not.
TEST(ParseTest, ErrorPointerKeepsEscapedAndPlainMemberNames) {
  EXPECT_EQ(ParseError(R"({"k\u0031":["\u0041\n", tru]})").pointer, "/k1/1");
  EXPECT_EQ(ParseError(R"({"plain":["\u0041\n", tru]})").pointer, "/plain/1");
  EXPECT_EQ(ParseError(R"({"a\/b":{"c":"\t","d":[}]}})").pointer, "/a~1b/d/0");
}

TEST(ParseTest, RefusesDuplicateMemberNamesAtAnyDepth) {
  Error error = ParseError(R"({"a":{"b":1,"c":[{"d":1,"d":2}]}})");
  EXPECT_EQ(error.code, "json.duplicate_key");
  EXPECT_EQ(error.pointer, "/a/c/0/d");
  // Names are compared after unescaping.
  EXPECT_EQ(ParseError(R"({"a":1,"\u0061":2})").code, "json.duplicate_key");
}

TEST(ParseTest, RefusesInvalidUtf8) {
  EXPECT_EQ(ParseError("\"\xC0\xAF\"").code, "json.invalid_utf8");      // overlong
  EXPECT_EQ(ParseError("\"\xED\xA0\x80\"").code, "json.invalid_utf8");  // encoded surrogate
  EXPECT_EQ(ParseError("\"\xF4\x90\x80\x80\"").code, "json.invalid_utf8");  // > U+10FFFF
  EXPECT_EQ(ParseError("[\"\xE2\x82\"]").code, "json.invalid_utf8");   // truncated
  EXPECT_EQ(ParseError("\xFF").code, "json.invalid_utf8");
}

TEST(ParseTest, RefusesLoneSurrogateEscapes) {
  EXPECT_EQ(ParseError(R"("\ud800")").code, "json.lone_surrogate");
  EXPECT_EQ(ParseError(R"("\udc00")").code, "json.lone_surrogate");
  EXPECT_EQ(ParseError(R"("\ud800\u0041")").code, "json.lone_surrogate");
}

// Strings with an escape take the decoding loop, which copies the runs between escapes
// with the fast scan: every escape form after every offset 0..40 of ASCII and of two-,
// three- and four-byte characters (so runs end at and across the 16-byte blocks), and
// enough escapes to grow the decoding buffer many times.
TEST(ParseTest, EscapesAtEveryOffsetDecodeExactly) {
  const std::pair<const char*, std::string> escapes[] = {
      {R"(\n)", "\n"},          {R"(\/)", "/"},          {R"(\")", "\""},
      {R"(\\)", "\\"},          {R"(\u0000)", std::string(1, '\0')},
      {R"(\u00e9)", "\xc3\xa9"}, {R"(\u00E9)", "\xc3\xa9"}, {R"(\uFFFD)", "\xef\xbf\xbd"},
      {R"(\uD83D\uDE00)", "\xf0\x9f\x98\x80"}, {R"(\udbff\udfff)", "\xf4\x8f\xbf\xbf"}};
  for (const std::string filler : {"a", "\xc3\xa9", "\xe6\xb8\xb2", "\xf0\x9f\x8e\xac"}) {
    for (std::size_t offset = 0; offset <= 40; ++offset) {
      std::string padding;
      while (padding.size() + filler.size() <= offset) padding += filler;
      for (const auto& [escape, decoded] : escapes) {
        SCOPED_TRACE(std::to_string(offset) + " " + escape);
        auto value = Parse("[\"" + padding + escape + padding + filler + escape + "\"]");
        ASSERT_TRUE(value.ok()) << value.error().Describe();
        EXPECT_EQ((*value)[0].get<std::string>(),
                  padding + decoded + padding + filler + decoded);
      }
    }
  }
  std::string many, expected;
  for (int i = 0; i < 5000; ++i) {
    many += R"(\u00e9x\ud83d\ude00\t)";
    expected += "\xc3\xa9x\xf0\x9f\x98\x80\t";
  }
  auto value = Parse("[\"" + many + "\"]");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ((*value)[0].get<std::string>(), expected);
}

// After an escape, a run with malformed UTF-8 at any offset is still refused, and so is a
// sequence cut off by the closing quote or the end of the input.
TEST(ParseTest, MalformedUtf8AfterAnEscapeAtEveryOffset) {
  for (std::size_t offset = 0; offset <= 40; ++offset) {
    SCOPED_TRACE(offset);
    std::string ascii(offset, 'x');
    for (const char* bad : {"\xc3\x28", "\xe6\xb8\"", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                            "\xc0\xaf", "\x80", "\xff"}) {
      EXPECT_EQ(ParseError("[\"\\n" + ascii + bad + "\"]").code, "json.invalid_utf8");
      EXPECT_EQ(ParseError("[\"\\u00e9" + ascii + "\xc3\xa9" + bad + "\"]").code,
                "json.invalid_utf8");
    }
    EXPECT_EQ(ParseError("[\"\\n" + ascii + "\xe6\xb8").code, "json.invalid_utf8");
  }
}

// Surrogate escapes that do not form a pair, and malformed hex digits (the bytes next to
// each digit range), after every offset.
TEST(ParseTest, LoneSurrogatesAndBadHexDigitsAfterEveryOffset) {
  for (std::size_t offset = 0; offset <= 20; ++offset) {
    SCOPED_TRACE(offset);
    const std::string head = "[\"\\t" + std::string(offset, 'x');
    for (const char* lone : {R"(\uD800)", R"(\udc00)", R"(\uDBFF\u0041)", R"(\ud800\n)",
                             R"(\ud800\udbff)", R"(\uDFFF\uDC00)", R"(\ud800x)"}) {
      EXPECT_EQ(ParseError(head + lone + "\"]").code, "json.lone_surrogate") << lone;
    }
    EXPECT_EQ(ParseError(head + R"(\uD800)").code, "json.lone_surrogate");
    for (const char* bad : {R"(\u00/0)", R"(\u00:0)", R"(\u00@0)", R"(\u00G0)", R"(\u00`0)",
                            R"(\u00g0)", R"(\ud800\udc0g)", R"(\u12)", R"(\x)", R"(\U0041)"}) {
      EXPECT_EQ(ParseError(head + bad + "\"]").code, "json.syntax") << bad;
    }
  }
}

TEST(ParseTest, RefusesOverflowButAcceptsUnderflow) {
  EXPECT_EQ(ParseError("1e400").code, "json.number_overflow");
  EXPECT_EQ(ParseError("[-1.5e309]").code, "json.number_overflow");
  auto tiny = Parse("1e-400");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->get<double>(), 0.0);
  EXPECT_TRUE(Parse("0.000000000000000000000000000001e-290").ok());
}

TEST(ParseTest, RefusesNestingBeyondTheLimit) {
  std::string deep(300, '[');
  deep += std::string(300, ']');
  EXPECT_EQ(ParseError(deep).code, "json.too_deep");
  ParseOptions options;
  options.max_depth = 3;
  EXPECT_TRUE(Parse("[[[]]]", options).ok());
  EXPECT_EQ(ParseError("[[[[]]]]", options).code, "json.too_deep");
  // Far beyond any stack: refused, not crashed.
  EXPECT_EQ(ParseError(std::string(1'000'000, '[')).code, "json.too_deep");
}

TEST(ParseTest, RefusesTrailingBytesAndReportsWhere) {
  Error error = ParseError("{\"a\": 1}\n  x");
  EXPECT_EQ(error.code, "json.trailing_bytes");
  ASSERT_TRUE(error.location.has_value());
  EXPECT_EQ(error.location->line, 2u);
  EXPECT_EQ(error.location->column, 3u);
  EXPECT_EQ(error.location->offset, 11u);
}

TEST(ParseTest, RefusesGrammarErrors) {
  for (const char* text : {"", " ", "01", "1.", ".5", "+1", "1e", "[1,]", "{\"a\":1,}", "{a:1}",
                           "'a'", "tru", "nul", "\"\t\"", "\"\\x\"", "[1 2]", "\"abc", "NaN",
                           "Infinity", "\xEF\xBB\xBF{}"}) {
    Error error = ParseError(text);
    EXPECT_EQ(error.code, "json.syntax") << text;
  }
}

TEST(ParseTest, ErrorNamesThePointerOfTheEnclosingValue) {
  Error error = ParseError(R"({"tools":[{"name":"a"},{"name":tru}]})");
  EXPECT_EQ(error.code, "json.syntax");
  EXPECT_EQ(error.pointer, "/tools/1/name");
  EXPECT_NE(error.Describe().find("/tools/1/name"), std::string::npos);
  EXPECT_EQ(ParseError(R"({"a/b":{"~":[}]}})").pointer, "/a~1b/~0/0");
}

// Indentation is skipped 32 bytes at a time, and after a newline only spaces are looked
// for first: every length around those steps, other whitespace after it, and the document's
// end right after it.
TEST(ParseTest, WhitespaceOfEveryLengthAroundTheSteps) {
  for (std::size_t indent = 0; indent <= 70; ++indent) {
    SCOPED_TRACE(indent);
    const std::string spaces(indent, ' ');
    for (const char* extra : {"", "\t", "\r\n ", " \n", "\n\n"}) {
      const std::string text = "{\"a\":\n" + spaces + extra + "[1,\n" + spaces + extra + "2]\n" +
                               spaces + extra + "}\n" + spaces + extra;
      auto result = Parse(text);
      ASSERT_TRUE(result.ok()) << result.error().Describe();
      EXPECT_EQ((*result)["a"][1].get<int>(), 2);
    }
    const std::string bad = "[1,\n" + spaces + "\x01]";
    Error error = ParseError(bad);
    EXPECT_EQ(error.code, "json.syntax");
    ASSERT_TRUE(error.location.has_value());
    EXPECT_EQ(error.location->offset, 4 + indent);
  }
}

TEST(ParseTest, RefusesInputAboveTheSizeLimit) {
  ParseOptions options;
  options.max_bytes = 4;
  EXPECT_EQ(ParseError("[1,2]", options).code, "json.too_large");
}

// The string scan reads 16 bytes at a time (SSE2) and, once a string has a non-ASCII byte,
// checks its UTF-8 16 bytes at a time. Its verdict must be the scalar reading's: where it
// stops (quote, backslash, control character, first byte of malformed UTF-8), for every
// byte at every position around the block edges. Its noncharacter flag may be set without
// need (only for lead bytes EF..F4), but never missed.
struct ScalarReading {
  bool high_lead = false;          // passed a lead byte EF..F4
  bool holds_noncharacter = false;  // passed U+FDD0..U+FDEF, U+xFFFE or U+xFFFF
};

const unsigned char* ScalarStringStop(const unsigned char* p, const unsigned char* end,
                                      ScalarReading& reading) {
  while (p != end) {
    const unsigned char c = *p;
    if (c == '"' || c == '\\' || c < 0x20) break;
    if (c < 0x80) {
      ++p;
      continue;
    }
    const std::size_t length = internal::Utf8SequenceLength(p, end);
    if (length == 0) break;
    if (c >= 0xEF) reading.high_lead = true;
    std::uint32_t code_point = c & (0xFFu >> (length + 1));
    for (std::size_t i = 1; i < length; ++i) code_point = (code_point << 6) | (p[i] & 0x3Fu);
    if ((code_point >= 0xFDD0 && code_point <= 0xFDEF) || (code_point & 0xFFFE) == 0xFFFE) {
      reading.holds_noncharacter = true;
    }
    p += length;
  }
  return p;
}

// Compares the scan with the scalar reading over body, alone and with bytes after it (the
// scan must not look past its end, and may not stop early when more follows).
void ExpectScanAgrees(const std::string& body) {
  for (const std::string& text : {body, body + "\"" + std::string(40, 'z')}) {
    const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = begin + text.size();
    ScalarReading reading;
    bool may_hold_noncharacter = false;
    const unsigned char* scalar = ScalarStringStop(begin, end, reading);
    const unsigned char* fast =
        internal::SkipWellFormedStringBytes(begin, end, may_hold_noncharacter);
    ASSERT_EQ(fast - begin, scalar - begin) << ::testing::PrintToString(body);
    if (reading.holds_noncharacter) {
      ASSERT_TRUE(may_hold_noncharacter) << ::testing::PrintToString(body);
    }
    if (!reading.high_lead) {
      ASSERT_FALSE(may_hold_noncharacter) << ::testing::PrintToString(body);
    }
  }
}

// Parse's verdict on a string with this body (no escapes), alone and after an escape (the
// rest of a string with escapes is read by the same scan): accepted, or refused with the
// code and offset of the byte where the scalar reading stops.
void ExpectParseAgrees(const std::string& body) {
  const auto* begin = reinterpret_cast<const unsigned char*>(body.data());
  ScalarReading reading;
  const std::size_t stop =
      static_cast<std::size_t>(ScalarStringStop(begin, begin + body.size(), reading) - begin);
  for (const std::string escape : {"", "\\n", "\\u00e9\\\""}) {
    const std::string text = "[\"" + escape + body + "\"]";
    auto result = Parse(text);
    if (stop == body.size()) {
      ASSERT_TRUE(result.ok()) << ::testing::PrintToString(text) << result.error().Describe();
      const std::string decoded = escape.empty() ? "" : escape[1] == 'n' ? "\n" : "\xC3\xA9\"";
      EXPECT_EQ((*result)[0].get<std::string>(), decoded + body);
      continue;
    }
    ASSERT_FALSE(result.ok()) << ::testing::PrintToString(text);
    const unsigned char c = begin[stop];
    EXPECT_EQ(result.error().code, c < 0x20 ? "json.syntax" : "json.invalid_utf8")
        << ::testing::PrintToString(text);
    EXPECT_EQ(result.error().pointer, "/0");
    ASSERT_TRUE(result.error().location.has_value());
    EXPECT_EQ(result.error().location->offset, 2 + escape.size() + stop)
        << ::testing::PrintToString(text);
  }
}

const std::string kFillers[] = {"a", "\xC3\xA9", "\xE6\xB8\xB2", "\xF0\x9F\x8E\xAC", "a\xC3\xA9",
                                "\xEF\xBC\xA1"};

// A body of about length bytes made of whole filler characters.
std::string Filled(const std::string& filler, std::size_t length) {
  std::string body;
  while (body.size() + filler.size() <= length) body += filler;
  return body;
}

TEST(StringScanTest, EverySpecialByteAtEveryPositionOfTwoBlocks) {
  const std::string specials[] = {"\"", "\\", std::string(1, '\0'), "\x1F", "\x7F", "\x80",
                                  "\xBF", "\xC0", "\xC1", "\xF5", "\xFF", "\xE0", "\xED",
                                  "\xF0", "\xF4", "\xEF\xBF\xBD", "\xF4\x8F\xBF\xBF",
                                  // noncharacters: U+FDD0, U+FDEF, U+FFFE, U+1FFFF
                                  "\xEF\xB7\x90", "\xEF\xB7\xAF", "\xEF\xBF\xBE",
                                  "\xF0\x9F\xBF\xBF"};
  for (const std::string& filler : kFillers) {
    for (std::size_t position = 0; position < 40; ++position) {
      for (const std::string& special : specials) {
        SCOPED_TRACE(position);
        // Before and after the special byte: whole characters, or a cut one (the special
        // byte lands inside a multi-byte filler character).
        std::string body = Filled(filler, position);
        body += std::string(filler, 0, position - body.size());
        body += special;
        body += Filled(filler, 40);
        ExpectScanAgrees(body);
        if (special[0] != '"' && special[0] != '\\') ExpectParseAgrees(body);
      }
    }
  }
}

TEST(StringScanTest, LengthsAroundTheBlockSizes) {
  for (const std::string& filler : kFillers) {
    for (std::size_t length : {0, 1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65}) {
      SCOPED_TRACE(length);
      const std::string body = Filled(filler, length);
      ExpectScanAgrees(body);
      ExpectParseAgrees(body);
      // Cut short: the last character loses its final byte.
      if (!body.empty() && static_cast<unsigned char>(body.back()) >= 0x80) {
        ExpectScanAgrees(body.substr(0, body.size() - 1));
        ExpectParseAgrees(body.substr(0, body.size() - 1));
      }
    }
  }
}

// Every malformed form (overlongs, encoded surrogates, above U+10FFFF, truncated, stray
// continuation bytes, invalid leads) with its first byte at every offset 0..40, so that it
// straddles each 16-byte block edge in every way.
TEST(StringScanTest, MalformedUtf8StraddlingTheBlockEdges) {
  // Their well-formed neighbours must pass.
  const std::string good_forms[] = {"\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                                    "\xEE\x80\x80", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"};
  for (const std::string filler : {"a", "\xE6\xB8\xB2", "\xC3\xA9"}) {
    for (std::size_t offset = 0; offset <= 40; ++offset) {
      SCOPED_TRACE(offset);
      std::string prefix(offset, 'x');
      if (filler != "a") {
        prefix = std::string(offset % filler.size(), 'x') + Filled(filler, offset);
      }
      for (const std::string& form : testing::MalformedUtf8Forms()) {
        const std::string body = prefix + form + Filled(filler, 20);
        ExpectScanAgrees(body);
        ExpectParseAgrees(body);
      }
      for (const std::string& form : good_forms) {
        const std::string body = prefix + form + Filled(filler, 20);
        ExpectScanAgrees(body);
        ExpectParseAgrees(body);
      }
    }
  }
}

// Random bodies of up to 48 bytes over bytes at every class edge, against the scalar reading.
TEST(StringScanTest, RandomBytesAgreeWithTheScalarReading) {
  const unsigned char alphabet[] = {0x00, 0x1F, 0x20, 'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                    0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                    0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
                                    '"',  '\\'};
  testing::XorShift64 next(0x243F6A8885A308D3ull);
  for (int round = 0; round < 200000; ++round) {
    // Mostly well-formed text (ASCII and whole characters) with a few edge bytes, so that
    // scans get far.
    const std::size_t length = next() % 49;
    std::string body;
    while (body.size() < length) {
      const std::uint64_t roll = next() % 16;
      if (roll == 0) body.push_back(static_cast<char>(alphabet[next() % sizeof alphabet]));
      else if (roll == 1) body.push_back(static_cast<char>(0x80 + next() % 0x40));
      else if (roll < 8) body += kFillers[next() % std::size(kFillers)];
      else body.push_back('a');
    }
    ExpectScanAgrees(body);
    if (body.find_first_of("\"\\") == std::string::npos) ExpectParseAgrees(body);
    if (HasFailure()) return;
  }
}


// ParseLeavingElements: the same verdict and value as Parse, minus one array's elements.
Value WithoutElements(Value value) {
  value["result"]["tools"] = Value::array();
  return value;
}

TEST(ParseLeavingElementsTest, BuildsEverythingButTheElementsAndSaysWhereEachIs) {
  const std::string text =
      R"({"jsonrpc":"2.0","result":{"nextCursor":"c","tools":[ {"name":"a","x":{"name":"inner"}},)"
      R"( {"inputSchema":{},"name":"b\u00e9"}, 7, [1], {"title":"no name"}, {"name":3} ],"_meta":{"k":[1]}},"id":4})";
  auto partial = ParseLeavingElements(text, {}, "result", "tools");
  ASSERT_TRUE(partial.ok()) << partial.error().Describe();
  EXPECT_TRUE(partial->found);
  EXPECT_EQ(partial->value, WithoutElements(*Parse(text)));
  const auto& elements = partial->elements;
  ASSERT_EQ(elements.size(), 6u);
  const Value full = *Parse(text);
  for (std::size_t i : {0u, 1u, 4u, 5u}) {
    ASSERT_TRUE(elements[i].is_object) << i;
    const std::string_view bytes(text.data() + elements[i].begin, elements[i].end - elements[i].begin);
    EXPECT_EQ(*Parse(bytes), full["result"]["tools"][i]) << i;
  }
  EXPECT_EQ(elements[0].name, "a") << "only the element's own member counts";
  EXPECT_EQ(elements[1].name, "b\xC3\xA9") << "decoded";
  EXPECT_FALSE(elements[2].is_object);
  EXPECT_FALSE(elements[3].is_object);
  EXPECT_FALSE(elements[4].name.has_value());
  EXPECT_FALSE(elements[5].name.has_value()) << "a name that is not a string is none";
}

TEST(ParseLeavingElementsTest, OnlyTheArrayAtThatPathIsLeft) {
  for (const char* text : {R"({"tools":[{"name":"a"}]})", R"({"result":[{"tools":[1]}]})",
                           R"({"result":{"x":{"tools":[{"name":"a"}]}}})", R"({"result":{"tools":{"name":"a"}}})",
                           R"([{"result":{"tools":[1]}}])", R"({"result":"tools"})"}) {
    auto partial = ParseLeavingElements(text, {}, "result", "tools");
    ASSERT_TRUE(partial.ok()) << text;
    EXPECT_FALSE(partial->found) << text;
    EXPECT_TRUE(partial->elements.empty()) << text;
    EXPECT_EQ(partial->value, *Parse(text)) << text;
  }
}

TEST(ParseLeavingElementsTest, RefusesWhatParseRefusesInsideTheElements) {
  struct Case {
    std::string text;
    const char* code;
  };
  std::string many = R"({"result":{"tools":[{)";
  for (int i = 0; i < 40; ++i) many += "\"m" + std::to_string(i) + "\":0,";
  many += R"("m7":1}]}})";
  const Case cases[] = {
      {R"({"result":{"tools":[{"name":"a","name":"b"}]}})", "json.duplicate_key"},
      {R"({"result":{"tools":[{"s":{"a":1,"\u0061":2}}]}})", "json.duplicate_key"},
      {many, "json.duplicate_key"},
      {"{\"result\":{\"tools\":[{\"name\":\"\xC0\xAF\"}]}}", "json.invalid_utf8"},
      {R"({"result":{"tools":[{"name":"\ud800"}]}})", "json.lone_surrogate"},
      {R"({"result":{"tools":[{"n":1e999}]}})", "json.number_overflow"},
      {R"({"result":{"tools":[{"n":[1,]}]}})", "json.syntax"},
      {R"({"result":{"tools":[{"a":1}]},"result":{}})", "json.duplicate_key"},
  };
  for (const Case& c : cases) {
    auto partial = ParseLeavingElements(c.text, {}, "result", "tools");
    ASSERT_FALSE(partial.ok()) << c.text;
    EXPECT_EQ(partial.error().code, c.code) << c.text;
    EXPECT_EQ(partial.error().code, Parse(c.text).error().code) << c.text;
  }
  ParseOptions shallow;
  shallow.max_depth = 5;
  const std::string deep = R"({"result":{"tools":[{"a":[[1]]}]}})";
  EXPECT_EQ(ParseLeavingElements(deep, shallow, "result", "tools").error().code, "json.too_deep");
}

TEST(ParseLeavingElementsTest, ObjectsWithManyMembersStayLinearAndStillAcceptDistinctNames) {
  std::string text = R"({"result":{"tools":[{)";
  for (int i = 0; i < 20000; ++i) text += (i ? ",\"m" : "\"m") + std::to_string(i) + "\":0";
  text += "}]}}";
  auto partial = ParseLeavingElements(text, {}, "result", "tools");
  ASSERT_TRUE(partial.ok()) << partial.error().Describe();
  ASSERT_EQ(partial->elements.size(), 1u);
  EXPECT_EQ(partial->elements[0].end, text.size() - 3);
}

// ElementsMemo: a memo can only spare work, never change an outcome. Each case parses a
// variant of a page after the page warmed the memo, and must give exactly what a parse
// without the memo gives (value, elements, offsets; or the same error at the same place).
std::string Page(std::string_view id, std::string_view tools, std::string_view result_rest = "",
                 std::string_view after_root = "") {
  return R"({"id":)" + std::string(id) + R"(,"jsonrpc":"2.0","result":{"_meta":{"k":"v"},"tools":[)" +
         std::string(tools) + "]" + std::string(result_rest) + "}}" + std::string(after_root);
}

constexpr std::string_view kTools =
    R"({"description":"caf\u00e9 \"x\"","inputSchema":{"type":"object"},"name":"a"},{"name":"b","title":"B"})";

void ExpectSameAsWithoutMemo(const Result<PartialValue>& with, const Result<PartialValue>& without,
                             const std::string& what) {
  ASSERT_EQ(with.ok(), without.ok()) << what;
  if (!with.ok()) {
    EXPECT_EQ(with.error().code, without.error().code) << what;
    EXPECT_EQ(with.error().Describe(), without.error().Describe()) << what;
    return;
  }
  EXPECT_EQ(with->value, without->value) << what;
  EXPECT_EQ(with->found, without->found) << what;
  EXPECT_EQ(with->array_begin, without->array_begin) << what;
  EXPECT_EQ(with->array_end, without->array_end) << what;
  ASSERT_EQ(with->elements.size(), without->elements.size()) << what;
  for (std::size_t i = 0; i < with->elements.size(); ++i) {
    EXPECT_EQ(with->elements[i].is_object, without->elements[i].is_object) << what << " " << i;
    EXPECT_EQ(with->elements[i].begin, without->elements[i].begin) << what << " " << i;
    EXPECT_EQ(with->elements[i].end, without->elements[i].end) << what << " " << i;
    EXPECT_EQ(with->elements[i].name, without->elements[i].name) << what << " " << i;
  }
}

TEST(ElementsMemoTest, AnyOtherBytesGiveWhatAParseWithoutTheMemoGives) {
  const std::string other_tools(R"({"description":"caf\u00e8 \"x\"","inputSchema":{"type":"object"},"name":"a"},)"
                                R"({"name":"b","title":"B"})");
  struct Case {
    std::string what;
    std::string text;
    ParseOptions options;
    bool reused;  // the remembered array spared
  };
  ParseOptions small;
  small.max_bytes = Page("7", kTools).size() - 1;
  ParseOptions shallow;
  shallow.max_depth = 4;
  const Case cases[] = {
      {"the same page", Page("7", kTools), {}, true},
      {"another id, the array further on", Page("12345", kTools), {}, true},
      {"more after the array", Page("7", kTools, R"(,"nextCursor":"c")"), {}, true},
      {"one byte inside an escape", Page("7", other_tools), {}, false},
      {"members reordered", Page("7", R"({"inputSchema":{"type":"object"},"description":"caf\u00e9 \"x\"","name":"a"},)"
                                      R"({"name":"b","title":"B"})"),
       {}, false},
      {"a duplicate name in an element", Page("7", R"({"name":"b","name":"b"})"), {}, false},
      {"the same bytes under another name", Page("7", kTools).replace(Page("7", kTools).find("tools"), 5, "toolz"),
       {}, false},
      {"a second tools member after it", Page("7", kTools, R"(,"tools":[])"), {}, false},
      {"bytes after the document", Page("7", kTools, "", " x"), {}, false},
      {"invalid UTF-8 after the array", Page("7", kTools, ",\"n\":\"\xC0\xAF\""), {}, false},
      {"over the size limit", Page("7", kTools), small, false},
      {"a smaller depth limit", Page("7", kTools), shallow, false},
  };
  for (const Case& c : cases) {
    ElementsMemo memo;
    ASSERT_TRUE(ParseLeavingElements(Page("7", kTools), {}, "result", "tools", &memo).ok());
    auto with = ParseLeavingElements(c.text, c.options, "result", "tools", &memo);
    auto without = ParseLeavingElements(c.text, c.options, "result", "tools");
    ExpectSameAsWithoutMemo(with, without, c.what);
    EXPECT_EQ(memo.reused(), c.reused ? 1u : 0u) << c.what;
  }
}

TEST(ElementsMemoTest, FollowsTheArrayFromTextToTextAndForgetsAPageWithoutOne) {
  ElementsMemo memo;
  // Found as far from the end, then at the same offset; not where both moved (parsed whole
  // and remembered there); forgotten after a page without the array.
  const std::string texts[] = {Page("1", kTools),         Page("22", kTools),
                               Page("22", kTools, R"(,"x":1)"), Page("4", kTools),
                               Page("55", kTools),        R"({"id":5,"jsonrpc":"2.0","result":{}})",
                               Page("6", kTools)};
  const std::size_t reused_after[] = {0, 1, 2, 2, 3, 3, 3};
  for (std::size_t i = 0; i < std::size(texts); ++i) {
    auto with = ParseLeavingElements(texts[i], {}, "result", "tools", &memo);
    ExpectSameAsWithoutMemo(with, ParseLeavingElements(texts[i], {}, "result", "tools"), texts[i]);
    EXPECT_EQ(memo.reused(), reused_after[i]) << texts[i];
  }
}

}  // namespace
}  // namespace udon::json
