#include "mcp/client/least_privilege.h"
#include "mcp/client/internal/config_names.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

namespace udon::mcp {
namespace {

using internal::ConfigInvalid;
using internal::IsVariableName;

constexpr std::string_view kDefaultBwrap = "/usr/bin/bwrap";
constexpr std::size_t kMaxProbeMessage = 200;

// ---- descriptors (async-signal-safe: no allocation, no locks) ---------------------------

bool CloseRangeSyscall(unsigned first, unsigned last) {
#ifdef SYS_close_range
  return syscall(SYS_close_range, first, last, 0) == 0;
#else
  (void)first;
  (void)last;
  errno = ENOSYS;
  return false;
#endif
}

bool CloseByRange(int keep) {
  if (keep > 3 && !CloseRangeSyscall(3, static_cast<unsigned>(keep) - 1)) return false;
  const unsigned from = keep >= 3 ? static_cast<unsigned>(keep) + 1 : 3;
  return CloseRangeSyscall(from, ~0U);
}

int ParseDescriptor(const char* name) {
  if (*name == '\0') return -1;
  int fd = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9' || fd > 100'000'000) return -1;
    fd = fd * 10 + (*name - '0');
  }
  return fd;
}

// getdents64 records: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name.
constexpr std::size_t kReclenOffset = 16;
constexpr std::size_t kNameOffset = 19;

bool CloseByProcSelfFd(int keep) {
  const int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(8) char buffer[4096];
  // Closing entries while the directory is read may skip some: read again until a whole
  // pass closes nothing.
  bool closed_any = true;
  while (closed_any) {
    closed_any = false;
    if (lseek(dir, 0, SEEK_SET) != 0) break;
    while (true) {
      const long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
      if (n < 0) {
        close(dir);
        return false;
      }
      if (n == 0) break;
      for (long offset = 0; offset < n;) {
        unsigned short reclen = 0;
        std::memcpy(&reclen, buffer + offset + kReclenOffset, sizeof reclen);
        const int fd = ParseDescriptor(buffer + offset + kNameOffset);
        offset += reclen;
        if (fd < 3 || fd == keep || fd == dir) continue;
        close(fd);
        closed_any = true;
      }
    }
  }
  close(dir);
  return true;
}

// The last resort: every descriptor number below the soft limit.
bool CloseByRlimit(int keep) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  const rlim_t top = limit.rlim_cur == RLIM_INFINITY ? rlim_t{1} << 20 : limit.rlim_cur;
  for (rlim_t fd = 3; fd < top; ++fd) {
    if (static_cast<int>(fd) != keep) close(static_cast<int>(fd));
  }
  return true;
}

// ---- the sandbox probe -----------------------------------------------------------------

struct ProbeOutcome {
  int exit_status = -1;  // -1: killed by a signal or not run
  std::string message;   // bwrap's first line on stderr, bounded
};

