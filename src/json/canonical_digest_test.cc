// The pinned digest: SHA-256 over the RFC 8785 canonical bytes, from a value and straight
// from text.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "base/sha256.h"
#include "json/canonical.h"
#include "json/internal/test_files.h"

namespace udon::json {
namespace {

using base::Sha256Hex;

TEST(CanonicalSha256, CanonicalDigestsOfUpstreamOutputs) {
  const std::pair<const char*, const char*> cases[] = {
      {"arrays", "099601b171cafed97c333f8878d68e7f8c8f795412adb34b2fdcf0e7c7beac42"},
      {"french", "d99d0ebdcb0033cb858cfa830ae46bc0fb3309413b271f1da828c89901a27ed5"},
      {"structures", "605f65004ec2db7692522a0852c22f1c989e036d547e88963d1a3143cf3195d5"},
      {"unicode", "0d99aad92a125196ff887876643fd3206786a84ddce2cee52ba4ad256d2381d3"},
      {"values", "2d5e01a318d0f0879ab568c4be289c8b1f64ef8921a53c6277d5e069978baacb"},
      {"weird", "6af595a9aa80110b964b4de3f82a05fa6ae7423005019bacfa2620dddc4e94d1"},
  };
  ASSERT_TRUE(udon::testing::HaveExternalSuite("jcs"));
  for (const auto& [name, digest] : cases) {
    SCOPED_TRACE(name);
    Result<Value> parsed = Parse(testing::JcsVector(std::string("input/") + name + ".json"));
    ASSERT_TRUE(parsed.ok());
    Result<std::string> hex = CanonicalSha256(*parsed);
    ASSERT_TRUE(hex.ok());
    EXPECT_EQ(*hex, digest);
  }
}

TEST(CanonicalSha256, CanonicalDigestPropagatesRefusal) {
  Result<std::string> hex = CanonicalSha256(Value(std::nan("")));
  ASSERT_FALSE(hex.ok());
  EXPECT_EQ(hex.error().code, "json.not_canonicalizable");
}

TEST(CanonicalSha256, CanonicalDigestOfTextEqualsDigestOfCanonicalBytes) {
  const std::string text = R"({"b":[1,{"z":null,"y":"\u00e9"}],"a":1e21})";
  Result<std::string> canonical = CanonicalizeText(text);
  ASSERT_TRUE(canonical.ok());
  Result<std::string> digest = CanonicalSha256Text(text);
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, Sha256Hex(*canonical));
  Result<std::string> refused = CanonicalSha256Text(R"({"a":1,"a":2})");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "json.duplicate_key");
}

}  // namespace
}  // namespace udon::json
