#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "gate/gate.h"
#include "base/file.h"
#include "json/yaml.h"
#include "manifest/manifest.h"
#include "manifest/review.h"

namespace udon::cli {
namespace {

// A flag asserting true: `--headless` states true, `--headless=false` states false (which
// Stage 1 then refuses, review.rejected), and leaving it out states nothing
// (review.incomplete). The last occurrence wins, as for any CLI11 flag.
struct StatedFlag {
  bool value = false;
  const CLI::Option* option = nullptr;
  std::optional<bool> Stated() const {
    return option != nullptr && option->count() > 0 ? std::optional<bool>(value) : std::nullopt;
  }
};

void AddStatedFlag(CLI::App* command, const std::string& name, StatedFlag& flag, const std::string& description) {
  flag.option = command->add_flag(name, flag.value, description);
}

struct ReviewOptions {
  std::string file;
  std::string server;
  std::string tool;
  std::string from;
  std::string output;
  bool show = false;
  // Flags that build a review when --from is absent.
  std::string reviewer;
  // Assertions that must be true. A flag given as --headless=false is a stated false
  // (refused as review.rejected, like the file form), not a missing statement.
  StatedFlag headless, independent_calls, reference_based_io;
  std::optional<bool> model_backed;  // must be stated either way
  std::vector<std::string> side_effects;
  bool no_side_effects = false;
  std::string concurrency;
  std::string serialize_scope;
  std::vector<std::string> channels;  // /pointer=class
  std::optional<std::string> notes;
  CommonOptions common;
};

Result<json::Value> ReviewFromFlags(const ReviewOptions& o) {
  json::Value review = {{"reviewer", o.reviewer}, {"reviewedAt", manifest::FormatInstant(manifest::NowSeconds())}};
  json::Value assertions = json::Value::object();
  // An assertion left out stays absent, so the review is refused as incomplete.
  if (auto stated = o.headless.Stated()) assertions["headless"] = *stated;
  if (auto stated = o.independent_calls.Stated()) assertions["independentCalls"] = *stated;
  if (o.model_backed) assertions["modelBacked"] = *o.model_backed;
  if (!o.side_effects.empty() && o.no_side_effects) {
    return MakeError("usage.invalid", "--side-effect and --no-side-effects exclude each other");
  }
  if (!o.side_effects.empty() || o.no_side_effects) assertions["sideEffects"] = o.side_effects;
  if (!o.concurrency.empty()) assertions["concurrency"] = o.concurrency;
  if (!o.serialize_scope.empty()) assertions["serializeScope"] = o.serialize_scope;
  if (auto stated = o.reference_based_io.Stated()) assertions["referenceBasedIO"] = *stated;
  review["assertions"] = std::move(assertions);
  json::Value channels = json::Value::object();
  for (const std::string& channel : o.channels) {
    const auto eq = channel.rfind('=');
    if (eq == std::string::npos) return MakeError("usage.invalid", "--channel takes /pointer=data|instruction|authority");
    channels[channel.substr(0, eq)] = channel.substr(eq + 1);
  }
  review["inputChannels"] = std::move(channels);
  if (o.notes) review["notes"] = *o.notes;
  return review;
}

Result<json::Value> ReviewFromFile(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, 1u << 20));
  auto value = json::ParseJsonOrYaml(text);
  if (!value.ok()) return value.error().WithCode("review.incomplete");
  json::Value review = std::move(value).value();
  // The review time is when the reviewer's decision is recorded, unless the file says.
  if (review.is_object() && !review.contains("reviewedAt")) {
    review["reviewedAt"] = manifest::FormatInstant(manifest::NowSeconds());
  }
  return review;
}

int Show(const manifest::Manifest& m, const ReviewOptions& o) {
  auto selected = manifest::SelectTool(m, o.server, o.tool);
  if (!selected.ok()) return ReportError(selected.error(), o.common.json, ExitCodeFor(selected.error()));
  const json::DisplayText shown = manifest::RenderToolForReview(*selected->tool);
  if (o.common.json) {
    // The rendering as printed, and the Tool itself exact (JSON escaping is unambiguous).
    PrintJsonResult({{"tool", shown.text},
                     {"hiddenCodePoints", shown.hidden.code_points.size()},
                     {"toolObject", *selected->tool}});
  } else {
    std::fwrite(shown.text.data(), 1, shown.text.size(), stdout);
    if (!shown.hidden.empty()) {
      std::fprintf(stderr, "udon-mcp: warning: %s, shown as <U+XXXX>\n",
                   json::HiddenNotice(shown.hidden, "the tool").c_str());
    }
  }
  return kExitOk;
}

