// YAML loading (yaml-cpp) into the project's JSON value type, for UWS documents and
// review files.
#pragma once

#include <string_view>

#include "json/json.h"
#include "base/result.h"

namespace udon::json {

// YAML 1.2 core schema: null/~/empty, true/false, decimal, 0o octal, 0x hex, floats and
// .inf/.nan (refused: not JSON), everything else a string; quoted scalars are always
// strings. Duplicate keys, non-string (complex) keys, aliases that recurse, and
// multi-document streams are refused. Errors (yaml.invalid, yaml.duplicate_key,
// yaml.unsupported) carry line and column.
Result<Value> ParseYaml(std::string_view text);

// JSON or YAML by content: a document whose first non-space byte is '{' or '[' is JSON.
Result<Value> ParseJsonOrYaml(std::string_view text);
// Whether ParseJsonOrYaml reads `text` as JSON.
bool IsJsonByContent(std::string_view text);

}  // namespace udon::json
