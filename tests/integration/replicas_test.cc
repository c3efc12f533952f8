// Several `serve` replicas on one PostgreSQL store behind HAProxy (issue 40, section 2):
// the example configuration (packaging/haproxy/haproxy.cfg, only its addresses replaced),
// the probes, legacy sessions kept on their replica, an invalidation one replica records
// refusing the next call on every replica, a replica killed under load, and a rolling
// restart under load. Dispatches are counted at the upstream: every call sends a unique
// ledger entry, and each demo server appends the entries it receives to one file.
#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "demo_http.h"
#include "line_client.h"
#include "pg_cluster.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon {
namespace {

using Json = nlohmann::json;
using testing::BackgroundProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

constexpr int kReplicas = 3;

Json ModernCall(int id, const std::string& tool, Json arguments) {
  Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", Json::object()},
               {"io.modelcontextprotocol/clientInfo", {{"name", "replicas-test"}, {"version", "1"}}}};
  return testing::Request(id, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}, {"_meta", meta}});
}

// One answer: the HTTP status (0: no answer at all), the JSON-RPC message, the replica.
struct Answer {
  int status = 0;
  Json message;
  std::string replica;  // HAProxy's X-Served-By
  bool succeeded() const {
    return status == 200 && message.contains("result") && !message["result"].value("isError", false);
  }
  std::string code() const {
    if (!message.contains("result")) return {};
    return message["result"].value("_meta", Json::object()).value("code", std::string());
  }
};

Answer Parse(const httplib::Result& result) {
  Answer answer;
  if (!result) return answer;
  answer.status = result->status;
  answer.replica = result->get_header_value("X-Served-By");
  std::vector<Json> messages;
  if (result->get_header_value("Content-Type").find("text/event-stream") != std::string::npos) {
    messages = testing::SseMessages(result->body);
  } else if (auto parsed = Json::parse(result->body, nullptr, false); !parsed.is_discarded()) {
    messages.push_back(parsed);
  }
  for (const Json& message : messages) {
    if (message.contains("result") || message.contains("error")) answer.message = message;
  }
  return answer;
}

// A 2026-07-28 client: stateless requests, any replica may answer.
class ModernClient {
 public:
  explicit ModernClient(int port) : client_("127.0.0.1", port) {
    client_.set_read_timeout(std::chrono::seconds(60));
    client_.set_connection_timeout(std::chrono::seconds(5));
  }
  Answer Call(const std::string& tool, const Json& arguments) {
    const int id = ++id_;
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2026-07-28"},
                                {"Mcp-Method", "tools/call"},
                                {"Mcp-Name", tool}};
    return Parse(client_.Post("/mcp", headers, ModernCall(id, tool, arguments).dump(), "application/json"));
  }
  // The names tools/list offers (one page: the demo's catalog is small).
  std::set<std::string> ListedTools() {
    const int id = ++id_;
    Json request = ModernCall(id, "", Json::object());
    request["method"] = "tools/list";
    request["params"].erase("name");
    request["params"].erase("arguments");
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2026-07-28"},
                                {"Mcp-Method", "tools/list"}};
    Answer answer = Parse(client_.Post("/mcp", headers, request.dump(), "application/json"));
    std::set<std::string> names;
    for (const Json& tool : answer.message.value("result", Json::object()).value("tools", Json::array())) {
      names.insert(tool.value("name", std::string()));
    }
    return names;
  }

 private:
  httplib::Client client_;
  int id_ = 0;
};

