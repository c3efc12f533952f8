// Propagation of provenance and capability through workflows, steps, operations,
// values and expressions, to a fixed point.
#include "trust/internal/analysis.h"

#include "json/pointer.h"

namespace udon::trust::internal {

Ref RefOf(const uws::Source& source) {
  Ref ref{source.root, source.step, source.name};
  if ((source.root == uws::Root::kInputs || source.root == uws::Root::kTrigger ||
       source.root == uws::Root::kItem) && !source.path.empty()) {
    ref.name = source.path.front();
  }
  return ref;
}

std::string Label(const Ref& ref) {
  switch (ref.root) {
    case uws::Root::kVariables: return "$variables." + ref.name;
    case uws::Root::kInputs: return ref.name.empty() ? "$inputs" : "$inputs." + ref.name;
    case uws::Root::kOutputs: return "$outputs." + ref.name;
    case uws::Root::kSteps: return "$steps." + ref.step + ".outputs." + ref.name;
    case uws::Root::kResponseStatusCode: return "$response.statusCode";
    case uws::Root::kResponseBody: return "$response.body";
    case uws::Root::kResponseHeader: return "$response.headers";
    case uws::Root::kTrigger: return "$trigger";
    case uws::Root::kItem: return "$item";
    case uws::Root::kIndex: return "$index";
  }
  return "$unknown";
}

void Analyzer::AnalyzeWorkflow(const std::string& id) {
  const auto& [workflow, path] = workflows_[id];
  Env env;
  env.workflow = id;
  env.inputs = workflow_inputs_[id];
  for (const char* field : {"when", "forEach", "wait", "items", "batchSize"}) {
    Control(Member(workflow, field), path + "." + field, env);
  }
  Control(Member(Member(workflow, "idempotency"), "key"), path + ".idempotency.key", env);
  AnalyzeSteps(Items(workflow, "steps"), path + ".steps", env);
  AnalyzeCases(Items(workflow, "cases"), path + ".cases", env);
  AnalyzeSteps(Items(workflow, "default"), path + ".default", env);
  env.at_workflow_exit = true;
  for (const auto& [name, expression] : Entries(workflow, "outputs").items()) {
    const std::string at = Key(path + ".outputs", name);
    State state = EvalExpressionValue(expression, at, env);
    state.from = at;
    SetNested(workflow_outputs_, id, name, state);
  }
}

void Analyzer::AnalyzeSteps(const json::Value& steps, const std::string& path, const Env& env) {
  for (std::size_t i = 0; i < steps.size(); ++i) AnalyzeStep(steps[i], Indexed(path, i), env);
}

void Analyzer::AnalyzeCases(const json::Value& cases, const std::string& path, const Env& env) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = Indexed(path, i);
    Control(Member(&cases[i], "when"), at + ".when", env);
    ScanValue(Member(&cases[i], "body"), at + ".body", env);
    AnalyzeSteps(Items(&cases[i], "steps"), at + ".steps", env);
  }
}

void Analyzer::AnalyzeStep(const json::Value& step, const std::string& path, const Env& parent) {
  Env env = parent;
  env.current_step = StringMember(&step, "stepId");
  Control(Member(&step, "when"), path + ".when", env);
  if (State item = Control(Member(&step, "forEach"), path + ".forEach", env); item.set()) env.item = item;
  Control(Member(&step, "wait"), path + ".wait", env);
  if (State item = Control(Member(&step, "items"), path + ".items", env); item.set()) env.item = item;
  Control(Member(&step, "batchSize"), path + ".batchSize", env);
  ScanValue(Member(&step, "body"), path + ".body", env);

  StateMap bound;
  for (const auto& [name, value] : Entries(&step, "inputs").items()) {
    bound[name] = EvalValue(value, Key(path + ".inputs", name), env);
  }

  StateMap callee_outputs;
  State response;
  const std::string operation = StringMember(&step, "operationRef");
  const std::string workflow = StringMember(&step, "workflow");
  if (!operation.empty()) {
    Env call = env;
    call.inputs = bound;
    call.outputs.clear();
    std::tie(callee_outputs, response) = AnalyzeOperation(operation, call, env.current_step);
  } else if (!workflow.empty()) {
    // Callers' states join into the callee's inputs: an entry declaration cannot
    // launder what a caller passes.
    for (const auto& [name, state] : bound) SetNested(workflow_inputs_, workflow, name, state);
    callee_outputs = workflow_outputs_[workflow];
  } else {
    AnalyzeSteps(Items(&step, "steps"), path + ".steps", env);
    AnalyzeCases(Items(&step, "cases"), path + ".cases", env);
    AnalyzeSteps(Items(&step, "default"), path + ".default", env);
  }

  Env output_env = env;
  output_env.inputs = bound;
  output_env.outputs = callee_outputs;
  output_env.response = response;
  for (const auto& [name, expression] : Entries(&step, "outputs").items()) {
    const std::string at = Key(path + ".outputs", name);
    State state = EvalExpressionValue(expression, at, output_env);
    state.from = at;
    SetNested(step_outputs_, env.current_step, name, state);
    if (options_.v192) output_env.outputs[name] = step_outputs_[env.current_step][name];
  }
}

