// `udon-mcp evidence drift` on the committed series tests/data/drift/demo (five releases of
// the demo server's catalog, hand-made: a reworded description under a stale serverInfo
// version, a widened enum with a documentation edit, an added tool, a reordering): the
// three formats written, the numbers of the JSON report, descriptions only with --show,
// and the refusals' codes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

std::string Series() { return testing::SourceDir() + "/tests/data/drift/demo"; }

std::vector<std::string> SeriesFiles() {
  std::vector<std::string> files;
  for (const char* release : {"0.1.0", "0.1.1", "0.2.0", "0.3.0", "0.3.1"}) {
    files.push_back(Series() + "/" + release + ".tools.json");
  }
  return files;
}

ProcessResult Udon(std::vector<std::string> args) {
  args.insert(args.begin(), {testing::UdonMcpBinary(), "evidence", "drift"});
  return testing::RunProcess(args);
}

int RefusedPairs(const json::Value& report, const std::string& rule) {
  for (const json::Value& r : report["rules"]) {
    if (r["rule"] == rule) return r["refusedPairs"].get<int>();
  }
  return -1;
}

// A sentence of analyze_text's reworded description: never in a report without --show.
const char* kDescription = "Unicode code points";

TEST(DriftReportCliTest, WritesTheThreeFormatsFromAnIndexedDirectory) {
  TempDir out;
  ProcessResult run = Udon({Series(), "-o", out.File("r.md"), "-o", out.File("r.html"), "-o", out.File("r.json"),
                            "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const json::Value stdout_report = json::Parse(run.out).value();
  EXPECT_EQ(stdout_report["ok"], true);
  EXPECT_EQ(stdout_report["written"].size(), 3u);
  const json::Value report = json::Parse(out.Read("r.json")).value();
  EXPECT_EQ(report["profile"], "udon-mcp.drift-report.0.1");
  EXPECT_EQ(report["pairs"], stdout_report["pairs"]);
  ASSERT_EQ(report["series"].size(), 5u);
  EXPECT_EQ(report["series"][1]["label"], "0.1.1");
  EXPECT_EQ(report["series"][1]["serverVersion"], "0.1.0");  // stale
  EXPECT_EQ(report["series"][4]["toolCount"], 5);

  EXPECT_EQ(RefusedPairs(report, "exact"), 4);
  EXPECT_EQ(RefusedPairs(report, "ignore_documentation"), 4);
  EXPECT_EQ(RefusedPairs(report, "ignore_annotations"), 4);
  EXPECT_EQ(RefusedPairs(report, "ignore_meta_icons"), 4);
  EXPECT_EQ(RefusedPairs(report, "ignore_order"), 3);
  EXPECT_EQ(RefusedPairs(report, "accept_widened_input"), 4);
  EXPECT_EQ(RefusedPairs(report, "all_relaxations"), 2);
  EXPECT_EQ(report["versionIdentifiesCatalog"],
            json::Value::parse(R"({"pairs": 4, "catalogChanged": 4, "catalogChangedVersionUnchanged": 1,
                                   "catalogChangedVersionChanged": 3, "versionChangedCatalogUnchanged": 0})"));
  EXPECT_EQ(report["pairs"][0]["kinds"], json::Value({{"tool.description", 1}}));
  EXPECT_EQ(report["pairs"][1]["kinds"],
            json::Value({{"input_schema.documentation", 1}, {"input_schema.widened", 2}, {"server.info.version", 1}}));
  EXPECT_EQ(report["pairs"][1]["toolKinds"], json::Value({{"input_schema.documentation", 1}, {"input_schema.widened", 1}}));
  EXPECT_EQ(report["pairs"][2]["kinds"]["tool.added"], 1);
  EXPECT_EQ(report["pairs"][3]["kinds"]["catalog.order"], 1);
  EXPECT_EQ(report["tools"].size(), 5u);
  EXPECT_EQ(report["tools"][1]["name"], "convert_units");
  EXPECT_EQ(report["tools"][1]["history"][1]["kinds"], json::Value({"input_schema.widened"}));
  EXPECT_EQ(report["tools"][2]["history"], json::Value::parse(R"([{"index": 3, "event": "added"}])"));

  const std::string md = out.Read("r.md"), html = out.Read("r.html");
  EXPECT_NE(md.find("## The rule table"), std::string::npos);
  EXPECT_NE(md.find("| `all_relaxations` |"), std::string::npos);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("Pairs still refused, by rule"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const std::string& text : {md, html, out.Read("r.json"), run.out}) {
    EXPECT_EQ(text.find(kDescription), std::string::npos);
  }
}

TEST(DriftReportCliTest, ManifestFilesGiveTheSameReportAndShowPrintsDescriptions) {
  std::vector<std::string> args = SeriesFiles();
  args.insert(args.end(), {"--format", "json"});
  ProcessResult files = Udon(args);
  ASSERT_EQ(files.exit_code, 0) << files.err;
  ProcessResult directory = Udon({Series(), "--format", "json"});
  ASSERT_EQ(directory.exit_code, 0) << directory.err;
  // The labels come from the file names: the same as the index gives.
  EXPECT_EQ(json::Parse(files.out).value(), json::Parse(directory.out).value());

  args = SeriesFiles();
  args.push_back("--show");
  ProcessResult shown = Udon(args);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("## Description changes"), std::string::npos);
  EXPECT_NE(shown.out.find(kDescription), std::string::npos);
}

TEST(DriftReportCliTest, RefusesInputItCannotReportWithStableCodes) {
  TempDir dir;
  ProcessResult one = Udon({SeriesFiles()[0], "--json"});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(json::Parse(one.out).value()["code"], "usage.invalid");
  dir.Write("index.json", R"({"series": [{"file": "../0.1.0.tools.json"}]})");
  ProcessResult escape = Udon({dir.path(), "--json"});
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_EQ(json::Parse(escape.out).value()["code"], "evidence.index_invalid");
  dir.Write("bad.json", "{\"profile\": 1}");
  ProcessResult bad = Udon({SeriesFiles()[0], dir.File("bad.json"), "--json"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(json::Parse(bad.out).value()["code"], "manifest.invalid");
  ProcessResult format = Udon({SeriesFiles()[0], SeriesFiles()[1], "--format", "pdf"});
  EXPECT_EQ(format.exit_code, 2);
}

// `evidence chart`: the drift study's figures are drawn by the reports' chart code; a
// description that is not a chart is refused with its code and the member named.
TEST(EvidenceChartCliTest, DrawsTheDescribedBarsAndRefusesAMalformedDescription) {
  TempDir dir;
  dir.Write("spec.json", R"({"title": "Pairs <refused>", "bars": [{"label": "serverInfo", "value": 3, "text": "3 of 4"}]})");
  ProcessResult run = testing::RunProcess(
      {testing::UdonMcpBinary(), "evidence", "chart", dir.File("spec.json"), "-o", dir.File("c.svg"), "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const std::string svg = dir.Read("c.svg");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("Pairs &lt;refused&gt;"), std::string::npos);
  EXPECT_NE(svg.find("data-label=\"serverInfo\""), std::string::npos);
  dir.Write("bad.json", R"({"title": "t", "bars": [{"label": "x", "value": "3"}]})");
  ProcessResult bad = testing::RunProcess({testing::UdonMcpBinary(), "evidence", "chart", dir.File("bad.json"), "--json"});
  EXPECT_EQ(bad.exit_code, 2);
  const json::Value error = json::Parse(bad.out).value();
  EXPECT_EQ(error["code"], "evidence.chart_invalid") << bad.out;
  EXPECT_EQ(error["details"]["pointer"], "/bars/0/value") << bad.out;
}

}  // namespace
}  // namespace udon
