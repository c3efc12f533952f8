// UWS 1.9 advisory content trust: where untrusted or undeterminable content can flow in a
// UWS document. Provenance (trusted < unknown < untrusted) and value capability
// (free_text, constrained_scalar, composite, unknown) propagate to a fixed point over
// request bindings, step inputs, controls, criteria, outputs and workflow calls, with the
// dominance rule for $steps references and the root contentTrust declarations. The report
// holds document paths, fixed codes and fixed messages only: never values, excerpts or
// resolver error text. Findings are advisory: they never change validation or execution
// (a local policy may choose to block on them, see CheckFindingsPolicy).
#pragma once

#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "manifest/policy.h"
#include "trust/resolver.h"
#include "uws/document.h"

namespace udon::trust {

struct Options {
  // The UWS 1.9.2 refinements: declared provenance joins instead of replacing, strict
  // resolver claims, a true fixed point, route-scoped $trigger, progressive outputs,
  // no workflow-level contexts, structural ancestors dominate, bracketed odd keys,
  // request parts outside the channels scanned as data.
  bool v192 = false;
};

struct Edge {
  std::string from;  // a producer path, or an unresolved label such as $steps.X.outputs.Y
  std::string to;    // the document path of the use
  std::string provenance;
  std::string capability;
  friend bool operator==(const Edge&, const Edge&) = default;
};

struct Finding {
  std::string code;      // content_trust.*
  std::string severity;  // high | warning
  std::string path;
  std::string message;   // fixed by the code
  friend bool operator==(const Finding&, const Finding&) = default;
};

// Edges sorted by to, from, provenance, capability; findings by path, code, severity
// (byte order); both deduplicated.
struct Report {
  std::vector<Edge> edges;
  std::vector<Finding> findings;

  // {"edges":[{from,to,provenance,capability}],"findings":[{code,severity,path,message}]},
  // empty arrays omitted.
  json::Value ToJson() const;
};

inline constexpr const char* kUntrustedInstruction = "content_trust.untrusted_instruction";
inline constexpr const char* kUntrustedAuthority = "content_trust.untrusted_authority";
inline constexpr const char* kUntrustedControl = "content_trust.untrusted_control";
inline constexpr const char* kUnknownProvenance = "content_trust.unknown_provenance";
inline constexpr const char* kOpaqueExpression = "content_trust.opaque_expression";
inline constexpr const char* kUnresolvedReference = "content_trust.unresolved_reference";
inline constexpr const char* kNonDominatingReference = "content_trust.non_dominating_reference";
inline constexpr const char* kResolverFailure = "content_trust.resolver_failure";
inline constexpr const char* kResolverConflict = "content_trust.resolver_conflict";

// The fixed message of a finding code ("" for an unknown code).
const char* FindingMessage(const std::string& code);

// Validates first: an invalid document is an error (uws.invalid with details.errors).
Result<Report> Analyze(const uws::Document& document, const std::vector<const Resolver*>& resolvers,
                       const Options& options = {});

// Policy blockOnFindings for `run`: none never blocks, high blocks on any high finding,
// warning on any finding at all. Error content_trust.blocked (exit 3 by the contract's
// "refused before dispatch") with details.findings [{code, severity, path}].
Status CheckFindingsPolicy(const Report& report, manifest::FindingsBlock block);

}  // namespace udon::trust
