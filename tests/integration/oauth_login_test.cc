// `udon-mcp login` against real peers (issue 39): oidc-provider as the authorization server,
// a TypeScript-SDK Streamable HTTP server that accepts only its tokens, the browser played
// by login-driver.mjs; then the stored login used by capture and call. And the hostile
// cases of tests/peers/oauth/hostile.mjs: each a clear code, nothing stored.
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "line_client.h"
#include "pg_cluster.h"
#include "state_pg/token_store.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

constexpr const char* kUrlLine = "udon-mcp: open this URL to log in: ";

std::string Peer(const std::string& name) { return testing::SourceDir() + "/tests/peers/oauth/" + name; }

class OAuthLoginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override { UDON_REQUIRE_PEERS(); }

  void TearDown() override {
    for (auto& peer : peers_) peer->Stop();
    peers_.clear();
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  // Starts a peer and returns its first stdout line, parsed.
  json::Value StartPeer(const std::string& script, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {testing::NodeBinary(), Peer(script)};
    argv.insert(argv.end(), args.begin(), args.end());
    peers_.push_back(std::make_unique<testing::BackgroundProcess>(argv));
    for (int i = 0; i < 400; ++i) {
      const std::string output = peers_.back()->Output();
      for (std::size_t start = 0, end; (end = output.find('\n', start)) != std::string::npos; start = end + 1) {
        auto line = json::Parse(output.substr(start, end - start));
        if (line.ok() && line->is_object()) return *line;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << script << " did not start: " << peers_.back()->Output();
    return json::Value::object();
  }

  void Configure(const std::string& url, const json::Value& oauth = json::Value::object()) {
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"remote", {{"url", url}, {"oauth", oauth}}}}}}).dump());
  }

  testing::RunOptions Options() const {
    testing::RunOptions options;
    options.env = env_;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    return options;
  }

  // udon-mcp ARGS --config mcp.json (but adopt, which reads the hosts' files) and store_args_.
  ProcessResult Udon(std::vector<std::string> args, int expected_exit) {
    if (args.front() != "adopt") args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), store_args_.begin(), store_args_.end());
    testing::RunOptions options = Options();
    ProcessResult result = testing::RunProcess(args, options);
    if (expected_exit >= 0) {
      EXPECT_EQ(result.exit_code, expected_exit) << result.out << result.err;
    }
    outputs_ += result.out + result.err;
    return result;
  }

  // Runs `login remote --no-browser`, plays the browser with login-driver.mjs (extra
  // flags tamper with the redirect) once the URL is printed, and returns login's output.
  // `login_flags` go to login; `command` instead of login's (adopt, say) prints the URL the
  // same way.
  std::string Login(const std::vector<std::string>& driver_flags = {}, bool expect_url = true,
                    const std::vector<std::string>& login_flags = {}, std::vector<std::string> command = {}) {
    testing::RunOptions options = Options();
    std::vector<std::string> login_argv = {testing::UdonMcpBinary(), "login", "remote", "--no-browser", "--timeout", "60",
                                           "--json", "--config", dir_.File("mcp.json")};
    if (!command.empty()) {
      login_argv = std::move(command);
      login_argv.insert(login_argv.begin(), testing::UdonMcpBinary());
    }
    login_argv.insert(login_argv.end(), login_flags.begin(), login_flags.end());
    login_argv.insert(login_argv.end(), store_args_.begin(), store_args_.end());
    testing::BackgroundProcess login(login_argv, options);
    std::string url;
    for (int i = 0; i < 1200 && url.empty() && login.running(); ++i) {
      const std::string output = login.Output();
      if (const std::size_t at = output.find(kUrlLine); at != std::string::npos && output.find('\n', at) != std::string::npos) {
        url = output.substr(at + std::string(kUrlLine).size(), output.find('\n', at) - at - std::string(kUrlLine).size());
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    if (expect_url) {
      EXPECT_FALSE(url.empty()) << login.Output();
      std::vector<std::string> argv = {testing::NodeBinary(), Peer("login-driver.mjs"), url};
      argv.insert(argv.end(), driver_flags.begin(), driver_flags.end());
      driver_ = testing::RunProcess(argv);
    }
    for (int i = 0; i < 1200 && login.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(login.running());
    outputs_ += login.Output();
    return login.Output();
  }

  json::Value StoredRecord() {
    for (const auto& entry : std::filesystem::directory_iterator(dir_.File("state") + "/oauth")) {
      if (entry.path().extension() == ".json") {
        return json::Parse(dir_.Read("state/oauth/" + entry.path().filename().string())).value();
      }
    }
    return json::Value::object();
  }

  bool NothingStored() {
    const std::string dir = dir_.File("state") + "/oauth";
    if (!std::filesystem::exists(dir)) return true;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") return false;
    }
    return true;
  }

  // Review and call the "add" tool of the captured remote server: {"a":2,"b":40} is 42.
  void ReviewAndCallAdd() {
    Udon({"review", dir_.File("tools.json"), "--server", "remote", "--tool", "add", "--reviewer", "t@example.test",
          "--headless", "--independent-calls", "--model-backed", "false", "--reference-based-io", "--concurrency",
          "safe", "--no-side-effects", "--channel", "/a=data", "--channel", "/b=data"},
         0);
    const std::string sha =
        testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
    ProcessResult called = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "remote",
                                 "--tool", "add", "--args", R"({"a":2,"b":40})", "--json", "--expect-output"},
                                0);
    auto result = json::Parse(called.out);
    ASSERT_TRUE(result.ok()) << called.out;
    EXPECT_EQ((*result)["structuredContent"]["sum"], 42) << called.out;
  }

  // Captures the server, reviews `tool` (no outputs expected) and returns the manifest's
  // digest, for call.
  std::string CaptureAndReview(const std::string& tool, const std::vector<std::string>& channels = {}) {
    Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json")}, 0);
    std::vector<std::string> review = {"review", dir_.File("tools.json"), "--server", "remote", "--tool", tool,
                                       "--reviewer", "t@example.test", "--headless", "--independent-calls",
                                       "--model-backed", "false", "--reference-based-io", "--concurrency", "safe",
                                       "--no-side-effects"};
    for (const std::string& channel : channels) review.insert(review.end(), {"--channel", channel});
    Udon(review, 0);
    return testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
  }

  // hostile.mjs's counters (GET /_hostile/report), or another of its control URLs.
  static json::Value Report(const json::Value& peer, const std::string& control = "") {
    std::string url = peer["report"].get<std::string>();
    if (!control.empty()) url = url.substr(0, url.rfind('/') + 1) + control;
    const ProcessResult got = testing::RunProcess(
        {testing::NodeBinary(), "-e", "fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))",
         url});
    auto report = json::Parse(got.out);
    EXPECT_TRUE(report.ok() && report->is_object()) << got.exit_code << got.out << got.err;
    return report.ok() && report->is_object() ? *report : json::Value({{"token", -1}, {"toolCalls", -1}, {"otherOrigin", {{"withAuthorization", -1}, {"requests", -1}}}});
  }

  std::vector<std::unique_ptr<testing::BackgroundProcess>> peers_;
  std::vector<std::string> store_args_;  // appended to every udon-mcp command line
  std::map<std::string, std::string> env_;  // for every udon-mcp command
  TempDir dir_;
  ProcessResult driver_;
  std::string outputs_;  // everything udon-mcp printed, for the secrets check
};