std::pair<StateMap, State> Analyzer::AnalyzeOperation(const std::string& id, Env env, const std::string& caller) {
  auto found = operations_.find(id);
  if (found == operations_.end()) return {{}, Unknown("operations.unknown.response")};
  const json::Value* operation = found->second.object;
  const std::string& path = found->second.path;
  env.current_step = caller;
  for (const char* field : {"when", "forEach", "wait"}) Control(Member(operation, field), path + "." + field, env);

  const Resolved& resolution = resolution_[id];
  State input = Trusted(path + ".request");
  if (resolution.resolved) {
    for (const auto& channel : resolution.contract.inputs) {
      input = Join(input, AnalyzeChannel(channel, *operation, path, env));
    }
    if (options_.v192) input = Join(input, ScanOutsideChannels(resolution.contract, *operation, path, env));
  } else {
    // Without a resolver the request stays visible as data, never as a sink.
    input = ScanValue(Member(operation, "request"), path + ".request", env);
  }

  const OperationContract& contract = resolution.contract;
  State response{OutputTrust(*operation, "", resolution), Capability::kUnknown, path + ".response"};
  if (contract.inherits_input_provenance) response.provenance = Join(response.provenance, input.provenance);

  StateMap outputs;
  Env output_env = env;
  output_env.response = response;
  if (!options_.v192) output_env.outputs.clear();
  for (const auto& [name, expression] : Entries(operation, "outputs").items()) {
    const std::string at = Key(path + ".outputs", name);
    State state = EvalExpressionValue(expression, at, output_env);
    const Provenance declared = OutputTrust(*operation, name, resolution);
    // 1.9.1 replaces the expression's provenance; 1.9.2 joins, so aliases of untrusted
    // content cannot be upgraded by a declaration.
    state.provenance = options_.v192 ? Join(state.provenance, declared) : declared;
    bool inherits = contract.inherits_input_provenance;
    if (auto output = contract.outputs.find(name); output != contract.outputs.end()) {
      state.capability = ParseCapability(output->second.capability).value_or(Capability::kUnknown);
      if (output->second.inherits_input_provenance.has_value()) inherits = *output->second.inherits_input_provenance;
    }
    if (inherits) state.provenance = Join(state.provenance, input.provenance);
    state.from = at;
    outputs[name] = state;
    if (options_.v192) output_env.outputs[name] = state;
  }

  Env criteria_env = env;
  criteria_env.outputs = outputs;
  criteria_env.response = response;
  const json::Value& success = Items(operation, "successCriteria");
  for (std::size_t i = 0; i < success.size(); ++i) {
    Criterion(success[i], Indexed(path + ".successCriteria", i), criteria_env);
  }
  for (const char* actions : {"onFailure", "onSuccess"}) {
    const json::Value& list = Items(operation, actions);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json::Value& criteria = Items(&list[i], "criteria");
      for (std::size_t j = 0; j < criteria.size(); ++j) {
        Criterion(criteria[j], Indexed(Indexed(path + "." + actions, i) + ".criteria", j), criteria_env);
      }
    }
  }
  return {outputs, response};
}

