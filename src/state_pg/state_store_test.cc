// One contract suite for both state stores (issue 19): the state directory and PostgreSQL
// behave alike behind gate::StateStore. Process-level behaviour (runners, dispatch, SIGKILL)
// is in tests/integration/shared_state_test.cc.
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pg_cluster.h"
#include "state_pg/open.h"
#include "state_pg/pg_store.h"
#include "test_support.h"

namespace udon::state_pg {
namespace {

const std::string kDigestA(64, 'a');
const std::string kDigestB(64, 'b');

class StateStoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void TearDownTestSuite() { cluster_.reset(); }

  void SetUp() override {
    if (GetParam() == "postgres") {
      UDON_REQUIRE_POSTGRES();
      if (!cluster_) cluster_ = std::make_unique<testing::PgCluster>();
      ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
      // Each test starts from an empty database.
      cluster_->Psql("DROP TABLE IF EXISTS udon_mcp_invalidations, udon_mcp_evidence, udon_mcp_schema_version");
      location_ = cluster_->Url();
    } else {
      location_ = dir_.File("state");
    }
  }

  std::shared_ptr<gate::StateStore> Open() {
    auto store = OpenStateStore(location_);
    EXPECT_TRUE(store.ok());
    return *store;
  }

  static std::unique_ptr<testing::PgCluster> cluster_;
  testing::TempDir dir_;
  std::string location_;
};

std::unique_ptr<testing::PgCluster> StateStoreContractTest::cluster_;

TEST_P(StateStoreContractTest, AnInvalidationOutlivesTheStoreThatRecordedIt) {
  ASSERT_TRUE(Open()->Record(kDigestA, "demo", "list_changed_during_call", 1000).ok());
  auto other = Open();  // a new connection / a new reader, as a later process has
  EXPECT_TRUE(*other->IsInvalidated(kDigestA, "demo", 2000));
  EXPECT_FALSE(*other->IsInvalidated(kDigestA, "other", 500));
}

TEST_P(StateStoreContractTest, AServerRecordAlsoRefusesManifestsCapturedBeforeIt) {
  auto store = Open();
  ASSERT_TRUE(store->Record(kDigestA, "demo", "list_changed_before_dispatch", 1000).ok());
  EXPECT_TRUE(*store->IsInvalidated(kDigestB, "demo", 999)) << "captured before the record";
  EXPECT_TRUE(*store->IsInvalidated(kDigestB, "demo", 1000)) << "captured at the record";
  EXPECT_FALSE(*store->IsInvalidated(kDigestB, "demo", 1001)) << "captured after: revived";
}

TEST_P(StateStoreContractTest, ConcurrentRecordersAreAllDurable) {
  std::vector<std::thread> recorders;
  std::atomic<int> failed{0};
  for (int i = 0; i < 8; ++i) {
    recorders.emplace_back([&, i] {
      auto store = Open();
      const std::string server = "server" + std::to_string(i);
      for (int k = 0; k < 5; ++k) {
        if (!store->Record(kDigestA, server, "list_changed_during_call", 1000 + k).ok()) ++failed;
      }
    });
  }
  for (auto& t : recorders) t.join();
  EXPECT_EQ(failed.load(), 0);
  auto reader = Open();
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(*reader->IsInvalidated(kDigestA, "server" + std::to_string(i), 5000));
    EXPECT_TRUE(*reader->IsInvalidated(kDigestB, "server" + std::to_string(i), 1004)) << "the last record counts";
  }
}

TEST_P(StateStoreContractTest, ASerializeLockExcludesOthersUntilReleased) {
  auto first = Open();
  auto second = Open();
  auto held = first->AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(held.ok()) << held.error().Describe();
  auto waiting = second->AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.error().code, "state.lock_timeout");
  EXPECT_TRUE(second->AcquireSerializeLock("demo\nother_tool", std::chrono::milliseconds(100)).ok())
      << "another scope is another lock";
  EXPECT_TRUE((*held)->StillHeld().ok());
  held->reset();
  EXPECT_TRUE(second->AcquireSerializeLock("demo", std::chrono::milliseconds(1000)).ok());
}