int Probe(int port, const std::string& path, std::string* body = nullptr) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds(2));
  auto result = client.Get(path);
  if (!result) return 0;
  if (body != nullptr) *body = result->body;
  return result->status;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::seconds bound = std::chrono::seconds(30)) {
  const auto deadline = Clock::now() + bound;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// What a load run saw: per entry sent, whether its caller had a success.
struct LoadFigures {
  std::map<std::string, bool> outcomes;  // entry -> succeeded
  std::size_t failures = 0;
  std::map<std::string, int> failed_as;  // "HTTP status code" -> how many, to say why
  Clock::time_point last_failure{};
};

class ReplicasTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    UDON_REQUIRE_POSTGRES();
    if (testing::RunProcess({testing::OnPath("haproxy"), "-v"}).exit_code != 0) {
      if (std::getenv("CI") != nullptr) FAIL() << "haproxy missing: run scripts/install-deps.sh";
      GTEST_SKIP() << "haproxy not installed";
    }
    cluster_ = std::make_unique<testing::PgCluster>();
    ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
    demo_ = std::make_unique<testing::ReviewedDemo>(
        dir_, std::vector<std::string>{"--entries-file", dir_.File("entries.txt"), "--ledger-delay-ms", "100"});
    ASSERT_TRUE(demo_->ok()) << demo_->failure;
    for (int i = 0; i < kReplicas; ++i) ports_.push_back(testing::FreeLoopbackPort());
  }

  void TearDown() override {
    haproxy_.reset();
    replicas_.clear();
    cluster_.reset();
  }

  std::vector<std::string> ReplicaArgv(int i, const std::string& config) const {
    return {testing::UdonMcpBinary(), "serve", "--manifest", demo_->manifest, "--sha256", demo_->sha256,
            "--config", config, "--state-dir", dir_.File("state-" + std::to_string(i)), "--state",
            cluster_->Url(), "--transport", "http", "--listen", "127.0.0.1:" + std::to_string(ports_[i]),
            "--no-token", "--drain-seconds", "20"};
  }

  // Replica i (0-based), ready: its /readyz answers 200.
  void StartReplica(int i, const std::string& config = {}) {
    replicas_[i] = std::make_unique<BackgroundProcess>(ReplicaArgv(i, config.empty() ? demo_->config : config));
    ASSERT_TRUE(WaitFor([&] { return Probe(ports_[i], "/readyz") == 200; })) << replicas_[i]->Output();
  }

  void StartAll() {
    replicas_.resize(kReplicas);
    for (int i = 0; i < kReplicas; ++i) StartReplica(i);
  }

  // HAProxy with the shipped configuration, its addresses replaced, and the answering
  // replica named in a response header (for the test only).
  void StartHaproxy() {
    std::ifstream in(testing::SourceDir() + "/packaging/haproxy/haproxy.cfg");
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    ASSERT_NE(config.find("127.0.0.1:8080"), std::string::npos);
    front_ = testing::FreeLoopbackPort();
    config = Replace(config, "127.0.0.1:8080", "127.0.0.1:" + std::to_string(front_));
    for (int i = 0; i < kReplicas; ++i) {
      config = Replace(config, "127.0.0.1:810" + std::to_string(i + 1), "127.0.0.1:" + std::to_string(ports_[i]));
    }
    config = Replace(config, "    maxconn 4096\n", "    maxconn 4096\n    log stderr format raw local0\n");
    config = Replace(config, "    mode http\n", "    mode http\n    log global\n    option httplog\n");
    config = Replace(config, "    balance roundrobin\n",
                     "    balance roundrobin\n    http-response set-header X-Served-By %[srv_name]\n");
    dir_.Write("haproxy.cfg", config);
    haproxy_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{testing::OnPath("haproxy"), "-db", "-f", dir_.File("haproxy.cfg")});
    ASSERT_TRUE(testing::WaitForPort(front_)) << haproxy_->Output();
  }

  // HAProxy's log lines of answers that were not 200, for a failure's message.
  std::string HaproxyErrors() const {
    std::string lines;
    for (const std::string& line : Lines(haproxy_->Output())) {
      if (line.find(" 200 ") == std::string::npos) lines += "\n" + line;
    }
    return lines;
  }

  // Whether a call through HAProxy is answered by replica `name` within the bound.
  bool SeenThroughBalancer(const std::string& name) {
    ModernClient client(front_);
    int n = 0;
    return WaitFor([&] {
      return client.Call("append_ledger", {{"entry", "probe-" + name + "-" + std::to_string(++n)}}).replica == name;
    });
  }

  // `threads` callers through HAProxy, each sending unique entries until `stop`.
  void RunLoad(int threads, std::atomic<bool>& stop, LoadFigures& figures, const std::string& tag) {
    std::mutex mutex;
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&, t] {
        ModernClient client(front_);
        for (int n = 0; !stop; ++n) {
          const std::string entry = tag + "-" + std::to_string(t) + "-" + std::to_string(n);
          const Answer answer = client.Call("append_ledger", {{"entry", entry}});
          const bool ok = answer.succeeded();
          std::lock_guard lock(mutex);
          figures.outcomes[entry] = ok;
          if (!ok) {
            ++figures.failures;
            ++figures.failed_as[std::to_string(answer.status) + " " + answer.code() + answer.message.dump()];
            figures.last_failure = Clock::now();
          }
        }
      });
    }
    for (auto& caller : callers) caller.join();
  }

  // Every entry dispatched at most once; every success dispatched. Returns the duplicates.
  std::size_t CheckDispatches(const LoadFigures& figures, const std::string& tag) {
    std::map<std::string, int> dispatched;
    for (const std::string& line : Lines(dir_.Read("entries.txt"))) {
      if (line.rfind(tag + "-", 0) == 0) ++dispatched[line];
    }
    std::size_t duplicates = 0;
    for (const auto& [entry, count] : dispatched) {
      if (count > 1) duplicates += count - 1;
      EXPECT_TRUE(figures.outcomes.count(entry)) << "dispatched but never sent: " << entry;
    }
    for (const auto& [entry, ok] : figures.outcomes) {
      if (ok) {
        EXPECT_EQ(dispatched[entry], 1) << "a success its call did not have: " << entry;
      }
    }
    return duplicates;
  }

  TempDir dir_;
  std::unique_ptr<testing::PgCluster> cluster_;
  std::unique_ptr<testing::ReviewedDemo> demo_;
  std::vector<int> ports_;
  std::vector<std::unique_ptr<BackgroundProcess>> replicas_;
  std::unique_ptr<BackgroundProcess> haproxy_;
  int front_ = 0;
};

