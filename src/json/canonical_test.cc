#include "json/canonical.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "json/internal/test_files.h"
#include "json/json.h"
#include "base/sha256.h"

namespace udon::json {
namespace {

using testing::FromHexDump;
using testing::JcsVector;
using testing::ProjectData;

std::string Rfc8785(const std::string& name) { return ProjectData("jcs/rfc8785/" + name); }

double FromBits(const std::string& hex) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(std::stoull(hex, nullptr, 16)));
}

// Both paths: the fast text path (as a string and as a streamed digest) and Parse +
// Canonicalize.
void ExpectCanonical(const std::string& input, const std::string& expected) {
  Result<std::string> fast = CanonicalizeText(input);
  ASSERT_TRUE(fast.ok()) << fast.error().Describe();
  EXPECT_EQ(*fast, expected);
  Result<std::string> digest = CanonicalSha256Text(input);
  ASSERT_TRUE(digest.ok()) << digest.error().Describe();
  EXPECT_EQ(*digest, base::Sha256Hex(expected));
  Result<Value> parsed = Parse(input);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
  Result<std::string> slow = Canonicalize(*parsed);
  ASSERT_TRUE(slow.ok()) << slow.error().Describe();
  EXPECT_EQ(*slow, expected);
}

// For inputs too large to write the expected bytes out: the value path's canonical form
// (Parse + Canonicalize) is the expectation.
void ExpectCanonicalAsTheValuePath(const std::string& input) {
  Result<Value> parsed = Parse(input);
  ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
  Result<std::string> slow = Canonicalize(*parsed);
  ASSERT_TRUE(slow.ok()) << slow.error().Describe();
  ExpectCanonical(input, *slow);
}

void ExpectRefused(const std::string& input, const std::string& code, const std::string& pointer) {
  Result<std::string> fast = CanonicalizeText(input);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.error().code, code);
  EXPECT_EQ(fast.error().pointer, pointer);
  Result<std::string> digest = CanonicalSha256Text(input);
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.error().code, code);
  EXPECT_EQ(digest.error().pointer, pointer);
  EXPECT_EQ(digest.error().location.has_value(), fast.error().location.has_value());
  if (digest.error().location && fast.error().location) {
    EXPECT_EQ(digest.error().location->offset, fast.error().location->offset);
  }
}

class UpstreamVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(UpstreamVectors, InputCanonicalizesToOutputBytes) {
  ASSERT_TRUE(udon::testing::HaveExternalSuite("jcs"));
  const std::string name = GetParam();
  const std::string input = JcsVector("input/" + name + ".json");
  const std::string expected = JcsVector("output/" + name + ".json");
  ASSERT_FALSE(input.empty());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(FromHexDump(JcsVector("outhex/" + name + ".txt")), expected);
  ExpectCanonical(input, expected);
  // Canonical form is a fixed point.
  ExpectCanonical(expected, expected);
}

INSTANTIATE_TEST_SUITE_P(Jcs, UpstreamVectors,
                         ::testing::Values("arrays", "french", "structures", "unicode", "values",
                                           "weird"));

TEST(Rfc8785, AppendixBNumbers) {
  std::istringstream lines(Rfc8785("appendix-b-numbers.txt"));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    const std::size_t comma = line.find(',');
    ASSERT_NE(comma, std::string::npos);
    const double value = FromBits(line.substr(0, comma));
    const std::string expected = line.substr(comma + 1);
    EXPECT_EQ(FormatEs6Number(value), expected) << line;
    Result<std::string> via_value = Canonicalize(Value(value));
    ASSERT_TRUE(via_value.ok());
    EXPECT_EQ(*via_value, expected);
    ++count;
  }
  EXPECT_EQ(count, 24);
}

TEST(Rfc8785, AppendixBInvalidNumbersAreRefused) {
  std::istringstream lines(Rfc8785("appendix-b-invalid.txt"));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    Value document = {{"n", FromBits(line)}};
    Result<std::string> result = Canonicalize(document);
    ASSERT_FALSE(result.ok()) << line;
    EXPECT_EQ(result.error().code, "json.not_canonicalizable");
    EXPECT_EQ(result.error().pointer, "/n");
    ++count;
  }
  EXPECT_EQ(count, 2);
}

TEST(Rfc8785, Section324Sample) {
  const std::string expected = Rfc8785("sec3.2.4-output.json");
  EXPECT_EQ(FromHexDump(Rfc8785("sec3.2.4-output.hex")), expected);
  ExpectCanonical(Rfc8785("sec3.2.2-input.json"), expected);
}