TEST_F(OAuthLoginTest, LogsInAtOidcProviderThenCapturesAndCallsWithTheStoredLogin) {
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());

  ProcessResult refused = Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json"), "--json"}, -1);
  EXPECT_NE(refused.out.find("auth.login_required"), std::string::npos) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("udon-mcp login remote"), std::string::npos) << refused.out;

  const std::string login = Login();
  EXPECT_EQ(driver_.exit_code, 0) << driver_.err;
  EXPECT_NE(login.find("\"client\":\"dynamic\""), std::string::npos) << login;

  ProcessResult status = Udon({"auth", "status", "--json"}, 0);
  auto logins = json::Parse(status.out);
  ASSERT_TRUE(logins.ok()) << status.out;
  ASSERT_EQ((*logins)["logins"].size(), 1u) << status.out;
  EXPECT_EQ((*logins)["logins"][0]["issuer"], as["issuer"]);
  EXPECT_EQ((*logins)["logins"][0]["servers"], json::Value::array({"remote"}));

  Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json")}, 0);
  Udon({"review", dir_.File("tools.json"), "--server", "remote", "--tool", "add", "--reviewer", "t@example.test",
        "--headless", "--independent-calls", "--model-backed", "false", "--reference-based-io", "--concurrency",
        "safe", "--no-side-effects", "--channel", "/a=data", "--channel", "/b=data"},
       0);
  const std::string sha =
      testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
  ProcessResult called = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "remote",
                               "--tool", "add", "--args", R"({"a":2,"b":40})", "--json", "--expect-output",
                               "--evidence", dir_.File("evidence.jsonl")},
                              0);
  auto result = json::Parse(called.out);
  ASSERT_TRUE(result.ok()) << called.out;
  EXPECT_EQ((*result)["structuredContent"]["sum"], 42) << called.out;

  // No token, refresh token or client secret anywhere but the store.
  std::string record;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.File("state") + "/oauth")) {
    if (entry.path().extension() == ".json") record = dir_.Read("state/oauth/" + entry.path().filename().string());
  }
  auto stored = json::Parse(record);
  ASSERT_TRUE(stored.ok());
  std::vector<std::string> secrets = {(*stored)["accessToken"].get<std::string>()};
  if (stored->contains("refreshToken")) secrets.push_back((*stored)["refreshToken"].get<std::string>());
  const std::string written = outputs_ + dir_.Read("tools.json") + dir_.Read("evidence.jsonl") + dir_.Read("mcp.json");
  for (const std::string& secret : secrets) {
    ASSERT_GT(secret.size(), 8u);
    EXPECT_EQ(written.find(secret), std::string::npos) << "a token leaked into output or files";
  }
}

