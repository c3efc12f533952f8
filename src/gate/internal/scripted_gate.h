// For gate and evidence tests: the gate in process against a scripted MCP server on a
// memory transport, so every step, fault and race is placed deterministically and the
// evidence it produces has exactly known content.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gate/gate.h"
#include "manifest/internal/test_manifest.h"
#include "manifest/manifest.h"
#include "mcp/protocol/protocol.h"
#include "mcp/testing/memory_transport.h"

namespace udon::gate::internal {

inline const char* kCanaryArgument = "CANARY-ARGUMENT-e1d0";
inline const char* kCanaryResult = "CANARY-RESULT-77f4";

// Answers initialize, tools/list (the test manifest's pages) and tools/call; calls return
// structuredContent from `result` (by call number, from 1), which by default is the same
// every time. With `modern` set it speaks 2026-07-28 instead: server/discover,
// subscriptions/listen, resultType and serverInfo in every result's _meta.
struct ScriptedServer {
  json::Value server_info;
  std::string version;
  bool modern = false;
  bool listen_acknowledged = true;        // modern: acknowledge subscriptions/listen
  json::Value result_server_info;         // modern: serverInfo in result _meta (null: server_info)
  json::Value listen_id;                  // modern: the open subscription's id
  std::vector<json::Value> pages;
  std::function<json::Value(int)> result;
  std::function<void(const mcp::Message&, mcp::MemoryPeer&)> on_call;  // replaces the answer
  std::function<void(const mcp::Message&, mcp::MemoryPeer&)> on_list;  // before the page
  std::function<void(const mcp::Message&, mcp::MemoryPeer&)> on_ping;  // before the answer
  // Replaces a tools/list answer's result by these bytes, as written (page index).
  std::function<std::string(std::size_t)> page_text;
  std::atomic<int> pings{0};
  std::atomic<int> connects{0}, lists{0}, calls{0}, in_flight{0}, max_in_flight{0};
  std::atomic<mcp::MemoryPeer*> peer{nullptr};

  ScriptedServer() { Reset(); }

  void Reset() {
    server_info = {{"name", "example-blender-server"}, {"version", "0.8.2"}};
    version = "2025-11-25";
    json::Value manifest = manifest::internal::ValidManifestJson();
    pages = manifest["servers"]["blender_farm"]["toolPages"].get<std::vector<json::Value>>();
    result = [](int) { return json::Value{{"renderedUris", {std::string("https://r.example/") + kCanaryResult}}}; };
    on_call = nullptr;
    on_list = nullptr;
    on_ping = nullptr;
    page_text = nullptr;
    pings = 0;
    modern = false;
    listen_acknowledged = true;
    result_server_info = nullptr;
    listen_id = nullptr;
    connects = lists = calls = in_flight = max_in_flight = 0;
  }

  // A result as this server's era shapes it.
  json::Value Shaped(json::Value answer) const {
    if (!modern) return answer;
    answer["resultType"] = "complete";
    answer["_meta"][std::string(mcp::meta::kServerInfo)] = result_server_info.is_null() ? server_info : result_server_info;
    return answer;
  }

  // notifications/tools/list_changed as this server's era sends it.
  mcp::Message ListChanged() const {
    if (!modern) return mcp::MakeNotification("notifications/tools/list_changed");
    return mcp::MakeNotification("notifications/tools/list_changed",
                                 {{"_meta", {{std::string(mcp::meta::kSubscriptionId), listen_id}}}});
  }

