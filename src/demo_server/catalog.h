// The demo server's tools: a small realistic catalog, the conformance fixture tools and
// generated tools for scale tests.
#pragma once

#include <cstddef>
#include <string>

#include "mcp/server/server.h"

namespace udon::demo {

struct CatalogOptions {
  bool conformance_fixtures = false;  // the tools conformance server scenarios call by name
  std::size_t synthetic_tools = 0;    // generated tools with varied schemas
  int ledger_delay_ms = 200;          // how long append_ledger holds its critical section
  std::string ledger_file;            // optional: append_ledger also appends and locks here
  // optional: append_ledger appends each call's `entry` here, one line, with one write(2),
  // before it waits: a test that sends unique entries counts every dispatch (duplicates too)
  std::string entries_file;
};

// Registers every tool the options select on `server`.
void RegisterTools(mcp::Server& server, const CatalogOptions& options);

}  // namespace udon::demo
