// Operation contracts from the resolvers (one claim per operation, channels normalized)
// and the capability an operation's outputs carry.
#include "trust/internal/analysis.h"

#include "json/pointer.h"

namespace udon::trust::internal {

void Analyzer::ResolveOperations(const std::vector<const Resolver*>& resolvers) {
  if (options_.v192) ScopeTriggers();
  for (const auto& [id, info] : operations_) {
    std::vector<OperationContract> claims;
    for (const Resolver* resolver : resolvers) {
      Resolution resolution = resolver->ResolveOperation(document_, info.index, *info.object);
      if (resolution.error.has_value()) {
        AddFinding(kResolverFailure, info.path);
        continue;
      }
      if (resolution.owned) claims.push_back(std::move(resolution.contract));
    }
    Resolved& resolved = resolution_[id];
    if (claims.size() > 1) {
      AddFinding(kResolverConflict, info.path);
    } else if (claims.size() == 1) {
      if (options_.v192 && !ClaimIsValid(claims.front(), *info.object)) {
        AddFinding(kResolverFailure, info.path);
      } else {
        resolved = {Normalize(std::move(claims.front())), true};
      }
    }
  }
}

OperationContract Analyzer::Normalize(OperationContract contract) {
  for (auto& [name, output] : contract.outputs) {
    if (!ParseCapability(output.capability)) output.capability = "unknown";
  }
  if (!ParseProvenance(contract.default_trust)) contract.default_trust = "unknown";
  for (auto& channel : contract.inputs) {
    if (channel.kind != "data" && channel.kind != "instruction" && channel.kind != "authority") {
      channel.kind = "data";
    }
  }
  return contract;
}

bool Analyzer::ClaimIsValid(const OperationContract& contract, const json::Value& operation) {
  if (!contract.default_trust.empty() && !ParseProvenance(contract.default_trust)) return false;
  const json::Value& declared = Entries(&operation, "outputs");
  for (const auto& [name, output] : contract.outputs) {
    if (!declared.contains(name)) return false;
    if (!output.capability.empty() && !ParseCapability(output.capability)) return false;
  }
  for (const auto& channel : contract.inputs) {
    if (channel.kind != "data" && channel.kind != "instruction" && channel.kind != "authority") return false;
    auto pointer = json::Pointer::Parse(ChannelPointer(channel.path));
    if (!pointer.ok() || pointer->Resolve(operation) == nullptr) return false;
    for (const auto& reference : channel.references) {
      if (!json::Pointer::Parse(reference.path).ok()) return false;
    }
  }
  return true;
}

Provenance Analyzer::OutputTrust(const json::Value& operation, const std::string& output, const Resolved& resolution) const {
  const json::Value* trust = Member(&root_, "contentTrust");
  if (trust != nullptr) {
    const json::Value* declaration = Member(Member(trust, "operations"), StringMember(&operation, "operationId"));
    if (declaration != nullptr) {
      if (!output.empty()) {
        if (const json::Value* level = Member(Member(declaration, "outputs"), output)) return LevelOf(*level);
      }
      if (const json::Value* level = Member(declaration, "default")) return LevelOf(*level);
    }
    const std::string source = StringMember(&operation, "sourceDescription");
    if (!source.empty()) {
      if (const json::Value* level = Member(Member(trust, "sourceDescriptions"), source)) return LevelOf(*level);
    }
  }
  if (resolution.resolved) {
    if (auto level = ParseProvenance(resolution.contract.default_trust)) return *level;
  }
  return Provenance::kUnknown;
}

}  // namespace udon::trust::internal
