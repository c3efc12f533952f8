// What a sandboxed stdio server sees (docs/contract.md 7.10): bubblewrap's argv. Nothing of
// the host is visible unless this layout puts it there, so no host file, Unix socket or
// credential is reachable by accident:
//
// - read-only: /usr, /bin, /sbin, /lib*, /etc (or the entry's own `etc` directory in its
//   place), /opt; the trees of the server's command, of its interpreter (a script's #!
//   line) and of its first argument when that is a script file (CommandTrees); the
//   entry's `readable` paths;
// - read-write: the entry's `writable` directories;
// - private and empty: /tmp, /dev/shm and udon-mcp's $HOME; a fresh /proc, a minimal /dev;
// - masked wherever one of the trees above holds them: udon-mcp's own files (the state
//   directory, the configuration, the policy, evidence files; HideFromSandboxes).
//
// Its own user, pid, ipc, uts, cgroup and (unless "network": true) network namespaces; no
// capabilities, a new session, dies with its parent, the root itself read-only.
//
// Error codes: none. Nothing here fails: what cannot be resolved is left out, so the server
// sees less, never more (CheckRunnable in least_privilege.h refuses unusable entries).
#pragma once

#include <string>
#include <vector>

#include "mcp/client/config.h"

namespace udon::mcp {

// The facts of this host a sandbox is built from (CurrentSandboxHost for this process).
struct SandboxHost {
  std::string home;                 // udon-mcp's $HOME, an empty private directory inside ("": none)
  std::string path;                 // the server's PATH: where its command is looked up
  std::vector<std::string> hidden;  // udon-mcp's own files and directories
};

// Whether `path` is `dir` or lies below it (both absolute and normal).
bool IsPathUnder(const std::string& path, const std::string& dir);
// `path` made absolute against `base` (itself against the current directory when
// relative), lexically normal, without a trailing slash.
std::string AbsolutePath(const std::string& path, const std::string& base);

// Registers one of udon-mcp's own files or directories: every sandbox built afterwards in
// this process masks it wherever it would be visible. Thread-safe; a relative path is
// taken against the current directory.
void HideFromSandboxes(const std::string& path);

// $HOME of this process, the PATH of `child_env` (the server's NAME=VALUE environment; the
// C library's default when it has none) and every path given to HideFromSandboxes.
SandboxHost CurrentSandboxHost(const std::vector<std::string>& child_env);

// The file execvp runs for `command`: a name with a slash taken against `cwd`, else the
// first executable regular file along `path`. "" when there is none.
std::string FindExecutable(const std::string& command, const std::string& path, const std::string& cwd);

// The paths a server needs to run, to be bound read-only at the same place: for its
// command, for the interpreter of a #! script and for the first argument when it names a
// regular file (`node server.js`):
// - the directory the program is named in (an npm or pip `PREFIX/bin`), and then
//   `PREFIX/lib` as well (where those installs put the packages);
// - the package its resolved path (symlinks followed) lives in: the outermost
//   `node_modules` above it (hoisted dependencies), else the nearest directory holding
//   package.json, pyvenv.cfg, pyproject.toml or setup.py, else its own directory.
// Never `/`, `host.home` or a directory above it: the single file instead. Paths already
// visible (the system directories) are left out; absolute, without duplicates.
std::vector<std::string> CommandTrees(const std::vector<std::string>& command, const std::string& cwd,
                                      const SandboxHost& host);

// argv that runs `command` in the sandbox; `cwd` is where it starts ("" for bwrap's
// default), an empty directory there unless a visible tree holds it.
std::vector<std::string> SandboxArgv(const std::string& bwrap, const SandboxSettings& sandbox, const SandboxHost& host,
                                     const std::string& cwd, const std::vector<std::string>& command);

}  // namespace udon::mcp
