// Project files are the repository's, not the user's: a freshly cloned repository's
// `.mcp.json` or `.vscode/mcp.json` names commands its author chose, and the hosts ask before
// they run one (docs/contract.md 7.21). adopt honours what the user answered there and runs
// what no host approved only when asked, in the sandbox.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adopt/discovery.h"

namespace udon::adopt {

// What Claude Code's ~/.claude.json says of a project's `.mcp.json` server: under
// `projects/<dir>`, `disabledMcpjsonServers` (rejected), `enabledMcpjsonServers` or
// `enableAllProjectMcpServers` (approved), `hasTrustDialogAccepted: false` (the folder itself
// is not trusted: nothing is approved). No record: not approved.
enum class HostApproval { kApproved, kNotAsked, kRejected };
HostApproval ClaudeProjectApproval(const std::vector<DiscoveredFile>& files, const std::string& project,
                                   const std::string& key);

// Why adopt leaves a project file's entry alone, or nullopt to capture it (and for a user
// file). `named`: the user named the entry with --server, which captures an entry Claude
// Code has not been asked about; a rejected one is never captured.
std::optional<std::string> ProjectEntrySkipped(const std::vector<DiscoveredFile>& files, const DiscoveredFile& file,
                                               const Entry& entry, bool named);

}  // namespace udon::adopt
