// Every command of udon-mcp: one Register function per command file, called from main.cc.
#pragma once

#include <vector>

#include <CLI/CLI.hpp>

namespace udon::workbench {
class WorkbenchServer;
}  // namespace udon::workbench

namespace udon::cli {

void RegisterCanonicalizeCommand(CLI::App& app);
void RegisterDigestCommand(CLI::App& app);
void RegisterSchemaCheckCommand(CLI::App& app);
void RegisterCaptureCommand(CLI::App& app);
void RegisterReviewCommand(CLI::App& app);
void RegisterCheckCommand(CLI::App& app);
void RegisterDiffCommand(CLI::App& app);
void RegisterVerifyCommand(CLI::App& app);
void RegisterCallCommand(CLI::App& app);
void RegisterProbeCommand(CLI::App& app);
void RegisterEvidenceCommand(CLI::App& app);
void RegisterValidateCommand(CLI::App& app);
void RegisterRunCommand(CLI::App& app);
void RegisterAnalyzeCommand(CLI::App& app);
void RegisterServeCommand(CLI::App& app);
void RegisterWorkbenchCommand(CLI::App& app);
void RegisterAdoptCommand(CLI::App& app);

void RegisterDemoCommand(CLI::App& app);

// Serves bound workbenches until SIGINT or SIGTERM (workbench, adopt --review workbench).
int ServeWorkbenchesUntilSignalled(const std::vector<workbench::WorkbenchServer*>& servers);

}  // namespace udon::cli
