#include "adopt/discovery.h"

#include <filesystem>
#include <utility>

#include "adopt/jsonc.h"
#include "base/file.h"
#include "json/pointer.h"
#include "base/sha256.h"

namespace udon::adopt {
namespace {

std::string Transport(const json::Value& entry) {
  if (!entry.is_object()) return "unknown";
  const std::string type = entry.value("type", std::string());
  if (type == "stdio" || (type.empty() && entry.contains("command"))) return "stdio";
  if (type == "http" || type == "streamable-http" || type == "sse" || entry.contains("url") ||
      entry.contains("serverUrl") || entry.contains("httpUrl")) {
    return "http";
  }
  return "unknown";
}

void AddEntries(const json::Value& servers, std::vector<std::string> prefix, std::vector<Entry>& entries) {
  if (!servers.is_object()) return;
  for (const auto& [key, value] : servers.items()) {
    Entry entry;
    entry.key = key;
    entry.path = prefix;
    entry.path.push_back(key);
    entry.pointer = json::Pointer(entry.path).ToString();
    entry.transport = Transport(value);
    entry.gated = IsGated(value);
    entry.disabled = value.is_object() && value.value("disabled", false) == true;
    entry.value = value;
    entries.push_back(std::move(entry));
  }
}

}  // namespace

bool IsGated(const json::Value& entry) {
  if (!entry.is_object() || !entry.contains("command") || !entry["command"].is_string()) return false;
  const std::string command = entry["command"].get<std::string>();
  const std::string name = std::filesystem::path(command).filename().string();
  if (name != "udon-mcp" && name != "udon-mcp.exe") return false;
  const json::Value* args = entry.contains("args") ? &entry["args"] : nullptr;
  return args != nullptr && args->is_array() && !args->empty() && (*args)[0] == "serve";
}

std::vector<Entry> EntriesOf(FileShape shape, const json::Value& document) {
  std::vector<Entry> entries;
  if (!document.is_object()) return entries;
  switch (shape) {
    case FileShape::kMcpServers:
      if (document.contains("mcpServers")) AddEntries(document["mcpServers"], {"mcpServers"}, entries);
      break;
    case FileShape::kClaudeJson:
      if (document.contains("mcpServers")) AddEntries(document["mcpServers"], {"mcpServers"}, entries);
      if (document.contains("projects") && document["projects"].is_object()) {
        for (const auto& [project, settings] : document["projects"].items()) {
          if (settings.is_object() && settings.contains("mcpServers")) {
            AddEntries(settings["mcpServers"], {"projects", project, "mcpServers"}, entries);
          }
        }
      }
      break;
    case FileShape::kVsCodeMcp:
      if (document.contains("servers")) AddEntries(document["servers"], {"servers"}, entries);
      break;
    case FileShape::kVsCodeSettings:
      if (document.contains("mcp") && document["mcp"].is_object() && document["mcp"].contains("servers")) {
        AddEntries(document["mcp"]["servers"], {"mcp", "servers"}, entries);
      }
      break;
  }
  return entries;
}

std::optional<DiscoveredFile> ReadHostFile(const HostFile& file) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(file.path, ignored)) return std::nullopt;
  DiscoveredFile found;
  found.file = file;
  auto text = base::ReadFile(file.path, 64 << 20);
  if (!text.ok()) {
    found.error = text.error();
    return found;
  }
  found.text = std::move(text).value();
  found.sha256 = base::Sha256Hex(found.text);
  auto document = ParseJsonc(found.text);
  if (!document.ok()) {
    found.error = document.error();
    return found;
  }
  found.entries = EntriesOf(file.shape, *document);
  return found;
}

std::vector<DiscoveredFile> Discover(const std::vector<HostFile>& candidates) {
  std::vector<DiscoveredFile> files;
  for (const HostFile& candidate : candidates) {
    if (auto found = ReadHostFile(candidate)) files.push_back(std::move(*found));
  }
  return files;
}

}  // namespace udon::adopt
