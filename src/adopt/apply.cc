#include "adopt/apply.h"

#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <utility>

#include "adopt/rewrite.h"
#include "base/file.h"
#include "base/sha256.h"
#include "manifest/manifest.h"

namespace udon::adopt {
namespace {

namespace fs = std::filesystem;

std::string InDir(const std::string& dir, const std::string& relative) {
  return fs::absolute(fs::path(dir) / relative).lexically_normal().string();
}

Error FileChanged(const std::string& path, const char* since) {
  Error error = MakeError("adopt.file_changed", std::string("the host file changed since ") + since +
                                                    "; nothing was written (run adopt --dir again)");
  error.details["path"] = path;
  return error;
}

// Where a host file's bytes are: a symlinked file (dotfiles kept in a repository) is
// written through its link, so the link stays a link.
std::string RealPath(const std::string& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  return error ? path : real.string();
}

// Writes bytes over the file at `link_or_path` atomically, keeping its permission bits (a
// file only its owner may read stays so throughout).
Status WriteKeepingMode(const std::string& link_or_path, std::string_view bytes) {
  const std::string path = RealPath(link_or_path);
  struct stat info {};
  const bool known = ::stat(path.c_str(), &info) == 0;
  const bool owner_only = known && (info.st_mode & 077) == 0;
  UDON_RETURN_IF_ERROR(owner_only ? base::WriteSecretFileAtomic(path, bytes) : base::WriteFileAtomic(path, bytes));
  if (known) ::chmod(path.c_str(), info.st_mode & 07777);
  return OkStatus();
}

std::string BackupPath(const std::string& file) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::string path = file + ".udon-mcp-" + stamp + ".bak";
  std::error_code ignored;
  for (int n = 2; fs::exists(path, ignored); ++n) path = file + ".udon-mcp-" + stamp + "-" + std::to_string(n) + ".bak";
  return path;
}

struct PlannedFile {
  std::string path;
  std::string original;
  std::string rewritten;
};

Result<std::vector<PlannedFile>> PlanFiles(const std::string& dir, const Adoption& adoption,
                                           const std::string& udon_mcp) {
  std::map<std::string, std::vector<EntryEdit>> edits;
  for (const AdoptedEntry& entry : adoption.entries) {
    GatewayCommand gateway{udon_mcp, InDir(dir, entry.manifest), InDir(dir, entry.pin), InDir(dir, "mcp.json"),
                           entry.server, adoption.policy};
    edits[entry.file].push_back({entry.path, gateway, entry.vscode});
  }
  std::vector<PlannedFile> planned;
  for (const auto& [path, file_edits] : edits) {
    const AdoptedFile& record = adoption.files.at(path);
    if (!record.applied_sha256.empty()) {
      Error error = MakeError("adopt.already_applied", "the host file is rewritten already (adopt --undo restores it)");
      error.details["path"] = path;
      return error;
    }
    UDON_ASSIGN_OR_RETURN(std::string original, base::ReadFile(path));
    if (base::Sha256Hex(original) != record.sha256) return FileChanged(path, "adopt read it");
    UDON_ASSIGN_OR_RETURN(std::string rewritten, RewriteEntries(original, file_edits));
    planned.push_back({path, std::move(original), std::move(rewritten)});
  }
  return planned;
}

}  // namespace

Result<std::vector<EntryReview>> ReviewState(const std::string& dir, const Adoption& adoption) {
  if (adoption.entries.empty()) {
    return MakeError("adopt.nothing_adopted", "the adoption directory holds no adopted entry (adopt --dir D first)");
  }
  std::vector<EntryReview> state;
  for (const AdoptedEntry& entry : adoption.entries) {
    UDON_ASSIGN_OR_RETURN(manifest::Manifest loaded, manifest::Manifest::Load(InDir(dir, entry.manifest)));
    EntryReview review{entry.server, entry.key, entry.host, loaded.sha256(), {}, {}};
    for (const auto& [name, count] : loaded.ToolNames(entry.server)) {
      (loaded.review(entry.server, name) != nullptr ? review.reviewed : review.unreviewed).push_back(name);
    }
    state.push_back(std::move(review));
  }
  return state;
}

Result<ApplyReport> Apply(const std::string& dir, const std::string& udon_mcp) {
  UDON_ASSIGN_OR_RETURN(Adoption adoption, Adoption::Load(dir));
  ApplyReport report;
  UDON_ASSIGN_OR_RETURN(report.entries, ReviewState(dir, adoption));
  for (const EntryReview& entry : report.entries) {
    if (entry.reviewed.empty()) {
      Error error = MakeError("adopt.not_reviewed",
                              "an adopted manifest has no reviewed tool; review the tools to expose first");
      error.details["server"] = entry.server;
      return error;
    }
  }
  UDON_ASSIGN_OR_RETURN(std::vector<PlannedFile> planned, PlanFiles(dir, adoption, udon_mcp));
  std::vector<std::string> pins;  // each binds its manifest and its D/mcp.json entry
  for (std::size_t i = 0; i < adoption.entries.size(); ++i) {
    UDON_ASSIGN_OR_RETURN(std::string pin, PinText(dir, adoption.entries[i].server, report.entries[i].manifest_sha256));
    pins.push_back(std::move(pin));
  }
  for (std::size_t i = 0; i < adoption.entries.size(); ++i) {
    UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic(InDir(dir, adoption.entries[i].pin), pins[i]));
  }
  for (const PlannedFile& file : planned) {
    const std::string backup = BackupPath(RealPath(file.path));
    UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic(backup, file.original));
    UDON_RETURN_IF_ERROR(WriteKeepingMode(file.path, file.rewritten));
    adoption.files[file.path].backup = backup;
    adoption.files[file.path].applied_sha256 = base::Sha256Hex(file.rewritten);
    UDON_RETURN_IF_ERROR(adoption.Save(dir));
    report.files.emplace_back(file.path, backup);
  }
  return report;
}

Result<std::vector<std::string>> Undo(const std::string& dir) {
  UDON_ASSIGN_OR_RETURN(Adoption adoption, Adoption::Load(dir));
  std::vector<std::pair<std::string, std::string>> restores;  // path, original bytes
  for (const auto& [path, record] : adoption.files) {
    if (record.applied_sha256.empty()) continue;
    UDON_ASSIGN_OR_RETURN(std::string current, base::ReadFile(path));
    if (base::Sha256Hex(current) != record.applied_sha256) return FileChanged(path, "adopt --apply wrote it");
    UDON_ASSIGN_OR_RETURN(std::string original, base::ReadFile(record.backup));
    if (base::Sha256Hex(original) != record.sha256) {
      Error error = MakeError("adopt.backup_changed", "the backup no longer holds the bytes adopt read");
      error.details["path"] = record.backup;
      return error;
    }
    restores.emplace_back(path, std::move(original));
  }
  if (restores.empty()) return MakeError("adopt.not_applied", "no host file of this adoption is rewritten");
  std::vector<std::string> restored;
  for (const auto& [path, original] : restores) {
    UDON_RETURN_IF_ERROR(WriteKeepingMode(path, original));
    adoption.files[path].applied_sha256.clear();
    UDON_RETURN_IF_ERROR(adoption.Save(dir));
    restored.push_back(path);
  }
  return restored;
}

}  // namespace udon::adopt
