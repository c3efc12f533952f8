#include "manifest/diff.h"

#include <gtest/gtest.h>

#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::RenderToolOf;
using internal::ValidManifestJson;

ManifestDiff DiffDocs(const json::Value& a, const json::Value& b) {
  return DiffManifests(*Manifest::FromValue(a), *Manifest::FromValue(b));
}

TEST(ManifestDiffTest, IdenticalManifests) {
  ManifestDiff diff = DiffDocs(ValidManifestJson(), ValidManifestJson());
  EXPECT_TRUE(diff.identical());
  EXPECT_EQ(DiffToText(diff, *Manifest::FromValue(ValidManifestJson()),
                       *Manifest::FromValue(ValidManifestJson())),
            "identical\n");
}

TEST(ManifestDiffTest, ReportsToolPointersWithValues) {
  json::Value after = ValidManifestJson();
  RenderToolOf(after)["description"] = "Render views.\nNow also uploads them.";
  RenderToolOf(after)["inputSchema"]["properties"]["angles"]["maximum"] = 360;
  ManifestDiff diff = DiffDocs(ValidManifestJson(), after);
  ASSERT_EQ(diff.servers.size(), 1u);
  ASSERT_EQ(diff.servers[0].tools.size(), 1u);
  const ToolDiff& tool = diff.servers[0].tools[0];
  EXPECT_EQ(tool.name, "render_turntable");
  ASSERT_EQ(tool.differences.size(), 2u);
  EXPECT_EQ(tool.differences[0].pointer, "/description");
  EXPECT_EQ(tool.differences[1].pointer, "/inputSchema/properties/angles/maximum");

  auto before_m = *Manifest::FromValue(ValidManifestJson());
  auto after_m = *Manifest::FromValue(after);
  json::Value report = DiffToJson(diff, before_m, after_m);
  const json::Value& change = report["servers"][0]["tools"][0]["differences"][1];
  EXPECT_EQ(change["old"], 36);
  EXPECT_EQ(change["new"], 360);
  EXPECT_EQ(change["area"], "inputSchema");
  const std::string text = DiffToText(diff, before_m, after_m);
  EXPECT_NE(text.find("- Render reviewed views from an addressable Blender asset."), std::string::npos);
  EXPECT_NE(text.find("+ Now also uploads them."), std::string::npos);
  EXPECT_NE(text.find("/inputSchema/properties/angles/maximum: 36 -> 360"), std::string::npos);
}

TEST(ManifestDiffTest, TextNamesHiddenCharactersAndJsonKeepsThemExact) {
  const std::string rlo = "\xE2\x80\xAE", zwsp = "\xE2\x80\x8B", tag_a = "\xF3\xA0\x81\x81";
  json::Value after = ValidManifestJson();
  RenderToolOf(after)["description"] = "Render views." + rlo + zwsp + tag_a + "\n\tindented";
  RenderToolOf(after)["inputSchema"]["properties"]["x" + rlo] = {{"type", "string"}};
  RenderToolOf(after)["title"] = "T\tab";  // a tab inside a one-line value
  after["servers"]["blender_farm"]["serverInfo"]["version"] = "0.8.2" + zwsp;
  after["servers"]["blender_farm"]["toolPages"][1]["tools"].push_back(
      {{"name", "new" + tag_a}, {"inputSchema", {{"type", "object"}}}});
  auto before_m = *Manifest::FromValue(ValidManifestJson());
  auto after_m = *Manifest::FromValue(after);
  const ManifestDiff diff = DiffManifests(before_m, after_m);
  const std::string text = DiffToText(diff, before_m, after_m);
  for (const std::string& raw : {rlo, zwsp, tag_a}) EXPECT_EQ(text.find(raw), std::string::npos) << text;
  for (const char* expected : {
           "  serverInfo /version changed: 0.8.2 -> 0.8.2<U+200B>\n"
           "    note: the new value held 1 hidden character (U+200B)\n",
           "  tool new<U+E0041>: added\n    note: the tool name held 1 hidden character (U+E0041)\n",
           "    changed /description:\n"
           "      - Render reviewed views from an addressable Blender asset.\n"
           "      + Render views.<U+202E><U+200B><U+E0041>\n"
           "      + \tindented\n"
           "      note: the new value held 3 hidden characters (U+202E, U+200B, U+E0041)\n",
           "    added /inputSchema/properties/x<U+202E>: (absent) -> {\"type\":\"string\"}\n"
           "      note: the pointer held 1 hidden character (U+202E)\n",
           "    added /title: (absent) -> T<U+0009>ab\n      note: the new value held 1 hidden character (U+0009)\n"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
  // --json keeps the exact values.
  const json::Value report = DiffToJson(diff, before_m, after_m);
  const json::Value& server = report["servers"][0];
  EXPECT_EQ(server["serverInfo"][0]["new"], "0.8.2" + zwsp);
  bool saw_pointer = false, saw_description = false, saw_name = false;
  for (const json::Value& tool : server["tools"]) {
    saw_name = saw_name || tool["name"] == "new" + tag_a;
    if (!tool.contains("differences")) continue;
    for (const json::Value& d : tool["differences"]) {
      saw_pointer = saw_pointer || d["pointer"] == "/inputSchema/properties/x" + rlo;
      saw_description = saw_description || (d["pointer"] == "/description" &&
                                            d["new"] == "Render views." + rlo + zwsp + tag_a + "\n\tindented");
    }
  }
  EXPECT_TRUE(saw_pointer && saw_description && saw_name) << report.dump();
}

TEST(ManifestDiffTest, AddedRemovedRenamedAndReordered) {
  json::Value after = ValidManifestJson();
  auto& pages = after["servers"]["blender_farm"]["toolPages"];
  pages[1]["tools"][0]["name"] = "list_assets_v2";  // rename, nothing else
  pages[1]["tools"].push_back({{"name", "new_tool"}, {"inputSchema", {{"type", "object"}}}});
  ManifestDiff diff = DiffDocs(ValidManifestJson(), after);
  ASSERT_EQ(diff.servers.size(), 1u);
  std::vector<std::string> seen;
  for (const auto& t : diff.servers[0].tools) {
    seen.push_back(t.name + ":" + ChangeStatusName(t.status) + ":" + t.renamed_from);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"list_assets_v2:renamed:list_assets", "new_tool:added:"}));

  json::Value moved = ValidManifestJson();
  auto& moved_pages = moved["servers"]["blender_farm"]["toolPages"];
  moved_pages[1]["tools"].push_back(moved_pages[0]["tools"][0]);
  moved_pages[0]["tools"].clear();
  ManifestDiff reorder = DiffDocs(ValidManifestJson(), moved);
  ASSERT_EQ(reorder.servers.size(), 1u);
  EXPECT_TRUE(reorder.servers[0].reordered);
  EXPECT_TRUE(reorder.servers[0].tools.empty());
}

