#include "state_pg/tls.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace udon::state_pg {
namespace {

std::map<std::string, std::string>& FakeEnvironment() {
  static std::map<std::string, std::string> env;
  return env;
}

const char* FakeGetenv(const char* name) {
  auto it = FakeEnvironment().find(name);
  return it == FakeEnvironment().end() ? nullptr : it->second.c_str();
}

class StoreTlsTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeEnvironment().clear(); }
  static StoreTls Decide(const std::string& uri) {
    auto parsed = ParseConninfo(uri);
    EXPECT_TRUE(parsed.ok()) << uri;
    return DecideStoreTls(parsed.ok() ? *parsed : Conninfo{}, FakeGetenv);
  }
  static bool Remote(const std::string& uri) { return Decide(uri).default_sslmode == "verify-full"; }
};

TEST_F(StoreTlsTest, LoopbackAndSocketsAreLocal) {
  for (const char* host : {"localhost", "LocalHost", "127.0.0.1", "127.255.0.9", "::1", "/run/postgresql",
                           "@abstract", ""}) {
    EXPECT_TRUE(IsLocalHost(host) || std::string(host).empty()) << host;
  }
  for (const char* host : {"db.example.test", "10.0.0.1", "128.0.0.1", "::2", "::ffff:127.0.0.1", "localhost.",
                           "localhost.example.test", "127.0.0.1.example.test"}) {
    EXPECT_FALSE(IsLocalHost(host)) << host;
  }
}

TEST_F(StoreTlsTest, AStoreOnThisMachineKeepsLibpqsDefault) {
  for (const char* uri : {"postgresql:///state", "postgresql://localhost/state", "postgresql://127.0.0.1:5433/state",
                          "postgresql://[::1]/state", "postgresql:///state?host=/run/pg",
                          "postgresql://localhost,127.0.0.2/state", "postgresql:///state?hostaddr=127.0.0.1",
                          "host=/tmp port=5433 dbname=state"}) {
    const StoreTls tls = Decide(uri);
    EXPECT_TRUE(tls.default_sslmode.empty()) << uri;
    EXPECT_FALSE(tls.weakened) << uri;
  }
  // A weaker sslmode on this machine weakens nothing: no warning, no storeTls.
  EXPECT_FALSE(Decide("postgresql://localhost/state?sslmode=disable").weakened);
}

TEST_F(StoreTlsTest, AnyHostThatIsNotLocalRequiresVerifyFull) {
  EXPECT_TRUE(Remote("postgresql://db.example.test/state"));
  EXPECT_TRUE(Remote("postgresql://10.1.2.3:5432/state"));
  EXPECT_TRUE(Remote("host=db.example.test dbname=state"));
  // Every host of a list must be local.
  EXPECT_TRUE(Remote("postgresql://localhost,db.example.test/state"));
  // The name libpq checks the certificate against is not local, wherever hostaddr points.
  EXPECT_TRUE(Remote("postgresql://db.example.test/state?hostaddr=127.0.0.1"));
  // A local name reached at an address that is not.
  EXPECT_TRUE(Remote("postgresql://localhost/state?hostaddr=10.0.0.5"));
  // A service file's host is not known here.
  EXPECT_TRUE(Remote("postgresql:///state?service=shared"));
}

TEST_F(StoreTlsTest, TheEnvironmentCountsWhereTheUriIsSilent) {
  FakeEnvironment()["PGHOST"] = "db.example.test";
  EXPECT_TRUE(Remote("postgresql:///state"));
  EXPECT_FALSE(Remote("postgresql://localhost/state"));
  FakeEnvironment().clear();
  FakeEnvironment()["PGHOSTADDR"] = "192.0.2.1";
  EXPECT_TRUE(Remote("postgresql://localhost/state"));
  FakeEnvironment().clear();
  FakeEnvironment()["PGSERVICE"] = "shared";
  EXPECT_TRUE(Remote("postgresql:///state"));
}

TEST_F(StoreTlsTest, AnExplicitWeakerSslmodeIsHonouredAndNamed) {
  for (const char* mode : {"disable", "allow", "prefer", "require", "verify-ca"}) {
    const StoreTls tls = Decide(std::string("postgresql://db.example.test/state?sslmode=") + mode);
    EXPECT_EQ(tls.default_sslmode, "verify-full") << "the URI's own sslmode still comes later and wins";
    EXPECT_EQ(tls.weakened, mode);
  }
  EXPECT_FALSE(Decide("postgresql://db.example.test/state?sslmode=verify-full").weakened);
  EXPECT_FALSE(Decide("host=db.example.test sslmode=verify-full").weakened);
  EXPECT_EQ(Decide("host=db.example.test sslmode=require").weakened, "require");
}

TEST_F(StoreTlsTest, TheWarningNamesTheModeOnly) {
  const std::string warning = WeakTlsWarning("require");
  EXPECT_NE(warning.find("sslmode=require"), std::string::npos);
  EXPECT_EQ(warning.back(), '\n');
  EXPECT_EQ(warning.find('\n'), warning.size() - 1) << "one line";
}

}  // namespace
}  // namespace udon::state_pg