// --state postgres:// keeps the login in the database, sealed with --token-key's key (contract
// 7.14): login, auth status, capture and call all use it, nothing is written to the state
// directory, and a dump of the database holds no token. Without a key the command refuses.
TEST_F(OAuthLoginTest, KeepsTheLoginInPostgresSealedWithTheTokenKey) {
  UDON_REQUIRE_POSTGRES();
  testing::PgCluster pg;
  ASSERT_TRUE(pg.ok()) << pg.failure();
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());
  store_args_ = {"--state", pg.Url()};

  ProcessResult keyless = Udon({"auth", "status", "--json"}, 3);
  EXPECT_NE(keyless.out.find("auth.store_key_unavailable"), std::string::npos) << keyless.out;
  EXPECT_NE(keyless.out.find("--token-key"), std::string::npos) << keyless.out;
  EXPECT_NE(Login({}, false).find("auth.store_key_unavailable"), std::string::npos);

  std::string key(32, '\0');
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<char>(i * 37 + 11);
  dir_.Write("token.key", key);
  ASSERT_EQ(chmod(dir_.File("token.key").c_str(), 0600), 0);
  store_args_.insert(store_args_.end(), {"--token-key", dir_.File("token.key")});
  Login();
  EXPECT_EQ(driver_.exit_code, 0) << driver_.err;
  EXPECT_TRUE(NothingStored()) << "the login went to the state directory, not the database";

  ProcessResult status = Udon({"auth", "status", "--json"}, 0);
  auto logins = json::Parse(status.out);
  ASSERT_TRUE(logins.ok()) << status.out;
  ASSERT_EQ((*logins)["logins"].size(), 1u) << status.out;
  EXPECT_EQ((*logins)["logins"][0]["issuer"], as["issuer"]);
  EXPECT_EQ((*logins)["logins"][0]["servers"], json::Value::array({"remote"}));

  Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json")}, 0);
  ReviewAndCallAdd();

  state_pg::PostgresTokenStore store(pg.Url(), {dir_.File("token.key"), false});
  auto stored = store.List();
  ASSERT_TRUE(stored.ok() && stored->size() == 1u);
  const std::string dump = pg.Dump().out;
  EXPECT_NE(dump.find("udon_mcp_oauth_logins"), std::string::npos);
  std::vector<std::string> secrets = {(*stored)[0].access_token};
  if ((*stored)[0].refresh_token) secrets.push_back(*(*stored)[0].refresh_token);
  for (const std::string& secret : secrets) {
    ASSERT_GT(secret.size(), 8u);
    EXPECT_EQ(dump.find(secret), std::string::npos) << "a token is readable in a dump of the database";
    EXPECT_EQ(outputs_.find(secret), std::string::npos) << "a token leaked into output";
  }
}

