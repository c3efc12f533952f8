#include "demo_http.h"

#include <httplib.h>

#include <chrono>
#include <regex>
#include <thread>

#include "json/json.h"
#include "line_client.h"
#include "mcp/protocol/sse.h"

namespace udon::testing {
namespace {

std::vector<std::string> HttpArgs(std::vector<std::string> extra) {
  std::vector<std::string> argv = {DemoServerBinary(), "--transport", "http", "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

HttpDemoServer::HttpDemoServer(std::vector<std::string> extra) : process_(HttpArgs(std::move(extra))) {
  static const std::regex listening(R"re(\{"event":"listening","port":(\d+),)re");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && process_.running()) {
    std::smatch match;
    const std::string output = process_.Output();
    if (std::regex_search(output, match, listening)) {
      port_ = std::stoi(match[1]);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string HttpDemoServer::url() const {
  return "http://localhost:" + std::to_string(port_) + "/mcp";
}

std::vector<nlohmann::json> SseMessages(const std::string& body) {
  mcp::SseParser parser(64u << 20);
  std::vector<mcp::SseEvent> events;
  std::vector<nlohmann::json> out;
  if (!parser.Feed(body, events).ok()) return out;
  for (const auto& event : events) {
    if (event.data.empty()) continue;
    auto parsed = json::Parse(event.data);
    out.push_back(parsed.ok() ? *parsed : nlohmann::json());
  }
  return out;
}

RawHttpPeer::RawHttpPeer(int port) : client_(std::make_unique<httplib::Client>("127.0.0.1", port)) {
  client_->set_read_timeout(std::chrono::seconds(60));
}

RawHttpPeer::~RawHttpPeer() = default;

RawHttpPeer::Answer RawHttpPeer::Post(const nlohmann::json& message) {
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
  if (!session_.empty()) headers.emplace("Mcp-Session-Id", session_);
  Answer answer;
  auto result = client_->Post("/mcp", headers, message.dump(), "application/json");
  if (!result) return answer;
  answer.status = result->status;
  answer.session_id = result->get_header_value("Mcp-Session-Id");
  if (result->get_header_value("Content-Type").find("text/event-stream") != std::string::npos) {
    answer.messages = SseMessages(result->body);
  } else if (!result->body.empty()) {
    auto parsed = json::Parse(result->body);
    if (parsed.ok()) answer.messages.push_back(*parsed);
  }
  return answer;
}

nlohmann::json RawHttpPeer::Initialize() {
  session_.clear();
  Answer init = Post(InitializeRequest(0));
  session_ = init.session_id;
  Post(Notification("notifications/initialized"));
  return init.messages.empty() ? nlohmann::json() : init.messages.back();
}

}  // namespace udon::testing
