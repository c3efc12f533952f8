// A pointer into a Tool as an MCP host may see it. A host hands what it is told to a model,
// and every name a server chose (a property, a $defs entry, an _meta key, an unknown
// member) is text the server controls: an instruction to the model fits in one. So what the
// gateway tells a host keeps only the segments of a fixed vocabulary, judged by position.
// The full pointer stays where people read it (stderr through json::ForDisplay, --json,
// evidence). docs/contract.md 7.16.
#pragma once

#include <string>
#include <string_view>

namespace udon::manifest {

// `pointer` (RFC 6901, into a Tool object) with every segment outside the vocabulary shown
// as "*". The vocabulary, by position:
//   - the Tool's own members (name, title, description, inputSchema, outputSchema,
//     annotations, execution, icons, _meta), the annotation hints, execution.taskSupport,
//     an icon's members;
//   - in inputSchema and outputSchema, the keywords of JSON Schema 2020-12 and draft-07 (and
//     MCP's x-mcp-header) where a keyword stands; the segment after properties,
//     patternProperties, $defs, definitions, dependentSchemas, dependencies or
//     dependentRequired is a name the server chose, so always "*", whatever it spells;
//     below a value keyword (enum, const, default, examples, ...) only indices remain;
//   - array indices anywhere: "0" or up to 8 digits without a leading zero.
// Everything under _meta is the server's. "" (the whole Tool) stays ""; text that is not a
// pointer is "*".
std::string HostPointer(std::string_view pointer);

}  // namespace udon::manifest
