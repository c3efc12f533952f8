#include "uws/runner.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "uws/expression.h"
#include "json/access.h"

namespace udon::uws {
namespace {

using Clock = std::chrono::steady_clock;

struct Failure {
  Error error;
  std::string path;
  bool end = false;  // an onFailure end action: stops the run as a success
};

Failure Fail(Error error, std::string path) {
  Failure failure;
  failure.error = std::move(error);
  failure.path = std::move(path);
  return failure;
}

Failure FailExpression(Error error, std::string pointer, std::string path) {
  error.pointer = std::move(pointer);
  return Fail(std::move(error), std::move(path));
}

enum class State { kRunning, kSuccess, kError, kSkipped };

struct Record {
  State state = State::kRunning;
  std::optional<Failure> failure;
  json::Value outputs = json::Value::object();
};

// The records of one workflow invocation or one loop iteration. An iteration's lookups of
// $steps fall back to the enclosing frames.
struct Frame {
  const Frame* parent = nullptr;
  const json::Value* inputs = nullptr;
  const json::Value* item = nullptr;
  std::optional<std::size_t> index;
  mutable std::mutex mutex;
  std::condition_variable done;
  std::map<std::string, Record> records;
};

// Cancellation: a parallel block cancels its siblings at its first error.
struct Cancel {
  const Cancel* parent = nullptr;
  std::atomic<bool> cancelled{false};
  bool IsCancelled() const {
    for (const Cancel* c = this; c != nullptr; c = c->parent) {
      if (c->cancelled.load()) return true;
    }
    return false;
  }
};

// The keys being executed by the current chain of calls; a dependsOn on one of them
// would wait for itself.
struct Chain {
  const Chain* parent = nullptr;
  std::string key;
  bool Contains(const std::string& wanted) const {
    for (const Chain* c = this; c != nullptr; c = c->parent) {
      if (c->key == wanted) return true;
    }
    return false;
  }
};

struct Context {
  Frame* frame = nullptr;
  const Cancel* cancel = nullptr;
  std::optional<Clock::time_point> deadline;
  std::string path;
  const Chain* chain = nullptr;
};

using Outcome = std::optional<Failure>;  // nullopt: success

using json::ArrayMember;
using json::Child;
using json::StringMember;

class Executor {
 public:
  Executor(const Plan& plan, LeafExecutor& leaf, const RunOptions& options)
      : plan_(plan), leaf_(leaf), options_(options) {}

  RunOutcome RunEntry(const json::Value& inputs) {
    Cancel cancel;
    Context context;
    context.cancel = &cancel;
    json::Value outputs;
    Outcome failure = InvokeWorkflow(*plan_.workflows.at(plan_.entry), inputs, context, "", outputs);
    RunOutcome outcome;
    if (!failure) {
      outcome.outputs = std::move(outputs);
      return outcome;
    }
    if (failure->end) {
      outcome.ended = true;
      return outcome;
    }
    outcome.step_path = failure->path;
    failure->error.details["step"] = failure->path;
    outcome.error = std::move(failure->error);
    return outcome;
  }

 private:
  // ---- scopes ----
  Scope MakeScope(const Context& context) const {
    Scope scope;
    scope.inputs = context.frame->inputs;
    scope.variables = &plan_.variables;
    for (const Frame* f = context.frame; f != nullptr; f = f->parent) {
      if (f->item != nullptr) {
        scope.item = f->item;
        scope.index = f->index;
        break;
      }
    }
    const Frame* frame = context.frame;
    scope.step_outputs = [frame](const std::string& step) -> const json::Value* {
      for (const Frame* f = frame; f != nullptr; f = f->parent) {
        std::lock_guard<std::mutex> lock(f->mutex);
        auto it = f->records.find("step:" + step);
        if (it != f->records.end() && it->second.state == State::kSuccess) return &it->second.outputs;
      }
      return nullptr;
    };
    return scope;
  }

