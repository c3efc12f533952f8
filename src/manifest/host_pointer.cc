#include "manifest/host_pointer.h"

#include <algorithm>
#include <initializer_list>

#include "json/pointer.h"
#include "schema/schema.h"

namespace udon::manifest {
namespace {

// Where a segment stands: what the value it selects is.
enum class At {
  kTool,
  kAnnotations,
  kExecution,
  kIcons,
  kIcon,
  kSchema,
  kSchemaArray,
  kSchemaName,  // the next segment names a subschema: the server's word
  kValueName,   // the next segment names a value: the server's word
  kValue,       // below here only indices are ours
};

struct Step {
  bool shown;
  At next;
};

// Arrays in a message of at most 16 MiB stay below 10^8 elements; a longer run of digits
// is a name, not an index.
bool IsIndex(std::string_view token) {
  if (token.empty() || token.size() > 8 || (token.size() > 1 && token[0] == '0')) return false;
  return std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool Among(std::string_view token, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), token) != words.end();
}

Step InSchema(std::string_view token) {
  if (token == "x-mcp-header") return {true, At::kValue};  // MCP's own annotation keyword
  switch (schema::KeywordValueOf(token)) {
    case schema::KeywordValue::kSchema:
      return {true, At::kSchema};
    case schema::KeywordValue::kSchemaArray:
      return {true, At::kSchemaArray};
    case schema::KeywordValue::kSchemaMap:
      return {true, At::kSchemaName};
    case schema::KeywordValue::kNameMap:
      return {true, At::kValueName};
    case schema::KeywordValue::kValue:
      return {true, At::kValue};
    case schema::KeywordValue::kNone:
      break;
  }
  return {false, At::kValue};
}

Step InTool(std::string_view token) {
  if (Among(token, {"inputSchema", "outputSchema"})) return {true, At::kSchema};
  if (token == "annotations") return {true, At::kAnnotations};
  if (token == "execution") return {true, At::kExecution};
  if (token == "icons") return {true, At::kIcons};
  return {Among(token, {"name", "title", "description", "_meta"}), At::kValue};
}

Step Next(At at, std::string_view token) {
  if (at == At::kSchemaName) return {false, At::kSchema};
  if (at == At::kValueName) return {false, At::kValue};
  if (IsIndex(token)) {
    // An array of subschemas, or draft-07's items array, holds schemas; icons hold icons.
    if (at == At::kSchema || at == At::kSchemaArray) return {true, At::kSchema};
    return {true, at == At::kIcons ? At::kIcon : At::kValue};
  }
  switch (at) {
    case At::kTool:
      return InTool(token);
    case At::kSchema:
      return InSchema(token);
    case At::kAnnotations:
      return {Among(token, {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}),
              At::kValue};
    case At::kExecution:
      return {token == "taskSupport", At::kValue};
    case At::kIcon:
      return {Among(token, {"src", "mimeType", "sizes", "theme"}), At::kValue};
    default:
      return {false, At::kValue};
  }
}

}  // namespace

std::string HostPointer(std::string_view pointer) {
  auto parsed = json::Pointer::Parse(pointer);
  if (!parsed.ok()) return "*";
  std::string shown;
  At at = At::kTool;
  for (const std::string& token : parsed->tokens()) {
    const Step step = Next(at, token);
    shown += "/";
    shown += step.shown ? token : "*";
    at = step.next;
  }
  return shown;
}

}  // namespace udon::manifest
