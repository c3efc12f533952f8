#include "trust/analyzer.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "json/pointer.h"
#include "trust/internal/analysis.h"

namespace udon::trust {
namespace internal {

Report Analyzer::Run(const std::vector<const Resolver*>& resolvers) {
  Collect();
  ResolveOperations(resolvers);
  // Propagation is monotonic; 1.9.1 caps the passes, 1.9.2 runs to the fixed point
  // (the lattices are finite, so it is reached; the cap only guards the loop).
  const std::size_t limit =
      options_.v192 ? kFixedPointGuard : 4 + 2 * steps_.size() + 2 * workflows_.size();
  for (std::size_t pass = 0; pass < limit; ++pass) {
    changed_ = false;
    RunPass();
    if (!changed_) break;
  }
  emit_ = true;
  RunPass();
  Report report;
  report.edges.assign(edges_.begin(), edges_.end());
  for (auto& [key, finding] : findings_) report.findings.push_back(finding);
  std::sort(report.edges.begin(), report.edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.to, a.from, a.provenance, a.capability) < std::tie(b.to, b.from, b.provenance, b.capability);
  });
  std::sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.path, a.code, a.severity) < std::tie(b.path, b.code, b.severity);
  });
  return report;
}

void Analyzer::RunPass() {
  for (const auto& [id, info] : operations_) {
    // Unreferenced operations are analyzed once, with empty inputs; calls from steps are
    // analyzed with their bound inputs.
    if (!referenced_operations_.contains(id)) AnalyzeOperation(id, Env{}, "");
  }
  for (const auto& [id, info] : workflows_) AnalyzeWorkflow(id);
  const json::Value& results = Items(&root_, "results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json::Value* value = Member(&results[i], "value");
    if (value == nullptr || !value->is_string() || value->get_ref<const std::string&>().empty()) continue;
    std::string workflow = StringMember(&results[i], "from");
    workflow = workflow.substr(0, workflow.find('.'));
    Env env;
    env.workflow = workflow;
    env.inputs = workflow_inputs_[workflow];
    env.at_workflow_exit = true;
    EvalString(value->get<std::string>(), Indexed("results", i) + ".value", env);
  }
}

std::string Analyzer::Key(const std::string& path, std::string_view key) const {
  if (!options_.v192 || IsPlainKey(key)) return path + "." + std::string(key);
  return path + "[" + json::Value(std::string(key)).dump() + "]";
}

std::string Analyzer::PointerSuffix(const std::string& path, std::string_view pointer) const {
  if (pointer.empty()) return path;
  auto parsed = json::Pointer::Parse(pointer);
  if (!parsed.ok()) return path;
  std::string out = path;
  for (const std::string& token : parsed->tokens()) {
    out = IsDecimal(token) ? out + "[" + token + "]" : Key(out, token);
  }
  return out;
}

std::string Analyzer::ChannelPointer(const std::string& pointer) {
  if (pointer.empty() || pointer == "/") return "/request";
  if (pointer.rfind("/request", 0) == 0 || pointer.rfind("/x-", 0) == 0) return pointer;
  return "/request" + pointer;
}

}  // namespace internal

const char* FindingMessage(const std::string& code) {
  static const std::map<std::string, const char*, std::less<>> kMessages = {
      {kUntrustedInstruction, "untrusted free-form content can reach an instruction channel"},
      {kUntrustedAuthority, "untrusted content can reach an authority-bearing channel"},
      {kUntrustedControl, "untrusted content can influence control flow"},
      {kUnknownProvenance, "content provenance cannot be determined statically"},
      {kOpaqueExpression,
       "expression syntax is outside the UWS core grammar and has no resolver-supplied references"},
      {kUnresolvedReference, "expression reference cannot be resolved statically"},
      {kNonDominatingReference, "referenced step does not dominate this use"},
      {kResolverFailure, "operation resolver failed while describing the operation"},
      {kResolverConflict, "more than one resolver claims the operation"},
  };
  auto it = kMessages.find(code);
  return it == kMessages.end() ? "" : it->second;
}

json::Value Report::ToJson() const {
  json::Value out = json::Value::object();
  if (!edges.empty()) {
    json::Value list = json::Value::array();
    for (const Edge& edge : edges) {
      list.push_back({{"from", edge.from}, {"to", edge.to}, {"provenance", edge.provenance},
                      {"capability", edge.capability}});
    }
    out["edges"] = std::move(list);
  }
  if (!findings.empty()) {
    json::Value list = json::Value::array();
    for (const Finding& finding : findings) {
      list.push_back({{"code", finding.code}, {"severity", finding.severity}, {"path", finding.path},
                      {"message", finding.message}});
    }
    out["findings"] = std::move(list);
  }
  return out;
}

Result<Report> Analyze(const uws::Document& document, const std::vector<const Resolver*>& resolvers,
                       const Options& options) {
  std::vector<Error> errors = uws::Validate(document);
  if (!errors.empty()) return uws::InvalidDocument(errors);
  return internal::Analyzer(document, options).Run(resolvers);
}

Status CheckFindingsPolicy(const Report& report, manifest::FindingsBlock block) {
  if (block == manifest::FindingsBlock::kNone) return OkStatus();
  json::Value blocking = json::Value::array();
  for (const Finding& finding : report.findings) {
    if (block == manifest::FindingsBlock::kHigh && finding.severity != "high") continue;
    blocking.push_back({{"code", finding.code}, {"severity", finding.severity}, {"path", finding.path}});
  }
  if (blocking.empty()) return OkStatus();
  Error error =
      MakeError("content_trust.blocked", "content-trust findings block this run under policy blockOnFindings");
  error.details["blockOnFindings"] = block == manifest::FindingsBlock::kHigh ? "high" : "warning";
  error.details["findings"] = std::move(blocking);
  return error;
}

}  // namespace udon::trust