  Outcome Checkpoint(const Context& context) const {
    if (context.cancel->IsCancelled()) {
      return Fail(MakeError("uws.cancelled", "a sibling in a parallel block failed"), context.path);
    }
    if (context.deadline && Clock::now() >= *context.deadline) {
      return Fail(MakeError("uws.timeout", "the timeout of the step or workflow elapsed"), context.path);
    }
    return std::nullopt;
  }

  static std::optional<Clock::time_point> Deadline(const json::Value& object, const Context& context) {
    auto timeout = object.find("timeout");
    if (timeout == object.end() || !timeout->is_number()) return context.deadline;
    auto mine = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(timeout->get<double>()));
    if (context.deadline && *context.deadline < mine) return context.deadline;
    return mine;
  }

  // when: nullopt = run, true = skip.
  Result<bool> Skip(const json::Value& object, const Scope& scope) const {
    auto when = object.find("when");
    if (when == object.end() || !when->is_string()) return false;
    UDON_ASSIGN_OR_RETURN(json::Value value, EvaluateText(when->get<std::string>(), scope));
    return !Truthy(value);
  }

  // Outputs in sorted order; $outputs sees `seed` overlaid with the earlier ones.
  Outcome ResolveOutputs(const json::Value& object, const std::string& pointer, Scope scope, json::Value& outputs,
                         const std::string& path) const {
    auto declared = object.find("outputs");
    if (declared == object.end() || !declared->is_object()) return std::nullopt;
    for (const auto& [name, text] : declared->items()) {
      scope.outputs = &outputs;
      auto value = EvaluateText(text.get<std::string>(), scope);
      if (!value.ok()) return FailExpression(value.error(), Child(Child(pointer, "outputs"), name), path);
      outputs[name] = std::move(value).value();
    }
    return std::nullopt;
  }

  // ---- memoized records ----
  template <class Body>
  Record Memo(Frame& frame, const std::string& key, Body body) {
    {
      std::unique_lock<std::mutex> lock(frame.mutex);
      auto it = frame.records.find(key);
      if (it != frame.records.end()) {
        frame.done.wait(lock, [&] { return it->second.state != State::kRunning; });
        return it->second;
      }
      frame.records.emplace(key, Record{});
    }
    Record result = body();
    std::lock_guard<std::mutex> lock(frame.mutex);
    frame.records[key] = result;
    frame.done.notify_all();
    return result;
  }

  static Record Failed(Failure failure) {
    Record record;
    record.state = State::kError;
    record.failure = std::move(failure);
    return record;
  }
  static Record Skipped() {
    Record record;
    record.state = State::kSkipped;
    return record;
  }
  static Record Succeeded(json::Value outputs) {
    Record record;
    record.state = State::kSuccess;
    record.outputs = std::move(outputs);
    return record;
  }

  // ---- dependsOn: step, then workflow, then operation, then parallelGroup ----
  Outcome RunDepends(const json::Value& object, const Context& context) {
    const json::Value* depends = ArrayMember(object, "dependsOn");
    if (depends == nullptr) return std::nullopt;
    for (const auto& name : *depends) {
      if (!name.is_string()) continue;
      if (Outcome failure = RunName(name.get<std::string>(), context)) return failure;
    }
    return std::nullopt;
  }

