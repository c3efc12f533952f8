#include "state_pg/uri.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace udon::state_pg {
namespace {

TEST(RedactConninfoTest, PasswordsNeverSurvive) {
  EXPECT_EQ(RedactConninfo("postgresql://udon:s3cret@db.example.test:5432/state"),
            "user=udon password=*** dbname=state host=db.example.test port=5432");
  EXPECT_EQ(RedactConninfo("postgresql:///state?host=/run/pg&password=s3cret&user=udon"),
            "user=udon password=*** dbname=state host=/run/pg");
  // The client key's passphrase is a secret too.
  EXPECT_EQ(RedactConninfo("postgres://db/state?sslmode=require&sslpassword=k3y"),
            "dbname=state host=db sslmode=require sslpassword=***");
  EXPECT_EQ(RedactConninfo("host=db password=s3cret"), "password=*** host=db");
}

TEST(RedactConninfoTest, ConnectionStringsWithoutPasswordsKeepEveryOption) {
  EXPECT_EQ(RedactConninfo("postgresql://udon@db/state"), "user=udon dbname=state host=db");
  EXPECT_EQ(RedactConninfo("postgresql:///state?host=/run/pg"), "dbname=state host=/run/pg");
  EXPECT_EQ(RedactConninfo("host='/run/my pg' dbname=state"), "dbname=state host='/run/my pg'");
}

TEST(RedactConninfoTest, WhatLibpqCannotParseIsNotShown) {
  EXPECT_EQ(RedactConninfo("postgresql://udon:s3cret@db/state?nonsense=1"), "(a connection string libpq cannot parse)");
  EXPECT_EQ(RedactConninfo("host=db password='s3cret"), "(a connection string libpq cannot parse)");
  auto parsed = ParseConninfo("postgresql://udon:s3cret@db/state?nonsense=1");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "usage.invalid");
  EXPECT_EQ(parsed.error().Describe().find("s3cret"), std::string::npos);
}

// Issue 29: libpq, not a URI grammar of udon-mcp's, decides where a password ends. Each
// password in each spelling a user might write: none of its text comes out.
TEST(RedactConninfoTest, PasswordsWithReservedCharactersNeverSurvive) {
  struct Case {
    std::string password;
    std::vector<std::string> spellings;
  };
  const std::vector<Case> cases = {
      {"Sec?ret-pw",
       {"postgresql://udon:Sec?ret-pw@db.example.test/state", "postgresql://udon:Sec%3Fret-pw@db/state",
        "postgresql://udon:Sec?ret-pw@db/state?sslmode=require", "host=db user=udon password=Sec?ret-pw",
        "postgresql://db/state?password=Sec%3Fret-pw"}},
      {"p@ss", {"postgresql://udon:p%40ss@db/state", "postgresql://udon:p@ss@db/state", "host=db password=p@ss"}},
      {"p#ss", {"postgresql://udon:p#ss@db/state", "postgresql://udon:p%23ss@db/state", "password=p#ss host=db"}},
      {"p/ss", {"postgresql://udon:p%2Fss@db/state", "postgresql://udon:p/ss@db/state", "host=db password='p/ss'"}},
      {"p%40ss", {"postgresql://udon:p%2540ss@db/state", "postgresql://udon:p%40ss@db/state", "password=p%40ss"}},
  };
  for (const Case& c : cases) {
    for (const std::string& spelling : c.spellings) {
      const std::string shown = RedactConninfo(spelling);
      EXPECT_EQ(shown.find(c.password), std::string::npos) << spelling << " -> " << shown;
      EXPECT_EQ(shown.find("p@ss"), std::string::npos) << spelling << " -> " << shown;
      EXPECT_EQ(shown.find("Sec"), std::string::npos) << spelling << " -> " << shown;
    }
  }
  // Where libpq does read a password, it is shown as ***.
  EXPECT_EQ(RedactConninfo("postgresql://udon:Sec?ret-pw@db.example.test/state"),
            "user=udon password=*** dbname=state host=db.example.test");
}

}  // namespace
}  // namespace udon::state_pg
