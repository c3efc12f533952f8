#include "mcp/protocol/param_headers.h"

#include <cctype>
#include <set>
#include <string_view>

#include "base/ascii.h"
#include "json/pointer.h"
#include "mcp/protocol/protocol.h"

namespace udon::mcp {
namespace {

constexpr std::string_view kAnnotation = "x-mcp-header";

// RFC 9110 token characters.
bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos) return false;
  }
  return true;
}

Error InvalidParamHeader(const char* message, const std::string& pointer) {
  return udon::MakeError("mcp.invalid_param_header", message, pointer);
}

// Keywords whose values are instances, not schemas: an "x-mcp-header" member inside them
// is data.
bool HoldsInstances(std::string_view keyword) {
  return keyword == "const" || keyword == "enum" || keyword == "default" || keyword == "examples";
}

struct Walker {
  std::vector<ParamHeader> found;
  std::set<std::string> names;

  // `chain` is set while every step from the root was a `properties` member.
  Status Schema(const json::Value& schema, const std::string& pointer,
                const std::vector<std::string>* chain) {
    if (!schema.is_object()) return Container(schema, pointer);
    for (const auto& [key, value] : schema.items()) {
      const std::string at = pointer + "/" + json::Pointer::EscapeToken(key);
      if (key == kAnnotation) {
        UDON_RETURN_IF_ERROR(Annotation(schema, value, at, chain));
      } else if (key == "properties" && value.is_object()) {
        for (const auto& [name, property] : value.items()) {
          std::vector<std::string> next;
          if (chain != nullptr) {
            next = *chain;
            next.push_back(name);
          }
          UDON_RETURN_IF_ERROR(
              Schema(property, at + "/" + json::Pointer::EscapeToken(name), chain != nullptr ? &next : nullptr));
        }
      } else if (!HoldsInstances(key)) {
        UDON_RETURN_IF_ERROR(Container(value, at));
      }
    }
    return OkStatus();
  }

  // Anything reached other than through `properties`: annotations there are invalid.
  Status Container(const json::Value& value, const std::string& pointer) {
    if (value.is_object()) return Schema(value, pointer, nullptr);
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        UDON_RETURN_IF_ERROR(Container(value[i], pointer + "/" + std::to_string(i)));
      }
    }
    return OkStatus();
  }

  Status Annotation(const json::Value& schema, const json::Value& value, const std::string& pointer,
                    const std::vector<std::string>* chain) {
    if (chain == nullptr || chain->empty()) {
      return InvalidParamHeader("x-mcp-header is only allowed on properties reached through `properties`", pointer);
    }
    if (!value.is_string() || !IsToken(value.get<std::string>())) {
      return InvalidParamHeader("x-mcp-header must be a non-empty HTTP token", pointer);
    }
    const std::string name = value.get<std::string>();
    auto type = schema.find("type");
    if (type == schema.end() || !type->is_string() ||
        (*type != "string" && *type != "integer" && *type != "boolean")) {
      return InvalidParamHeader("x-mcp-header is only allowed on string, integer or boolean parameters", pointer);
    }
    if (!names.insert(base::AsciiLower(name)).second) {
      return InvalidParamHeader("x-mcp-header values must be unique regardless of case", pointer);
    }
    found.push_back({name, *chain, type->get<std::string>()});
    return OkStatus();
  }
};

}  // namespace

Result<std::vector<ParamHeader>> ParamHeadersOf(const json::Value& tool) {
  if (!tool.is_object() || !tool.contains("inputSchema")) return std::vector<ParamHeader>{};
  Walker walker;
  const std::vector<std::string> root;
  UDON_RETURN_IF_ERROR(walker.Schema(tool["inputSchema"], "/inputSchema", &root));
  return std::move(walker.found);
}

const json::Value* ParamValue(const ParamHeader& param, const json::Value& arguments) {
  const json::Value* node = &arguments;
  for (const std::string& name : param.path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(name);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

RequestHeaders MirrorArguments(const std::vector<ParamHeader>& params, const json::Value& arguments) {
  RequestHeaders headers;
  for (const ParamHeader& param : params) {
    const json::Value* value = ParamValue(param, arguments);
    if (value == nullptr || value->is_null()) continue;
    std::string text;
    if (value->is_string()) {
      text = value->get<std::string>();
    } else if (value->is_boolean()) {
      text = value->get<bool>() ? "true" : "false";
    } else if (value->is_number_integer()) {
      text = value->dump();
    } else if (value->is_number_float() && value->get<double>() == static_cast<double>(static_cast<long long>(value->get<double>()))) {
      text = std::to_string(static_cast<long long>(value->get<double>()));  // 42.0 is the integer 42
    } else {
      continue;  // not the annotated type: argument validation reports it
    }
    headers.emplace_back(std::string(http_header::kParamPrefix) + param.name, EncodeHeaderValue(text));
  }
  return headers;
}

}  // namespace udon::mcp