State Analyzer::AnalyzeChannel(const InputChannel& channel, const json::Value& operation, const std::string& path,
                     const Env& env) {
  const std::string pointer = ChannelPointer(channel.path);
  const std::string channel_path = PointerSuffix(path, pointer);
  State state;
  if (!channel.references.empty()) {
    state = Trusted(channel_path);
    for (const auto& reference : channel.references) {
      const std::string target = PointerSuffix(channel_path, reference.path);
      auto parsed = uws::ParseExpression(reference.expression);
      if (!parsed.ok()) {
        AddFinding(kOpaqueExpression, target);
        state = Join(state, Unknown(target));
        continue;
      }
      state = Join(state, EvalParsed(*parsed, target, env));
    }
  } else if (const json::Value* value = ResolvePointer(operation, pointer)) {
    state = EvalValue(*value, channel_path, env);
  } else {
    AddFinding(kResolverFailure, path);
    state = Unknown(channel_path);
  }
  if (state.provenance == Provenance::kUnknown) {
    AddFinding(kUnknownProvenance, channel_path);
  } else if (state.provenance == Provenance::kUntrusted && channel.kind == "instruction" &&
             state.capability != Capability::kConstrainedScalar) {
    AddFinding(kUntrustedInstruction, channel_path);
  } else if (state.provenance == Provenance::kUntrusted && channel.kind == "authority") {
    AddFinding(kUntrustedAuthority, channel_path);
  }
  return state;
}

const json::Value* Analyzer::ResolvePointer(const json::Value& operation, const std::string& pointer) {
  auto parsed = json::Pointer::Parse(pointer);
  return parsed.ok() ? parsed->Resolve(operation) : nullptr;
}

State Analyzer::ScanOutsideChannels(const OperationContract& contract, const json::Value& operation, const std::string& path,
                          const Env& env) {
  std::set<std::string> channels;
  for (const auto& channel : contract.inputs) channels.insert(ChannelPointer(channel.path));
  const json::Value* request = Member(&operation, "request");
  if (request == nullptr) return Trusted(path + ".request");
  return ScanExcept(*request, "/request", path + ".request", channels, env);
}

State Analyzer::ScanExcept(const json::Value& value, const std::string& pointer, const std::string& path,
                 const std::set<std::string>& channels, const Env& env) {
  if (channels.contains(pointer)) return State{};
  if (value.is_object()) {
    State state = Trusted(path);
    for (const auto& [key, member] : value.items()) {
      const std::string member_pointer = pointer + "/" + json::Pointer::EscapeToken(key);
      state = Join(state, ScanExcept(member, member_pointer, Key(path, key), channels, env));
    }
    state.capability = Capability::kComposite;
    return state;
  }
  if (value.is_array()) {
    State state = Trusted(path);
    for (std::size_t i = 0; i < value.size(); ++i) {
      state = Join(state, ScanExcept(value[i], pointer + "/" + std::to_string(i), Indexed(path, i), channels, env));
    }
    state.capability = Capability::kComposite;
    return state;
  }
  return EvalValue(value, path, env);
}

void Analyzer::Criterion(const json::Value& criterion, const std::string& path, const Env& env) {
  Control(Member(&criterion, "condition"), path + ".condition", env);
  Control(Member(&criterion, "context"), path + ".context", env);
}

State Analyzer::Control(const json::Value* field, const std::string& path, const Env& env) {
  if (field == nullptr || !field->is_string() || field->get_ref<const std::string&>().empty()) return State{};
  State state = EvalString(field->get<std::string>(), path, env);
  if (state.provenance == Provenance::kUntrusted) AddFinding(kUntrustedControl, path);
  if (state.provenance == Provenance::kUnknown) AddFinding(kUnknownProvenance, path);
  return state;
}

State Analyzer::ScanValue(const json::Value* value, const std::string& path, const Env& env) {
  if (value == nullptr || value->is_null()) return Trusted(path);
  return EvalValue(*value, path, env);
}

State Analyzer::EvalValue(const json::Value& value, const std::string& path, const Env& env) {
  if (value.is_string()) return EvalString(value.get<std::string>(), path, env);
  if (value.is_object() || value.is_array()) {
    State state = Trusted(path);
    if (value.is_object()) {
      for (const auto& [key, member] : value.items()) state = Join(state, EvalValue(member, Key(path, key), env));
    } else {
      for (std::size_t i = 0; i < value.size(); ++i) state = Join(state, EvalValue(value[i], Indexed(path, i), env));
    }
    state.capability = Capability::kComposite;
    return state;
  }
  return Literal(value, path);
}

