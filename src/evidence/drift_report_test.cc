#include "evidence/drift_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "evidence/drift_gate.h"
#include "manifest/drift_kind.h"
#include "test_support.h"

namespace udon::evidence {
namespace {

const char* kPrivateText = "PRIVATE-DESCRIPTION-TEXT";

json::Value Tool(const std::string& name, const std::string& description) {
  return {{"name", name},
          {"description", description + " " + kPrivateText},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"path", {{"type", "string"}}}}},
            {"required", {"path"}},
            {"additionalProperties", false}}}};
}

json::Value ManifestJson(const std::string& version, const std::vector<json::Value>& tools,
                         const std::string& key = "demo", const std::string& captured = "2026-08-30T12:00:00Z") {
  json::Value doc = {{"profile", "openudon.mcp-tool-manifest.0.1"},
                     {"protocolVersion", "2025-11-25"},
                     {"capturedAt", captured},
                     {"expiresAt", "2026-09-06T12:00:00Z"},
                     {"servers", json::Value::object()}};
  doc["servers"][key] = {{"serverInfo", {{"name", "demo-server"}, {"version", version}}},
                         {"toolPages", json::Value::array({{{"tools", tools}}})}};
  return doc;
}

SeriesManifest Entry(const std::string& label, json::Value doc) {
  auto m = manifest::Manifest::FromValue(std::move(doc));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().Describe());
  return {label, std::move(m).value()};
}

// Seven releases whose every answer is known:
//   0 -> 1  a's description reworded, version unchanged (stale)
//   1 -> 2  a's inputSchema gains a property description (documentation only), new version
//   2 -> 3  a's inputSchema gains an optional property (widened: additionalProperties is false),
//           b gains annotations; new version
//   3 -> 4  the same tools in another order; new version
//   4 -> 5  d added, c removed, b gains _meta; version unchanged (stale)
//   5 -> 6  only serverInfo.version and the capture instant change
std::vector<SeriesManifest> KnownSeries() {
  json::Value a = Tool("a", "Reads a file."), b = Tool("b", "Writes a file."), c = Tool("c", "Lists files.");
  std::vector<SeriesManifest> series;
  series.push_back(Entry("1.0.0", ManifestJson("1.0.0", {a, b, c})));
  a["description"] = std::string("Reads one file. ") + kPrivateText;
  series.push_back(Entry("1.0.1", ManifestJson("1.0.0", {a, b, c})));
  a["inputSchema"]["properties"]["path"]["description"] = "where";
  series.push_back(Entry("1.1.0", ManifestJson("1.1.0", {a, b, c})));
  a["inputSchema"]["properties"]["encoding"] = {{"type", "string"}};
  b["annotations"] = {{"readOnlyHint", false}};
  series.push_back(Entry("1.2.0", ManifestJson("1.2.0", {a, b, c})));
  series.push_back(Entry("1.3.0", ManifestJson("1.3.0", {c, b, a})));
  b["_meta"] = {{"vendor", "x"}};
  const json::Value d = Tool("d", "Deletes a file.");
  series.push_back(Entry("1.3.1", ManifestJson("1.3.0", {d, b, a})));
  series.push_back(Entry("1.4.0", ManifestJson("1.4.0", {d, b, a}, "demo", "2026-08-31T12:00:00Z")));
  return series;
}

json::Value Report(const std::vector<SeriesManifest>& series, bool show = false) {
  auto report = BuildDriftReport(series, {"", show});
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().Describe());
  return report.ok() ? *report : json::Value();
}

int Refused(const json::Value& report, const std::string& rule) {
  for (const json::Value& r : report["rules"]) {
    if (r["rule"] == rule) return r["refusedPairs"].get<int>();
  }
  ADD_FAILURE() << "no rule " << rule;
  return -1;
}