TEST_P(StateStoreContractTest, ConcurrentHoldersNeverOverlap) {
  std::atomic<int> inside{0}, most{0}, taken{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 6; ++i) {
    callers.emplace_back([&] {
      auto store = Open();
      for (int k = 0; k < 10; ++k) {
        auto lock = store->AcquireSerializeLock("demo", std::chrono::seconds(30));
        if (!lock.ok()) continue;
        ++taken;
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --inside;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(taken.load(), 60);
  EXPECT_EQ(most.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Stores, StateStoreContractTest, ::testing::Values("file", "postgres"));

// Issue 38: libpq's key=value form names a database, not a directory. Taken as a path, a
// call would consult an empty local store that holds none of the shared invalidations, and
// pass; an evidence "file" of that name would keep the records from the database.
TEST(OpenStateStoreTest, ALibpqKeyValueStringIsRefusedNotTakenAsAPath) {
  testing::TempDir dir;
  for (const std::string conninfo : {"host=db.example.test port=5432 dbname=state", "dbname=state",
                                     "service=udon password=CANARY-kv-secret"}) {
    auto store = OpenStateStore(conninfo);
    ASSERT_FALSE(store.ok()) << conninfo;
    EXPECT_EQ(store.error().code, "usage.invalid");
    EXPECT_EQ(store.error().Describe().find("CANARY"), std::string::npos);
    auto writer = OpenEvidenceWriter(conninfo);
    ASSERT_FALSE(writer.ok()) << conninfo;
    EXPECT_EQ(writer.error().code, "usage.invalid");
  }
  // A path whose name holds '=' stays expressible: with a slash before it.
  EXPECT_TRUE(OpenStateStore(dir.File("host=db")).ok());
  EXPECT_TRUE(OpenStateStore("./host=db").ok());
  EXPECT_TRUE(OpenEvidenceWriter(dir.File("dbname=x.jsonl")).ok());
}

// PostgreSQL only: what has no file-store counterpart.
class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UDON_REQUIRE_POSTGRES();
    cluster_ = std::make_unique<testing::PgCluster>();
    ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
  }
  std::unique_ptr<testing::PgCluster> cluster_;
};

TEST_F(PostgresStoreTest, TheMigrationRecordsItsVersionOnce) {
  PostgresStateStore first(cluster_->Url());
  ASSERT_TRUE(first.IsInvalidated(kDigestA, "demo", 1).ok());
  PostgresStateStore second(cluster_->Url());
  ASSERT_TRUE(second.IsInvalidated(kDigestA, "demo", 1).ok());
  EXPECT_EQ(cluster_->Psql("SELECT string_agg(version::text, ',') FROM udon_mcp_schema_version").out, "1\n");
}

TEST_F(PostgresStoreTest, ANewerSchemaIsRefusedClearly) {
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1).ok());
  cluster_->Psql("INSERT INTO udon_mcp_schema_version (version) VALUES (" + std::to_string(kSchemaVersion + 1) + ")");
  auto refused = PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "state.unavailable");
  EXPECT_NE(refused.error().message.find("newer than this udon-mcp knows"), std::string::npos);
  EXPECT_EQ(refused.error().details["schemaVersion"], kSchemaVersion + 1);
  auto write = PostgresStateStore(cluster_->Url()).Record(kDigestA, "demo", "list_changed_during_call", 1);
  ASSERT_FALSE(write.ok());
  EXPECT_NE(write.error().message.find("newer than this udon-mcp knows"), std::string::npos);
}

TEST_F(PostgresStoreTest, AnInvalidationRecordNamesItsRunner) {
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).Record(kDigestA, "demo", "list_changed_during_call", 7).ok());
  EXPECT_EQ(cluster_->Psql("SELECT reason || ' ' || at || ' ' || (runner LIKE '%:' || " + std::to_string(getpid()) +
                           ") FROM udon_mcp_invalidations")
                .out,
            "list_changed_during_call 7 true\n");
}

TEST_F(PostgresStoreTest, AnUnreachableDatabaseIsUnavailableAndNeverShowsThePassword) {
  const std::string url = cluster_->UrlWithPassword("CANARY-pg-password-71f3");
  cluster_->Stop();
  PostgresStateStore store(url);
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, "state.unavailable");
  EXPECT_EQ(checked.error().Describe().find("CANARY"), std::string::npos);
  EXPECT_EQ(checked.error().details.dump().find("CANARY"), std::string::npos);
  EXPECT_NE(checked.error().details["store"].get<std::string>().find("password=***"), std::string::npos);
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().code, "state.unavailable");
  auto write = store.Record(kDigestA, "demo", "list_changed_during_call", 1);
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.error().code, "state.write_failed");
}