TEST(ManifestDiffTest, ServerInfoProtocolAndReviews) {
  json::Value after = ValidManifestJson();
  after["protocolVersion"] = "2025-06-18";
  after["servers"]["blender_farm"]["serverInfo"]["version"] = "0.8.3";
  after["servers"]["blender_farm"]["reviews"]["render_turntable"]["notes"] = "x";
  ManifestDiff diff = DiffDocs(ValidManifestJson(), after);
  ASSERT_EQ(diff.top_level.size(), 1u);
  EXPECT_EQ(diff.top_level[0].pointer, "/protocolVersion");
  ASSERT_EQ(diff.servers.size(), 1u);
  ASSERT_EQ(diff.servers[0].server_info.size(), 1u);
  EXPECT_EQ(diff.servers[0].server_info[0].pointer, "/version");
  EXPECT_EQ(diff.servers[0].reviews_changed, std::vector<std::string>{"render_turntable"});
}

TEST(ManifestDiffTest, AreasClassifyPointers) {
  EXPECT_EQ(ToolChangeArea("/description"), "description");
  EXPECT_EQ(ToolChangeArea("/inputSchema/properties/a"), "inputSchema");
  EXPECT_EQ(ToolChangeArea("/_meta/x"), "_meta");
  EXPECT_EQ(ToolChangeArea("/annotations/readOnlyHint"), "annotations");
  EXPECT_EQ(ToolChangeArea("/somethingNew"), "other");
  EXPECT_EQ(ToolChangeArea("[occurrence 2]/title"), "title");
}

}  // namespace
}  // namespace udon::manifest

namespace udon::manifest {
namespace {

TEST(ManifestDiffTest, OnlyCaptureInstantsAreNotSignificantUnlessStrict) {
  json::Value later = ValidManifestJson();
  later["capturedAt"] = "2026-08-31T12:00:00Z";
  later["expiresAt"] = "2026-09-07T12:00:00Z";
  auto before_m = *Manifest::FromValue(ValidManifestJson());
  auto after_m = *Manifest::FromValue(later);
  const ManifestDiff instants = DiffManifests(before_m, after_m);
  EXPECT_FALSE(instants.identical());
  EXPECT_FALSE(instants.significant(false));
  EXPECT_TRUE(instants.significant(true));
  EXPECT_EQ(DiffToText(instants, before_m, after_m).rfind("only the capture instants differ", 0), 0u);

  later["protocolVersion"] = "2026-07-28";
  auto other_m = *Manifest::FromValue(later);
  EXPECT_TRUE(DiffManifests(before_m, other_m).significant(false));
  json::Value drifted = ValidManifestJson();
  RenderToolOf(drifted)["title"] = "Render";
  EXPECT_TRUE(DiffDocs(ValidManifestJson(), drifted).significant(false));
  EXPECT_FALSE(DiffDocs(ValidManifestJson(), ValidManifestJson()).significant(true));
}

TEST(ManifestDiffTest, RemovedMembersShowAsAbsentAndOldLinesComeFirst) {
  json::Value after = ValidManifestJson();
  RenderToolOf(after).erase("outputSchema");
  RenderToolOf(after)["description"] = "Render views.";
  auto before_m = *Manifest::FromValue(ValidManifestJson());
  auto after_m = *Manifest::FromValue(after);
  const std::string text = DiffToText(DiffManifests(before_m, after_m), before_m, after_m);
  EXPECT_NE(text.find("removed /outputSchema: {"), std::string::npos) << text;
  EXPECT_NE(text.find("} -> (absent)\n"), std::string::npos) << text;
  EXPECT_EQ(TextLineDiff("same\nold", "same\nnew"), "  same\n- old\n+ new\n");
  EXPECT_EQ(TextLineDiff("a", "b\nc"), "- a\n+ b\n+ c\n");
}

}  // namespace
}  // namespace udon::manifest
