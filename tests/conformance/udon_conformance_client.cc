// A client for the official MCP conformance suite (client mode). The harness appends the
// mock server's URL as the last argument and names the scenario in
// MCP_CONFORMANCE_SCENARIO. Exit 0 when the scenario's client side ran to completion.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mcp/client.h"

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

int CallTool(Client& client, const std::string& name, const Value& arguments) {
  auto outcome = client.CallTool(name, arguments);
  if (!outcome.ok()) return Fail("tools/call", outcome.error());
  if (outcome->error) {
    std::fprintf(stderr, "tools/call answered with a JSON-RPC error\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: udon_conformance_client [options] SERVER_URL\n");
    return 2;
  }
  const char* scenario_env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = scenario_env == nullptr ? "" : scenario_env;
  std::string version(udon::mcp::kLatestProtocolVersion);
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
  auto init = (*client)->Initialize(version);
  if (!init.ok()) return Fail("initialize", init.error());
  if (scenario == "initialize") {
    (*client)->Close();
    return 0;
  }
  auto pages = (*client)->ListAllTools();
  if (!pages.ok()) return Fail("tools/list", pages.error());

  int status = 0;
  if (scenario == "tools_call") {
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