TEST_F(PostgresStoreTest, ALockWhoseSessionEndedIsNoLongerHeld) {
  PostgresStateStore store(cluster_->Url());
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(lock.ok());
  EXPECT_TRUE((*lock)->StillHeld().ok());
  cluster_->Psql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'");
  auto held = (*lock)->StillHeld();
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.error().code, "state.unavailable");
}

// Issue 31: a call of a serialized tool (check, lock, liveness, recheck, release) opens one
// session, and a second lock held at once takes a session of its own.
TEST_F(PostgresStoreTest, ASerializedCallUsesTheStoresOneSession) {
  const std::string sessions = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'udon-mcp'";
  PostgresStateStore store(cluster_->Url());
  ASSERT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok());
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(lock.ok()) << lock.error().Describe();
  EXPECT_TRUE((*lock)->StillHeld().ok());
  ASSERT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok());
  EXPECT_EQ(cluster_->Psql(sessions).out, "1\n");
  EXPECT_EQ(cluster_->Psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").out, "1\n");
  auto second = store.AcquireSerializeLock("demo\nother_tool", std::chrono::milliseconds(100));
  ASSERT_TRUE(second.ok()) << second.error().Describe();
  EXPECT_EQ(cluster_->Psql(sessions).out, "2\n");
  lock->reset();
  second->reset();
  EXPECT_EQ(cluster_->Psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").out, "0\n");
}

// Issue 31: a fresh call's store work in round trips after the connection set-up (counted,
// not timed). A session's schema check shares its first read's round trip, and a statement
// is prepared in its first execution's: a safe tool's check and recheck take two, a
// serialized tool's call (check, lock, recheck, liveness, release) five.
TEST_F(PostgresStoreTest, AFreshSafeCallsCheckAndRecheckTakeTwoRoundTrips) {
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1).ok());  // the schema exists
  PostgresStateStore store(cluster_->Url());
  auto check = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_TRUE(check.ok()) << check.error().Describe();
  EXPECT_FALSE(*check);
  EXPECT_EQ(store.RoundTrips(), 1u);
  auto recheck = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_TRUE(recheck.ok()) << recheck.error().Describe();
  EXPECT_EQ(store.RoundTrips(), 2u);
}

TEST_F(PostgresStoreTest, AFreshSerializedCallTakesFiveRoundTrips) {
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1).ok());
  PostgresStateStore store(cluster_->Url());
  ASSERT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok());
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(lock.ok()) << lock.error().Describe();
  ASSERT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok());
  EXPECT_TRUE((*lock)->StillHeld().ok());
  lock->reset();
  EXPECT_EQ(store.RoundTrips(), 5u);
  EXPECT_EQ(cluster_->Psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").out, "0\n");
}

// Warm opens the main session ahead of the first operation, which takes it over: still one
// session, and the check still one round trip; a store that cannot be reached is the first
// operation's error, and a store warmed and never used ends its session.
TEST_F(PostgresStoreTest, AWarmedStoresFirstCheckUsesTheSessionWarmOpened) {
  const std::string sessions = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'udon-mcp'";
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1).ok());
  {
    PostgresStateStore unused(cluster_->Url());
    unused.Warm();
  }
  // Ended sessions leave pg_stat_activity when their backends exit, soon after.
  for (int i = 0; i < 200 && cluster_->Psql(sessions).out != "0\n"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(cluster_->Psql(sessions).out, "0\n") << "the warmed, unused store ended its session";
  PostgresStateStore store(cluster_->Url());
  store.Warm();
  store.Warm();  // once
  auto check = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_TRUE(check.ok()) << check.error().Describe();
  EXPECT_EQ(store.RoundTrips(), 1u);
  EXPECT_EQ(cluster_->Psql(sessions).out, "1\n");
}

TEST_F(PostgresStoreTest, AWarmedStoreThatCannotBeReachedFailsItsFirstOperation) {
  const std::string url = cluster_->Url();
  cluster_->Stop();
  PostgresStateStore store(url);
  store.Warm();
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, "state.unavailable");
  ASSERT_TRUE(cluster_->Start());
  EXPECT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok()) << "a later operation connects again";
}

