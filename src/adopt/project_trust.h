// Project files are the repository's, not the user's: a freshly cloned repository's
// `.mcp.json` or `.vscode/mcp.json` names commands its author chose, and the hosts ask before
// they run one (docs/contract.md 7.21). adopt honours what the user answered there and runs
// what no host approved only when asked, in the sandbox.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adopt/discovery.h"
#include "json/json.h"

namespace udon::adopt {

// What Claude Code's ~/.claude.json says of a project's `.mcp.json` server: under
// `projects/<dir>`, `disabledMcpjsonServers` (rejected), `enabledMcpjsonServers` or
// `enableAllProjectMcpServers` (approved), `hasTrustDialogAccepted: false` (the folder itself
// is not trusted: nothing is approved). No record: not approved.
enum class HostApproval { kApproved, kNotAsked, kRejected };

// The answers, read once from the first readable ~/.claude.json among the discovered files
// (it can hold megabytes of history: parsed once, not once per entry).
class ClaudeApprovals {
 public:
  explicit ClaudeApprovals(const std::vector<DiscoveredFile>& files);
  HostApproval For(const std::string& project, const std::string& key) const;

 private:
  json::Value projects_;  // its `projects` member; null when there is none
};

// Why adopt leaves a project file's entry alone, or nullopt to capture it (and for a user
// file). `named`: the user named the entry with --server, which captures an entry Claude
// Code has not been asked about; a rejected one is never captured.
std::optional<std::string> ProjectEntrySkipped(const ClaudeApprovals& approvals, const DiscoveredFile& file,
                                               const Entry& entry, bool named);

}  // namespace udon::adopt