TEST(Rfc8785, Section323Sorting) {
  const std::string expected = Rfc8785("sec3.2.3-sorting-output.json");
  ExpectCanonical(Rfc8785("sec3.2.3-sorting-input.json"), expected);
  // The values appear in the order the RFC lists.
  std::istringstream lines(Rfc8785("sec3.2.3-sorting-expected-order.txt"));
  std::string line;
  std::size_t position = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::size_t found = expected.find('"' + line + '"', position);
    ASSERT_NE(found, std::string::npos) << line;
    position = found;
  }
}

// The first 100,000 lines of upstream's sequence, each number formatted here, hash to the
// value upstream publishes; read back as one array, their texts stay as they are.
TEST(Es6Numbers, First100kLinesOfUpstreamSequence) {
  testing::Es6SequenceHasher hasher;
  std::string array_text = "[";
  testing::ForEachEs6TestNumber(100'000, [&](std::uint64_t bits) {
    if (hasher.count() != 0) array_text += ",";
    array_text += hasher.Add(bits);
  });
  ASSERT_EQ(hasher.count(), 100'000u);
  EXPECT_EQ(hasher.HexDigest(), "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7");
  array_text += "]";
  ExpectCanonical(array_text, array_text);
}

TEST(Numbers, Es6Rules) {
  EXPECT_EQ(FormatEs6Number(-0.0), "0");
  EXPECT_EQ(FormatEs6Number(1e21), "1e+21");
  EXPECT_EQ(FormatEs6Number(1e20), "100000000000000000000");
  EXPECT_EQ(FormatEs6Number(1e-7), "1e-7");
  EXPECT_EQ(FormatEs6Number(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatEs6Number(1e-6), "0.000001");
  EXPECT_EQ(FormatEs6Number(123.456), "123.456");
  EXPECT_EQ(FormatEs6Number(-1.5e300), "-1.5e+300");
}

TEST(Numbers, TextPathFormatsLiterals) {
  ExpectCanonical("[-0, 0.0, 1E2, 1e21, 1.50, 9007199254740993, -123456789012345, 1e-7]",
                  "[0,0,100,1e+21,1.5,9007199254740992,-123456789012345,1e-7]");
  ExpectCanonical("[1e-400, -1e-400, 100000000000000000000000]", "[0,0,1e+23]");
}

TEST(Numbers, IntegersCanonicalizeAsTheDoubleTheyConvertTo) {
  Value document = {{"big", std::numeric_limits<std::int64_t>::max()},
                    {"huge", std::numeric_limits<std::uint64_t>::max()},
                    {"small", std::int64_t{-42}}};
  Result<std::string> result = Canonicalize(document);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, R"({"big":9223372036854776000,"huge":18446744073709552000,"small":-42})");
  ExpectCanonical("[9223372036854775807,18446744073709551615]",
                  "[9223372036854776000,18446744073709552000]");
}

// The parser reads integers of up to 19 digits without from_chars: their double must be the
// one the text converts to, at the edges of exactness (2^53), of int64 and of 19 digits.
TEST(Numbers, IntegerFastPathBoundaries) {
  ExpectCanonical("[-0,0,-1,9007199254740992,9007199254740993,-9007199254740993]",
                  "[0,0,-1,9007199254740992,9007199254740992,-9007199254740992]");
  ExpectCanonical("[9223372036854775807,9223372036854775808,-9223372036854775808,"
                  "-9223372036854775809]",
                  "[9223372036854776000,9223372036854776000,-9223372036854776000,"
                  "-9223372036854776000]");
  // 19 digits (the last the fast path takes), 20 (from_chars again), and ties to even.
  ExpectCanonical("[9999999999999999999,10000000000000000000,99999999999999999999,"
                  "9007199254740995,9007199254740997]",
                  "[10000000000000000000,10000000000000000000,100000000000000000000,"
                  "9007199254740996,9007199254740996]");
  // With an exponent or a fraction, a number is no integer token.
  ExpectCanonical("[1e2,-0e0,10E-1,1.0,-0.0]", "[100,0,1,1,0]");
  for (const char* text : {"[00]", "[-01]", "[012]", "[-]", "[1e]", "[0x1]"}) {
    SCOPED_TRACE(text);
    ExpectRefused(text, "json.syntax", "/0");
  }
}