  Outcome RunName(const std::string& name, const Context& context) {
    if (auto step = plan_.steps.find(name); step != plan_.steps.end()) {
      return AsOutcome(RunStep(*step->second, context));
    }
    if (auto workflow = plan_.workflows.find(name); workflow != plan_.workflows.end()) {
      const std::string key = "wf:" + name;
      if (context.chain && context.chain->Contains(key)) return Enclosing(context);
      return AsOutcome(Memo(globals_, key, [&] {
        const json::Value no_inputs = json::Value::object();
        json::Value outputs;
        Outcome failure = InvokeWorkflow(*workflow->second, no_inputs, context, "", outputs);
        return failure ? Failed(std::move(*failure)) : Succeeded(std::move(outputs));
      }));
    }
    if (auto operation = plan_.operations.find(name); operation != plan_.operations.end()) {
      const std::string key = "op:" + name;
      if (context.chain && context.chain->Contains(key)) return Enclosing(context);
      return AsOutcome(Memo(globals_, key, [&] {
        const json::Value no_inputs = json::Value::object();
        Context inner = context;
        inner.path = context.path + "/" + name;
        json::Value outputs;
        json::Value body;
        bool skipped = false;
        Outcome failure = RunOperation(*operation->second, no_inputs, inner, outputs, body, skipped);
        if (failure) return Failed(std::move(*failure));
        return skipped ? Skipped() : Succeeded(std::move(outputs));
      }));
    }
    if (auto group = plan_.groups.find(name); group != plan_.groups.end()) {
      for (const auto& member : group->second) {
        if (Outcome failure = RunName(member, context)) return failure;
      }
    }
    return std::nullopt;
  }

  static Outcome AsOutcome(const Record& record) {
    if (record.state == State::kError) return record.failure;
    return std::nullopt;
  }

  static Outcome Enclosing(const Context& context) {
    Error error = MakeError("uws.unsupported", "dependsOn names a construct that encloses it");
    error.details["construct"] = "dependsOn on an enclosing construct";
    return Fail(std::move(error), context.path);
  }

  // ---- workflows ----
  Outcome InvokeWorkflow(const json::Value& workflow, const json::Value& inputs, const Context& caller,
                         const std::string& parent_path, json::Value& outputs) {
    const std::string id = StringMember(workflow, "workflowId");
    const std::string pointer = PointerOf(workflow);
    Frame frame;
    frame.inputs = &inputs;
    Context context = caller;
    context.frame = &frame;
    context.path = parent_path.empty() ? id : parent_path + "/" + id;
    Chain link{caller.chain, "wf:" + id};
    context.chain = &link;
    if (Outcome failure = RunDepends(workflow, context)) return failure;
    Scope scope = MakeScope(context);
    auto skip = Skip(workflow, scope);
    if (!skip.ok()) return FailExpression(skip.error(), Child(pointer, "when"), context.path);
    outputs = json::Value::object();
    if (*skip) return std::nullopt;
    context.deadline = Deadline(workflow, context);
    if (Outcome failure = RunStructure(workflow, pointer, context)) return failure;
    if (Outcome failure = Checkpoint(context)) return failure;
    return ResolveOutputs(workflow, pointer, MakeScope(context), outputs, context.path);
  }

  std::string PointerOf(const json::Value& workflow) const {
    const json::Value& list = plan_.document->root["workflows"];
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (&list[i] == &workflow) return "/workflows/" + std::to_string(i);
    }
    return "/workflows";
  }

  // ---- structures ----
  Outcome RunStructure(const json::Value& object, const std::string& pointer, const Context& context) {
    const std::string type = StringMember(object, "type");
    if (type == "parallel") return RunParallel(object, context);
    if (type == "switch") return RunSwitch(object, pointer, context);
    if (type == "loop") return RunLoop(object, pointer, context);
    return RunSequence(ArrayMember(object, "steps"), context);
  }

  Outcome RunSequence(const json::Value* steps, const Context& context) {
    if (steps == nullptr) return std::nullopt;
    for (const auto& step : *steps) {
      if (Outcome failure = Checkpoint(context)) return failure;
      if (Outcome failure = AsOutcome(RunStep(step, context))) return failure;
    }
    return std::nullopt;
  }

