// serve over HTTP always authenticates (contract 7.16): the bearer token from --token-file,
// or one minted into the state directory, or none with an explicit --no-token on loopback.
#pragma once

#include <string>

#include "base/result.h"

namespace udon::cli {

// The token file serve mints into the state directory.
inline constexpr const char* kServeTokenFileName = "serve-token";

// What a host without the token is told (HTTP 401): words for the person configuring it,
// who would otherwise be sent toward OAuth by a bare "unauthorized".
// (Hosts redact "token: ..." and "Authorization: ..." in what they show: avoid both.)
inline constexpr const char* kServeUnauthorizedMessage =
    "this udon-mcp gateway requires a bearer token and offers no OAuth; configure the host to send the "
    "Authorization header as Bearer followed by the token from --token-file, or from the serve-token file in the "
    "gateway's state directory (udon-mcp serve printed its path when it started)";

// The bearer token: the file's bytes without surrounding white space. Errors: io.unreadable,
// usage.invalid (empty or shorter than 16 bytes: a guessable token protects nothing).
Result<std::string> ReadTokenFile(const std::string& path);

struct MintedToken {
  std::string token;
  std::string path;    // state_dir/serve-token, absolute
  bool reused = false;  // a private token file of an earlier start was kept
};

// STATE_DIR/serve-token: kept when it is already this user's regular file, private (no
// group or other permission bits) and holds a valid token, so a configured host keeps
// working across restarts; else a new token (32 bytes from the OS CSPRNG, hex) written
// atomically with mode 0600. Errors: random.unavailable, state.write_failed.
Result<MintedToken> MintServeToken(const std::string& state_dir);

// The stderr lines that tell a person how to give a host the token: the file's path and
// ready host configuration that reads the token from the file (the token itself is never
// printed, so it stays out of terminal scrollback and logs).
std::string TokenInstructions(const std::string& token_path, const std::string& url);

}  // namespace udon::cli
