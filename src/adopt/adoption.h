// The adoption directory D (`adopt --dir D`, docs/contract.md 7.21): what was adopted from
// which host file, the captured manifests (D/<host>/<name>.tools.json), their pins once
// reviewed (D/<host>/<name>.pin), the runtime configuration the gateway starts the
// upstream servers from (D/mcp.json) and the record of it all (D/adopt.json: each host
// file's SHA-256 as adopt read it, its backup and its SHA-256 once rewritten).
//
// Secrets stay in the host files. D/mcp.json names an entry's `env` members, and the
// secrets written in its `args`, `url` and `headers`, as `${env:NAME}` only: the rewritten
// host entry carries the values in its own `env` under names the gateway ignores
// (carried.h), so the host hands them to `udon-mcp serve`, which expands them for the
// upstream server. A header stays in D/mcp.json only when its whole value is one reference.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adopt/discovery.h"
#include "base/file.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"
#include "mcp/client/config.h"

namespace udon::adopt {

struct AdoptedEntry {
  std::string host;
  std::string scope;
  std::string file;               // the host file, absolute
  std::vector<std::string> path;  // member names from the file's root to the entry
  std::string key;                // the entry's key in the host file
  std::string server;             // its key in D/mcp.json and in the manifest: <host>.<name>
  std::string manifest;           // relative to D
  std::string pin;                // relative to D
  std::string project;            // the project directory of a project file, else ""
  bool vscode = false;            // a VS Code file: "type" is required
};

struct AdoptedFile {
  std::string host;
  std::string sha256;          // of the bytes adopt read (capture); --apply refuses others
  std::string backup;          // set by --apply: the original bytes, beside the file
  std::string applied_sha256;  // set by --apply: the bytes it wrote; --undo refuses others
};

struct Adoption {
  std::vector<AdoptedEntry> entries;
  std::map<std::string, AdoptedFile> files;  // by path
  std::string policy;  // the local policy file the capture used (absolute), "" for none
  // Set by --apply, by server: the digest of each entry it wrote (applied_entry.h), which
  // --check requires of the entry the host file holds.
  std::map<std::string, std::string> applied_entries;

  json::Value ToJson() const;
  // Errors: adopt.record_invalid.
  static Result<Adoption> FromJson(const json::Value& value);
  // D/adopt.json; a directory without one is an empty adoption. Errors: io.unreadable,
  // adopt.record_invalid.
  static Result<Adoption> Load(const std::string& dir);
  Status Save(const std::string& dir) const;
};

// The lock capture, --apply and --undo hold for their whole run (flock on D/adopt.lock;
// D is created 0700 when missing), so that a second run refuses instead of erasing or
// repeating the first one's record; load D/adopt.json after taking it. Errors: adopt.busy
// (another run holds it), io.write_failed.
Result<base::FileLock> LockAdoption(const std::string& dir);

// The D/mcp.json entry of a host entry: its transport without secret values (see above);
// `sandbox` adds "sandbox": true to a stdio entry that does not set it. Relative `cwd`
// resolves against the project; a project file's entry without one starts in the project.
// Errors: adopt.reserved_variable (an env name udon-mcp keeps to itself: UDON_MCP_*, PG*),
// adopt.unsupported (neither stdio nor HTTP).
Result<json::Value> RuntimeEntry(const Entry& entry, const HostFile& file, bool sandbox);

// The environment a capture of the entry sees: the values the rewritten entry will carry
// (carried.h; expanded as its host would, from this process's environment), then this
// process's.
mcp::EnvLookup CaptureEnvironment(const Entry& entry);

// A name for the entry inside D that is a valid manifest server key ([A-Za-z0-9_.-], at
// most 48 characters), unique among `taken` ("<key>", else "<key>-2", ...).
std::string EntryName(const std::string& key, const std::vector<std::string>& taken);

struct CaptureRequest {
  std::string dir;
  std::vector<std::string> hosts;    // empty: every host
  std::vector<std::string> servers;  // empty: every entry
  bool sandbox = false;  // every stdio entry
  int expires_in_days = 7;
  manifest::Policy policy;
  std::string policy_path;  // its file, recorded so that the gateway runs under it too
  std::function<void(const std::string& line)> on_progress;
  bool unsandboxed_projects = false;  // --no-sandbox: project files' entries as they say too
  // Gives an http entry its stored OAuth login (the command line's AttachStoredLogins);
  // null: none.
  std::function<void(mcp::RuntimeConfig& config)> attach_logins;
  // An http entry answered 401 (a server behind OAuth, issue 39): log in to it (`server`,
  // named as in D; `host_key`, its key in the host's file) or refuse with
  // auth.login_required. Null: the 401 is the entry's refusal.
  std::function<Status(const mcp::ServerConfig& server, const std::string& host_key)> log_in;
  // --protocol-version: every entry is opened at exactly this revision (as capture's); unset:
  // the newest both sides speak. log_in runs its login for the same revision.
  std::optional<std::string> protocol_version;
};

struct CaptureReport {
  std::vector<AdoptedEntry> captured;
  std::vector<std::pair<std::string, std::string>> skipped;  // "host/key", why
  std::vector<std::pair<std::string, Error>> refused;  // "host/key" not adopted (left as it is), why
};

// The pin file of an adopted entry (manifest/pin_file.h): the manifest's digest, and the
// entry `serve` starts the upstream from, as D/mcp.json holds it, bound beside it.
// Errors: adopt.record_invalid (D/mcp.json lacks the entry), io.unreadable,
// json.not_canonicalizable.
Result<std::string> PinText(const std::string& dir, const std::string& server, const std::string& manifest_sha256);

// Captures every selected, ungated, enabled entry of `files` into D (a project file's entry
// only as project_trust.h allows, in the sandbox), then writes D/mcp.json (merged with what
// is there) and D/adopt.json, every file 0600. A manifest that already holds reviews keeps
// those of unchanged tools (capture --update). An entry that fails is left as it is and
// reported in `refused`; the others are captured. Errors: the first refusal when no entry
// was captured, adopt.busy, adopt.nothing_selected, adopt.already_applied, the codes of
// RuntimeEntry and capture::Capture, io.write_failed. An http entry that answers 401 is
// logged in to by request.log_in, then captured with the login, and kept in D/mcp.json with
// an "oauth" member: the gateway then refuses it without a login (auth.login_required)
// rather than forwarding a 401.
Result<CaptureReport> CaptureEntries(const std::vector<DiscoveredFile>& files, const CaptureRequest& request);

}  // namespace udon::adopt
