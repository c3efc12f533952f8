#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "base/file.h"
#include "gate/gate.h"
#include "manifest/carry_over.h"

namespace udon::cli {
namespace {

struct CaptureCommandOptions {
  std::vector<std::string> servers;
  int expires_in_days = 7;
  std::string output;
  std::string update;  // --update FILE: re-capture FILE's servers, carrying unchanged reviews
  bool force = false;  // -o onto a manifest that holds reviews
  std::optional<std::string> protocol_version;
  bool diagnostics = false;
  std::optional<int> observe_seconds;  // --observe: the idle window of the session report
  CommonOptions common;
};

constexpr int kMaxObserveSeconds = 600;

// What the command asks of capture::Capture; the callbacks fill `negotiation` (by server
// key), `sessions` (--observe) and the evidence records.
capture::CaptureOptions CaptureRequest(const CaptureCommandOptions& options, json::Value& negotiation,
                                       json::Value& sessions, std::vector<gate::EvidenceRecord>& records) {
  capture::CaptureOptions request;
  request.servers = options.servers;
  request.expires_in_days = options.expires_in_days;
  request.protocol_version = options.protocol_version;
  if (ProgressWanted(options.common.json)) {
    request.on_progress = [](const std::string& line) { PrintProgress("capture: " + line); };
  }
  if (options.diagnostics) {
    request.on_diagnostics = [](const std::string& server, const std::vector<mcp::Diagnostic>& diagnostics) {
      PrintDiagnostics(diagnostics, "server " + server);
    };
  }
  if (options.observe_seconds) {
    request.observe_idle = std::chrono::seconds(*options.observe_seconds);
    request.on_session = [&sessions](const std::string& server, json::Value session) {
      sessions[server] = std::move(session);
    };
  }
  // How each server was opened (a strict legacy server may have hung up on the probe).
  request.on_negotiated = [&negotiation, &records](const std::string& server, const std::string& path,
                                                   mcp::Era era) {
    negotiation[server] = path;
    gate::EvidenceRecord record;
    record.time = gate::EvidenceTimestamp();
    record.command = "capture";
    record.server = server;
    record.era = era == mcp::Era::kModern ? "modern" : "legacy";
    record.negotiation = path;
    records.push_back(std::move(record));
  };
  return request;
}

// Whether the manifest at path holds any review: overwriting it would lose them. A file
// that is not JSON holds none; one that exists and cannot be read might, and is refused.
Result<bool> HoldsReviews(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) return false;
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path));
  auto document = json::Parse(text);
  if (!document.ok() || !document->is_object() || !document->contains("servers")) return false;
  for (const auto& [key, server] : (*document)["servers"].items()) {
    if (server.is_object() && server.contains("reviews") && !server["reviews"].empty()) return true;
  }
  return false;
}

// -o onto reviewed work, or --update: decided before any server is started.
Status CheckTarget(CaptureCommandOptions& options) {
  if (options.update.empty() == options.output.empty()) {
    return MakeError("usage.invalid", "give either -o FILE or --update FILE");
  }
  if (!options.update.empty()) {
    if (options.force) return MakeError("usage.invalid", "--force goes with -o, not --update");
    return OkStatus();
  }
  if (options.servers.empty()) return MakeError("usage.invalid", "--server is required (or --update FILE)");
  if (options.force) return OkStatus();
  UDON_ASSIGN_OR_RETURN(bool reviewed, HoldsReviews(options.output));
  if (reviewed) {
    return MakeError("usage.reviews_would_be_lost",
                     "the output manifest holds reviews a new capture would drop; use --update to keep "
                     "the reviews of unchanged tools, or --force to overwrite");
  }
  return OkStatus();
}