TEST(Numbers, IntegerFastPathAgreesWithStrtod) {
  testing::XorShift64 next(0x9E3779B97F4A7C15ull);
  for (int i = 0; i < 2000; ++i) {
    std::string digits = std::to_string(next());
    digits = digits.substr(0, 1 + static_cast<std::size_t>(i) % digits.size());
    const std::string text = (i % 3 == 0 ? "-" : "") + digits;
    SCOPED_TRACE(text);
    ExpectCanonical("[" + text + "]", "[" + FormatEs6Number(std::strtod(text.c_str(), nullptr)) + "]");
  }
}

// Decimals without an exponent of up to 19 digits are converted by one exact division when
// their digits fit 2^53, and copied as written when they are already their ES form (at most
// 15 significant digits, no trailing zero, not below 10^-6): both must agree with strtod
// and the ES formatting, at each of those edges and for random literals.
TEST(Numbers, DecimalFastPathsAgreeWithStrtod) {
  const auto expect_as_strtod = [](const std::string& text) {
    SCOPED_TRACE(text);
    const double expected = std::strtod(text.c_str(), nullptr);
    ExpectCanonical("[" + text + "]", "[" + FormatEs6Number(expected) + "]");
    Result<Value> parsed = Parse("[" + text + "]");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(std::bit_cast<std::uint64_t>((*parsed)[0].get<double>()),
              std::bit_cast<std::uint64_t>(expected));
  };
  for (const char* text :
       {"0.5", "-0.5", "0.0", "-0.0", "1.50", "1.05", "123456789012345.6", "12345678901234.56",
        "1234567890123.456", "0.000001", "0.0000015", "0.0000001", "-0.000001234567890123",
        "0.100000000000000", "900719925474099.2", "900719925474099.3", "9007199254740.993",
        "90071992547409.92", "90071992547409.93", "999999999999999.9", "0.9999999999999999999",
        "1.234567890123456789", "12345678901234567.89", "0.30000000000000004", "0.1", "0.2",
        "5e-324", "2.2250738585072014", "17976931348623157.0"}) {
    expect_as_strtod(text);
  }
  testing::XorShift64 next(0x2545F4914F6CDD1Dull);
  for (int i = 0; i < 20000; ++i) {
    const std::size_t digits = 1 + next() % 20;
    std::string number;
    for (std::size_t d = 0; d < digits; ++d) number.push_back(static_cast<char>('0' + next() % 10));
    const std::size_t point = next() % digits;  // digits before the point, at least one
    std::string integer = number.substr(0, point + 1);
    integer.erase(0, std::min(integer.find_first_not_of('0'), integer.size() - 1));
    const std::string fraction = number.substr(point + 1);
    if (fraction.empty()) continue;
    expect_as_strtod((next() % 4 == 0 ? "-" : "") + integer + "." + fraction);
    if (HasFailure()) return;
  }
}

TEST(Numbers, NonFiniteValuesAreRefusedWithTheirPointer) {
  Value document = {{"a", Value::array({1, std::numeric_limits<double>::infinity()})}};
  Result<std::string> result = Canonicalize(document);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "json.not_canonicalizable");
  EXPECT_EQ(result.error().pointer, "/a/1");
}

TEST(Strings, MinimalEscaping) {
  ExpectCanonical(R"(["\u0000\u0001\u001f\b\f\n\r\t\"\\\/\u007f\u00e9\u20ac"])",
                  "[\"\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\xc3\xa9\xe2\x82\xac\"]");
}