// A TCP port whose connections the kernel completes and nobody ever answers: a PostgreSQL
// host that hangs (a stopped process, a full backlog, a middlebox that swallows packets).
class SilentServer {
 public:
  SilentServer() : fd_(testing::ListenOnLoopback(port_)) {}
  ~SilentServer() {
    if (fd_ >= 0) close(fd_);
  }
  std::string Url(const std::string& query = "") const {
    return "postgresql://udon@127.0.0.1:" + std::to_string(port_) + "/udon" + query;
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int port_ = 0;
  int fd_;
};

// A command refused before it consulted the store (a digest mismatch, say) destroys a
// store whose session is still being opened: it ends at once, not at the connect timeout
// (10 s). Bounded wait only: the destruction either returns within 5 s or waits for that
// timeout.
TEST(PostgresStoreWarmTest, AnUnusedWarmedStoreEndsWithoutWaitingForASilentServer) {
  SilentServer server;
  ASSERT_TRUE(server.ok());
  auto store = std::make_unique<PostgresStateStore>(server.Url());
  store->Warm();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the attempt waits for an answer
  auto destroyed = std::async(std::launch::async, [&store] { store.reset(); });
  EXPECT_EQ(destroyed.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  destroyed.wait();
}

// The warmed attempt keeps the URI's connect_timeout: a server that never answers is the
// first operation's refusal once it has passed.
TEST(PostgresStoreWarmTest, AWarmedStoreToASilentServerIsUnavailableAfterTheConnectTimeout) {
  SilentServer server;
  ASSERT_TRUE(server.ok());
  PostgresStateStore store(server.Url("?connect_timeout=2"));
  store.Warm();
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, "state.unavailable");
}

// The code of the store's first check ("ok" when it passes), made on a thread the test
// does not wait for: a check that never ends fails the test instead of hanging it.
std::future<std::string> CheckInTheBackground(const std::shared_ptr<PostgresStateStore>& store) {
  auto done = std::make_shared<std::promise<std::string>>();
  std::future<std::string> code = done->get_future();
  std::thread([store, done] {
    auto checked = store->IsInvalidated(kDigestA, "demo", 1);
    done->set_value(checked.ok() ? "ok" : checked.error().code);
  }).detach();
  return code;
}

// Issue 38: connect_timeout=0 is libpq's "wait forever"; the bound the command gives the
// store (its call's timeout) still ends the attempt. Bounded wait only.
TEST(PostgresStoreWarmTest, ConnectTimeoutZeroStillEndsAtTheStoresBound) {
  SilentServer server;
  ASSERT_TRUE(server.ok());
  auto store = std::make_shared<PostgresStateStore>(server.Url("?connect_timeout=0"), std::chrono::milliseconds(300));
  store->Warm();
  std::future<std::string> code = CheckInTheBackground(store);
  ASSERT_EQ(code.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the attempt never ended";
  EXPECT_EQ(code.get(), "state.unavailable");
}

constexpr int kNoNamespaces = 77;

bool BringLoopbackUp() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq request{};
  std::snprintf(request.ifr_name, sizeof request.ifr_name, "lo");
  bool up = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  up = up && ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  close(fd);
  return up;
}

// A name server at 127.0.0.1:53 that reads queries and never answers; its descriptor.
int ListenAsSilentNameServer() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(53);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  return -1;
}

