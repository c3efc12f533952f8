#include "evidence/chart_spec.h"

#include <gtest/gtest.h>

#include "evidence/charts.h"

namespace udon::evidence {
namespace {

json::Value Spec() {
  return {{"title", "Refusals <by step>"},
          {"bars", {{{"label", "catalog"}, {"value", 12}, {"text", "12 of 20"}},
                    {{"label", "serverInfo"}, {"value", 8}, {"alert", true}}}},
          {"maximum", 20}};
}

// One chart-drawing piece of code: the description draws exactly what charts::BarChart draws.
TEST(ChartSpecTest, DrawsWhatTheReportsChartCodeDraws) {
  auto svg = BarChartFromSpec(Spec());
  ASSERT_TRUE(svg.ok()) << svg.error().message;
  EXPECT_EQ(*svg, charts::BarChart({{"catalog", 12, "12 of 20", false}, {"serverInfo", 8, "", true}},
                                   "Refusals <by step>", 20));
  EXPECT_NE(svg->find("Refusals &lt;by step&gt;"), std::string::npos);
}

TEST(ChartSpecTest, RefusesAMalformedDescriptionNamingTheMember) {
  const auto refused = [](json::Value spec, const std::string& pointer) {
    auto svg = BarChartFromSpec(spec);
    ASSERT_FALSE(svg.ok());
    EXPECT_EQ(svg.error().code, "evidence.chart_invalid");
    EXPECT_EQ(svg.error().pointer, pointer);
  };
  refused(json::Value::array(), "");
  json::Value spec = Spec();
  spec.erase("title");
  refused(spec, "/title");
  spec = Spec();
  spec["bars"][1]["value"] = -1;
  refused(spec, "/bars/1/value");
  spec = Spec();
  spec["bars"][0]["label"] = 3;
  refused(spec, "/bars/0/label");
  spec = Spec();
  spec["bars"][0]["alert"] = "yes";
  refused(spec, "/bars/0/alert");
  spec = Spec();
  spec["maximum"] = "20";
  refused(spec, "/maximum");
}

}  // namespace
}  // namespace udon::evidence
