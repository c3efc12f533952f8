// The document walk: operations, workflows, steps, their positions and dependencies, and
// the trigger scopes, collected once before the passes.
#include "trust/internal/analysis.h"

namespace udon::trust::internal {

void Analyzer::Collect() {
  const json::Value& operations = Items(&root_, "operations");
  for (std::size_t i = 0; i < operations.size(); ++i) {
    const std::string id = StringMember(&operations[i], "operationId");
    operations_[id] = {&operations[i], Indexed("operations", i), i};
  }
  const json::Value& workflows = Items(&root_, "workflows");
  for (std::size_t i = 0; i < workflows.size(); ++i) {
    const json::Value& workflow = workflows[i];
    const std::string id = StringMember(&workflow, "workflowId");
    const std::string path = Indexed("workflows", i);
    workflows_[id] = {&workflow, path};
    std::set<std::string> contexts;
    if (!options_.v192 && (Member(&workflow, "when") || Member(&workflow, "forEach"))) {
      contexts.insert(id + ":conditional");
    }
    const std::string type = StringMember(&workflow, "type");
    if (type == "loop") contexts.insert(id + ":loop");
    CollectSteps(id, Items(&workflow, "steps"), path + ".steps", id + ":steps", type != "parallel", {}, contexts);
    CollectCases(id, Items(&workflow, "cases"), path + ".cases", id + ":cases", {}, contexts);
    std::set<std::string> default_contexts = contexts;
    default_contexts.insert(id + ":default");
    CollectSteps(id, Items(&workflow, "default"), path + ".default", id + ":default", true, {}, default_contexts);
  }
  for (const auto& [name, value] : Entries(Member(&root_, "components"), "variables").items()) {
    variables_[name] = Literal(value, Key("components.variables", name));
  }
  // The top-level value wins over components.variables.
  for (const auto& [name, value] : Entries(&root_, "variables").items()) {
    variables_[name] = Literal(value, Key("variables", name));
  }
  const json::Value* trust = Member(&root_, "contentTrust");
  for (const auto& [id, info] : workflows_) {
    StateMap& inputs = workflow_inputs_[id];
    for (const auto& [name, schema] : Entries(Member(info.first, "inputs"), "properties").items()) {
      inputs[name] = {WorkflowInputTrust(trust, id, name), CapabilityOfParamSchema(&schema),
                      Key(info.second + ".inputs.properties", name)};
    }
  }
  document_trigger_ = TriggerState(nullptr);
}

void Analyzer::CollectSteps(const std::string& workflow, const json::Value& steps, const std::string& path,
                  const std::string& container, bool sequential, const std::vector<Position>& positions,
                  const std::set<std::string>& contexts) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json::Value& step = steps[i];
    const std::string id = StringMember(&step, "stepId");
    const std::string step_path = Indexed(path, i);
    std::vector<Position> step_positions = positions;
    step_positions.push_back({container, i, sequential});
    std::set<std::string> step_contexts = contexts;
    if (Member(&step, "when") || Member(&step, "forEach")) step_contexts.insert(id + ":conditional");
    steps_[id] = {&step, step_path};
    const std::string operation = StringMember(&step, "operationRef");
    if (!operation.empty()) referenced_operations_.insert(operation);
    StepMeta meta{workflow, step_positions, step_contexts, {}, StringMember(&step, "type")};
    for (const auto& dependency : Items(&step, "dependsOn")) {
      if (dependency.is_string()) meta.depends_on.push_back(dependency.get<std::string>());
    }
    step_meta_[id] = std::move(meta);
    const std::string group = StringMember(&step, "parallelGroup");
    if (!group.empty()) parallel_groups_[group].push_back(id);

