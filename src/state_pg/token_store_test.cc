// The PostgreSQL token store (issue 39) against a real PostgreSQL 15: logins round-trip,
// are unreadable in the database, refuse another key and altered rows with stable codes, and
// one refresher at a time holds a login's refresh lock, also against a real authorization
// server that rotates refresh tokens (tests/peers/oauth/, when the npm peers are installed).
#include "state_pg/token_store.h"

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "gate/state.h"
#include "json/json.h"
#include "pg_cluster.h"
#include "state_pg/open.h"
#include "test_support.h"

namespace udon::state_pg {
namespace {

oauth::StoredLogin SampleLogin(const std::string& issuer = "https://as.example") {
  oauth::StoredLogin login;
  login.key = {issuer, "https://mcp.example/mcp"};
  login.client.kind = oauth::ClientKind::kDynamic;
  login.client.client_id = "client-id-1";
  login.client.client_secret = "CLIENT-SECRET-b5f1c0";
  login.client.registration_access_token = "REGISTRATION-TOKEN-77aa01";
  login.scopes = {"mcp:tools"};
  login.access_token = "ACCESS-TOKEN-9f3e2d1c";
  login.refresh_token = "REFRESH-TOKEN-4b8a6e20";
  login.expires_at_unix = 1'900'000'000;
  login.obtained_at_unix = 1'800'000'000;
  return login;
}

// Until `done` holds (no bound of ours: ctest's timeout ends a hung test).
template <class Condition>
void WaitUntil(Condition done) {
  while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

class PostgresTokenStoreTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { cluster_.reset(); }

  void SetUp() override {
    UDON_REQUIRE_POSTGRES();
    if (!cluster_) cluster_ = std::make_unique<testing::PgCluster>();
    ASSERT_TRUE(cluster_->ok()) << cluster_->failure();
    cluster_->Psql("DROP TABLE IF EXISTS udon_mcp_oauth_logins");
  }

  // A store as a runner with the state directory `state` opens it.
  std::unique_ptr<PostgresTokenStore> Store(const std::string& state = "state") {
    return std::make_unique<PostgresTokenStore>(cluster_->Url(), ResolveTokenKeySource(std::nullopt, dir_.File(state)));
  }

  static std::unique_ptr<testing::PgCluster> cluster_;
  testing::TempDir dir_;
};

std::unique_ptr<testing::PgCluster> PostgresTokenStoreTest::cluster_;

TEST_F(PostgresTokenStoreTest, ALoginRoundTripsAcrossStoresAndIsRemoved) {
  const oauth::StoredLogin login = SampleLogin();
  ASSERT_TRUE(Store()->Save(login).ok());
  auto other = Store();  // another process of the same runner
  auto loaded = other->Load(login.key);
  ASSERT_TRUE(loaded.ok()) << loaded.error().Describe();
  EXPECT_EQ(*loaded, std::optional<oauth::StoredLogin>(login));
  oauth::StoredLogin second = SampleLogin("https://other-as.example");
  second.refresh_token.reset();
  ASSERT_TRUE(other->Save(second).ok());
  auto listed = other->List();
  ASSERT_TRUE(listed.ok()) << listed.error().Describe();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1], second);
  ASSERT_TRUE(other->Remove(login.key).ok());
  ASSERT_TRUE(other->Remove(login.key).ok()) << "removing what is gone is no error";
  EXPECT_EQ(*Store()->Load(login.key), std::nullopt);
  EXPECT_EQ(*Store()->Load({"https://unknown.example", "https://mcp.example/mcp"}), std::nullopt);
}

