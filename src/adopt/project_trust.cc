#include "adopt/project_trust.h"

#include <algorithm>
#include <filesystem>

#include "adopt/jsonc.h"

namespace udon::adopt {
namespace {

// ~/.claude.json's `projects` member, from the first readable one, or null.
json::Value ClaudeProjects(const std::vector<DiscoveredFile>& files) {
  for (const DiscoveredFile& file : files) {
    if (file.file.shape != FileShape::kClaudeJson || file.error) continue;
    auto document = ParseJsonc(file.text);
    if (!document.ok() || !document->is_object() || !document->contains("projects")) return nullptr;
    return std::move((*document)["projects"]);
  }
  return nullptr;
}

// The `projects/<dir>` object for the project (by its path, or the path with symlinks
// resolved), or null.
const json::Value* ProjectSettings(const json::Value& projects, const std::string& project) {
  if (!projects.is_object()) return nullptr;
  std::error_code error;
  const std::string real = std::filesystem::canonical(project, error).string();
  for (const std::string& dir : {project, real}) {
    auto it = projects.find(dir);
    if (it != projects.end() && it->is_object()) return &*it;
  }
  return nullptr;
}

bool Lists(const json::Value& settings, const char* member, const std::string& key) {
  if (!settings.contains(member) || !settings[member].is_array()) return false;
  const json::Value& names = settings[member];
  return std::find(names.begin(), names.end(), json::Value(key)) != names.end();
}

// A boolean member stated as `want` (any other type states nothing).
bool States(const json::Value& settings, const char* member, bool want) {
  return settings.contains(member) && settings[member].is_boolean() && settings[member].get<bool>() == want;
}

}  // namespace

ClaudeApprovals::ClaudeApprovals(const std::vector<DiscoveredFile>& files) : projects_(ClaudeProjects(files)) {}

HostApproval ClaudeApprovals::For(const std::string& project, const std::string& key) const {
  const json::Value* found = ProjectSettings(projects_, project);
  if (found == nullptr) return HostApproval::kNotAsked;
  const json::Value& settings = *found;
  if (Lists(settings, "disabledMcpjsonServers", key)) return HostApproval::kRejected;
  if (States(settings, "hasTrustDialogAccepted", false)) return HostApproval::kNotAsked;
  if (Lists(settings, "enabledMcpjsonServers", key) || States(settings, "enableAllProjectMcpServers", true)) {
    return HostApproval::kApproved;
  }
  return HostApproval::kNotAsked;
}

std::optional<std::string> ProjectEntrySkipped(const ClaudeApprovals& approvals, const DiscoveredFile& file,
                                               const Entry& entry, bool named) {
  if (file.file.scope != "project" || file.file.host != "claude-code") return std::nullopt;
  switch (approvals.For(file.file.project, entry.key)) {
    case HostApproval::kApproved: return std::nullopt;
    case HostApproval::kRejected: return "rejected in Claude Code for this project";
    case HostApproval::kNotAsked: break;
  }
  if (named) return std::nullopt;
  return "not approved in Claude Code for this project (name it with --server to capture it, sandboxed)";
}

}  // namespace udon::adopt
