// evidence summarize: the experiment's report from evidence JSON Lines (docs/experiment.md).
// evidence drift: what drifts in one server's catalog, release by release (contract 7.20).
// evidence chart: a bar chart from a JSON description, drawn by the reports' own chart code.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "evidence/chart_spec.h"
#include "evidence/drift_report.h"
#include "evidence/summary.h"
#include "gate/state_store.h"
#include "base/file.h"
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
      Status html = base::WriteFileAtomic(o.output, page);
      if (!html.ok()) return ReportError(html.error(), o.json, kExitInternal, o.output);
      written = {o.output};
      if (!o.json) std::printf("wrote %s\n", o.output.c_str());
    }
    if (o.json) PrintJsonResult({{"summary", summary}, {"written", written}});
    return kExitOk;
  }
  if (!o.output.empty()) {
    const std::string chart = ChartPathFor(o.output);
    Status svg = base::WriteFileAtomic(chart, evidence::SummarySvg(summary));
    if (!svg.ok()) return ReportError(svg.error(), o.json, kExitInternal, chart);
    Status md = base::WriteFileAtomic(o.output, evidence::SummaryMarkdown(summary, BaseName(chart)));
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

struct DriftOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string format;  // empty: by each output's extension; Markdown on stdout
  std::string server;
  bool show = false;
  bool json = false;
};

// The series: one directory with an index.json, or manifest files in release order.
Result<std::vector<evidence::SeriesFile>> SeriesFiles(const std::vector<std::string>& inputs) {
  std::error_code ignored;
  if (inputs.size() == 1 && std::filesystem::is_directory(inputs[0], ignored)) {
    return evidence::ReadSeriesIndex(inputs[0]);
  }
  std::vector<evidence::SeriesFile> files;
  for (const std::string& input : inputs) {
    if (std::filesystem::is_directory(input, ignored)) {
      return MakeError("usage.invalid", "give either one directory with an index.json or manifest files");
    }
    files.push_back({input, evidence::LabelForFile(input)});
  }
  return files;
}

// report.html: html, report.json: json, anything else Markdown (as `summarize -o`).
std::string FormatFor(const std::string& path, const std::string& forced) {
  if (!forced.empty()) return forced;
  const auto ends_with = [&path](std::string_view end) {
    return path.size() > end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
  };
  if (ends_with(".json")) return "json";
  return ends_with(".html") || ends_with(".htm") ? "html" : "md";
}

std::string Render(const json::Value& report, const std::string& format) {
  if (format == "html") return evidence::DriftReportHtml(report);
  if (format == "json") return report.dump(2) + "\n";
  return evidence::DriftReportMarkdown(report);
}

int RunDrift(const DriftOptions& o) {
  auto files = SeriesFiles(o.inputs);
  if (!files.ok()) return ReportError(files.error(), o.json, kExitInvalidInput, o.inputs.front());
  std::vector<evidence::SeriesManifest> series;
  for (const evidence::SeriesFile& file : *files) {
    auto loaded = manifest::Manifest::Load(file.path);
    if (!loaded.ok()) return ReportError(loaded.error(), o.json, kExitInvalidInput, file.path);
    series.push_back({file.label, std::move(loaded).value()});
  }
  auto report = evidence::BuildDriftReport(series, {o.server, o.show});
  if (!report.ok()) return ReportError(report.error(), o.json, kExitInvalidInput);
  for (const std::string& warning : evidence::SeriesWarnings(*report)) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  json::Value written = json::Value::array();
  for (const std::string& output : o.outputs) {
    Status status = base::WriteFileAtomic(output, Render(*report, FormatFor(output, o.format)));
    if (!status.ok()) return ReportError(status.error(), o.json, kExitInternal, output);
    written.push_back(output);
    if (!o.json) std::printf("wrote %s\n", output.c_str());
  }
  if (o.json) {
    json::Value result = *report;
    result["written"] = std::move(written);
    PrintJsonResult(std::move(result));
  } else if (o.outputs.empty()) {
    const std::string text = Render(*report, o.format.empty() ? "md" : o.format);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return kExitOk;
}

void RegisterDrift(CLI::App* evidence) {
  auto o = std::make_shared<DriftOptions>();
  CLI::App* drift = evidence->add_subcommand(
      "drift", "What drifts between releases of one server, what the gate refuses, and what each relaxation would let through");
  drift->add_option("MANIFEST", o->inputs, "Manifests of one server in release order, or one directory with an index.json")
      ->required();
  drift->add_option("-o,--output", o->outputs,
                    "Write the report here (repeatable): .html HTML, .json JSON, anything else Markdown");
  drift->add_option("--format", o->format, "The format of every output, stdout included (default: Markdown)")
      ->check(CLI::IsMember({"md", "html", "json"}));
  drift->add_option("--server", o->server, "The server key in manifests that hold several");
  drift->add_flag("--show", o->show, "Include description changes, hidden code points escaped as review --show does");
  drift->add_flag("--json", o->json, "The report as JSON on stdout, with the files written");
  SetAction(drift, &o->json, [o] { return RunDrift(*o); });
}

struct ChartOptions {
  std::string input;
  std::string output;
  bool json = false;
};

constexpr std::size_t kMaxChartSpecBytes = 1 << 20;

int RunChart(const ChartOptions& o) {
  auto text = base::ReadFile(o.input, kMaxChartSpecBytes);
  if (!text.ok()) return ReportError(text.error(), o.json, kExitInvalidInput, o.input);
  auto spec = json::Parse(*text);
  if (!spec.ok()) return ReportError(spec.error(), o.json, kExitInvalidInput, o.input);
  auto svg = evidence::BarChartFromSpec(*spec);
  if (!svg.ok()) return ReportError(svg.error(), o.json, kExitInvalidInput, o.input);
  if (o.output.empty()) {
    if (!o.json) std::fwrite(svg->data(), 1, svg->size(), stdout);
  } else {
    Status status = base::WriteFileAtomic(o.output, *svg);
    if (!status.ok()) return ReportError(status.error(), o.json, kExitInternal, o.output);
    if (!o.json) std::printf("wrote %s\n", o.output.c_str());
  }
  if (o.json) PrintJsonResult({{"written", o.output.empty() ? json::Value::array() : json::Value::array({o.output})}});
  return kExitOk;
}

void RegisterChart(CLI::App* evidence) {
  auto o = std::make_shared<ChartOptions>();
  CLI::App* chart = evidence->add_subcommand(
      "chart", "Draw a bar chart (SVG) from a JSON description with the evidence reports' chart code");
  chart->add_option("SPEC", o->input, "The description: {title, bars: [{label, value, text, alert}], maximum} (- for stdin)")
      ->required();
  chart->add_option("-o,--output", o->output, "Write the SVG here (default: stdout)");
  chart->add_flag("--json", o->json, "The files written as JSON on stdout");
  SetAction(chart, &o->json, [o] { return RunChart(*o); });
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
  RegisterDrift(evidence);
  RegisterChart(evidence);
}

}  // namespace udon::cli