TEST_F(PostgresTokenStoreTest, TheKeyIsAFileOfTheStateDirectoryMade0600OnFirstUse) {
  ASSERT_TRUE(Store()->Save(SampleLogin()).ok());
  struct stat info {};
  ASSERT_EQ(::stat(dir_.File("state/oauth-token.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(info.st_size, 32);
}

// Someone with a copy of the database (a dump, a backup, a replica) reads no token, secret
// or record, in clear or as hex.
TEST_F(PostgresTokenStoreTest, NoTokenBytesAreReadableInTheDatabase) {
  ASSERT_TRUE(Store()->Save(SampleLogin()).ok());
  const testing::ProcessResult dump = cluster_->Dump();
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  ASSERT_NE(dump.out.find("udon_mcp_oauth_logins"), std::string::npos) << "the table is in the dump";
  for (const std::string secret : {"ACCESS-TOKEN-9f3e2d1c", "REFRESH-TOKEN-4b8a6e20", "CLIENT-SECRET-b5f1c0",
                                   "REGISTRATION-TOKEN-77aa01", "client-id-1", "accessToken"}) {
    EXPECT_EQ(dump.out.find(secret), std::string::npos) << secret;
    EXPECT_EQ(dump.out.find(gate::HexName(secret)), std::string::npos) << secret << " as hex";
  }
}

// A runner given another key than the one that sealed a login is refused with a stable
// code naming both key ids: never a garbage token sent to a server.
TEST_F(PostgresTokenStoreTest, AnotherKeyIsRefusedWithAStableCode) {
  ASSERT_TRUE(Store("runner-a")->Save(SampleLogin()).ok());
  auto loaded = Store("runner-b")->Load(SampleLogin().key);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, "auth.store_key_mismatch");
  EXPECT_TRUE(loaded.error().details.contains("storedKeyId"));
  EXPECT_NE(loaded.error().details["storedKeyId"], loaded.error().details["keyId"]);
  EXPECT_EQ(Store("runner-b")->List().error().code, "auth.store_key_mismatch");
  EXPECT_EQ(loaded.error().Describe().find("ACCESS-TOKEN"), std::string::npos);
  EXPECT_EQ(loaded.error().Describe().find("REFRESH-TOKEN"), std::string::npos);
}

// An attacker who can write the table but has no key: an altered ciphertext, or a row
// moved to another authorization server, never opens.
TEST_F(PostgresTokenStoreTest, AlteredOrMovedRowsAreRefusedAsCorrupt) {
  ASSERT_TRUE(Store()->Save(SampleLogin()).ok());
  ASSERT_TRUE(Store()->Save(SampleLogin("https://victim.example")).ok());
  cluster_->Psql("UPDATE udon_mcp_oauth_logins SET sealed = set_byte(sealed, 3, get_byte(sealed, 3) # 1)"
                 " WHERE issuer = 'https://as.example'");
  auto altered = Store()->Load(SampleLogin().key);
  ASSERT_FALSE(altered.ok());
  EXPECT_EQ(altered.error().code, "auth.store_corrupt");
  cluster_->Psql("DELETE FROM udon_mcp_oauth_logins WHERE issuer = 'https://as.example'");
  cluster_->Psql("UPDATE udon_mcp_oauth_logins SET issuer = 'https://as.example'");
  auto moved = Store()->Load(SampleLogin().key);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().code, "auth.store_corrupt");
}

// A key file given by the operator must exist and be private: a missing one is not made
// (a fresh key would hide every login), one that others can read is no secret.
TEST_F(PostgresTokenStoreTest, AGivenKeyFileMustExistAndBePrivate) {
  const std::string missing = dir_.File("missing.key");
  PostgresTokenStore without(cluster_->Url(), ResolveTokenKeySource(missing, dir_.File("state")));
  Status saved = without.Save(SampleLogin());
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.error().code, "auth.store_key_unavailable");
  EXPECT_FALSE(std::filesystem::exists(missing));

  dir_.Write("shared.key", std::string(32, 'k'));
  ::chmod(dir_.File("shared.key").c_str(), 0644);
  PostgresTokenStore open_to_all(cluster_->Url(), ResolveTokenKeySource(dir_.File("shared.key"), dir_.File("state")));
  saved = open_to_all.Save(SampleLogin());
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(saved.error().code, "auth.store_key_unavailable");

  ::chmod(dir_.File("shared.key").c_str(), 0600);
  PostgresTokenStore given(cluster_->Url(), ResolveTokenKeySource(dir_.File("shared.key"), dir_.File("state")));
  ASSERT_TRUE(given.Save(SampleLogin()).ok());
  EXPECT_EQ(*given.Load(SampleLogin().key), std::optional<oauth::StoredLogin>(SampleLogin()));
}

TEST_F(PostgresTokenStoreTest, AnUnreachableDatabaseIsAStableCode) {
  PostgresTokenStore store("postgresql:///postgres?host=" + dir_.File("no-socket-here") + "&connect_timeout=2",
                           ResolveTokenKeySource(std::nullopt, dir_.File("state")));
  auto loaded = store.Load(SampleLogin().key);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, "auth.store_unavailable");
}