TEST_F(ReplicasTest, ProbesAnswerWithoutTheTokenAndReadinessFollowsTheStore) {
  replicas_.resize(1);
  std::vector<std::string> argv = ReplicaArgv(0, demo_->config);
  argv.erase(std::find(argv.begin(), argv.end(), "--no-token"));
  dir_.Write("token", "replica-token-0123456789abcdef0123456789");
  argv.insert(argv.end(), {"--token-file", dir_.File("token")});
  replicas_[0] = std::make_unique<BackgroundProcess>(argv);
  ASSERT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz") == 200; })) << replicas_[0]->Output();
  EXPECT_EQ(Probe(ports_[0], "/healthz"), 200);
  EXPECT_EQ(ModernClient(ports_[0]).Call("append_ledger", {{"entry", "no-token"}}).status, 401);

  cluster_->Stop();
  std::string body;
  ASSERT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz", &body) == 503; }));
  EXPECT_EQ(Json::parse(body)["code"], "state.unavailable") << body;
  EXPECT_EQ(body.find(cluster_->Url()), std::string::npos);
  EXPECT_EQ(Probe(ports_[0], "/healthz"), 200) << "alive, though not ready";
  ASSERT_TRUE(cluster_->Start());
  EXPECT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz") == 200; }));
}

TEST_F(ReplicasTest, ModernRequestsReachEveryReplicaAndALegacySessionStaysOnItsOwn) {
  StartAll();
  StartHaproxy();
  for (int i = 1; i <= kReplicas; ++i) {
    EXPECT_TRUE(SeenThroughBalancer("replica" + std::to_string(i))) << "replica" << i << " never answered";
  }
  // A 2025-11-25 session: initialized on one replica, every later request answered there.
  testing::RawHttpPeer peer(front_);
  ASSERT_TRUE(peer.Initialize().contains("result"));
  ASSERT_FALSE(peer.session().empty());
  httplib::Client client("127.0.0.1", front_);
  std::set<std::string> answered_by;
  for (int n = 0; n < 9; ++n) {
    Json call = testing::Request(n + 10, "tools/call",
                                 {{"name", "append_ledger"}, {"arguments", {{"entry", "legacy-" + std::to_string(n)}}}});
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                                {"Mcp-Session-Id", peer.session()},
                                {"MCP-Protocol-Version", "2025-11-25"}};
    Answer answer = Parse(client.Post("/mcp", headers, call.dump(), "application/json"));
    EXPECT_TRUE(answer.succeeded()) << answer.status << " " << answer.message.dump();
    answered_by.insert(answer.replica);
  }
  EXPECT_EQ(answered_by.size(), 1u) << "the session's requests went to several replicas";
}