// Issue 39's "done when": a host (Gemini CLI's settings file) lists a remote server behind
// OAuth; adopt refuses without a terminal naming the command, logs in with --login (the
// browser played headlessly), the tool is reviewed, --apply rewrites the entry; --check
// reports the login; the rewritten entry, started as the host would, serves a gated call
// with the stored token, which is refreshed (and its refresh token rotated) on the way.
TEST_F(OAuthLoginTest, AdoptLogsInToAnOAuthEntryAndTheRewrittenEntryCallsThroughTheGate) {
  const json::Value as = StartPeer("authorization-server.mjs", {"--access-token-ttl", "30"});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  std::filesystem::create_directories(dir_.File("home/.gemini"));
  dir_.Write("home/.gemini/settings.json",
             json::Value({{"mcpServers", {{"remote", {{"httpUrl", rs["url"].get<std::string>()}}}}}}).dump(2));
  env_["HOME"] = dir_.File("home");
  env_["XDG_CONFIG_HOME"] = dir_.File("home/.config");
  const std::string adopted = dir_.File("adopted");

  ProcessResult refused = Udon({"adopt", "--dir", adopted, "--host", "gemini", "--json"}, 3);
  EXPECT_NE(refused.out.find("auth.login_required"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("--server 'remote' --login"), std::string::npos) << refused.out;
  EXPECT_TRUE(NothingStored());

  Login({}, true, {}, {"adopt", "--dir", adopted, "--host", "gemini", "--login", "--no-browser", "--json"});
  EXPECT_EQ(driver_.exit_code, 0) << driver_.err;
  const json::Value first = StoredRecord();
  ASSERT_TRUE(first.contains("refreshToken"));
  auto runtime = json::Parse(dir_.Read("adopted/mcp.json"));
  ASSERT_TRUE(runtime.ok());
  EXPECT_TRUE((*runtime)["mcpServers"]["gemini.remote"].contains("oauth")) << runtime->dump();

  Udon({"review", adopted + "/gemini/remote.tools.json", "--server", "gemini.remote", "--tool", "add", "--reviewer",
        "t@example.test", "--headless", "--independent-calls", "--model-backed", "false", "--reference-based-io",
        "--concurrency", "safe", "--no-side-effects", "--channel", "/a=data", "--channel", "/b=data"},
       0);
  Udon({"adopt", "--dir", adopted, "--apply"}, 0);
  ProcessResult checked = Udon({"adopt", "--dir", adopted, "--check", "--json"}, 0);
  EXPECT_NE(checked.out.find("\"login\":{\"code\":\"\""), std::string::npos) << checked.out;

  auto settings = json::Parse(dir_.Read("home/.gemini/settings.json"));
  ASSERT_TRUE(settings.ok());
  const json::Value& entry = (*settings)["mcpServers"]["remote"];
  ASSERT_TRUE(entry.contains("command")) << settings->dump();
  std::vector<std::string> argv = {entry["command"].get<std::string>()};
  for (const auto& arg : entry["args"]) argv.push_back(arg.get<std::string>());
  ::setenv("UDON_MCP_STATE_DIR", dir_.File("state").c_str(), 1);  // the host's environment
  testing::LineClient host(argv);
  ::unsetenv("UDON_MCP_STATE_DIR");
  host.Send(testing::InitializeRequest(1));
  ASSERT_TRUE(host.ReadResponse(1).has_value()) << host.Stderr();
  host.Send(testing::Notification("notifications/initialized"));
  host.Send(testing::Request(2, "tools/call", {{"name", "add"}, {"arguments", {{"a", 2}, {"b", 40}}}}));
  auto called = host.ReadResponse(2);
  ASSERT_TRUE(called.has_value()) << host.Stderr();
  EXPECT_EQ((*called)["result"]["structuredContent"]["sum"], 42) << called->dump();
  host.CloseInput();
  host.Wait();

  const json::Value rotated = StoredRecord();
  EXPECT_NE(rotated["accessToken"], first["accessToken"]);
  EXPECT_NE(rotated["refreshToken"], first["refreshToken"]);
  const std::string written = outputs_ + dir_.Read("home/.gemini/settings.json") + dir_.Read("adopted/mcp.json") +
                              dir_.Read("adopted/gemini/remote.tools.json") + host.Stderr();
  for (const json::Value& record : {first, rotated}) {
    for (const char* secret : {"accessToken", "refreshToken"}) {
      EXPECT_EQ(written.find(record[secret].get<std::string>()), std::string::npos) << "a token leaked";
    }
  }

  // --check says, without refreshing, when the login can no longer be used: expired with
  // no refresh token left, then gone.
  for (const auto& file : std::filesystem::directory_iterator(dir_.File("state/oauth"))) {
    if (file.path().extension() != ".json") continue;
    json::Value record = rotated;
    record["expiresAt"] = 1;
    record.erase("refreshToken");
    dir_.Write("state/oauth/" + file.path().filename().string(), record.dump());
  }
  ProcessResult expired = Udon({"adopt", "--dir", adopted, "--check", "--json"}, -1);
  EXPECT_NE(expired.exit_code, 0);
  EXPECT_NE(expired.out.find(R"("login":{"code":"auth.login_expired","status":"expired"})"), std::string::npos)
      << expired.out;
  testing::RunOptions options = Options();
  EXPECT_EQ(testing::RunProcess({testing::UdonMcpBinary(), "logout", "gemini.remote", "--config", adopted + "/mcp.json"},
                                options)
                .exit_code,
            0);
  ProcessResult missing = Udon({"adopt", "--dir", adopted, "--check", "--json"}, -1);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.out.find(R"("login":{"code":"auth.login_required","status":"missing"})"), std::string::npos)
      << missing.out;
}