// Two refreshers of one login, each with its own store (its own database sessions, as two
// processes have): the second enters the lock only after the first left it, so it finds
// the first's rotated refresh token instead of spending the old one again. The first
// holds the lock until the second has found it taken, so the order is forced, not timed.
TEST_F(PostgresTokenStoreTest, OneRefresherAtATimeHoldsALoginsLock) {
  auto first = Store();
  auto second = Store();
  const oauth::TokenKey key = SampleLogin().key;
  std::atomic<bool> first_inside{false}, first_done{false}, second_inside{false};
  bool second_saw_first_done = false;
  std::thread refresher([&] {
    Status held = first->WithRefreshLock(key, [&]() -> Status {
      first_inside = true;
      WaitUntil([&] { return second->refresh_lock_busy() > 0 || second_inside.load(); });
      first_done = true;
      return OkStatus();
    });
    EXPECT_TRUE(held.ok());
  });
  WaitUntil([&] { return first_inside.load(); });
  Status waited = second->WithRefreshLock(key, [&]() -> Status {
    second_inside = true;
    second_saw_first_done = first_done.load();
    return OkStatus();
  });
  refresher.join();
  ASSERT_TRUE(waited.ok()) << waited.error().Describe();
  EXPECT_TRUE(second_saw_first_done) << "both refreshers were inside the lock at once";
}

TEST_F(PostgresTokenStoreTest, ALockHeldTooLongIsAStableCodeAndOtherLoginsDoNotWait) {
  auto holder = Store();
  auto waiter = Store();
  waiter->set_refresh_lock_wait(std::chrono::milliseconds(0));
  const oauth::TokenKey key = SampleLogin().key;
  Status outer = holder->WithRefreshLock(key, [&]() -> Status {
    Status blocked = waiter->WithRefreshLock(key, [] { return OkStatus(); });
    EXPECT_EQ(blocked.ok() ? "" : blocked.error().code, "auth.refresh_lock_timeout");
    bool other_ran = false;
    Status other = waiter->WithRefreshLock(SampleLogin("https://other-as.example").key, [&] {
      other_ran = true;
      return OkStatus();
    });
    EXPECT_TRUE(other.ok() && other_ran) << "another login's lock is not this one";
    return OkStatus();
  });
  EXPECT_TRUE(outer.ok());
}

