#include "gate/evidence_key.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <thread>
#include <vector>

#include "gate/state.h"
#include "json/canonical.h"
#include "test_support.h"

namespace udon::gate {
namespace {

using json::Value;

// HMAC-SHA-256 as OpenSSL computes it (the independent reference), keyed with the key
// file's bytes.
std::string Reference(const std::string& key, const Value& value) {
  const std::string canonical = *json::Canonicalize(value);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(canonical.data()),
       canonical.size(), mac, &length);
  return HexName(std::string_view(reinterpret_cast<const char*>(mac), length));
}

std::vector<Value> Values() {
  return {Value::object(), Value{{"b", 2}, {"a", "x"}}, Value(nullptr), Value(std::string(300, 'q')),
          Value{{"source", "https://assets.example.test/a.blend"}, {"angles", 2}, {"resolution", 1024}}};
}

TEST(EvidenceKeyTest, DigestIsHmacSha256OfTheCanonicalBytesUnderTheKeyFile) {
  testing::TempDir dir;
  auto key = EvidenceKey::LoadOrCreate(dir.path());
  ASSERT_TRUE(key.ok());
  const std::string bytes = dir.Read("evidence.key");
  ASSERT_EQ(bytes.size(), 32u);
  for (const Value& value : Values()) {
    const std::string digest = key->Digest(value);
    EXPECT_EQ(digest.size(), 64u);
    EXPECT_EQ(digest, Reference(bytes, value)) << value.dump();
    EXPECT_EQ(key->Digest(value), digest);  // the keyed state is copied, never consumed
  }
  // A copy of the key digests alike; another key does not.
  const EvidenceKey copy = *key;
  EXPECT_EQ(copy.Digest(Values()[1]), key->Digest(Values()[1]));
  testing::TempDir other;
  auto other_key = EvidenceKey::LoadOrCreate(other.path());
  ASSERT_TRUE(other_key.ok());
  EXPECT_NE(other_key->Digest(Values()[1]), key->Digest(Values()[1]));
}

TEST(EvidenceKeyTest, ThreadsDigestingAtOnceAgree) {
  testing::TempDir dir;
  auto key = EvidenceKey::LoadOrCreate(dir.path());
  ASSERT_TRUE(key.ok());
  const std::string bytes = dir.Read("evidence.key");
  std::vector<std::string> expected;
  for (const Value& value : Values()) expected.push_back(Reference(bytes, value));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        for (std::size_t i = 0; i < expected.size(); ++i) {
          if (key->Digest(Values()[i]) != expected[i]) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int count : mismatches) EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace udon::gate