State Analyzer::EvalExpressionValue(const json::Value& value, const std::string& path, const Env& env) {
  if (value.is_string()) return EvalString(value.get<std::string>(), path, env);
  return EvalValue(value, path, env);
}

State Analyzer::EvalString(const std::string& text, const std::string& path, const Env& env) {
  auto parsed = uws::ParseExpression(text);
  if (parsed.ok()) return EvalParsed(*parsed, path, env);
  if (text.find('$') != std::string::npos) {
    AddFinding(kOpaqueExpression, path);
    return Unknown(path);
  }
  return {Provenance::kTrusted, Capability::kFreeText, path};
}

State Analyzer::EvalParsed(const uws::Expression& expression, const std::string& path, const Env& env) {
  State state;
  for (const uws::Source* source : expression.Sources()) {
    const Ref ref = RefOf(*source);
    std::optional<State> resolved = ResolveRef(ref, env, path);
    if (!resolved.has_value()) {
      AddFinding(kUnresolvedReference, path);
      resolved = Unknown(Label(ref));
    }
    state = Join(state, *resolved);
    AddEdge(*resolved, path);
  }
  if (!state.set()) state = Trusted(path);
  if (expression.op.has_value()) state.capability = Capability::kConstrainedScalar;
  return state;
}

std::optional<State> Analyzer::ResolveRef(const Ref& ref, const Env& env, const std::string& path) {
  switch (ref.root) {
    case uws::Root::kVariables: {
      auto it = variables_.find(ref.name);
      if (it == variables_.end()) return std::nullopt;
      return it->second;
    }
    case uws::Root::kTrigger: {
      if (options_.v192) {
        if (auto it = workflow_trigger_.find(env.workflow); it != workflow_trigger_.end()) return it->second;
      }
      return document_trigger_;
    }
    case uws::Root::kInputs: {
      if (ref.name.empty()) {
        if (env.inputs.empty()) return std::nullopt;
        State state = Trusted(WorkflowPath(env.workflow) + ".inputs");
        state.capability = Capability::kComposite;
        for (const auto& [name, input] : env.inputs) state = Join(state, input);
        state.capability = Capability::kComposite;
        return state;
      }
      auto it = env.inputs.find(ref.name);
      if (it == env.inputs.end()) return std::nullopt;
      return it->second;
    }
    case uws::Root::kOutputs: {
      auto it = env.outputs.find(ref.name);
      if (it == env.outputs.end()) return std::nullopt;
      return it->second;
    }
    case uws::Root::kSteps: {
      auto outputs = step_outputs_.find(ref.step);
      if (outputs == step_outputs_.end()) return std::nullopt;
      auto it = outputs->second.find(ref.name);
      if (it == outputs->second.end()) return std::nullopt;
      const bool dominated = env.current_step.empty() ? DominatesWorkflowExit(ref.step, env)
                                                      : Dominates(ref.step, env.current_step);
      if (!dominated) AddFinding(kNonDominatingReference, path);
      return it->second;
    }
    case uws::Root::kResponseStatusCode:
    case uws::Root::kResponseBody:
    case uws::Root::kResponseHeader: {
      if (!env.response.set()) return std::nullopt;
      State state = env.response;
      if (ref.root == uws::Root::kResponseStatusCode) state.capability = Capability::kConstrainedScalar;
      if (ref.root == uws::Root::kResponseHeader) state.capability = Capability::kFreeText;
      return state;
    }
    case uws::Root::kItem:
      if (!env.item.set()) return std::nullopt;
      return env.item;
    case uws::Root::kIndex:
      return State{Provenance::kTrusted, Capability::kConstrainedScalar, "$index"};
  }
  return std::nullopt;
}

std::string Analyzer::WorkflowPath(const std::string& workflow) {
  auto it = workflows_.find(workflow);
  return it == workflows_.end() ? std::string() : it->second.second;
}

}  // namespace udon::trust::internal
