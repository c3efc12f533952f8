#include "adopt/check.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <utility>

#include "adopt/applied_entry.h"
#include "adopt/apply.h"
#include "adopt/discovery.h"
#include "adopt/jsonc.h"
#include "base/file.h"
#include "mcp/client/client.h"

namespace udon::adopt {
namespace {

// The host entry as the file holds it now.
Result<json::Value> CurrentEntry(const AdoptedEntry& entry) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(entry.file));
  UDON_ASSIGN_OR_RETURN(json::Value document, ParseJsonc(text));
  return EntryAt(document, entry.path);
}

// A stdio server as hosts start one: the entry's env over the host's whole environment.
mcp::ServerConfig AsHostStartsIt(const AdoptedEntry& adopted, const json::Value& entry) {
  mcp::ServerConfig config;
  config.key = adopted.key;
  config.command = entry.value("command", std::string());
  if (entry.contains("args") && entry["args"].is_array()) {
    for (const json::Value& arg : entry["args"]) {
      if (arg.is_string()) config.args.push_back(arg.get<std::string>());
    }
  }
  if (entry.contains("env") && entry["env"].is_object()) {
    for (const auto& [name, value] : entry["env"].items()) {
      if (!value.is_string()) continue;
      auto expanded = mcp::ExpandEnv(value.get<std::string>(), mcp::ProcessEnv());
      config.env.emplace_back(name, expanded.ok() ? *expanded : value.get<std::string>());
    }
  }
  config.inherit_env_all = true;
  config.cwd = adopted.project;
  return config;
}

// "udon-mcp serve: not offering SERVER/TOOL: CODE: message" lines of the gateway's stderr.
std::string WhyNotOffered(const std::string& stderr_tail, const std::string& server, const std::string& tool) {
  const std::string marker = "not offering " + server + "/" + tool + ": ";
  std::istringstream lines(stderr_tail);
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + marker.size());
    return rest.substr(0, rest.find(':'));
  }
  return "not offered";
}

// The gateway's own refusal to start, from its stderr ("udon-mcp: error: MESSAGE [CODE]",
// the form of every udon-mcp refusal): what a host shows as "Connection closed".
std::optional<Error> GatewayRefusal(const std::string& stderr_tail) {
  const std::string marker = "udon-mcp: error: ";
  std::istringstream lines(stderr_tail);
  std::optional<Error> refusal;
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(marker);
    const auto open = line.rfind(" [");
    if (at == std::string::npos || open == std::string::npos || line.back() != ']' || open < at) continue;
    const std::string message = line.substr(at + marker.size(), open - at - marker.size());
    refusal = MakeError(line.substr(open + 2, line.size() - open - 3), "the gateway refused to start: " + message);
  }
  return refusal;
}

// A tool offered that the manifest does not review: what answers is not the gateway of that
// manifest, whatever its binary is named.
void FlagUnreviewedOffers(EntryCheck& check, const EntryReview& review) {
  for (const std::string& tool : check.offered) {
    if (std::find(review.reviewed.begin(), review.reviewed.end(), tool) == review.reviewed.end()) {
      check.offered_unreviewed.push_back(tool);
    }
  }
  if (check.offered_unreviewed.empty()) return;
  check.error = MakeError("adopt.unreviewed_offered",
                          "the entry offers tools its manifest does not review: it does not start the gateway");
  check.error->details["server"] = check.server;
}

// The gateway opened at exactly `version` when one is given. Errors: the client's, and
// server.protocol_version_mismatch (details.requested, details.negotiated).
Result<mcp::InitializeResult> Open(mcp::Client& client, const std::optional<std::string>& version) {
  if (!version) return client.Initialize();
  UDON_ASSIGN_OR_RETURN(mcp::InitializeResult opened, client.Open(*version));
  if (opened.protocol_version == *version) return opened;
  Error error = MakeError("server.protocol_version_mismatch",
                          "the gateway answered another protocol version than the one asked for");
  error.details = {{"requested", *version}, {"negotiated", opened.protocol_version}};
  return error;
}

void Connect(EntryCheck& check, const AdoptedEntry& adopted, const json::Value& entry, const EntryReview& review,
             const std::optional<std::string>& version) {
  mcp::ClientOptions options;
  options.request_timeout = std::chrono::seconds(30);
  auto client = mcp::Client::Connect(AsHostStartsIt(adopted, entry), options);
  if (!client.ok()) {
    check.error = client.error();
    return;
  }
  auto opened = Open(**client, version);
  if (!opened.ok()) {
    (*client)->Close();  // the gateway exits once it answered: all of its stderr is in
    auto refusal = GatewayRefusal((*client)->server_stderr_tail());
    check.error = refusal ? *refusal : opened.error();
    return;
  }
  check.protocol_version = opened->protocol_version;
  auto pages = (*client)->ListAllTools();
  if (!pages.ok()) {
    check.error = pages.error();
    return;
  }
  check.connected = true;
  for (const json::Value& page : pages->pages) {
    for (const json::Value& tool : page.value("tools", json::Value::array())) {
      check.offered.push_back(tool.value("name", std::string()));
    }
  }
  (*client)->Close();  // all of the gateway's stderr is in once it ended
  const std::string tail = (*client)->server_stderr_tail();
  for (const std::string& tool : review.reviewed) {
    if (std::find(check.offered.begin(), check.offered.end(), tool) == check.offered.end()) {
      check.withheld.push_back({tool, WhyNotOffered(tail, adopted.server, tool)});
    }
  }
  FlagUnreviewedOffers(check, review);
}

}  // namespace

Result<std::vector<EntryCheck>> CheckAdopted(const std::string& dir, const std::optional<std::string>& protocol_version) {
  UDON_ASSIGN_OR_RETURN(Adoption adoption, Adoption::Load(dir));
  UDON_ASSIGN_OR_RETURN(std::vector<EntryReview> reviews, ReviewState(dir, adoption));
  std::vector<EntryCheck> checks;
  for (std::size_t i = 0; i < adoption.entries.size(); ++i) {
    const AdoptedEntry& adopted = adoption.entries[i];
    EntryCheck check{adopted.host, adopted.key, adopted.server, adopted.file, false, false, {}, std::nullopt, {}, {}, {}};
    auto entry = CurrentEntry(adopted);
    if (!entry.ok()) {
      check.error = entry.error();
    } else if (!IsGated(*entry)) {
      check.error = MakeError("adopt.not_applied", "the host entry does not start udon-mcp serve (adopt --apply)");
    } else if (auto changed = ChangedSinceApply(adoption, adopted, *entry)) {
      check.error = std::move(changed);
    } else {
      check.gated = true;
      Connect(check, adopted, *entry, reviews[i], protocol_version);
    }
    for (const std::string& tool : reviews[i].unreviewed) check.withheld.push_back({tool, "unreviewed"});
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace udon::adopt
