// adopt --dir D: the selected host entries captured into D (adoption.h, CaptureEntries).
#include <algorithm>
#include <filesystem>
#include <utility>

#include "adopt/adoption.h"
#include "adopt/adoption_dir.h"
#include "adopt/project_trust.h"
#include "capture/capture.h"
#include "base/file.h"
#include "json/canonical.h"
#include "manifest/carry_over.h"
#include "manifest/pin_file.h"

namespace udon::adopt {
namespace {

namespace fs = std::filesystem;

// The host file as seen by one entry: a Claude Code entry under /projects/<dir> (local
// scope) starts in <dir>, as a project file's entry starts in its project.
HostFile FileOfEntry(const HostFile& file, const Entry& entry) {
  HostFile seen = file;
  if (entry.path.size() == 4 && entry.path[0] == "projects") seen.project = entry.path[1];
  return seen;
}

struct Captured {
  AdoptedEntry entry;
  json::Value runtime;
  std::string manifest_text;
};

// The adopted entry already recorded for this host entry, if any.
const AdoptedEntry* Recorded(const Adoption& adoption, const std::string& file, const std::vector<std::string>& path) {
  for (const AdoptedEntry& entry : adoption.entries) {
    if (entry.file == file && entry.path == path) return &entry;
  }
  return nullptr;
}

AdoptedEntry NameEntry(const DiscoveredFile& file, const Entry& entry, const Adoption& adoption,
                       const std::vector<Captured>& captured) {
  if (const AdoptedEntry* known = Recorded(adoption, file.file.path, entry.path)) return *known;
  std::vector<std::string> taken;
  for (const AdoptedEntry& other : adoption.entries) {
    if (other.host == file.file.host) taken.push_back(other.server.substr(other.host.size() + 1));
  }
  for (const Captured& other : captured) {
    if (other.entry.host == file.file.host) taken.push_back(other.entry.server.substr(other.entry.host.size() + 1));
  }
  const std::string name = EntryName(entry.key, taken);
  AdoptedEntry adopted;
  adopted.host = file.file.host;
  adopted.scope = file.file.scope;
  adopted.file = file.file.path;
  adopted.path = entry.path;
  adopted.key = entry.key;
  adopted.server = file.file.host + "." + name;
  adopted.manifest = file.file.host + "/" + name + ".tools.json";
  adopted.pin = file.file.host + "/" + name + ".pin";
  adopted.project = FileOfEntry(file.file, entry).project;
  adopted.vscode = file.file.shape == FileShape::kVsCodeMcp || file.file.shape == FileShape::kVsCodeSettings;
  return adopted;
}

// A project file's stdio entry is the repository's code: it runs in the default sandbox,
// whatever sandbox it asks for itself (a wider one), unless --no-sandbox.
void SandboxProjectEntry(const HostFile& file, const CaptureRequest& request, json::Value& runtime) {
  if (file.scope == "project" && !request.unsandboxed_projects && runtime.contains("command")) {
    runtime["sandbox"] = true;
  }
}

// The capture of one runtime entry, named `server`, with its stored login attached.
Result<manifest::Manifest> CaptureRuntime(const std::string& server, const json::Value& runtime, const Entry& entry,
                                          const CaptureRequest& request, mcp::RuntimeConfig& config) {
  const json::Value one = {{"mcpServers", {{server, runtime}}}};
  UDON_ASSIGN_OR_RETURN(config, mcp::ParseRuntimeConfig(one.dump(), CaptureEnvironment(entry), request.dir));
  if (request.attach_logins) request.attach_logins(config);
  capture::CaptureOptions options;
  options.servers = {server};
  options.expires_in_days = request.expires_in_days;
  options.protocol_version = request.protocol_version;
  options.on_progress = request.on_progress;
  return capture::Capture(config, request.policy, options, manifest::NowSeconds());
}

// An http server that answered 401 to initialize, or whose "oauth" entry has no login yet:
// it wants an OAuth login.
bool WantsLogin(const Error& error, const json::Value& runtime) {
  if (!runtime.contains("url")) return false;
  if (error.code == "auth.login_required") return true;
  return error.details.is_object() && error.details.contains("status") && error.details["status"] == 401;
}

Result<Captured> CaptureOne(const DiscoveredFile& file, const Entry& entry, AdoptedEntry adopted,
                            const CaptureRequest& request) {
  Captured out{std::move(adopted), json::Value(), ""};
  UDON_ASSIGN_OR_RETURN(out.runtime, RuntimeEntry(entry, FileOfEntry(file.file, entry), request.sandbox));
  SandboxProjectEntry(file.file, request, out.runtime);
  mcp::RuntimeConfig config;
  Result<manifest::Manifest> captured = CaptureRuntime(out.entry.server, out.runtime, entry, request, config);
  if (!captured.ok() && request.log_in && WantsLogin(captured.error(), out.runtime)) {
    UDON_ASSIGN_OR_RETURN(mcp::ServerConfig server, config.Find(out.entry.server));
    UDON_RETURN_IF_ERROR(request.log_in(server, entry.key));
    if (!out.runtime.contains("oauth")) out.runtime["oauth"] = json::Value::object();
    captured = CaptureRuntime(out.entry.server, out.runtime, entry, request, config);
  }
  if (!captured.ok()) return std::move(captured).error();
  manifest::Manifest fresh = std::move(captured).value();
  const std::string path = (fs::path(request.dir) / out.entry.manifest).string();
  std::error_code ignored;
  if (fs::exists(path, ignored)) {
    // A manifest adopted before: reviews of unchanged tools carry over (capture --update).
    if (auto previous = manifest::Manifest::Load(path); previous.ok()) {
      UDON_RETURN_IF_ERROR(manifest::CarryOverReviews(*previous, fresh));
    }
  }
  out.manifest_text = fresh.ToPrettyJson();
  return out;
}

Result<json::Value> LoadRuntimeConfigJson(const std::string& dir) {
  const std::string path = (fs::path(dir) / "mcp.json").string();
  std::error_code ignored;
  if (!fs::exists(path, ignored)) return json::Value{{"mcpServers", json::Value::object()}};
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path));
  auto value = json::Parse(text);
  if (!value.ok() || !value->is_object() || !value->contains("mcpServers")) {
    return MakeError("adopt.record_invalid", "mcp.json in the adoption directory is not one adopt wrote");
  }
  return std::move(value).value();
}

