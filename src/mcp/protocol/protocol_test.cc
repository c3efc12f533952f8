#include "mcp/protocol/protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace udon::mcp {
namespace {

TEST(ProtocolVersionsTest, EachSupportedVersionBelongsToExactlyOneEra) {
  for (const std::string& version : SupportedProtocolVersions()) {
    EXPECT_NE(IsModernProtocolVersion(version), IsLegacyProtocolVersion(version)) << version;
  }
  EXPECT_TRUE(IsModernProtocolVersion(kModernProtocolVersion));
  EXPECT_TRUE(IsLegacyProtocolVersion(kLatestLegacyProtocolVersion));
  EXPECT_TRUE(IsLegacyProtocolVersion("2025-03-26"));
  EXPECT_TRUE(IsLegacyProtocolVersion("2024-11-05"));
  EXPECT_FALSE(IsLegacyProtocolVersion("2024-10-07"));
  EXPECT_FALSE(IsModernProtocolVersion("v999.0.0"));
  EXPECT_EQ(EraOf(kModernProtocolVersion), Era::kModern);
  EXPECT_EQ(EraOf("2025-06-18"), Era::kLegacy);
  EXPECT_EQ(EraOf("1900-01-01"), Era::kLegacy);
  EXPECT_STREQ(EraName(Era::kModern), "modern");
  EXPECT_STREQ(EraName(Era::kLegacy), "legacy");
}

// 2024-11-05 is spoken over stdio only, so the server framework (stdio and HTTP alike)
// does not serve it by default.
TEST(ProtocolVersionsTest, TheStdioOnlyRevisionIsSpokenButNotServed) {
  EXPECT_EQ(SupportedProtocolVersions(),
            (std::vector<std::string>{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}));
  EXPECT_TRUE(IsStdioOnlyProtocolVersion("2024-11-05"));
  EXPECT_FALSE(IsStdioOnlyProtocolVersion("2025-03-26"));
  EXPECT_FALSE(IsStdioOnlyProtocolVersion("2024-10-07"));
  EXPECT_EQ(ServedProtocolVersions(),
            (std::vector<std::string>{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
}

TEST(ProtocolErrorCodesTest, OnlyTheSpecificationsCodesAreModern) {
  EXPECT_TRUE(rpc_code::IsModernError(-32020));
  EXPECT_TRUE(rpc_code::IsModernError(-32021));
  EXPECT_TRUE(rpc_code::IsModernError(-32022));
  EXPECT_FALSE(rpc_code::IsModernError(-32601));
  EXPECT_FALSE(rpc_code::IsModernError(-32602));
  EXPECT_FALSE(rpc_code::IsModernError(-32002));
}

TEST(HeaderValueTest, PlainAsciiStaysAsIs) {
  EXPECT_EQ(EncodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(EncodeHeaderValue("tools/call"), "tools/call");
  EXPECT_EQ(EncodeHeaderValue(""), "");
  EXPECT_EQ(EncodeHeaderValue("a\tb c"), "a\tb c");  // inner tab and space are field-safe
}

// The encoding table of the 2026-07-28 Streamable HTTP transport.
TEST(HeaderValueTest, UnsafeValuesUseTheBase64Sentinel) {
  EXPECT_EQ(EncodeHeaderValue("Hello, \xe4\xb8\x96\xe7\x95\x8c"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
  EXPECT_EQ(EncodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(EncodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(EncodeHeaderValue("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  EXPECT_EQ(EncodeHeaderValue("\x7f"), "=?base64?fw==?=");
}

TEST(HeaderValueTest, DecodeInvertsEncode) {
  const std::vector<std::string> values = {
      "us-west1", "Hello, \xe4\xb8\x96\xe7\x95\x8c", " padded ", "line1\nline2",
      "=?base64?literal?=", "", "a", "ab", "abc", "abcd", std::string("nul\0byte", 8)};
  for (const std::string& value : values) {
    std::string decoded;
    ASSERT_TRUE(DecodeHeaderValue(EncodeHeaderValue(value), decoded)) << value;
    EXPECT_EQ(decoded, value);
  }
}

TEST(HeaderValueTest, ValuesWithoutTheWholeSentinelAreLiteral) {
  std::string decoded;
  ASSERT_TRUE(DecodeHeaderValue("SGVsbG8=", decoded));
  EXPECT_EQ(decoded, "SGVsbG8=");
  ASSERT_TRUE(DecodeHeaderValue("=?base64?SGVsbG8=", decoded));
  EXPECT_EQ(decoded, "=?base64?SGVsbG8=");
  ASSERT_TRUE(DecodeHeaderValue("SGVsbG8=?=", decoded));
  EXPECT_EQ(decoded, "SGVsbG8=?=");
  ASSERT_TRUE(DecodeHeaderValue("=?BASE64?SGVsbG8=?=", decoded));  // markers are case-sensitive
  EXPECT_EQ(decoded, "=?BASE64?SGVsbG8=?=");
}

TEST(HeaderValueTest, MalformedBase64IsRefused) {
  std::string decoded;
  EXPECT_TRUE(DecodeHeaderValue("=?base64?SGVsbG8=?=", decoded));
  EXPECT_EQ(decoded, "Hello");
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVsbG8?=", decoded));     // missing padding
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVs!!!bG8=?=", decoded));  // not the alphabet
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SG=sbG8=?=", decoded));     // padding inside
  EXPECT_FALSE(DecodeHeaderValue("=?base64?S===?=", decoded));
  EXPECT_FALSE(DecodeHeaderValue("=?base64?SGVsbG8-?=", decoded));     // base64url is not base64
}

}  // namespace
}  // namespace udon::mcp
