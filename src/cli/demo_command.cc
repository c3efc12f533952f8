// demo: the whole lifecycle against the bundled demo server, narrated: capture, review,
// pin, validate and run a three-tool workflow, then meet drift and watch the gate refuse.
// Exits 0 only if every expected outcome happened.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/internal/demo_assets.h"
#include "cli/output.h"
#include "gate/gate.h"
#include "base/file.h"
#include "json/yaml.h"
#include "manifest/review.h"
#include "workflow/workflow.h"

namespace udon::cli {
namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string dir = "udon-mcp-demo";
  std::string server;  // the demo server binary; default: beside this one
  bool json = false;
};

bool narrate_to_stderr = false;  // --json keeps stdout for the machine result

constexpr const char* kServerKey = "demo";
constexpr const char* kManifestFile = "demo.tools.json";

void Narrate(const std::string& text) {
  std::FILE* out = narrate_to_stderr ? stderr : stdout;
  std::fprintf(out, "%s\n", text.c_str());
  std::fflush(out);
}

// The demo server ships beside udon-mcp (installed) or in the build tree's sibling folder.
Result<std::string> FindDemoServer(const std::string& flag) {
  if (!flag.empty()) return fs::absolute(flag).string();
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const fs::path& candidate : {self.parent_path() / "udon-mcp-demo-server",
                                      self.parent_path().parent_path() / "demo_server" / "udon-mcp-demo-server"}) {
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return MakeError("usage.invalid", "cannot find udon-mcp-demo-server; pass --server PATH");
}

Result<mcp::RuntimeConfig> WriteConfig(const fs::path& dir, const std::string& server,
                                       const std::vector<std::string>& faults) {
  json::Value args = {"--log-requests", (dir / "requests.jsonl").string()};
  for (const auto& fault : faults) {
    args.push_back("--fault");
    args.push_back(fault);
  }
  const json::Value config = {{"mcpServers", {{kServerKey, {{"command", server}, {"args", args}}}}}};
  UDON_RETURN_IF_ERROR(base::WriteFileAtomic((dir / "mcp.json").string(), config.dump(2) + "\n"));
  return mcp::ParseRuntimeConfig(config.dump(), mcp::ProcessEnv(), dir.string());
}

// Applies the bundled reviews: each one validated exactly as `udon-mcp review` would.
Status ApplyReviews(manifest::Manifest& m, const manifest::Policy& policy) {
  UDON_ASSIGN_OR_RETURN(json::Value reviews, json::ParseYaml(internal::kDemoReviewsYaml));
  for (auto& [tool, review] : reviews.items()) {
    review["reviewedAt"] = manifest::FormatInstant(manifest::NowSeconds());
    UDON_ASSIGN_OR_RETURN(manifest::ToolLocation location, manifest::SelectTool(m, kServerKey, tool));
    UDON_ASSIGN_OR_RETURN(manifest::Review typed, manifest::ValidateReview(review, policy));
    UDON_RETURN_IF_ERROR(manifest::ValidateReviewAgainstTool(typed, *location.tool));
    UDON_RETURN_IF_ERROR(m.SetReview(kServerKey, tool, review));
    Narrate("   reviewed " + tool);
  }
  return OkStatus();
}

gate::GateEnvironment Environment(const fs::path& dir, const mcp::RuntimeConfig& config,
                                  gate::EvidenceWriter* evidence) {
  gate::GateEnvironment env;
  env.config = &config;
  env.state_dir = (dir / "state").string();
  env.evidence = evidence;
  env.command = "demo";
  env.reuse_connections = true;
  return env;
}

int Fail(const std::string& what, const Error& error) {
  std::fprintf(stderr, "udon-mcp demo: unexpected: %s: %s [%s]\n", what.c_str(), error.Describe().c_str(),
               error.code.c_str());
  return kExitInternal;
}

// What the narration calls the stage a workflow run stopped at.
std::string StageName(const workflow::WorkflowOutcome& outcome) {
  switch (outcome.stage) {
    case workflow::Stage::kCheck: return "validate";
    case workflow::Stage::kPlan: return "plan";
    case workflow::Stage::kContentTrust: return "content trust";
    case workflow::Stage::kInputs: return "inputs";
    case workflow::Stage::kGate: return "gate";
    case workflow::Stage::kRun: break;
  }
  return "run (step " + outcome.run.step_path + ")";
}

