#include "uws/check.h"

namespace udon::uws {

CheckedDocument CheckParsedDocument(Document document, const manifest::Policy& policy) {
  manifest::ManifestCache manifests;
  return CheckParsedDocument(std::move(document), policy, manifests);
}

CheckedDocument CheckParsedDocument(Document document, const manifest::Policy& policy,
                                    manifest::ManifestCache& manifests) {
  CheckedDocument checked;
  std::vector<Error> errors = Validate(document);
  if (!errors.empty()) {
    checked.error = InvalidDocument(errors);
    checked.document = std::move(document);
    return checked;
  }
  checked.bindings = CheckBindings(document, policy, manifests);
  checked.document = std::move(document);
  const auto& binding_errors = checked.bindings.errors;
  if (binding_errors.empty()) return checked;
  // Document-level problems (binding shape, unsupported request keys) outrank the rest.
  const Error* lead = &binding_errors.front();
  for (const auto& error : binding_errors) {
    if (error.code == "uws.invalid" || error.code == "uws.unsupported") {
      lead = &error;
      break;
    }
  }
  Error summary = MakeError(lead->code, lead->message, lead->pointer);
  summary.details = lead->details;
  summary.details["errors"] = ErrorsToJson(binding_errors);
  checked.error = std::move(summary);
  return checked;
}

CheckedDocument CheckDocument(const std::string& path, const manifest::Policy& policy) {
  manifest::ManifestCache manifests;
  return CheckDocument(path, policy, manifests);
}

CheckedDocument CheckDocument(const std::string& path, const manifest::Policy& policy,
                              manifest::ManifestCache& manifests) {
  auto document = LoadDocument(path);
  if (!document.ok()) {
    CheckedDocument checked;
    checked.error = document.error().code == "uws.invalid" ? InvalidDocument({document.error()}) : document.error();
    return checked;
  }
  return CheckParsedDocument(std::move(document).value(), policy, manifests);
}

}  // namespace udon::uws
