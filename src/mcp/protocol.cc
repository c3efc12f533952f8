#include "mcp/protocol.h"

#include <algorithm>

namespace udon::mcp {

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26"};
  return versions;
}

bool IsSupportedProtocolVersion(std::string_view version) {
  const auto& versions = SupportedProtocolVersions();
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

}  // namespace udon::mcp
