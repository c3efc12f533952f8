#include "manifest/policy.h"

#include "base/file.h"
#include "json/yaml.h"

namespace udon::manifest {
namespace {

Error PolicyInvalid(const std::string& member, const char* message) {
  return MakeError("policy.invalid", message, "/" + member);
}

Result<long long> PositiveInteger(const json::Value& value, const std::string& member,
                                  long long maximum) {
  if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > maximum) {
    return PolicyInvalid(member, "must be a positive integer within range");
  }
  return value.get<long long>();
}

}  // namespace

Result<Policy> PolicyFromJson(const json::Value& document) {
  if (!document.is_object()) return MakeError("policy.invalid", "policy must be a JSON object");
  Policy policy;
  for (const auto& [member, value] : document.items()) {
    if (member == "maxReviewWindowDays") {
      UDON_ASSIGN_OR_RETURN(auto days, PositiveInteger(value, member, 3650));
      policy.max_review_window_days = static_cast<int>(days);
    } else if (member == "allowModelBacked") {
      if (!value.is_boolean()) return PolicyInvalid(member, "must be true or false");
      policy.allow_model_backed = value.get<bool>();
    } else if (member == "allowedSideEffects") {
      if (value.is_null()) {
        policy.allowed_side_effects.reset();
        continue;
      }
      if (!value.is_array()) return PolicyInvalid(member, "must be null or an array of strings");
      std::vector<std::string> classes;
      for (const auto& item : value) {
        if (!item.is_string()) return PolicyInvalid(member, "must be null or an array of strings");
        classes.push_back(item.get<std::string>());
      }
      policy.allowed_side_effects = std::move(classes);
    } else if (member == "blockOnFindings") {
      if (value == "none") policy.block_on_findings = FindingsBlock::kNone;
      else if (value == "high") policy.block_on_findings = FindingsBlock::kHigh;
      else if (value == "warning") policy.block_on_findings = FindingsBlock::kWarning;
      else return PolicyInvalid(member, "must be \"none\", \"high\" or \"warning\"");
    } else if (member == "callTimeoutSeconds") {
      UDON_ASSIGN_OR_RETURN(auto seconds, PositiveInteger(value, member, 86'400));
      policy.call_timeout_seconds = static_cast<int>(seconds);
    } else if (member == "maxPages") {
      UDON_ASSIGN_OR_RETURN(auto pages, PositiveInteger(value, member, 1'000'000));
      policy.max_pages = static_cast<std::size_t>(pages);
    } else if (member == "maxMessageBytes") {
      UDON_ASSIGN_OR_RETURN(auto bytes, PositiveInteger(value, member, 1LL << 32));
      policy.max_message_bytes = static_cast<std::size_t>(bytes);
    } else if (member == "strictListChanged") {
      if (!value.is_boolean()) return PolicyInvalid(member, "must be true or false");
      policy.strict_list_changed = value.get<bool>();
    } else if (member == "serializeTimeoutSeconds") {
      UDON_ASSIGN_OR_RETURN(auto seconds, PositiveInteger(value, member, 86'400));
      policy.serialize_timeout_seconds = static_cast<int>(seconds);
    } else if (member == "clockSkewSeconds") {
      // 0 is allowed (synchronized clocks); more than an hour is a broken clock, not skew.
      if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 3600) {
        return PolicyInvalid(member, "must be an integer from 0 to 3600");
      }
      policy.clock_skew_seconds = static_cast<int>(value.get<long long>());
    } else if (member == "sessionIdleSeconds") {
      UDON_ASSIGN_OR_RETURN(auto seconds, PositiveInteger(value, member, 604'800));
      policy.session_idle_seconds = static_cast<int>(seconds);
    } else if (member == "state") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return PolicyInvalid(member, "must be a state directory path or a postgres:// URI");
      }
      policy.state = value.get<std::string>();
    } else {
      return PolicyInvalid(member, "unknown policy member");
    }
  }
  return policy;
}

Result<Policy> LoadPolicyFile(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, 1u << 20));
  auto document = json::ParseJsonOrYaml(text);
  if (!document.ok()) return document.error().WithCode("policy.invalid");
  return PolicyFromJson(*document);
}

json::Value PolicyToJson(const Policy& policy) {
  json::Value out = {
      {"maxReviewWindowDays", policy.max_review_window_days},
      {"allowModelBacked", policy.allow_model_backed},
      {"allowedSideEffects", nullptr},
      {"blockOnFindings", policy.block_on_findings == FindingsBlock::kNone   ? "none"
                          : policy.block_on_findings == FindingsBlock::kHigh ? "high"
                                                                             : "warning"},
      {"callTimeoutSeconds", policy.call_timeout_seconds},
      {"maxPages", policy.max_pages},
      {"maxMessageBytes", policy.max_message_bytes},
      {"strictListChanged", policy.strict_list_changed},
      {"serializeTimeoutSeconds", policy.serialize_timeout_seconds},
      {"clockSkewSeconds", policy.clock_skew_seconds},
      {"sessionIdleSeconds", policy.session_idle_seconds}};
  if (policy.allowed_side_effects) out["allowedSideEffects"] = *policy.allowed_side_effects;
  if (!policy.state.empty()) out["state"] = policy.state;
  return out;
}

}  // namespace udon::manifest