// Runs argv with stdin and stdout on /dev/null, stderr captured; posix_spawn keeps this
// safe in a process with threads.
ProbeOutcome RunProbe(const std::vector<std::string>& args) {
  ProbeOutcome outcome;
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) return outcome;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<std::string> strings = args;
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::string path = "PATH=/usr/bin:/bin";
  std::array<char*, 2> envp{path.data(), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(err[1]);
  if (spawned != 0) {
    close(err[0]);
    return outcome;
  }
  char chunk[512];
  ssize_t n;
  while ((n = read(err[0], chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (outcome.message.size() < kMaxProbeMessage) outcome.message.append(chunk, static_cast<std::size_t>(n));
  }
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  outcome.message = outcome.message.substr(0, std::min(outcome.message.find('\n'), kMaxProbeMessage));
  return outcome;
}

Status ProbeSandbox(const std::string& bwrap) {
  if (access(bwrap.c_str(), X_OK) != 0) {
    // The path may come from $UDON_MCP_BWRAP: an environment value never goes into a message.
    Error error = udon::MakeError(
        "config.invalid",
        bwrap == kDefaultBwrap
            ? std::string("the server asks for a sandbox, but bubblewrap (Debian package bubblewrap) is not installed "
                          "at /usr/bin/bwrap; it is not started unsandboxed")
            : std::string("the server asks for a sandbox, but the bubblewrap named by UDON_MCP_BWRAP cannot be run; "
                          "it is not started unsandboxed"));
    error.details["reason"] = "bwrap_missing";
    return error;
  }
  // The strictest sandbox (no network) around `true`: if that runs, every sandbox does.
  SandboxHost host;
  host.path = "/usr/bin:/bin";
  const ProbeOutcome outcome = RunProbe(SandboxArgv(bwrap, SandboxSettings{}, host, "", {"true"}));
  if (outcome.exit_status == 0) return OkStatus();
  Error error = udon::MakeError(
      "config.invalid",
      "the server asks for a sandbox, but bubblewrap cannot create its namespaces here (the kernel or "
      "container refuses them); it is not started unsandboxed");
  error.details["reason"] = "namespaces_refused";
  error.details["exitStatus"] = outcome.exit_status;
  if (!outcome.message.empty()) error.details["bwrapMessage"] = outcome.message;
  return error;
}

// A sandbox's "readable" or "writable" list: absolute, normal paths (${env:NAME} expands;
// relative ones resolve against base_dir).
// One path of the `name` member: ${env:NAME} expanded, made absolute against base_dir.
Result<std::string> ParsePath(const json::Value& value, const EnvLookup& env, const std::string& base_dir,
                              const std::string& name, const std::string& at) {
  if (!value.is_string()) return ConfigInvalid(name + " must be a path", at);
  auto expanded = ExpandEnv(value.get<std::string>(), env);
  if (!expanded.ok()) return std::move(expanded).error().AtPrefix(at);
  if (expanded->empty()) return ConfigInvalid("a " + name + " path must not be empty", at);
  return AbsolutePath(*expanded, base_dir);
}

Result<std::vector<std::string>> ParsePaths(const json::Value& member, const EnvLookup& env,
                                            const std::string& base_dir, const std::string& pointer) {
  const std::string name = pointer.substr(pointer.rfind('/') + 1);
  if (!member.is_array()) return ConfigInvalid(name + " must be an array of paths", pointer);
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < member.size(); ++i) {
    UDON_ASSIGN_OR_RETURN(std::string path,
                          ParsePath(member[i], env, base_dir, name, pointer + "/" + std::to_string(i)));
    paths.push_back(std::move(path));
  }
  return paths;
}

// One path the sandbox shows (`member`: "readable/0", "writable/1", "etc"): it must exist
// (a directory, but for a readable path), and never show $HOME whole, which the sandbox
// replaces by an empty one.
Status CheckSandboxPath(const ServerConfig& server, const std::string& path, const std::string& member,
                        const std::string& home) {
  const std::string at = server.pointer + "/sandbox/" + member;
  const bool readable = member.rfind("readable/", 0) == 0;
  struct stat info {};
  std::optional<Error> error;
  if (stat(path.c_str(), &info) != 0 || (!readable && !S_ISDIR(info.st_mode))) {
    error = ConfigInvalid(readable   ? "a readable path of the sandbox does not exist"
                    : member == "etc" ? "the sandbox's etc directory does not exist or is not a directory"
                                      : "a writable directory of the sandbox does not exist or is not a directory",
                    at);
  } else if (IsPathUnder(home, path)) {
    error = ConfigInvalid("a sandbox never shows the home directory whole: list the directories under it the server needs",
                    at);
    error->details["reason"] = "home_exposed";
  }
  if (!error) return OkStatus();
  error->details["server"] = server.key;
  return *error;
}

}  // namespace

bool IsReservedVariable(std::string_view name) {
  return name.rfind("UDON_MCP_", 0) == 0 || name.rfind("PG", 0) == 0;
}

bool IsDefaultVariable(std::string_view name) {
  static const std::set<std::string_view> kDefaults = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM",
                                                       "USER", "LANG",    "TZ",   "TMPDIR"};
  return kDefaults.count(name) > 0 || name.rfind("LC_", 0) == 0;
}

Status ParseInheritEnv(const json::Value& value, const std::string& pointer, ServerConfig& server) {
  if (value.is_boolean()) {
    server.inherit_env_all = value.get<bool>();
    return OkStatus();
  }
  if (!value.is_array()) return ConfigInvalid("inheritEnv must be true or an array of variable names", pointer);
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = pointer + "/" + std::to_string(i);
    if (!value[i].is_string()) return ConfigInvalid("inheritEnv must list variable names", at);
    const std::string name = value[i].get<std::string>();
    if (!IsVariableName(name)) {
      return ConfigInvalid("inheritEnv takes variable names only, no patterns", at);
    }
    if (IsReservedVariable(name)) {
      Error error = ConfigInvalid("inheritEnv names " + name + ", which belongs to udon-mcp (UDON_MCP_*, PG*) and never "
                            "reaches a server", at);
      error.details["variable"] = name;
      return error;
    }
    server.inherit_env.push_back(name);
  }
  return OkStatus();
}

