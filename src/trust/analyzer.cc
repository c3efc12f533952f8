#include "trust/analyzer.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "json/pointer.h"
#include "uws/expression.h"
#include "json/access.h"

namespace udon::trust {
namespace {

// ---- lattices -------------------------------------------------------------------------

// Declared in join order: the join of two provenances is the larger one.
enum class Provenance { kTrusted, kUnknown, kUntrusted };
enum class Capability { kFreeText, kConstrainedScalar, kComposite, kUnknown };

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

Provenance Join(Provenance left, Provenance right) { return std::max(left, right); }
Capability Join(Capability left, Capability right) { return left == right ? left : Capability::kUnknown; }

// What flows out of an expression or value; `from` names the producer. An empty `from`
// is "no state yet", the identity of the join.
struct State {
  Provenance provenance = Provenance::kTrusted;
  Capability capability = Capability::kUnknown;
  std::string from;
  bool set() const { return !from.empty(); }
  friend bool operator==(const State&, const State&) = default;
};

State Trusted(std::string from) { return {Provenance::kTrusted, Capability::kUnknown, std::move(from)}; }
State Unknown(std::string from) { return {Provenance::kUnknown, Capability::kUnknown, std::move(from)}; }

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

using StateMap = std::map<std::string, State>;

// ---- document access ------------------------------------------------------------------

using json::Member;
using json::StringMember;

// The members of an object or the items of an array member, empty otherwise.
const json::Value& Items(const json::Value* object, std::string_view key) {
  static const json::Value kEmpty = json::Value::array();
  const json::Value* value = Member(object, key);
  return value != nullptr && value->is_array() ? *value : kEmpty;
}

const json::Value& Entries(const json::Value* object, std::string_view key) {
  static const json::Value kEmpty = json::Value::object();
  const json::Value* value = Member(object, key);
  return value != nullptr && value->is_object() ? *value : kEmpty;
}

std::string Indexed(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

bool IsPlainKey(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool IsDecimal(std::string_view token) {
  return !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ---- the analyzer ---------------------------------------------------------------------

struct Position {
  std::string container;
  std::size_t index = 0;
  bool sequential = true;
  friend bool operator==(const Position&, const Position&) = default;
};

struct StepMeta {
  std::string workflow;
  std::vector<Position> positions;
  std::set<std::string> contexts;
  std::vector<std::string> depends_on;
  std::string type;
};

struct OperationInfo {
  const json::Value* object = nullptr;
  std::string path;
  std::size_t index = 0;
};

struct Resolved {
  OperationContract contract;
  bool resolved = false;
};

struct Env {
  std::string workflow;
  std::string current_step;
  StateMap inputs;
  StateMap outputs;
  State response;
  State item;
  bool at_workflow_exit = false;
};

// A parsed expression reference, reduced to what the analysis needs.
struct Ref {
  uws::Root root = uws::Root::kInputs;
  std::string step;
  std::string name;
};

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

class Analyzer {
 public:
  Analyzer(const uws::Document& document, const Options& options)
      : document_(document), root_(document.root), options_(options) {}

  Report Run(const std::vector<const Resolver*>& resolvers) {
    Collect();
    ResolveOperations(resolvers);
    // Propagation is monotonic; 1.9.1 caps the passes, 1.9.2 runs to the fixed point
    // (the lattices are finite, so it is reached; the cap only guards the loop).
    const std::size_t limit =
        options_.v192 ? kFixedPointGuard : 4 + 2 * steps_.size() + 2 * workflows_.size();
    for (std::size_t pass = 0; pass < limit; ++pass) {
      changed_ = false;
      RunPass();
      if (!changed_) break;
    }
    emit_ = true;
    RunPass();
    Report report;
    report.edges.assign(edges_.begin(), edges_.end());
    for (auto& [key, finding] : findings_) report.findings.push_back(finding);
    std::sort(report.edges.begin(), report.edges.end(), [](const Edge& a, const Edge& b) {
      return std::tie(a.to, a.from, a.provenance, a.capability) < std::tie(b.to, b.from, b.provenance, b.capability);
    });
    std::sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.path, a.code, a.severity) < std::tie(b.path, b.code, b.severity);
    });
    return report;
  }

 private:
  static constexpr std::size_t kFixedPointGuard = 100000;

  struct EdgeLess {
    bool operator()(const Edge& a, const Edge& b) const {
      return std::tie(a.to, a.from, a.provenance, a.capability) < std::tie(b.to, b.from, b.provenance, b.capability);
    }
  };

  // ---- paths ----

  // A member path segment: ".key", or (1.9.2) ["key"] for keys outside [A-Za-z0-9_-].
  std::string Key(const std::string& path, std::string_view key) const {
    if (!options_.v192 || IsPlainKey(key)) return path + "." + std::string(key);
    return path + "[" + json::Value(std::string(key)).dump() + "]";
  }

  // Appends the tokens of an RFC 6901 pointer: [n] for decimal tokens, else keys.
  std::string PointerSuffix(const std::string& path, std::string_view pointer) const {
    if (pointer.empty()) return path;
    auto parsed = json::Pointer::Parse(pointer);
    if (!parsed.ok()) return path;
    std::string out = path;
    for (const std::string& token : parsed->tokens()) {
      out = IsDecimal(token) ? out + "[" + token + "]" : Key(out, token);
    }
    return out;
  }

  // The channel pointer as the operation-object pointer it addresses.
  static std::string ChannelPointer(const std::string& pointer) {
    if (pointer.empty() || pointer == "/") return "/request";
    if (pointer.rfind("/request", 0) == 0 || pointer.rfind("/x-", 0) == 0) return pointer;
    return "/request" + pointer;
  }

  // ---- collection ----

  void Collect() {
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

  void CollectSteps(const std::string& workflow, const json::Value& steps, const std::string& path,
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

  void CollectCases(const std::string& workflow, const json::Value& cases, const std::string& path,
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

  static Provenance WorkflowInputTrust(const json::Value* trust, const std::string& workflow,
                                       const std::string& input) {
    const json::Value* declaration = Member(Member(trust, "workflows"), workflow);
    if (declaration != nullptr) {
      if (const json::Value* level = Member(Member(declaration, "inputs"), input)) return LevelOf(*level);
      if (const json::Value* level = Member(declaration, "default")) return LevelOf(*level);
    }
    return Provenance::kUnknown;
  }

  // $trigger: with no triggers untrusted, else the join of each trigger's declared level
  // (default untrusted). With `reaches`, only the triggers it accepts count (1.9.2 route
  // scoping); when none does, untrusted.
  State TriggerState(const std::set<std::string>* reaches) const {
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

  // 1.9.2: the triggers that reach each workflow. A trigger without routes reaches every
  // workflow; a routed one reaches the workflows its routes name (directly, or through a
  // top-level step they name) and every workflow those call.
  void ScopeTriggers() {
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

  // ---- resolution ----

  void ResolveOperations(const std::vector<const Resolver*>& resolvers) {
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

  // 1.9.1: invalid capabilities and trust become unknown, invalid kinds become data.
  static OperationContract Normalize(OperationContract contract) {
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

  // 1.9.2 strict claims: every kind, pointer, output name, capability and trust level must
  // be valid (an empty capability or trust means unknown).
  static bool ClaimIsValid(const OperationContract& contract, const json::Value& operation) {
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

  // ---- passes ----

  void RunPass() {
    for (const auto& [id, info] : operations_) {
      // Unreferenced operations are analyzed once, with empty inputs; calls from steps are
      // analyzed with their bound inputs.
      if (!referenced_operations_.contains(id)) AnalyzeOperation(id, Env{}, "");
    }
    for (const auto& [id, info] : workflows_) AnalyzeWorkflow(id);
    const json::Value& results = Items(&root_, "results");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const json::Value* value = Member(&results[i], "value");
      if (value == nullptr || !value->is_string() || value->get_ref<const std::string&>().empty()) continue;
      std::string workflow = StringMember(&results[i], "from");
      workflow = workflow.substr(0, workflow.find('.'));
      Env env;
      env.workflow = workflow;
      env.inputs = workflow_inputs_[workflow];
      env.at_workflow_exit = true;
      EvalString(value->get<std::string>(), Indexed("results", i) + ".value", env);
    }
  }

  void AnalyzeWorkflow(const std::string& id) {
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

  void AnalyzeSteps(const json::Value& steps, const std::string& path, const Env& env) {
    for (std::size_t i = 0; i < steps.size(); ++i) AnalyzeStep(steps[i], Indexed(path, i), env);
  }

  void AnalyzeCases(const json::Value& cases, const std::string& path, const Env& env) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string at = Indexed(path, i);
      Control(Member(&cases[i], "when"), at + ".when", env);
      ScanValue(Member(&cases[i], "body"), at + ".body", env);
      AnalyzeSteps(Items(&cases[i], "steps"), at + ".steps", env);
    }
  }

  void AnalyzeStep(const json::Value& step, const std::string& path, const Env& parent) {
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

  std::pair<StateMap, State> AnalyzeOperation(const std::string& id, Env env, const std::string& caller) {
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

  State AnalyzeChannel(const InputChannel& channel, const json::Value& operation, const std::string& path,
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

  static const json::Value* ResolvePointer(const json::Value& operation, const std::string& pointer) {
    auto parsed = json::Pointer::Parse(pointer);
    return parsed.ok() ? parsed->Resolve(operation) : nullptr;
  }

  // 1.9.2: the request outside every channel is scanned as data (with no channels at all,
  // the whole request).
  State ScanOutsideChannels(const OperationContract& contract, const json::Value& operation, const std::string& path,
                            const Env& env) {
    std::set<std::string> channels;
    for (const auto& channel : contract.inputs) channels.insert(ChannelPointer(channel.path));
    const json::Value* request = Member(&operation, "request");
    if (request == nullptr) return Trusted(path + ".request");
    return ScanExcept(*request, "/request", path + ".request", channels, env);
  }

  State ScanExcept(const json::Value& value, const std::string& pointer, const std::string& path,
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

  Provenance OutputTrust(const json::Value& operation, const std::string& output, const Resolved& resolution) const {
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

  void Criterion(const json::Value& criterion, const std::string& path, const Env& env) {
    Control(Member(&criterion, "condition"), path + ".condition", env);
    Control(Member(&criterion, "context"), path + ".context", env);
  }

  // A control field: untrusted influences control flow, unknown cannot be judged.
  State Control(const json::Value* field, const std::string& path, const Env& env) {
    if (field == nullptr || !field->is_string() || field->get_ref<const std::string&>().empty()) return State{};
    State state = EvalString(field->get<std::string>(), path, env);
    if (state.provenance == Provenance::kUntrusted) AddFinding(kUntrustedControl, path);
    if (state.provenance == Provenance::kUnknown) AddFinding(kUnknownProvenance, path);
    return state;
  }

  // ---- values and expressions ----

  State ScanValue(const json::Value* value, const std::string& path, const Env& env) {
    if (value == nullptr || value->is_null()) return Trusted(path);
    return EvalValue(*value, path, env);
  }

  State EvalValue(const json::Value& value, const std::string& path, const Env& env) {
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

  // outputs values are always expressions; a non-string is outside the grammar.
  State EvalExpressionValue(const json::Value& value, const std::string& path, const Env& env) {
    if (value.is_string()) return EvalString(value.get<std::string>(), path, env);
    return EvalValue(value, path, env);
  }

  State EvalString(const std::string& text, const std::string& path, const Env& env) {
    auto parsed = uws::ParseExpression(text);
    if (parsed.ok()) return EvalParsed(*parsed, path, env);
    if (text.find('$') != std::string::npos) {
      AddFinding(kOpaqueExpression, path);
      return Unknown(path);
    }
    return {Provenance::kTrusted, Capability::kFreeText, path};
  }

  State EvalParsed(const uws::Expression& expression, const std::string& path, const Env& env) {
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

  std::optional<State> ResolveRef(const Ref& ref, const Env& env, const std::string& path) {
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

  std::string WorkflowPath(const std::string& workflow) {
    auto it = workflows_.find(workflow);
    return it == workflows_.end() ? std::string() : it->second.second;
  }

  // ---- dominance ----

  bool DominatesWorkflowExit(const std::string& source, const Env& env) const {
    if (!env.at_workflow_exit || env.workflow.empty()) return false;
    auto it = step_meta_.find(source);
    return it != step_meta_.end() && it->second.workflow == env.workflow && it->second.contexts.empty();
  }

  bool Dominates(const std::string& source, const std::string& target) const {
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

  bool DependsOn(const std::string& target, const std::string& source, std::set<std::string>& seen) const {
    if (!seen.insert(target).second) return false;
    auto it = step_meta_.find(target);
    if (it == step_meta_.end()) return false;
    for (const auto& dependency : it->second.depends_on) {
      if (DependencyCovers(dependency, source, seen)) return true;
    }
    return false;
  }

  bool DependencyCovers(const std::string& dependency, const std::string& source, std::set<std::string>& seen) const {
    if (dependency == source || IsAncestor(dependency, source)) return true;
    if (auto group = parallel_groups_.find(dependency); group != parallel_groups_.end()) {
      for (const auto& member : group->second) {
        if (member == source || IsAncestor(member, source) || DependsOn(member, source, seen)) return true;
      }
    }
    return DependsOn(dependency, source, seen);
  }

  bool IsAncestor(const std::string& ancestor, const std::string& descendant) const {
    auto a = step_meta_.find(ancestor);
    auto d = step_meta_.find(descendant);
    if (a == step_meta_.end() || d == step_meta_.end() || a->second.workflow != d->second.workflow ||
        a->second.positions.size() >= d->second.positions.size()) {
      return false;
    }
    return std::equal(a->second.positions.begin(), a->second.positions.end(), d->second.positions.begin());
  }

  // ---- results ----

  void SetNested(std::map<std::string, StateMap>& target, const std::string& outer, const std::string& inner,
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

  void AddEdge(const State& state, const std::string& to) {
    if (!emit_ || !state.set()) return;
    edges_.insert({state.from, to, ProvenanceName(state.provenance), CapabilityName(state.capability)});
  }

  // Resolver findings are recorded at resolution; all others only in the reporting pass.
  void AddFinding(const char* code, const std::string& path) {
    const std::string_view name = code;
    if (!emit_ && name != kResolverFailure && name != kResolverConflict) return;
    const bool high = name == kUntrustedInstruction || name == kUntrustedAuthority;
    findings_.try_emplace({path, code}, Finding{code, high ? "high" : "warning", path, FindingMessage(code)});
  }

  const uws::Document& document_;
  const json::Value& root_;
  Options options_;

  std::map<std::string, OperationInfo> operations_;
  std::map<std::string, std::pair<const json::Value*, std::string>> workflows_;  // object, path
  std::map<std::string, std::pair<const json::Value*, std::string>> steps_;
  std::map<std::string, StepMeta> step_meta_;
  std::map<std::string, std::vector<std::string>> parallel_groups_;
  std::map<std::string, Resolved> resolution_;
  std::set<std::string> referenced_operations_;

  StateMap variables_;
  std::map<std::string, StateMap> workflow_inputs_;
  std::map<std::string, StateMap> workflow_outputs_;
  std::map<std::string, StateMap> step_outputs_;
  State document_trigger_;
  std::map<std::string, State> workflow_trigger_;

  bool changed_ = false;
  bool emit_ = false;
  std::set<Edge, EdgeLess> edges_;
  std::map<std::pair<std::string, std::string>, Finding> findings_;
};

}  // namespace

const char* FindingMessage(const std::string& code) {
  static const std::map<std::string, const char*, std::less<>> kMessages = {
      {kUntrustedInstruction, "untrusted free-form content can reach an instruction channel"},
      {kUntrustedAuthority, "untrusted content can reach an authority-bearing channel"},
      {kUntrustedControl, "untrusted content can influence control flow"},
      {kUnknownProvenance, "content provenance cannot be determined statically"},
      {kOpaqueExpression,
       "expression syntax is outside the UWS core grammar and has no resolver-supplied references"},
      {kUnresolvedReference, "expression reference cannot be resolved statically"},
      {kNonDominatingReference, "referenced step does not dominate this use"},
      {kResolverFailure, "operation resolver failed while describing the operation"},
      {kResolverConflict, "more than one resolver claims the operation"},
  };
  auto it = kMessages.find(code);
  return it == kMessages.end() ? "" : it->second;
}

json::Value Report::ToJson() const {
  json::Value out = json::Value::object();
  if (!edges.empty()) {
    json::Value list = json::Value::array();
    for (const Edge& edge : edges) {
      list.push_back({{"from", edge.from}, {"to", edge.to}, {"provenance", edge.provenance},
                      {"capability", edge.capability}});
    }
    out["edges"] = std::move(list);
  }
  if (!findings.empty()) {
    json::Value list = json::Value::array();
    for (const Finding& finding : findings) {
      list.push_back({{"code", finding.code}, {"severity", finding.severity}, {"path", finding.path},
                      {"message", finding.message}});
    }
    out["findings"] = std::move(list);
  }
  return out;
}

Result<Report> Analyze(const uws::Document& document, const std::vector<const Resolver*>& resolvers,
                       const Options& options) {
  std::vector<Error> errors = uws::Validate(document);
  if (!errors.empty()) return uws::InvalidDocument(errors);
  return Analyzer(document, options).Run(resolvers);
}

Status CheckFindingsPolicy(const Report& report, manifest::FindingsBlock block) {
  if (block == manifest::FindingsBlock::kNone) return OkStatus();
  json::Value blocking = json::Value::array();
  for (const Finding& finding : report.findings) {
    if (block == manifest::FindingsBlock::kHigh && finding.severity != "high") continue;
    blocking.push_back({{"code", finding.code}, {"severity", finding.severity}, {"path", finding.path}});
  }
  if (blocking.empty()) return OkStatus();
  Error error =
      MakeError("content_trust.blocked", "content-trust findings block this run under policy blockOnFindings");
  error.details["blockOnFindings"] = block == manifest::FindingsBlock::kHigh ? "high" : "warning";
  error.details["findings"] = std::move(blocking);
  return error;
}

}  // namespace udon::trust
