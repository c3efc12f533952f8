#include "oauth/token_store.h"

#include <sys/stat.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "test_support.h"

namespace udon::oauth {
namespace {

StoredLogin SampleLogin() {
  StoredLogin login;
  login.key = {"https://as.example", "https://mcp.example/mcp"};
  login.client.kind = ClientKind::kDynamic;
  login.client.client_id = "client-1";
  login.client.client_secret = "client-secret-value";
  login.client.redirect_port = 43123;
  login.client.registration_client_uri = "https://as.example/reg/client-1";
  login.client.registration_access_token = "registration-token-value";
  login.client.token_endpoint_auth_method = "client_secret_basic";
  login.scopes = {"mcp:tools", "offline_access"};
  login.access_token = "access-token-value";
  login.refresh_token = "refresh-token-value";
  login.expires_at_unix = 1'900'000'000;
  login.obtained_at_unix = 1'800'000'000;
  return login;
}

TEST(LoginRecord, RoundTripsEveryMember) {
  const StoredLogin login = SampleLogin();
  Result<StoredLogin> parsed = ParseLogin(SerializeLogin(login));
  ASSERT_TRUE(parsed.ok()) << parsed.error().Describe();
  EXPECT_EQ(*parsed, login);
}

TEST(LoginRecord, LeavesOutAbsentOptionals) {
  StoredLogin login = SampleLogin();
  login.client = ClientIdentity{};
  login.client.client_id = "public";
  login.refresh_token.reset();
  const std::string bytes = SerializeLogin(login);
  EXPECT_EQ(bytes.find("refreshToken"), std::string::npos);
  EXPECT_EQ(bytes.find("clientSecret\""), std::string::npos);
  Result<StoredLogin> parsed = ParseLogin(bytes);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, login);
}

// A record changed by someone else is refused, and the refusal never quotes it.
TEST(LoginRecord, RefusesUnknownMembersOtherVersionsAndWrongTypesWithoutQuotingThem) {
  const std::string good = SerializeLogin(SampleLogin());
  const std::vector<std::string> bad = {
      "", "[]", "{}", good.substr(0, good.size() - 1),
      R"({"version":2})",
      std::string(good).insert(1, R"("extra":"access-token-value",)"),
      std::string(good).replace(good.find("\"expiresAt\":") + 12, 10, "\"soon\"    "),
      std::string(good).replace(good.find("\"kind\":\"dynamic\""), 16, "\"kind\":\"stolen\" "),
  };
  for (const std::string& bytes : bad) {
    Result<StoredLogin> parsed = ParseLogin(bytes);
    ASSERT_FALSE(parsed.ok()) << bytes;
    EXPECT_EQ(parsed.error().code, "auth.store_corrupt");
    EXPECT_EQ(parsed.error().Describe().find("token-value"), std::string::npos);
  }
}

TEST(FileTokenStore, SavesOwnerOnlyLoadsListsAndRemoves) {
  testing::TempDir dir;
  FileTokenStore store(dir.path());
  const StoredLogin login = SampleLogin();
  ASSERT_TRUE(store.Save(login).ok());
  struct stat info{};
  ASSERT_EQ(::stat(store.PathFor(login.key).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(store.Directory().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  // The file's name says nothing about the server.
  EXPECT_EQ(store.PathFor(login.key).find("example"), std::string::npos);

  auto loaded = store.Load(login.key);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ(**loaded, login);
  auto other = store.Load({login.key.issuer, "https://mcp.example/other"});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
  auto listed = store.List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);

  ASSERT_TRUE(store.Remove(login.key).ok());
  ASSERT_TRUE(store.Remove(login.key).ok());
  loaded = store.Load(login.key);
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value());
}

// A record copied over another key's file (to have one server's token sent to another)
// is refused.
TEST(FileTokenStore, RefusesARecordMovedToAnotherKeysFile) {
  testing::TempDir dir;
  FileTokenStore store(dir.path());
  StoredLogin login = SampleLogin();
  ASSERT_TRUE(store.Save(login).ok());
  const TokenKey victim{login.key.issuer, "https://other.example/mcp"};
  ASSERT_EQ(::rename(store.PathFor(login.key).c_str(), store.PathFor(victim).c_str()), 0);
  auto loaded = store.Load(victim);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, "auth.store_corrupt");
}

// Two refreshers of one key never run at once; the second sees what the first saved.
TEST(FileTokenStore, RefreshLockRunsOneHolderAtATime) {
  testing::TempDir dir;
  const StoredLogin login = SampleLogin();
  ASSERT_TRUE(FileTokenStore(dir.path()).Save(login).ok());
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> rotations{0};
  auto refresher = [&] {
    FileTokenStore store(dir.path());
    Status status = store.WithRefreshLock(login.key, [&]() -> Status {
      if (inside.fetch_add(1) != 0) overlaps++;
      auto current = store.Load(login.key);
      if (!current.ok() || !current->has_value()) return MakeError("test.failed", "no record");
      StoredLogin next = **current;
      // Spend the refresh token once: only the holder that still sees the first one rotates.
      if (next.refresh_token == login.refresh_token) {
        next.refresh_token = "rotated";
        rotations++;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        Status saved = store.Save(next);
        inside--;
        return saved;
      }
      inside--;
      return OkStatus();
    });
    EXPECT_TRUE(status.ok());
  };
  std::thread first(refresher);
  std::thread second(refresher);
  first.join();
  second.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(rotations.load(), 1);
}

}  // namespace
}  // namespace udon::oauth
