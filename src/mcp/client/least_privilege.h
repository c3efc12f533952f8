// Least privilege for the stdio servers udon-mcp starts (docs/contract.md 7.10): the
// environment a server sees, the descriptors it inherits, and the optional bubblewrap
// sandbox. A server is third-party code running with udon-mcp's rights; these rules keep
// udon-mcp's own secrets, files and sockets out of its reach.
//
// - Environment: the default set (HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, LC_*, TZ,
//   TMPDIR), then the names of `inheritEnv` (or everything with `inheritEnv: true`), then
//   the entry's `env`. Reserved variables (UDON_MCP_*, PG*) are never taken from
//   udon-mcp's environment, whatever the entry says; a config that names one in
//   `inheritEnv` or in `${env:...}` is refused at load.
// - Descriptors: only 0, 1 and 2 survive the exec (close_range, else /proc/self/fd, else
//   every descriptor below the limit).
// - Sandbox: bwrap, with what the server sees laid out in sandbox_layout.h: the system
//   directories and its command's trees read-only, the entry's readable and writable
//   paths, empty private /tmp, /dev/shm and $HOME, udon-mcp's own files masked.
//
// Error codes: config.invalid (ParseInheritEnv, ParseSandbox, CheckRunnable: a sandbox this
// machine cannot provide, a readable or writable path that does not exist or is $HOME or
// above it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "mcp/client/config.h"
#include "mcp/client/sandbox_layout.h"

namespace udon::mcp {

// UDON_MCP_* and PG*: udon-mcp's own configuration and credentials (the state store's URL
// and password, the evidence key). Never given to a server.
bool IsReservedVariable(std::string_view name);
// The variables every server gets from udon-mcp's environment when they are set.
bool IsDefaultVariable(std::string_view name);

// `inheritEnv`: true, or an array of variable names (no patterns). Fills the server's
// inherit_env_all / inherit_env. Errors: config.invalid (pointer names the member).
Status ParseInheritEnv(const json::Value& value, const std::string& pointer, ServerConfig& server);
// `sandbox`: true, false (none), or {"network": bool, "readable": [PATH, ...], "writable":
// [DIR, ...], "etc": DIR} (${env:NAME} expands in the paths; relative ones resolve against
// base_dir).
// Errors: config.invalid.
Result<std::optional<SandboxSettings>> ParseSandbox(const json::Value& value, const EnvLookup& env,
                                     const std::string& base_dir, const std::string& pointer);

// NAME=VALUE strings for the child, from `parent` (an environ-style array) and the entry.
std::vector<std::string> ChildEnvironment(const ServerConfig& server, const char* const* parent);

// How CloseInheritedDescriptors closes: the first way that works, or one forced (tests).
enum class CloseMethod { kBest, kProcSelfFd, kRlimit };
// Between fork and exec (async-signal-safe): closes every descriptor from 3 up except
// `keep` (which should be close-on-exec). Returns false if some way failed to run at all.
bool CloseInheritedDescriptors(int keep, CloseMethod method = CloseMethod::kBest);

// The bubblewrap binary: $UDON_MCP_BWRAP when set (an absolute path; for tests and
// unusual installs), else /usr/bin/bwrap.
std::string BwrapPath(const EnvLookup& env);
// Whether bwrap at `bwrap` can build the sandbox here: it exists and one probe run
// (the sandbox's own namespaces around `true`) succeeds. The verdict is cached per path.
// Errors: config.invalid (details.reason: bwrap_missing | namespaces_refused).
Status CheckSandboxAvailable(const std::string& bwrap);
// Everything a server needs before it is started: its readable paths, writable
// directories and etc directory exist, none of them is $HOME or above it (details.reason home_exposed), and
// the sandbox works, when it asks for one. Errors: config.invalid (pointer into the entry).
Status CheckRunnable(const ServerConfig& server, const EnvLookup& env);
// The evidence member for a stdio server: {"enabled": false} or {"enabled": true,
// "network": bool, "readable": count, "writable": count}; null for HTTP or an unknown key. Counts, never
// paths: they may come from ${env:...}.
json::Value SandboxEvidence(const RuntimeConfig* config, const std::string& key);

}  // namespace udon::mcp
