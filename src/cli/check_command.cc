#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "json/pointer.h"
#include "manifest/instant.h"
#include "manifest/manifest.h"
#include "manifest/profile_schema.h"
#include "manifest/review.h"

namespace udon::cli {
namespace {

struct CheckOptions {
  std::string file;
  std::string server;
  std::string tool;
  CommonOptions common;
};

std::string ReviewPointer(const std::string& server, const std::string& tool) {
  return "/servers/" + json::Pointer::EscapeToken(server) + "/reviews/" + json::Pointer::EscapeToken(tool);
}

// Every problem of one server: duplicate names, reviews of absent or duplicated tools,
// reviews the Stage 1 rules or policy refuse.
void CheckServer(const manifest::Manifest& m, const std::string& server, const manifest::Policy& policy,
                 std::vector<Error>& findings) {
  for (const auto& [name, count] : m.ToolNames(server)) {
    if (count > 1) {
      Error error = MakeError("catalog.tool_duplicate",
                              "a tool name occurs more than once; it can never be reviewed or called",
                              m.FindTool(server, name)[1].Pointer(server));
      error.details["tool"] = name;
      findings.push_back(std::move(error));
    }
  }
  const json::Value* entry = m.server(server);
  if (entry == nullptr || !entry->contains("reviews")) return;
  for (const auto& [tool, review_json] : (*entry)["reviews"].items()) {
    const std::string pointer = ReviewPointer(server, tool);
    auto selected = manifest::SelectTool(m, server, tool);
    if (!selected.ok()) {
      Error error = selected.error();
      error.pointer = pointer;  // the review that names an absent or duplicated tool
      findings.push_back(std::move(error));
      continue;
    }
    auto review = manifest::ValidateReview(review_json, policy);
    if (!review.ok()) {
      findings.push_back(std::move(review).error().AtPrefix(pointer));
      continue;
    }
    Status against = manifest::ValidateReviewAgainstTool(*review, *selected->tool);
    if (!against.ok()) {
      Error error = std::move(against).error();
      error.pointer = error.code == "catalog.task_required" ? selected->Pointer(server) + error.pointer
                                                             : pointer + error.pointer;
      findings.push_back(std::move(error));
    }
  }
}

// "6 days 23 hours", "5 hours 3 minutes", "42 seconds": the two largest units, enough to
// tell whether a review window is about to close.
std::string HumanDuration(manifest::Seconds seconds) {
  const std::pair<const char*, manifest::Seconds> units[] = {
      {"day", manifest::kSecondsPerDay}, {"hour", 3600}, {"minute", 60}, {"second", 1}};
  std::string out;
  int shown = 0;
  for (const auto& [name, size] : units) {
    const manifest::Seconds count = seconds / size;
    if (count == 0) {
      if (shown > 0) break;  // "6 days", not "6 days 0 hours"
      continue;
    }
    seconds -= count * size;
    out += (out.empty() ? "" : " ") + std::to_string(count) + " " + name + (count == 1 ? "" : "s");
    if (++shown == 2) break;
  }
  if (out.empty()) out = "0 seconds";
  return out;
}

// What a reviewer wants to know beyond "no findings": per server how many tools there are
// and how many carry a review (reviews of tools that are not there do not count), and when
// the manifest expires. The same facts for --json and for people.
json::Value Summary(const manifest::Manifest& m, const std::string& only_server, manifest::Seconds now) {
  json::Value servers = json::Value::object();
  for (const std::string& server : m.server_keys()) {
    if (!only_server.empty() && server != only_server) continue;
    std::size_t reviewed = 0;
    json::Value unreviewed = json::Value::array();
    const auto names = m.ToolNames(server);
    for (const auto& [name, count] : names) {
      if (m.review(server, name) != nullptr) {
        ++reviewed;
      } else {
        unreviewed.push_back(name);
      }
    }
    servers[server] = {{"tools", names.size()}, {"reviewed", reviewed}, {"unreviewed", std::move(unreviewed)}};
  }
  json::Value summary = {{"servers", std::move(servers)}};
  const json::Value& expires = m.document()["expiresAt"];
  if (expires.is_string()) {
    if (auto at = manifest::ParseInstant(expires.get<std::string>()); at.ok()) {
      summary["expiresAt"] = expires;
      summary["expiresInSeconds"] = *at - now;
    }
  }
  return summary;
}

void PrintSummary(const json::Value& summary) {
  for (const auto& [server, counts] : summary["servers"].items()) {
    PrintForPeople(stdout,
                   "server " + server + ": " + std::to_string(counts["tools"].get<std::size_t>()) + " tools, " +
                       std::to_string(counts["reviewed"].get<std::size_t>()) + " reviewed",
                   "the line above");
  }
  if (!summary.contains("expiresAt")) return;
  const manifest::Seconds left = summary["expiresInSeconds"].get<manifest::Seconds>();
  const std::string when = left > 0 ? "in " + HumanDuration(left) : HumanDuration(-left) + " ago";
  std::printf("%s %s (%s)\n", left > 0 ? "expires" : "expired",
              summary["expiresAt"].get<std::string>().c_str(), left == 0 ? "now" : when.c_str());
}

int RunCheck(const CheckOptions& options) {
  const bool json = options.common.json;
  auto policy = LoadPolicy(options.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  auto loaded = manifest::Manifest::Load(options.file);
  if (!loaded.ok()) return ReportError(loaded.error(), json, kExitInvalidInput, options.file);
  const manifest::Manifest& m = *loaded;

  std::vector<Error> findings = manifest::CheckAgainstProfileSchema(m.document());
  if (Status fresh = m.CheckFreshness(manifest::NowSeconds(), *policy); !fresh.ok()) {
    findings.push_back(fresh.error());
  }
  for (const std::string& server : m.server_keys()) {
    if (!options.server.empty() && server != options.server) continue;
    CheckServer(m, server, *policy, findings);
  }
  if (!options.server.empty() && !options.tool.empty()) {
    if (!m.has_server(options.server)) {
      findings.push_back(MakeError("manifest.server_unknown", "the server is not in the manifest", "/servers"));
    } else if (m.review(options.server, options.tool) == nullptr) {
      findings.push_back(MakeError("review.missing", "the selected tool has no review",
                                   ReviewPointer(options.server, options.tool)));
      if (auto selected = manifest::SelectTool(m, options.server, options.tool); !selected.ok()) {
        findings.push_back(selected.error());
      }
    }
  }

  bool invalid = false;
  json::Value listed = json::Value::array();
  for (const Error& finding : findings) {
    invalid = invalid || finding.code == "manifest.invalid";
    listed.push_back({{"code", finding.code}, {"pointer", finding.pointer}, {"message", finding.message}});
    if (!json) PrintForPeople(stderr, options.file + ": " + finding.Describe() + " [" + finding.code + "]", "the finding above");
  }
  const int exit_code = findings.empty() ? kExitOk : invalid ? kExitInvalidInput : kExitRefused;
  const json::Value summary = Summary(m, options.server, manifest::NowSeconds());
  if (json) {
    if (findings.empty()) {
      json::Value result = summary;
      result["sha256"] = m.sha256();
      result["findings"] = listed;
      PrintJsonResult(std::move(result));
    } else {
      Error failure = MakeError(findings.front().code, "the manifest has problems");
      failure.details = summary;
      failure.details["findings"] = listed;
      failure.details["sha256"] = m.sha256();
      ReportError(failure, true, exit_code, options.file);
    }
  } else {
    if (findings.empty()) std::printf("ok %s\n", m.sha256().c_str());
    PrintSummary(summary);
  }
  return exit_code;
}

}  // namespace

void RegisterCheckCommand(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check", "Static completeness, expiry, review and profile checks of a manifest");
  command->add_option("FILE", options->file, "Manifest, or - for stdin")->required();
  command->add_option("--server", options->server, "Only this server");
  command->add_option("--tool", options->tool, "Require a review of this tool (with --server)");
  AddCommonOptions(command, options->common);
  SetAction(command, &options->common.json, [options] { return RunCheck(*options); });
}

}  // namespace udon::cli