TEST_F(OAuthLoginTest, ARedirectWithAnotherStateOrIssuerStoresNothing) {
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());
  EXPECT_NE(Login({"--wrong-state"}).find("auth.state_mismatch"), std::string::npos);
  EXPECT_TRUE(NothingStored());
  EXPECT_NE(Login({"--wrong-iss"}).find("auth.iss_mismatch"), std::string::npos);
  EXPECT_TRUE(NothingStored());
  EXPECT_NE(Login({"--drop-iss"}).find("auth.iss_mismatch"), std::string::npos);
  EXPECT_TRUE(NothingStored());
  EXPECT_NE(Login({"--deny"}).find("auth.login_denied"), std::string::npos);
  EXPECT_TRUE(NothingStored());
}

// A token that expires within the refresh margin is refreshed before use; oidc-provider
// rotates the refresh token every time, so two processes refreshing at once would spend one
// refresh token twice (invalid_grant) without the refresh lock and the re-read inside it.
TEST_F(OAuthLoginTest, RefreshesAnExpiringTokenOnceAcrossConcurrentCommands) {
  const json::Value as = StartPeer("authorization-server.mjs", {"--access-token-ttl", "30"});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());
  Login();
  const json::Value first = StoredRecord();
  ASSERT_TRUE(first.contains("refreshToken")) << first.dump().size();
  testing::RunOptions options;
  options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
  std::vector<std::thread> runners;
  std::vector<ProcessResult> results(3);
  for (int i = 0; i < 3; ++i) {
    runners.emplace_back([&, i] {
      results[i] = testing::RunProcess({testing::UdonMcpBinary(), "capture", "--server", "remote", "-o",
                                        dir_.File("tools" + std::to_string(i) + ".json"), "--config",
                                        dir_.File("mcp.json")},
                                       options);
    });
  }
  for (auto& runner : runners) runner.join();
  for (const ProcessResult& result : results) EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  const json::Value refreshed = StoredRecord();
  EXPECT_NE(refreshed["accessToken"], first["accessToken"]);
  EXPECT_NE(refreshed["refreshToken"], first["refreshToken"]);
}

// A server that refuses every token, even a refreshed one: the command refreshes once,
// then stops with auth.token_rejected (bounded: one code exchange, one refresh, no loop), and
// the stored login is still a whole record.
TEST_F(OAuthLoginTest, AServerThatAnswers401AfterEveryLoginEndsBoundedWithAClearCode) {
  const json::Value peer = StartPeer("hostile.mjs", {"always-401"});
  Configure(peer["url"].get<std::string>());
  EXPECT_NE(Login().find("\"ok\":true"), std::string::npos);
  ProcessResult refused = Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json"), "--json"}, 3);
  EXPECT_NE(refused.out.find("auth.token_rejected"), std::string::npos) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("udon-mcp login remote"), std::string::npos) << refused.out;
  const json::Value report = Report(peer);
  EXPECT_EQ(report["token"], 2) << report.dump();  // the code's exchange and one refresh
  EXPECT_LE(report.value("mcp", 0), 8) << report.dump();
  EXPECT_TRUE(StoredRecord().contains("accessToken"));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("tools.json")));
}

