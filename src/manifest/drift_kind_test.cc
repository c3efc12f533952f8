#include "manifest/drift_kind.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "manifest/diff.h"
#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::RenderToolOf;
using internal::ValidManifestJson;
using Strings = std::vector<std::string>;

json::Value& Server(json::Value& doc) { return doc["servers"]["blender_farm"]; }

json::Value Report(const json::Value& after) {
  const auto before_m = *Manifest::FromValue(ValidManifestJson());
  const auto after_m = *Manifest::FromValue(after);
  return DiffToJson(DiffManifests(before_m, after_m), before_m, after_m);
}

// The kinds of render_turntable once edit has changed it.
Strings ToolKindsAfter(const std::function<void(json::Value&)>& edit) {
  json::Value after = ValidManifestJson();
  edit(RenderToolOf(after));
  const json::Value report = Report(after);
  for (const json::Value& tool : report["servers"][0]["tools"]) {
    if (tool["name"] == "render_turntable") return tool["kinds"].get<Strings>();
  }
  return {};
}

TEST(DriftKindTest, SchemasAreClassifiedAsAWhole) {
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["inputSchema"]["properties"]["angles"]["maximum"] = 360; }),
            Strings{"input_schema.widened"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["inputSchema"]["required"].push_back("options"); }),
            Strings{"input_schema.narrowed"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["inputSchema"]["properties"]["angles"]["description"] = "views"; }),
            Strings{"input_schema.documentation"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["inputSchema"]["properties"]["source"]["pattern"] = "^blend:"; }),
            Strings{"input_schema.restructured"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) {
              t["inputSchema"]["properties"]["angles"]["maximum"] = 360;  // wider
              t["inputSchema"]["required"].push_back("options");          // narrower
            }),
            Strings{"input_schema.restructured"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) {
              t["outputSchema"]["required"] = json::Value::array();
              t["description"] = "Render views.";
            }),
            (Strings{"output_schema.widened", "tool.description"}));
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t.erase("outputSchema"); }), Strings{"output_schema.removed"});
}

TEST(DriftKindTest, EveryDifferenceOfASchemaCarriesTheSchemasKind) {
  json::Value after = ValidManifestJson();
  RenderToolOf(after)["inputSchema"]["properties"]["angles"]["maximum"] = 360;
  RenderToolOf(after)["inputSchema"]["properties"]["resolution"]["enum"].push_back(8192);
  RenderToolOf(after)["title"] = "Render";
  const json::Value tool = Report(after)["servers"][0]["tools"][0];
  ASSERT_EQ(tool["differences"].size(), 3u) << tool.dump();
  for (const json::Value& d : tool["differences"]) {
    const bool schema = d["area"] == "inputSchema";
    EXPECT_EQ(d["kind"], schema ? "input_schema.widened" : "tool.title") << d.dump();
  }
}

TEST(DriftKindTest, AnnotationsByHint) {
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["annotations"] = {{"readOnlyHint", true}, {"x", 1}}; }),
            (Strings{"tool.annotations", "tool.annotations.other", "tool.annotations.readOnlyHint"}));
  json::Value before = ValidManifestJson();
  RenderToolOf(before)["annotations"] = {{"destructiveHint", false}, {"title", "R"}};
  json::Value after = before;
  RenderToolOf(after)["annotations"]["destructiveHint"] = true;
  RenderToolOf(after)["annotations"]["title"] = "Render";
  const auto before_m = *Manifest::FromValue(before);
  const auto after_m = *Manifest::FromValue(after);
  const json::Value tool = DiffToJson(DiffManifests(before_m, after_m), before_m, after_m)["servers"][0]["tools"][0];
  EXPECT_EQ(tool["kinds"], json::Value({"tool.annotations.destructiveHint", "tool.annotations.title"}));
  EXPECT_EQ(tool["differences"][0]["kind"], "tool.annotations.destructiveHint");
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["_meta"] = {{"k", 1}}; }), Strings{"tool._meta"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["execution"] = {{"taskSupport", "optional"}}; }),
            Strings{"tool.execution"});
  EXPECT_EQ(ToolKindsAfter([](json::Value& t) { t["somethingNew"] = 1; }), Strings{"tool.other"});
}

