#include "base/sha256.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace udon::base {
namespace {

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256("abc")[0], 0xba);
}

TEST(Sha256, StreamInPiecesEqualsOneShot) {
  EXPECT_EQ(Sha256Stream().FinishHex(), Sha256Hex(""));
  const std::string text(1000, 'q');
  Sha256Stream stream;
  for (std::size_t at = 0; at < text.size(); at += 7) stream.Update(std::string_view(text).substr(at, 7));
  EXPECT_EQ(stream.FinishHex(), Sha256Hex(text));
}

std::string HexOf(const std::array<std::uint8_t, 32>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (std::uint8_t byte : bytes) hex += {kHex[byte >> 4], kHex[byte & 0xF]};
  return hex;
}

// OpenSSL, the reference Nettle's digests are checked against.
std::string ReferenceSha256Hex(std::string_view bytes) {
  std::array<std::uint8_t, 32> digest{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return HexOf(digest);
}

std::string ReferenceHmacHex(std::string_view key, std::string_view message) {
  std::array<std::uint8_t, 32> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(), &length);
  return HexOf(mac);
}

std::string PseudoRandomBytes(std::mt19937_64& random, std::size_t size) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

// FIPS 180-4 examples (NIST CSRC) and the NESSIE/long-message vectors.
TEST(Sha256, NistVectors) {
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                      "klmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

// Every length around the padding's edges (55 bytes: length fits the block; 56-63: a
// second block; 64, 65 and multiples) and several blocks, against OpenSSL.
TEST(Sha256, BoundaryLengthsAgreeWithOpenSsl) {
  std::mt19937_64 random(31);
  for (std::size_t size : {0, 1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 191, 192, 193, 1000}) {
    SCOPED_TRACE(size);
    const std::string bytes = PseudoRandomBytes(random, size);
    EXPECT_EQ(Sha256Hex(bytes), ReferenceSha256Hex(bytes));
  }
}

// Nettle's own code path follows the CPU (the SHA extensions, else portable code); CTest runs
// this binary a second time with NETTLE_FAT_OVERRIDE=none so both paths are checked here.
TEST(Sha256, RandomInputsAgreeWithOpenSsl) {
  std::mt19937_64 random(8785);
  for (int round = 0; round < 2000; ++round) {
    const std::string bytes = PseudoRandomBytes(random, random() % (round < 1900 ? 300 : 70000));
    ASSERT_EQ(Sha256Hex(bytes), ReferenceSha256Hex(bytes)) << bytes.size();
  }
}

// Streamed in pieces of every size 1-130 (crossing the 64-byte buffer at every offset)
// equals one shot; a copy taken midway finishes the prefix and leaves the original going.
TEST(Sha256, StreamedInAnyPiecesEqualsOneShot) {
  std::mt19937_64 random(20);
  const std::string bytes = PseudoRandomBytes(random, 777);
  const std::string expected = ReferenceSha256Hex(bytes);
  for (std::size_t piece = 1; piece <= 130; ++piece) {
    SCOPED_TRACE(piece);
    Sha256Stream stream;
    stream.Update("");
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      stream.Update(std::string_view(bytes).substr(at, piece));
    }
    EXPECT_EQ(stream.FinishHex(), expected);
  }
  Sha256Stream stream;
  stream.Update(std::string_view(bytes).substr(0, 100));
  Sha256Stream prefix = stream;
  stream.Update(std::string_view(bytes).substr(100));
  EXPECT_EQ(prefix.FinishHex(), Sha256Hex(bytes.substr(0, 100)));
  EXPECT_EQ(stream.FinishHex(), expected);
}

// RFC 4231 test cases 1, 2, 6 and 7 (key longer than a block), then random keys of every
// length around the block size and random messages against OpenSSL.
TEST(Sha256, HmacVectorsAndOpenSsl) {
  EXPECT_EQ(HexOf(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(HexOf(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HexOf(HmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(HexOf(HmacSha256(std::string(131, '\xaa'),
                             "This is a test using a larger than block-size key and a larger than "
                             "block-size data. The key needs to be hashed before being used by the "
                             "HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  std::mt19937_64 random(4231);
  for (std::size_t key_size : {0, 1, 32, 63, 64, 65, 200}) {
    SCOPED_TRACE(key_size);
    const std::string key = PseudoRandomBytes(random, key_size);
    const std::string message = PseudoRandomBytes(random, random() % 500);
    EXPECT_EQ(HexOf(HmacSha256(key, message)), ReferenceHmacHex(key, message));
  }
}

TEST(Sha256, IsSha256Hex) {
  EXPECT_TRUE(IsSha256Hex(std::string(64, 'a')));
  EXPECT_TRUE(IsSha256Hex(Sha256Hex("x")));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(65, 'a')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'A')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, 'a') + "g"));
  EXPECT_FALSE(IsSha256Hex(""));
}

}  // namespace
}  // namespace udon::base
