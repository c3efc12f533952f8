// Private to the gate's sources: the value-free details a refusal carries (drift pointers,
// schema error locations, serverInfo differences).
#ifndef UDON_GATE_INTERNAL_DETAILS_H_
#define UDON_GATE_INTERNAL_DETAILS_H_

#include <string>
#include <vector>

#include "json/diff.h"
#include "json/json.h"
#include "schema/schema.h"

namespace udon::gate::internal {

// Each difference as {pointer, change, area}: locations only, never values.
json::Value DriftDetails(const std::vector<json::Difference>& differences);

// Whose instance a validation looked at: the caller's own arguments, or a result the
// server chose. Object keys in a result are server data (a map keyed by account number,
// say), so a result's errors name schema locations only.
enum class Instance { kArguments, kResult };

// Basic-output units without anything from the instance but (for arguments) its locations
// and, for `required`, the missing property's schema-given name; at most 50.
json::Value SchemaErrors(const schema::ValidationResult& result, Instance instance,
                         const json::Value* schema_document = nullptr, const json::Value* arguments = nullptr);

// serverInfo is public (the manifest holds it): a mismatch says what each differing member
// was reviewed as and is live, so a person sees the upgrade without a second tool.
json::Value ServerInfoDifferences(const json::Value& reviewed, const json::Value& live);

}  // namespace udon::gate::internal

#endif  // UDON_GATE_INTERNAL_DETAILS_H_
