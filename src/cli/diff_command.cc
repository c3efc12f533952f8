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
};

int RunDiff(const DiffOptions& options) {
  auto before = manifest::Manifest::Load(options.before);
  if (!before.ok()) return ReportError(before.error(), options.json, kExitInvalidInput, options.before);
  auto after = manifest::Manifest::Load(options.after);
  if (!after.ok()) return ReportError(after.error(), options.json, kExitInvalidInput, options.after);
  const manifest::ManifestDiff diff = manifest::DiffManifests(*before, *after);
  if (options.json) {
    PrintJsonResult(manifest::DiffToJson(diff, *before, *after));
  } else {
    const std::string text = manifest::DiffToText(diff, *before, *after);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return diff.identical() ? kExitOk : kExitInternal;  // contract: 1 means "different"
}

}  // namespace

void RegisterDiffCommand(CLI::App& app) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* command = app.add_subcommand(
      "diff", "Drift report by server, tool and JSON pointer; exit 0 identical, 1 different");
  command->add_option("OLD", options->before, "The earlier manifest")->required();
  command->add_option("NEW", options->after, "The later manifest")->required();
  command->add_flag("--json", options->json, "Machine output on stdout");
  SetAction(command, &options->json, [options] { return RunDiff(*options); });
}

}  // namespace udon::cli