  Outcome RunParallel(const json::Value& object, const Context& context) {
    const json::Value* steps = ArrayMember(object, "steps");
    if (steps == nullptr || steps->empty()) return std::nullopt;
    Cancel cancel;
    cancel.parent = context.cancel;
    Context inner = context;
    inner.cancel = &cancel;
    std::mutex mutex;
    Outcome first;
    std::vector<std::thread> threads;
    threads.reserve(steps->size());
    for (const auto& step : *steps) {
      threads.emplace_back([&, step_ptr = &step] {
        Outcome failure;
        try {
          failure = AsOutcome(RunStep(*step_ptr, inner));
        } catch (const std::exception&) {
          failure = Fail(MakeError("internal", "a parallel branch failed unexpectedly"), inner.path);
        }
        if (!failure) return;
        if (failure->end) {
          Error error = MakeError("uws.unsupported", "an end action cannot stop a parallel block");
          error.details["construct"] = "end inside parallel";
          failure = Fail(std::move(error), failure->path);
        }
        std::lock_guard<std::mutex> lock(mutex);
        // The first real failure wins; a sibling's cancellation is only its echo.
        if (!first || (first->error.code == "uws.cancelled" && failure->error.code != "uws.cancelled")) {
          first = std::move(failure);
        }
        if (!cancel.cancelled.exchange(true) && options_.on_cancel) options_.on_cancel();
      });
    }
    for (auto& thread : threads) thread.join();
    return first;
  }

  Outcome RunSwitch(const json::Value& object, const std::string& pointer, const Context& context) {
    if (const json::Value* cases = ArrayMember(object, "cases")) {
      Scope scope = MakeScope(context);
      for (std::size_t i = 0; i < cases->size(); ++i) {
        const json::Value& item = (*cases)[i];
        auto skip = Skip(item, scope);
        if (!skip.ok()) {
          return FailExpression(skip.error(), Child(Child(Child(pointer, "cases"), std::to_string(i)), "when"), context.path);
        }
        if (!*skip) return RunSequence(ArrayMember(item, "steps"), context);
      }
    }
    return RunSequence(ArrayMember(object, "default"), context);
  }

  Outcome RunLoop(const json::Value& object, const std::string& pointer, const Context& context) {
    Scope scope = MakeScope(context);
    auto items = EvaluateText(StringMember(object, "items"), scope);
    if (!items.ok()) return FailExpression(items.error(), Child(pointer, "items"), context.path);
    if (!items->is_array()) {
      return Fail(MakeError("uws.expression_failed", "loop items must be an array", Child(pointer, "items")), context.path);
    }
    // Batches run one after another and the items of a batch too, so batchSize changes no
    // order; it is still checked.
    if (auto size = object.find("batchSize"); size != object.end()) {
      json::Value value = *size;
      if (size->is_string()) {
        auto evaluated = EvaluateText(size->get<std::string>(), scope);
        if (!evaluated.ok()) return FailExpression(evaluated.error(), Child(pointer, "batchSize"), context.path);
        value = std::move(evaluated).value();
      }
      if (!value.is_number_integer() || value.get<std::int64_t>() < 1) {
        return Fail(MakeError("uws.expression_failed", "batchSize must be a positive integer", Child(pointer, "batchSize")),
                    context.path);
      }
    }
    const json::Value* steps = ArrayMember(object, "steps");
    for (std::size_t i = 0; i < items->size(); ++i) {
      Frame frame;
      frame.parent = context.frame;
      frame.inputs = context.frame->inputs;
      frame.item = &(*items)[i];
      frame.index = i;
      Context inner = context;
      inner.frame = &frame;
      inner.path = context.path + "[" + std::to_string(i) + "]";
      if (Outcome failure = RunSequence(steps, inner)) return failure;
    }
    return std::nullopt;
  }

  // ---- steps ----
  Record RunStep(const json::Value& step, const Context& context) {
    const std::string id = StringMember(step, "stepId");
    const std::string key = "step:" + id;
    if (context.chain && context.chain->Contains(key)) return Failed(*Enclosing(context));
    return Memo(*context.frame, key, [&] { return ExecuteStep(step, id, context); });
  }

