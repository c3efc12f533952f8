#include "manifest/pin_file.h"

#include <gtest/gtest.h>

namespace udon::manifest {
namespace {

const std::string kManifest(64, 'a');
const std::string kEntry(64, 'b');

TEST(PinFile, APinOfOneWordBindsTheManifestOnly) {
  const PinFile pin = ParsePinFile("  " + kManifest + "\n");
  EXPECT_EQ(pin.manifest_sha256, kManifest);
  EXPECT_TRUE(pin.entries.empty());
  EXPECT_EQ(ParsePinFile("").manifest_sha256, "");
}

TEST(PinFile, BoundEntriesRoundTripAndOtherLinesAreIgnored) {
  const PinFile pin{kManifest, {{"claude-code.demo", kEntry}}};
  const std::string text = PinFileText(pin);
  EXPECT_EQ(text, kManifest + "\nentry claude-code.demo " + kEntry + "\n");
  const PinFile back = ParsePinFile(text + "a comment line\nentry x\nentry a b c\n");
  EXPECT_EQ(back.manifest_sha256, kManifest);
  EXPECT_EQ(back.entries, pin.entries);
}

}  // namespace
}  // namespace udon::manifest
