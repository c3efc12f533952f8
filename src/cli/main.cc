#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/output.h"

int main(int argc, char** argv) {
  CLI::App app{"udon-mcp: pinned, reviewed MCP tool calls"};
  app.set_version_flag("--version", std::string("udon-mcp ") + UDON_VERSION);
  app.require_subcommand(1);

  udon::cli::RegisterCanonicalizeCommand(app);
  udon::cli::RegisterDigestCommand(app);
  udon::cli::RegisterSchemaCheckCommand(app);
  udon::cli::RegisterCaptureCommand(app);
  udon::cli::RegisterReviewCommand(app);
  udon::cli::RegisterCheckCommand(app);
  udon::cli::RegisterDiffCommand(app);
  udon::cli::RegisterVerifyCommand(app);
  udon::cli::RegisterCallCommand(app);
  udon::cli::RegisterProbeCommand(app);
  udon::cli::RegisterEvidenceCommand(app);
  udon::cli::RegisterValidateCommand(app);
  udon::cli::RegisterRunCommand(app);
  udon::cli::RegisterAnalyzeCommand(app);
  udon::cli::RegisterDemoCommand(app);

  return udon::cli::RunApp(app, argc, argv);
}