TEST(DriftKindTest, ServerCatalogAndTopLevel) {
  json::Value after = ValidManifestJson();
  after["protocolVersion"] = "2025-06-18";
  after["capturedAt"] = "2026-08-31T12:00:00Z";
  Server(after)["serverInfo"]["version"] = "0.8.3";
  Server(after)["serverInfo"]["websiteUrl"] = "https://example.test";
  Server(after)["reviews"]["render_turntable"]["notes"] = "x";
  auto& pages = Server(after)["toolPages"];
  pages[1]["tools"][0]["name"] = "list_assets_v2";  // renamed
  pages[1]["tools"].push_back({{"name", "new_tool"}, {"inputSchema", {{"type", "object"}}}});
  after["servers"]["other"] = Server(after);
  const json::Value report = Report(after);
  EXPECT_EQ(report["topLevel"][0]["kind"], "manifest.captured_at");
  EXPECT_EQ(report["topLevel"][1]["kind"], "server.protocol_version");
  const json::Value& server = report["servers"][0];
  EXPECT_EQ(server["serverInfo"][0]["kind"], "server.info.version");
  EXPECT_EQ(server["serverInfo"][1]["kind"], "server.info.other");
  EXPECT_EQ(server["tools"][0]["kinds"], json::Value({"tool.renamed"}));
  EXPECT_EQ(server["tools"][1]["kinds"], json::Value({"tool.added"}));
  EXPECT_EQ(server["kinds"], json::Value({"review.changed", "server.info.other", "server.info.version",
                                          "tool.added", "tool.renamed"}));
  EXPECT_EQ(report["servers"][1]["kinds"], json::Value({"server.added"}));
  EXPECT_EQ(report["kinds"], json::Value({"manifest.captured_at", "review.changed", "server.added",
                                          "server.info.other", "server.info.version", "server.protocol_version",
                                          "tool.added", "tool.renamed"}));
}

TEST(DriftKindTest, OrderAndPagination) {
  json::Value repaged = ValidManifestJson();
  auto& pages = Server(repaged)["toolPages"];
  pages[1]["tools"].insert(pages[1]["tools"].begin(), pages[0]["tools"][0]);
  pages.erase(0);  // one page, same order
  EXPECT_EQ(Report(repaged)["servers"][0]["kinds"], json::Value({"catalog.pages"}));
  json::Value reordered = ValidManifestJson();
  auto& moved = Server(reordered)["toolPages"];
  moved[1]["tools"].push_back(moved[0]["tools"][0]);
  moved[0]["tools"].clear();  // same pages, other order
  EXPECT_EQ(Report(reordered)["servers"][0]["kinds"], json::Value({"catalog.order"}));
  json::Value twice = ValidManifestJson();
  Server(twice)["toolPages"][1]["tools"].push_back(RenderToolOf(twice));
  EXPECT_EQ(Report(twice)["servers"][0]["tools"][0]["kinds"], json::Value({"catalog.occurrences"}));
}

TEST(DriftKindTest, TextNamesKindsPerReportAndTool) {
  json::Value after = ValidManifestJson();
  RenderToolOf(after)["inputSchema"]["properties"]["angles"]["maximum"] = 360;
  Server(after)["serverInfo"]["version"] = "0.8.3";
  const auto before_m = *Manifest::FromValue(ValidManifestJson());
  const auto after_m = *Manifest::FromValue(after);
  const std::string text = DiffToText(DiffManifests(before_m, after_m), before_m, after_m);
  EXPECT_EQ(text.rfind("kinds: input_schema.widened, server.info.version\n", 0), 0u) << text;
  EXPECT_NE(text.find("  tool render_turntable: changed\n    kinds: input_schema.widened\n"), std::string::npos)
      << text;
}

TEST(DriftKindTest, TheContractListsEveryKind) {
  std::ifstream stream(std::filesystem::path(UDON_SOURCE_DIR) / "docs" / "contract.md");
  std::stringstream contract;
  contract << stream.rdbuf();
  for (const std::string& kind : DriftKinds()) {
    EXPECT_NE(contract.str().find("`" + kind + "`"), std::string::npos) << kind;
  }
}

}  // namespace
}  // namespace udon::manifest