// fn's error comes back as it is, and the lock is free again at once.
TEST_F(PostgresTokenStoreTest, AFailedRefreshReleasesTheLock) {
  auto store = Store();
  auto next = Store();
  next->set_refresh_lock_wait(std::chrono::milliseconds(0));
  const oauth::TokenKey key = SampleLogin().key;
  Status failed = store->WithRefreshLock(key, [] { return Status(MakeError("auth.refresh_failed", "refused")); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, "auth.refresh_failed");
  EXPECT_TRUE(next->WithRefreshLock(key, [] { return OkStatus(); }).ok());
}

// A real authorization server (tests/peers/oauth/authorization-server.mjs: oidc-provider,
// refresh tokens rotated on every use) and client-by-hand.mjs to log in and to refresh.
class RotatingAuthorizationServer {
 public:
  RotatingAuthorizationServer()
      : server_({testing::NodeBinary(), Peer("authorization-server.mjs")}) {
    WaitUntil([&] { return server_.Output().find("\"issuer\"") != std::string::npos || !server_.running(); });
    // Its JSON line, among oidc-provider's warnings on stderr.
    const std::string output = server_.Output();
    const std::size_t start = output.find("{\"issuer\"");
    if (start == std::string::npos) return;
    auto line = json::Parse(output.substr(start, output.find('\n', start) - start));
    if (line.ok() && line->contains("issuer")) issuer_ = (*line)["issuer"].get<std::string>();
  }
  const std::string& issuer() const { return issuer_; }
  std::string Output() const { return server_.Output(); }
  // client-by-hand.mjs's answer; an empty object when it printed none.
  static json::Value Client(const std::vector<std::string>& arguments) {
    std::vector<std::string> argv = {testing::NodeBinary(), Peer("client-by-hand.mjs")};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    auto parsed = json::Parse(testing::RunProcess(argv).out);
    return parsed.ok() ? *parsed : json::Value::object();
  }

 private:
  static std::string Peer(const std::string& name) { return testing::SourceDir() + "/tests/peers/oauth/" + name; }
  testing::BackgroundProcess server_;
  std::string issuer_;
};

// Two runners refresh one login at once (each its own store, so its own database
// sessions), against a server that rotates refresh tokens: the refresh token is spent once
// and no runner meets invalid_grant. The first holds the lock until the second has found
// it taken, so without the lock both would refresh with the same token.
TEST_F(PostgresTokenStoreTest, TwoRunnersSpendARotatingRefreshTokenOnce) {
  UDON_REQUIRE_PEERS();
  RotatingAuthorizationServer server;
  ASSERT_FALSE(server.issuer().empty()) << server.Output();
  const json::Value tokens = RotatingAuthorizationServer::Client({"login", server.issuer(), "http://127.0.0.1:9/mcp"});
  ASSERT_TRUE(tokens.contains("refreshToken")) << tokens.dump();
  oauth::StoredLogin login = SampleLogin(server.issuer());
  login.client.client_id = tokens["clientId"];
  login.access_token = tokens["accessToken"];
  login.refresh_token = tokens["refreshToken"].get<std::string>();
  ASSERT_TRUE(Store()->Save(login).ok());
  auto first = Store();
  auto second = Store();
  std::atomic<int> refreshes{0}, refused{0};
  std::atomic<bool> second_inside{false};
  auto refresh = [&](PostgresTokenStore& store, const std::function<void()>& before) {
    return store.WithRefreshLock(login.key, [&]() -> Status {
      before();
      auto current = store.Load(login.key);
      if (!current.ok() || !*current) return Status(MakeError("test.no_login", "the login is gone"));
      if ((*current)->refresh_token != login.refresh_token) return OkStatus();  // refreshed meanwhile
      json::Value answer = RotatingAuthorizationServer::Client(
          {"refresh", tokens["tokenEndpoint"], tokens["clientId"], *(*current)->refresh_token});
      if (answer.value("status", 0) != 200) {
        ++refused;
        return Status(MakeError("test.refresh_refused", answer.dump()));
      }
      ++refreshes;
      (*current)->access_token = answer["accessToken"];
      (*current)->refresh_token = answer["refreshToken"].get<std::string>();
      return store.Save(**current);
    });
  };
  std::atomic<bool> first_inside{false};
  std::thread runner([&] {
    Status done = refresh(*first, [&] {
      first_inside = true;
      WaitUntil([&] { return second->refresh_lock_busy() > 0 || second_inside.load(); });
    });
    EXPECT_TRUE(done.ok()) << done.error().Describe();
  });
  WaitUntil([&] { return first_inside.load(); });
  Status waited = refresh(*second, [&] { second_inside = true; });
  runner.join();
  EXPECT_TRUE(waited.ok()) << waited.error().Describe();
  EXPECT_EQ(refreshes.load(), 1);
  EXPECT_EQ(refused.load(), 0) << "a refresh token was spent twice";
  auto stored = Store()->Load(login.key);
  ASSERT_TRUE(stored.ok() && *stored);
  const json::Value again = RotatingAuthorizationServer::Client(
      {"refresh", tokens["tokenEndpoint"], tokens["clientId"], *(*stored)->refresh_token});
  EXPECT_EQ(again.value("status", 0), 200) << "the stored refresh token is the live one";
}

TEST_F(PostgresTokenStoreTest, OpenTokenStoreChoosesTheStoreByTheStateLocation) {
  auto database = OpenTokenStore(cluster_->Url(), dir_.File("state"), std::nullopt);
  ASSERT_TRUE(database.ok());
  EXPECT_NE(dynamic_cast<PostgresTokenStore*>(database->get()), nullptr);
  auto files = OpenTokenStore(dir_.File("state"), dir_.File("state"), std::nullopt);
  ASSERT_TRUE(files.ok());
  EXPECT_NE(dynamic_cast<oauth::FileTokenStore*>(files->get()), nullptr);
  EXPECT_EQ(OpenTokenStore("host=db dbname=state", dir_.File("state"), std::nullopt).error().code, "usage.invalid");
}

}  // namespace
}  // namespace udon::state_pg
