#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "base/file.h"
#include "json/canonical.h"

namespace udon::cli {
namespace {

struct DigestOptions {
  std::string file;
  bool json = false;
};

int RunDigest(const DigestOptions& options) {
  Result<std::string> text = base::ReadFile(options.file);
  if (!text.ok()) return ReportError(text.error(), options.json);
  // Only the digest is needed: the canonical bytes stream into the hash.
  Result<std::string> digest_result = json::CanonicalSha256Text(*text);
  if (!digest_result.ok()) return ReportError(digest_result.error(), options.json, options.file);
  const std::string& digest = *digest_result;
  if (options.json) {
    PrintJsonResult({{"sha256", digest}});
  } else {
    std::printf("%s\n", digest.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterDigestCommand(CLI::App& app) {
  auto options = std::make_shared<DigestOptions>();
  CLI::App* command = app.add_subcommand(
      "digest", "Print the lowercase hex SHA-256 of a JSON document's RFC 8785 canonical form");
  command->add_option("FILE", options->file, "JSON document, or - for stdin")->required();
  command->add_flag("--json", options->json,
                    "Machine output: {\"ok\":true,\"sha256\":HEX} on stdout");
  SetAction(command, &options->json, [options] { return RunDigest(*options); });
}

}  // namespace udon::cli
