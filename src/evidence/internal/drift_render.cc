// The renderings of the drift report model (evidence/drift_report.h): Markdown and one
// self-contained HTML page. They read the model only. Strings from outside (labels, tool
// names, pointers, serverInfo members, descriptions) go through json::ForDisplay first, then
// the format's own escaper.
#include <sstream>

#include "evidence/charts.h"
#include "evidence/drift_report.h"
#include "evidence/internal/report_format.h"
#include "json/display.h"
#include "manifest/diff.h"

namespace udon::evidence {
namespace {

using internal::Cell;
using internal::Header;
using internal::HtmlTable;
using internal::MarkdownText;
using internal::Row;

// Outside text for HTML cells (HtmlTable escapes it for HTML afterwards).
std::string Shown(const json::Value& value) {
  return value.is_string() ? json::ForDisplay(value.get<std::string>()).text : Cell(value);
}

std::string Label(const json::Value& report, const json::Value& index) {
  return Shown(report["series"][index.get<std::size_t>()]["label"]);
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator, const std::string& none) {
  if (parts.empty()) return none;
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

// "tool.description: 3, input_schema.widened: 1" (kinds are fixed names).
std::string KindCounts(const json::Value& kinds) {
  std::vector<std::string> parts;
  for (const auto& [kind, count] : kinds.items()) parts.push_back(kind + ": " + count.dump());
  return Join(parts, ", ", "none");
}

// The rules under which the pair would not be refused: "none" while every rule refuses it.
std::string LetThrough(const json::Value& pair) {
  if (!pair["catalogChanged"].get<bool>()) return "catalog unchanged";
  std::vector<std::string> rules;
  for (const DriftRule& rule : DriftRules()) {
    if (!pair["refusedBy"].value(rule.name, true)) rules.push_back(rule.name);
  }
  return Join(rules, ", ", "none");
}

// "added in 1.0.0; changed in 1.1.0 (tool.description at /description); removed in 2.0.0", labels,
// names and pointers escaped by `text`.
std::string History(const json::Value& report, const json::Value& history,
                    std::string (*text)(const json::Value&)) {
  std::vector<std::string> events;
  for (const json::Value& event : history) {
    std::string line = event["event"].get<std::string>() + " in " +
                       text(report["series"][event["index"].get<std::size_t>()]["label"]);
    if (event.contains("renamedFrom")) line += " (renamed from " + text(event["renamedFrom"]) + ")";
    if (event.contains("renamedTo")) line += " (renamed to " + text(event["renamedTo"]) + ")";
    if (event.contains("kinds")) {
      std::vector<std::string> kinds = event["kinds"].get<std::vector<std::string>>();
      std::vector<std::string> pointers;
      for (const json::Value& pointer : event["pointers"]) {
        if (pointers.size() == 6) {
          pointers.push_back("and " + std::to_string(event["pointers"].size() - 6) + " more");
          break;
        }
        pointers.push_back(text(pointer));
      }
      line += " (" + Join(kinds, ", ", "") + " at " + Join(pointers, ", ", "") + ")";
    }
    events.push_back(line);
  }
  return Join(events, "; ", "");
}

std::string MarkdownValue(const json::Value& value) {
  return value.is_string() ? MarkdownText(value.get<std::string>()) : Cell(value);
}

std::string VersionSentence(const json::Value& v) {
  return "Of " + v["pairs"].dump() + " pair(s), the catalog changed in " + v["catalogChanged"].dump() + "; in " +
         v["catalogChangedVersionUnchanged"].dump() +
         " of those serverInfo.version stayed the same (a stale version). In " +
         v["versionChangedCatalogUnchanged"].dump() + " pair(s) the version changed and the catalog did not.";
}

const char* kRuleText =
    "Did the catalog change between the releases of each pair? The rule exact compares whole catalogs: any "
    "difference in a Tool object, an added, removed or renamed tool, or another order, pagination or number of "
    "occurrences. Each "
    "relaxation ignores the kinds it names; a pair stays refused while any other catalog difference remains. "
    "serverInfo, the protocol version and the capture instants are not part of this comparison (the gate "
    "compares them first: see what the gate refuses), and the gate compares only the called tool.";

std::string MarkdownRules(const json::Value& report) {
  std::string md = "## The rule table\n\n" + std::string(kRuleText) + "\n\n" +
                   Header({"rule", "ignores", "refused pairs", "of pairs", "refusals avoided"});
  for (const json::Value& rule : report["rules"]) {
    md += Row({"`" + Cell(rule["rule"]) + "`", Join(rule["ignores"].get<std::vector<std::string>>(), ", ", "nothing"),
               Cell(rule["refusedPairs"]), Cell(rule["pairs"]), Cell(rule["avoidedRefusals"])});
  }
  const json::Value& v = report["versionIdentifiesCatalog"];
  md += "\n## Does serverInfo.version identify the catalog?\n\n" + VersionSentence(v) + "\n\n" +
        Header({"pairs", "catalog changed", "with the same version", "with a new version", "version only"}) +
        Row({Cell(v["pairs"]), Cell(v["catalogChanged"]), Cell(v["catalogChangedVersionUnchanged"]),
             Cell(v["catalogChangedVersionChanged"]), Cell(v["versionChangedCatalogUnchanged"])});
  return md;
}

constexpr const char* kGateText =
    "What the gate does with each release's manifest while the next release is the live server, by its own "
    "comparisons (gate/comparison.h): the first step that refuses. Step 3 (protocol version, serverInfo) refuses "
    "every call; steps 4-5 refuse the calls of reviewed tools that are missing or changed, nothing else. Each "
    "serverInfo relaxation drops members before step 3.";

const char* const kGateSteps[] = {"protocol_version", "server_info", "catalog"};

// The gate's rows: per step, then per serverInfo relaxation (absent in older models: none).
std::vector<std::vector<std::string>> GateRows(const json::Value& report) {
  std::vector<std::vector<std::string>> rows;
  if (!report.contains("gate")) return rows;
  const json::Value& gate = report["gate"];
  for (const char* step : kGateSteps) rows.push_back({std::string("refused at ") + step, Cell(gate["refusedAt"].value(step, 0))});
  rows.push_back({"refused (any step)", Cell(gate["refusedPairs"])});
  for (const json::Value& rule : gate["serverInfoRules"]) {
    rows.push_back({"refused with serverInfo rule " + Cell(rule["rule"]), Cell(rule["refusedPairs"])});
  }
  return rows;
}

std::string MarkdownGate(const json::Value& report) {
  const std::vector<std::vector<std::string>> rows = GateRows(report);
  if (rows.empty()) return "";
  std::string md = "\n## What the gate refuses\n\n" + std::string(kGateText) + "\n\n" + Header({"measure", "pairs"});
  for (const auto& row : rows) md += Row(row);
  return md;
}

std::string HtmlGate(const json::Value& report) {
  const std::vector<std::vector<std::string>> rows = GateRows(report);
  if (rows.empty()) return "";
  std::vector<charts::Bar> bars;
  for (const char* step : kGateSteps) {
    const int pairs = report["gate"]["refusedAt"].value(step, 0);
    bars.push_back({step, static_cast<double>(pairs), std::to_string(pairs) + " / " + report["gate"]["pairs"].dump()});
  }
  return "<h2>What the gate refuses</h2>\n<p>" + charts::Escape(kGateText) + "</p>\n" +
         charts::BarChart(bars, "Pairs refused, by the first refusing step", static_cast<double>(report["pairs"].size()),
                          "no pairs") +
         HtmlTable({"measure", "pairs"}, rows);
}

std::string MarkdownSeries(const json::Value& report) {
  std::string md = "\n## Releases\n\n" +
                   Header({"#", "label", "serverInfo.name", "serverInfo.version", "protocol", "tools", "manifestSha256"});
  for (std::size_t i = 0; i < report["series"].size(); ++i) {
    const json::Value& s = report["series"][i];
    md += Row({std::to_string(i), MarkdownValue(s["label"]), MarkdownValue(s["serverName"]),
               MarkdownValue(s["serverVersion"]), MarkdownValue(s["protocolVersion"]), Cell(s["toolCount"]),
               "`" + Cell(s["manifestSha256"]).substr(0, 16) + "`"});
  }
  md += "\n## Pairs\n\n" +
        Header({"from", "to", "catalog changed", "version changed", "differences", "kinds", "let through by"});
  for (const json::Value& pair : report["pairs"]) {
    md += Row({MarkdownValue(report["series"][pair["from"].get<std::size_t>()]["label"]),
               MarkdownValue(report["series"][pair["to"].get<std::size_t>()]["label"]),
               pair["catalogChanged"].get<bool>() ? "yes" : "no", pair["serverVersionChanged"].get<bool>() ? "yes" : "no",
               Cell(pair["differences"]), KindCounts(pair["kinds"]), LetThrough(pair)});
  }
  md += "\n## Differences by kind\n\n" + Header({"kind", "differences", "pairs", "tools"});
  for (const auto& [kind, totals] : report["kindTotals"].items()) {
    md += Row({kind, Cell(totals["differences"]), Cell(totals["pairs"]), Cell(totals["tools"])});
  }
  return md;
}

// A description change as an indented line diff (an indented code block: nothing in it is
// markup), already escaped by the model.
std::string DescriptionDiff(const json::Value& change, const std::string& indent) {
  const auto text = [](const json::Value& v) { return v.is_string() ? v.get<std::string>() : std::string(); };
  std::istringstream lines(manifest::TextLineDiff(text(change["before"]), text(change["after"])));
  std::string out;
  for (std::string line; std::getline(lines, line);) out += indent + line + "\n";
  return out;
}

std::string MarkdownDescriptions(const json::Value& report) {
  std::string md = "\n## Description changes\n\nEach description as `review --show` prints it: hidden code points as "
                   "`<U+XXXX>` markers.\n";
  for (const json::Value& pair : report["pairs"]) {
    for (const json::Value& change : pair["descriptions"]) {
      md += "\n### " + MarkdownValue(report["series"][pair["from"].get<std::size_t>()]["label"]) + " to " +
            MarkdownValue(report["series"][pair["to"].get<std::size_t>()]["label"]) + ": " +
            MarkdownValue(change["tool"]) + "\n\n" + DescriptionDiff(change, "    ");
      if (change["hiddenCodePoints"].get<std::size_t>() > 0) {
        md += "\n" + change["hiddenCodePoints"].dump() + " hidden character(s) shown as markers.\n";
      }
    }
  }
  return md;
}

std::string Intro(const json::Value& report) {
  const json::Value& series = report["series"];
  return std::to_string(series.size()) + " release(s), " + std::to_string(report["pairs"].size()) +
         " consecutive pair(s). Tool names, kinds, pointers, counts and digests only" +
         (report.value("showsDescriptions", false) ? "; descriptions shown escaped (--show)." : ".");
}

std::vector<charts::Bar> RuleBars(const json::Value& report) {
  std::vector<charts::Bar> bars;
  for (const json::Value& rule : report["rules"]) {
    const int refused = rule["refusedPairs"].get<int>();
    bars.push_back({rule["rule"].get<std::string>(), static_cast<double>(refused),
                    std::to_string(refused) + " / " + rule["pairs"].dump(), rule["rule"] == "exact"});
  }
  return bars;
}

std::vector<charts::Bar> KindBars(const json::Value& report) {
  std::vector<charts::Bar> bars;
  for (const auto& [kind, totals] : report["kindTotals"].items()) {
    const int pairs = totals["pairs"].get<int>();
    bars.push_back({kind, static_cast<double>(pairs), std::to_string(pairs) + " pair(s)"});
  }
  return bars;
}

std::string PairColumns(const json::Value& report) {
  std::vector<charts::Column> columns;
  for (const json::Value& pair : report["pairs"]) {
    charts::Column column{Label(report, pair["to"]), {}};
    for (const auto& [kind, count] : pair["kinds"].items()) column.parts.push_back({kind, count.get<int>()});
    columns.push_back(std::move(column));
  }
  return charts::StackedColumns(columns, charts::SeriesByTotal(columns), "Differences per release (by kind)");
}

std::string HtmlRules(const json::Value& report) {
  std::string html = "<h2>The rule table</h2>\n<p>" + charts::Escape(kRuleText) + "</p>\n" +
                     charts::BarChart(RuleBars(report), "Pairs still refused, by rule",
                                      static_cast<double>(report["pairs"].size()), "no pairs");
  std::vector<std::vector<std::string>> rows;
  for (const json::Value& rule : report["rules"]) {
    rows.push_back({Cell(rule["rule"]), Join(rule["ignores"].get<std::vector<std::string>>(), ", ", "nothing"),
                    Cell(rule["refusedPairs"]), Cell(rule["pairs"]), Cell(rule["avoidedRefusals"])});
  }
  html += HtmlTable({"rule", "ignores", "refused pairs", "of pairs", "refusals avoided"}, rows);
  const json::Value& v = report["versionIdentifiesCatalog"];
  html += "<h2>Does serverInfo.version identify the catalog?</h2>\n<p>" + charts::Escape(VersionSentence(v)) + "</p>\n";
  html += HtmlTable({"pairs", "catalog changed", "with the same version", "with a new version", "version only"},
                    {{Cell(v["pairs"]), Cell(v["catalogChanged"]), Cell(v["catalogChangedVersionUnchanged"]),
                      Cell(v["catalogChangedVersionChanged"]), Cell(v["versionChangedCatalogUnchanged"])}});
  return html;
}

std::string HtmlSeriesAndPairs(const json::Value& report) {
  std::vector<std::vector<std::string>> releases;
  for (std::size_t i = 0; i < report["series"].size(); ++i) {
    const json::Value& s = report["series"][i];
    releases.push_back({std::to_string(i), Shown(s["label"]), Shown(s["serverName"]), Shown(s["serverVersion"]),
                        Shown(s["protocolVersion"]), Cell(s["toolCount"]), Cell(s["manifestSha256"]).substr(0, 16)});
  }
  std::string html = "<h2>Releases</h2>\n" + HtmlTable({"#", "label", "serverInfo.name", "serverInfo.version",
                                                        "protocol", "tools", "manifestSha256"},
                                                       releases);
  html += "<h2>Pairs</h2>\n" + PairColumns(report);
  std::vector<std::vector<std::string>> pairs;
  for (const json::Value& pair : report["pairs"]) {
    pairs.push_back({Label(report, pair["from"]), Label(report, pair["to"]), pair["catalogChanged"].get<bool>() ? "yes" : "no",
                     pair["serverVersionChanged"].get<bool>() ? "yes" : "no", Cell(pair["differences"]),
                     KindCounts(pair["kinds"]), LetThrough(pair)});
  }
  html += HtmlTable({"from", "to", "catalog changed", "version changed", "differences", "kinds", "let through by"},
                    pairs);
  html += "<h2>Differences by kind</h2>\n" +
          charts::BarChart(KindBars(report), "Pairs showing each kind", 0, "no differences");
  std::vector<std::vector<std::string>> kinds;
  for (const auto& [kind, totals] : report["kindTotals"].items()) {
    kinds.push_back({kind, Cell(totals["differences"]), Cell(totals["pairs"]), Cell(totals["tools"])});
  }
  return html + HtmlTable({"kind", "differences", "pairs", "tools"}, kinds);
}

std::string HtmlDescriptions(const json::Value& report) {
  std::string html = "<h2>Description changes</h2>\n<p>Each description as <code>review --show</code> prints it: "
                     "hidden code points as &lt;U+XXXX&gt; markers.</p>\n";
  for (const json::Value& pair : report["pairs"]) {
    for (const json::Value& change : pair["descriptions"]) {
      html += "<h3>" + charts::Escape(Label(report, pair["from"]) + " to " + Label(report, pair["to"]) + ": " +
                                      Shown(change["tool"])) +
              "</h3>\n<pre>" + charts::Escape(DescriptionDiff(change, "")) + "</pre>\n";
    }
  }
  return html;
}

}  // namespace

std::string DriftReportMarkdown(const json::Value& report) {
  std::string md = "# udon-mcp drift report\n\n" + Intro(report) + "\n\n" + MarkdownRules(report) +
                   MarkdownGate(report) + MarkdownSeries(report);
  md += "\n## Tool histories\n\n" + Header({"tool", "history"});
  for (const json::Value& tool : report["tools"]) {
    md += Row({MarkdownValue(tool["name"]), History(report, tool["history"], &MarkdownValue)});
  }
  if (report.value("showsDescriptions", false)) md += MarkdownDescriptions(report);
  return md;
}

std::string DriftReportHtml(const json::Value& report) {
  std::string html = internal::HtmlPageStart("udon-mcp drift report") + "<p>" + charts::Escape(Intro(report)) +
                     "</p>\n" + HtmlRules(report) + HtmlGate(report) + HtmlSeriesAndPairs(report);
  std::vector<std::vector<std::string>> tools;
  for (const json::Value& tool : report["tools"]) tools.push_back({Shown(tool["name"]), History(report, tool["history"], &Shown)});
  html += "<h2>Tool histories</h2>\n" + HtmlTable({"tool", "history"}, tools);
  if (report.value("showsDescriptions", false)) html += HtmlDescriptions(report);
  return html + internal::HtmlPageEnd();
}

}  // namespace udon::evidence