TEST(DriftReportTest, EachRuleRefusesTheKnownNumberOfPairs) {
  const json::Value report = Report(KnownSeries());
  EXPECT_EQ(report["profile"], "udon-mcp.drift-report.0.1");
  ASSERT_EQ(report["pairs"].size(), 6u);
  EXPECT_EQ(Refused(report, "exact"), 5);
  EXPECT_EQ(Refused(report, "ignore_documentation"), 4);  // 1 -> 2 was documentation only
  EXPECT_EQ(Refused(report, "ignore_annotations"), 5);    // 2 -> 3 also widened
  EXPECT_EQ(Refused(report, "ignore_meta_icons"), 5);     // 4 -> 5 also added and removed
  EXPECT_EQ(Refused(report, "ignore_order"), 4);          // 3 -> 4 was order only
  EXPECT_EQ(Refused(report, "accept_widened_input"), 5);  // 2 -> 3 also annotations
  EXPECT_EQ(Refused(report, "all_relaxations"), 2);       // a description, a catalog change
  for (const json::Value& rule : report["rules"]) {
    EXPECT_EQ(rule["pairs"], 6);
    EXPECT_EQ(rule["avoidedRefusals"].get<int>(), 5 - rule["refusedPairs"].get<int>());
  }
  // The same verdicts pair by pair.
  EXPECT_EQ(report["pairs"][1]["refusedBy"]["ignore_documentation"], false);
  EXPECT_EQ(report["pairs"][1]["refusedBy"]["exact"], true);
  EXPECT_EQ(report["pairs"][3]["refusedBy"]["ignore_order"], false);
  EXPECT_EQ(report["pairs"][0]["refusedBy"]["all_relaxations"], true);
  EXPECT_EQ(report["pairs"][5]["refusedBy"]["exact"], false);
}

TEST(DriftReportTest, KindsAreCountedPerDifferenceAndPerTool) {
  const json::Value report = Report(KnownSeries());
  const json::Value& pairs = report["pairs"];
  EXPECT_EQ(pairs[0]["kinds"], json::Value({{"tool.description", 1}}));
  EXPECT_EQ(pairs[1]["kinds"], json::Value({{"input_schema.documentation", 1}, {"server.info.version", 1}}));
  EXPECT_EQ(pairs[2]["kinds"]["input_schema.widened"], 1);
  EXPECT_EQ(pairs[2]["kinds"]["tool.annotations"], 1);
  EXPECT_EQ(pairs[2]["toolKinds"]["tool.annotations.readOnlyHint"], 1);
  EXPECT_EQ(pairs[3]["kinds"]["catalog.order"], 1);
  EXPECT_EQ(pairs[4]["kinds"]["tool.added"], 1);
  EXPECT_EQ(pairs[4]["kinds"]["tool.removed"], 1);
  EXPECT_EQ(pairs[4]["kinds"]["tool._meta"], 1);
  // The capture instants differ in any two captures: not counted.
  EXPECT_EQ(pairs[5]["kinds"], json::Value({{"server.info.version", 1}}));
  EXPECT_EQ(pairs[5]["differences"], 1);
  EXPECT_EQ(pairs[5]["catalogChanged"], false);
  EXPECT_EQ(report["kindTotals"]["server.info.version"]["pairs"], 4);
  EXPECT_EQ(report["series"][2]["serverVersion"], "1.1.0");
  EXPECT_EQ(report["series"][5]["toolCount"], 3);
  EXPECT_EQ(report["series"][0]["manifestSha256"].get<std::string>().size(), 64u);
}

TEST(DriftReportTest, SaysWhetherTheVersionIdentifiesTheCatalog) {
  const json::Value v = Report(KnownSeries())["versionIdentifiesCatalog"];
  EXPECT_EQ(v["pairs"], 6);
  EXPECT_EQ(v["catalogChanged"], 5);
  EXPECT_EQ(v["catalogChangedVersionUnchanged"], 2);  // 0 -> 1 and 4 -> 5
  EXPECT_EQ(v["catalogChangedVersionChanged"], 3);
  EXPECT_EQ(v["versionChangedCatalogUnchanged"], 1);  // 5 -> 6
}

