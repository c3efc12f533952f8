// A scripted LeafExecutor for runner and plan tests: each operation answers from a
// function of its arguments; every call is recorded.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "uws/binding.h"
#include "uws/document.h"
#include "uws/runner.h"

namespace udon::uws::testing {

class FakeLeaf : public LeafExecutor {
 public:
  using Answer = std::function<LeafOutcome(const json::Value& arguments)>;

  void On(const std::string& operation_id, Answer answer) { answers_[operation_id] = std::move(answer); }

  LeafOutcome Execute(const McpOperation& operation, const json::Value& arguments) override {
    Answer answer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      calls_.push_back({operation.operation_id, arguments});
      answer = answers_.count(operation.operation_id) ? answers_[operation.operation_id] : Answer();
    }
    if (!answer) return Echo(arguments);
    return answer(arguments);
  }

  static LeafOutcome Echo(const json::Value& arguments) {
    LeafOutcome outcome;
    outcome.body = arguments;
    return outcome;
  }
  static LeafOutcome Failure(const std::string& code) {
    LeafOutcome outcome;
    outcome.error = MakeError(code, "scripted failure");
    return outcome;
  }

  struct Call {
    std::string operation;
    json::Value arguments;
  };
  std::vector<Call> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  std::vector<std::string> CalledOperations() const {
    std::vector<std::string> out;
    for (const auto& call : calls()) out.push_back(call.operation);
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Answer> answers_;
  std::vector<Call> calls_;
};

// Every MCP-profile operation of the document counts as bound (no manifests needed).
inline BindingCheck FakeBindings(const Document& document) {
  BindingCheck check;
  const json::Value& operations = document.root["operations"];
  for (std::size_t i = 0; i < operations.size(); ++i) {
    if (!IsMcpOperation(operations[i])) continue;
    McpOperation bound;
    bound.operation_id = operations[i]["operationId"].get<std::string>();
    bound.pointer = "/operations/" + std::to_string(i);
    check.operations.emplace(bound.operation_id, bound);
  }
  return check;
}

}  // namespace udon::uws::testing