// A string written with minimal escapes is copied as written; any other escape makes the
// writer escape the decoded text again. Every kind of escape, alone and after a minimal
// one, as values and as member names.
TEST(Strings, MinimalEscapesAreKeptAndOthersRewritten) {
  const std::string minimal = R"(\u0000\u0001\u001f\b\f\n\r\t\"\\ \u000b\u001e)";
  ExpectCanonical("[\"" + minimal + "\"]", "[\"" + minimal + "\"]");
  const std::pair<const char*, const char*> rewritten[] = {
      {R"(\/)", "/"},          {R"(\u0041)", "A"},       {R"(\u001F)", R"(\u001f)"},
      {R"(\u0008)", R"(\b)"}, {R"(\u0009)", R"(\t)"},   {R"(\u000a)", R"(\n)"},
      {R"(\u000c)", R"(\f)"}, {R"(\u000D)", R"(\r)"},   {R"(\u0022)", R"(\")"},
      {R"(\u005c)", R"(\\)"}, {R"(\u007f)", "\x7f"},   {R"(\u00e9)", "\xc3\xa9"},
      {R"(\u0100)", "\xc4\x80"}, {R"(\ud83d\ude00)", "\xf0\x9f\x98\x80"}};
  for (const auto& [escape, canonical] : rewritten) {
    SCOPED_TRACE(escape);
    ExpectCanonical(std::string("[\"a") + escape + "b\"]", std::string("[\"a") + canonical + "b\"]");
    ExpectCanonical(std::string("[\"\\t") + escape + "\"]",
                    std::string("[\"\\t") + canonical + "\"]");
    ExpectCanonical(std::string("{\"z\":1,\"\\n") + escape + "\":2}",
                    std::string("{\"\\n") + canonical + "\":2,\"z\":1}");
  }
  // Noncharacters after minimal escapes (the bytes as written are checked) are refused;
  // their neighbours are not.
  ExpectRefused("{\"k\":\"\\t\xef\xb7\x90\"}", "json.not_canonicalizable", "/k");
  ExpectRefused("{\"k\":\"\\\"\\\\\xf4\x8f\xbf\xbf\"}", "json.not_canonicalizable", "/k");
  ExpectRefused("{\"\\u0001\xef\xbf\xbe\":0}", "json.not_canonicalizable", "/\x01\xef\xbf\xbe");
  ExpectCanonical("[\"\\t\xef\xb7\x8f\xef\xbf\xbd\\\"\"]", "[\"\\t\xef\xb7\x8f\xef\xbf\xbd\\\"\"]");
}

// Strings and members of every length up to past the short-copy sizes (4, 8, 16, 32, 64
// bytes), written and then moved when their object is reordered.
TEST(Strings, EveryLengthIsCopiedWhole) {
  for (std::size_t length = 0; length < 140; ++length) {
    SCOPED_TRACE(length);
    std::string x, y;
    for (std::size_t i = 0; i < length; ++i) {
      x.push_back(static_cast<char>('a' + i % 26));
      y.push_back(static_cast<char>('A' + i % 26));
    }
    ExpectCanonical("{\"b\":\"" + x + "\",\"a\":\"" + y + "\"}",
                    "{\"a\":\"" + y + "\",\"b\":\"" + x + "\"}");
    ExpectCanonical("{\"b" + x + "\":[\"" + y + "\"],\"a" + y + "\":{\"" + x + "\":1}}",
                    "{\"a" + y + "\":{\"" + x + "\":1},\"b" + x + "\":[\"" + y + "\"]}");
  }
}

TEST(Strings, InvalidUtf8InAValueIsRefused) {
  Value document = {{"s", std::string("\xc3\x28")}};
  Result<std::string> result = Canonicalize(document);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "json.not_canonicalizable");
  EXPECT_EQ(result.error().pointer, "/s");
}

TEST(Strings, NoncharactersAreRefused) {
  for (const char* text : {R"({"k":"\ufdd0"})", R"({"k":"\ufdef"})", R"({"k":"\ufffe"})",
                           R"({"k":"\uffff"})", R"({"k":"x\ud83f\udffe"})",
                           R"({"k":"\udbff\udfff"})", "{\"k\":\"\xef\xbf\xbf\"}"}) {
    SCOPED_TRACE(text);
    ExpectRefused(text, "json.not_canonicalizable", "/k");
    Result<Value> parsed = Parse(text);
    ASSERT_TRUE(parsed.ok());
    Result<std::string> slow = Canonicalize(*parsed);
    ASSERT_FALSE(slow.ok());
    EXPECT_EQ(slow.error().code, "json.not_canonicalizable");
    EXPECT_EQ(slow.error().pointer, "/k");
  }
  ExpectRefused(R"({"a":{"\ufdd5":1}})", "json.not_canonicalizable", "/a/\xef\xb7\x95");
  // Unescaped in the input, after and between runs of ASCII of every length.
  for (std::size_t prefix = 0; prefix < 20; ++prefix) {
    const std::string padding(prefix, 'x');
    ExpectRefused("{\"k\":\"" + padding + "\xef\xb7\x90" + padding + "\"}",
                  "json.not_canonicalizable", "/k");
    ExpectRefused("{\"k\":\"" + padding + "\xf4\x8f\xbf\xbe\"}", "json.not_canonicalizable",
                  "/k");
    const std::string fine = "\"" + padding + "\xef\xb7\x8f\xef\xbf\xbd\xf0\x9f\x98\x82" + padding + "\"";
    ExpectCanonical("[" + fine + "]", "[" + fine + "]");
  }
  // After multi-byte text too, where the parser checks 16 bytes at a time and flags only
  // the byte patterns that begin a noncharacter: each form at every offset 0..40.
  for (const std::string filler : {"\xE6\xB8\xB2", "\xC3\xA9", "a\xF0\x9F\x8E\xAC"}) {
    for (std::size_t offset = 0; offset <= 40; ++offset) {
      SCOPED_TRACE(offset);
      std::string padding(offset % filler.size(), 'x');
      while (padding.size() + filler.size() <= offset) padding += filler;
      for (const char* noncharacter : {"\xef\xb7\x90", "\xef\xb7\xaf", "\xef\xbf\xbe",
                                       "\xef\xbf\xbf", "\xf0\x9f\xbf\xbe", "\xf4\x8f\xbf\xbf"}) {
        ExpectRefused("{\"k\":\"" + padding + noncharacter + padding + filler + "\"}",
                      "json.not_canonicalizable", "/k");
      }
      // Their neighbours (U+FDCF, U+FDF0, U+FFFD, U+1FFFD, U+EFBF) pass.
      const std::string fine = "\"" + padding + "\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd" +
                               padding + "\xf0\x9f\xbf\xbd\xee\xbe\xbf" + filler + "\"";
      ExpectCanonical("[" + fine + "]", "[" + fine + "]");
    }
  }
  // Neighbours of the noncharacter ranges are ordinary characters.
  ExpectCanonical(R"(["\ufdcf\ufdf0\ufffd\ud83f\udffd"])",
                  "[\"\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd\xf0\x9f\xbf\xbd\"]");
}