TEST(DriftReportTest, KindTotalsCountThePairsOfKindsSeenOnlyPerTool) {
  // 2 -> 3: b's annotations object is new, so its hint is a tool kind only.
  const json::Value totals = Report(KnownSeries())["kindTotals"];
  EXPECT_EQ(totals["tool.annotations.readOnlyHint"]["tools"], 1);
  EXPECT_EQ(totals["tool.annotations.readOnlyHint"]["pairs"], 1);
  for (auto it = totals.begin(); it != totals.end(); ++it) EXPECT_GE(it.value()["pairs"], 1) << it.key();
}

// The gate's verdict on a manifest reviewed for one release with the next one live: step 3
// refuses every call on any serverInfo difference; steps 4 and 5 only the calls of tools
// that changed or went missing; an order change or an added tool refuses nothing.
TEST(DriftReportTest, GateVerdictsAreTheGatesStepByStep) {
  const json::Value report = Report(KnownSeries());
  const json::Value& pairs = report["pairs"];
  EXPECT_EQ(pairs[0]["gate"]["refusedAt"], "catalog");  // a reworded, version stale
  EXPECT_EQ(pairs[0]["gate"]["toolsRefused"], 1);
  EXPECT_EQ(pairs[0]["gate"]["toolRefusals"], json::Value({{"catalog.tool_drift", 1}}));
  for (int i : {1, 2, 3, 5}) {
    EXPECT_EQ(pairs[i]["gate"]["refusedAt"], "server_info") << i;
    EXPECT_EQ(pairs[i]["gate"]["serverInfoMembers"], json::Value::array({"version"})) << i;
  }
  EXPECT_EQ(pairs[3]["gate"]["toolsRefused"], 0);  // the order alone refuses no call
  EXPECT_EQ(pairs[3]["gate"]["serverInfoRules"]["ignore_version"], nullptr);
  EXPECT_EQ(pairs[1]["gate"]["serverInfoRules"]["ignore_version"], "catalog");
  EXPECT_EQ(pairs[4]["gate"]["refusedAt"], "catalog");  // c removed, b's _meta; d added refuses nothing
  EXPECT_EQ(pairs[4]["gate"]["toolRefusals"],
            json::Value({{"catalog.tool_drift", 1}, {"catalog.tool_missing", 1}}));
  EXPECT_EQ(pairs[4]["gate"]["toolsReviewed"], 3);
  EXPECT_EQ(pairs[5]["gate"]["serverInfoRules"]["name_only"], nullptr);
  const json::Value& gate = report["gate"];
  EXPECT_EQ(gate["refusedPairs"], 6);
  EXPECT_EQ(gate["refusedAt"], json::Value({{"protocol_version", 0}, {"server_info", 4}, {"catalog", 2}}));
  EXPECT_EQ(gate["serverInfoMembers"], json::Value({{"version", 4}}));
  EXPECT_EQ(gate["toolsReviewed"], 18);
  EXPECT_EQ(gate["toolsRefused"], 6);  // a three times, b twice, c once
  EXPECT_EQ(gate["serverInfoRules"][1], json::Value({{"rule", "ignore_version"}, {"refusedPairs", 4}, {"avoidedRefusals", 2}}));
}

// The gate asks for the reviewed revision: a later release whose newest revision is newer
// answers the reviewed one; one whose newest is older cannot.
TEST(DriftReportTest, RenderingsCarryTheGatesSteps) {
  const json::Value report = Report(KnownSeries());
  const std::string md = DriftReportMarkdown(report);
  EXPECT_NE(md.find("## What the gate refuses"), std::string::npos);
  EXPECT_NE(md.find("| refused at server_info | 4 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| refused with serverInfo rule ignore_version | 4 |"), std::string::npos);
  EXPECT_NE(DriftReportHtml(report).find("Pairs refused, by the first refusing step"), std::string::npos);
}