// Runs `scenario` in a child process with its own mount namespace (and user namespace when
// it needs one), where /etc/hosts holds `hosts` only. With `silent_resolver` the child has its
// own network namespace too, whose one name server never answers: a lookup of any other
// name hangs for the resolver's longest timeouts (5 attempts of 30 s). The scenario's exit
// code; kNoNamespaces when the kernel or container refuses what the child needs.
int RunWithOwnResolver(const std::string& hosts, bool silent_resolver, const std::function<int()>& scenario) {
  testing::TempDir dir;
  dir.Write("hosts", hosts);
  dir.Write("resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:5\n");
  dir.Write("nsswitch.conf", "hosts: files dns\n");
  const pid_t child = fork();
  if (child == 0) {
    // Root without CAP_SYS_ADMIN (a container) may still have user namespaces.
    const int flags = CLONE_NEWNS | (silent_resolver ? CLONE_NEWNET : 0);
    if ((geteuid() != 0 || unshare(flags) != 0) && unshare(flags | CLONE_NEWUSER) != 0) _exit(kNoNamespaces);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(kNoNamespaces);
    for (const char* file : {"hosts", "resolv.conf", "nsswitch.conf"}) {
      const std::string target = std::string("/etc/") + file;
      if (access(target.c_str(), F_OK) != 0 && std::string(file) == "nsswitch.conf") continue;
      if (mount(dir.File(file).c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) _exit(kNoNamespaces);
    }
    if (silent_resolver && (!BringLoopbackUp() || ListenAsSilentNameServer() < 0)) _exit(kNoNamespaces);
    _exit(scenario());
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return kNoNamespaces;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Issue 38: libpq looks a host name up inside PQconnectStart, where no cancellation reaches
// it. A command refused before it consulted the store, whose name server never answers,
// ends at once all the same. Bounded wait only: the destruction returns within 10 s, or
// waits for the resolver (150 s).
TEST(PostgresStoreWarmTest, AnUnusedWarmedStoreEndsWithoutWaitingForAResolverThatNeverAnswers) {
  const int outcome = RunWithOwnResolver("127.0.0.1 localhost\n", true, [] {
    auto store = std::make_unique<PostgresStateStore>("postgresql://udon@db.example.test/udon?connect_timeout=600");
    store->Warm();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the lookup waits for an answer
    auto destroyed = std::make_shared<std::promise<void>>();
    std::future<void> done = destroyed->get_future();
    std::thread([unused = std::move(store), destroyed]() mutable {
      unused.reset();
      destroyed->set_value();
    }).detach();
    return done.wait_for(std::chrono::seconds(10)) == std::future_status::ready ? 0 : 1;
  });
  if (outcome == kNoNamespaces) GTEST_SKIP() << "no private mount and network namespaces here";
  EXPECT_EQ(outcome, 0) << "the store waited for the lookup";
}

// The store's bound (a call's timeout) ends the lookup too: the first operation is refused,
// not held for the resolver's timeouts. Bounded wait only, as above.
TEST(PostgresStoreWarmTest, AResolverThatNeverAnswersIsUnavailableWithinTheStoresBound) {
  const int outcome = RunWithOwnResolver("127.0.0.1 localhost\n", true, [] {
    std::future<std::string> code = CheckInTheBackground(std::make_shared<PostgresStateStore>(
        "postgresql://udon@db.example.test/udon", std::chrono::milliseconds(300)));
    if (code.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return 1;
    return code.get() == "state.unavailable" ? 0 : 2;
  });
  if (outcome == kNoNamespaces) GTEST_SKIP() << "no private mount and network namespaces here";
  EXPECT_EQ(outcome, 0) << (outcome == 1 ? "the lookup held the operation" : "not state.unavailable");
}

// The check a session starts with runs before its schema's version is known: on a missing
// schema its answer is not used (the schema is created, then the check runs again), and a
// record made on that session is read back by the next statement.
TEST_F(PostgresStoreTest, ASessionsFirstCheckOnAMissingSchemaCreatesItAndChecksAgain) {
  PostgresStateStore store(cluster_->Url());
  auto check = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_TRUE(check.ok()) << check.error().Describe();
  EXPECT_FALSE(*check);
  ASSERT_TRUE(store.Record(kDigestA, "demo", "list_changed_during_call", 1).ok());
  EXPECT_TRUE(*store.IsInvalidated(kDigestA, "demo", 1));
  EXPECT_EQ(cluster_->Psql("SELECT string_agg(version::text, ',') FROM udon_mcp_schema_version").out, "1\n");
}

// A lock taken as a session's first statement (no read before it) still checks the schema
// first: a lock is never taken on a schema this udon-mcp does not know.
TEST_F(PostgresStoreTest, ALockAsASessionsFirstStatementIsRefusedOnANewerSchema) {
  ASSERT_TRUE(PostgresStateStore(cluster_->Url()).IsInvalidated(kDigestA, "demo", 1).ok());
  cluster_->Psql("INSERT INTO udon_mcp_schema_version (version) VALUES (" + std::to_string(kSchemaVersion + 1) + ")");
  PostgresStateStore store(cluster_->Url());
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().details["schemaVersion"], kSchemaVersion + 1);
  EXPECT_EQ(cluster_->Psql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").out, "0\n");
}

// A session's advisory locks are re-entrant: the store's own callers of one scope must
// still exclude each other.
TEST_F(PostgresStoreTest, TwoCallersOfOneStoreOnOneScopeExcludeEachOther) {
  PostgresStateStore store(cluster_->Url());
  auto held = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(held.ok()) << held.error().Describe();
  auto waiting = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_FALSE(waiting.ok());
  EXPECT_EQ(waiting.error().code, "state.lock_timeout");
  held->reset();
  auto on_main = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));  // the main session again
  ASSERT_TRUE(on_main.ok()) << on_main.error().Describe();
  auto other = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));  // a session of its own
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, "state.lock_timeout");
}

