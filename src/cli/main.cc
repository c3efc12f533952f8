#include <sys/prctl.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/output.h"

namespace {

// This process holds secrets (environment values, header values of the runtime config):
// no core file may carry them. RLIMIT_CORE 0 stops core files (and is inherited by the
// servers we start, which receive the same secrets); non-dumpable also stops piped core
// handlers, which ignore RLIMIT_CORE, and same-user reads of /proc/<pid>/environ and mem.
void DisableCoreDumps() {
  const rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  prctl(PR_SET_DUMPABLE, 0);
}

}  // namespace

int main(int argc, char** argv) {
  DisableCoreDumps();
  CLI::App app{"udon-mcp: pinned, reviewed MCP tool calls"};
  app.set_version_flag("--version", std::string("udon-mcp ") + UDON_VERSION);
  app.require_subcommand(1);

  udon::cli::RegisterCommands(app, argc > 1 ? argv[1] : "");

  return udon::cli::RunApp(app, argc, argv);
}
