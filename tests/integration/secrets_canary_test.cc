// Secrets canary: values that reach udon-mcp only as secrets (a stdio server's environment
// from ${env:...}, HTTP header values from ${env:...} and written literally, a URL query
// from ${env:...}) never appear in stdout, stderr, manifests, evidence or any other file the
// commands write, on the happy path and on every error path (a failing server, a refused
// gate, a timeout, a crash), for capture, call, run and probe. And udon-mcp runs with core
// dumps disabled, so no core file can carry them either.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

namespace fs = std::filesystem;
using testing::BackgroundProcess;
using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

// Passed to udon-mcp through its environment only; the configs name the variables.
constexpr const char* kEnvSecretVariable = "UDON_CANARY_SERVER_ENV";
constexpr const char* kEnvSecret = "cnry-env-7f3a91c2e5d8";
constexpr const char* kHeaderSecretVariable = "UDON_CANARY_HEADER";
constexpr const char* kHeaderSecret = "cnry-hdr-0b6d24e8f1a3";
constexpr const char* kUrlSecretVariable = "UDON_CANARY_URL";
constexpr const char* kUrlSecret = "cnry-url-5c19e7b2a046";
// Written literally into the config files (and so allowed there, nowhere else).
constexpr const char* kLiteralSecret = "cnry-lit-93c5a7d0b46e";

constexpr const char* kTool = "render_turntable";
constexpr const char* kArgs = R"({"source":"https://assets.example.test/a.blend","angles":2,"resolution":1024})";

std::vector<std::string> SecretsIn(const std::string& bytes, bool literal_allowed) {
  std::vector<std::string> found;
  for (const char* secret : {kEnvSecret, kHeaderSecret, kUrlSecret, kLiteralSecret}) {
    if (literal_allowed && std::string(secret) == kLiteralSecret) continue;
    if (bytes.find(secret) != std::string::npos) found.push_back(secret);
  }
  return found;
}

// A demo server over HTTP on an ephemeral loopback port.
struct HttpServer {
  std::unique_ptr<BackgroundProcess> process;
  std::string url;
};

HttpServer StartHttpServer(std::vector<std::string> extra) {
  std::vector<std::string> argv = {testing::DemoServerBinary(), "--transport", "http", "--host", "127.0.0.1",
                                   "--port", "0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  HttpServer server{std::make_unique<BackgroundProcess>(argv), ""};
  for (int i = 0; i < 400 && server.url.empty(); ++i) {
    const std::string output = server.process->Output();
    if (auto at = output.find("\"url\":\""); at != std::string::npos) {
      auto end = output.find('"', at + 7);
      if (end != std::string::npos) server.url = output.substr(at + 7, end - at - 7);
    }
    if (server.url.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return server;
}

// A server that prints the secret it was given on stderr and on its stdout (the
// JSON-RPC channel), then fails. It also leaves the secret in `proof_file` (outside the
// scanned directory), which shows the secret really was delivered.
json::Value LeakingStdioServer(const std::string& proof_file) {
  return {{"command", "/bin/sh"},
          {"args",
           {"-c", "printf %s \"$DEMO_TOKEN\" > '" + proof_file +
                      "'; echo \"token=$DEMO_TOKEN\" >&2; echo \"{\\\"token\\\":\\\"$DEMO_TOKEN\\\"}\"; exit 3"}},
          {"env", {{"DEMO_TOKEN", std::string("${env:") + kEnvSecretVariable + "}"}}}};
}

// The pid of the only descendant of this process running `name`, or -1.
pid_t DescendantNamed(const std::string& name) {
  for (pid_t pid : testing::Descendants(getpid())) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string command;
    std::getline(comm, command);
    if (command == name) return pid;
  }
  return -1;
}

std::string CoreLimitOf(pid_t pid) {
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  std::string line;
  while (std::getline(limits, line)) {
    if (line.rfind("Max core file size", 0) == 0) return line;
  }
  return "";
}

bool HasCoreFile(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("core", 0) == 0) return true;
  }
  return false;
}

class SecretsCanaryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Orphans of anything we start are re-parented to this process, so a leaked server
    // shows up in Descendants().
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }

  void SetUp() override {
    http_ = StartHttpServer({"--log-requests", dir_.File("http-requests.jsonl")});
    ASSERT_FALSE(http_.url.empty()) << http_.process->Output();
    WriteConfig("mcp.json", StdioServer({}), HttpEntry(http_.url));
    ASSERT_EQ(Udon({"capture", "--server", "demo", "--server", "web", "-o", dir_.File("tools.json")}).exit_code, 0);
    for (const char* server : {"demo", "web"}) {
      ASSERT_EQ(Udon({"review", dir_.File("tools.json"), "--server", server, "--tool", kTool, "--reviewer",
                      "tester@example.test", "--headless", "--independent-calls", "--model-backed", "false",
                      "--no-side-effects", "--concurrency", "safe", "--reference-based-io", "--channel",
                      "/source=data", "--channel", "/angles=data", "--channel", "/resolution=data"})
                    .exit_code,
                0);
    }
    ProcessResult digest = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")});
    ASSERT_EQ(digest.exit_code, 0) << digest.err;
    sha_ = digest.out.substr(0, 64);
    dir_.Write("flow.uws.yaml", Workflow());
    dir_.Write("inputs.json", R"({"asset": "file:///assets/teapot.blend"})");
  }

  void TearDown() override {
    for (HttpServer* server : {&http_, &faulty_http_}) {
      if (server->process) {
        server->process->Stop();
        EXPECT_EQ(SecretsIn(server->process->Output(), false), std::vector<std::string>{})
            << "the demo server's own output";
      }
    }
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
    ScanWrittenFiles();
  }

  bool IsHttpServer(pid_t pid) const {
    for (const HttpServer* server : {&http_, &faulty_http_}) {
      if (server->process && server->process->pid() == pid) return true;
    }
    return false;
  }

  // The demo server over stdio, with the env secret in its environment.
  json::Value StdioServer(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--log-requests", dir_.File("requests.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    return {{"command", testing::DemoServerBinary()},
            {"args", args},
            {"env", {{"DEMO_TOKEN", std::string("${env:") + kEnvSecretVariable + "}"}}}};
  }

  // An HTTP server entry with secrets in two headers and in the URL's query.
  static json::Value HttpEntry(const std::string& url) {
    return {{"url", url + "?session_hint=${env:" + kUrlSecretVariable + "}"},
            {"headers",
             {{"Authorization", std::string("Bearer ${env:") + kHeaderSecretVariable + "}"},
              {"X-Api-Key", kLiteralSecret}}}};
  }

  void WriteConfig(const std::string& name, const json::Value& demo, const json::Value& web) {
    dir_.Write(name, json::Value({{"mcpServers", {{"demo", demo}, {"web", web}}}}).dump(2));
    configs_.push_back(name);
  }

  std::string Workflow() const {
    auto operation = [&](const std::string& server) {
      return "  - operationId: render_" + server +
             "\n    x-uws-operation-profile: openudon.mcp-tool-call.0.1\n"
             "    x-openudon-mcp: {manifest: ./tools.json, manifestSha256: " +
             sha_ + ", server: " + server + ", tool: " + kTool +
             "}\n"
             "    request: {body: {source: $inputs.asset, angles: 2, resolution: 1024}}\n"
             "    outputs: {all: $response.body#/renderedUris}\n";
    };
    return "uws: 1.9.1\ninfo: {title: canary, version: '1.0.0'}\noperations:\n" + operation("demo") +
           operation("web") +
           R"(workflows:
  - workflowId: main
    type: sequence
    inputs: {type: object, required: [asset], properties: {asset: {type: string}}}
    steps:
      - {stepId: a, operationRef: render_demo, inputs: {asset: $inputs.asset}}
      - {stepId: b, operationRef: render_web, inputs: {asset: $inputs.asset}}
    outputs: {a: $steps.a.outputs.all, b: $steps.b.outputs.all}
)";
  }

  RunOptions Options() const {
    RunOptions options;
    options.env[kEnvSecretVariable] = kEnvSecret;
    options.env[kHeaderSecretVariable] = kHeaderSecret;
    options.env[kUrlSecretVariable] = kUrlSecret;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.cwd = dir_.path();
    return options;
  }

  // udon-mcp with the secrets in its environment; neither stream may show one.
  ProcessResult Udon(std::vector<std::string> args, const std::string& config = "mcp.json") {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File(config)});
    ProcessResult result = testing::RunProcess(args, Options());
    EXPECT_EQ(SecretsIn(result.out, false), std::vector<std::string>{}) << "stdout of " << args[1];
    EXPECT_EQ(SecretsIn(result.err, false), std::vector<std::string>{}) << "stderr of " << args[1];
    return result;
  }

  std::vector<std::string> GateArgs(const std::string& command, const std::string& server,
                                    const std::string& sha = {}, const std::string& arguments = kArgs) {
    return {command, "--manifest", dir_.File("tools.json"), "--sha256", sha.empty() ? sha_ : sha, "--server",
            server,  "--tool",     kTool,                   "--args",   arguments,                 "--evidence",
            dir_.File("evidence.jsonl")};
  }

  // Every gate-facing command against both servers under `config`, each in --json and in
  // text mode; the exit statuses by command, for the caller's expectations.
  using Exits = std::map<std::string, std::vector<int>>;
  Exits EveryCommand(const std::string& config, std::vector<std::string> extra = {}) {
    Exits exits;
    for (const char* server : {"demo", "web"}) {
      for (bool json_mode : {true, false}) {
        SCOPED_TRACE(std::string(server) + (json_mode ? " --json" : " text"));
        std::vector<std::string> call = GateArgs("call", server);
        call.insert(call.end(), extra.begin(), extra.end());
        if (json_mode) call.push_back("--json");
        exits["call"].push_back(Udon(call, config).exit_code);
        std::vector<std::string> probe = GateArgs("probe", server);
        probe.insert(probe.end(), {"--repeat", "2", "--fresh-connections"});
        probe.insert(probe.end(), extra.begin(), extra.end());
        if (json_mode) probe.push_back("--json");
        exits["probe"].push_back(Udon(probe, config).exit_code);
        std::vector<std::string> capture = {"capture", "--server", server, "-o", dir_.File("recaptured.json")};
        if (json_mode) capture.push_back("--json");
        exits["capture"].push_back(Udon(capture, config).exit_code);
      }
    }
    std::vector<std::string> run = {"run", dir_.File("flow.uws.yaml"), "--inputs", dir_.File("inputs.json"),
                                    "--evidence", dir_.File("evidence.jsonl")};
    run.insert(run.end(), extra.begin(), extra.end());
    exits["run"].push_back(Udon(run, config).exit_code);
    run.push_back("--json");
    exits["run"].push_back(Udon(run, config).exit_code);
    return exits;
  }

  // udon-mcp mid-call (a server that never answers), started with the soft core limit
  // raised as far as the hard limit allows, in dir/crash; *limit gets its "Max core file
  // size" line from /proc, then it is killed by SIGABRT.
  ProcessResult CrashMidCall(std::string* limit) {
    WriteConfig("hang.json", StdioServer({"--fault", std::string("hang-during-call=") + kTool}),
                HttpEntry(http_.url));
    fs::create_directories(dir_.File("crash"));
    std::vector<std::string> argv = {"/bin/sh", "-c", "ulimit -c unlimited 2>/dev/null; exec \"$0\" \"$@\"",
                                     testing::UdonMcpBinary()};
    std::vector<std::string> call = GateArgs("call", "demo");
    argv.insert(argv.end(), call.begin(), call.end());
    argv.insert(argv.end(), {"--timeout", "60", "--config", dir_.File("hang.json")});
    RunOptions options = Options();
    options.cwd = dir_.File("crash");
    ProcessResult result;
    std::thread runner([&] { result = testing::RunProcess(argv, options); });
    pid_t udon = -1;
    for (int i = 0; i < 600 && udon < 0; ++i) {
      if (dir_.Read("requests.jsonl").find("tools/call") != std::string::npos) {
        udon = DescendantNamed("udon-mcp");
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    if (udon > 0) {
      *limit = CoreLimitOf(udon);
      kill(udon, SIGABRT);
    }
    runner.join();
    // The hung server dies with udon-mcp (PR_SET_PDEATHSIG) and is re-parented to us.
    for (pid_t orphan : testing::Descendants(getpid())) {
      if (!IsHttpServer(orphan)) waitpid(orphan, nullptr, 0);
    }
    EXPECT_GT(udon, 0) << "udon-mcp never reached the call";
    EXPECT_EQ(SecretsIn(result.out + result.err, false), std::vector<std::string>{});
    return result;
  }

  // Every file under the test's directory; only the configs may hold the literal secret.
  void ScanWrittenFiles() {
    int scanned = 0;
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path())) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      const bool is_config = std::find(configs_.begin(), configs_.end(), name) != configs_.end() &&
                             entry.path().parent_path() == fs::path(dir_.path());
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      EXPECT_EQ(SecretsIn(bytes.str(), is_config), std::vector<std::string>{}) << entry.path();
      // The scan sees what is there: every config holds the literal header value.
      if (is_config) {
        EXPECT_NE(bytes.str().find(kLiteralSecret), std::string::npos) << entry.path();
      }
      ++scanned;
    }
    EXPECT_GT(scanned, 0);
  }

  TempDir dir_;
  TempDir proof_;  // not scanned: where a test's own witnesses keep secrets
  HttpServer http_;
  HttpServer faulty_http_;
  std::vector<std::string> configs_;
  std::string sha_;
};