TEST_F(ReplicasTest, AnInvalidationOnOneReplicaRefusesTheNextCallOnEveryReplica) {
  // Replica 1's upstream announces a list change during render_turntable; the others' are
  // quiet, and their appends are slow enough to be in flight meanwhile.
  dir_.Write("changing.json",
             Json{{"mcpServers",
                   {{"demo",
                     {{"command", testing::DemoServerBinary()},
                      {"args",
                       {"--entries-file", dir_.File("entries.txt"), "--fault",
                        "list-changed-during-call=render_turntable"}}}}}}}
                 .dump());
  dir_.Write("slow.json", Json{{"mcpServers",
                                {{"demo",
                                  {{"command", testing::DemoServerBinary()},
                                   {"args", {"--entries-file", dir_.File("entries.txt"), "--ledger-delay-ms", "1500"}}}}}}}
                              .dump());
  replicas_.resize(kReplicas);
  StartReplica(0, dir_.File("changing.json"));
  StartReplica(1, dir_.File("slow.json"));
  StartReplica(2, dir_.File("slow.json"));
  for (int i = 0; i < kReplicas; ++i) ASSERT_EQ(ModernClient(ports_[i]).ListedTools().count("append_ledger"), 1u);
  std::vector<std::thread> in_flight;
  std::vector<Answer> slow(kReplicas * 2);
  for (int i = 0; i < kReplicas * 2; ++i) {
    in_flight.emplace_back([&, i] {
      slow[i] = ModernClient(ports_[i % kReplicas]).Call("append_ledger", {{"entry", "slow-" + std::to_string(i)}});
    });
  }
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 4; })) << "no call in flight";
  Answer invalidating = ModernClient(ports_[0]).Call(
      "render_turntable", {{"source", "https://assets.example.test/a.blend"}, {"angles", 4}, {"resolution", 1024}});
  EXPECT_EQ(invalidating.code(), "call.indeterminate") << invalidating.message.dump();
  for (auto& caller : in_flight) caller.join();

  // The other replicas hear of it (LISTEN/NOTIFY) and withdraw the server's tools without
  // a call of their own: their hosts see the catalog shrink.
  for (int i = 1; i < kReplicas; ++i) {
    ModernClient client(ports_[i]);
    EXPECT_TRUE(WaitFor([&] { return client.ListedTools().count("append_ledger") == 0; }))
        << "replica " << i << " still offers the invalidated server's tools";
  }
  const std::size_t dispatched = Lines(dir_.Read("entries.txt")).size();
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kReplicas; ++i) {
      Answer refused = ModernClient(ports_[i]).Call("append_ledger", {{"entry", "after-" + std::to_string(i)}});
      EXPECT_FALSE(refused.succeeded()) << "replica " << i << " dispatched after the invalidation";
      const std::string code = refused.code();
      EXPECT_TRUE(code == "manifest.invalidated" || code == "serve.tool_withdrawn")
          << "replica " << i << ": " << refused.message.dump();
    }
  }
  EXPECT_EQ(Lines(dir_.Read("entries.txt")).size(), dispatched) << "a refused call reached the upstream";
  for (int i = 0; i < kReplicas; ++i) EXPECT_TRUE(replicas_[i]->running()) << "no replica restarts";
}

