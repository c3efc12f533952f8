// A client for the official MCP conformance suite (client mode). The harness appends the
// mock server's URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO. Exit 0 when the scenario's client side ran to completion.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "json/json.h"
#include "mcp/client/client.h"
#include "mcp/protocol/param_headers.h"

namespace {

using udon::json::Value;
using udon::mcp::Client;

int Fail(const char* step, const udon::Error& error) {
  std::fprintf(stderr, "%s failed: %s (%s)\n", step, error.code.c_str(), error.Describe().c_str());
  return 1;
}

// The first tool named `name` across all pages, or null.
Value FindTool(const udon::mcp::ToolPages& pages, const std::string& name) {
  for (const Value& page : pages.pages) {
    for (const Value& tool : page["tools"]) {
      if (tool.value("name", "") == name) return tool;
    }
  }
  return nullptr;
}

int CallTool(Client& client, const std::string& name, const Value& arguments, const Value* tool = nullptr) {
  auto outcome = client.CallTool(name, arguments, std::chrono::milliseconds{0}, tool);
  if (!outcome.ok()) return Fail("tools/call", outcome.error());
  if (outcome->error) {
    std::fprintf(stderr, "tools/call answered with a JSON-RPC error\n");
    return 1;
  }
  return 0;
}

// Every listed tool a client on HTTP may use: the revision excludes tools whose
// x-mcp-header annotations are invalid.
std::vector<Value> UsableTools(const udon::mcp::ToolPages& pages) {
  std::vector<Value> out;
  for (const Value& page : pages.pages) {
    for (const Value& tool : page["tools"]) {
      if (udon::mcp::ParamHeadersOf(tool).ok()) out.push_back(tool);
    }
  }
  return out;
}

// Arguments that satisfy a tool's required string, integer and boolean properties.
Value PlaceholderArguments(const Value& tool) {
  Value arguments = Value::object();
  const Value& schema = tool.value("inputSchema", Value::object());
  if (!schema.contains("required") || !schema.contains("properties")) return arguments;
  for (const Value& name : schema["required"]) {
    const std::string type = schema["properties"].value(name.get<std::string>(), Value::object()).value("type", "");
    if (type == "integer" || type == "number") {
      arguments[name.get<std::string>()] = 1;
    } else if (type == "boolean") {
      arguments[name.get<std::string>()] = true;
    } else {
      arguments[name.get<std::string>()] = "conformance";
    }
  }
  return arguments;
}

// The modern revision's scenarios: the harness names the calls to make in
// MCP_CONFORMANCE_CONTEXT (toolCalls), or every usable tool is called once.
int RunModernCalls(Client& client, const udon::mcp::ToolPages& pages) {
  const std::vector<Value> usable = UsableTools(pages);
  auto find = [&usable](const std::string& name) -> const Value* {
    for (const Value& tool : usable) {
      if (tool.value("name", "") == name) return &tool;
    }
    return nullptr;
  };
  Value calls = Value::array();
  if (const char* context = std::getenv("MCP_CONFORMANCE_CONTEXT"); context != nullptr) {
    auto parsed = udon::json::Parse(context);
    if (parsed.ok() && parsed->contains("toolCalls") && (*parsed)["toolCalls"].is_array()) calls = (*parsed)["toolCalls"];
  }
  int status = 0;
  if (!calls.empty()) {
    for (const Value& call : calls) {
      const std::string name = call.value("name", "");
      const Value* tool = find(name);
      if (tool == nullptr) continue;  // excluded or absent: never called
      status |= CallTool(client, name, call.value("arguments", Value::object()), tool);
    }
    return status;
  }
  for (const Value& tool : usable) {
    status |= CallTool(client, tool.value("name", ""), PlaceholderArguments(tool), &tool);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: udon_conformance_client [options] SERVER_URL\n");
    return 2;
  }
  const char* scenario_env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = scenario_env == nullptr ? "" : scenario_env;
  std::string version(udon::mcp::kLatestLegacyProtocolVersion);
  if (const char* wanted = std::getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
      wanted != nullptr && udon::mcp::IsSupportedProtocolVersion(wanted)) {
    version = wanted;
  }

  udon::mcp::ServerConfig server;
  server.key = "conformance";
  server.type = udon::mcp::ServerType::kHttp;
  server.url = argv[argc - 1];
  udon::mcp::ClientOptions options;
  options.request_timeout = std::chrono::milliseconds(20'000);
  // The mocks count GET requests (sse-retry) or do not serve GET at all.
  options.http_notification_stream = false;
  auto client = Client::Connect(server, options);
  if (!client.ok()) return Fail("connect", client.error());
  auto init = (*client)->Open(version);
  if (!init.ok()) return Fail("initialize", init.error());
  if (scenario == "initialize") {
    (*client)->Close();
    return 0;
  }
  auto pages = (*client)->ListAllTools();
  if (!pages.ok()) return Fail("tools/list", pages.error());

  int status = 0;
  const bool modern = udon::mcp::IsModernProtocolVersion(version);
  if (modern && (scenario == "http-custom-headers" || scenario == "http-invalid-tool-headers" ||
                 scenario == "http-standard-headers" || scenario == "request-metadata")) {
    status = RunModernCalls(**client, *pages);
  } else if (scenario == "tools_call") {
    status = CallTool(**client, "add_numbers", Value{{"a", 2}, {"b", 3}});
  } else if (scenario == "sse-retry") {
    status = CallTool(**client, "test_reconnection", Value::object());
  } else if (scenario == "json-schema-2020-12-preservation") {
    Value tool = FindTool(*pages, "json_schema_2020_12_tool");
    if (tool.is_null()) {
      std::fprintf(stderr, "json_schema_2020_12_tool not listed\n");
      status = 1;
    } else {
      // Echo the schema exactly as captured.
      status = CallTool(**client, "json_schema_echo", Value{{"schema", tool["inputSchema"]}});
    }
  }
  (*client)->Close();
  return status;
}
