// Private to the content-trust analyzer's sources: the provenance and capability lattices
// (UWS 1.9.1 content trust) and the state that flows through an analysis.
#ifndef UDON_TRUST_INTERNAL_LATTICE_H_
#define UDON_TRUST_INTERNAL_LATTICE_H_

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "json/json.h"

namespace udon::trust::internal {

// Declared in join order: the join of two provenances is the larger one.
enum class Provenance { kTrusted, kUnknown, kUntrusted };
enum class Capability { kFreeText, kConstrainedScalar, kComposite, kUnknown };

const char* ProvenanceName(Provenance provenance);
const char* CapabilityName(Capability capability);
std::optional<Provenance> ParseProvenance(std::string_view text);
std::optional<Capability> ParseCapability(std::string_view text);

// Invalid labels count as unknown.
Provenance LevelOf(const json::Value& label);

inline Provenance Join(Provenance left, Provenance right) { return std::max(left, right); }
inline Capability Join(Capability left, Capability right) { return left == right ? left : Capability::kUnknown; }

// What flows out of an expression or value; `from` names the producer. An empty `from`
// is "no state yet", the identity of the join.
struct State {
  Provenance provenance = Provenance::kTrusted;
  Capability capability = Capability::kUnknown;
  std::string from;
  bool set() const { return !from.empty(); }
  friend bool operator==(const State&, const State&) = default;
};

inline State Trusted(std::string from) { return {Provenance::kTrusted, Capability::kUnknown, std::move(from)}; }
inline State Unknown(std::string from) { return {Provenance::kUnknown, Capability::kUnknown, std::move(from)}; }

// Keeps the left producer.
State Join(State left, const State& right);

// A literal's state: trusted, with the capability its JSON type allows.
State Literal(const json::Value& value, std::string from);

// The capability a parameter schema's `type` grants.
Capability CapabilityOfParamSchema(const json::Value* schema);

using StateMap = std::map<std::string, State>;

}  // namespace udon::trust::internal

#endif  // UDON_TRUST_INTERNAL_LATTICE_H_
