#include "state_pg/uri.h"

#include <gtest/gtest.h>

namespace udon::state_pg {
namespace {

TEST(RedactUriTest, PasswordsNeverSurvive) {
  EXPECT_EQ(RedactUri("postgresql://udon:s3cret@db.example.test:5432/state"),
            "postgresql://udon:***@db.example.test:5432/state");
  EXPECT_EQ(RedactUri("postgres://udon:p@ss@word@db/state?sslmode=require"),
            "postgres://udon:***@db/state?sslmode=require");
  EXPECT_EQ(RedactUri("postgresql:///state?host=/run/pg&password=s3cret&user=udon"),
            "postgresql:///state?host=/run/pg&password=***&user=udon");
  // The client key's passphrase is a secret too.
  EXPECT_EQ(RedactUri("postgres://db/state?sslmode=require&sslpassword=k3y"),
            "postgres://db/state?sslmode=require&sslpassword=***");
}

TEST(RedactUriTest, UrisWithoutPasswordsStayAsTheyAre) {
  EXPECT_EQ(RedactUri("postgresql://udon@db/state"), "postgresql://udon@db/state");
  EXPECT_EQ(RedactUri("postgresql:///state?host=/run/pg"), "postgresql:///state?host=/run/pg");
  EXPECT_EQ(RedactUri("host=db password=s3cret"), "(a connection string)");
}

}  // namespace
}  // namespace udon::state_pg
