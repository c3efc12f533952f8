#include "adopt/adoption.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "adopt/carried.h"
#include "base/file.h"

namespace udon::adopt {
namespace {

namespace fs = std::filesystem;

Error EntryError(std::string code, std::string message, const Entry& entry) {
  Error error = MakeError(std::move(code), std::move(message), entry.pointer);
  error.details["server"] = entry.key;
  return error;
}

bool Reserved(const std::string& name) {
  return name.rfind("UDON_MCP_", 0) == 0 || name.rfind("PG", 0) == 0;
}

json::Value HttpEntry(const Entry& entry) {
  const json::Value& value = entry.value;
  const json::Value upstream = SplitCarried(value).upstream;
  json::Value out = {{"type", value.value("type", std::string("http")) == "sse" ? "sse" : "http"}};
  for (const char* member : {"url", "serverUrl", "httpUrl"}) {
    if (upstream.contains(member)) out["url"] = upstream[member];
  }
  if (upstream.contains("headers") && upstream["headers"].is_object()) out["headers"] = upstream["headers"];
  return out;
}

Result<json::Value> StdioEntry(const Entry& entry, const HostFile& file, bool sandbox) {
  const json::Value& value = entry.value;
  const json::Value upstream = SplitCarried(value).upstream;
  json::Value out = {{"command", value["command"]}};
  if (upstream.contains("args")) out["args"] = upstream["args"];
  if (upstream.contains("env") && upstream["env"].is_object()) {
    for (const auto& [name, ignored] : upstream["env"].items()) {
      if (Reserved(name)) {
        Error error = EntryError("adopt.reserved_variable",
                                 "the entry sets a variable udon-mcp keeps to itself (UDON_MCP_*, PG*)", entry);
        error.details["variable"] = name;
        return error;
      }
    }
    out["env"] = upstream["env"];
  }
  std::string cwd = value.contains("cwd") && value["cwd"].is_string() ? value["cwd"].get<std::string>() : "";
  if (!file.project.empty() && (cwd.empty() || fs::path(cwd).is_relative())) {
    cwd = (fs::path(file.project) / cwd).lexically_normal().string();
    if (cwd.size() > 1 && cwd.back() == '/') cwd.pop_back();
  }
  if (!cwd.empty()) out["cwd"] = cwd;
  for (const char* member : {"inheritEnv", "sandbox", "timeout"}) {
    if (value.contains(member)) out[member] = value[member];
  }
  if (sandbox && !out.contains("sandbox")) out["sandbox"] = true;
  return out;
}

json::Value EntryToJson(const AdoptedEntry& e) {
  return {{"host", e.host},         {"scope", e.scope},   {"file", e.file},         {"path", e.path},
          {"key", e.key},           {"server", e.server}, {"manifest", e.manifest}, {"pin", e.pin},
          {"project", e.project},   {"vscode", e.vscode}};
}

AdoptedEntry EntryFromJson(const json::Value& v) {
  AdoptedEntry e;
  e.host = v.at("host").get<std::string>();
  e.scope = v.at("scope").get<std::string>();
  e.file = v.at("file").get<std::string>();
  e.path = v.at("path").get<std::vector<std::string>>();
  e.key = v.at("key").get<std::string>();
  e.server = v.at("server").get<std::string>();
  e.manifest = v.at("manifest").get<std::string>();
  e.pin = v.at("pin").get<std::string>();
  e.project = v.at("project").get<std::string>();
  e.vscode = v.at("vscode").get<bool>();
  return e;
}

// An entry whose host file has no record (a hand-edited adopt.json) has no digest to
// check the file against: the record is not one adopt wrote.
Status EveryEntryHasItsFile(const Adoption& adoption) {
  for (const AdoptedEntry& entry : adoption.entries) {
    if (adoption.files.count(entry.file) == 0) {
      Error error = MakeError("adopt.record_invalid", "adopt.json names an entry whose host file it does not record");
      error.details["server"] = entry.server;
      return error;
    }
  }
  return OkStatus();
}

}  // namespace

json::Value Adoption::ToJson() const {
  json::Value out = {{"entries", json::Value::array()}, {"files", json::Value::object()}, {"policy", policy}};
  for (const AdoptedEntry& entry : entries) out["entries"].push_back(EntryToJson(entry));
  if (!applied_entries.empty()) out["appliedEntries"] = applied_entries;
  for (const auto& [path, file] : files) {
    out["files"][path] = {{"host", file.host}, {"sha256", file.sha256}, {"backup", file.backup},
                          {"appliedSha256", file.applied_sha256}};
  }
  return out;
}

Result<Adoption> Adoption::FromJson(const json::Value& value) {
  try {
    Adoption adoption;
    adoption.policy = value.value("policy", std::string());
    for (const json::Value& entry : value.at("entries")) adoption.entries.push_back(EntryFromJson(entry));
    for (const auto& [path, file] : value.at("files").items()) {
      adoption.files[path] = {file.at("host").get<std::string>(), file.at("sha256").get<std::string>(),
                              file.at("backup").get<std::string>(), file.at("appliedSha256").get<std::string>()};
    }
    if (value.contains("appliedEntries")) {
      adoption.applied_entries = value.at("appliedEntries").get<std::map<std::string, std::string>>();
    }
    UDON_RETURN_IF_ERROR(EveryEntryHasItsFile(adoption));
    return adoption;
  } catch (const json::Value::exception&) {
    return MakeError("adopt.record_invalid", "adopt.json in the adoption directory is not one adopt wrote");
  }
}

Result<Adoption> Adoption::Load(const std::string& dir) {
  const std::string path = (fs::path(dir) / "adopt.json").string();
  std::error_code ignored;
  if (!fs::exists(path, ignored)) return Adoption{};
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path));
  auto value = json::Parse(text);
  if (!value.ok()) return MakeError("adopt.record_invalid", "adopt.json in the adoption directory is not JSON");
  return FromJson(*value);
}

