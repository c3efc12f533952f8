// Where state and evidence go: a path (the file store, a JSON Lines file) or a libpq URI
// (postgres:// or postgresql://, the shared store).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gate/evidence.h"
#include "gate/state_store.h"
#include "base/result.h"

namespace udon::state_pg {

// The store --state, $UDON_MCP_STATE or policy "state" names: a state directory path, or
// a PostgreSQL database (connected lazily, on the gate's first use). Errors: usage.invalid
// (empty, or a URI libpq cannot parse).
Result<std::shared_ptr<gate::StateStore>> OpenStateStore(const std::string& url_or_path);

// --evidence FILE, or --evidence postgres://…: the same value-free lines in the
// udon_mcp_evidence table. Errors: evidence.write_failed (file), usage.invalid (a URI
// libpq cannot parse); a database is reached lazily, at the first record.
Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidenceWriter(const std::string& file_or_url);

// Every evidence line of the database, in the order written. Errors: state.unavailable.
Result<std::vector<std::string>> ReadEvidenceLines(const std::string& url);

}  // namespace udon::state_pg
