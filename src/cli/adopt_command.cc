// adopt: the servers the hosts on this machine already run, behind the gateway
// (docs/contract.md 7.21). --list finds the hosts' files and entries; --dir D captures the
// selected entries into manifests; --apply rewrites the hosts' entries to start
// `udon-mcp serve` once the manifests are reviewed; --undo restores the files; --check
// starts each adopted entry as its host would. The work is the adopt component's.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "adopt/adoption.h"
#include "adopt/adoption_dir.h"
#include "adopt/apply.h"
#include "adopt/check.h"
#include "adopt/discovery.h"
#include "adopt/host_config.h"
#include "workbench/server.h"
#include "workbench/workbench.h"
#include "cli/commands.h"
#include "cli/logins.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "json/display.h"
#include "manifest/manifest.h"
#include "oauth/login.h"

namespace udon::cli {
namespace {

struct AdoptCommandOptions {
  bool list = false;
  bool apply = false;
  bool undo = false;
  bool check = false;
  std::vector<std::string> hosts;
  std::vector<std::string> servers;
  std::vector<std::string> projects;
  std::string dir;
  std::string review = "cli";
  bool sandbox = false;
  bool no_sandbox = false;
  int expires_in_days = 7;
  bool login = false;       // log in to servers behind OAuth without a terminal too
  bool no_browser = false;  // print the login URL instead of opening a browser
  std::optional<std::string> protocol_version;  // the capture's and its logins' revision
  CommonOptions common;
  std::vector<std::string> given;  // the options on the command line, by name ("--login")
};

// adopt's modes, as bits: most options mean something in some of them only.
enum AdoptMode : unsigned { kList = 1, kCapture = 2, kApply = 4, kUndo = 8, kCheck = 16 };

// An option and the modes it means something in; given in another, it would be silently
// dropped, so it is a usage error instead (contract 7.21). --json means something in all.
struct ModeOption {
  const char* name;
  unsigned modes;
  const char* why;  // what it does, the reason it means nothing elsewhere
};

constexpr ModeOption kModeOptions[] = {
    {"--host", kCapture, "it selects the entries a capture takes"},
    {"--server", kCapture, "it selects the entries a capture takes"},
    {"--project", kList | kCapture, "it names project directories to read host files from"},
    {"--dir", kCapture | kApply | kUndo | kCheck, "--list reads no adoption directory"},
    {"--review", kCapture, "it says how the captured tools are reviewed"},
    {"--sandbox", kCapture, "it decides how a captured entry is started"},
    {"--no-sandbox", kCapture, "it decides how a captured entry is started"},
    {"--expires-in", kCapture, "it sets the expiry of the captured manifests"},
    {"--login", kCapture, "logins happen only while capturing"},
    {"--no-browser", kCapture, "logins happen only while capturing"},
    {"--protocol-version", kCapture | kCheck, "--list, --apply and --undo open no server"},
    {"--policy", kCapture, "a capture records it in D, and the gateway entries use the recorded one"},
};

AdoptMode ModeOf(const AdoptCommandOptions& o) {
  if (o.list) return kList;
  if (o.apply) return kApply;
  if (o.undo) return kUndo;
  if (o.check) return kCheck;
  return kCapture;
}

std::string ModeNames(unsigned modes) {
  static constexpr std::pair<AdoptMode, const char*> kNames[] = {
      {kList, "--list"}, {kCapture, "a capture"}, {kApply, "--apply"}, {kUndo, "--undo"}, {kCheck, "--check"}};
  std::vector<const char*> names;
  for (const auto& [mode, name] : kNames) {
    if ((modes & mode) != 0) names.push_back(name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ");
    out += names[i];
  }
  return out;
}

// The first option given that means nothing in this mode, as a usage error naming it and
// why (nothing is read or written before). Errors: usage.invalid.
Status CheckOptionsForMode(const AdoptCommandOptions& o) {
  const AdoptMode mode = ModeOf(o);
  for (const ModeOption& option : kModeOptions) {
    const bool given = std::find(o.given.begin(), o.given.end(), option.name) != o.given.end();
    if (!given || (option.modes & mode) != 0) continue;
    Error error = MakeError("usage.invalid", std::string(option.name) + " is for " + ModeNames(option.modes) +
                                                 ", not " + ModeNames(mode) + ": " + option.why);
    error.details["option"] = option.name;
    return error;
  }
  return OkStatus();
}

// Only the projects named with --project: a project file is the repository's, and the
// current directory may be a clone no one looked at (issue 38).
std::vector<std::string> ProjectDirs(const AdoptCommandOptions& o) {
  std::vector<std::string> dirs;
  for (const std::string& project : o.projects) {
    dirs.push_back(std::filesystem::absolute(project).lexically_normal().string());
  }
  for (std::string& dir : dirs) {
    if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  }
  return dirs;
}

json::Value FileToJson(const adopt::DiscoveredFile& file) {
  json::Value entries = json::Value::array();
  for (const adopt::Entry& entry : file.entries) {
    entries.push_back({{"key", entry.key}, {"pointer", entry.pointer}, {"transport", entry.transport},
                       {"gated", entry.gated}, {"disabled", entry.disabled}});
  }
  json::Value out = {{"host", file.file.host}, {"scope", file.file.scope}, {"path", file.file.path},
                     {"sha256", file.sha256}, {"entries", entries}};
  if (file.error) out["error"] = {{"code", file.error->code}, {"message", file.error->message}};
  return out;
}

void PrintFile(const adopt::DiscoveredFile& file) {
  PrintForPeople(stdout, file.file.host + " (" + file.file.scope + "): " + file.file.path, "a host file");
  if (file.error) {
    PrintForPeople(stdout, "  unreadable: " + file.error->code + ": " + file.error->message, "a host file");
    return;
  }
  if (file.entries.empty()) std::printf("  no servers\n");
  for (const adopt::Entry& entry : file.entries) {
    std::string state = entry.gated ? "gated" : "not gated";
    if (entry.disabled) state += ", disabled";
    PrintForPeople(stdout, "  " + entry.key + "  " + entry.transport + "  " + state + "  (" + entry.pointer + ")",
                   "a server key");
  }
}

int RunList(const AdoptCommandOptions& o) {
  auto files = adopt::Discover(adopt::CandidateFiles(adopt::LocationsFromEnvironment(ProjectDirs(o))));
  if (o.common.json) {
    json::Value out = json::Value::array();
    for (const auto& file : files) out.push_back(FileToJson(file));
    PrintJsonResult({{"files", out}});
    return kExitOk;
  }
  if (files.empty()) std::printf("no MCP host configuration found\n");
  for (const auto& file : files) PrintFile(file);
  return kExitOk;
}

// A word for a printed shell command, single-quoted so that no quote, `$`, backtick or line
// break in it acts when the line is pasted; the line is then printed with the display
// escaping of contract 7.9 (PrintPasteable), which names what a terminal would not show.
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string InDir(const std::string& dir, const std::string& relative) {
  return std::filesystem::absolute(std::filesystem::path(dir) / relative).lexically_normal().string();
}

// The binary the rewritten entries start: this one, by its absolute path.
std::string SelfPath() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("udon-mcp") : self.string();
}

void PrintReviewState(const std::vector<adopt::EntryReview>& state) {
  for (const adopt::EntryReview& entry : state) {
    PrintForPeople(stdout,
                   entry.host + "/" + entry.key + " (" + entry.server + "): " + std::to_string(entry.reviewed.size()) +
                       " tool(s) reviewed, " + std::to_string(entry.unreviewed.size()) + " unreviewed (not offered)",
                   "a server key");
  }
}

json::Value ReviewStateJson(const std::vector<adopt::EntryReview>& state) {
  json::Value out = json::Value::array();
  for (const adopt::EntryReview& entry : state) {
    out.push_back({{"host", entry.host}, {"key", entry.key}, {"server", entry.server},
                   {"manifestSha256", entry.manifest_sha256}, {"reviewed", entry.reviewed},
                   {"unreviewed", entry.unreviewed}});
  }
  return out;
}

// One line of the printed command block, escaped as every text output is (contract 7.9); the
// note on what it hid goes to stderr, so that the block stays one to paste as it is.
void PrintPasteable(const std::string& line, std::string_view subject) {
  const json::DisplayText shown = json::ForDisplay(line);
  std::printf("%s\n", shown.text.c_str());
  if (!shown.hidden.empty()) {
    std::fprintf(stderr, "udon-mcp: note: %s; --json prints the exact value\n",
                 json::HiddenNotice(shown.hidden, subject).c_str());
  }
}

// --review cli: the commands that review each captured tool, then the one that applies.
void PrintReviewCommands(const AdoptCommandOptions& o, const std::vector<adopt::AdoptedEntry>& captured) {
  for (const adopt::AdoptedEntry& entry : captured) {
    auto loaded = manifest::Manifest::Load(InDir(o.dir, entry.manifest));
    if (!loaded.ok()) continue;
    const std::string base =
        "udon-mcp review " + Quoted(InDir(o.dir, entry.manifest)) + " --server " + Quoted(entry.server) + " --tool ";
    PrintPasteable("# " + entry.host + "/" + entry.key + ": read each tool, then record your review (decide the side "
                   "effects)",
                   "a server key");
    for (const auto& [tool, count] : loaded->ToolNames(entry.server)) {
      PrintPasteable(base + Quoted(tool) + " --show", "a tool name");
      PrintPasteable(base + Quoted(tool) +
                         " --reviewer \"$USER\" --headless --independent-calls --reference-based-io"
                         " --model-backed false --no-side-effects --concurrency safe",
                     "a tool name");
    }
  }
  std::printf("# tools left unreviewed are not offered; then:\n");
  PrintPasteable("udon-mcp adopt --dir " + Quoted(o.dir) + " --apply", "the adoption directory");
}

// --review workbench: one workbench per captured manifest until Ctrl-C.
int OpenWorkbenches(const AdoptCommandOptions& o, const std::vector<adopt::AdoptedEntry>& captured,
                    const manifest::Policy& policy) {
  std::vector<std::unique_ptr<workbench::Workbench>> benches;
  std::vector<std::unique_ptr<workbench::WorkbenchServer>> servers;
  std::vector<workbench::WorkbenchServer*> serving;
  for (const adopt::AdoptedEntry& entry : captured) {
    workbench::WorkbenchOptions options{InDir(o.dir, entry.manifest), "", std::nullopt, "", policy};
    benches.push_back(std::make_unique<workbench::Workbench>(std::move(options)));
    auto address = workbench::ParseListenAddress("127.0.0.1:0");
    auto server = workbench::WorkbenchServer::Create(*benches.back(), *address);
    if (!server.ok()) return ReportError(server.error(), o.common.json, kExitInternal);
    if (auto port = (*server)->Bind(); !port.ok()) return ReportError(port.error(), o.common.json, kExitInternal);
    PrintForPeople(stdout, entry.host + "/" + entry.key + ": open " + (*server)->Url(), "a server key");
    servers.push_back(std::move(server).value());
    serving.push_back(servers.back().get());
  }
  PrintForPeople(stdout,
                 "review the tools to offer, then stop with Ctrl-C and run: udon-mcp adopt --dir " + Quoted(o.dir) +
                     " --apply",
                 "the adoption directory");
  std::fflush(stdout);
  return ServeWorkbenchesUntilSignalled(serving);
}

// Entries that cannot be adopted: each with its code (the others were captured).
json::Value RefusedJson(const std::vector<std::pair<std::string, Error>>& refused) {
  json::Value out = json::Value::array();
  for (const auto& [name, why] : refused) {
    out.push_back({{"entry", name}, {"code", why.code}, {"message", why.message}, {"details", why.details}});
  }
  return out;
}

// An entry behind OAuth answered 401 during capture: log in there and then (in a terminal,
// or with --login), else refuse naming the command that does.
Status LogInDuringCapture(const AdoptCommandOptions& o, const mcp::ServerConfig& server, const std::string& host_key) {
  if (!o.login && isatty(STDIN_FILENO) == 0) {
    std::string command = "udon-mcp adopt --dir " + Quoted(o.dir) + " --server " + Quoted(host_key) + " --login";
    if (o.protocol_version) command += " --protocol-version " + Quoted(*o.protocol_version);
    Error error = MakeError("auth.login_required", "the server is behind OAuth and needs a login first: run " +
                                                       command + " (add --no-browser to print the URL)");
    error.details["command"] = command;
    error.details["server"] = server.key;
    return error;
  }
  UDON_ASSIGN_OR_RETURN(std::shared_ptr<oauth::TokenStore> store, OpenLoginStore(o.common));
  InteractiveLogin how;
  how.no_browser = o.no_browser;
  how.protocol_version = o.protocol_version;  // 2026-07-28 requires RFC 9207's iss
  Result<oauth::StoredLogin> done = LogIn(server.key, server, how, *store);
  if (!done.ok()) return std::move(done).error();
  return OkStatus();
}

int RunCapture(const AdoptCommandOptions& o) {
  auto policy = LoadPolicy(o.common);
  if (!policy.ok()) return ReportError(policy.error(), o.common.json, kExitInvalidInput);
  const std::string policy_path =
      o.common.policy ? std::filesystem::absolute(*o.common.policy).lexically_normal().string() : "";
  adopt::CaptureRequest request{o.dir,  o.hosts,     o.servers, o.sandbox,   o.expires_in_days,
                                *policy, policy_path, {},        o.no_sandbox, {}, {},
                                o.protocol_version};
  if (ProgressWanted(o.common.json)) request.on_progress = [](const std::string& line) { PrintProgress("capture: " + line); };
  request.attach_logins = [&o](mcp::RuntimeConfig& config) { AttachStoredLogins(config, OpenLoginStore(o.common)); };
  request.log_in = [&o](const mcp::ServerConfig& server, const std::string& host_key) {
    return LogInDuringCapture(o, server, host_key);
  };
  auto files = adopt::Discover(adopt::CandidateFiles(adopt::LocationsFromEnvironment(ProjectDirs(o))));
  auto report = adopt::CaptureEntries(files, request);
  if (!report.ok()) {
    const int code = ReportError(report.error(), o.common.json, ExitCodeFor(report.error()));
    NoteDiagnostics(report.error());
    return code;
  }
  if (o.common.json) {
    json::Value captured = json::Value::array();
    for (const auto& entry : report->captured) {
      captured.push_back({{"host", entry.host}, {"key", entry.key}, {"server", entry.server},
                          {"manifest", InDir(o.dir, entry.manifest)}});
    }
    json::Value skipped = json::Value::array();
    for (const auto& [name, why] : report->skipped) skipped.push_back({{"entry", name}, {"why", why}});
    PrintJsonResult({{"captured", captured}, {"skipped", skipped}, {"refused", RefusedJson(report->refused)},
                     {"config", InDir(o.dir, "mcp.json")}});
    return kExitOk;
  }
  for (const auto& entry : report->captured) {
    PrintForPeople(stdout, "captured " + entry.host + "/" + entry.key + " into " + InDir(o.dir, entry.manifest),
                   "a server key");
  }
  for (const auto& [name, why] : report->skipped) PrintForPeople(stdout, "skipped " + name + ": " + why, "a server key");
  for (const auto& [name, why] : report->refused) {
    PrintForPeople(stdout, "not adopted " + name + " (left as it is): " + why.code + ": " + why.message, "a server key");
  }
  if (o.review == "workbench") return OpenWorkbenches(o, report->captured, *policy);
  PrintReviewCommands(o, report->captured);
  return kExitOk;
}

int RunApply(const AdoptCommandOptions& o) {
  auto report = adopt::Apply(o.dir, SelfPath());
  if (!report.ok()) {
    if (report.error().code == "adopt.not_reviewed") {
      if (auto adoption = adopt::Adoption::Load(o.dir); adoption.ok()) {
        if (auto state = adopt::ReviewState(o.dir, *adoption); state.ok() && !o.common.json) PrintReviewState(*state);
      }
    }
    return ReportError(report.error(), o.common.json, ExitCodeFor(report.error()));
  }
  if (o.common.json) {
    json::Value files = json::Value::array();
    for (const auto& [path, backup] : report->files) files.push_back({{"path", path}, {"backup", backup}});
    PrintJsonResult({{"entries", ReviewStateJson(report->entries)}, {"files", files}});
    return kExitOk;
  }
  PrintReviewState(report->entries);
  for (const auto& [path, backup] : report->files) {
    PrintForPeople(stdout, "rewrote " + path + " (backup " + backup + ")", "a path");
  }
  PrintForPeople(stdout,
                 "restart the hosts; `udon-mcp adopt --dir " + Quoted(o.dir) + " --check` shows what each entry offers",
                 "the adoption directory");
  return kExitOk;
}

int RunUndo(const AdoptCommandOptions& o) {
  auto restored = adopt::Undo(o.dir);
  if (!restored.ok()) return ReportError(restored.error(), o.common.json, ExitCodeFor(restored.error()));
  if (o.common.json) {
    PrintJsonResult({{"restored", *restored}});
    return kExitOk;
  }
  for (const std::string& path : *restored) PrintForPeople(stdout, "restored " + path, "a path");
  return kExitOk;
}

// The stored login of an adopted entry behind OAuth, looked at without refreshing it:
// "valid", "refreshable" (its access token expired, a refresh token remains), "expired"
// (auth.login_expired) or "missing" (auth.login_required); nullopt for other entries.
struct LoginState {
  std::string status;
  std::string code;  // empty when a call can use it
};

std::optional<LoginState> AdoptedLoginState(const mcp::RuntimeConfig& config, const std::string& server,
                                            oauth::TokenStore* store) {
  Result<mcp::ServerConfig> entry = config.Find(server);
  if (!entry.ok() || entry->type != mcp::ServerType::kHttp || !entry->oauth) return std::nullopt;
  if (store == nullptr) return LoginState{"missing", "auth.store_unavailable"};
  Result<std::optional<oauth::StoredLogin>> found = oauth::FindLogin(*store, entry->url);
  if (!found.ok()) return LoginState{"missing", found.error().code};
  if (!found->has_value()) return LoginState{"missing", "auth.login_required"};
  const oauth::StoredLogin& login = **found;
  const bool expired = login.expires_at_unix != 0 && login.expires_at_unix <= std::time(nullptr);
  if (!expired) return LoginState{"valid", ""};
  if (login.refresh_token) return LoginState{"refreshable", ""};
  return LoginState{"expired", "auth.login_expired"};
}

json::Value CheckJson(const adopt::EntryCheck& check) {
  json::Value withheld = json::Value::array();
  for (const auto& tool : check.withheld) withheld.push_back({{"tool", tool.tool}, {"why", tool.why}});
  json::Value out = {{"host", check.host},       {"key", check.key},         {"server", check.server},
                     {"file", check.file},       {"gated", check.gated},     {"connected", check.connected},
                     {"offered", check.offered}, {"withheld", withheld},
                     {"offeredUnreviewed", check.offered_unreviewed}};
  if (!check.protocol_version.empty()) out["protocolVersion"] = check.protocol_version;
  if (check.error) out["error"] = {{"code", check.error->code}, {"message", check.error->message}};
  return out;
}

void PrintCheck(const adopt::EntryCheck& check) {
  std::string line = check.host + "/" + check.key + ": ";
  if (check.connected) {
    line += "connected, " + std::to_string(check.offered.size()) + " tool(s) offered, " +
            std::to_string(check.withheld.size()) + " withheld";
  } else {
    line += "not connected: " + (check.error ? check.error->code + ": " + check.error->message : "");
  }
  PrintForPeople(stdout, line, "a server key");
  for (const auto& tool : check.withheld) PrintForPeople(stdout, "  withheld " + tool.tool + ": " + tool.why, "a tool name");
  if (check.connected && check.error) {
    PrintForPeople(stdout, "  " + check.error->code + ": " + check.error->message, "a server key");
  }
  for (const auto& tool : check.offered_unreviewed) PrintForPeople(stdout, "  offered, not reviewed: " + tool, "a tool name");
}

int RunCheck(const AdoptCommandOptions& o) {
  // The logins as they are before the check starts the entries (which refresh them).
  Result<mcp::RuntimeConfig> config = mcp::LoadRuntimeConfig(InDir(o.dir, "mcp.json"), mcp::ProcessEnv());
  Result<std::shared_ptr<oauth::TokenStore>> store = OpenLoginStore(o.common);
  std::map<std::string, LoginState> logins;
  if (config.ok()) {
    for (const auto& [key, ignored] : config->servers) {
      auto state = AdoptedLoginState(*config, key, store.ok() ? store->get() : nullptr);
      if (state) logins[key] = *state;
    }
  }
  auto checks = adopt::CheckAdopted(o.dir, o.protocol_version);
  if (!checks.ok()) return ReportError(checks.error(), o.common.json, ExitCodeFor(checks.error()));
  bool all = true;
  json::Value out = json::Value::array();
  for (const adopt::EntryCheck& check : *checks) {
    all = all && check.connected && !check.error;
    const auto login = logins.find(check.server);
    if (login != logins.end() && !login->second.code.empty()) all = false;
    if (o.common.json) {
      json::Value row = CheckJson(check);
      if (login != logins.end()) row["login"] = {{"status", login->second.status}, {"code", login->second.code}};
      out.push_back(std::move(row));
    } else {
      PrintCheck(check);
      if (login != logins.end()) {
        PrintForPeople(stdout, "  login: " + login->second.status +
                                   (login->second.code.empty() ? "" : " (" + login->second.code + ")"),
                       "a login state");
      }
    }
  }
  if (o.common.json) PrintJsonResult({{"entries", out}, {"allConnected", all}});
  return all ? kExitOk : kExitRefused;
}

int RunAdopt(const AdoptCommandOptions& o) {
  const int modes = int(o.list) + int(o.apply) + int(o.undo) + int(o.check);
  if (o.sandbox && o.no_sandbox) {
    return ReportError(MakeError("usage.invalid", "--sandbox and --no-sandbox exclude each other"), o.common.json,
                       kExitInvalidInput);
  }
  if (modes > 1) {
    return ReportError(MakeError("usage.invalid", "--list, --apply, --undo and --check exclude each other"),
                       o.common.json, kExitInvalidInput);
  }
  if (Status meaningful = CheckOptionsForMode(o); !meaningful.ok()) {
    return ReportError(meaningful.error(), o.common.json, kExitInvalidInput);
  }
  if (Status version = CheckProtocolVersionOption(o.protocol_version); !version.ok()) {
    return ReportError(version.error(), o.common.json, kExitInvalidInput);
  }
  for (const std::string& host : o.hosts) {
    if (!adopt::IsHostId(host)) {
      Error error = MakeError("usage.invalid", "--host names a host udon-mcp does not know");
      error.details["hosts"] = adopt::HostIds();
      return ReportError(error, o.common.json, kExitInvalidInput);
    }
  }
  if (o.list) return RunList(o);
  if (!o.dir.empty()) {
    const Status secured = adopt::SecureAdoptionDir(o.dir, !o.apply && !o.undo && !o.check);
    if (!secured.ok()) return ReportError(secured.error(), o.common.json, ExitCodeFor(secured.error()));
    if (o.apply) return RunApply(o);
    if (o.undo) return RunUndo(o);
    if (o.check) return RunCheck(o);
    return RunCapture(o);
  }
  return ReportError(MakeError("usage.invalid", "give --list, or --dir D (with --apply, --undo or --check)"),
                     o.common.json, kExitInvalidInput);
}

}  // namespace

void RegisterAdoptCommand(CLI::App& app) {
  auto o = std::make_shared<AdoptCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "adopt", "Put the MCP servers your hosts already run behind the gateway: list, capture, apply, undo, check");
  command->add_flag("--list", o->list, "List the hosts' MCP configuration files and their servers");
  command->add_option("--host", o->hosts, "Only this host (claude-desktop, claude-code, cursor, vscode, windsurf, gemini)");
  command->add_option("--server", o->servers, "Only the entry with this key (repeatable)");
  command->add_option("--project", o->projects,
                      "A project directory to look into too (repeatable; none by default: a project's files are its "
                      "author's, and run sandboxed)");
  command->add_option("--dir", o->dir, "The adoption directory: manifests, pins, mcp.json, backups' record");
  command->add_option("--review", o->review, "After capture: workbench (opens it) or cli (prints review commands)")
      ->check(CLI::IsMember({"workbench", "cli"}));
  command->add_flag("--sandbox", o->sandbox, "Run every captured stdio server in the sandbox (contract 7.10)");
  command->add_flag("--no-sandbox", o->no_sandbox,
                    "Run a project file's servers as the file says, not in the sandbox adopt puts them in");
  command->add_option("--expires-in", o->expires_in_days, "Days until the captured manifests expire (default 7)");
  command->add_flag("--apply", o->apply, "Rewrite the host files to start udon-mcp serve (backups beside them)");
  command->add_flag("--undo", o->undo, "Restore the host files from their backups, byte for byte");
  command->add_flag("--login", o->login,
                    "Log in to servers behind OAuth during capture without a terminal too (the URL on stderr)");
  command->add_flag("--no-browser", o->no_browser, "Print the login URL on stderr, never start a browser");
  command->add_option("--protocol-version", o->protocol_version,
                      "Capture at exactly this MCP protocol version, and log in for it (default: negotiate the "
                      "newest both sides speak; a login then checks RFC 9207's iss only where advertised); with "
                      "--check, open each gateway at it");
  command->add_flag("--check", o->check, "Start each adopted entry as its host would and say what it offers");
  command->add_option("--policy", o->common.policy, "Local policy file (JSON or YAML)");
  command->add_flag("--json", o->common.json, "Machine output on stdout");
  SetAction(command, &o->common.json, [o, command] {
    for (const CLI::Option* option : command->get_options()) {
      if (option->count() > 0) o->given.push_back(option->get_name());
    }
    return RunAdopt(*o);
  });
}

}  // namespace udon::cli
