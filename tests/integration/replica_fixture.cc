#include "replica_fixture.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "demo_http.h"
#include "line_client.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

Json ModernCall(int id, const std::string& tool, Json arguments) {
  Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", Json::object()},
               {"io.modelcontextprotocol/clientInfo", {{"name", "replicas-test"}, {"version", "1"}}}};
  return Request(id, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}, {"_meta", meta}});
}

}  // namespace

ReplicaAnswer ParseAnswer(const httplib::Result& result) {
  ReplicaAnswer answer;
  if (!result) return answer;
  answer.status = result->status;
  answer.replica = result->get_header_value("X-Served-By");
  answer.www_authenticate = result->get_header_value("WWW-Authenticate");
  std::vector<Json> messages;
  if (result->get_header_value("Content-Type").find("text/event-stream") != std::string::npos) {
    messages = SseMessages(result->body);
  } else if (auto parsed = Json::parse(result->body, nullptr, false); !parsed.is_discarded()) {
    messages.push_back(parsed);
  }
  for (const Json& message : messages) {
    if (message.contains("result") || message.contains("error")) answer.message = message;
  }
  return answer;
}

bool ReplicaAnswer::succeeded() const {
  return status == 200 && message.contains("result") && !message["result"].value("isError", false);
}

std::string ReplicaAnswer::code() const {
  if (!message.contains("result")) return {};
  return message["result"].value("_meta", Json::object()).value("code", std::string());
}

ModernClient::ModernClient(int port, std::string token) : client_("127.0.0.1", port), token_(std::move(token)) {
  client_.set_read_timeout(std::chrono::seconds(60));
  client_.set_connection_timeout(std::chrono::seconds(5));
}

httplib::Headers ModernClient::Headers(const std::string& method, const std::string& tool) const {
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                              {"MCP-Protocol-Version", "2026-07-28"},
                              {"Mcp-Method", method}};
  if (!tool.empty()) headers.emplace("Mcp-Name", tool);
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  return headers;
}

ReplicaAnswer ModernClient::Call(const std::string& tool, const Json& arguments) {
  const int id = ++id_;
  return ParseAnswer(client_.Post("/mcp", Headers("tools/call", tool), ModernCall(id, tool, arguments).dump(),
                            "application/json"));
}

std::set<std::string> ModernClient::ListedTools() {
  const int id = ++id_;
  Json request = ModernCall(id, "", Json::object());
  request["method"] = "tools/list";
  request["params"].erase("name");
  request["params"].erase("arguments");
  ReplicaAnswer answer = ParseAnswer(client_.Post("/mcp", Headers("tools/list", ""), request.dump(), "application/json"));
  std::set<std::string> names;
  for (const Json& tool : answer.message.value("result", Json::object()).value("tools", Json::array())) {
    names.insert(tool.value("name", std::string()));
  }
  return names;
}

int Probe(int port, const std::string& path, std::string* body) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::seconds(2));
  auto result = client.Get(path);
  if (!result) return 0;
  if (body != nullptr) *body = result->body;
  return result->status;
}

