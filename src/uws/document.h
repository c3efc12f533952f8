// A UWS document (UWS 1.0.0 to 1.9.x, JSON or YAML) and its validation: the structural
// rules of the UWS 1.9 JSON Schema plus the semantic rules (unique ids, one shared name
// namespace, reference integrity, dependency and workflow-call cycles, operation shapes,
// request keys, type, criterion and action rules). The document is kept exactly as read,
// so x-* members are preserved.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::uws {

struct Document {
  json::Value root;
  std::string directory;  // the folder relative manifest paths resolve against
  int minor = 0;          // of the UWS version 1.<minor>.<patch>
  int patch = 0;

  bool AtLeast(int want_minor, int want_patch = 0) const {
    return minor > want_minor || (minor == want_minor && patch >= want_patch);
  }
};

// Parses JSON or YAML and applies the version gate (1.0.0 to 1.9.x; later or malformed
// versions are refused). Errors: io.unreadable, uws.invalid (with details.rule).
Result<Document> LoadDocument(const std::string& path);
Result<Document> ParseDocument(std::string_view text, std::string directory);

// Every structural and semantic error at once; empty when valid. Each error has code
// uws.invalid, a fixed message, the pointer of the offending value and details.rule, a
// stable name of the rule it breaks.
std::vector<Error> Validate(const Document& document);

// One uws.invalid error whose details.errors lists the given ones.
Error InvalidDocument(const std::vector<Error>& errors);

// The error list as JSON: [{code, message, pointer, rule?}].
json::Value ErrorsToJson(const std::vector<Error>& errors);

// Visits every step of the document: steps, case steps and default steps, recursively.
// The callback gets the step object, its pointer and the workflow it belongs to.
struct StepVisit {
  const json::Value* step;
  std::string pointer;
  std::string workflow_id;
};
std::vector<StepVisit> AllSteps(const json::Value& root);

bool IsExtensionKey(std::string_view key);

}  // namespace udon::uws
