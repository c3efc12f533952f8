// What `udon-mcp validate` checks, in one call shared by validate and run: load, the
// version gate, structural and semantic validation, then the static MCP binding checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "manifest/policy.h"
#include "uws/binding.h"
#include "uws/document.h"

namespace udon::uws {

struct CheckedDocument {
  std::optional<Document> document;  // set once it parsed and passed the version gate
  BindingCheck bindings;
  // The summary failure: uws.invalid for document errors (details.errors lists them all),
  // else the first binding error's code with details.errors listing every binding error.
  std::optional<Error> error;

  bool ok() const { return !error.has_value(); }
};

// `manifests`: the run's manifest cache, shared with the content-trust resolver and the
// gate so a run reads each manifest once; without it, one for this check alone.
CheckedDocument CheckDocument(const std::string& path, const manifest::Policy& policy);
CheckedDocument CheckDocument(const std::string& path, const manifest::Policy& policy,
                              manifest::ManifestCache& manifests);
CheckedDocument CheckParsedDocument(Document document, const manifest::Policy& policy);
CheckedDocument CheckParsedDocument(Document document, const manifest::Policy& policy,
                                    manifest::ManifestCache& manifests);

}  // namespace udon::uws