// A string with an escape that is not minimal (here \/) is escaped again from its decoded
// text, whose scan stops only at bytes to escape and at the leads that begin a
// noncharacter: each kind after every offset 0..40 of ASCII and of two-, three- (EF lead)
// and four-byte characters, so that it falls at and across the scan's 16-byte blocks.
TEST(Strings, RewrittenStringsAtEveryOffset) {
  const std::pair<const char*, const char*> rewritten[] = {
      {R"(\u000a)", R"(\n)"}, {R"(\u0001)", R"(\u0001)"}, {R"(\")", R"(\")"},
      {R"(\\)", R"(\\)"},     {R"(\u001F)", R"(\u001f)"}, {"\x7f", "\x7f"},
      {R"(\uFFFD)", "\xef\xbf\xbd"}, {R"(\uFDCF)", "\xef\xb7\x8f"},
      {R"(\ud83f\udffd)", "\xf0\x9f\xbf\xbd"}, {"\xef\xbf\xbc", "\xef\xbf\xbc"}};
  const char* noncharacters[] = {"\xef\xb7\x90", "\xef\xbf\xbf", "\xf0\x9f\xbf\xbe",
                                 "\xf4\x8f\xbf\xbf", R"(\ufdef)", R"(\uFFFE)",
                                 R"(\ud83f\udfff)"};
  for (const std::string filler : {"a", "\xc3\xa9", "\xef\xbd\xb1", "\xf0\x9f\x8e\xac"}) {
    for (std::size_t offset = 0; offset <= 40; ++offset) {
      std::string padding;
      while (padding.size() + filler.size() <= offset) padding += filler;
      for (const auto& [written, canonical] : rewritten) {
        SCOPED_TRACE(std::to_string(offset) + " " + written);
        ExpectCanonical("[\"\\/" + padding + written + padding + filler + "\"]",
                        "[\"/" + padding + canonical + padding + filler + "\"]");
      }
      for (const char* noncharacter : noncharacters) {
        SCOPED_TRACE(std::to_string(offset) + " " + noncharacter);
        ExpectRefused("{\"k\":\"\\/" + padding + noncharacter + padding + filler + "\"}",
                      "json.not_canonicalizable", "/k");
      }
    }
  }
}

// The UTF-16 code units of UTF-8 text (for the tests' own ordering).
std::u16string Utf16(const std::string& text) {
  std::u16string units;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    std::uint32_t cp = length == 1 ? lead : lead & (0x7F >> length);
    for (std::size_t j = 1; j < length; ++j) cp = (cp << 6) | (text[i + j] & 0x3F);
    if (cp >= 0x10000) {
      units.push_back(static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10)));
      units.push_back(static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    } else {
      units.push_back(static_cast<char16_t>(cp));
    }
    i += length;
  }
  return units;
}

