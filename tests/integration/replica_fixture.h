// Several `serve` replicas on one PostgreSQL store behind HAProxy (issue 40): the fixture
// the replica and service tests share. The shipped packaging/haproxy/haproxy.cfg runs with
// only its addresses replaced; dispatches are counted at the upstream (every call sends a
// unique ledger entry, and each demo server appends the entries it receives to one file).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pg_cluster.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {

using ReplicaClock = std::chrono::steady_clock;

// One answer: the HTTP status (0: no answer at all), the JSON-RPC message, the replica.
struct ReplicaAnswer {
  int status = 0;
  nlohmann::json message;
  std::string replica;  // HAProxy's X-Served-By
  std::string www_authenticate;
  bool succeeded() const;
  std::string code() const;  // the refusal's contract code, if any
};

// An HTTP answer (JSON or an SSE stream) read as a ReplicaAnswer.
ReplicaAnswer ParseAnswer(const httplib::Result& result);

// A 2026-07-28 client: stateless requests, any replica may answer; with `token`, as a
// bearer (an OAuth access token).
class ModernClient {
 public:
  explicit ModernClient(int port, std::string token = {});
  ReplicaAnswer Call(const std::string& tool, const nlohmann::json& arguments);
  std::set<std::string> ListedTools();  // one page: the demo's catalog is small

 private:
  httplib::Headers Headers(const std::string& method, const std::string& tool) const;
  httplib::Client client_;
  std::string token_;
  int id_ = 0;
};

int Probe(int port, const std::string& path, std::string* body = nullptr);
bool WaitFor(const std::function<bool()>& done, std::chrono::seconds bound = std::chrono::seconds(30));
std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to);
std::vector<std::string> Lines(const std::string& text);

// What a load run saw: per entry sent, whether its caller had a success.
struct LoadFigures {
  std::map<std::string, bool> outcomes;  // entry -> succeeded
  std::size_t failures = 0;
  std::map<std::string, int> failed_as;  // "HTTP status code" -> how many, to say why
  ReplicaClock::time_point last_failure{};
};

class ReplicaFixture : public ::testing::Test {
 protected:
  static constexpr int kReplicas = 3;
  static void SetUpTestSuite();
  void SetUp() override;
  void TearDown() override;

  // What a replica runs with besides the common arguments: here no token; a subclass
  // gives its identity, metrics and trace options.
  virtual std::vector<std::string> ReplicaOptions(int i) const;
  // Replica i's argv with upstream configuration `config` (mcp.json).
  std::vector<std::string> ReplicaArgv(int i, const std::string& config) const;
  // Replica i (0-based), ready: its /readyz answers 200. Remembers `config` for restarts.
  void StartReplica(int i, const std::string& config = {});
  void StartAll();
  // HAProxy with the shipped configuration on front_, the answering replica named in a
  // response header (for the tests only).
  void StartHaproxy();
  std::string HaproxyErrors() const;  // its log lines of answers that were not 200
  // Whether a call through HAProxy is answered by replica `name` within the bound.
  bool SeenThroughBalancer(const std::string& name);
  // `threads` callers through HAProxy, each sending unique entries until `stop`.
  void RunLoad(int threads, std::atomic<bool>& stop, LoadFigures& figures, const std::string& tag);
  // Every entry dispatched at most once; every success dispatched. Returns the duplicates.
  std::size_t CheckDispatches(const LoadFigures& figures, const std::string& tag);
  // SIGTERM to each replica in turn, restarted once drained and seen through HAProxy again.
  void RestartEachInTurn();

  TempDir dir_;
  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<ReviewedDemo> demo_;
  std::vector<int> ports_;
  std::vector<std::string> configs_;
  std::vector<std::unique_ptr<BackgroundProcess>> replicas_;
  std::unique_ptr<BackgroundProcess> haproxy_;
  int front_ = 0;
  std::string token_;  // the callers' bearer token, if any
};

}  // namespace udon::testing
