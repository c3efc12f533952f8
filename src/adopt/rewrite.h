// The rewrite of a host entry so that it starts `udon-mcp serve` (adopt --apply): only the
// bytes of the entry's value change; the key (so the host's permissions keep naming it),
// the host's own members (timeout, autoApprove, trust, ...) and everything else in the file
// stay as they were. Its `env` becomes what the entry carries for the upstream (carried.h):
// each `env` value's bytes under its carried name, and the secrets moved out of args, url
// and headers, so the host file stays their only holder.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace udon::adopt {

// What the gateway entry starts: `command serve --manifest M --pin-file P --config C
// --server S [--policy F]`, all paths absolute.
struct GatewayCommand {
  std::string command;  // the udon-mcp binary
  std::string manifest;
  std::string pin;
  std::string config;
  std::string server;
  std::string policy;  // --policy FILE when not empty
};

std::vector<std::string> GatewayArgs(const GatewayCommand& gateway);

struct EntryEdit {
  std::vector<std::string> path;  // member names from the root to the entry
  GatewayCommand gateway;
  bool type_required = false;  // VS Code: "type": "stdio" even when the entry had no type
};

// The file's text with each entry's value replaced by its gateway entry, in the entry's own
// layout (one line, or one member per line at the entry's indentation). The text may hold
// comments and trailing commas (JSON with comments). Errors: adopt.entry_missing,
// adopt.file_invalid (the text, or the result, is not JSON with comments).
Result<std::string> RewriteEntries(std::string_view text, const std::vector<EntryEdit>& edits);

}  // namespace udon::adopt