TEST(DriftReportTest, GateVerdictsNegotiateTheReviewedRevision) {
  const json::Value a = Tool("a", "Reads a file.");
  json::Value older = ManifestJson("1.0.0", {a}), newer = ManifestJson("1.0.0", {a});
  older["protocolVersion"] = "2025-06-18";
  const json::Value up = Report({Entry("1", older), Entry("2", newer)})["pairs"][0]["gate"];
  EXPECT_EQ(up["capturedProtocolVersionsDiffer"], true);
  EXPECT_EQ(up["refusedAt"], nullptr);
  const json::Value down = Report({Entry("2", newer), Entry("3", older)})["pairs"][0]["gate"];
  EXPECT_EQ(down["refusedAt"], "protocol_version");
  EXPECT_EQ(NegotiatedRevision("2025-06-18", "2025-11-25"), "2025-06-18");
  EXPECT_EQ(NegotiatedRevision("2025-11-25", "2025-06-18"), "2025-06-18");
}

TEST(DriftReportTest, WarnsWhenTheSeriesNamesDifferentServers) {
  const json::Value a = Tool("a", "Reads a file.");
  json::Value other = ManifestJson("1.0.0", {a});
  other["servers"]["demo"]["serverInfo"]["name"] = "other\x1b[31m";
  EXPECT_TRUE(SeriesWarnings(Report(KnownSeries())).empty());
  const std::vector<std::string> warnings =
      SeriesWarnings(Report({Entry("1", ManifestJson("1.0.0", {a})), Entry("2", other)}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("demo-server -> other"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].find('\x1b'), std::string::npos);
}

json::Value HistoryOf(const json::Value& report, const std::string& name) {
  for (const json::Value& tool : report["tools"]) {
    if (tool["name"] == name) return tool["history"];
  }
  return nullptr;
}

TEST(DriftReportTest, EachToolHasItsHistory) {
  const json::Value report = Report(KnownSeries());
  ASSERT_EQ(report["tools"].size(), 4u);
  const json::Value a = HistoryOf(report, "a");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0], json::Value({{"index", 0}, {"event", "added"}}));
  EXPECT_EQ(a[1]["index"], 1);
  EXPECT_EQ(a[1]["event"], "changed");
  EXPECT_EQ(a[1]["kinds"], json::Value({"tool.description"}));
  EXPECT_EQ(a[1]["pointers"], json::Value({"/description"}));
  EXPECT_EQ(a[2]["kinds"], json::Value({"input_schema.documentation"}));
  EXPECT_EQ(a[3]["kinds"], json::Value({"input_schema.widened"}));
  const json::Value b = HistoryOf(report, "b");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[1]["kinds"], json::Value({"tool.annotations", "tool.annotations.readOnlyHint"}));
  EXPECT_EQ(b[2]["index"], 5);
  EXPECT_EQ(b[2]["kinds"], json::Value({"tool._meta"}));
  EXPECT_EQ(HistoryOf(report, "c"), json::Value::parse(R"([{"index":0,"event":"added"},{"index":5,"event":"removed"}])"));
  EXPECT_EQ(HistoryOf(report, "d"), json::Value::parse(R"([{"index":5,"event":"added"}])"));
}

TEST(DriftReportTest, ARenameIsARemovalAndAnAdditionThatNameEachOther) {
  json::Value e = Tool("e", "Echoes."), f = e;
  f["name"] = "f";
  const json::Value report =
      Report({Entry("1", ManifestJson("1", {e})), Entry("2", ManifestJson("2", {f}, "renamed_key"))});
  EXPECT_EQ(report["pairs"][0]["kinds"], json::Value({{"server.info.version", 1}, {"tool.renamed", 1}}));
  EXPECT_EQ(HistoryOf(report, "e")[1], json::Value({{"index", 1}, {"event", "removed"}, {"renamedTo", "f"}}));
  EXPECT_EQ(HistoryOf(report, "f")[0], json::Value({{"index", 1}, {"event", "added"}, {"renamedFrom", "e"}}));
  // Another server key in the second capture is not drift: each manifest's one server counts.
  EXPECT_FALSE(report["pairs"][0]["kinds"].contains("server.added"));
}

