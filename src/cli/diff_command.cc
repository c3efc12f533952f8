#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "manifest/diff.h"

namespace udon::cli {
namespace {

struct DiffOptions {
  std::string before;
  std::string after;
  bool json = false;
  bool strict = false;
};

int RunDiff(const DiffOptions& options) {
  auto before = manifest::Manifest::Load(options.before);
  if (!before.ok()) return ReportError(before.error(), options.json, kExitInvalidInput, options.before);
  auto after = manifest::Manifest::Load(options.after);
  if (!after.ok()) return ReportError(after.error(), options.json, kExitInvalidInput, options.after);
  const manifest::ManifestDiff diff = manifest::DiffManifests(*before, *after);
  // Two captures of an unchanged server differ in their instants only: reported, but the
  // exit status says "different" (1) only for something a reviewer must look at.
  const bool significant = diff.significant(options.strict);
  if (options.json) {
    json::Value report = manifest::DiffToJson(diff, *before, *after);
    report["significant"] = significant;
    PrintJsonResult(report);
  } else {
    const std::string text = manifest::DiffToText(diff, *before, *after);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return significant ? kExitInternal : kExitOk;  // contract: 1 means "different"
}

}  // namespace

void RegisterDiffCommand(CLI::App& app) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* command = app.add_subcommand(
      "diff", "Drift report by server, tool and JSON pointer; exit 0 identical or only the capture instants differ, 1 different");
  command->add_option("OLD", options->before, "The earlier manifest")->required();
  command->add_option("NEW", options->after, "The later manifest")->required();
  command->add_flag("--json", options->json, "Machine output on stdout");
  command->add_flag("--strict", options->strict, "capturedAt and expiresAt differences count too (exit 1)");
  SetAction(command, &options->json, [options] { return RunDiff(*options); });
}

}  // namespace udon::cli