  Record ExecuteStep(const json::Value& step, const std::string& id, const Context& caller) {
    const std::string pointer = plan_.step_pointers.count(id) ? plan_.step_pointers.at(id) : std::string();
    Context context = caller;
    context.path = caller.path + "/" + id;
    Chain link{caller.chain, "step:" + id};
    context.chain = &link;
    if (Outcome failure = RunDepends(step, context)) return Failed(std::move(*failure));
    Scope scope = MakeScope(context);
    auto skip = Skip(step, scope);
    if (!skip.ok()) return Failed(FailExpression(skip.error(), Child(pointer, "when"), context.path));
    if (*skip) return Skipped();
    if (options_.on_step) options_.on_step(context.path);
    context.deadline = Deadline(step, context);
    if (Outcome failure = Checkpoint(context)) return Failed(std::move(*failure));

    json::Value seed = json::Value::object();  // the callee's outputs
    json::Value body;
    const json::Value* response = nullptr;
    if (step.contains("operationRef") || step.contains("workflow")) {
      json::Value inputs = json::Value::object();
      if (auto declared = step.find("inputs"); declared != step.end()) {
        auto evaluated = EvaluateTemplate(*declared, scope);  // eager, in the enclosing scope
        if (!evaluated.ok()) return Failed(FailExpression(evaluated.error(), Child(pointer, "inputs"), context.path));
        inputs = std::move(evaluated).value();
      }
      if (step.contains("operationRef")) {
        const json::Value& operation = *plan_.operations.at(StringMember(step, "operationRef"));
        bool skipped = false;
        if (Outcome failure = RunOperation(operation, inputs, context, seed, body, skipped)) {
          return Failed(std::move(*failure));
        }
        if (skipped) return Skipped();
        response = &body;
      } else {
        const json::Value& workflow = *plan_.workflows.at(StringMember(step, "workflow"));
        if (Outcome failure = InvokeWorkflow(workflow, inputs, context, context.path, seed)) {
          return Failed(std::move(*failure));
        }
      }
    } else if (Outcome failure = RunStructure(step, pointer, context)) {
      return Failed(std::move(*failure));
    }
    if (Outcome failure = Checkpoint(context)) return Failed(std::move(*failure));
    auto declared = step.find("outputs");
    if (declared == step.end() || !declared->is_object() || declared->empty()) {
      return Succeeded(std::move(seed));  // pass-through
    }
    scope.response_body = response;
    json::Value outputs = std::move(seed);
    if (Outcome failure = ResolveOutputs(step, pointer, scope, outputs, context.path)) return Failed(std::move(*failure));
    return Succeeded(std::move(outputs));
  }

