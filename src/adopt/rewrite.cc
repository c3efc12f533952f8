#include "adopt/rewrite.h"

#include <algorithm>
#include <set>

#include "adopt/carried.h"
#include "adopt/jsonc.h"
#include "json/json.h"

namespace udon::adopt {
namespace {

// Members the gateway entry sets or that described the upstream transport (now in
// D/mcp.json); every other member of the entry is the host's and stays.
const std::set<std::string>& Replaced() {
  static const std::set<std::string> names = {"type", "command", "args", "env",       "cwd",     "url",
                                              "serverUrl", "httpUrl", "headers", "inheritEnv", "sandbox"};
  return names;
}

// The rewritten entry's `env` (carried.h): each value the gateway hands the upstream under
// its carried name; an `env` member's value keeps its bytes, a moved value is written as a
// JSON string. Empty when nothing is carried.
Result<std::string> CarriedEnv(std::string_view text, std::string_view blanked, const ValueSpan& span,
                               const std::vector<std::pair<std::string, ValueSpan>>& members) {
  UDON_ASSIGN_OR_RETURN(json::Value entry, ParseJsonc(blanked.substr(span.begin, span.end - span.begin)));
  const SplitEntry split = SplitCarried(entry);
  if (split.carried.empty()) return std::string();
  std::vector<std::pair<std::string, ValueSpan>> env_members;
  for (const auto& [name, member] : members) {
    if (name != "env") continue;
    UDON_ASSIGN_OR_RETURN(env_members, ObjectMembers(blanked, member));
  }
  std::string out;
  for (const CarriedVariable& variable : split.carried) {
    std::string value = json::Value(variable.value).dump();
    for (const auto& [name, member] : env_members) {
      if (!variable.env_member.empty() && name == variable.env_member) {
        value = std::string(text.substr(member.begin, member.end - member.begin));
      }
    }
    out += (out.empty() ? "" : ", ") + json::Value(variable.name).dump() + ": " + value;
  }
  return "\"env\": { " + out + " }";
}

struct Replacement {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string text;
};

Result<Replacement> EntryReplacement(std::string_view text, std::string_view blanked, const EntryEdit& edit) {
  UDON_ASSIGN_OR_RETURN(ValueSpan span, FindMember(blanked, edit.path));
  UDON_ASSIGN_OR_RETURN(auto members, ObjectMembers(blanked, span));
  auto raw = [&](const ValueSpan& member) { return std::string(text.substr(member.begin, member.end - member.begin)); };
  const bool had_type =
      std::any_of(members.begin(), members.end(), [](const auto& member) { return member.first == "type"; });
  std::vector<std::string> items;
  if (edit.type_required || had_type) items.push_back("\"type\": \"stdio\"");
  items.push_back("\"command\": " + json::Value(edit.gateway.command).dump());
  std::string args;
  for (const std::string& arg : GatewayArgs(edit.gateway)) args += (args.empty() ? "" : ", ") + json::Value(arg).dump();
  items.push_back("\"args\": [" + args + "]");
  UDON_ASSIGN_OR_RETURN(std::string env, CarriedEnv(text, blanked, span, members));
  if (!env.empty()) items.push_back(std::move(env));
  for (const auto& [name, member] : members) {
    if (Replaced().count(name) == 0) items.push_back(json::Value(name).dump() + ": " + raw(member));
  }
  const std::string_view original = text.substr(span.begin, span.end - span.begin);
  std::string joined;
  if (original.find('\n') == std::string_view::npos) {
    for (std::size_t i = 0; i < items.size(); ++i) joined += (i == 0 ? "" : ", ") + items[i];
    return Replacement{span.begin, span.end, "{ " + joined + " }"};
  }
  const std::string inner = members.empty() || members[0].second.indent.size() <= span.indent.size()
                                ? span.indent + "  "
                                : members[0].second.indent;
  for (std::size_t i = 0; i < items.size(); ++i) joined += (i == 0 ? "" : ",\n") + inner + items[i];
  return Replacement{span.begin, span.end, "{\n" + joined + "\n" + span.indent + "}"};
}

}  // namespace

std::vector<std::string> GatewayArgs(const GatewayCommand& gateway) {
  std::vector<std::string> args = {"serve",         "--manifest", gateway.manifest, "--pin-file", gateway.pin,
                                   "--config",      gateway.config, "--server", gateway.server};
  if (!gateway.policy.empty()) {
    args.push_back("--policy");
    args.push_back(gateway.policy);
  }
  return args;
}

Result<std::string> RewriteEntries(std::string_view text, const std::vector<EntryEdit>& edits) {
  UDON_ASSIGN_OR_RETURN(std::string blanked, BlankJsonc(text));
  std::vector<Replacement> replacements;
  for (const EntryEdit& edit : edits) {
    UDON_ASSIGN_OR_RETURN(Replacement one, EntryReplacement(text, blanked, edit));
    replacements.push_back(std::move(one));
  }
  // From the end, so that earlier offsets stay right.
  std::sort(replacements.begin(), replacements.end(),
            [](const Replacement& a, const Replacement& b) { return a.begin > b.begin; });
  std::string out(text);
  for (const Replacement& one : replacements) out.replace(one.begin, one.end - one.begin, one.text);
  UDON_RETURN_IF_ERROR(ParseJsonc(out));
  return out;
}

}  // namespace udon::adopt
