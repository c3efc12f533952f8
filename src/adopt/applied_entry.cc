#include "adopt/applied_entry.h"

#include <utility>

#include "adopt/jsonc.h"
#include "json/canonical.h"

namespace udon::adopt {

Result<std::string> AppliedEntryDigest(const json::Value& entry) {
  json::Value masked = entry;
  if (masked.is_object() && masked.contains("env") && masked["env"].is_object()) {
    for (json::Value& value : masked["env"]) value = nullptr;
  }
  return json::CanonicalSha256(masked);
}

Result<json::Value> EntryAt(const json::Value& document, const std::vector<std::string>& path) {
  const json::Value* value = &document;
  for (const std::string& name : path) {
    if (!value->is_object() || !value->contains(name)) {
      return MakeError("adopt.entry_missing", "the entry is not in the host file any more");
    }
    value = &(*value)[name];
  }
  return *value;
}

Status RecordAppliedEntries(Adoption& adoption, const std::string& file, std::string_view rewritten) {
  UDON_ASSIGN_OR_RETURN(json::Value document, ParseJsonc(rewritten));
  for (const AdoptedEntry& entry : adoption.entries) {
    if (entry.file != file) continue;
    UDON_ASSIGN_OR_RETURN(json::Value written, EntryAt(document, entry.path));
    UDON_ASSIGN_OR_RETURN(adoption.applied_entries[entry.server], AppliedEntryDigest(written));
  }
  return OkStatus();
}

std::optional<Error> ChangedSinceApply(const Adoption& adoption, const AdoptedEntry& adopted,
                                       const json::Value& current) {
  auto recorded = adoption.applied_entries.find(adopted.server);
  auto digest = AppliedEntryDigest(current);
  if (recorded != adoption.applied_entries.end() && digest.ok() && *digest == recorded->second) return std::nullopt;
  Error error = MakeError("adopt.entry_changed",
                          recorded == adoption.applied_entries.end()
                              ? "the record holds no digest of the entry adopt --apply wrote (undo, then apply again)"
                              : "the host entry is not the one adopt --apply wrote: it was changed since");
  error.details["server"] = adopted.server;
  return error;
}

}  // namespace udon::adopt
