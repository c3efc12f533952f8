// Finding the server entries in the hosts' files (adopt --list): which files exist, which
// entries each holds, and which of them already start `udon-mcp serve` (gated).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adopt/host_config.h"
#include "json/json.h"
#include "base/result.h"

namespace udon::adopt {

struct Entry {
  std::string key;                // the entry's name in its file
  std::vector<std::string> path;  // member names from the root to the entry
  std::string pointer;            // the same as a JSON pointer
  std::string transport;          // "stdio", "http" or "unknown"
  bool gated = false;             // its command is udon-mcp serve
  bool disabled = false;          // "disabled": true
  json::Value value;              // the entry as parsed (secrets included: never print it)
};

struct DiscoveredFile {
  HostFile file;
  std::string text;    // the bytes read
  std::string sha256;  // of those bytes
  std::optional<Error> error;  // unreadable or not JSON (with comments): no entries
  std::vector<Entry> entries;
};

// The entries of a parsed host file of that shape, in file order.
std::vector<Entry> EntriesOf(FileShape shape, const json::Value& document);

// Whether an entry starts `udon-mcp serve` (any path to a binary named udon-mcp).
bool IsGated(const json::Value& entry);

// Reads and parses one file. Errors: io.unreadable (it exists and cannot be read; a
// missing file is nullopt).
std::optional<DiscoveredFile> ReadHostFile(const HostFile& file);

// Every candidate file that exists, in order.
std::vector<DiscoveredFile> Discover(const std::vector<HostFile>& candidates);

}  // namespace udon::adopt