bool WaitFor(const std::function<bool()>& done, std::chrono::seconds bound) {
  const auto deadline = ReplicaClock::now() + bound;
  while (ReplicaClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
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

void ReplicaFixture::SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

void ReplicaFixture::SetUp() {
  UDON_REQUIRE_POSTGRES();
  if (RunProcess({OnPath("haproxy"), "-v"}).exit_code != 0) {
    if (std::getenv("CI") != nullptr) FAIL() << "haproxy missing: run scripts/install-deps.sh";
    GTEST_SKIP() << "haproxy not installed";
  }
  cluster_ = std::make_unique<PgCluster>();
  ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
  demo_ = std::make_unique<ReviewedDemo>(
      dir_, std::vector<std::string>{"--entries-file", dir_.File("entries.txt"), "--ledger-delay-ms", "100"});
  ASSERT_TRUE(demo_->ok()) << demo_->failure;
  for (int i = 0; i < kReplicas; ++i) ports_.push_back(FreeLoopbackPort());
  configs_.assign(kReplicas, demo_->config);
  replicas_.resize(kReplicas);
  front_ = FreeLoopbackPort();
}

void ReplicaFixture::TearDown() {
  haproxy_.reset();
  replicas_.clear();
  cluster_.reset();
}

std::vector<std::string> ReplicaFixture::ReplicaOptions(int) const { return {"--no-token"}; }

std::vector<std::string> ReplicaFixture::ReplicaArgv(int i, const std::string& config) const {
  std::vector<std::string> argv = {UdonMcpBinary(), "serve", "--manifest", demo_->manifest, "--sha256", demo_->sha256,
                                   "--config", config, "--state-dir", dir_.File("state-" + std::to_string(i)), "--state",
                                   cluster_->Url(), "--transport", "http", "--listen",
                                   "127.0.0.1:" + std::to_string(ports_[i]), "--drain-seconds", "20"};
  for (std::string& option : ReplicaOptions(i)) argv.push_back(std::move(option));
  return argv;
}

void ReplicaFixture::StartReplica(int i, const std::string& config) {
  if (!config.empty()) configs_[i] = config;
  replicas_[i] = std::make_unique<BackgroundProcess>(ReplicaArgv(i, configs_[i]));
  ASSERT_TRUE(WaitFor([&] { return Probe(ports_[i], "/readyz") == 200; })) << replicas_[i]->Output();
}

void ReplicaFixture::StartAll() {
  for (int i = 0; i < kReplicas; ++i) StartReplica(i);
}

void ReplicaFixture::StartHaproxy() {
  std::ifstream in(SourceDir() + "/packaging/haproxy/haproxy.cfg");
  std::stringstream text;
  text << in.rdbuf();
  std::string config = text.str();
  ASSERT_NE(config.find("127.0.0.1:8080"), std::string::npos);
  config = ReplaceFirst(config, "127.0.0.1:8080", "127.0.0.1:" + std::to_string(front_));
  for (int i = 0; i < kReplicas; ++i) {
    config = ReplaceFirst(config, "127.0.0.1:810" + std::to_string(i + 1), "127.0.0.1:" + std::to_string(ports_[i]));
  }
  config = ReplaceFirst(config, "    maxconn 4096\n", "    maxconn 4096\n    log stderr format raw local0\n");
  config = ReplaceFirst(config, "    mode http\n", "    mode http\n    log global\n    option httplog\n");
  config = ReplaceFirst(config, "    balance roundrobin\n",
                        "    balance roundrobin\n    http-response set-header X-Served-By %[srv_name]\n");
  dir_.Write("haproxy.cfg", config);
  haproxy_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{OnPath("haproxy"), "-db", "-f", dir_.File("haproxy.cfg")});
  ASSERT_TRUE(WaitForPort(front_)) << haproxy_->Output();
}

std::string ReplicaFixture::HaproxyErrors() const {
  std::string lines;
  for (const std::string& line : Lines(haproxy_->Output())) {
    if (line.find(" 200 ") == std::string::npos) lines += "\n" + line;
  }
  return lines;
}

bool ReplicaFixture::SeenThroughBalancer(const std::string& name) {
  ModernClient client(front_, token_);
  int n = 0;
  return WaitFor([&] {
    return client.Call("append_ledger", {{"entry", "probe-" + name + "-" + std::to_string(++n)}}).replica == name;
  });
}

void ReplicaFixture::RunLoad(int threads, std::atomic<bool>& stop, LoadFigures& figures, const std::string& tag) {
  std::mutex mutex;
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t) {
    callers.emplace_back([&, t] {
      ModernClient client(front_, token_);
      for (int n = 0; !stop; ++n) {
        const std::string entry = tag + "-" + std::to_string(t) + "-" + std::to_string(n);
        const ReplicaAnswer answer = client.Call("append_ledger", {{"entry", entry}});
        const bool ok = answer.succeeded();
        std::lock_guard lock(mutex);
        figures.outcomes[entry] = ok;
        if (!ok) {
          ++figures.failures;
          ++figures.failed_as[std::to_string(answer.status) + " " + answer.code() + answer.message.dump()];
          figures.last_failure = ReplicaClock::now();
        }
      }
    });
  }
  for (auto& caller : callers) caller.join();
}

std::size_t ReplicaFixture::CheckDispatches(const LoadFigures& figures, const std::string& tag) {
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

void ReplicaFixture::RestartEachInTurn() {
  for (int i = 0; i < kReplicas; ++i) {
    kill(replicas_[i]->pid(), SIGTERM);
    ASSERT_TRUE(WaitFor([&] { return !replicas_[i]->running(); })) << replicas_[i]->Output();
    EXPECT_NE(replicas_[i]->Output().find("drained; exiting"), std::string::npos) << replicas_[i]->Output();
    StartReplica(i);
    EXPECT_TRUE(SeenThroughBalancer("replica" + std::to_string(i + 1)));
  }
}

}  // namespace udon::testing
