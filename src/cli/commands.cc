#include "cli/commands.h"

namespace udon::cli {
namespace {

struct Command {
  std::string_view name;
  void (*add)(CLI::App&);
};

constexpr Command kCommands[] = {
    {"canonicalize", RegisterCanonicalizeCommand},
    {"digest", RegisterDigestCommand},
    {"schema-check", RegisterSchemaCheckCommand},
    {"capture", RegisterCaptureCommand},
    {"review", RegisterReviewCommand},
    {"check", RegisterCheckCommand},
    {"diff", RegisterDiffCommand},
    {"verify", RegisterVerifyCommand},
    {"call", RegisterCallCommand},
    {"probe", RegisterProbeCommand},
    {"evidence", RegisterEvidenceCommand},
    {"validate", RegisterValidateCommand},
    {"run", RegisterRunCommand},
    {"analyze", RegisterAnalyzeCommand},
    {"serve", RegisterServeCommand},
    {"workbench", RegisterWorkbenchCommand},
    {"adopt", RegisterAdoptCommand},
    {"login", RegisterLoginCommand},
    {"logout", RegisterLogoutCommand},
    {"auth", RegisterAuthCommand},
    {"demo", RegisterDemoCommand},
};

}  // namespace

std::vector<std::string_view> CommandNames() {
  std::vector<std::string_view> names;
  for (const Command& command : kCommands) names.push_back(command.name);
  return names;
}

void RegisterCommands(CLI::App& app, std::string_view first_argument) {
  for (const Command& command : kCommands) {
    if (command.name == first_argument) return command.add(app);
  }
  for (const Command& command : kCommands) command.add(app);
}

}  // namespace udon::cli
