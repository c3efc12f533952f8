// Where state and evidence go: a path (the file store, a JSON Lines file) or a libpq URI
// (postgres:// or postgresql://, the shared store).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gate/evidence.h"
#include "gate/state_store.h"
#include "oauth/token_store.h"
#include "base/result.h"

namespace udon::state_pg {

// The store --state, $UDON_MCP_STATE or policy "state" names: a state directory path, or
// a PostgreSQL database (connected lazily, on the gate's first use). Errors: usage.invalid
// (empty, a URI libpq cannot parse, or libpq's key=value form, which is not a path).
// A database's connection attempts end by `connect_bound` too (0: none; the call's
// timeout), also with connect_timeout=0 (pg_store.h).
Result<std::shared_ptr<gate::StateStore>> OpenStateStore(
    const std::string& url_or_path, std::chrono::milliseconds connect_bound = std::chrono::milliseconds(0));

// --evidence FILE, or --evidence postgres://…: the same value-free lines in the
// udon_mcp_evidence table. Errors: evidence.write_failed (file), usage.invalid (a URI
// libpq cannot parse, or libpq's key=value form); a database is reached lazily, at the
// first record.
// A database is reached within `connect_bound` as OpenStateStore's.
Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidenceWriter(
    const std::string& file_or_url, std::chrono::milliseconds connect_bound = std::chrono::milliseconds(0));

// Where OAuth logins live beside the state store `url_or_path` names (as OpenStateStore): a
// database's table, sealed with the key of ResolveTokenKeySource(key_file, state_dir)
// (token_store.h), or the file store in the state directory `url_or_path`. Errors:
// usage.invalid (as OpenStateStore's); a database and the key are reached lazily.
Result<std::unique_ptr<oauth::TokenStore>> OpenTokenStore(
    const std::string& url_or_path, const std::string& state_dir, const std::optional<std::string>& key_file,
    std::chrono::milliseconds connect_bound = std::chrono::milliseconds(0));

// Every evidence line of the database, in the order written. Errors: state.unavailable.
Result<std::vector<std::string>> ReadEvidenceLines(const std::string& url);

}  // namespace udon::state_pg
