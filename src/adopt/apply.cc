#include "adopt/apply.h"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "adopt/applied_entry.h"
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
  Error error = MakeError("adopt.file_changed", "the host file " + path + " changed since " + since +
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

// A host file as --apply and --undo see it: its path resolved once to the file it names,
// read without following any further link, and known by device and inode from then on.
struct HostFileRead {
  std::string real;
  base::FileSnapshot snapshot;
};

// Temporaries an interrupted run of ours left beside the file are removed first.
Result<HostFileRead> ReadHostFile(const std::string& path) {
  HostFileRead read{RealPath(path), {}};
  UDON_ASSIGN_OR_RETURN(read.snapshot, base::ReadFileSnapshot(read.real));
  base::RemoveStaleTemporaries(read.real, read.snapshot.owner);
  return read;
}

// Writes bytes over the host file read as `read`, only if just before the rename it is still
// that file with those bytes (a host writing it meanwhile, a link swapped in): else
// adopt.file_changed. Its permission bits, owner and group are kept.
Status ReplaceHostFile(const std::string& path, const HostFileRead& read, std::string_view bytes,
                       const FileSeams& seams) {
  base::ReplaceOptions options;
  if (seams.before_last_check) options.before_last_check = [&] { seams.before_last_check(path); };
  Status replaced = base::ReplaceFileIfUnchanged(read.real, read.snapshot, bytes, options);
  if (replaced.ok() || replaced.error().code != "io.target_changed") return replaced;
  Error error = MakeError("adopt.file_changed",
                          "the host file changed while adopt was rewriting it (its host wrote it, or it was "
                          "replaced); it was left as it is (run adopt again)");
  error.details["path"] = path;
  return error;
}

// The original bytes beside the file, 0600, owned like the file (a backup root wrote of a
// user's file stays the user's). lchown: never through a link planted meanwhile.
Status WriteBackup(const std::string& backup, const base::FileSnapshot& original) {
  UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic(backup, original.bytes));
  if (original.owner != ::geteuid() || original.group != ::getegid()) {
    if (::lchown(backup.c_str(), original.owner, original.group) != 0) {
      // It stays ours, 0600: --undo as the same user still reads it.
    }
  }
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

// One host file to rewrite, once, whatever number of paths name it (two hosts may share a
// file through links): identified by device and inode, not by path.
struct PlannedFile {
  std::vector<std::string> paths;
  HostFileRead read;
  std::vector<EntryEdit> edits;
  std::string rewritten;
};
using FileKey = std::pair<dev_t, ino_t>;

// A record applied whose file still holds the bytes adopt read: a run stopped between
// recording and renaming, so nothing was applied.
bool StoppedBeforeRename(const AdoptedFile& record, const Result<HostFileRead>& read) {
  return read.ok() && base::Sha256Hex(read->snapshot.bytes) == record.sha256;
}

// Adds one path's edits to its file's plan: one entry adopted through two paths is refused.
Status AddEdits(PlannedFile& file, const std::string& path, const std::vector<EntryEdit>& edits) {
  for (const EntryEdit& edit : edits) {
    for (const EntryEdit& planned : file.edits) {
      if (planned.path != edit.path) continue;
      Error error = MakeError("adopt.entry_shared",
                              "one entry of a host file is adopted twice, through two paths that name the same "
                              "file (two hosts share it); adopt it from one host only (--host)");
      error.details["path"] = path;
      error.details["otherPath"] = file.paths.front();
      return error;
    }
  }
  file.paths.push_back(path);
  file.edits.insert(file.edits.end(), edits.begin(), edits.end());
  return OkStatus();
}

Result<std::vector<PlannedFile>> PlanFiles(const std::string& dir, const Adoption& adoption,
                                           const std::string& udon_mcp) {
  std::map<std::string, std::vector<EntryEdit>> edits;
  for (const AdoptedEntry& entry : adoption.entries) {
    GatewayCommand gateway{udon_mcp, InDir(dir, entry.manifest), InDir(dir, entry.pin), InDir(dir, "mcp.json"),
                           entry.server, adoption.policy};
    edits[entry.file].push_back({entry.path, gateway, entry.vscode});
  }
  std::map<FileKey, PlannedFile> files;
  for (const auto& [path, file_edits] : edits) {
    const AdoptedFile& record = adoption.files.at(path);
    Result<HostFileRead> read = ReadHostFile(path);
    if (!record.applied_sha256.empty() && !StoppedBeforeRename(record, read)) {
      Error error = MakeError("adopt.already_applied", "the host file is rewritten already (adopt --undo restores it)");
      error.details["path"] = path;
      return error;
    }
    if (!read.ok()) return std::move(read).error();
    if (base::Sha256Hex(read->snapshot.bytes) != record.sha256) return FileChanged(path, "adopt read it");
    const FileKey key{read->snapshot.device, read->snapshot.inode};
    auto [file, fresh] = files.try_emplace(key, PlannedFile{{}, *read, {}, ""});
    if (!fresh && file->second.read.snapshot.bytes != read->snapshot.bytes) return FileChanged(path, "adopt read it");
    UDON_RETURN_IF_ERROR(AddEdits(file->second, path, file_edits));
  }
  std::vector<PlannedFile> planned;
  for (auto& [key, file] : files) {
    UDON_ASSIGN_OR_RETURN(file.rewritten, RewriteEntries(file.read.snapshot.bytes, file.edits));
    planned.push_back(std::move(file));
  }
  return planned;
}

// Records the file's backup and the bytes about to be written before the rename, so that
// a run stopped in between leaves no unrecorded backup and a record --apply and --undo
// understand (StoppedBeforeRename); if the rename is refused, the record is taken back.
Status ApplyFile(const std::string& dir, Adoption& adoption, const PlannedFile& file, const FileSeams& seams,
                 ApplyReport& report) {
  const std::string backup = BackupPath(file.read.real);
  UDON_RETURN_IF_ERROR(WriteBackup(backup, file.read.snapshot));
  for (const std::string& path : file.paths) {
    adoption.files[path].backup = backup;
    adoption.files[path].applied_sha256 = base::Sha256Hex(file.rewritten);
  }
  UDON_RETURN_IF_ERROR(adoption.Save(dir));
  Status replaced = ReplaceHostFile(file.paths.front(), file.read, file.rewritten, seams);
  if (!replaced.ok()) {
    for (const std::string& path : file.paths) adoption.files[path].applied_sha256.clear();
    UDON_RETURN_IF_ERROR(adoption.Save(dir));
    return replaced;
  }
  for (const std::string& path : file.paths) report.files.emplace_back(path, backup);
  return OkStatus();
}

// One rewritten host file to restore, once, whatever number of paths name it.
struct Restore {
  std::vector<std::string> paths;
  HostFileRead read;
  std::optional<std::string> original;  // none: a run stopped before its rename left it so
};

Result<std::optional<std::string>> ReadBackup(const AdoptedFile& record) {
  UDON_ASSIGN_OR_RETURN(std::string original, base::ReadFile(record.backup));
  if (base::Sha256Hex(original) != record.sha256) {
    Error error = MakeError("adopt.backup_changed", "the backup no longer holds the bytes adopt read");
    error.details["path"] = record.backup;
    return error;
  }
  return std::optional<std::string>(std::move(original));
}

// Checks every applied file before anything is restored: each still has the bytes --apply
// wrote (or, stopped before its rename, those adopt read) and its backup those adopt read.
Result<std::vector<Restore>> PlanRestores(const Adoption& adoption) {
  std::map<FileKey, Restore> files;
  for (const auto& [path, record] : adoption.files) {
    if (record.applied_sha256.empty()) continue;
    UDON_ASSIGN_OR_RETURN(HostFileRead read, ReadHostFile(path));
    const std::string current = base::Sha256Hex(read.snapshot.bytes);
    if (current != record.sha256 && current != record.applied_sha256) return FileChanged(path, "adopt --apply wrote it");
    const FileKey key{read.snapshot.device, read.snapshot.inode};
    if (auto known = files.find(key); known != files.end()) {
      known->second.paths.push_back(path);
      continue;
    }
    Restore restore{{path}, std::move(read), std::nullopt};
    if (current != record.sha256) {
      UDON_ASSIGN_OR_RETURN(restore.original, ReadBackup(record));
    }
    files.emplace(key, std::move(restore));
  }
  std::vector<Restore> restores;
  for (auto& [key, restore] : files) restores.push_back(std::move(restore));
  return restores;
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

Result<ApplyReport> Apply(const std::string& dir, const std::string& udon_mcp, const FileSeams& seams) {
  UDON_ASSIGN_OR_RETURN(base::FileLock lock, LockAdoption(dir));
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
  for (const PlannedFile& file : planned) {
    for (const std::string& path : file.paths) {
      UDON_RETURN_IF_ERROR(RecordAppliedEntries(adoption, path, file.rewritten));
    }
  }
  std::vector<std::string> pins;  // each binds its manifest and its D/mcp.json entry
  for (std::size_t i = 0; i < adoption.entries.size(); ++i) {
    UDON_ASSIGN_OR_RETURN(std::string pin, PinText(dir, adoption.entries[i].server, report.entries[i].manifest_sha256));
    pins.push_back(std::move(pin));
  }
  for (std::size_t i = 0; i < adoption.entries.size(); ++i) {
    UDON_RETURN_IF_ERROR(base::WriteSecretFileAtomic(InDir(dir, adoption.entries[i].pin), pins[i]));
  }
  for (const PlannedFile& file : planned) UDON_RETURN_IF_ERROR(ApplyFile(dir, adoption, file, seams, report));
  return report;
}

Result<std::vector<std::string>> Undo(const std::string& dir, const FileSeams& seams) {
  UDON_ASSIGN_OR_RETURN(base::FileLock lock, LockAdoption(dir));
  UDON_ASSIGN_OR_RETURN(Adoption adoption, Adoption::Load(dir));
  UDON_ASSIGN_OR_RETURN(std::vector<Restore> restores, PlanRestores(adoption));
  if (restores.empty()) return MakeError("adopt.not_applied", "no host file of this adoption is rewritten");
  std::vector<std::string> restored;
  for (const Restore& restore : restores) {
    if (restore.original.has_value()) {
      UDON_RETURN_IF_ERROR(ReplaceHostFile(restore.paths.front(), restore.read, *restore.original, seams));
    }
    for (const std::string& path : restore.paths) {
      adoption.files[path].applied_sha256.clear();
      restored.push_back(path);
    }
    UDON_RETURN_IF_ERROR(adoption.Save(dir));
  }
  return restored;
}

}  // namespace udon::adopt
