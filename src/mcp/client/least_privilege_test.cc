#include "mcp/client/least_privilege.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

namespace udon::mcp {
namespace {

bool Has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

TEST(LeastPrivilegeTest, ReservedAndDefaultVariables) {
  for (const char* name : {"UDON_MCP_STATE", "UDON_MCP_EVIDENCE_KEY", "PGPASSWORD", "PGHOST", "PGPASSFILE"}) {
    EXPECT_TRUE(IsReservedVariable(name)) << name;
  }
  for (const char* name : {"UDON_T", "HOME", "NODE_ENV", "XPGHOST"}) EXPECT_FALSE(IsReservedVariable(name)) << name;
  for (const char* name : {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_TIME", "TZ",
                           "TMPDIR"}) {
    EXPECT_TRUE(IsDefaultVariable(name)) << name;
  }
  for (const char* name : {"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "LD_PRELOAD"}) {
    EXPECT_FALSE(IsDefaultVariable(name)) << name;
  }
}

TEST(LeastPrivilegeTest, ChildEnvironmentIsTheDefaultSetThenListedNamesThenTheEntrysEnv) {
  const char* parent[] = {"PATH=/usr/bin", "HOME=/root",       "LC_TIME=C",       "CANARY=parent-secret",
                          "LISTED=ok",     "PGPASSWORD=pg-pw", "UDON_MCP_STATE=x", "NOEQUALS",
                          nullptr};
  ServerConfig server;
  server.inherit_env = {"LISTED", "PGPASSWORD", "UDON_MCP_STATE"};  // reserved ones never pass
  server.env = {{"TOKEN", "from-config"}, {"HOME", "/srv"}, {"PGHOST", "db.example.test"}};
  const std::vector<std::string> env = ChildEnvironment(server, parent);
  EXPECT_EQ(env, (std::vector<std::string>{"HOME=/srv", "LC_TIME=C", "LISTED=ok", "PATH=/usr/bin",
                                           "PGHOST=db.example.test", "TOKEN=from-config"}));

  ServerConfig all;
  all.inherit_env_all = true;
  const std::vector<std::string> everything = ChildEnvironment(all, parent);
  EXPECT_TRUE(Has(everything, "CANARY=parent-secret"));
  EXPECT_FALSE(Has(everything, "PGPASSWORD=pg-pw"));
  EXPECT_FALSE(Has(everything, "UDON_MCP_STATE=x"));
}

TEST(LeastPrivilegeTest, InheritEnvTakesNamesOnly) {
  ServerConfig server;
  ASSERT_TRUE(ParseInheritEnv(json::Value({"A", "B_2"}), "/p", server).ok());
  EXPECT_EQ(server.inherit_env, (std::vector<std::string>{"A", "B_2"}));
  ASSERT_TRUE(ParseInheritEnv(true, "/p", server).ok());
  EXPECT_TRUE(server.inherit_env_all);

  for (const json::Value& bad : {json::Value({"*"}), json::Value({"AWS_*"}), json::Value({"LC_*"}),
                                 json::Value({".*"}), json::Value({""}), json::Value({1}), json::Value("A"),
                                 json::Value::object()}) {
    ServerConfig refused;
    Status status = ParseInheritEnv(bad, "/p", refused);
    ASSERT_FALSE(status.ok()) << bad.dump();
    EXPECT_EQ(status.error().code, "config.invalid");
  }
  for (const char* reserved : {"PGPASSWORD", "UDON_MCP_STATE"}) {
    ServerConfig refused;
    Status status = ParseInheritEnv(json::Value({"OK", reserved}), "/p", refused);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().pointer, "/p/1");
    EXPECT_EQ(status.error().details["variable"], reserved);
  }
}

TEST(LeastPrivilegeTest, SandboxSettings) {
  const EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "DATA") return "/srv/data";
    return std::nullopt;
  };
  auto on = ParseSandbox(true, env, "/base", "/s");
  ASSERT_TRUE(on.ok() && on->has_value());
  EXPECT_FALSE((*on)->network);
  EXPECT_TRUE((*on)->writable.empty());
  auto off = ParseSandbox(false, env, "/base", "/s");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->has_value());

  auto full = ParseSandbox(json::Value({{"network", true},
                                        {"writable", {"${env:DATA}", "out/../cache/"}},
                                        {"readable", {"models", "/etc/app.conf"}}}),
                           env, "/base", "/s");
  ASSERT_TRUE(full.ok()) << full.error().Describe();
  EXPECT_TRUE((*full)->network);
  EXPECT_EQ((*full)->writable, (std::vector<std::string>{"/srv/data", "/base/cache"}));
  EXPECT_EQ((*full)->readable, (std::vector<std::string>{"/base/models", "/etc/app.conf"}));
  EXPECT_TRUE((*full)->etc.empty()) << "the host's /etc unless the entry names its own";
  auto own_etc = ParseSandbox(json::Value({{"etc", "study-etc/"}}), env, "/base", "/s");
  ASSERT_TRUE(own_etc.ok()) << own_etc.error().Describe();
  EXPECT_EQ((*own_etc)->etc, "/base/study-etc");

  for (const json::Value& bad :
       {json::Value({{"netwrok", false}}), json::Value({{"network", "no"}}), json::Value({{"writable", "/x"}}),
        json::Value({{"writable", {""}}}), json::Value({{"writable", {"${env:UNSET}"}}}),
        json::Value({{"readable", "/x"}}), json::Value({{"readable", {1}}}), json::Value({{"readonly", {"/x"}}}),
        json::Value({{"etc", {"/x"}}}), json::Value({{"etc", ""}}), json::Value("yes")}) {
    auto refused = ParseSandbox(bad, env, "/base", "/s");
    ASSERT_FALSE(refused.ok()) << bad.dump();
    EXPECT_EQ(refused.error().code, "config.invalid");
  }
}

