// The shared state store across processes (issue 19): runners (separate udon-mcp
// processes, each with its own state directory) that share only --state, on the file
// store and on a throwaway PostgreSQL cluster alike; then what only PostgreSQL does:
// four runners never overlapping a serialized tool, and a SIGKILLed holder's lock taken
// over by another runner.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "demo_http.h"
#include "fake_postgres.h"
#include "pg_cluster.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

const char* kPassword = "CANARY-pg-secret-5e1d";
const char* kLedgerArgs = R"({"entry":"x"})";

// The demo server over HTTP (serverInfo and tools as over stdio), with its request log.
std::string HttpUrl(const testing::HttpDemoServer& server) {
  return server.port() > 0 ? server.url() : std::string();
}

class SharedStateTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    if (postgres()) {
      UDON_REQUIRE_POSTGRES();
      cluster_ = std::make_unique<testing::PgCluster>();
      ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
      store_ = cluster_->Url();
    } else {
      store_ = dir_.File("shared-state");
    }
    UseServer("mcp.json", {});
    ASSERT_EQ(Udon("a", {"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
    Review("render_turntable", {"--no-side-effects", "--concurrency", "safe", "--channel", "/source=data",
                                "--channel", "/angles=data", "--channel", "/resolution=data"});
    Review("append_ledger", {"--side-effect", "appends_ledger_entry", "--concurrency", "serialize", "--channel",
                             "/entry=data"});
    ProcessResult digest = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")});
    sha_ = digest.out.substr(0, 64);
  }

  void TearDown() override {
    cluster_.reset();
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  bool postgres() const { return GetParam() == "postgres"; }

  // The stdio demo server as server "demo" in config `file`, with these extra arguments.
  void UseServer(const std::string& file, std::vector<std::string> extra) {
    std::vector<std::string> args = {"--log-requests", dir_.File("requests.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    json::Value config = {{"mcpServers", {{"demo", {{"command", testing::DemoServerBinary()}, {"args", args}}}}}};
    dir_.Write(file, config.dump());
  }
  void UseUrl(const std::string& file, const std::string& url) {
    dir_.Write(file, json::Value({{"mcpServers", {{"demo", {{"url", url}}}}}}).dump());
  }

  // udon-mcp as runner `runner`: its own state directory, nothing else of the others'.
  ProcessResult Udon(const std::string& runner, std::vector<std::string> args,
                     std::map<std::string, std::string> env = {}, const std::string& config = "mcp.json") {
    args.insert(args.begin(), testing::UdonMcpBinary());
    args.insert(args.end(), {"--config", dir_.File(config), "--state-dir", dir_.File("state-" + runner)});
    testing::RunOptions options;
    options.env = std::move(env);
    // libpq's variables too: where a store is and how it is verified comes from its URI.
    options.unset_env = {"UDON_MCP_STATE", "UDON_MCP_STATE_DIR", "PGHOST", "PGHOSTADDR", "PGSERVICE", "PGSSLMODE",
                         "PGSSLROOTCERT", "PGPASSWORD"};
    ProcessResult result = testing::RunProcess(args, options);
    EXPECT_EQ(result.out.find(kPassword), std::string::npos);
    EXPECT_EQ(result.err.find(kPassword), std::string::npos);
    return result;
  }

  ProcessResult Gate(const std::string& runner, const char* command, const std::string& tool,
                     std::vector<std::string> extra = {}, const std::string& config = "mcp.json") {
    std::vector<std::string> args = {command, "--manifest", dir_.File("tools.json"), "--sha256", sha_, "--server",
                                     "demo", "--tool", tool, "--json"};
    if (std::string(command) == "call") {
      args.insert(args.end(), {"--args", tool == "append_ledger" ? kLedgerArgs
                                                                 : R"({"source":"https://assets.example.test/a.blend","angles":4,"resolution":1024})"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return Udon(runner, args, {}, config);
  }

  void Review(const std::string& tool, std::vector<std::string> extra) {
    std::vector<std::string> args = {"review", dir_.File("tools.json"), "--server", "demo", "--tool", tool,
                                     "--reviewer", "t@example.test", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--reference-based-io"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(Udon("a", args).exit_code, 0);
  }

  static json::Value Json(const ProcessResult& result) {
    auto parsed = json::Parse(result.out);
    EXPECT_TRUE(parsed.ok()) << result.out << result.err;
    return parsed.ok() ? *parsed : json::Value();
  }

  bool CallLogged() { return dir_.Read("requests.jsonl").find("\"tools/call\"") != std::string::npos; }
  void WaitForCall() {
    for (int i = 0; i < 600 && !CallLogged(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(CallLogged()) << "the call never reached the server";
  }

  TempDir dir_;
  std::unique_ptr<testing::PgCluster> cluster_;
  std::string store_;
  std::string sha_;
};

TEST_P(SharedStateTest, AnInvalidationRecordedByOneRunnerRefusesEveryOtherOne) {
  UseServer("changing.json", {"--fault", "list-changed-during-call=render_turntable"});
  ProcessResult during = Gate("a", "call", "render_turntable", {"--state", store_}, "changing.json");
  EXPECT_EQ(during.exit_code, 5) << during.out << during.err;
  EXPECT_EQ(Json(during)["code"], "call.indeterminate");

  // Another runner, another state directory, the store named three ways.
  ProcessResult flag = Gate("b", "verify", "render_turntable", {"--state", store_});
  EXPECT_EQ(flag.exit_code, 3) << flag.out << flag.err;
  EXPECT_EQ(Json(flag)["code"], "manifest.invalidated");
  ProcessResult env = Udon("c", {"verify", "--manifest", dir_.File("tools.json"), "--sha256", sha_, "--server", "demo",
                                 "--tool", "render_turntable", "--json"},
                           {{"UDON_MCP_STATE", store_}});
  EXPECT_EQ(env.exit_code, 3) << env.out << env.err;
  dir_.Write("policy.json", json::Value({{"state", store_}}).dump());
  ProcessResult policy = Gate("d", "verify", "render_turntable", {"--policy", dir_.File("policy.json")});
  EXPECT_EQ(policy.exit_code, 3) << policy.out << policy.err;
  // Without the shared store a runner knows nothing of it.
  EXPECT_EQ(Gate("e", "verify", "render_turntable").exit_code, 0);
}

TEST_P(SharedStateTest, AStoreDownBeforeDispatchRefusesWithNothingSent) {
  std::string store = store_;
  if (postgres()) {
    store = cluster_->UrlWithPassword(kPassword);
    cluster_->Stop();
  } else {
    std::filesystem::create_directories(dir_.File("shared-state"));
    dir_.Write("shared-state/invalidated", "");  // a file where the records' directory belongs
  }
  dir_.Write("requests.jsonl", "");
  for (const char* command : {"verify", "call"}) {
    ProcessResult refused = Gate("a", command, "append_ledger", {"--state", store});
    EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
    EXPECT_EQ(Json(refused)["code"], "state.unavailable");
  }
  ProcessResult people = Udon("a", {"call", "--manifest", dir_.File("tools.json"), "--sha256", sha_, "--server",
                                    "demo", "--tool", "append_ledger", "--args", kLedgerArgs, "--state", store});
  EXPECT_EQ(people.exit_code, 3);
  EXPECT_FALSE(CallLogged()) << "a tools/call was sent";
}

TEST_P(SharedStateTest, AStoreDownAfterDispatchIsIndeterminate) {
  UseServer("changing.json", {"--fault", "list-changed-during-call=append_ledger", "--ledger-delay-ms", "1500"});
  ProcessResult result;
  std::thread runner([&] { result = Gate("a", "call", "append_ledger", {"--state", store_}, "changing.json"); });
  WaitForCall();
  if (postgres()) {
    cluster_->Stop();
  } else {
    std::filesystem::remove_all(dir_.File("shared-state/invalidated"));
    dir_.Write("shared-state/invalidated", "");
  }
  runner.join();
  EXPECT_EQ(result.exit_code, 5) << result.out << result.err;
  json::Value out = Json(result);
  EXPECT_EQ(out["code"], "call.indeterminate");
  EXPECT_EQ(out["details"]["stateWriteFailed"], "state.write_failed");
}

INSTANTIATE_TEST_SUITE_P(Stores, SharedStateTest, ::testing::Values("file", "postgres"));

// PostgreSQL only from here: sessions, advisory locks, many machines.
class PostgresRunnersTest : public SharedStateTest {};

TEST_P(PostgresRunnersTest, ALockLostDuringTheCallMakesItIndeterminate) {
  UseServer("slow.json", {"--ledger-delay-ms", "1500"});
  ProcessResult result;
  std::thread runner([&] { result = Gate("a", "call", "append_ledger", {"--state", store_}, "slow.json"); });
  WaitForCall();
  cluster_->Psql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'");
  runner.join();
  EXPECT_EQ(result.exit_code, 5) << result.out << result.err;
  EXPECT_EQ(Json(result)["code"], "call.indeterminate");
  EXPECT_EQ(Json(result)["details"]["cause"], "state.unavailable");
}

// Four runners (separate processes, their own state directories and configuration files,
// only the database shared) call one serialized tool of one HTTP server, whose ledger
// says whether two calls ever met inside it. Each call stays 20 ms inside the ledger, about
// a fifth of a runner's cycle (a process start, the gate, the call), so without the shared
// lock about every second call meets another one: 50 calls a runner leave no chance of
// missing it (checked by giving each runner a store of its own: over a hundred overlaps).
TEST_P(PostgresRunnersTest, FourRunnersNeverRunASerializedToolTwiceAtOnce) {
  int calls = 50;
  if (const char* n = std::getenv("UDON_PG_RUNNER_CALLS")) calls = std::atoi(n);
  testing::HttpDemoServer server({"--log-requests", dir_.File("http-requests.jsonl"), "--ledger-delay-ms", "20"});
  ASSERT_FALSE(HttpUrl(server).empty()) << "the server did not report its port";
  std::atomic<int> ok{0}, overlapped{0}, failed{0};
  std::vector<std::thread> runners;
  for (int r = 0; r < 4; ++r) {
    const std::string name = "runner" + std::to_string(r);
    UseUrl(name + ".json", HttpUrl(server));
    runners.emplace_back([&, name] {
      for (int i = 0; i < calls; ++i) {
        ProcessResult result = Gate(name, "call", "append_ledger", {"--state", store_, "--expect-output"},
                                    name + ".json");
        auto out = json::Parse(result.out);
        if (result.exit_code != 0 || !out.ok()) {
          ++failed;
          continue;
        }
        ++ok;
        if ((*out)["structuredContent"]["overlapped"] == true) ++overlapped;
      }
    });
  }
  for (auto& t : runners) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), 4 * calls);
  EXPECT_EQ(overlapped.load(), 0);
}

// A runner killed while it holds the lock: its session ends with it, and another runner
// takes the lock within the documented bound (docs/contract.md 7.14: at once on a live
// machine; at most the keepalive bound, 25 s, when the machine itself is gone).
TEST_P(PostgresRunnersTest, ARunnerKilledHoldingTheLockReleasesIt) {
  testing::HttpDemoServer stuck({"--log-requests", dir_.File("requests.jsonl"), "--ledger-delay-ms", "60000"});
  testing::HttpDemoServer quick({"--log-requests", dir_.File("quick-requests.jsonl"), "--ledger-delay-ms", "1"});
  ASSERT_FALSE(HttpUrl(stuck).empty());
  ASSERT_FALSE(HttpUrl(quick).empty());
  UseUrl("stuck.json", HttpUrl(stuck));
  UseUrl("quick.json", HttpUrl(quick));
  dir_.Write("short.json", R"({"serializeTimeoutSeconds": 1})");
  dir_.Write("bound.json", R"({"serializeTimeoutSeconds": 25})");

  testing::BackgroundProcess holder({testing::UdonMcpBinary(), "call", "--manifest", dir_.File("tools.json"),
                                     "--sha256", sha_, "--server", "demo", "--tool", "append_ledger", "--args",
                                     kLedgerArgs, "--state", store_, "--config", dir_.File("stuck.json"),
                                     "--state-dir", dir_.File("state-holder")});
  WaitForCall();
  // While it lives, another runner waits and gives up: the lock is shared.
  ProcessResult blocked = Gate("b", "call", "append_ledger", {"--state", store_, "--policy", dir_.File("short.json")},
                               "quick.json");
  EXPECT_EQ(blocked.exit_code, 3) << blocked.out << blocked.err;
  EXPECT_EQ(Json(blocked)["code"], "state.lock_timeout");

  kill(holder.pid(), SIGKILL);
  ProcessResult taken = Gate("b", "call", "append_ledger", {"--state", store_, "--policy", dir_.File("bound.json")},
                             "quick.json");
  EXPECT_EQ(taken.exit_code, 0) << taken.out << taken.err;
  holder.Stop();
}

// Many runners, one report: evidence appended to the database's table, summarized from it.
TEST_P(PostgresRunnersTest, RunnersAppendEvidenceToOneTableThatSummarizeReads) {
  const std::string url = cluster_->UrlWithPassword(kPassword);
  EXPECT_EQ(Gate("a", "call", "render_turntable", {"--evidence", url}).exit_code, 0);
  EXPECT_EQ(Gate("b", "verify", "render_turntable", {"--evidence", url}).exit_code, 0);
  ProcessResult summary = testing::RunProcess({testing::UdonMcpBinary(), "evidence", "summarize", url, "--json"});
  ASSERT_EQ(summary.exit_code, 0) << summary.out << summary.err;
  EXPECT_EQ(summary.out.find(kPassword), std::string::npos);
  EXPECT_EQ(Json(summary)["summary"]["records"], 2);
  // The table holds the file's value-free line, never the arguments.
  ProcessResult rows = cluster_->Psql("SELECT record FROM udon_mcp_evidence ORDER BY id");
  EXPECT_NE(rows.out.find("\"command\":\"call\""), std::string::npos) << rows.out;
  EXPECT_EQ(rows.out.find("assets.example.test"), std::string::npos);
}

// Issue 29: a password libpq reads from the URI, however it is spelled, never reaches the
// output of an unreachable store (details.store shows what libpq parsed, password ***).
TEST_P(PostgresRunnersTest, AnUnreachableStoreNeverShowsAPasswordHoldingReservedCharacters) {
  const std::string url = cluster_->Url();
  const std::string query = url.substr(url.find('?'));
  cluster_->Stop();
  for (const char* password : {"Sec?ret-pw", "p@ss", "p#ss", "p/ss", "p%40ss"}) {
    // libpq reads '?' and '#' as they are; '@', '/' and '%' must be percent-encoded.
    std::string spelled;
    for (const char c : std::string(password)) {
      spelled += c == '@' ? "%40" : c == '/' ? "%2F" : c == '%' ? "%25" : std::string(1, c);
    }
    ProcessResult refused = Gate("a", "verify", "render_turntable",
                                 {"--state", "postgresql://udon:" + spelled + "@/postgres" + query});
    EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
    EXPECT_EQ(Json(refused)["code"], "state.unavailable");
    EXPECT_NE(refused.out.find("password=***"), std::string::npos) << refused.out;
    for (const std::string& secret : {std::string(password), spelled}) {
      EXPECT_EQ(refused.out.find(secret), std::string::npos) << refused.out;
      EXPECT_EQ(refused.err.find(secret), std::string::npos) << refused.err;
    }
  }
}

// Issue 29: an impostor at the store's address declines TLS and asks for the password in
// the clear. The store is named db.example.test (not local: verify-full by default) and
// reached at hostaddr=127.0.0.1, where the impostor listens. The real database has
// invalidated the manifest; the impostor would say it has not.
TEST_P(PostgresRunnersTest, AnImpostorThatDeclinesTlsGetsNoPasswordAndTheCallIsRefused) {
  UseServer("changing.json", {"--fault", "list-changed-during-call=render_turntable"});
  ASSERT_EQ(Gate("a", "call", "render_turntable", {"--state", store_}, "changing.json").exit_code, 5);
  ASSERT_EQ(Gate("a", "verify", "render_turntable", {"--state", store_}).exit_code, 3) << "the real store refuses";

  testing::FakePostgres impostor;
  ASSERT_GT(impostor.port(), 0);
  const std::string url =
      "postgresql://udon@db.example.test:" + std::to_string(impostor.port()) + "/postgres?hostaddr=127.0.0.1";
  dir_.Write("requests.jsonl", "");
  ProcessResult refused = Udon("b",
                               {"call", "--manifest", dir_.File("tools.json"), "--sha256", sha_, "--server", "demo",
                                "--tool", "render_turntable", "--json", "--args",
                                R"({"source":"https://assets.example.test/a.blend","angles":4,"resolution":1024})",
                                "--state", url},
                               {{"PGPASSWORD", kPassword}, {"HOME", dir_.path()}});
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_EQ(Json(refused)["code"], "state.unavailable");
  EXPECT_EQ(Json(refused)["details"]["sslmode"], "verify-full");
  EXPECT_GE(impostor.tls_requests(), 1) << "the client asked for TLS";
  EXPECT_TRUE(impostor.passwords().empty()) << "the impostor received the password";
  EXPECT_EQ(impostor.sessions(), 0);
  EXPECT_FALSE(CallLogged()) << "a tools/call was sent";
}

// Issue 38: connect_timeout=0 (libpq: wait forever) to a database that accepts and never
// answers: the call's --timeout still ends the attempt, and the gate refuses.
TEST_P(PostgresRunnersTest, ConnectTimeoutZeroStillEndsWithinTheCallsTimeout) {
  int port = 0;
  const int silent = testing::ListenOnLoopback(port);
  ASSERT_GE(silent, 0);
  ProcessResult refused = Gate("a", "verify", "render_turntable",
                               {"--timeout", "1", "--state",
                                "postgresql://udon@127.0.0.1:" + std::to_string(port) + "/udon?connect_timeout=0"});
  close(silent);
  EXPECT_FALSE(refused.timed_out) << "the call waited for the database";
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_EQ(Json(refused)["code"], "state.unavailable");
}

INSTANTIATE_TEST_SUITE_P(Stores, PostgresRunnersTest, ::testing::Values("postgres"));

// Issue 29, through the command line: a store with ssl=on on 127.0.0.1 whose certificate a
// throwaway CA issued for db.example.test.
class PostgresTlsRunnersTest : public SharedStateTest {
 protected:
  void SetUp() override {
    SharedStateTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string failure;
    auto made = testing::MakeTestCertificates(dir_.File("ca"), "db.example.test", failure);
    ASSERT_TRUE(made) << failure;
    ca_ = made->ca_cert;
    tls_cluster_ = std::make_unique<testing::PgCluster>(made->server);
    ASSERT_TRUE(tls_cluster_->ok()) << tls_cluster_->failure();
  }
  void TearDown() override {
    tls_cluster_.reset();
    SharedStateTest::TearDown();
  }
  std::string Url(const std::string& query) const {
    return "postgresql://udon@db.example.test:" + std::to_string(tls_cluster_->port()) +
           "/postgres?hostaddr=127.0.0.1" + query;
  }
  // A gated call of the serialized tool: one session (the invalidation reads and the lock).
  ProcessResult Call(const std::string& url) {
    return Udon("a",
                {"call", "--manifest", dir_.File("tools.json"), "--sha256", sha_, "--server", "demo", "--tool",
                 "append_ledger", "--args", kLedgerArgs, "--json", "--state", url, "--evidence",
                 dir_.File("evidence.jsonl")},
                {{"PGPASSWORD", kPassword}, {"HOME", dir_.path()}});
  }

  std::string ca_;
  std::unique_ptr<testing::PgCluster> tls_cluster_;
};

TEST_P(PostgresTlsRunnersTest, TheDefaultVerifiesTheServersCertificateAndName) {
  // No CA anywhere ($HOME/.postgresql/root.crt included): verify-full cannot verify.
  ProcessResult unverified = Call(Url(""));
  EXPECT_EQ(unverified.exit_code, 3) << unverified.out << unverified.err;
  EXPECT_EQ(Json(unverified)["code"], "state.unavailable");
  EXPECT_EQ(Json(unverified)["details"]["sslmode"], "verify-full");
  ProcessResult verified = Call(Url("&sslrootcert=" + ca_));
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_EQ(verified.err.find("warning"), std::string::npos) << verified.err;
  EXPECT_EQ(dir_.Read("evidence.jsonl").find("storeTls"), std::string::npos);
}

TEST_P(PostgresTlsRunnersTest, AnExplicitWeakerSslmodeIsHonouredWithOneWarningAndEvidence) {
  ProcessResult weak = Call(Url("&sslmode=require"));
  EXPECT_EQ(weak.exit_code, 0) << weak.out << weak.err;
  const std::string warning = "sslmode=require";
  const std::size_t first = weak.err.find(warning);
  EXPECT_NE(first, std::string::npos) << weak.err;
  EXPECT_EQ(weak.err.find(warning, first + 1), std::string::npos) << "one warning per process: " << weak.err;
  auto record = json::Parse(dir_.Read("evidence.jsonl"));
  ASSERT_TRUE(record.ok()) << dir_.Read("evidence.jsonl");
  EXPECT_EQ((*record)["storeTls"], "require");
}

INSTANTIATE_TEST_SUITE_P(Stores, PostgresTlsRunnersTest, ::testing::Values("postgres"));

}  // namespace
}  // namespace udon
