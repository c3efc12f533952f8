// Private to the content-trust analyzer's sources: the analysis over one document
// (Analyzer) and the document access it uses. Its methods live by concern: analyzer.cc
// (the run and its passes), collect.cc (the document walk), capability.cc (operation
// contracts from the resolvers, output capability), provenance.cc (propagation through
// steps, values and expressions), findings.cc (dominance, edges and findings).
#ifndef UDON_TRUST_INTERNAL_ANALYSIS_H_
#define UDON_TRUST_INTERNAL_ANALYSIS_H_

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "json/access.h"
#include "json/json.h"
#include "trust/analyzer.h"
#include "trust/internal/lattice.h"
#include "uws/expression.h"

namespace udon::trust::internal {

// ---- document access ------------------------------------------------------------------

using json::Member;
using json::StringMember;

// The members of an object or the items of an array member, empty otherwise.
inline const json::Value& Items(const json::Value* object, std::string_view key) {
  static const json::Value kEmpty = json::Value::array();
  const json::Value* value = Member(object, key);
  return value != nullptr && value->is_array() ? *value : kEmpty;
}

inline const json::Value& Entries(const json::Value* object, std::string_view key) {
  static const json::Value kEmpty = json::Value::object();
  const json::Value* value = Member(object, key);
  return value != nullptr && value->is_object() ? *value : kEmpty;
}

inline std::string Indexed(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

inline bool IsPlainKey(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

inline bool IsDecimal(std::string_view token) {
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

Ref RefOf(const uws::Source& source);
std::string Label(const Ref& ref);

class Analyzer {
 public:
  Analyzer(const uws::Document& document, const Options& options)
      : document_(document), root_(document.root), options_(options) {}

  Report Run(const std::vector<const Resolver*>& resolvers);

 private:
  static constexpr std::size_t kFixedPointGuard = 100000;

  struct EdgeLess {
    bool operator()(const Edge& a, const Edge& b) const {
      return std::tie(a.to, a.from, a.provenance, a.capability) < std::tie(b.to, b.from, b.provenance, b.capability);
    }
  };

  // ---- paths ----

  // A member path segment: ".key", or (1.9.2) ["key"] for keys outside [A-Za-z0-9_-].
  std::string Key(const std::string& path, std::string_view key) const;

  // Appends the tokens of an RFC 6901 pointer: [n] for decimal tokens, else keys.
  std::string PointerSuffix(const std::string& path, std::string_view pointer) const;

  // The channel pointer as the operation-object pointer it addresses.
  static std::string ChannelPointer(const std::string& pointer);

  // ---- collection ----

  void Collect();

  void CollectSteps(const std::string& workflow, const json::Value& steps, const std::string& path,
                    const std::string& container, bool sequential, const std::vector<Position>& positions,
                    const std::set<std::string>& contexts);

  void CollectCases(const std::string& workflow, const json::Value& cases, const std::string& path,
                    const std::string& container, const std::vector<Position>& positions,
                    const std::set<std::string>& contexts);

  static Provenance WorkflowInputTrust(const json::Value* trust, const std::string& workflow,
                                       const std::string& input);

  // $trigger: with no triggers untrusted, else the join of each trigger's declared level
  // (default untrusted). With `reaches`, only the triggers it accepts count (1.9.2 route
  // scoping); when none does, untrusted.
  State TriggerState(const std::set<std::string>* reaches) const;

  // 1.9.2: the triggers that reach each workflow. A trigger without routes reaches every
  // workflow; a routed one reaches the workflows its routes name (directly, or through a
  // top-level step they name) and every workflow those call.
  void ScopeTriggers();

  // ---- resolution ----

  void ResolveOperations(const std::vector<const Resolver*>& resolvers);

  // 1.9.1: invalid capabilities and trust become unknown, invalid kinds become data.
  static OperationContract Normalize(OperationContract contract);

  // 1.9.2 strict claims: every kind, pointer, output name, capability and trust level must
  // be valid (an empty capability or trust means unknown).
  static bool ClaimIsValid(const OperationContract& contract, const json::Value& operation);

  // ---- passes ----

  void RunPass();

  void AnalyzeWorkflow(const std::string& id);

  void AnalyzeSteps(const json::Value& steps, const std::string& path, const Env& env);

  void AnalyzeCases(const json::Value& cases, const std::string& path, const Env& env);

  void AnalyzeStep(const json::Value& step, const std::string& path, const Env& parent);

  std::pair<StateMap, State> AnalyzeOperation(const std::string& id, Env env, const std::string& caller);

  State AnalyzeChannel(const InputChannel& channel, const json::Value& operation, const std::string& path,
                       const Env& env);

  static const json::Value* ResolvePointer(const json::Value& operation, const std::string& pointer);

  // 1.9.2: the request outside every channel is scanned as data (with no channels at all,
  // the whole request).
  State ScanOutsideChannels(const OperationContract& contract, const json::Value& operation, const std::string& path,
                            const Env& env);

  State ScanExcept(const json::Value& value, const std::string& pointer, const std::string& path,
                   const std::set<std::string>& channels, const Env& env);

  Provenance OutputTrust(const json::Value& operation, const std::string& output, const Resolved& resolution) const;

  void Criterion(const json::Value& criterion, const std::string& path, const Env& env);

  // A control field: untrusted influences control flow, unknown cannot be judged.
  State Control(const json::Value* field, const std::string& path, const Env& env);

  // ---- values and expressions ----

  State ScanValue(const json::Value* value, const std::string& path, const Env& env);

  State EvalValue(const json::Value& value, const std::string& path, const Env& env);

  // outputs values are always expressions; a non-string is outside the grammar.
  State EvalExpressionValue(const json::Value& value, const std::string& path, const Env& env);

  State EvalString(const std::string& text, const std::string& path, const Env& env);

  State EvalParsed(const uws::Expression& expression, const std::string& path, const Env& env);

  std::optional<State> ResolveRef(const Ref& ref, const Env& env, const std::string& path);

  std::string WorkflowPath(const std::string& workflow);

  // ---- dominance ----

  bool DominatesWorkflowExit(const std::string& source, const Env& env) const;

  bool Dominates(const std::string& source, const std::string& target) const;

  bool DependsOn(const std::string& target, const std::string& source, std::set<std::string>& seen) const;

  bool DependencyCovers(const std::string& dependency, const std::string& source, std::set<std::string>& seen) const;

  bool IsAncestor(const std::string& ancestor, const std::string& descendant) const;

  // ---- results ----

  void SetNested(std::map<std::string, StateMap>& target, const std::string& outer, const std::string& inner,
                 const State& state);

  void AddEdge(const State& state, const std::string& to);

  // Resolver findings are recorded at resolution; all others only in the reporting pass.
  void AddFinding(const char* code, const std::string& path);

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

}  // namespace udon::trust::internal

#endif  // UDON_TRUST_INTERNAL_ANALYSIS_H_
