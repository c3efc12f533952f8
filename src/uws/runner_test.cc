#include "uws/runner.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "uws/internal/fake_leaf.h"

namespace udon::uws {
namespace {

using testing::FakeLeaf;

// Operations: echo (body = arguments), and any number of aliases of the same shape.
std::string Head(std::initializer_list<const char*> extra_ops = {}) {
  std::string text = R"(uws: 1.9.1
info: {title: t, version: '1'}
operations:
  - operationId: echo
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    x-openudon-mcp: {manifest: m.json, manifestSha256: x, server: s, tool: t}
    request: {body: {v: $inputs.v}}
    outputs: {v: $response.body#/v}
)";
  for (const char* op : extra_ops) {
    text += std::string("  - operationId: ") + op + R"(
    x-uws-operation-profile: openudon.mcp-tool-call.0.1
    x-openudon-mcp: {manifest: m.json, manifestSha256: x, server: s, tool: t}
    request: {body: {v: $inputs.v}}
    outputs: {v: $response.body#/v}
)";
  }
  return text;
}

struct Harness {
  Document document;
  Plan plan;
  FakeLeaf leaf;
  RunOptions options;
  std::vector<std::chrono::milliseconds> slept;

  explicit Harness(const std::string& yaml, std::optional<std::string> workflow = std::nullopt) {
    auto parsed = ParseDocument(yaml, "/tmp");
    EXPECT_TRUE(parsed.ok()) << parsed.error().Describe();
    document = std::move(parsed).value();
    auto errors = Validate(document);
    EXPECT_TRUE(errors.empty()) << ErrorsToJson(errors).dump();
    auto planned = MakePlan(document, testing::FakeBindings(document), workflow);
    EXPECT_TRUE(planned.ok()) << planned.error().Describe() << planned.error().details.dump();
    if (planned.ok()) plan = std::move(planned).value();
    options.sleep = [this](std::chrono::milliseconds duration) { slept.push_back(duration); };
  }

  RunOutcome Go(const char* inputs = "{}") { return Run(plan, *json::Parse(inputs), leaf, options); }
};

TEST(UwsRunner, SequenceChainsOutputs) {
  Harness h(Head() + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: a, operationRef: echo, inputs: {v: $inputs.start}}
      - {stepId: b, operationRef: echo, inputs: {v: $steps.a.outputs.v}, outputs: {doubled: $outputs.v, raw: $response.body}}
    outputs: {final: $steps.b.outputs.doubled, raw: $steps.b.outputs.raw, kept: $steps.b.outputs.v}
)");
  RunOutcome outcome = h.Go(R"({"start": "x"})");
  ASSERT_TRUE(outcome.ok()) << outcome.error->Describe();
  EXPECT_EQ(outcome.outputs, *json::Parse(R"({"final": "x", "raw": {"v": "x"}, "kept": "x"})"));
  EXPECT_EQ(h.leaf.CalledOperations(), (std::vector<std::string>{"echo", "echo"}));
}

TEST(UwsRunner, FailureStopsLaterStepsAndHasNoOutputs) {
  Harness h(Head({"bad"}) + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: a, operationRef: echo, inputs: {v: 1}}
      - {stepId: b, operationRef: bad, inputs: {v: 2}}
      - {stepId: c, operationRef: echo, inputs: {v: 3}}
    outputs: {a: $steps.a.outputs.v}
)");
  h.leaf.On("bad", [](const json::Value&) { return FakeLeaf::Failure("catalog.tool_drift"); });
  RunOutcome outcome = h.Go();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "catalog.tool_drift");
  EXPECT_EQ(outcome.step_path, "w/b");
  EXPECT_EQ(outcome.error->details["step"], "w/b");
  EXPECT_EQ(outcome.outputs, json::Value::object());
  EXPECT_EQ(h.leaf.CalledOperations(), (std::vector<std::string>{"echo", "bad"}));
}

TEST(UwsRunner, WhenSkipsAndSkippedStepsHaveNoOutputs) {
  Harness h(Head() + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: a, operationRef: echo, inputs: {v: 1}, when: $inputs.go == true}
      - {stepId: b, operationRef: echo, inputs: {v: 2}}
    outputs: {b: $steps.b.outputs.v}
  - workflowId: main
    type: sequence
    steps:
      - {stepId: c, operationRef: echo, inputs: {v: 1}, when: $inputs.go}
    outputs: {c: $steps.c.outputs.v}
)", "w");
  RunOutcome outcome = h.Go(R"({"go": false})");
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.outputs, *json::Parse(R"({"b": 2})"));
  EXPECT_EQ(h.leaf.calls().size(), 1u);

  Harness skipped(h.document.root.dump());
  RunOutcome failed = skipped.Go(R"({"go": 0})");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error->code, "uws.expression_failed");
  EXPECT_EQ(failed.error->pointer, "/workflows/1/outputs/c");
}

