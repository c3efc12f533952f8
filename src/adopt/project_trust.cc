#include "adopt/project_trust.h"

#include <algorithm>
#include <filesystem>

#include "adopt/jsonc.h"

namespace udon::adopt {
namespace {

// ~/.claude.json's `projects/<dir>` object for the project (by its path, or the path with
// symlinks resolved), or null.
json::Value ClaudeProjectSettings(const std::vector<DiscoveredFile>& files, const std::string& project) {
  for (const DiscoveredFile& file : files) {
    if (file.file.shape != FileShape::kClaudeJson || file.error) continue;
    auto document = ParseJsonc(file.text);
    if (!document.ok() || !document->is_object() || !document->contains("projects")) return nullptr;
    const json::Value& projects = (*document)["projects"];
    std::error_code error;
    const std::string real = std::filesystem::canonical(project, error).string();
    for (const std::string& dir : {project, real}) {
      if (projects.is_object() && projects.contains(dir) && projects[dir].is_object()) return projects[dir];
    }
    return nullptr;
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

HostApproval ClaudeProjectApproval(const std::vector<DiscoveredFile>& files, const std::string& project,
                                   const std::string& key) {
  const json::Value settings = ClaudeProjectSettings(files, project);
  if (!settings.is_object()) return HostApproval::kNotAsked;
  if (Lists(settings, "disabledMcpjsonServers", key)) return HostApproval::kRejected;
  if (States(settings, "hasTrustDialogAccepted", false)) return HostApproval::kNotAsked;
  if (Lists(settings, "enabledMcpjsonServers", key) || States(settings, "enableAllProjectMcpServers", true)) {
    return HostApproval::kApproved;
  }
  return HostApproval::kNotAsked;
}

std::optional<std::string> ProjectEntrySkipped(const std::vector<DiscoveredFile>& files, const DiscoveredFile& file,
                                               const Entry& entry, bool named) {
  if (file.file.scope != "project" || file.file.host != "claude-code") return std::nullopt;
  switch (ClaudeProjectApproval(files, file.file.project, entry.key)) {
    case HostApproval::kApproved: return std::nullopt;
    case HostApproval::kRejected: return "rejected in Claude Code for this project";
    case HostApproval::kNotAsked: break;
  }
  if (named) return std::nullopt;
  return "not approved in Claude Code for this project (name it with --server to capture it, sandboxed)";
}

}  // namespace udon::adopt
