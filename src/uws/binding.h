// Static checks of the MCP bindings (x-openudon-mcp, contract 1.2) of every operation with
// profile openudon.mcp-tool-call.0.1: binding shape, manifest resolution and digest, the
// selected server and tool, the review, request shape, output schema, literal bodies
// against the reviewed inputSchema, reviewed channels for every bound body path, and output
// pointers that cannot exist in the outputSchema. Nothing here contacts a server.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/binding.h"
#include "manifest/policy.h"
#include "uws/document.h"

namespace udon::uws {

inline constexpr std::string_view kMcpProfile = "openudon.mcp-tool-call.0.1";

struct McpOperation {
  std::string operation_id;
  std::string pointer;  // /operations/<i>
  manifest::Binding binding;
  std::vector<std::string> bound_paths;  // argument pointers bound from expressions
  bool expects_output = false;           // the operation declares outputs
};

struct BindingCheck {
  // Codes: uws.invalid (binding shape, impossible output pointers), uws.unsupported
  // (request keys other than body), manifest.*, catalog.*, review.*,
  // binding.output_schema_required, input.schema_violation. Pointers are into the UWS
  // document; details.manifestPointer locates manifest-side problems.
  std::vector<Error> errors;
  std::map<std::string, McpOperation> operations;  // by operationId, valid bindings only
};

bool IsMcpOperation(const json::Value& operation);

// Resolves every binding through manifest::ResolveBinding; `manifests` is the run's cache
// (the content-trust resolver and the gate reuse it), else one for this check alone.
BindingCheck CheckBindings(const Document& document, const manifest::Policy& policy);
BindingCheck CheckBindings(const Document& document, const manifest::Policy& policy,
                           manifest::ManifestCache& manifests);

}  // namespace udon::uws