TEST(DriftReportTest, DescriptionsAppearOnlyWithShowAndEscaped) {
  std::vector<SeriesManifest> series = KnownSeries();
  for (const bool show : {false, true}) {
    const json::Value report = Report(series, show);
    const std::string outputs[] = {report.dump(), DriftReportMarkdown(report), DriftReportHtml(report)};
    for (const std::string& output : outputs) {
      EXPECT_EQ(output.find(kPrivateText) != std::string::npos, show) << output.substr(0, 200);
      EXPECT_EQ(output.find("Reads one file") != std::string::npos, show);
    }
  }
  // A hidden code point in a description is shown as a marker, never raw.
  json::Value g = Tool("g", "Plain."), g2 = Tool("g", "Plain \xE2\x80\xAE reversed.");
  const json::Value report = Report({Entry("1", ManifestJson("1", {g})), Entry("2", ManifestJson("1", {g2}))}, true);
  const json::Value& change = report["pairs"][0]["descriptions"][0];
  EXPECT_EQ(change["tool"], "g");
  EXPECT_EQ(change["hiddenCodePoints"], 1);
  EXPECT_NE(change["after"].get<std::string>().find("<U+202E>"), std::string::npos);
  for (const std::string& output : {report.dump(), DriftReportMarkdown(report), DriftReportHtml(report)}) {
    EXPECT_EQ(output.find("\xE2\x80\xAE"), std::string::npos);
  }
}

TEST(DriftReportTest, RenderingsCarryTheRuleTableAndEscapeNames) {
  json::Value h = Tool("h", "x"), evil = Tool("<b>|evil\xE2\x80\x8B", "y");
  const json::Value report =
      Report({Entry("1", ManifestJson("1", {h})), Entry("2", ManifestJson("2", {h, evil}))});
  const std::string md = DriftReportMarkdown(report), html = DriftReportHtml(report);
  EXPECT_NE(md.find("| `all_relaxations` |"), std::string::npos);
  EXPECT_NE(md.find("&lt;b&gt;\\|evil&lt;U+200B&gt;"), std::string::npos) << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;|evil&lt;U+200B&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("Pairs still refused, by rule"), std::string::npos);
}

TEST(DriftReportTest, ThePairTableNamesTheRulesThatWouldLetAPairThrough) {
  const json::Value report = Report(KnownSeries());
  const std::string md = DriftReportMarkdown(report), html = DriftReportHtml(report);
  EXPECT_NE(md.find("| 1.0.0 | 1.0.1 | yes | no | 1 | tool.description: 1 | none |"), std::string::npos) << md;
  EXPECT_NE(md.find("| catalog.order: 1, server.info.version: 1 | ignore_order, all_relaxations |"),
            std::string::npos);
  EXPECT_NE(md.find("| server.info.version: 1 | catalog unchanged |"), std::string::npos);
  EXPECT_NE(html.find("<td>ignore_order, all_relaxations</td>"), std::string::npos);
  EXPECT_NE(md.find("2 of those serverInfo.version stayed the same"), std::string::npos);
}

TEST(DriftReportTest, RefusesWhatItCannotReport) {
  auto one = BuildDriftReport({Entry("1", ManifestJson("1", {}))}, {});
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().code, "usage.invalid");
  json::Value two_servers = ManifestJson("1", {});
  two_servers["servers"]["other"] = two_servers["servers"]["demo"];
  auto several = BuildDriftReport({Entry("1", two_servers), Entry("2", ManifestJson("2", {}))}, {});
  ASSERT_FALSE(several.ok());
  EXPECT_EQ(several.error().code, "usage.invalid");
  EXPECT_TRUE(BuildDriftReport({Entry("1", two_servers), Entry("2", ManifestJson("2", {}))}, {"demo", false}).ok());
  auto unknown = BuildDriftReport({Entry("1", ManifestJson("1", {})), Entry("2", ManifestJson("2", {}))}, {"nope", false});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, "manifest.server_unknown");
  EXPECT_EQ(unknown.error().details["index"], 0);
}