TEST_F(PostgresStoreTest, AfterTheMainSessionEndedALockIsTakenOnANewOne) {
  PostgresStateStore store(cluster_->Url());
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(lock.ok());
  cluster_->Psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'udon-mcp'");
  EXPECT_FALSE((*lock)->StillHeld().ok());
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);  // reconnects
  EXPECT_TRUE(checked.ok()) << checked.error().Describe();
  lock->reset();  // the old session's lock: nothing to release on the new one
  auto again = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  ASSERT_TRUE(again.ok()) << again.error().Describe();
  EXPECT_TRUE((*again)->StillHeld().ok());
}

TEST_F(PostgresStoreTest, ARestartedDatabaseIsReachedAgainWithoutAnError) {
  PostgresStateStore store(cluster_->Url());
  ASSERT_TRUE(store.IsInvalidated(kDigestA, "demo", 1).ok());
  ASSERT_TRUE(store.AcquireSerializeLock("demo", std::chrono::milliseconds(100)).ok());  // pooled after
  cluster_->Stop();
  ASSERT_TRUE(cluster_->Start());
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  EXPECT_TRUE(checked.ok()) << checked.error().Describe();
  auto lock = store.AcquireSerializeLock("demo", std::chrono::milliseconds(100));
  EXPECT_TRUE(lock.ok()) << lock.error().Describe();
}

TEST_F(PostgresStoreTest, EvidenceLinesComeBackInTheOrderWritten) {
  auto writer = OpenEvidenceWriter(cluster_->Url());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append({{"code", "ok"}, {"n", 1}}).ok());
  ASSERT_TRUE((*writer)->Append({{"code", "catalog.tool_drift"}, {"n", 2}}).ok());
  auto lines = ReadEvidenceLines(cluster_->Url());
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(*lines, (std::vector<std::string>{R"({"code":"ok","n":1})", R"({"code":"catalog.tool_drift","n":2})"}));
}

// Issue 29: every password libpq reads, however the URI spells it, stays out of the error.
TEST_F(PostgresStoreTest, AnUnreachableDatabaseNeverShowsAPasswordHoldingReservedCharacters) {
  const std::string url = cluster_->Url();
  const std::string query = url.substr(url.find('?'));
  cluster_->Stop();
  for (const auto& [password, spelled] : std::vector<std::pair<std::string, std::string>>{
           {"Sec?ret-pw", "Sec?ret-pw"}, {"p@ss", "p%40ss"}, {"p#ss", "p#ss"}, {"p/ss", "p%2Fss"},
           {"p%40ss", "p%2540ss"}}) {
    PostgresStateStore store("postgresql://udon:" + spelled + "@/postgres" + query);
    auto checked = store.IsInvalidated(kDigestA, "demo", 1);
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.error().code, "state.unavailable");
    const std::string shown = checked.error().Describe() + checked.error().details.dump();
    EXPECT_EQ(shown.find(password), std::string::npos) << shown;
    EXPECT_EQ(shown.find(spelled), std::string::npos) << shown;
    EXPECT_NE(shown.find("password=***"), std::string::npos) << shown;
  }
}