    const std::string type = StringMember(&step, "type");
    std::set<std::string> child_contexts = step_contexts;
    if (type == "switch") {
      CollectCases(workflow, Items(&step, "cases"), step_path + ".cases", id + ":cases", step_positions,
                   child_contexts);
      std::set<std::string> default_contexts = child_contexts;
      default_contexts.insert(id + ":default");
      CollectSteps(workflow, Items(&step, "default"), step_path + ".default", id + ":default", true,
                   step_positions, default_contexts);
    } else if (type == "loop") {
      child_contexts.insert(id + ":loop");
      CollectSteps(workflow, Items(&step, "steps"), step_path + ".steps", id + ":steps", true, step_positions,
                   child_contexts);
    } else {
      CollectSteps(workflow, Items(&step, "steps"), step_path + ".steps", id + ":steps", type != "parallel",
                   step_positions, child_contexts);
      CollectCases(workflow, Items(&step, "cases"), step_path + ".cases", id + ":cases", step_positions,
                   child_contexts);
      CollectSteps(workflow, Items(&step, "default"), step_path + ".default", id + ":default", true,
                   step_positions, child_contexts);
    }
  }
}

void Analyzer::CollectCases(const std::string& workflow, const json::Value& cases, const std::string& path,
                  const std::string& container, const std::vector<Position>& positions,
                  const std::set<std::string>& contexts) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string case_container = container + ":" + std::to_string(i);
    std::set<std::string> case_contexts = contexts;
    case_contexts.insert(case_container);
    CollectSteps(workflow, Items(&cases[i], "steps"), Indexed(path, i) + ".steps", case_container, true,
                 positions, case_contexts);
  }
}

Provenance Analyzer::WorkflowInputTrust(const json::Value* trust, const std::string& workflow,
                                     const std::string& input) {
  const json::Value* declaration = Member(Member(trust, "workflows"), workflow);
  if (declaration != nullptr) {
    if (const json::Value* level = Member(Member(declaration, "inputs"), input)) return LevelOf(*level);
    if (const json::Value* level = Member(declaration, "default")) return LevelOf(*level);
  }
  return Provenance::kUnknown;
}

State Analyzer::TriggerState(const std::set<std::string>* reaches) const {
  State state{Provenance::kUntrusted, Capability::kUnknown, "$trigger"};
  const json::Value* declared = Member(Member(&root_, "contentTrust"), "triggers");
  bool first = true;
  for (const auto& trigger : Items(&root_, "triggers")) {
    const std::string id = StringMember(&trigger, "triggerId");
    if (reaches != nullptr && !reaches->contains(id)) continue;
    const json::Value* level = Member(declared, id);
    State candidate{level ? LevelOf(*level) : Provenance::kUntrusted, Capability::kUnknown, "$trigger"};
    state = first ? candidate : Join(state, candidate);
    first = false;
  }
  return state;
}

void Analyzer::ScopeTriggers() {
  std::map<std::string, std::set<std::string>> reaching;
  for (const auto& trigger : Items(&root_, "triggers")) {
    const std::string id = StringMember(&trigger, "triggerId");
    const json::Value& routes = Items(&trigger, "routes");
    std::vector<std::string> pending;
    if (routes.empty()) {
      for (const auto& [workflow, info] : workflows_) pending.push_back(workflow);
    }
    for (const auto& route : routes) {
      for (const auto& target : Items(&route, "to")) {
        if (!target.is_string()) continue;
        const std::string name = target.get<std::string>();
        if (workflows_.contains(name)) pending.push_back(name);
        if (auto step = step_meta_.find(name); step != step_meta_.end()) pending.push_back(step->second.workflow);
      }
    }
    while (!pending.empty()) {
      const std::string workflow = pending.back();
      pending.pop_back();
      if (!reaching[workflow].insert(id).second) continue;
      for (const auto& [step, meta] : step_meta_) {
        if (meta.workflow != workflow) continue;
        const std::string callee = StringMember(steps_[step].first, "workflow");
        if (workflows_.contains(callee)) pending.push_back(callee);
      }
    }
  }
  for (const auto& [workflow, info] : workflows_) {
    workflow_trigger_[workflow] = TriggerState(&reaching[workflow]);
  }
}

}  // namespace udon::trust::internal