TEST_F(ReplicasTest, AReplicaKilledUnderLoadLosesNoCallToTheOthersAndDispatchesNoneTwice) {
  StartAll();
  StartHaproxy();
  std::atomic<bool> stop{false};
  LoadFigures figures;
  std::thread load([&] { RunLoad(8, stop, figures, "kill"); });
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 40; }));
  const auto killed_at = Clock::now();
  kill(replicas_[1]->pid(), SIGKILL);
  // Load goes on on the others: at least 100 more dispatches after the kill.
  const std::size_t before = Lines(dir_.Read("entries.txt")).size();
  EXPECT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= before + 100; }));
  stop = true;
  load.join();
  const std::size_t duplicates = CheckDispatches(figures, "kill");
  EXPECT_EQ(duplicates, 0u);
  // Only the calls in flight on the killed replica may fail: at most one per caller.
  EXPECT_LE(figures.failures, 8u);
  const double recovered =
      figures.failures == 0 ? 0.0 : std::chrono::duration<double>(figures.last_failure - killed_at).count();
  std::printf("kill -9 under load: calls %zu, failures %zu, duplicates %zu, last failure %.3f s after the kill\n",
              figures.outcomes.size(), figures.failures, duplicates, recovered);
}

TEST_F(ReplicasTest, ARollingRestartUnderLoadLosesNoCall) {
  StartAll();
  StartHaproxy();
  std::atomic<bool> stop{false};
  LoadFigures figures;
  std::thread load([&] { RunLoad(8, stop, figures, "roll"); });
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 40; }));
  for (int i = 0; i < kReplicas; ++i) {
    const pid_t pid = replicas_[i]->pid();
    kill(pid, SIGTERM);
    ASSERT_TRUE(WaitFor([&] { return !replicas_[i]->running(); })) << replicas_[i]->Output();
    EXPECT_NE(replicas_[i]->Output().find("drained; exiting"), std::string::npos) << replicas_[i]->Output();
    StartReplica(i);
    EXPECT_TRUE(SeenThroughBalancer("replica" + std::to_string(i + 1)));
  }
  stop = true;
  load.join();
  EXPECT_EQ(CheckDispatches(figures, "roll"), 0u);
  EXPECT_EQ(figures.failures, 0u) << "a call was lost in the rolling restart: "
                                  << ::testing::PrintToString(figures.failed_as) << HaproxyErrors();
  std::printf("rolling restart under load: calls %zu, failures %zu\n", figures.outcomes.size(), figures.failures);
}

TEST(ReplicaPackagingTest, TheSystemdUnitVerifies) {
  if (testing::RunProcess({testing::OnPath("systemd-analyze"), "--version"}).exit_code != 0) {
    GTEST_SKIP() << "systemd-analyze not installed";
  }
  TempDir dir;
  std::ifstream in(testing::SourceDir() + "/packaging/systemd/udon-mcp-serve@.service");
  std::stringstream text;
  text << in.rdbuf();
  // The installed binary's path replaced by the build's, which exists here.
  dir.Write("udon-mcp-serve@8101.service", Replace(text.str(), "/usr/bin/udon-mcp", testing::UdonMcpBinary()));
  testing::ProcessResult verify =
      testing::RunProcess({testing::OnPath("systemd-analyze"), "verify", "--man=no", dir.File("udon-mcp-serve@8101.service")});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.err, "");
}

}  // namespace
}  // namespace udon
