#include "serve_fixture.h"

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>
#include <utility>

#include "json/json.h"

namespace udon::testing {
namespace {

ProcessResult Udon(std::vector<std::string> args) {
  args.insert(args.begin(), UdonMcpBinary());
  return RunProcess(args);
}

}  // namespace

namespace {

nlohmann::json DemoEntry(const std::vector<std::string>& demo_args, const std::string& url) {
  if (!url.empty()) return {{"url", url}};
  return {{"command", DemoServerBinary()}, {"args", demo_args}};
}

}  // namespace

ReviewedDemo::ReviewedDemo(const TempDir& dir, std::vector<std::string> demo_args, std::string url)
    : ReviewedDemo(dir, nlohmann::json{{"demo", DemoEntry(demo_args, url)}}) {}

ReviewedDemo::ReviewedDemo(const TempDir& dir, const nlohmann::json& servers, std::vector<std::string> capture_args)
    : dir_(dir), capture_args_(std::move(capture_args)) {
  manifest = dir.File("tools.json");
  config = dir.File("mcp.json");
  state_dir = dir.File("state");
  evidence = dir.File("evidence.jsonl");
  for (const auto& [key, entry] : servers.items()) {
    (void)entry;
    servers_.push_back(key);
  }
  Reconfigure(servers);
  sha256 = Recapture();
}

void ReviewedDemo::Reconfigure(const nlohmann::json& servers) const {
  dir_.Write("mcp.json", nlohmann::json{{"mcpServers", servers}}.dump(2));
}

std::string ReviewedDemo::Recapture() {
  // Again: keep the reviews of unchanged tools (the changed ones are reviewed below).
  std::vector<std::string> capture_args = {"capture", "--config", config};
  for (const std::string& key : servers_) capture_args.insert(capture_args.end(), {"--server", key});
  capture_args.insert(capture_args.end(), capture_args_.begin(), capture_args_.end());
  capture_args.insert(capture_args.end(), {std::ifstream(manifest).good() ? "--update" : "-o", manifest});
  ProcessResult capture = Udon(capture_args);
  if (capture.exit_code != 0) {
    failure = "capture: " + capture.err;
    return {};
  }
  auto document = json::Parse(dir_.Read("tools.json"));
  if (!document.ok()) {
    failure = "the captured manifest does not parse";
    return {};
  }
  for (const std::string& key : servers_) {
    for (const auto& page : (*document)["servers"][key]["toolPages"]) {
      for (const auto& tool : page["tools"]) {
        if (!Review(key, tool)) return {};
      }
    }
  }
  ProcessResult digest = Udon({"digest", manifest});
  if (digest.exit_code != 0 || digest.out.size() < 64) {
    failure = "digest: " + digest.err;
    return {};
  }
  return digest.out.substr(0, 64);
}

bool ReviewedDemo::Review(const std::string& server, const nlohmann::json& tool) {
  std::vector<std::string> args = {"review", manifest, "--server", server, "--tool", tool["name"],
                                   "--reviewer", "tester@example.test", "--headless", "--independent-calls",
                                   "--model-backed", "false", "--no-side-effects", "--concurrency", "safe",
                                   "--reference-based-io"};
  if (tool["inputSchema"].contains("properties")) {
    for (const auto& [name, schema] : tool["inputSchema"]["properties"].items()) {
      (void)schema;
      args.push_back("--channel");
      args.push_back("/" + name + "=data");
    }
  }
  ProcessResult review = Udon(args);
  // A tool that cannot be reviewed (task support required) stays unreviewed.
  if (review.exit_code != 0 && review.exit_code != 3) {
    failure = "review " + tool["name"].get<std::string>() + ": " + review.err;
    return false;
  }
  return true;
}

std::vector<std::string> ReviewedDemo::ServeArgv(const std::vector<std::string>& extra) const {
  std::vector<std::string> argv = {UdonMcpBinary(), "serve",       "--manifest", manifest,  "--sha256",
                                   sha256,          "--config",    config,       "--state-dir", state_dir,
                                   "--evidence",    evidence};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

HttpGateway::HttpGateway(const ReviewedDemo& demo, const std::vector<std::string>& extra, Token token) {
  std::vector<std::string> args = {"--transport", "http", "--listen", "127.0.0.1:0"};
  if (token == Token::kNone) args.push_back("--no-token");
  args.insert(args.end(), extra.begin(), extra.end());
  process_ = std::make_unique<BackgroundProcess>(demo.ServeArgv(args));
  static const std::regex listening(R"re(listening on http://127\.0\.0\.1:(\d+)/mcp)re");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && process_->running()) {
    std::smatch match;
    const std::string output = process_->Output();
    if (std::regex_search(output, match, listening)) {
      port_ = std::stoi(match[1]);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string HttpGateway::url() const { return "http://localhost:" + std::to_string(port_) + "/mcp"; }

std::string AwaitOutput(BackgroundProcess& process, const std::regex& pattern) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && process.running()) {
    std::smatch match;
    const std::string output = process.Output();
    if (std::regex_search(output, match, pattern)) return match[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

}  // namespace udon::testing
