// `udon-mcp serve` in front of the demo server, for integration tests: a captured, fully
// reviewed and pinned manifest of a demo server (stdio, or an HTTP endpoint), and the
// gateway started over stdio or Streamable HTTP.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace udon::testing {

// Captures the upstream into dir/tools.json as server "demo" (or the given servers), reviews every tool it can
// (headless, independent, not model-backed, no side effects, safe, reference-based, every
// top-level argument a data channel) and pins the result.
class ReviewedDemo {
 public:
  // `demo_args`: extra demo server arguments (stdio upstream). `url`: an HTTP upstream instead.
  ReviewedDemo(const TempDir& dir, std::vector<std::string> demo_args = {}, std::string url = {});
  // Any servers: `servers` is the configuration's mcpServers object; all are captured.
  // `capture_args`: more capture arguments (--protocol-version for servers of mixed eras).
  ReviewedDemo(const TempDir& dir, const nlohmann::json& servers, std::vector<std::string> capture_args = {});
  // Rewrites the configuration (the manifest and its pin stay as they are).
  void Reconfigure(const nlohmann::json& servers) const;
  // Captures and reviews again (after the upstream changed) and returns the new pin.
  std::string Recapture();

  bool ok() const { return !sha256.empty(); }
  std::string manifest;
  std::string sha256;
  std::string config;
  std::string state_dir;
  std::string evidence;
  std::string failure;  // why set-up failed (ok() false)

  // udon-mcp serve with this manifest, pin, config, state and evidence, plus `extra`.
  std::vector<std::string> ServeArgv(const std::vector<std::string>& extra = {}) const;

 private:
  bool Review(const std::string& server, const nlohmann::json& tool);

  const TempDir& dir_;
  std::vector<std::string> servers_;
  std::vector<std::string> capture_args_;
};

// udon-mcp serve --transport http on a free loopback port: with --no-token, unless `token`
// (then `extra` gives --token-file, or serve mints one into the state directory).
class HttpGateway {
 public:
  enum class Token { kNone, kAsGiven };
  explicit HttpGateway(const ReviewedDemo& demo, const std::vector<std::string>& extra = {},
                       Token token = Token::kNone);
  int port() const { return port_; }  // 0: it never said it was listening
  std::string url() const;             // http://localhost:PORT/mcp
  BackgroundProcess& process() { return *process_; }

 private:
  std::unique_ptr<BackgroundProcess> process_;
  int port_ = 0;
};

// The first capture of `pattern` in `process`'s output, waited for while it runs (at most
// 60 s); empty when it never appeared.
std::string AwaitOutput(BackgroundProcess& process, const std::regex& pattern);

}  // namespace udon::testing
