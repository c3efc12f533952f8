#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "json/file.h"
#include "gate/gate.h"
#include "manifest/capture.h"

namespace udon::cli {
namespace {

struct CaptureCommandOptions {
  std::vector<std::string> servers;
  int expires_in_days = 7;
  std::string output;
  std::optional<std::string> protocol_version;
  bool diagnostics = false;
  CommonOptions common;
};

int RunCapture(const CaptureCommandOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  // --timeout overrides callTimeoutSeconds as in verify and call (whole seconds, rounded up).
  if (options.common.timeout_seconds > 0) {
    policy->call_timeout_seconds = static_cast<int>(std::ceil(options.common.timeout_seconds));
  }
  auto config = LoadConfig(options.common);
  if (!config.ok()) return ReportError(config.error(), json, kExitInvalidInput);
  auto evidence = OpenEvidence(options.common);
  if (!evidence.ok()) return ReportError(evidence.error(), json, kExitInternal);

  manifest::CaptureOptions capture;
  capture.servers = options.servers;
  capture.expires_in_days = options.expires_in_days;
  capture.protocol_version = options.protocol_version;
  if (ProgressWanted(json)) capture.on_progress = [](const std::string& line) { PrintProgress("capture: " + line); };
  if (options.diagnostics) {
    capture.on_diagnostics = [](const std::string& server, const std::vector<mcp::Diagnostic>& diagnostics) {
      PrintDiagnostics(diagnostics, "server " + server);
    };
  }
  // How each server was opened (a strict legacy server may have hung up on the probe).
  json::Value negotiation = json::Value::object();
  std::vector<json::Value> records;
  capture.on_negotiated = [&](const std::string& server, const std::string& path, mcp::Era era) {
    negotiation[server] = path;
    records.push_back({{"time", gate::EvidenceTimestamp()},
                       {"command", "capture"},
                       {"server", server},
                       {"era", era == mcp::Era::kModern ? "modern" : "legacy"},
                       {"negotiation", path}});
  };
  auto captured = manifest::Capture(*config, *policy, capture, manifest::NowSeconds());
  if (!captured.ok()) {
    const int code = ReportError(captured.error(), json, gate::ExitCodeFor(captured.error().code));
    if (!options.diagnostics) NoteDiagnostics(captured.error());
    return code;
  }
  Status written = json::WriteFileAtomic(options.output, captured->ToPrettyJson());
  if (!written.ok()) return ReportError(written.error(), json, kExitInternal, options.output);
  if (*evidence) {
    for (json::Value& record : records) {
      record["protocolVersion"] = *captured->protocol_version();
      record["manifestSha256"] = captured->sha256();
      record["code"] = "ok";
      record["exit"] = kExitOk;
      if (Status appended = (*evidence)->Append(record); !appended.ok()) {
        return ReportError(appended.error(), json, kExitInternal);
      }
    }
  }
  if (json) {
    PrintJsonResult({{"manifest", options.output}, {"sha256", captured->sha256()},
                     {"protocolVersion", *captured->protocol_version()}, {"negotiation", negotiation}});
  } else {
    std::printf("%s %s\n", captured->sha256().c_str(), options.output.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterCaptureCommand(CLI::App& app) {
  auto options = std::make_shared<CaptureCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "capture", "Open each server (server/discover or initialize), exhaust tools/list, write a manifest (atomically)");
  command->add_option("--server", options->servers, "Server key from the runtime configuration (repeatable)")
      ->required();
  command->add_option("--expires-in", options->expires_in_days, "Days until the review expires (default 7)");
  command->add_option("--protocol-version", options->protocol_version,
                      "Open at exactly this MCP protocol version (default: negotiate the newest both sides speak)");
  command->add_option("-o,--output", options->output, "Manifest file to write")->required();
  AddCommonOptions(command, options->common);
  AddDiagnosticsFlag(command, options->diagnostics);
  SetAction(command, &options->common.json, [options] { return RunCapture(*options); });
}

}  // namespace udon::cli
