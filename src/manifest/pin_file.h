// The pin file `serve --pin-file` reads (docs/contract.md 7.16, 7.21): the pinned
// manifestSha256 as its first word, then optionally one line per bound upstream entry,
//
//   <manifestSha256>
//   entry <server> <sha256 of the server's runtime configuration entry, RFC 8785>
//
// so that the command the gateway starts is pinned as the manifest is. A pin file of one
// word (written before entries were bound, or by hand) binds the manifest only; lines of
// any other form are ignored.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace udon::manifest {

struct PinFile {
  std::string manifest_sha256;                // "" when the text holds no word
  std::map<std::string, std::string> entries;  // server key -> its entry's canonical SHA-256
};

PinFile ParsePinFile(std::string_view text);
std::string PinFileText(const PinFile& pin);

}  // namespace udon::manifest