Result<std::optional<SandboxSettings>> ParseSandbox(const json::Value& value, const EnvLookup& env,
                                                    const std::string& base_dir, const std::string& pointer) {
  SandboxSettings sandbox;
  if (value.is_boolean()) return value.get<bool>() ? std::optional(sandbox) : std::nullopt;
  if (!value.is_object()) {
    return ConfigInvalid("sandbox must be true or an object {\"network\", \"readable\", \"writable\", \"etc\"}",
                   pointer);
  }
  for (const auto& [name, member] : value.items()) {
    if (name == "network") {
      if (!member.is_boolean()) return ConfigInvalid("network must be a boolean", pointer + "/network");
      sandbox.network = member.get<bool>();
    } else if (name == "writable" || name == "readable") {
      std::vector<std::string>& paths = name == "writable" ? sandbox.writable : sandbox.readable;
      UDON_ASSIGN_OR_RETURN(paths, ParsePaths(member, env, base_dir, pointer + "/" + name));
    } else if (name == "etc") {
      UDON_ASSIGN_OR_RETURN(sandbox.etc, ParsePath(member, env, base_dir, name, pointer + "/etc"));
    } else {
      // A misspelt member of a security setting must not be silently ignored.
      return ConfigInvalid("sandbox takes only network, readable, writable and etc", pointer);
    }
  }
  return std::optional(sandbox);
}

std::vector<std::string> ChildEnvironment(const ServerConfig& server, const char* const* parent) {
  std::map<std::string, std::string> merged;
  const std::set<std::string> listed(server.inherit_env.begin(), server.inherit_env.end());
  for (const char* const* entry = parent; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(text.substr(0, eq));
    if (IsReservedVariable(name)) continue;  // whatever the entry says
    if (IsDefaultVariable(name) || server.inherit_env_all || listed.count(name) > 0) {
      merged[name] = std::string(text.substr(eq + 1));
    }
  }
  // The entry's own values: literals or non-reserved ${env:...} (reserved ones are refused
  // when the configuration is loaded).
  for (const auto& [name, value] : server.env) merged[name] = value;
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

bool CloseInheritedDescriptors(int keep, CloseMethod method) {
  switch (method) {
    case CloseMethod::kProcSelfFd:
      return CloseByProcSelfFd(keep);
    case CloseMethod::kRlimit:
      return CloseByRlimit(keep);
    case CloseMethod::kBest:
      break;
  }
  return CloseByRange(keep) || CloseByProcSelfFd(keep) || CloseByRlimit(keep);
}

std::string BwrapPath(const EnvLookup& env) {
  if (auto path = env("UDON_MCP_BWRAP"); path && !path->empty()) return *path;
  return std::string(kDefaultBwrap);
}

Status CheckSandboxAvailable(const std::string& bwrap) {
  static std::mutex mutex;
  static std::map<std::string, Status> verdicts;
  std::lock_guard lock(mutex);
  auto it = verdicts.find(bwrap);
  if (it == verdicts.end()) it = verdicts.emplace(bwrap, ProbeSandbox(bwrap)).first;
  return it->second;
}

Status CheckRunnable(const ServerConfig& server, const EnvLookup& env) {
  if (server.type != ServerType::kStdio || !server.sandbox) return OkStatus();
  std::string home = env("HOME").value_or("");
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  for (bool writable : {false, true}) {
    const std::vector<std::string>& paths = writable ? server.sandbox->writable : server.sandbox->readable;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::string member = (writable ? "writable/" : "readable/") + std::to_string(i);
      UDON_RETURN_IF_ERROR(CheckSandboxPath(server, paths[i], member, home));
    }
  }
  if (!server.sandbox->etc.empty()) UDON_RETURN_IF_ERROR(CheckSandboxPath(server, server.sandbox->etc, "etc", home));
  Status available = CheckSandboxAvailable(BwrapPath(env));
  if (available.ok()) return available;
  Error error = available.error();
  error.pointer = server.pointer + "/sandbox";
  error.details["server"] = server.key;
  return error;
}

json::Value SandboxEvidence(const RuntimeConfig* config, const std::string& key) {
  if (config == nullptr) return nullptr;
  auto it = config->servers.find(key);
  if (it == config->servers.end() || it->second.type != ServerType::kStdio) return nullptr;
  const std::optional<SandboxSettings>& sandbox = it->second.sandbox;
  if (!sandbox) return {{"enabled", false}};
  return {{"enabled", true},
          {"network", sandbox->network},
          {"readable", sandbox->readable.size()},
          {"writable", sandbox->writable.size()}};
}

}  // namespace udon::mcp