TEST_F(SecretsCanaryTest, SuccessfulCaptureCallProbeAndRunShowNoSecret) {
  const Exits exits = EveryCommand("mcp.json");
  EXPECT_EQ(exits, (Exits{{"call", {0, 0, 0, 0}}, {"probe", {0, 0, 0, 0}}, {"capture", {0, 0, 0, 0}},
                          {"run", {0, 0}}}));
  // The commands did run: one ok evidence line per call and per probe repetition, and
  // the workflow's two calls twice.
  std::istringstream lines(dir_.Read("evidence.jsonl"));
  std::string line;
  int ok = 0;
  while (std::getline(lines, line)) ok += json::Parse(line).value()["code"] == "ok";
  EXPECT_EQ(ok, 4 + 4 * 2 + 2 * 2);
  // The HTTP server saw the calls (the secrets did travel where they belong).
  EXPECT_NE(dir_.Read("http-requests.jsonl").find("tools/call"), std::string::npos);
}

TEST_F(SecretsCanaryTest, FailingServersShowNoSecret) {
  // stdio: a server that prints its secret on both streams and exits; HTTP: a closed port,
  // and a live server at a path it does not serve (404).
  const Exits all_failed = {{"call", {3, 3, 3, 3}}, {"probe", {3, 3, 3, 3}}, {"capture", {3, 3, 3, 3}},
                            {"run", {3, 3}}};
  WriteConfig("failing.json", LeakingStdioServer(proof_.File("token")),
              HttpEntry("http://127.0.0.1:" + std::to_string(testing::FreeLoopbackPort()) + "/mcp"));
  EXPECT_EQ(EveryCommand("failing.json"), all_failed);
  EXPECT_EQ(proof_.Read("token"), kEnvSecret) << "the failing server did receive the secret";
  WriteConfig("not-found.json", LeakingStdioServer(proof_.File("token")), HttpEntry(http_.url + "/missing"));
  EXPECT_EQ(EveryCommand("not-found.json"), all_failed);
}

