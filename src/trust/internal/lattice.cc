// The provenance and capability lattices: names, parsing and joins.
#include "trust/internal/lattice.h"

namespace udon::trust::internal {

const char* ProvenanceName(Provenance provenance) {
  switch (provenance) {
    case Provenance::kTrusted: return "trusted";
    case Provenance::kUnknown: return "unknown";
    case Provenance::kUntrusted: return "untrusted";
  }
  return "unknown";
}

const char* CapabilityName(Capability capability) {
  switch (capability) {
    case Capability::kFreeText: return "free_text";
    case Capability::kConstrainedScalar: return "constrained_scalar";
    case Capability::kComposite: return "composite";
    case Capability::kUnknown: return "unknown";
  }
  return "unknown";
}

std::optional<Provenance> ParseProvenance(std::string_view text) {
  if (text == "trusted") return Provenance::kTrusted;
  if (text == "untrusted") return Provenance::kUntrusted;
  if (text == "unknown") return Provenance::kUnknown;
  return std::nullopt;
}

std::optional<Capability> ParseCapability(std::string_view text) {
  if (text == "free_text") return Capability::kFreeText;
  if (text == "constrained_scalar") return Capability::kConstrainedScalar;
  if (text == "composite") return Capability::kComposite;
  if (text == "unknown") return Capability::kUnknown;
  return std::nullopt;
}

// Invalid labels count as unknown.
Provenance LevelOf(const json::Value& label) {
  if (!label.is_string()) return Provenance::kUnknown;
  return ParseProvenance(label.get_ref<const std::string&>()).value_or(Provenance::kUnknown);
}

// Keeps the left producer.
State Join(State left, const State& right) {
  if (!left.set()) return right;
  if (!right.set()) return left;
  left.provenance = Join(left.provenance, right.provenance);
  left.capability = Join(left.capability, right.capability);
  return left;
}

State Literal(const json::Value& value, std::string from) {
  State state = Trusted(std::move(from));
  if (value.is_string()) {
    state.capability = Capability::kFreeText;
  } else if (value.is_null() || value.is_boolean() || value.is_number()) {
    state.capability = Capability::kConstrainedScalar;
  } else if (value.is_object() || value.is_array()) {
    state.capability = Capability::kComposite;
  }
  return state;
}

Capability CapabilityOfParamSchema(const json::Value* schema) {
  if (schema == nullptr || !schema->is_object()) return Capability::kUnknown;
  auto type = schema->find("type");
  if (type == schema->end() || !type->is_string()) return Capability::kUnknown;
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "string") return Capability::kFreeText;
  if (name == "boolean" || name == "integer" || name == "number" || name == "null") {
    return Capability::kConstrainedScalar;
  }
  if (name == "object" || name == "array") return Capability::kComposite;
  return Capability::kUnknown;
}

}  // namespace udon::trust::internal