// Names built of characters whose UTF-8 lead bytes order differently from their UTF-16
// units (U+E000..U+FFFF against supplementary characters) and others, so that those bytes
// fall anywhere in the first eight, which the writer compares at once: every object comes
// out in the order of the names' UTF-16 code units, written plain or as escapes.
TEST(Sorting, NamesInUtf16OrderWhateverTheirFirstEightBytes) {
  const std::string pieces[] = {"a", "\xee\x80\x80", "\xef\xbd\xb1", "\xef\xbf\xbd",
                                "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbd", "\xed\x9f\xbf",
                                "\xc3\xa9", "z"};
  std::uint32_t state = 0x2545F491;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (int round = 0; round < 400; ++round) {
    const std::size_t count = 2 + next() % 23;
    std::vector<std::string> names;
    while (names.size() < count) {
      std::string name;
      for (std::uint32_t i = 0, n = 1 + next() % 5; i < n; ++i) name += pieces[next() % 9];
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    std::string input = "{";
    for (std::size_t i = 0; i < count; ++i) {
      // A third of the names escaped: \u escapes for a first character outside ASCII.
      std::string written = names[i];
      if (i % 3 == 0 && static_cast<unsigned char>(written[0]) >= 0x80) {
        std::string escaped;
        const std::u16string units = Utf16(written);
        for (char16_t unit : units) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(unit));
          escaped += buffer;
        }
        written = escaped;
      }
      input += (i ? ",\"" : "\"") + written + "\":" + std::to_string(i);
    }
    input += "}";
    std::vector<std::size_t> order(count);
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return Utf16(names[a]) < Utf16(names[b]); });
    std::string expected = "{";
    for (std::size_t i = 0; i < count; ++i) {
      expected += (i ? ",\"" : "\"") + names[order[i]] + "\":" + std::to_string(order[i]);
    }
    expected += "}";
    SCOPED_TRACE(input);
    ExpectCanonical(input, expected);
  }
}

TEST(Sorting, Utf16CodeUnitsNotCodePoints) {
  // U+E000 and U+FFEE sort after U+10000 (a surrogate pair, D800 DC00) in UTF-16, although
  // their UTF-8 bytes (EE, EF) sort before its F0.
  ExpectCanonical(R"({"\uffee":5,"\ue000":4,"\ud800\udc00":3,"\u00e9":2,"a":1,"":0})",
                  "{\"\":0,\"a\":1,\"\xc3\xa9\":2,\"\xf0\x90\x80\x80\":3,\"\xee\x80\x80\":4,"
                  "\"\xef\xbf\xae\":5}");
  // Astral against astral and BMP below U+E000 against astral keep byte order.
  ExpectCanonical(R"({"\ud83d\ude02":2,"\ud800\udc00":1,"\ud7ff":0})",
                  "{\"\xed\x9f\xbf\":0,\"\xf0\x90\x80\x80\":1,\"\xf0\x9f\x98\x82\":2}");
  // Shared prefixes, then the deciding code point.
  ExpectCanonical(R"({"x\uefff":1,"x\ud83d\ude02":0,"x":-1})",
                  "{\"x\":-1,\"x\xf0\x9f\x98\x82\":0,\"x\xee\xbf\xbf\":1}");
}

// Names that are written unescaped are read back from the output to be ordered; escaped
// ones are kept aside. Both kinds in one object, small and far above the in-place size.
TEST(Sorting, EscapedAndPlainNamesTogether) {
  ExpectCanonical(R"({"b\n":1,"b":2,"a\u0001":3,"a":0,"a\"":4})",
                  R"({"a":0,"a\u0001":3,"a\"":4,"b":2,"b\n":1})");
  ExpectRefused(R"({"a\"":1,"a\u0022":2})", "json.duplicate_key", "/a\"");
  ExpectRefused(R"({"x":{"q\t":1,"q":2,"q\u0009":3}})", "json.duplicate_key", "/x/q\t");
  std::string large = "{";
  std::string padding(40, 'p');
  for (int i = 300; i > 0; --i) {
    if (i != 300) large += ",";
    large += "\"k" + std::to_string(i) + (i % 3 == 0 ? "\\t" : "") + "\":{\"z\":\"" +
             padding + "\",\"y\":" + std::to_string(i) + "}";
  }
  large += "}";
  ExpectCanonicalAsTheValuePath(large);
}

