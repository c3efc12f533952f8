#include "base/ascii.h"

#include <gtest/gtest.h>

namespace udon::base {
namespace {

TEST(Ascii, FoldsLettersOnlyAndLeavesOtherBytes) {
  EXPECT_EQ(AsciiLower("Content-Type: Text/Event-Stream"), "content-type: text/event-stream");
  EXPECT_EQ(AsciiUpper("udon_upstream_url-1"), "UDON_UPSTREAM_URL-1");
  EXPECT_EQ(AsciiLower("\xC3\x89@[`{"), "\xC3\x89@[`{");  // É in UTF-8 and the letters' neighbours
  EXPECT_EQ(AsciiUpper("\xC3\xA9@[`{"), "\xC3\xA9@[`{");
  EXPECT_EQ(AsciiLower(""), "");
}

}  // namespace
}  // namespace udon::base