  // ---- operations (leaves) ----
  Outcome RunOperation(const json::Value& operation, const json::Value& inputs, const Context& caller,
                       json::Value& outputs, json::Value& body, bool& skipped) {
    const std::string id = StringMember(operation, "operationId");
    const McpOperation& bound = plan_.bindings.at(id);
    const std::string& pointer = bound.pointer;
    Context context = caller;
    Chain link{caller.chain, "op:" + id};
    context.chain = &link;
    if (Outcome failure = RunDepends(operation, context)) return failure;
    Scope scope = MakeScope(context);
    scope.inputs = &inputs;
    auto skip = Skip(operation, scope);
    if (!skip.ok()) return FailExpression(skip.error(), Child(pointer, "when"), context.path);
    if (*skip) {
      skipped = true;
      return std::nullopt;
    }
    context.deadline = Deadline(operation, context);
    json::Value arguments = json::Value::object();
    if (auto request = operation.find("request"); request != operation.end() && request->contains("body")) {
      auto evaluated = EvaluateTemplate((*request)["body"], scope);
      if (!evaluated.ok()) return FailExpression(evaluated.error(), Child(Child(pointer, "request"), "body"), context.path);
      arguments = std::move(evaluated).value();
    }
    for (long long attempts = 1;; ++attempts) {
      if (Outcome failure = Checkpoint(context)) return failure;
      LeafOutcome outcome = leaf_.Execute(bound, arguments);
      Outcome failure;
      if (outcome.error) {
        failure = Failure{*outcome.error, context.path, false};
      } else if (Outcome late = Checkpoint(context)) {
        failure = late;
      } else {
        Scope criteria_scope = scope;
        criteria_scope.response_body = &outcome.body;
        auto satisfied = Satisfied(operation, pointer, criteria_scope, context.path);
        if (!satisfied.ok()) return Fail(satisfied.error(), context.path);  // evaluation errors abort
        if (*satisfied) {
          body = std::move(outcome.body);
          Scope output_scope = scope;
          output_scope.response_body = &body;
          outputs = json::Value::object();
          return ResolveOutputs(operation, pointer, output_scope, outputs, context.path);
        }
        failure = Fail(MakeError("uws.criteria_unsatisfied", "the result did not satisfy successCriteria",
                                 Child(pointer, "successCriteria")),
                       context.path);
      }
      // An indeterminate outcome may have had effects: never again, whatever onFailure says.
      if (IsIndeterminate(failure->error.code)) return failure;
      Scope action_scope = scope;
      action_scope.response_body = outcome.error ? nullptr : &outcome.body;
      const json::Value* action = MatchingAction(operation, action_scope);
      if (action == nullptr) return failure;
      if (StringMember(*action, "type") == "end") {
        failure->end = true;
        return failure;
      }
      const long long limit = action->value("retryLimit", 0LL);
      if (attempts > limit) return failure;
      const double after = action->contains("retryAfter") && (*action)["retryAfter"].is_number()
                               ? (*action)["retryAfter"].get<double>()
                               : 0.0;
      Sleep(std::chrono::milliseconds(static_cast<long long>(after * 1000)), context);
    }
  }

  Result<bool> Satisfied(const json::Value& operation, const std::string& pointer, const Scope& scope,
                         const std::string&) const {
    const json::Value* criteria = ArrayMember(operation, "successCriteria");
    if (criteria == nullptr) return true;
    for (std::size_t i = 0; i < criteria->size(); ++i) {
      auto value = EvaluateText(StringMember((*criteria)[i], "condition"), scope);
      if (!value.ok()) {
        Error error = value.error();
        error.pointer = Child(Child(Child(pointer, "successCriteria"), std::to_string(i)), "condition");
        return error;
      }
      if (!Truthy(*value)) return false;
    }
    return true;
  }

  // The first onFailure action whose criteria all hold; an empty list always holds and a
  // criterion that cannot be evaluated does not.
  const json::Value* MatchingAction(const json::Value& operation, const Scope& scope) const {
    const json::Value* actions = ArrayMember(operation, "onFailure");
    if (actions == nullptr) return nullptr;
    for (const auto& action : *actions) {
      bool matches = true;
      if (const json::Value* criteria = ArrayMember(action, "criteria")) {
        for (const auto& criterion : *criteria) {
          auto value = EvaluateText(StringMember(criterion, "condition"), scope);
          matches = matches && value.ok() && Truthy(*value);
        }
      }
      if (matches) return &action;
    }
    return nullptr;
  }

  void Sleep(std::chrono::milliseconds duration, const Context& context) const {
    if (duration.count() <= 0) return;
    if (options_.sleep) {
      options_.sleep(duration);
      return;
    }
    const auto until = Clock::now() + duration;
    while (Clock::now() < until && !context.cancel->IsCancelled()) {
      std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
  }

  const Plan& plan_;
  LeafExecutor& leaf_;
  const RunOptions& options_;
  Frame globals_;  // op:<id> and wf:<id> records reached through dependsOn
};

}  // namespace

bool IsIndeterminate(std::string_view code) { return code == "call.indeterminate" || code == "uws.timeout"; }

RunOutcome Run(const Plan& plan, const json::Value& inputs, LeafExecutor& leaf, const RunOptions& options) {
  Executor executor(plan, leaf, options);
  return executor.RunEntry(inputs);
}

}  // namespace udon::uws