Status Adoption::Save(const std::string& dir) const {
  return base::WriteSecretFileAtomic((fs::path(dir) / "adopt.json").string(), ToJson().dump(2) + "\n");
}

Result<base::FileLock> LockAdoption(const std::string& dir) {
  std::error_code ignored;
  if (!fs::exists(dir, ignored)) {
    fs::create_directories(fs::path(dir).parent_path(), ignored);
    ::mkdir(dir.c_str(), 0700);
  }
  auto lock = base::FileLock::TryAcquire((fs::path(dir) / "adopt.lock").string());
  if (!lock.ok() && lock.error().code == "io.locked") {
    return MakeError("adopt.busy", "another adopt run is using the adoption directory; run again when it has ended");
  }
  return lock;
}

Result<json::Value> RuntimeEntry(const Entry& entry, const HostFile& file, bool sandbox) {
  if (entry.transport == "stdio") return StdioEntry(entry, file, sandbox);
  if (entry.transport == "http") return HttpEntry(entry);
  return EntryError("adopt.unsupported", "the entry is neither a stdio nor an HTTP server", entry);
}

mcp::EnvLookup CaptureEnvironment(const Entry& entry) {
  std::map<std::string, std::string> carried;
  if (entry.value.is_object()) {
    for (CarriedVariable& variable : SplitCarried(entry.value).carried) {
      carried[variable.name] = std::move(variable.value);
    }
  }
  return [carried = std::move(carried)](const std::string& name) -> std::optional<std::string> {
    if (auto found = carried.find(name); found != carried.end()) {
      // Expanded as the host expands its entry's values, from its own environment.
      auto expanded = mcp::ExpandEnv(found->second, mcp::ProcessEnv());
      if (expanded.ok()) return *expanded;
      return std::nullopt;
    }
    return mcp::ProcessEnv()(name);
  };
}

std::string EntryName(const std::string& key, const std::vector<std::string>& taken) {
  std::string base;
  for (char c : key.substr(0, 48)) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       c == '.' || c == '-';
    base += plain ? c : '_';
  }
  if (base.empty() || base == "." || base == "..") base = "server";
  std::string name = base;
  for (int n = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++n) {
    name = base + "-" + std::to_string(n);
  }
  return name;
}

}  // namespace udon::adopt
