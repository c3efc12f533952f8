#include "uws/expression.h"

#include <gtest/gtest.h>

#include "json/json.h"

namespace udon::uws {
namespace {

json::Value J(const char* text) { return *json::Parse(text); }

TEST(UwsExpression, ValidGrammar) {
  for (const char* text :
       {"$inputs", "$inputs.a", "$inputs.a.b-c_d.0", "$outputs.x", "$outputs.x.y", "$steps.s1.outputs.n",
        "$steps.s-1.outputs.n.deep.3", "$variables.v", "$trigger", "$trigger.body", "$item", "$item.name",
        "$index", "$response.statusCode", "$response.body", "$response.body#", "$response.body#/a/0",
        "$response.body#/a~1b/c~0d", "$response.body#/%41", "$response.headers.X-Request_Id",
        "$inputs.n == 1", "$inputs.n != null", "$inputs.s <= \"a b\"", "$inputs.n >= -1.5e3", "$inputs.n < 0",
        "$inputs.n > $variables.limit", "$inputs.flag == true", "$inputs.flag != false"}) {
    EXPECT_TRUE(ParseExpression(text).ok()) << text;
  }
}

TEST(UwsExpression, InvalidGrammar) {
  for (const char* text :
       {"", "$", "inputs.a", "$inputs.", "$inputs..a", "$inputs.a.", "$inputs.a b", "$outputs", "$variables",
        "$steps.s1", "$steps.s1.outputs", "$steps.s1.result.n", "$response", "$response.body.a", "$response.body#a",
        "$response.body#/a~2", "$response.body#/%4", "$response.body#/%zz", "$response.body#/a b",
        "$response.headers", "$response.headers.a.b", "$statusCode", "$components.x", "$workflow.x",
        "$inputs.a  == 1", "$inputs.a ==  1", "$inputs.a == 1 ", "$inputs.a === 1", "$inputs.a =~ 1",
        "$inputs.a == 1 == 2", "$inputs.a == [1]", "$inputs.a == {}", "$inputs.a == abc", "$inputs.a ==",
        "$inputs.a && $inputs.b", "length($inputs.a)", "{$inputs.a}", "$inputs.a.b\xc3\xa9", "$index.x",
        "$inputs.a == $inputs.b == 1", "$inputs.a == 'x'"}) {
    EXPECT_FALSE(ParseExpression(text).ok()) << text;
  }
}

TEST(UwsExpression, PointerDecodingOrder) {
  auto expression = ParseExpression("$response.body#/a~1b/%7E1/%25/~0");
  ASSERT_TRUE(expression.ok());
  EXPECT_EQ(expression->left.path, (std::vector<std::string>{"a/b", "/", "%", "~"}));
}

struct Fixture {
  json::Value inputs = J(R"({"a": {"b": [10, 20, {"c": "x"}]}, "n": 5, "s": "abc", "f": 1.5, "z": 0, "e": ""})");
  json::Value variables = J(R"({"limit": 7, "name": "v"})");
  json::Value outputs = J(R"({"first": 1})");
  json::Value body = J(R"({"list": [1, 2], "a/b": true, "~": "t", "": "empty"})");
  json::Value item = J(R"({"k": "v"})");
  json::Value step = J(R"({"n": {"m": 3}})");
  Scope scope;
  Fixture() {
    scope.inputs = &inputs;
    scope.variables = &variables;
    scope.outputs = &outputs;
    scope.response_body = &body;
    scope.item = &item;
    scope.index = 2;
    scope.step_outputs = [this](const std::string& id) -> const json::Value* { return id == "s1" ? &step : nullptr; };
  }
  json::Value Eval(const char* text) {
    auto value = EvaluateText(text, scope);
    EXPECT_TRUE(value.ok()) << text << ": " << (value.ok() ? "" : value.error().Describe());
    return value.ok() ? *value : json::Value("<error>");
  }
  std::string Fails(const char* text) {
    auto value = EvaluateText(text, scope);
    return value.ok() ? "ok" : value.error().code;
  }
};

TEST(UwsExpression, Reads) {
  Fixture f;
  EXPECT_EQ(f.Eval("$inputs.a.b.1"), 20);
  EXPECT_EQ(f.Eval("$inputs.a.b.2.c"), "x");
  EXPECT_EQ(f.Eval("$inputs.a.b.9"), nullptr);
  EXPECT_EQ(f.Eval("$inputs.a.b.01"), nullptr);
  EXPECT_EQ(f.Eval("$inputs.a.missing.deeper"), nullptr);
  EXPECT_EQ(f.Eval("$inputs.n.into_scalar"), nullptr);
  EXPECT_EQ(f.Eval("$variables.limit"), 7);
  EXPECT_EQ(f.Eval("$outputs.first"), 1);
  EXPECT_EQ(f.Eval("$steps.s1.outputs.n.m"), 3);
  EXPECT_EQ(f.Eval("$item.k"), "v");
  EXPECT_EQ(f.Eval("$index"), 2);
  EXPECT_EQ(f.Eval("$response.body#/list/1"), 2);
  EXPECT_EQ(f.Eval("$response.body#/list/01"), nullptr);
  EXPECT_EQ(f.Eval("$response.body#/a~1b"), true);
  EXPECT_EQ(f.Eval("$response.body#/%7E0"), "t");
  EXPECT_EQ(f.Eval("$response.body#/"), "empty");
  EXPECT_EQ(f.Eval("$response.body#"), f.body);
  EXPECT_EQ(f.Eval("$response.body"), f.body);
  EXPECT_EQ(f.Eval("$inputs"), f.inputs);
}

TEST(UwsExpression, ReadFailures) {
  Fixture f;
  EXPECT_EQ(f.Fails("$inputs.nope"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$variables.nope"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$outputs.later"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$steps.other.outputs.n"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$steps.s1.outputs.nope"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$trigger.body"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$response.statusCode"), "uws.expression_failed");
  f.scope.item = nullptr;
  f.scope.index.reset();
  f.scope.response_body = nullptr;
  EXPECT_EQ(f.Fails("$item"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$index"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$response.body"), "uws.expression_failed");
}

TEST(UwsExpression, StrictComparisons) {
  Fixture f;
  EXPECT_EQ(f.Eval("$inputs.n == 5"), true);
  EXPECT_EQ(f.Eval("$inputs.n == 5.0"), true);
  EXPECT_EQ(f.Eval("$inputs.n < 5.5"), true);
  EXPECT_EQ(f.Eval("$inputs.n > $variables.limit"), false);
  EXPECT_EQ(f.Eval("$inputs.f >= 1.5"), true);
  EXPECT_EQ(f.Eval("$inputs.s < \"abd\""), true);
  EXPECT_EQ(f.Eval("$inputs.s == \"abc\""), true);
  EXPECT_EQ(f.Fails("$inputs.missing_key_walk.x == null"), "uws.expression_failed");
  EXPECT_EQ(f.Eval("$inputs.a.zz == null"), true);
  EXPECT_EQ(f.Eval("$inputs.a.zz != null"), false);
  EXPECT_EQ(f.Fails("$inputs.n == \"5\""), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$inputs.n == true"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$inputs.a == 1"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$inputs.a.zz < null"), "uws.expression_failed");
  EXPECT_EQ(f.Fails("$response.body#/a~1b > false"), "uws.expression_failed");
}

TEST(UwsExpression, BigIntegersCompareExactly) {
  json::Value inputs = J(R"({"big": 9007199254740993, "neg": -1, "u": 18446744073709551615})");
  Scope scope;
  scope.inputs = &inputs;
  EXPECT_EQ(*EvaluateText("$inputs.big > 9007199254740992", scope), true);
  EXPECT_EQ(*EvaluateText("$inputs.neg < $inputs.u", scope), true);
  EXPECT_EQ(*EvaluateText("$inputs.u > 1.0e19", scope), true);
}

TEST(UwsExpression, Truthiness) {
  for (const char* falsy : {"null", "false", "0", "0.0", "\"\"", "[]", "{}"}) EXPECT_FALSE(Truthy(J(falsy))) << falsy;
  for (const char* truthy : {"true", "1", "-1", "0.5", "\"0\"", "\"false\"", "[0]", "{\"a\": null}"}) {
    EXPECT_TRUE(Truthy(J(truthy))) << truthy;
  }
}

TEST(UwsExpression, TemplatesSeparateLiteralsFromExpressions) {
  Fixture f;
  json::Value body = J(R"({"x": "$inputs.n", "y": "literal $inputs.n", "z": ["$inputs.s", 3, {"w": "$index"}],
                           "t": "prefix ${inputs.s}"})");
  auto evaluated = EvaluateTemplate(body, f.scope);
  ASSERT_TRUE(evaluated.ok());
  EXPECT_EQ(*evaluated, J(R"({"x": 5, "y": "literal $inputs.n", "z": ["abc", 3, {"w": 2}], "t": "prefix ${inputs.s}"})"));
  std::vector<std::string> pointers;
  ForEachExpression(body, "", [&](const std::string&, const std::string& pointer) { pointers.push_back(pointer); });
  EXPECT_EQ(pointers, (std::vector<std::string>{"/x", "/z/0", "/z/2/w"}));
}

}  // namespace
}  // namespace udon::uws
