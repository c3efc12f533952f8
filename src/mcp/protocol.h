// The MCP protocol revisions this implementation speaks, client and server alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace udon::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

// Newest first.
const std::vector<std::string>& SupportedProtocolVersions();
bool IsSupportedProtocolVersion(std::string_view version);

}  // namespace udon::mcp