  void Handle(const mcp::Message& m, mcp::MemoryPeer& p) {
    peer = &p;
    if (m.kind != mcp::MessageKind::kRequest) return;
    if (modern && m.method == "server/discover") {
      json::Value discovered = {{"supportedVersions", {"2026-07-28"}},
                                {"capabilities", {{"tools", {{"listChanged", true}}}}},
                                {"ttlMs", 60000},
                                {"cacheScope", "public"}};
      discovered["_meta"][std::string(mcp::meta::kServerInfo)] = server_info;
      discovered["resultType"] = "complete";
      p.Send(mcp::MakeResult(m.id, discovered));
    } else if (modern && m.method == "subscriptions/listen") {
      listen_id = m.id;
      if (!listen_acknowledged) return;
      p.Send(mcp::MakeNotification("notifications/subscriptions/acknowledged",
                                   {{"_meta", {{std::string(mcp::meta::kSubscriptionId), m.id}}},
                                    {"notifications", {{"toolsListChanged", true}}}}));
    } else if (m.method == "initialize" && !modern) {
      p.Send(mcp::MakeResult(m.id, {{"protocolVersion", version},
                                    {"capabilities", {{"tools", {{"listChanged", true}}}}},
                                    {"serverInfo", server_info}}));
    } else if (m.method == "tools/list") {
      ++lists;
      if (on_list) on_list(m, p);
      std::size_t index = 0;
      if (m.params.is_object() && m.params.contains("cursor")) index = m.params["cursor"] == "p2" ? 1 : 0;
      index = std::min(index, pages.size() - 1);
      if (page_text) {
        p.SendRaw(R"({"jsonrpc":"2.0","id":)" + m.id.dump() + R"(,"result":)" + page_text(index) + "}");
      } else {
        p.Send(mcp::MakeResult(m.id, Shaped(pages[index])));
      }
    } else if (m.method == "tools/call") {
      const int number = ++calls;
      const int now = ++in_flight;
      int seen = max_in_flight.load();
      while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
      }
      if (on_call) {
        on_call(m, p);
      } else {
        const json::Value structured = result(number);
        p.Send(mcp::MakeResult(m.id, Shaped({{"content", json::Value::array({{{"type", "text"}, {"text", structured.dump()}}})},
                                             {"structuredContent", structured}})));
      }
      --in_flight;
    } else if (m.method == "ping") {
      ++pings;
      if (on_ping) on_ping(m, p);
      p.Send(mcp::MakeResult(m.id, json::Value::object()));
    } else {
      p.Send(mcp::MakeError(m.id, mcp::kMethodNotFound, "Method not found"));
    }
  }
};

class ScriptedGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("udon-gate-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    config_.servers["blender_farm"].key = "blender_farm";
    WriteManifest(Reviewed(false, {}));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The test manifest with the render tool's review changed.
  static json::Value Reviewed(bool model_backed, std::vector<std::string> side_effects,
                              const char* concurrency = "safe") {
    json::Value doc = manifest::internal::ValidManifestJson();
    json::Value& assertions = doc["servers"]["blender_farm"]["reviews"]["render_turntable"]["assertions"];
    assertions["modelBacked"] = model_backed;
    assertions["sideEffects"] = side_effects;
    assertions["concurrency"] = concurrency;
    return doc;
  }

  void WriteManifest(const json::Value& doc) {
    auto m = manifest::Manifest::FromValue(doc);
    ASSERT_TRUE(m.ok()) << m.error().Describe();
    std::ofstream(dir_ / "tools.json") << m->ToPrettyJson();
    binding_ = {(dir_ / "tools.json").string(), m->sha256(), "blender_farm", "render_turntable"};
  }

  // Each environment gets its own state directory unless told otherwise, so one
  // scenario's durable invalidation does not refuse the next.
  gate::GateEnvironment Env(const std::string& state = {}) {
    gate::GateEnvironment env;
    env.config = &config_;
    env.state_dir = (dir_ / (state.empty() ? "state-" + std::to_string(states_++) : state)).string();
    env.clock = [] { return *manifest::ParseInstant("2026-08-31T00:00:00Z"); };
    env.call_timeout = std::chrono::milliseconds(5000);
    env.connect = [this](const mcp::ServerConfig&, const mcp::ClientOptions& options) {
      ++server_.connects;
      auto client = std::make_unique<mcp::Client>(
          std::make_unique<mcp::MemoryTransport>(
              [this](const mcp::Message& m, mcp::MemoryPeer& p) { server_.Handle(m, p); }),
          options);
      Status started = client->Start();
      if (!started.ok()) return Result<std::unique_ptr<mcp::Client>>(std::move(started).error());
      return Result<std::unique_ptr<mcp::Client>>(std::move(client));
    };
    return env;
  }

  static json::Value Args() {
    return {{"source", std::string("https://a.example/") + kCanaryArgument}, {"angles", 6}, {"resolution", 2048}};
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static inline int counter_ = 0;
  int states_ = 0;
  std::filesystem::path dir_;
  mcp::RuntimeConfig config_;
  ScriptedServer server_;
  manifest::Binding binding_;
};

}  // namespace udon::gate::internal