TEST(UwsRunner, SwitchTakesTheFirstMatchingCase) {
  std::string doc = Head() + R"(workflows:
  - workflowId: w
    type: switch
    cases:
      - {name: big, when: $inputs.n > 10, steps: [{stepId: big, operationRef: echo, inputs: {v: big}}]}
      - {name: small, when: $inputs.n > 0, steps: [{stepId: small, operationRef: echo, inputs: {v: small}}]}
    default: [{stepId: none, operationRef: echo, inputs: {v: none}}]
)";
  auto picked = [&](const char* inputs) {
    Harness h(doc);
    EXPECT_TRUE(h.Go(inputs).ok());
    std::vector<std::string> values;
    for (const auto& call : h.leaf.calls()) values.push_back(call.arguments["v"].get<std::string>());
    return values;
  };
  EXPECT_EQ(picked(R"({"n": 50})"), (std::vector<std::string>{"big"}));
  EXPECT_EQ(picked(R"({"n": 5})"), (std::vector<std::string>{"small"}));
  EXPECT_EQ(picked(R"({"n": -5})"), (std::vector<std::string>{"none"}));

  Harness no_when(Head() + R"(workflows:
  - workflowId: w
    type: switch
    cases:
      - {name: never, when: $inputs.n == 0, steps: [{stepId: a, operationRef: echo, inputs: {v: a}}]}
      - {name: always, steps: [{stepId: b, operationRef: echo, inputs: {v: b}}]}
)");
  ASSERT_TRUE(no_when.Go(R"({"n": 1})").ok());
  EXPECT_EQ(no_when.leaf.calls().at(0).arguments["v"], "b");
}

TEST(UwsRunner, LoopBindsItemAndIndex) {
  Harness h(Head() + R"(workflows:
  - workflowId: w
    type: loop
    items: $inputs.list
    batchSize: $inputs.batch
    steps:
      - {stepId: first, operationRef: echo, inputs: {v: $item.name}}
      - {stepId: second, operationRef: echo, inputs: {v: $index}, when: $steps.first.outputs.v != "skip"}
)");
  RunOutcome outcome = h.Go(R"({"batch": 2, "list": [{"name": "a"}, {"name": "skip"}, {"name": "c"}]})");
  ASSERT_TRUE(outcome.ok()) << outcome.error->Describe();
  std::vector<json::Value> values;
  for (const auto& call : h.leaf.calls()) values.push_back(call.arguments["v"]);
  EXPECT_EQ(values, (std::vector<json::Value>{"a", 0, "skip", "c", 2}));

  Harness empty(h.document.root.dump());
  EXPECT_TRUE(empty.Go(R"({"batch": 1, "list": []})").ok());
  EXPECT_TRUE(empty.leaf.calls().empty());
  RunOutcome not_array = empty.Go(R"({"batch": 1, "list": "abc"})");
  ASSERT_FALSE(not_array.ok());
  EXPECT_EQ(not_array.error->code, "uws.expression_failed");
  RunOutcome bad_batch = empty.Go(R"({"batch": 0, "list": [1]})");
  ASSERT_FALSE(bad_batch.ok());
  EXPECT_EQ(bad_batch.error->pointer, "/workflows/0/batchSize");
}

TEST(UwsRunner, LoopFailureNamesTheIteration) {
  Harness h(Head({"bad"}) + R"(workflows:
  - workflowId: w
    type: loop
    items: $inputs.list
    steps: [{stepId: s, operationRef: bad, inputs: {v: $item}}]
)");
  h.leaf.On("bad", [](const json::Value& arguments) {
    return arguments["v"] == 2 ? FakeLeaf::Failure("call.tool_error") : FakeLeaf::Echo(arguments);
  });
  RunOutcome outcome = h.Go(R"({"list": [1, 2, 3]})");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.step_path, "w[1]/s");
  EXPECT_EQ(outcome.error->code, "call.tool_error");
  EXPECT_EQ(h.leaf.calls().size(), 2u);
}

