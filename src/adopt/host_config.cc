#include "adopt/host_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace udon::adopt {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string Join(const std::string& base, const std::string& relative) {
  return (std::filesystem::path(base) / relative).lexically_normal().string();
}

// The per-user application data directory: ~/Library/Application Support (macOS),
// %APPDATA% (Windows), $XDG_CONFIG_HOME or ~/.config (Linux).
std::string AppData(const Locations& where) {
  switch (where.os) {
    case Os::kMacos: return Join(where.home, "Library/Application Support");
    case Os::kWindows: return where.appdata.value_or(Join(where.home, "AppData/Roaming"));
    case Os::kLinux: break;
  }
  return where.xdg_config_home.value_or(Join(where.home, ".config"));
}

void UserFiles(const Locations& where, std::vector<HostFile>& files) {
  const std::string app = AppData(where);
  const std::string claude_dir = where.claude_config_dir.value_or(where.home);
  files.push_back({"claude-desktop", "user", Join(app, "Claude/claude_desktop_config.json"), FileShape::kMcpServers, ""});
  files.push_back({"claude-code", "user", Join(claude_dir, ".claude.json"), FileShape::kClaudeJson, ""});
  files.push_back({"cursor", "user", Join(where.home, ".cursor/mcp.json"), FileShape::kMcpServers, ""});
  files.push_back({"vscode", "user", Join(app, "Code/User/mcp.json"), FileShape::kVsCodeMcp, ""});
  files.push_back({"vscode", "user", Join(app, "Code/User/settings.json"), FileShape::kVsCodeSettings, ""});
  files.push_back({"windsurf", "user", Join(where.home, ".codeium/windsurf/mcp_config.json"), FileShape::kMcpServers, ""});
  files.push_back({"gemini", "user", Join(where.home, ".gemini/settings.json"), FileShape::kMcpServers, ""});
}

void ProjectFiles(const std::string& project, std::vector<HostFile>& files) {
  files.push_back({"claude-code", "project", Join(project, ".mcp.json"), FileShape::kMcpServers, project});
  files.push_back({"cursor", "project", Join(project, ".cursor/mcp.json"), FileShape::kMcpServers, project});
  files.push_back({"vscode", "project", Join(project, ".vscode/mcp.json"), FileShape::kVsCodeMcp, project});
  files.push_back({"gemini", "project", Join(project, ".gemini/settings.json"), FileShape::kMcpServers, project});
}

}  // namespace

Os CurrentOs() {
#if defined(__APPLE__)
  return Os::kMacos;
#elif defined(_WIN32)
  return Os::kWindows;
#else
  return Os::kLinux;
#endif
}

const std::vector<std::string>& HostIds() {
  static const std::vector<std::string> ids = {"claude-desktop", "claude-code", "cursor",
                                               "vscode",         "windsurf",    "gemini"};
  return ids;
}

bool IsHostId(const std::string& id) {
  return std::find(HostIds().begin(), HostIds().end(), id) != HostIds().end();
}

Locations LocationsFromEnvironment(std::vector<std::string> projects) {
  Locations where;
  where.os = CurrentOs();
  where.home = Env("HOME").value_or(Env("USERPROFILE").value_or("/"));
  where.appdata = Env("APPDATA");
  where.xdg_config_home = Env("XDG_CONFIG_HOME");
  where.claude_config_dir = Env("CLAUDE_CONFIG_DIR");
  where.projects = std::move(projects);
  return where;
}

std::vector<HostFile> CandidateFiles(const Locations& where) {
  std::vector<HostFile> files;
  UserFiles(where, files);
  for (const std::string& project : where.projects) {
    std::vector<HostFile> more;
    ProjectFiles(project, more);
    // A project that is the home directory: ~/.gemini/settings.json is the user file.
    for (HostFile& file : more) {
      auto same = [&](const HostFile& known) { return known.path == file.path; };
      if (std::none_of(files.begin(), files.end(), same)) files.push_back(std::move(file));
    }
  }
  return files;
}

}  // namespace udon::adopt