// A 401 to tools/call is known not to have run: the login is refreshed once and the gate
// starts again from the re-list; the tool runs exactly once.
TEST_F(OAuthLoginTest, A401ToToolsCallRefreshesOnceAndTheGateStartsAgainFromTheRelist) {
  const json::Value peer = StartPeer("hostile.mjs", {"call-401-once"});
  Configure(peer["url"].get<std::string>());
  EXPECT_NE(Login().find("\"ok\":true"), std::string::npos);
  const std::string sha = CaptureAndReview("echo", {"/text=data"});
  const json::Value before = Report(peer);
  ProcessResult called = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "remote",
                               "--tool", "echo", "--args", R"({"text":"hi"})", "--json"},
                              0);
  EXPECT_NE(called.out.find("\"ok\":true"), std::string::npos) << called.out;
  const json::Value after = Report(peer);
  EXPECT_EQ(after["toolCalls"], 1) << after.dump();
  EXPECT_EQ(after.value("token", 0) - before.value("token", 0), 1) << after.dump();  // one refresh
}

// A 401 to the gate's re-list (the token revoked since the capture): refreshed once, the
// checks start again, the call runs once.
TEST_F(OAuthLoginTest, A401ToTheRelistRefreshesOnceAndTheCallRuns) {
  const json::Value peer = StartPeer("hostile.mjs", {"cdn-wellknown"});
  Configure(peer["url"].get<std::string>());
  EXPECT_NE(Login().find("\"ok\":true"), std::string::npos);
  const std::string sha = CaptureAndReview("echo", {"/text=data"});
  Report(peer, "refuse-next?method=tools/list");
  const json::Value before = Report(peer);
  ProcessResult called = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "remote",
                               "--tool", "echo", "--args", R"({"text":"hi"})", "--json"},
                              0);
  EXPECT_NE(called.out.find("\"ok\":true"), std::string::npos) << called.out;
  const json::Value after = Report(peer);
  EXPECT_EQ(after["toolCalls"], 1) << after.dump();
  EXPECT_EQ(after.value("token", 0) - before.value("token", 0), 1) << after.dump();  // one refresh
}

// 403 insufficient_scope: a stable refusal naming the login with the larger scope, never a
// silent retry with a broader token (nothing refreshed, nothing run).
TEST_F(OAuthLoginTest, InsufficientScopeNamesTheLoginWithTheScopeAndRetriesNothing) {
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());
  Login();
  const json::Value first = StoredRecord();
  const std::string sha = CaptureAndReview("admin_reset");
  ProcessResult refused = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "remote",
                                "--tool", "admin_reset", "--args", "{}", "--json"},
                               3);
  EXPECT_NE(refused.out.find("auth.scope_required"), std::string::npos) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("udon-mcp login remote --scope 'mcp:tools mcp:admin'"), std::string::npos) << refused.out;
  EXPECT_EQ(StoredRecord()["accessToken"], first["accessToken"]) << "a 403 must not refresh or widen the login";
}

// RFC 9207: a server that neither advertises nor sends iss is fine under 2025-11-25 (as
// GitHub-like servers are today) and refused under 2026-07-28, which requires it.
TEST_F(OAuthLoginTest, IssIsRequiredUnder2026ButNotUnder2025) {
  const json::Value peer = StartPeer("hostile.mjs", {"no-iss"});
  Configure(peer["url"].get<std::string>());
  EXPECT_NE(Login({}, true, {"--protocol-version", "2026-07-28"}).find("auth.iss_mismatch"), std::string::npos);
  EXPECT_TRUE(NothingStored());
  EXPECT_NE(Login({}, true, {"--protocol-version", "2025-11-25"}).find("\"ok\":true"), std::string::npos);
  EXPECT_FALSE(NothingStored());
}

