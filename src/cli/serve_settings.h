// serve --settings FILE: serve's service options in a file (YAML or JSON, as policy files
// are read), for a deployment that keeps them under configuration management rather than
// on a command line (contract 7.16, docs/operations.md). Strict: an unknown member or a
// value of the wrong type refuses the whole file, the JSON pointer naming it. Options given
// on the command line override the file's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "cli/serve_oauth.h"

namespace udon::cli {

struct ServeSettings {
  std::optional<std::string> listen;
  std::optional<std::string> metrics_listen;
  std::optional<std::string> otlp_endpoint;
  std::optional<std::string> state;
  std::optional<int> drain_seconds;
  std::optional<ServeOAuthOptions> auth;  // present: --auth oauth with these options
};

// Errors: serve.settings_invalid (not a YAML or JSON object, an unknown member, a value of
// the wrong type or out of range; the error's pointer names the member).
Result<ServeSettings> ParseServeSettings(std::string_view text);

// Errors: io.unreadable, io.too_large (over 1 MiB), and ParseServeSettings's.
Result<ServeSettings> ReadServeSettings(const std::string& path);

}  // namespace udon::cli
