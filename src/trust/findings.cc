// Dominance (does a referenced step always run first?), and the edges and findings a
// reporting pass records.
#include "trust/internal/analysis.h"

namespace udon::trust::internal {

bool Analyzer::DominatesWorkflowExit(const std::string& source, const Env& env) const {
  if (!env.at_workflow_exit || env.workflow.empty()) return false;
  auto it = step_meta_.find(source);
  return it != step_meta_.end() && it->second.workflow == env.workflow && it->second.contexts.empty();
}

bool Analyzer::Dominates(const std::string& source, const std::string& target) const {
  if (source == target) return false;
  auto source_meta = step_meta_.find(source);
  auto target_meta = step_meta_.find(target);
  if (source_meta == step_meta_.end() || target_meta == step_meta_.end() ||
      source_meta->second.workflow != target_meta->second.workflow) {
    return false;
  }
  const StepMeta& from = source_meta->second;
  const StepMeta& to = target_meta->second;
  if (options_.v192 && IsAncestor(source, target) &&
      (from.type == "sequence" || from.type == "parallel" || from.type == "await")) {
    return true;
  }
  for (const auto& context : from.contexts) {
    if (!to.contexts.contains(context)) return false;
  }
  std::set<std::string> seen;
  if (DependsOn(target, source, seen)) return true;
  const std::size_t shared = std::min(from.positions.size(), to.positions.size());
  for (std::size_t i = 0; i < shared; ++i) {
    const Position& left = from.positions[i];
    const Position& right = to.positions[i];
    if (left.container != right.container) return false;
    if (left.index != right.index) return left.sequential && right.sequential && left.index < right.index;
  }
  return false;
}

bool Analyzer::DependsOn(const std::string& target, const std::string& source, std::set<std::string>& seen) const {
  if (!seen.insert(target).second) return false;
  auto it = step_meta_.find(target);
  if (it == step_meta_.end()) return false;
  for (const auto& dependency : it->second.depends_on) {
    if (DependencyCovers(dependency, source, seen)) return true;
  }
  return false;
}

bool Analyzer::DependencyCovers(const std::string& dependency, const std::string& source, std::set<std::string>& seen) const {
  if (dependency == source || IsAncestor(dependency, source)) return true;
  if (auto group = parallel_groups_.find(dependency); group != parallel_groups_.end()) {
    for (const auto& member : group->second) {
      if (member == source || IsAncestor(member, source) || DependsOn(member, source, seen)) return true;
    }
  }
  return DependsOn(dependency, source, seen);
}

bool Analyzer::IsAncestor(const std::string& ancestor, const std::string& descendant) const {
  auto a = step_meta_.find(ancestor);
  auto d = step_meta_.find(descendant);
  if (a == step_meta_.end() || d == step_meta_.end() || a->second.workflow != d->second.workflow ||
      a->second.positions.size() >= d->second.positions.size()) {
    return false;
  }
  return std::equal(a->second.positions.begin(), a->second.positions.end(), d->second.positions.begin());
}

void Analyzer::SetNested(std::map<std::string, StateMap>& target, const std::string& outer, const std::string& inner,
               const State& state) {
  StateMap& map = target[outer];
  auto it = map.find(inner);
  if (it == map.end()) {
    map[inner] = state;
    changed_ = true;
    return;
  }
  State joined = Join(it->second, state);
  joined.from = it->second.from;
  if (!(joined == it->second)) {
    it->second = joined;
    changed_ = true;
  }
}

void Analyzer::AddEdge(const State& state, const std::string& to) {
  if (!emit_ || !state.set()) return;
  edges_.insert({state.from, to, ProvenanceName(state.provenance), CapabilityName(state.capability)});
}

void Analyzer::AddFinding(const char* code, const std::string& path) {
  const std::string_view name = code;
  if (!emit_ && name != kResolverFailure && name != kResolverConflict) return;
  const bool high = name == kUntrustedInstruction || name == kUntrustedAuthority;
  findings_.try_emplace({path, code}, Finding{code, high ? "high" : "warning", path, FindingMessage(code)});
}

}  // namespace udon::trust::internal
