#include "trust/render.h"

#include <gtest/gtest.h>

#include "trust/internal/test_documents.h"
#include "trust/mcp_resolver.h"

namespace udon::trust {
namespace {

Report Golden(json::Value& root) {
  auto document = internal::ToDocument(internal::GoldenDocument());
  EXPECT_TRUE(document.ok());
  root = document->root;
  const McpResolver resolver;
  auto report = Analyze(*document, {&resolver});
  EXPECT_TRUE(report.ok());
  return *report;
}

TEST(RenderText, ListsFindingsAndEdges) {
  json::Value root;
  const std::string text = RenderText(Golden(root));
  EXPECT_NE(text.find("findings: 1 (1 high, 0 warning)"), std::string::npos);
  EXPECT_NE(text.find("content_trust.untrusted_authority  operations[2].request.body.target"), std::string::npos);
  EXPECT_NE(text.find("workflows[0].steps[0].outputs.body -> workflows[0].steps[1].inputs.prompt  "
                      "[untrusted, free_text]"),
            std::string::npos);
}

TEST(RenderDot, DrawsStepsAndOperationsWithColouredFlows) {
  json::Value root;
  const std::string dot = RenderDot(Golden(root), root);
  EXPECT_EQ(dot.rfind("digraph content_trust {", 0), 0u);
  EXPECT_NE(dot.find("\"operations[2]\" [label=\"operation send\\n! untrusted_authority\", "
                     "shape=box, peripheries=2, color=red]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"workflows[0].steps[0]\" [label=\"step read_step\""), std::string::npos);
  EXPECT_NE(dot.find("\"workflows[0].steps[0]\" -> \"workflows[0].steps[1]\" [label=\"inputs.prompt\\nfree_text\", "
                     "color=red"),
            std::string::npos)
      << dot;
  EXPECT_EQ(dot.back(), '\n');
}

TEST(RenderDot, QuotesAwkwardNames) {
  Report report;
  report.edges.push_back({"$steps.a\"b.outputs.c", "results[0].value", "unknown", "unknown"});
  const std::string dot = RenderDot(report, json::Value::object());
  EXPECT_NE(dot.find("\"$steps.a\\\"b.outputs.c\" -> \"results[0]\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("color=orange"), std::string::npos);
}

}  // namespace
}  // namespace udon::trust
