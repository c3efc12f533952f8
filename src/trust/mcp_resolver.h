// The content-trust resolver of profile openudon.mcp-tool-call.0.1 (the proposal's
// "UWS 1.9 content trust"): the reviewed input-channel map of the bound tool and a value
// contract per operation output. It reads the manifest and the document only; it never
// contacts a server or inspects runtime arguments or results.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "json/json.h"
#include "manifest/binding.h"
#include "manifest/policy.h"
#include "trust/resolver.h"

namespace udon::trust {

class McpResolver : public Resolver {
 public:
  // The policy only decides whether a review is acceptable (ValidateReview). `manifests`
  // is the run's manifest cache (shared with the static checks and the gate, so the run
  // reads each manifest once); null: one of the resolver's own.
  explicit McpResolver(manifest::Policy policy = {}, std::shared_ptr<manifest::ManifestCache> manifests = nullptr);

  // Owns operations with x-uws-operation-profile openudon.mcp-tool-call.0.1. Fails closed
  // (an error, so resolver_failure) when the binding is malformed, the manifest cannot be
  // read or its digest differs from the pin, the server or tool is not selectable, the
  // review is missing, unacceptable or names channels the inputSchema lacks, the body is
  // not an object (dynamic), or a bound body path has no classified channel (itself or an
  // ancestor). The contract: channels /request/body<pointer> for each reviewed channel
  // present in the document's body, defaultTrust untrusted, outputs inherit input
  // provenance, and for each output read from $response.body the capability of the
  // outputSchema node its pointer selects.
  Resolution ResolveOperation(const uws::Document& document, std::size_t index,
                              const json::Value& operation) const override;

 private:
  manifest::Policy policy_;
  std::shared_ptr<manifest::ManifestCache> manifests_;
};

// The value capability of a JSON Schema node: an unconstrained string is free_text;
// boolean, number, integer, null, or an enum/const of scalars is constrained_scalar;
// object or array is composite; anything missing or ambiguous is unknown. `root` resolves
// local $refs.
std::string CapabilityOfSchema(const json::Value* schema, const json::Value& root);

// The outputSchema node a $response.body pointer (decoded tokens) selects, or nullptr when
// it is missing or ambiguous.
const json::Value* SelectSchemaNode(const json::Value& schema, const std::vector<std::string>& tokens);

}  // namespace udon::trust