int RunCapture(CaptureCommandOptions options) {
  const bool json = options.common.json;
  if (Status version = CheckProtocolVersionOption(options.protocol_version); !version.ok()) {
    return ReportError(version.error(), json, kExitInvalidInput);
  }
  if (options.observe_seconds && (*options.observe_seconds < 0 || *options.observe_seconds > kMaxObserveSeconds)) {
    return ReportError(MakeError("usage.invalid", "--observe takes 0 to 600 seconds"), json, kExitInvalidInput);
  }
  if (Status target = CheckTarget(options); !target.ok()) {
    return ReportError(target.error(), json, kExitInvalidInput, options.output);
  }
  std::optional<manifest::Manifest> previous;  // --update: the reviewed manifest
  if (!options.update.empty()) {
    auto loaded = manifest::Manifest::Load(options.update);
    if (!loaded.ok()) return ReportError(loaded.error(), json, kExitInvalidInput, options.update);
    previous = std::move(loaded).value();
    if (options.servers.empty()) options.servers = previous->server_keys();
    options.output = options.update;
  }
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  // --timeout overrides callTimeoutSeconds as in verify and call (whole seconds, rounded up).
  if (options.common.timeout_seconds > 0) {
    policy->call_timeout_seconds = static_cast<int>(std::ceil(options.common.timeout_seconds));
  }
  auto config = LoadConfig(options.common);
  if (!config.ok()) return ReportError(config.error(), json, kExitInvalidInput);
  auto evidence = OpenEvidence(options.common, *policy);
  if (!evidence.ok()) return ReportError(evidence.error(), json, kExitInternal);

  json::Value negotiation = json::Value::object();
  json::Value sessions = json::Value::object();
  std::vector<gate::EvidenceRecord> records;
  const capture::CaptureOptions request = CaptureRequest(options, negotiation, sessions, records);
  auto captured = capture::Capture(*config, *policy, request, manifest::NowSeconds());
  if (!captured.ok()) {
    const int code = ReportError(captured.error(), json, ExitCodeFor(captured.error()));
    if (!options.diagnostics) NoteDiagnostics(captured.error());
    return code;
  }
  std::optional<manifest::CarryOverReport> carried;
  if (previous) {
    auto report = manifest::CarryOverReviews(*previous, *captured);
    if (!report.ok()) return ReportError(report.error(), json, ExitCodeFor(report.error()));
    carried = std::move(report).value();
  }
  Status written = base::WriteFileAtomic(options.output, captured->ToPrettyJson());
  if (!written.ok()) return ReportError(written.error(), json, kExitInternal, options.output);
  if (*evidence) {
    for (gate::EvidenceRecord& record : records) {
      record.protocol_version = *captured->protocol_version();
      record.manifest_sha256 = captured->sha256();
      record.code = "ok";
      record.exit = kExitOk;
      if (Status appended = (*evidence)->Append(record.ToJson()); !appended.ok()) {
        return ReportError(appended.error(), json, kExitInternal);
      }
    }
  }
  if (json) {
    json::Value result = {{"manifest", options.output}, {"sha256", captured->sha256()},
                          {"protocolVersion", *captured->protocol_version()}, {"negotiation", negotiation}};
    if (carried) result["reviews"] = manifest::CarryOverToJson(*carried);
    if (options.observe_seconds) result["sessions"] = std::move(sessions);
    PrintJsonResult(std::move(result));
  } else {
    std::printf("%s %s\n", captured->sha256().c_str(), options.output.c_str());
    if (carried) {
      const std::string text = manifest::CarryOverToText(*carried);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
  }
  return kExitOk;
}

}  // namespace

void RegisterCaptureCommand(CLI::App& app) {
  auto options = std::make_shared<CaptureCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "capture", "Open each server (server/discover or initialize), exhaust tools/list, write a manifest (atomically)");
  command->add_option("--server", options->servers,
                      "Server key from the runtime configuration (repeatable; with --update, default: its servers)");
  command->add_option("--expires-in", options->expires_in_days, "Days until the review expires (default 7)");
  command->add_option("--protocol-version", options->protocol_version,
                      "Open at exactly this MCP protocol version (default: negotiate the newest both sides speak)");
  command->add_option("-o,--output", options->output, "Manifest file to write");
  command->add_flag("--force", options->force, "Overwrite an output manifest that holds reviews");
  command->add_option("--update", options->update,
                      "Re-capture this manifest's servers into it, keeping the reviews of unchanged tools");
  command->add_option("--observe", options->observe_seconds,
                      "After the listing, stay idle SECONDS (0-600), list again, and report each server's "
                      "capabilities and notifications by phase in --json's sessions");
  AddCommonOptions(command, options->common);
  AddDiagnosticsFlag(command, options->diagnostics);
  SetAction(command, &options->common.json, [options] { return RunCapture(*options); });
}

}  // namespace udon::cli
