#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "json/canonical.h"
#include "base/file.h"

namespace udon::cli {
namespace {

struct CanonicalizeOptions {
  std::string file;
  bool json = false;
};

int RunCanonicalize(const CanonicalizeOptions& options) {
  Result<std::string> text = base::ReadFile(options.file);
  if (!text.ok()) return ReportError(text.error(), options.json);
  Result<std::string> canonical = json::CanonicalizeText(*text);
  if (!canonical.ok()) return ReportError(canonical.error(), options.json, options.file);
  if (options.json) {
    PrintJsonResult({{"canonical", std::move(*canonical)}});
    return kExitOk;
  }
  // The exact canonical bytes, so that `canonicalize FILE | sha256sum` matches `digest`;
  // a terminal gets a final newline for readability.
  std::fwrite(canonical->data(), 1, canonical->size(), stdout);
  if (::isatty(STDOUT_FILENO)) std::fputc('\n', stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitInternal;
}

}  // namespace

void RegisterCanonicalizeCommand(CLI::App& app) {
  auto options = std::make_shared<CanonicalizeOptions>();
  CLI::App* command = app.add_subcommand(
      "canonicalize",
      "Print the RFC 8785 canonical form of a JSON document (exact bytes, no trailing "
      "newline unless stdout is a terminal)");
  command->add_option("FILE", options->file, "JSON document, or - for stdin")->required();
  command->add_flag("--json", options->json,
                    "Machine output: {\"ok\":true,\"canonical\":STRING} on stdout");
  SetAction(command, &options->json, [options] { return RunCanonicalize(*options); });
}

}  // namespace udon::cli