// Issue 29: PostgreSQL with ssl=on on 127.0.0.1, its certificate issued for db.example.test
// by a throwaway CA. The store names it db.example.test (not local, so verify-full by
// default) and reaches it at hostaddr=127.0.0.1, which libpq uses without DNS while it
// checks the certificate against the name.
class PostgresTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UDON_REQUIRE_POSTGRES();
    std::string failure;
    auto made = testing::MakeTestCertificates(dir_.File("ca"), "db.example.test", failure);
    ASSERT_TRUE(made) << failure;
    ca_ = made->ca_cert;
    auto other = testing::MakeTestCertificates(dir_.File("other-ca"), "db.example.test", failure);
    ASSERT_TRUE(other) << failure;
    other_ca_ = other->ca_cert;
    cluster_ = std::make_unique<testing::PgCluster>(made->server);
    ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
  }

  std::string Url(const std::string& host, const std::string& query) const {
    return "postgresql://udon@" + host + ":" + std::to_string(cluster_->port()) + "/postgres?hostaddr=127.0.0.1" +
           query;
  }
  void ExpectRefused(const std::string& url) {
    PostgresStateStore store(url);
    auto checked = store.IsInvalidated(kDigestA, "demo", 1);
    ASSERT_FALSE(checked.ok()) << url;
    EXPECT_EQ(checked.error().code, "state.unavailable");
    EXPECT_EQ(checked.error().details["sslmode"], "verify-full");
  }

  testing::TempDir dir_;
  std::string ca_;
  std::string other_ca_;
  std::unique_ptr<testing::PgCluster> cluster_;
};

TEST_F(PostgresTlsTest, AServerThatProvesItsNameIsReachedOverTls) {
  PostgresStateStore store(Url("db.example.test", "&sslrootcert=" + ca_));
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  ASSERT_TRUE(checked.ok()) << checked.error().Describe();
  EXPECT_FALSE(store.WeakenedTls());
  // The store's session (kept open) is encrypted.
  EXPECT_EQ(cluster_->Psql("SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                           " WHERE a.application_name = 'udon-mcp'")
                .out,
            "t\n");
}

TEST_F(PostgresTlsTest, AServerSignedByAnotherCaIsUnavailable) {
  ExpectRefused(Url("db.example.test", "&sslrootcert=" + other_ca_));
}

TEST_F(PostgresTlsTest, ACertificateForAnotherNameIsUnavailable) {
  ExpectRefused(Url("other.example.test", "&sslrootcert=" + ca_));
}

TEST_F(PostgresTlsTest, AnExplicitWeakerSslmodeIsHonouredAndNamed) {
  PostgresStateStore store(Url("db.example.test", "&sslmode=require&sslrootcert=" + other_ca_ + "-absent"));
  auto checked = store.IsInvalidated(kDigestA, "demo", 1);
  EXPECT_TRUE(checked.ok()) << checked.error().Describe();
  EXPECT_EQ(store.WeakenedTls(), "require");
}

// Issue 38: udon-mcp looks a host name up itself and gives libpq the address as hostaddr
// next to the name: the certificate is still checked against the name. Here both names
// are 127.0.0.1 (a hosts file of the test's own); only db.example.test is the server's.
TEST_F(PostgresTlsTest, AHostNameLookedUpBeforeLibpqIsStillTheNameTlsVerifies) {
  const std::string query = ":" + std::to_string(cluster_->port()) + "/postgres?sslrootcert=" + ca_;
  const int outcome = RunWithOwnResolver("127.0.0.1 localhost db.example.test other.example.test\n", false, [&] {
    auto named = PostgresStateStore("postgresql://udon@db.example.test" + query).IsInvalidated(kDigestA, "demo", 1);
    if (!named.ok()) return 1;
    auto other = PostgresStateStore("postgresql://udon@other.example.test" + query).IsInvalidated(kDigestA, "demo", 1);
    return !other.ok() && other.error().code == "state.unavailable" ? 0 : 2;
  });
  if (outcome == kNoNamespaces) GTEST_SKIP() << "no private mount namespace here";
  EXPECT_EQ(outcome, 0) << (outcome == 1 ? "the server's own name was refused" : "another name was accepted");
}

TEST(AdvisoryKeyTest, ScopesHaveStableDistinctKeys) {
  EXPECT_EQ(AdvisoryKey("demo"), AdvisoryKey("demo"));
  EXPECT_NE(AdvisoryKey("demo"), AdvisoryKey("demo\nappend_ledger"));
}

}  // namespace
}  // namespace udon::state_pg