// Objects of up to 8 and up to 16 members are ordered by counting smaller name prefixes
// (eight bytes), larger ones and those with a shared prefix by sorting: every count from
// 2 to 20, names in reverse and shuffled order, short, long and sharing their first eight
// bytes, and a duplicate at every position.
TEST(Sorting, EveryMemberCountAndPrefixKind) {
  const std::string stems[] = {"", "k", "abcdefgh", "abcdefghij", "\xc3\xa9t\xc3\xa9"};
  for (std::size_t count = 2; count <= 20; ++count) {
    for (const std::string& stem : stems) {
      SCOPED_TRACE(std::to_string(count) + " " + stem);
      std::vector<std::string> names;
      for (std::size_t i = 0; i < count; ++i) {
        // Distinct names; with a long stem they differ only after the eighth byte.
        names.push_back(stem + static_cast<char>('a' + (i * 7) % 26) + std::to_string(i));
      }
      std::string text = "{";
      for (std::size_t i = 0; i < count; ++i) {
        text += (i ? ",\"" : "\"") + names[count - 1 - i] + "\":[" + std::to_string(i) + "]";
      }
      text += "}";
      ExpectCanonicalAsTheValuePath(text);
      for (std::size_t duplicate = 0; duplicate + 1 < count; ++duplicate) {
        std::string with_duplicate = text.substr(0, text.size() - 1) + ",\"" +
                                     names[duplicate] + "\":0}";
        ExpectRefused(with_duplicate, "json.duplicate_key", "/" + names[duplicate]);
      }
    }
  }
}

TEST(Sorting, NestedObjectsInsideReorderedMembers) {
  ExpectCanonical(R"({"b":[{"z":1,"y":{"d":4,"c":[3,{"f":6,"e":5}]}},"s"],"a":{"k":true}})",
                  R"({"a":{"k":true},"b":[{"y":{"c":[3,{"e":5,"f":6}],"d":4},"z":1},"s"]})");
}

// A deterministic document with unsorted members at every level and objects from a few
// bytes to hundreds of kilobytes, so that both ways the text path reorders members (in place
// for small objects, by a final copy for large ones) are exercised, nested in each other.
std::string LargeUnsortedDocument(std::uint32_t& state, int depth) {
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  const char* samples[] = {"\"plain\"", "\"caf\u00e9 \\n \\\"q\\\"\"", "-0.0", "1e21",
                           "123456789012345678", "3.14159", "true", "null",
                           "\"\xe6\xb8\xb2\xe6\x9f\x93 \xf0\x9f\x8e\xac\""};
  std::string text = "{";
  const int members = 2 + static_cast<int>(next() % (depth > 2 ? 24 : 6));
  for (int i = 0; i < members; ++i) {
    if (i != 0) text += ",";
    text += "\"k" + std::to_string(next() % 100000) + "_" + std::to_string(i) + "\":";
    const std::uint32_t kind = next() % 10;
    if (depth > 0 && kind < 2) {
      text += LargeUnsortedDocument(state, depth - 1);
    } else if (depth > 0 && kind < 4) {
      text += "[" + LargeUnsortedDocument(state, depth - 1) + "," +
              samples[next() % std::size(samples)] + "]";
    } else {
      text += samples[next() % std::size(samples)];
    }
  }
  return text + "}";
}

TEST(TextPath, LargeDocumentsAgreeWithTheValuePath) {
  std::uint32_t state = 0x12345678;
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    std::string text = "[";
    for (int i = 0; i < 5; ++i) text += (i ? "," : "") + LargeUnsortedDocument(state, 5);
    text += "]";
    Result<Value> parsed = Parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
    Result<std::string> slow = Canonicalize(*parsed);
    ASSERT_TRUE(slow.ok());
    Result<std::string> fast = CanonicalizeText(text);
    ASSERT_TRUE(fast.ok()) << fast.error().Describe();
    EXPECT_EQ(*fast, *slow);
    // The digest path sends the same rearranged bytes to the hash in pieces.
    Result<std::string> digest = CanonicalSha256Text(text);
    ASSERT_TRUE(digest.ok());
    EXPECT_EQ(*digest, base::Sha256Hex(*slow));
    EXPECT_GT(text.size(), 200'000u);  // objects far above the in-place size
  }
}

