// The kind of each difference `udon-mcp diff` reports: one name from a closed list of stable
// strings (docs/contract.md 7.19), so that people and scripts tell a reworded description
// from a narrowed schema without reading pointers.
#pragma once

#include <string>
#include <vector>

#include "json/diff.h"
#include "json/json.h"

namespace udon::manifest {

// Every kind, in the contract's order.
const std::vector<std::string>& DriftKinds();

// A pointer into the manifest outside servers: manifest.captured_at, manifest.expires_at,
// manifest.profile, server.protocol_version (the negotiated version), or manifest.other.
std::string TopLevelKind(const std::string& pointer);

// A pointer into serverInfo: server.info.name, server.info.version, server.info.title, or
// server.info.other.
std::string ServerInfoKind(const std::string& pointer);

// The kind of each difference of one tool, in order. Pointers are relative to the Tool
// object, with DiffManifests' "[occurrence N]" prefix beyond the first; before and after hold
// the tool's occurrences in page order. A schema's kind (input_schema.*, output_schema.*)
// comes from schema::CompareSchemas of the whole schema, so every difference inside one
// schema has the same kind.
std::vector<std::string> ToolDifferenceKinds(const std::vector<json::Difference>& differences,
                                             const std::vector<const json::Value*>& before,
                                             const std::vector<const json::Value*>& after);

// The distinct kinds of a tool's differences, sorted; a difference at /annotations itself
// (the object added, removed or replaced) adds the kind of each hint that differs in it.
std::vector<std::string> ToolKinds(const std::vector<json::Difference>& differences,
                                   const std::vector<std::string>& kinds,
                                   const std::vector<const json::Value*>& before,
                                   const std::vector<const json::Value*>& after);

}  // namespace udon::manifest
