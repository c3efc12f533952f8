// Every command of udon-mcp: one Register function per command file, called from main.cc
// through RegisterCommands.
#pragma once

#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace udon::workbench {
class WorkbenchServer;
}  // namespace udon::workbench

namespace udon::cli {

// Every command's name, in the order help lists them.
std::vector<std::string_view> CommandNames();
// Sets up the command `first_argument` names, and no other: CLI11 builds every option of
// every command it is given, which was most of a fresh process's start-up (issue 31). Any
// other first argument (none, --help, --version, a typo) sets up all of them, so help and
// CLI11's own errors list every command.
void RegisterCommands(CLI::App& app, std::string_view first_argument);

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
void RegisterLoginCommand(CLI::App& app);
void RegisterLogoutCommand(CLI::App& app);
void RegisterAuthCommand(CLI::App& app);

void RegisterDemoCommand(CLI::App& app);

// Serves bound workbenches until SIGINT or SIGTERM (workbench, adopt --review workbench).
int ServeWorkbenchesUntilSignalled(const std::vector<workbench::WorkbenchServer*>& servers);

}  // namespace udon::cli