TEST(DriftReportTest, RulesMatchKindsByNameOrDottedPrefix) {
  const DriftRule& annotations = DriftRules()[2];
  EXPECT_EQ(annotations.name, "ignore_annotations");
  EXPECT_TRUE(RuleIgnores(annotations, "tool.annotations"));
  EXPECT_TRUE(RuleIgnores(annotations, "tool.annotations.readOnlyHint"));
  EXPECT_FALSE(RuleIgnores(annotations, "tool.annotationsX"));
  EXPECT_FALSE(RuleIgnores(DriftRules()[0], "tool.description"));
  EXPECT_FALSE(RuleIgnores(DriftRules().back(), "tool.description"));  // a description is a prompt
  EXPECT_TRUE(RuleIgnores(DriftRules().back(), "catalog.pages"));
  EXPECT_TRUE(IsCatalogKind("catalog.occurrences"));
  EXPECT_FALSE(IsCatalogKind("server.info.version"));
  EXPECT_FALSE(IsCatalogKind("review.changed"));
}

TEST(DriftReportTest, EveryRuleIgnoresKindsOfTheClosedListAndTheContractNamesIt) {
  const std::vector<std::string>& kinds = manifest::DriftKinds();
  std::ifstream stream(std::filesystem::path(UDON_SOURCE_DIR) / "docs" / "contract.md");
  std::stringstream contract;
  contract << stream.rdbuf();
  const std::string text = contract.str();
  const std::size_t section = text.find("### 7.20");
  ASSERT_NE(section, std::string::npos);
  for (const DriftRule& rule : DriftRules()) {
    EXPECT_NE(text.find("`" + rule.name + "`", section), std::string::npos) << rule.name;
    for (const std::string& ignored : rule.ignored) {
      EXPECT_NE(std::find(kinds.begin(), kinds.end(), ignored), kinds.end()) << ignored;
      EXPECT_TRUE(IsCatalogKind(ignored)) << ignored;
    }
  }
}

TEST(DriftReportTest, ReadsASeriesIndex) {
  testing::TempDir dir;
  dir.Write("index.json", R"({"series": [{"file": "a.tools.json", "label": "1.0.0"}, {"file": "b.tools.json"}],
                             "package": "x"})");
  auto files = ReadSeriesIndex(dir.path());
  ASSERT_TRUE(files.ok()) << files.error().Describe();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, dir.File("a.tools.json"));
  EXPECT_EQ((*files)[0].label, "1.0.0");
  EXPECT_EQ((*files)[1].label, "b");
  for (const char* bad : {R"({"series": [{"file": "../x.json"}]})", R"({"series": [{"file": "/etc/x"}]})",
                          R"({"series": [{"label": "1"}]})", R"({"series": {}})", R"([])",
                          R"({"series": [{"file": "a/../../x"}]})", R"({"series": [{"file": "a", "label": 1}]})"}) {
    dir.Write("index.json", bad);
    auto refused = ReadSeriesIndex(dir.path());
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, "evidence.index_invalid") << bad;
  }
  dir.Write("index.json", "{");
  EXPECT_EQ(ReadSeriesIndex(dir.path()).error().code, "json.syntax");
  EXPECT_EQ(ReadSeriesIndex(dir.File("missing")).error().code, "io.unreadable");
  EXPECT_EQ(LabelForFile("data/pkg/2.0.1.tools.json"), "2.0.1");
  EXPECT_EQ(LabelForFile("x.json"), "x");
}

}  // namespace
}  // namespace udon::evidence
