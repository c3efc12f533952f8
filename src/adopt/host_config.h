// Where the MCP hosts on a machine keep their server configuration (docs/contract.md 7.21):
// the user-level and project-level files of Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf and Gemini CLI, per operating system, and the shape of each file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace udon::adopt {

enum class Os { kLinux, kMacos, kWindows };
Os CurrentOs();

// How a file holds its server entries.
enum class FileShape {
  kMcpServers,      // root "mcpServers" (Claude Desktop, .mcp.json, Cursor, Windsurf, Gemini)
  kClaudeJson,      // ~/.claude.json: root "mcpServers" and "projects"/<dir>/"mcpServers"
  kVsCodeMcp,       // VS Code mcp.json: root "servers" (type required), JSON with comments
  kVsCodeSettings,  // VS Code settings.json: "mcp"/"servers", JSON with comments
};

struct HostFile {
  std::string host;   // claude-desktop, claude-code, cursor, vscode, windsurf, gemini
  std::string scope;  // "user" or "project"
  std::string path;   // absolute
  FileShape shape = FileShape::kMcpServers;
  std::string project;  // the project directory of a project file ("" for user files)
};

// The host identifiers, in the order --list prints them.
const std::vector<std::string>& HostIds();
bool IsHostId(const std::string& id);

// What the candidate paths depend on: the home directory and the environment variables
// the hosts themselves read (APPDATA on Windows, XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR).
struct Locations {
  Os os = Os::kLinux;
  std::string home;
  std::optional<std::string> appdata;
  std::optional<std::string> xdg_config_home;
  std::optional<std::string> claude_config_dir;
  std::vector<std::string> projects;  // absolute project directories to look into
};

// From this process's environment ($HOME, ...) and the given project directories.
Locations LocationsFromEnvironment(std::vector<std::string> projects);

// Every file a host could read, whether or not it exists, user files first.
std::vector<HostFile> CandidateFiles(const Locations& where);

}  // namespace udon::adopt