// adopt --protocol-version V reaches both the capture and the login it runs: under
// 2026-07-28 a redirect without RFC 9207's iss is refused (nothing stored, nothing
// adopted), under 2025-11-25 the same server is logged in to and captured at exactly that
// revision; the command adopt names for the login keeps the version.
TEST_F(OAuthLoginTest, AdoptLogsInAndCapturesForTheProtocolVersionItWasGiven) {
  const json::Value peer = StartPeer("hostile.mjs", {"no-iss"});
  std::filesystem::create_directories(dir_.File("home/.gemini"));
  dir_.Write("home/.gemini/settings.json",
             json::Value({{"mcpServers", {{"remote", {{"httpUrl", peer["url"].get<std::string>()}}}}}}).dump(2));
  env_["HOME"] = dir_.File("home");
  env_["XDG_CONFIG_HOME"] = dir_.File("home/.config");
  const std::string adopted = dir_.File("adopted");
  const auto adopt = [&](const char* version) {
    return std::vector<std::string>{"adopt", "--dir", adopted, "--host", "gemini", "--login", "--no-browser", "--json",
                                    "--protocol-version", version};
  };

  ProcessResult refused =
      Udon({"adopt", "--dir", adopted, "--host", "gemini", "--protocol-version", "2026-07-28", "--json"}, 3);
  EXPECT_NE(refused.out.find("--login --protocol-version '2026-07-28'"), std::string::npos) << refused.out;

  const std::string modern = Login({}, true, {}, adopt("2026-07-28"));
  EXPECT_NE(modern.find("auth.iss_mismatch"), std::string::npos) << modern;
  EXPECT_TRUE(NothingStored());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("adopted/gemini/remote.tools.json")));

  const std::string legacy = Login({}, true, {}, adopt("2025-11-25"));
  EXPECT_NE(legacy.find("\"captured\""), std::string::npos) << legacy;
  EXPECT_FALSE(NothingStored());
  auto manifest = json::Parse(dir_.Read("adopted/gemini/remote.tools.json"));
  ASSERT_TRUE(manifest.ok()) << legacy;
  EXPECT_EQ((*manifest)["protocolVersion"], "2025-11-25");
}

// A server that answers a token-bearing request with a 307 to another origin: the token
// does not follow (the other origin sees no Authorization header) and capture fails.
TEST_F(OAuthLoginTest, ARedirectToAnotherOriginNeverCarriesTheToken) {
  const json::Value peer = StartPeer("hostile.mjs", {"redirect-other-origin"});
  Configure(peer["url"].get<std::string>());
  EXPECT_NE(Login().find("\"ok\":true"), std::string::npos);
  ProcessResult refused = Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json"), "--json"}, -1);
  EXPECT_NE(refused.exit_code, 0);
  const json::Value report = Report(peer);
  EXPECT_GT(report.value("mcpWithValidToken", 0), 0) << report.dump();
  EXPECT_EQ(report["otherOrigin"]["withAuthorization"], 0) << report.dump();
  EXPECT_EQ(report["otherOrigin"]["requests"], 0) << report.dump();
}

// serve in front of an OAuth upstream: the host calls through the gateway, the upstream
// sees the login's token (whoami answers its subject), the host never does.
TEST_F(OAuthLoginTest, ServeFrontsAnOAuthUpstreamAndTheHostNeverSeesTheToken) {
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const json::Value rs = StartPeer("resource-server.mjs", {"--issuer", as["issuer"].get<std::string>()});
  Configure(rs["url"].get<std::string>());
  Login();
  const std::string sha = CaptureAndReview("whoami");
  std::vector<nlohmann::json> seen;
  std::string host_stderr;
  {
    testing::LineClient host({testing::UdonMcpBinary(), "serve", "--manifest", dir_.File("tools.json"), "--sha256",
                              sha, "--config", dir_.File("mcp.json"), "--state-dir", dir_.File("state")});
    host.Send(testing::InitializeRequest(0));
    ASSERT_TRUE(host.ReadResponse(0, &seen).has_value()) << host.Stderr();
    host.Send(testing::Notification("notifications/initialized"));
    host.Send(testing::Request(1, "tools/call", {{"name", "whoami"}, {"arguments", nlohmann::json::object()}}));
    const std::optional<nlohmann::json> called = host.ReadResponse(1, &seen);
    ASSERT_TRUE(called.has_value()) << host.Stderr();
    EXPECT_NE(called->dump().find("alice"), std::string::npos) << called->dump();
    EXPECT_FALSE((*called)["result"].value("isError", false)) << called->dump();
    host.CloseInput();
    host.Wait();
    host_stderr = host.Stderr();
  }
  const std::string token = StoredRecord()["accessToken"].get<std::string>();
  ASSERT_GT(token.size(), 8u);
  for (const nlohmann::json& message : seen) EXPECT_EQ(message.dump().find(token), std::string::npos);
  EXPECT_EQ(host_stderr.find(token), std::string::npos);
}

