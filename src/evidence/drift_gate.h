// What the gate does with a manifest reviewed for one release when the next release is the
// live server: `evidence drift`'s per-pair `gate` member (docs/contract.md 7.20). Every
// comparison is the gate's own (gate/comparison.h: step 3's protocol version and serverInfo,
// steps 4 and 5 per reviewed Tool); this file only feeds them the later capture and says
// which step refused first. Nothing but step names, member names, codes and counts leaves.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "manifest/manifest.h"

namespace udon::evidence {

// A candidate relaxation of step 3's serverInfo comparison: the serverInfo members it drops
// from both sides before the gate compares them (`keep_only`, when not empty: every member
// but these; `ignore_all`: the whole serverInfo).
struct ServerInfoRule {
  std::string name;
  std::vector<std::string> dropped;
  std::vector<std::string> keep_only;
  bool ignore_all = false;
};
// exact (the gate's rule), ignore_version, ignore_display (title, description, websiteUrl,
// icons), name_only, ignore_server_info: in that order.
const std::vector<ServerInfoRule>& ServerInfoRules();

// The protocol version the later release negotiates when the gate asks for the reviewed
// one. A capture records the newest revision a release speaks (udon-mcp offers its newest);
// a release answers a revision it speaks with that revision, as the MCP SDKs do, so it
// answers the reviewed one unless its own newest is older (then it answers its newest).
// Revisions are dates (YYYY-MM-DD) and order as text.
std::string NegotiatedRevision(std::string_view reviewed, std::string_view live_newest);

// The gate's verdict on every Tool `reviewed` holds for `server`, with `live` (the same
// server's later capture) as the server:
// {"refusedAt": "protocol_version" | "server_info" | "catalog" | null (the first step that
//   refuses any call),
//  "capturedProtocolVersionsDiffer": bool, "serverInfoMembers": [top-level members that
//  differ], "toolsReviewed": n, "toolsRefused": n (by steps 4 and 5, as if step 3 passed),
//  "toolRefusals": {code: n}, "serverInfoRules": {rule: refusedAt under that rule}}.
// A name the reviewed manifest holds more than once counts under catalog.tool_duplicate, as
// the gate's static step refuses it.
json::Value GateVerdict(const manifest::Manifest& reviewed, const manifest::Manifest& live, std::string_view server);

// The pairs' `gate` members added up: {"pairs", "refusedPairs", "refusedAt": {step: pairs},
// "capturedProtocolVersionsDiffer", "serverInfoMembers": {member: pairs}, "toolsReviewed",
// "toolsRefused", "toolRefusals": {code: tools}, "serverInfoRules": [{"rule", "refusedPairs",
// "avoidedRefusals"}]}.
json::Value GateTotals(const json::Value& pairs);

}  // namespace udon::evidence