TEST(LeastPrivilegeTest, AMissingOrFailingBwrapIsConfigInvalid) {
  Status missing = CheckSandboxAvailable("/nonexistent/udon-bwrap");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "config.invalid");
  EXPECT_EQ(missing.error().details["reason"], "bwrap_missing");
  // /bin/false stands for a bwrap whose namespaces the kernel refuses.
  Status refused = CheckSandboxAvailable("/bin/false");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().details["reason"], "namespaces_refused");
  EXPECT_EQ(refused.error().details["exitStatus"], 1);
}

TEST(LeastPrivilegeTest, CheckRunnableNeedsTheListedPathsAndNeverShowsHome) {
  ServerConfig server;
  server.key = "fs";
  server.pointer = "/mcpServers/fs";
  EXPECT_TRUE(CheckRunnable(server, ProcessEnv()).ok());
  server.sandbox = SandboxSettings{false, {"/nonexistent/udon-writable"}, {}, {}};
  Status status = CheckRunnable(server, ProcessEnv());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "config.invalid");
  EXPECT_EQ(status.error().pointer, "/mcpServers/fs/sandbox/writable/0");
  EXPECT_EQ(status.error().details["server"], "fs");

  server.sandbox = SandboxSettings{false, {}, {"/etc", "/nonexistent/udon-readable"}, {}};
  status = CheckRunnable(server, ProcessEnv());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().pointer, "/mcpServers/fs/sandbox/readable/1");

  // The entry's own etc must be a directory: a file, or nothing, would leave /etc empty.
  for (const char* etc : {"/nonexistent/udon-etc", "/etc/hostname"}) {
    server.sandbox = SandboxSettings{};
    server.sandbox->etc = etc;
    status = CheckRunnable(server, ProcessEnv());
    ASSERT_FALSE(status.ok()) << etc;
    EXPECT_EQ(status.error().pointer, "/mcpServers/fs/sandbox/etc");
  }

  // $HOME, or a directory above it, would show every secret the empty $HOME hides.
  testing::TempDir dir;
  const std::string home = dir.File("home");
  std::filesystem::create_directories(home + "/project");
  const EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "HOME") return home + "/";
    return std::nullopt;
  };
  for (const SandboxSettings& exposing :
       {SandboxSettings{false, {}, {home}, {}}, SandboxSettings{false, {dir.path()}, {}, {}}}) {
    server.sandbox = exposing;
    status = CheckRunnable(server, env);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, "config.invalid");
    EXPECT_EQ(status.error().details["reason"], "home_exposed");
    EXPECT_EQ(status.error().message.find(home), std::string::npos) << "paths may come from ${env:...}";
  }
  server.sandbox = SandboxSettings{false, {home + "/project"}, {home + "/project"}, {}};
  if (CheckSandboxAvailable(BwrapPath(env)).ok()) {
    EXPECT_TRUE(CheckRunnable(server, env).ok());
  }
}

TEST(LeastPrivilegeTest, SandboxEvidenceCountsNeverShowsPaths) {
  RuntimeConfig config;
  ServerConfig plain;
  plain.key = "plain";
  ServerConfig boxed = plain;
  boxed.key = "boxed";
  boxed.sandbox = SandboxSettings{false, {"/secret/path"}, {"/a", "/b"}, {}};
  ServerConfig web;
  web.type = ServerType::kHttp;
  config.servers = {{"plain", plain}, {"boxed", boxed}, {"web", web}};
  EXPECT_EQ(SandboxEvidence(&config, "plain"), json::Value({{"enabled", false}}));
  EXPECT_EQ(SandboxEvidence(&config, "boxed"),
            json::Value({{"enabled", true}, {"network", false}, {"readable", 2}, {"writable", 1}}));
  EXPECT_TRUE(SandboxEvidence(&config, "web").is_null());
  EXPECT_TRUE(SandboxEvidence(&config, "absent").is_null());
  EXPECT_TRUE(SandboxEvidence(nullptr, "plain").is_null());
}

// Each way of closing, in a forked child: descriptors opened without O_CLOEXEC, above and
// below the one kept, are gone; 0, 1, 2 and the kept one stay.
class CloseDescriptorsTest : public ::testing::TestWithParam<CloseMethod> {};

TEST_P(CloseDescriptorsTest, ClosesEverythingFromThreeButTheKeptOne) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A small limit keeps the last resort's walk short wherever the default is huge.
    rlimit limit{256, 256};
    setrlimit(RLIMIT_NOFILE, &limit);
    int opened[8];
    for (int& fd : opened) fd = open("/dev/null", O_RDONLY);
    const int keep = opened[3];
    if (!CloseInheritedDescriptors(keep, GetParam())) _exit(2);
    for (int fd : opened) {
      const bool open_now = fcntl(fd, F_GETFD) != -1;
      if (open_now != (fd == keep)) _exit(3);
    }
    for (int fd = 0; fd < 3; ++fd) {
      if (fcntl(fd, F_GETFD) == -1) _exit(4);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

INSTANTIATE_TEST_SUITE_P(Methods, CloseDescriptorsTest,
                         ::testing::Values(CloseMethod::kBest, CloseMethod::kProcSelfFd, CloseMethod::kRlimit));

}  // namespace
}  // namespace udon::mcp
