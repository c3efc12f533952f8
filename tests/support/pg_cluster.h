// A throwaway PostgreSQL cluster for tests of the shared state store (issue 19): initdb in
// a temporary directory, the server on a Unix socket in that directory only, torn down
// (fast shutdown, then SIGKILL of its process group) when the object goes, whatever the
// test's outcome. As root (CI), initdb and postgres run as the unprivileged "nobody"
// through setpriv, in a directory owned by it: initdb refuses to run as root. With TLS
// (issue 29) it also listens on 127.0.0.1, on a free port, with ssl=on.
#pragma once

#include <sys/types.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "test_support.h"

namespace udon::testing {

// A server certificate and its key for a cluster with ssl=on.
struct PgTls {
  std::string cert_file;
  std::string key_file;
};

// A throwaway CA and a server certificate it signed for `host` (its subjectAltName), made
// with the openssl CLI in `dir`: ca.crt, server.crt, server.key. nullopt when openssl
// failed; `failure` says how.
struct TestCertificates {
  std::string ca_cert;
  PgTls server;
};
std::optional<TestCertificates> MakeTestCertificates(const std::string& dir, const std::string& host,
                                                     std::string& failure);

class PgCluster {
 public:
  // pg_config --bindir, else /usr/lib/postgresql/15/bin; nullopt when neither holds
  // initdb and postgres.
  static std::optional<std::string> BinDir();

  // initdb and start; ok() says whether both worked. With `tls`, TCP on 127.0.0.1 too.
  explicit PgCluster(std::optional<PgTls> tls = std::nullopt);
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  bool ok() const { return running_; }
  int port() const { return port_; }  // the Unix socket's, and 127.0.0.1's with TLS
  const std::string& failure() const { return failure_; }  // initdb's or postgres's log
  // postgresql:///postgres?host=<socket dir>&port=<port>&user=udon
  std::string Url() const;
  // The same with a password in the userinfo (trust authentication ignores it), for tests
  // proving it never surfaces.
  std::string UrlWithPassword(const std::string& password) const;
  // Fast shutdown (SIGINT): every session ends, as a crashed or restarted database's.
  void Stop();
  bool Start();
  // One statement through psql; its unaligned, tuples-only output.
  ProcessResult Psql(const std::string& sql) const;
  // pg_dump of the database, as plain SQL: what someone with a copy of it can read.
  ProcessResult Dump() const;

 private:
  bool WaitReady();
  bool InstallTls(const PgTls& tls);
  std::string bin_;
  std::string dir_;
  int port_ = 5432;
  pid_t pid_ = -1;
  bool running_ = false;
  bool tls_ = false;
  std::string failure_;
};

}  // namespace udon::testing

// Tests that need a cluster skip only when the PostgreSQL binaries are absent, and never
// under CI; a cluster that is there and does not start fails the test.
#define UDON_REQUIRE_POSTGRES()                                                        \
  do {                                                                                 \
    if (!::udon::testing::PgCluster::BinDir()) {                                       \
      if (std::getenv("CI") != nullptr) {                                              \
        FAIL() << "PostgreSQL binaries missing: run scripts/install-deps.sh";          \
      }                                                                                \
      GTEST_SKIP() << "PostgreSQL binaries not installed (postgresql-15)";             \
    }                                                                                  \
  } while (false)