// The anchor: mcp-remote, the login most hosts use, against the same servers in the same
// test; wherever it logs in and lists the tools, udon-mcp logs in and captures too.
TEST_F(OAuthLoginTest, WhereMcpRemoteLogsInUdonMcpLogsInAndCapturesToo) {
  const json::Value as = StartPeer("authorization-server.mjs", {});
  const std::string issuer = as["issuer"].get<std::string>();
  const std::vector<std::vector<std::string>> servers = {
      {"resource-server.mjs", "--issuer", issuer},
      {"resource-server.mjs", "--issuer", issuer, "--metadata-at", "root"},
      {"resource-server.mjs", "--issuer", issuer, "--no-resource-metadata", "--metadata-at", "both"},
      {"hostile.mjs", "cdn-wellknown"}};
  int anchored = 0;
  for (const std::vector<std::string>& server : servers) {
    SCOPED_TRACE(server[0] + (server.size() > 3 ? " " + server[3] : std::string()));
    const json::Value peer = StartPeer(server[0], std::vector<std::string>(server.begin() + 1, server.end()));
    const std::string url = peer["url"].get<std::string>();
    const ProcessResult anchor = testing::RunProcess({testing::NodeBinary(), Peer("mcp-remote-anchor.mjs"), url});
    if (anchor.exit_code != 0) continue;  // where mcp-remote fails, nothing is asserted
    ++anchored;
    std::filesystem::remove_all(dir_.File("state"));
    Configure(url);
    EXPECT_NE(Login().find("\"ok\":true"), std::string::npos);
    Udon({"capture", "--server", "remote", "-o", dir_.File("tools.json")}, 0);
  }
  EXPECT_GT(anchored, 0) << "mcp-remote logged in nowhere: the anchor proves nothing";
}

struct HostileCase {
  std::string mode;
  std::string code;  // "" : the login must succeed
  bool reaches_browser;
};

class OAuthHostileTest : public OAuthLoginTest, public ::testing::WithParamInterface<HostileCase> {};

TEST_P(OAuthHostileTest, RefusesWithAClearCodeAndStoresNothing) {
  const HostileCase& hostile = GetParam();
  const json::Value peer = StartPeer("hostile.mjs", {hostile.mode, "--huge-bytes", "8388608", "--slow-ms", "400"});
  Configure(peer["url"].get<std::string>());
  const std::string output = Login({}, hostile.reaches_browser);
  if (hostile.code.empty()) {
    EXPECT_NE(output.find("\"ok\":true"), std::string::npos) << output;
    EXPECT_FALSE(NothingStored());
    return;
  }
  EXPECT_NE(output.find(hostile.code), std::string::npos) << output;
  EXPECT_TRUE(NothingStored());
}

INSTANTIATE_TEST_SUITE_P(
    Modes, OAuthHostileTest,
    ::testing::Values(HostileCase{"resource-mismatch", "auth.resource_mismatch", false},
                      HostileCase{"issuer-mismatch", "auth.issuer_mismatch", false},
                      HostileCase{"no-s256", "auth.pkce_unsupported", false},
                      HostileCase{"metadata-other-host", "auth.metadata_foreign", false},
                      HostileCase{"token-garbage", "auth.token_failed", true},
                      HostileCase{"token-huge", "auth.response_too_large", true},
                      HostileCase{"token-slow", "auth.timeout", true},
                      HostileCase{"cdn-wellknown", "", true}),
    [](const ::testing::TestParamInfo<HostileCase>& param) { return testing::TestIdentifier(param.param.mode); });

}  // namespace
}  // namespace udon
