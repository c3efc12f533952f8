#include "schema/internal/format.h"

#include <gtest/gtest.h>

namespace udon::schema::internal {
namespace {

bool Check(std::string_view format, std::string_view value) {
  FormatCheck check = FindFormatCheck(format);
  EXPECT_NE(check, nullptr) << format;
  return check != nullptr && check(value);
}

TEST(FormatTest, DatesAndTimes) {
  EXPECT_TRUE(Check("date", "2024-02-29"));
  EXPECT_FALSE(Check("date", "2023-02-29"));
  EXPECT_FALSE(Check("date", "2023-1-01"));
  EXPECT_TRUE(Check("time", "23:59:60Z"));
  EXPECT_TRUE(Check("time", "15:59:60-08:00"));
  EXPECT_FALSE(Check("time", "22:59:60Z"));
  EXPECT_FALSE(Check("time", "12:00:00"));
  EXPECT_TRUE(Check("date-time", "1985-04-12T23:20:50.52Z"));
  EXPECT_FALSE(Check("date-time", "1985-04-12 23:20:50Z"));
  EXPECT_TRUE(Check("duration", "P1Y2M3DT4H5M6S"));
  EXPECT_TRUE(Check("duration", "P2W"));
  EXPECT_FALSE(Check("duration", "PT"));
  EXPECT_FALSE(Check("duration", "P1Y2D"));
}

TEST(FormatTest, Network) {
  EXPECT_TRUE(Check("ipv4", "192.168.0.1"));
  EXPECT_FALSE(Check("ipv4", "192.168.0.01"));
  EXPECT_FALSE(Check("ipv4", "256.0.0.1"));
  EXPECT_TRUE(Check("ipv6", "::ffff:192.168.0.1"));
  EXPECT_TRUE(Check("ipv6", "fe80::1"));
  EXPECT_FALSE(Check("ipv6", "1::2::3"));
  EXPECT_FALSE(Check("ipv6", "[::1]"));
  EXPECT_TRUE(Check("hostname", "www.example.com"));
  EXPECT_FALSE(Check("hostname", "-bad.example"));
  EXPECT_FALSE(Check("hostname", std::string(64, 'a')));
  EXPECT_TRUE(Check("email", "joe.bloggs@example.com"));
  EXPECT_TRUE(Check("email", "\"joe bloggs\"@example.com"));
  EXPECT_FALSE(Check("email", "joe..bloggs@example.com"));
}

TEST(FormatTest, Identifiers) {
  EXPECT_TRUE(Check("uri", "https://user@example.com:8080/a/b?q=1#frag"));
  EXPECT_FALSE(Check("uri", "//example.com/no-scheme"));
  EXPECT_FALSE(Check("uri", "http://exa mple.com"));
  EXPECT_TRUE(Check("uri-reference", "../relative#x"));
  EXPECT_TRUE(Check("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380"));
  EXPECT_FALSE(Check("uuid", "2eb8aa08aa9811eab4aa73b441d16380"));
  EXPECT_TRUE(Check("json-pointer", "/a~1b/0"));
  EXPECT_FALSE(Check("json-pointer", "/a~2"));
  EXPECT_TRUE(Check("relative-json-pointer", "1/a"));
  EXPECT_TRUE(Check("regex", "^[a-z]+$"));
  EXPECT_FALSE(Check("regex", "^(abc]"));
  EXPECT_TRUE(Check("uri-template", "http://example.com/{term}"));
}

TEST(FormatTest, UnknownFormatsHaveNoCheck) {
  EXPECT_EQ(FindFormatCheck("color"), nullptr);
}

}  // namespace
}  // namespace udon::schema::internal
