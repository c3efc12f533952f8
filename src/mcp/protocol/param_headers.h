// x-mcp-header (MCP 2026-07-28, Streamable HTTP): a tool's inputSchema may designate
// primitive parameters whose values the client mirrors into Mcp-Param-{Name} headers, so
// intermediaries can route without reading bodies. A client on HTTP must refuse a tool
// whose annotations break the rules, and must mirror the values of a valid one; a server
// checks the mirrors of the same annotations. This is the one walk of the annotations,
// shared by both sides (mcp_protocol).
#pragma once

#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "mcp/protocol/protocol.h"

namespace udon::mcp {

struct ParamHeader {
  std::string name;               // the x-mcp-header value: the header is Mcp-Param-{name}
  std::vector<std::string> path;  // property names from the arguments object down
  std::string type;               // "string" | "integer" | "boolean"
};

// The annotations of a Tool object's inputSchema, in document order. Fails with
// mcp.invalid_param_header (pointer into the Tool) when one is empty, not a header token,
// repeated case-insensitively, on a non-primitive or number type, or reachable other than
// through a chain of `properties`.
Result<std::vector<ParamHeader>> ParamHeadersOf(const json::Value& tool);

// The argument an annotation designates: nullptr when a step of its path is missing or
// not an object.
const json::Value* ParamValue(const ParamHeader& param, const json::Value& arguments);

// The Mcp-Param-* headers for these arguments: one per annotated value present and not
// null, encoded per the revision (base64 sentinel when not plain header-safe ASCII).
RequestHeaders MirrorArguments(const std::vector<ParamHeader>& params, const json::Value& arguments);

}  // namespace udon::mcp
