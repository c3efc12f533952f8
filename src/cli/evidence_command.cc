// evidence summarize: the experiment's report from evidence JSON Lines (docs/experiment.md).
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "evidence/summary.h"
#include "gate/state_store.h"
#include "json/file.h"
#include "state_pg/open.h"

namespace udon::cli {
namespace {

struct SummarizeOptions {
  std::vector<std::string> files;
  std::string output;
  bool html = false;
  bool json = false;
};

// report.md -> report.svg; a name without an extension gets ".svg" appended.
std::string ChartPathFor(const std::string& markdown_path) {
  const std::size_t slash = markdown_path.rfind('/');
  const std::size_t dot = markdown_path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return markdown_path + ".svg";
  return markdown_path.substr(0, dot) + ".svg";
}

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int RunSummarize(const SummarizeOptions& o) {
  evidence::EvidenceSet set;
  for (const std::string& file : o.files) {
    if (gate::IsPostgresUrl(file)) {
      // Many runners' records in one database make one report.
      auto lines = state_pg::ReadEvidenceLines(file);
      if (!lines.ok()) return ReportError(lines.error(), o.json, kExitInvalidInput);
      std::string text;
      for (const std::string& line : *lines) text += line + "\n";
      evidence::AddEvidenceText(text, set);
      ++set.files;
      continue;
    }
    Status added = evidence::AddEvidenceFile(file, set);
    if (!added.ok()) return ReportError(added.error(), o.json, kExitInvalidInput, file);
  }
  const json::Value summary = evidence::Summarize(set);
  json::Value written = json::Value::array();
  if (o.html) {
    // One self-contained page instead of Markdown and its chart.
    const std::string page = evidence::SummaryHtml(summary);
    if (o.output.empty()) {
      if (!o.json) std::fwrite(page.data(), 1, page.size(), stdout);
    } else {
      Status html = json::WriteFileAtomic(o.output, page);
      if (!html.ok()) return ReportError(html.error(), o.json, kExitInternal, o.output);
      written = {o.output};
      if (!o.json) std::printf("wrote %s\n", o.output.c_str());
    }
    if (o.json) PrintJsonResult({{"summary", summary}, {"written", written}});
    return kExitOk;
  }
  if (!o.output.empty()) {
    const std::string chart = ChartPathFor(o.output);
    Status svg = json::WriteFileAtomic(chart, evidence::SummarySvg(summary));
    if (!svg.ok()) return ReportError(svg.error(), o.json, kExitInternal, chart);
    Status md = json::WriteFileAtomic(o.output, evidence::SummaryMarkdown(summary, BaseName(chart)));
    if (!md.ok()) return ReportError(md.error(), o.json, kExitInternal, o.output);
    written = {o.output, chart};
  }
  if (o.json) {
    PrintJsonResult({{"summary", summary}, {"written", written}});
  } else if (o.output.empty()) {
    const std::string text = evidence::SummaryMarkdown(summary, "");
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::printf("wrote %s and %s\n", written[0].get<std::string>().c_str(), written[1].get<std::string>().c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterEvidenceCommand(CLI::App& app) {
  CLI::App* evidence = app.add_subcommand("evidence", "Work with evidence JSON Lines");
  evidence->require_subcommand(1);
  auto o = std::make_shared<SummarizeOptions>();
  CLI::App* summarize = evidence->add_subcommand(
      "summarize", "Report codes, drift, list_changed, indeterminate outcomes, latency and nondeterminism");
  summarize->add_option("FILE", o->files, "Evidence files (JSON Lines; - for stdin) or postgres:// URIs (the evidence table)")->required();
  summarize->add_option("-o,--output", o->output,
                        "Write the Markdown report here and its SVG chart beside it (default: Markdown on stdout)");
  summarize->add_flag("--html", o->html,
                      "Write one self-contained HTML report (to -o, else stdout) instead of Markdown and SVG");
  summarize->add_flag("--json", o->json, "The report model as JSON on stdout");
  SetAction(summarize, &o->json, [o] { return RunSummarize(*o); });
}

}  // namespace udon::cli