// The first HTTP request head that reaches a loopback listener which hangs up on every
// connection (a client that retries meets the same, so it fails at once instead of waiting
// in the listen queue for its timeout).
class HangUpListener {
 public:
  HangUpListener() {
    fd_ = testing::ListenOnLoopback(port_, 4);
    if (fd_ < 0) {
      port_ = 0;
      return;
    }
    thread_ = std::thread([this] { Serve(); });
  }
  ~HangUpListener() {
    Stop();
    close(fd_);
  }
  int port() const { return port_; }
  // The first request head (empty if none came); call after the client has finished.
  std::string Head() {
    Stop();
    return head_;
  }

 private:
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void Serve() {
    while (!stop_) {
      pollfd waiting{fd_, POLLIN, 0};
      if (poll(&waiting, 1, 100) != 1) continue;
      const int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      std::string head = ReadHead(client);
      close(client);
      if (head_.empty()) head_ = std::move(head);
    }
  }
  static std::string ReadHead(int client) {
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      pollfd readable{client, POLLIN, 0};
      if (poll(&readable, 1, 10'000) != 1) break;
      const ssize_t n = read(client, buffer, sizeof buffer);
      if (n <= 0) break;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    return head;
  }

  std::atomic<bool> stop_{false};
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string head_;
};

TEST_F(SecretsCanaryTest, HeaderSecretsReachTheServerButNoOutput) {
  HangUpListener listener;
  ASSERT_GT(listener.port(), 0);
  WriteConfig("hang-up.json", StdioServer({}),
              HttpEntry("http://127.0.0.1:" + std::to_string(listener.port()) + "/mcp"));
  ProcessResult capture = Udon({"capture", "--server", "web", "-o", dir_.File("never.json"), "--json"}, "hang-up.json");
  EXPECT_EQ(capture.exit_code, 3);
  const std::string head = listener.Head();
  EXPECT_NE(head.find(std::string("Authorization: Bearer ") + kHeaderSecret), std::string::npos) << head;
  EXPECT_NE(head.find(std::string("X-Api-Key: ") + kLiteralSecret), std::string::npos) << head;
  EXPECT_NE(head.find(std::string("session_hint=") + kUrlSecret), std::string::npos) << head;
  EXPECT_FALSE(fs::exists(dir_.File("never.json")));
}

TEST_F(SecretsCanaryTest, RefusedGatesShowNoSecret) {
  // Drift on both servers: the comparison refuses before dispatch.
  faulty_http_ = StartHttpServer({"--fault", std::string("description=") + kTool});
  ASSERT_FALSE(faulty_http_.url.empty());
  WriteConfig("drift.json", StdioServer({"--fault", std::string("description=") + kTool}),
              HttpEntry(faulty_http_.url));
  // Capture takes what the server now says; every gated command refuses.
  EXPECT_EQ(EveryCommand("drift.json"), (Exits{{"call", {3, 3, 3, 3}}, {"probe", {3, 3, 3, 3}},
                                               {"capture", {0, 0, 0, 0}}, {"run", {3, 3}}}));
  // A wrong pin and invalid arguments, on the healthy servers.
  std::string wrong = sha_;
  wrong[0] = wrong[0] == 'a' ? 'b' : 'a';
  for (const char* server : {"demo", "web"}) {
    EXPECT_EQ(Udon(GateArgs("call", server, wrong)).exit_code, 3);
    std::vector<std::string> invalid = GateArgs(
        "call", server, sha_, R"({"source":"https://assets.example.test/a.blend","angles":99,"resolution":1024})");
    invalid.push_back("--json");
    EXPECT_EQ(Udon(invalid).exit_code, 3);
  }
}

TEST_F(SecretsCanaryTest, TimeoutsAndCrashesShowNoSecret) {
  faulty_http_ = StartHttpServer({"--fault", std::string("hang-during-call=") + kTool});
  ASSERT_FALSE(faulty_http_.url.empty());
  WriteConfig("hang.json", StdioServer({"--fault", std::string("hang-during-call=") + kTool}),
              HttpEntry(faulty_http_.url));
  EXPECT_EQ(EveryCommand("hang.json", {"--timeout", "1"}), (Exits{{"call", {5, 5, 5, 5}}, {"probe", {5, 5, 5, 5}},
                                                                  {"capture", {0, 0, 0, 0}}, {"run", {5, 5}}}));
  // A stdio server that dies mid-call (the HTTP server is left alive for the scan).
  WriteConfig("crash.json", StdioServer({"--fault", std::string("crash-during-call=") + kTool}),
              HttpEntry(http_.url));
  for (const bool json_mode : {true, false}) {
    std::vector<std::string> call = GateArgs("call", "demo");
    if (json_mode) call.push_back("--json");
    EXPECT_EQ(Udon(call, "crash.json").exit_code, 5);
  }
}

// Whether this system writes a core file into a crashing process's directory at all: a
// control process (no secrets) with the soft core limit raised, killed by SIGABRT.
bool CoreFilesAreWrittenHere(const std::string& dir, std::string* why_not) {
  fs::create_directories(dir);
  RunOptions options;
  options.cwd = dir;
  ProcessResult control = testing::RunProcess({"/bin/sh", "-c", "ulimit -c unlimited 2>/dev/null; kill -ABRT $$"}, options);
  const bool written = control.term_signal == SIGABRT && HasCoreFile(dir);
  fs::remove_all(dir);
  std::ifstream pattern("/proc/sys/kernel/core_pattern");
  std::string core_pattern;
  std::getline(pattern, core_pattern);
  *why_not = "this system writes no core file into the crashing process's directory (core_pattern '" +
             core_pattern + "', or a hard core limit of 0)";
  return written;
}

TEST_F(SecretsCanaryTest, UdonMcpRunsWithNoCoreFileSize) {
  std::string limit;
  ProcessResult crashed = CrashMidCall(&limit);
  std::istringstream fields(limit.substr(std::min(limit.size(), std::string("Max core file size").size())));
  std::string soft, hard;
  fields >> soft >> hard;
  EXPECT_EQ(soft, "0") << limit;
  EXPECT_EQ(hard, "0") << limit;
  EXPECT_EQ(crashed.term_signal, SIGABRT);
}

TEST_F(SecretsCanaryTest, ACrashOfUdonMcpLeavesNoCoreFile) {
  std::string why_not;
  if (!CoreFilesAreWrittenHere(dir_.File("control"), &why_not)) GTEST_SKIP() << why_not;
  std::string limit;
  ProcessResult crashed = CrashMidCall(&limit);
  EXPECT_EQ(crashed.term_signal, SIGABRT);
  EXPECT_FALSE(HasCoreFile(dir_.File("crash"))) << "udon-mcp left a core file";
}

}  // namespace
}  // namespace udon