TEST(Duplicates, RefusedWithTheSameErrorAsParse) {
  for (const char* text :
       {R"({"a":1,"a":2})", R"({"a":1,"b":{"x":1,"y":2,"x":3}})", R"([{"c":0},{"\u0061":1,"a":2}])",
        R"({"z":{"q":1,"q":1},"y":0})"}) {
    SCOPED_TRACE(text);
    Result<std::string> fast = CanonicalizeText(text);
    Result<Value> parsed = Parse(text);
    ASSERT_FALSE(fast.ok());
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(fast.error().code, "json.duplicate_key");
    EXPECT_EQ(fast.error().pointer, parsed.error().pointer);
    ASSERT_TRUE(fast.error().location.has_value());
    EXPECT_EQ(fast.error().location->offset, parsed.error().location->offset);
  }
  ExpectRefused(R"({"b":{"x":1,"y":2,"x":3}})", "json.duplicate_key", "/b/x");
}

TEST(Depth, NestingBeyondTheLimitIsRefused) {
  const std::string deep_ok = std::string(kDefaultMaxDepth, '[') + std::string(kDefaultMaxDepth, ']');
  EXPECT_TRUE(CanonicalizeText(deep_ok).ok());
  const std::string too_deep =
      std::string(kDefaultMaxDepth + 1, '[') + std::string(kDefaultMaxDepth + 1, ']');
  Result<std::string> fast = CanonicalizeText(too_deep);
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.error().code, "json.too_deep");

  Value deep = Value::array();
  for (std::size_t i = 0; i < kDefaultMaxDepth; ++i) deep = Value::array({std::move(deep)});
  Result<std::string> slow = Canonicalize(deep);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, "json.too_deep");
}

TEST(Errors, ParseErrorsPassThrough) {
  ExpectRefused(R"({"a":[1,2,})", "json.syntax", "/a/2");
  ExpectRefused("{\"a\":\"\xff\"}", "json.invalid_utf8", "/a");
  ExpectRefused("[1] x", "json.trailing_bytes", "");
}

// Found by fuzzing (fuzz/regressions/json_canonical/): the fast path stopped at the
// noncharacter and called malformed JSON not canonicalizable, or reported a later syntax
// error instead of an earlier duplicate, unlike Parse.
TEST(Errors, ParseErrorsWinOverEarlierCanonicalizationErrors) {
  ExpectRefused(R"({"a":"\ufdd0","b":[1,})", "json.syntax", "/b/1");
  ExpectRefused("[\"\xef\xbf\xbf\", \"\xff\"]", "json.invalid_utf8", "/1");
  ExpectRefused(R"(["\uffff", 1] x)", "json.trailing_bytes", "");
  ExpectRefused(R"(["\uffff"], 1)", "json.trailing_bytes", "");
  // A duplicate comes first in document order, though its object never closes.
  ExpectRefused("{\"a\":1,\"a\":2,\"b\":\"\x01\"}", "json.duplicate_key", "/a");
}

// The parser validates runs of multi-byte characters back to back; every malformed form is
// refused at its first byte wherever it falls against the 16-byte scan, after ASCII or
// after other multi-byte characters.
TEST(Strings, MalformedUtf8AtEveryOffset) {
  const std::string leads[] = {"x", "\xC3\xA9", "\xE6\xB8\xB2", "\xF0\x9F\x8E\xAC"};
  for (const std::string& lead : leads) {
    for (std::size_t count = 0; count < 20; ++count) {
      std::string prefix;
      for (std::size_t i = 0; i < count; ++i) prefix += lead;
      ExpectCanonical("\"" + prefix + "\"", "\"" + prefix + "\"");
      for (const std::string& bad : testing::MalformedUtf8Forms()) {
        for (const char* tail : {"\"", "tail\"", "\xE6\xB8\xB2\""}) {
          const std::string text = "[\"" + prefix + bad + tail + "]";
          Result<std::string> fast = CanonicalizeText(text);
          ASSERT_FALSE(fast.ok()) << text;
          EXPECT_EQ(fast.error().code, "json.invalid_utf8") << text;
          EXPECT_EQ(fast.error().pointer, "/0");
          ASSERT_TRUE(fast.error().location.has_value());
          EXPECT_EQ(fast.error().location->offset, 2 + prefix.size()) << text;
        }
      }
    }
  }
}

TEST(Scalars, TopLevelValues) {
  ExpectCanonical("  \"x\"  ", "\"x\"");
  ExpectCanonical("null", "null");
  ExpectCanonical("[true,false,null,{},[]]", "[true,false,null,{},[]]");
  ExpectCanonical("{ \"a\" : [ ] , \"b\" : { } }", R"({"a":[],"b":{}})");
}

}  // namespace
}  // namespace udon::json