TEST(UwsRunner, ParallelRunsConcurrently) {
  Harness h(Head({"left", "right"}) + R"(workflows:
  - workflowId: w
    type: parallel
    steps:
      - {stepId: l, operationRef: left, inputs: {v: 1}}
      - {stepId: r, operationRef: right, inputs: {v: 2}}
    outputs: {l: $steps.l.outputs.v, r: $steps.r.outputs.v}
)");
  std::mutex mutex;
  std::condition_variable arrived;
  int inside = 0;
  bool met = true;
  auto rendezvous = [&](const json::Value& arguments) {
    std::unique_lock<std::mutex> lock(mutex);
    ++inside;
    arrived.notify_all();
    // Sequential execution would never let both in; the bound only keeps a broken build from hanging.
    met = arrived.wait_for(lock, std::chrono::seconds(30), [&] { return inside == 2; }) && met;
    return FakeLeaf::Echo(arguments);
  };
  h.leaf.On("left", rendezvous);
  h.leaf.On("right", rendezvous);
  RunOutcome outcome = h.Go();
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(met);
  EXPECT_EQ(outcome.outputs, *json::Parse(R"({"l": 1, "r": 2})"));
}

TEST(UwsRunner, ParallelFirstErrorCancelsSiblings) {
  Harness h(Head({"bad", "slow", "after"}) + R"(workflows:
  - workflowId: w
    type: parallel
    steps:
      - {stepId: failing, operationRef: bad, inputs: {v: 1}}
      - stepId: chain
        type: sequence
        steps:
          - {stepId: s1, operationRef: slow, inputs: {v: 2}}
          - {stepId: s2, operationRef: after, inputs: {v: 3}}
)");
  std::mutex mutex;
  std::condition_variable changed;
  bool cancelled = false;
  h.options.on_cancel = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    cancelled = true;
    changed.notify_all();
  };
  h.leaf.On("bad", [](const json::Value&) { return FakeLeaf::Failure("call.tool_error"); });
  h.leaf.On("slow", [&](const json::Value& arguments) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return cancelled; });
    return FakeLeaf::Echo(arguments);
  });
  RunOutcome outcome = h.Go();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "call.tool_error");
  EXPECT_EQ(outcome.step_path, "w/failing");
  for (const auto& name : h.leaf.CalledOperations()) EXPECT_NE(name, "after");
}

TEST(UwsRunner, DependsOnRunsOnceOnDemand) {
  Harness h(Head() + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: b, operationRef: echo, inputs: {v: $steps.a.outputs.v}, dependsOn: [a]}
      - {stepId: a, operationRef: echo, inputs: {v: first}}
    outputs: {b: $steps.b.outputs.v}
)");
  RunOutcome outcome = h.Go();
  ASSERT_TRUE(outcome.ok()) << outcome.error->Describe();
  EXPECT_EQ(outcome.outputs["b"], "first");
  EXPECT_EQ(h.leaf.calls().size(), 2u);
}

TEST(UwsRunner, WorkflowCallStepsPassInputsAndOutputs) {
  Harness h(Head() + R"(workflows:
  - workflowId: main
    type: sequence
    steps:
      - {stepId: call, workflow: sub, inputs: {v: $inputs.top}}
      - {stepId: again, workflow: sub, inputs: {v: second}, outputs: {both: $outputs.result}}
    outputs: {first: $steps.call.outputs.result, second: $steps.again.outputs.both}
  - workflowId: sub
    type: sequence
    steps: [{stepId: inner, operationRef: echo, inputs: {v: $inputs.v}}]
    outputs: {result: $steps.inner.outputs.v}
)");
  RunOutcome outcome = h.Go(R"({"top": "one"})");
  ASSERT_TRUE(outcome.ok()) << outcome.error->Describe();
  EXPECT_EQ(outcome.outputs, *json::Parse(R"({"first": "one", "second": "second"})"));
}