int RunDemo(const DemoOptions& options) {
  narrate_to_stderr = options.json;
  const manifest::Policy policy;
  auto server = FindDemoServer(options.server);
  if (!server.ok()) return ReportError(server.error(), false, kExitInvalidInput);
  const fs::path dir = fs::absolute(options.dir);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return ReportError(MakeError("io.unreadable", "cannot create the demo folder"), false, kExitInvalidInput);
  Narrate("udon-mcp demo in " + dir.string() + " against " + *server + "\n");
  auto config = WriteConfig(dir, *server, {});
  if (!config.ok()) return Fail("writing the runtime configuration", config.error());

  Narrate("1. capture: open the demo server at the newest revision both sides speak, exhaust tools/list");
  capture::CaptureOptions request;
  request.servers = {kServerKey};
  auto captured = capture::Capture(*config, policy, request, manifest::NowSeconds());
  if (!captured.ok()) return Fail("capture", captured.error());
  manifest::Manifest m = std::move(captured).value();
  Narrate("   protocol " + *m.protocol_version() + ", " + std::to_string(m.ToolNames(kServerKey).size()) +
      " tools, serverInfo " + m.server_info(kServerKey)->dump());

  Narrate("2. review: the bundled assertions and input channels for the three tools the workflow calls");
  if (Status reviewed = ApplyReviews(m, policy); !reviewed.ok()) return Fail("review", reviewed.error());
  const fs::path manifest_path = dir / kManifestFile;
  if (Status written = base::WriteFileAtomic(manifest_path.string(), m.ToPrettyJson()); !written.ok()) {
    return Fail("writing the manifest", written.error());
  }

  Narrate("3. pin: RFC 8785 canonical form, SHA-256");
  Narrate("   manifestSha256 " + m.sha256());
  std::string workflow = internal::kDemoWorkflowYaml;
  for (std::size_t at; (at = workflow.find("@MANIFEST_SHA256@")) != std::string::npos;) {
    workflow.replace(at, 17, m.sha256());
  }
  const fs::path workflow_path = dir / "turntable-brief.uws.yaml";
  const fs::path inputs_path = dir / "inputs.json";
  if (Status w = base::WriteFileAtomic(workflow_path.string(), workflow); !w.ok()) return Fail("workflow", w.error());
  if (Status w = base::WriteFileAtomic(inputs_path.string(), internal::kDemoInputsJson); !w.ok()) {
    return Fail("inputs", w.error());
  }

  Narrate("4. validate, analyze, run: UWS rules and every static check of the MCP bindings, the content-trust");
  Narrate("   analysis (policy blockOnFindings), then every step through the gate (digest, expiry, version,");
  Narrate("   serverInfo, re-list, compare, arguments)");
  auto evidence = gate::EvidenceWriter::Open((dir / "evidence.jsonl").string());
  if (!evidence.ok()) return Fail("evidence", evidence.error());
  workflow::WorkflowEnvironment environment;
  environment.policy = policy;
  environment.gate = [&]() -> Result<gate::GateEnvironment> { return Environment(dir, *config, evidence->get()); };
  workflow::WorkflowOutcome outcome = workflow::RunWorkflow(workflow_path.string(), inputs_path.string(), environment);
  if (!outcome.ok()) return Fail(StageName(outcome), *outcome.error);
  Narrate("   valid: " + std::to_string(outcome.operations) + " operations bound to reviewed tools");
  if (outcome.content_trust) {
    const auto& findings = outcome.content_trust->findings;
    const auto high = std::count_if(findings.begin(), findings.end(), [](const auto& f) { return f.severity == "high"; });
    Narrate("   content trust: " + std::to_string(findings.size()) + " finding(s), " + std::to_string(high) +
        " high (advisory: the demo's policy does not block on findings)");
  }
  const json::Value outputs = outcome.run.outputs;
  Narrate("   outputs " + outputs.dump(2));
  if (!outputs.contains("images") || outputs["images"].size() != 3) {
    return Fail("run", MakeError("demo.unexpected", "expected three rendered views, one per sentence"));
  }

  Narrate("5. drift: restart the server with a changed render_turntable description, verify again");
  auto drifted = WriteConfig(dir, *server, {"description=render_turntable"});
  if (!drifted.ok()) return Fail("writing the runtime configuration", drifted.error());
  gate::Gate gate(Environment(dir, *drifted, evidence->get()));
  gate::GateResult refused = gate.Verify({manifest_path.string(), m.sha256(), kServerKey, "render_turntable"});
  if (refused.ok() || refused.error->code != "catalog.tool_drift") {
    return Fail("drift", refused.ok() ? MakeError("demo.unexpected", "the drifted tool was accepted") : *refused.error);
  }
  Narrate("   refused: " + refused.error->code + " (exit " + std::to_string(GatedExitCodeFor(*refused.error)) +
      "), differing pointers:");
  for (const auto& pointer : refused.error->details["pointers"]) {
    Narrate("     " + pointer["pointer"].get<std::string>() + " (" + pointer["change"].get<std::string>() + ")");
  }
  Narrate("\nEvery expected outcome happened. Files: " + std::string(kManifestFile) +
      ", turntable-brief.uws.yaml, inputs.json, evidence.jsonl, mcp.json");
  if (options.json) {
    PrintJsonResult({{"dir", dir.string()}, {"manifestSha256", m.sha256()}, {"outputs", outputs},
                     {"drift", {{"code", refused.error->code}, {"pointers", refused.error->details["pointers"]}}}});
  }
  return kExitOk;
}

}  // namespace

void RegisterDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command = app.add_subcommand("demo", "The whole lifecycle against the bundled demo server");
  command->add_option("--dir", options->dir, "Work folder (default ./udon-mcp-demo)");
  command->add_option("--server", options->server, "The demo server binary (default: beside udon-mcp)");
  command->add_flag("--json", options->json, "Machine result on stdout; the narration goes to stderr");
  SetAction(command, &options->json, [options] { return RunDemo(*options); });
}

}  // namespace udon::cli