// Skips what adopt leaves alone, saying why; true when the entry is to be captured.
bool Wanted(const ClaudeApprovals& approvals, const DiscoveredFile& file, const Entry& entry,
            const CaptureRequest& request, CaptureReport& report) {
  auto selected = [](const std::vector<std::string>& wanted, const std::string& name) {
    return wanted.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  if (!selected(request.hosts, file.file.host) || !selected(request.servers, entry.key)) return false;
  const std::string name = file.file.host + "/" + entry.key;
  if (entry.gated) report.skipped.emplace_back(name, "already gated");
  else if (entry.disabled) report.skipped.emplace_back(name, "disabled");
  if (entry.gated || entry.disabled) return false;
  if (auto why = ProjectEntrySkipped(approvals, file, entry, !request.servers.empty())) {
    report.skipped.emplace_back(name, *why);
    return false;
  }
  return true;
}

Status WriteAll(const std::vector<Captured>& captured, Adoption& adoption, json::Value& runtime,
                const std::vector<DiscoveredFile>& files, const std::string& dir) {
  for (const Captured& one : captured) {
    const fs::path path = fs::path(dir) / one.entry.manifest;
    UDON_RETURN_IF_ERROR(MakeOwnerOnlyDir(path.parent_path().string()));
    UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic(path.string(), one.manifest_text));
    runtime["mcpServers"][one.entry.server] = one.runtime;
    if (!Recorded(adoption, one.entry.file, one.entry.path)) adoption.entries.push_back(one.entry);
    for (const DiscoveredFile& file : files) {
      if (file.file.path == one.entry.file) adoption.files[file.file.path] = {file.file.host, file.sha256, "", ""};
    }
  }
  UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic((fs::path(dir) / "mcp.json").string(), runtime.dump(2) + "\n"));
  return adoption.Save(dir);
}

}  // namespace

Result<std::string> PinText(const std::string& dir, const std::string& server, const std::string& manifest_sha256) {
  UDON_ASSIGN_OR_RETURN(json::Value runtime, LoadRuntimeConfigJson(dir));
  const json::Value& servers = runtime["mcpServers"];
  if (!servers.is_object() || !servers.contains(server)) {
    Error error = MakeError("adopt.record_invalid", "mcp.json in the adoption directory lacks an adopted entry");
    error.details["server"] = server;
    return error;
  }
  UDON_ASSIGN_OR_RETURN(std::string entry_sha256, json::CanonicalSha256(servers[server]));
  return manifest::PinFileText({manifest_sha256, {{server, entry_sha256}}});
}

Result<CaptureReport> CaptureEntries(const std::vector<DiscoveredFile>& files, const CaptureRequest& request) {
  UDON_ASSIGN_OR_RETURN(base::FileLock lock, LockAdoption(request.dir));
  UDON_ASSIGN_OR_RETURN(Adoption adoption, Adoption::Load(request.dir));
  UDON_ASSIGN_OR_RETURN(json::Value runtime, LoadRuntimeConfigJson(request.dir));
  CaptureReport report;
  std::vector<Captured> captured;
  const ClaudeApprovals approvals(files);
  for (const DiscoveredFile& file : files) {
    if (file.error) continue;
    for (const Entry& entry : file.entries) {
      if (!Wanted(approvals, file, entry, request, report)) continue;
      auto known = adoption.files.find(file.file.path);
      if (known != adoption.files.end() && !known->second.applied_sha256.empty()) {
        Error error = MakeError("adopt.already_applied",
                                "the host file was rewritten by adopt --apply; run adopt --undo first", entry.pointer);
        error.details["host"] = file.file.host;
        return error;
      }
      auto one = CaptureOne(file, entry, NameEntry(file, entry, adoption, captured), request);
      // An entry that cannot be adopted stays as it is and does not stop the others.
      if (!one.ok()) report.refused.emplace_back(file.file.host + "/" + entry.key, std::move(one).error());
      else captured.push_back(std::move(one).value());
    }
  }
  if (captured.empty() && !report.refused.empty()) return report.refused.front().second;
  if (captured.empty()) {
    return MakeError("adopt.nothing_selected", "no ungated, enabled entry matches --host and --server");
  }
  adoption.policy = request.policy_path;
  UDON_RETURN_IF_ERROR(WriteAll(captured, adoption, runtime, files, request.dir));
  for (const Captured& one : captured) report.captured.push_back(one.entry);
  return report;
}

}  // namespace udon::adopt