TEST(UwsRunner, RetryCountsAttempts) {
  std::string doc = Head({"flaky"}) + R"(    onFailure: [{name: again, type: retry, retryLimit: 2, retryAfter: 1.5}]
workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: flaky, inputs: {v: 1}}]}]
)";
  auto attempts_until_success = [&](int failures) {
    Harness h(doc);
    int seen = 0;
    h.leaf.On("flaky", [&](const json::Value& arguments) {
      return ++seen <= failures ? FakeLeaf::Failure("call.tool_error") : FakeLeaf::Echo(arguments);
    });
    RunOutcome outcome = h.Go();
    EXPECT_EQ(h.slept.size(), static_cast<std::size_t>(std::min(failures, 2)));
    if (!h.slept.empty()) {
      EXPECT_EQ(h.slept.front(), std::chrono::milliseconds(1500));
    }
    return std::make_pair(outcome.ok(), seen);
  };
  EXPECT_EQ(attempts_until_success(2), std::make_pair(true, 3));
  EXPECT_EQ(attempts_until_success(3), std::make_pair(false, 3));
}

TEST(UwsRunner, IndeterminateIsNeverRetried) {
  Harness h(Head({"lost"}) + R"(    onFailure: [{name: again, type: retry, retryLimit: 5}, {name: stop, type: end}]
workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: lost, inputs: {v: 1}}]}]
)");
  h.leaf.On("lost", [](const json::Value&) { return FakeLeaf::Failure("call.indeterminate"); });
  RunOutcome outcome = h.Go();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "call.indeterminate");
  EXPECT_EQ(h.leaf.calls().size(), 1u);
}

TEST(UwsRunner, IndeterminateIsDecidedByCode) {
  EXPECT_TRUE(IsIndeterminate("call.indeterminate"));
  EXPECT_TRUE(IsIndeterminate("uws.timeout"));
  EXPECT_FALSE(IsIndeterminate("call.tool_error"));
  EXPECT_FALSE(IsIndeterminate("uws.criteria_unsatisfied"));
}

TEST(UwsRunner, EndActionFinishesTheRun) {
  Harness h(Head({"bad"}) + R"(    onFailure: [{name: only-drift, type: end, criteria: [{condition: $inputs.v == 99}]}, {name: stop, type: end}]
workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: s, operationRef: bad, inputs: {v: 1}}
      - {stepId: t, operationRef: echo, inputs: {v: 2}}
)");
  h.leaf.On("bad", [](const json::Value&) { return FakeLeaf::Failure("call.tool_error"); });
  RunOutcome outcome = h.Go();
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome.ended);
  EXPECT_EQ(h.leaf.CalledOperations(), (std::vector<std::string>{"bad"}));
}

TEST(UwsRunner, SuccessCriteria) {
  std::string doc = Head({"checked"}) + R"(    successCriteria: [{condition: $response.body#/v > 10}]
    onFailure: [{name: again, type: retry, retryLimit: 1}]
workflows: [{workflowId: w, type: sequence, steps: [{stepId: s, operationRef: checked, inputs: {v: $inputs.v}}]}]
)";
  Harness pass(doc);
  EXPECT_TRUE(pass.Go(R"({"v": 11})").ok());
  Harness fail(doc);
  RunOutcome outcome = fail.Go(R"({"v": 5})");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "uws.criteria_unsatisfied");
  EXPECT_EQ(fail.leaf.calls().size(), 2u);
  Harness abort(doc);
  RunOutcome mismatch = abort.Go(R"({"v": "text"})");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.error->code, "uws.expression_failed");
  EXPECT_EQ(abort.leaf.calls().size(), 1u) << "a criterion that cannot be evaluated aborts, no retry";
}

TEST(UwsRunner, TimeoutFailsTheStep) {
  Harness h(Head({"slow"}) + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - {stepId: s, operationRef: slow, inputs: {v: 1}, timeout: 0.001}
      - {stepId: t, operationRef: echo, inputs: {v: 2}}
)");
  h.leaf.On("slow", [](const json::Value& arguments) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // certainly past the 1 ms timeout
    return FakeLeaf::Echo(arguments);
  });
  RunOutcome outcome = h.Go();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "uws.timeout");
  EXPECT_EQ(outcome.step_path, "w/s");
  EXPECT_EQ(h.leaf.calls().size(), 1u);
}

TEST(UwsRunner, DependsOnAnEnclosingConstructFailsInsteadOfHanging) {
  Harness h(Head() + R"(workflows:
  - workflowId: w
    type: sequence
    steps:
      - stepId: outer
        type: sequence
        steps: [{stepId: inner, operationRef: echo, inputs: {v: 1}, dependsOn: [outer]}]
)");
  RunOutcome outcome = h.Go();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "uws.unsupported");
}

}  // namespace
}  // namespace udon::uws