int RunReview(const ReviewOptions& o) {
  const bool json = o.common.json;
  auto policy = LoadPolicy(o.common);
  if (!policy.ok()) return ReportError(policy.error(), json, kExitInvalidInput);
  auto loaded = manifest::Manifest::Load(o.file);
  if (!loaded.ok()) return ReportError(loaded.error(), json, kExitInvalidInput, o.file);
  manifest::Manifest m = std::move(loaded).value();
  if (!m.has_server(o.server)) {
    return ReportError(MakeError("manifest.server_unknown", "the server is not in the manifest"), json, kExitInvalidInput);
  }
  if (o.show) return Show(m, o);

  auto review_json = o.from.empty() ? ReviewFromFlags(o) : ReviewFromFile(o.from);
  if (!review_json.ok()) return ReportError(review_json.error(), json, ExitCodeFor(review_json.error()));
  auto review = manifest::ApplyReview(m, o.server, o.tool, *review_json, *policy, manifest::NowSeconds());
  if (!review.ok()) return ReportError(review.error(), json, ExitCodeFor(review.error()));
  const json::Value& reviewed_tool = *manifest::SelectTool(m, o.server, o.tool)->tool;
  const std::string target = o.output.empty() ? o.file : o.output;
  Status written = base::WriteFileAtomic(target, m.ToPrettyJson());
  if (!written.ok()) return ReportError(written.error(), json, kExitInternal, target);

  const std::vector<std::string> unclassified = manifest::UnclassifiedTopLevelArguments(*review, reviewed_tool);
  if (!unclassified.empty() && !json) {
    std::string names;
    for (const auto& name : unclassified) names += (names.empty() ? "" : ", ") + name;
    PrintForPeople(stderr, "udon-mcp: warning: arguments without an input channel (cannot be bound in workflows): " + names,
                   "the warning above");
  }
  if (json) {
    PrintJsonResult({{"manifest", target}, {"sha256", m.sha256()}, {"unclassifiedArguments", unclassified}});
  } else {
    std::printf("%s %s\n", m.sha256().c_str(), target.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterReviewCommand(CLI::App& app) {
  auto o = std::make_shared<ReviewOptions>();
  CLI::App* command = app.add_subcommand(
      "review", "Add or replace one tool's review (Stage 1 assertions and input channels)");
  command->add_option("FILE", o->file, "Manifest")->required();
  command->add_option("--server", o->server, "Server key in the manifest")->required();
  command->add_option("--tool", o->tool, "Tool name")->required();
  command->add_flag("--show", o->show, "Print the tool for reading first, hidden code points escaped");
  command->add_option("--from", o->from, "Review file (JSON or YAML) instead of flags");
  command->add_option("-o,--output", o->output, "Write here instead of in place");
  command->add_option("--reviewer", o->reviewer, "Reviewer identity");
  AddStatedFlag(command, "--headless", o->headless, "Assert: needs no GUI or human interaction");
  AddStatedFlag(command, "--independent-calls", o->independent_calls,
                "Assert: no dependence on prior calls, session or server-minted handles");
  command->add_option("--model-backed", o->model_backed, "true|false: results come from a model");
  command->add_option("--side-effect", o->side_effects, "A reviewed side-effect class (repeatable)");
  command->add_flag("--no-side-effects", o->no_side_effects, "An explicit empty side-effect list");
  command->add_option("--concurrency", o->concurrency, "safe|serialize");
  command->add_option("--serialize-scope", o->serialize_scope, "tool|server (with serialize)");
  AddStatedFlag(command, "--reference-based-io", o->reference_based_io,
                "Assert: inputs and outputs are JSON values or addressable references");
  command->add_option("--channel", o->channels, "/pointer=data|instruction|authority (repeatable)");
  command->add_option("--notes", o->notes, "Free text kept with the review");
  AddCommonOptions(command, o->common);
  SetAction(command, &o->common.json, [o] { return RunReview(*o); });
}

}  // namespace udon::cli
