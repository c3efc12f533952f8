// The JSON Schemas this project ships for its own formats (schemas/ in the repository),
// compiled into the library.
#pragma once

#include "json/json.h"
#include "base/result.h"

namespace udon::manifest {

// schemas/openudon.mcp-tool-manifest.0.1.schema.json
const json::Value& ManifestProfileSchema();
// schemas/x-openudon-mcp.schema.json
const json::Value& BindingSchema();

// Shape problems the shipped profile schema finds (manifest.invalid, one Error per
// basic-output unit, pointers into the manifest). Empty when it conforms.
std::vector<Error> CheckAgainstProfileSchema(const json::Value& document);

}  // namespace udon::manifest
