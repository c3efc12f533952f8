#include "mcp/client/sandbox_layout.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace udon::mcp {
namespace {

namespace fs = std::filesystem;
using Argv = std::vector<std::string>;

// The index of `item` in argv, or -1.
long IndexOf(const Argv& argv, const std::string& item, long from = 0) {
  auto it = std::find(argv.begin() + from, argv.end(), item);
  return it == argv.end() ? -1 : it - argv.begin();
}

// The index of the mount `op SOURCE DEST` (or `op DEST` for one-path ops) at `dest`, or -1.
long MountAt(const Argv& argv, const std::string& op, const std::string& dest) {
  const long separator = IndexOf(argv, "--");
  for (long i = 0; i + 1 < separator; ++i) {
    if (argv[i] != op) continue;
    const bool two_paths = op == "--ro-bind" || op == "--bind" || op == "--symlink";
    if (argv[i + (two_paths ? 2 : 1)] == dest) return i;
  }
  return -1;
}

// Every destination the argv mounts or creates, before the command.
std::vector<std::string> Destinations(const Argv& argv) {
  std::vector<std::string> out;
  const long separator = IndexOf(argv, "--");
  for (long i = 0; i + 1 < separator; ++i) {
    const std::string& op = argv[i];
    if (op == "--ro-bind" || op == "--bind" || op == "--symlink") out.push_back(argv[i + 2]);
    if (op == "--tmpfs" || op == "--proc" || op == "--dev" || op == "--dir") out.push_back(argv[i + 1]);
  }
  return out;
}

void WriteExecutable(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  {
    std::ofstream out(path, std::ios::binary);
    out << content;
  }
  chmod(path.c_str(), 0755);
}

TEST(SandboxLayoutTest, CutsEveryNamespaceAndShowsOnlyTheSystemDirectoriesAndPrivateOnes) {
  SandboxHost host;
  host.home = "/home/runner";
  host.path = "/usr/bin:/bin";
  const Argv argv = SandboxArgv("/usr/bin/bwrap", SandboxSettings{}, host, "", {"true"});
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  for (const char* flag :
       {"--unshare-all", "--unshare-user", "--unshare-net", "--die-with-parent", "--new-session"}) {
    EXPECT_GE(IndexOf(argv, flag), 0) << flag;
  }
  EXPECT_EQ(IndexOf(argv, "--share-net"), -1);
  EXPECT_EQ(argv[IndexOf(argv, "--cap-drop") + 1], "ALL");
  // The host's root is never bound: only what the layout names exists inside.
  EXPECT_EQ(MountAt(argv, "--ro-bind", "/"), -1);
  for (const char* dir : {"/usr", "/etc"}) EXPECT_GE(MountAt(argv, "--ro-bind", dir), 0) << dir;
  for (const char* dir : {"/bin", "/sbin"}) {
    std::error_code ignored;
    if (!fs::exists(dir, ignored)) continue;
    EXPECT_GE(std::max(MountAt(argv, "--ro-bind", dir), MountAt(argv, "--symlink", dir)), 0) << dir;
  }
  for (const char* dir : {"/tmp", "/dev/shm", "/home/runner"}) EXPECT_GE(MountAt(argv, "--tmpfs", dir), 0) << dir;
  EXPECT_GE(MountAt(argv, "--proc", "/proc"), 0);
  EXPECT_GE(MountAt(argv, "--dev", "/dev"), 0);
  for (const std::string& dest : Destinations(argv)) {
    for (const char* hidden : {"/run", "/var", "/srv", "/mnt", "/media", "/root", "/sys"}) {
      EXPECT_FALSE(IsPathUnder(dest, hidden)) << dest << " is under " << hidden;
    }
  }
  // The root itself read-only, after everything was mounted on it.
  const long remount = IndexOf(argv, "--remount-ro");
  ASSERT_GE(remount, 0);
  EXPECT_EQ(argv[remount + 1], "/");
  EXPECT_EQ(argv[IndexOf(argv, "--") - 1], "/");

  SandboxSettings networked;
  networked.network = true;
  const Argv shared = SandboxArgv("/usr/bin/bwrap", networked, host, "", {"true"});
  EXPECT_GE(IndexOf(shared, "--share-net"), 0);
  EXPECT_EQ(IndexOf(shared, "--unshare-net"), -1);
}

// Issue 38: an entry's own etc directory stands in for the host's /etc (the drift study's
// captures: /etc/shadow and the host's accounts never reach a package it runs).
TEST(SandboxLayoutTest, AnEntrysOwnEtcDirectoryReplacesTheHostsEtc) {
  SandboxSettings sandbox;
  sandbox.etc = "/srv/study/etc";
  SandboxHost host;
  host.path = "/usr/bin";
  const Argv argv = SandboxArgv("/usr/bin/bwrap", sandbox, host, "", {"true"});
  const long own = MountAt(argv, "--ro-bind", "/etc");
  ASSERT_GE(own, 0);
  EXPECT_EQ(argv[own + 1], "/srv/study/etc");
  for (long i = 0; i + 2 < static_cast<long>(argv.size()); ++i) {
    if (argv[i] == "--ro-bind" || argv[i] == "--bind") {
      EXPECT_NE(argv[i + 1], "/etc") << "the host's /etc is bound";
    }
  }
}

TEST(SandboxLayoutTest, ListedPathsComeAfterThePrivateDirectoriesAndTheStartDirectoryIsEmpty) {
  SandboxSettings sandbox;
  sandbox.writable = {"/tmp/job/out"};
  sandbox.readable = {"/tmp/job/in"};
  SandboxHost host;
  host.path = "/usr/bin";
  const Argv argv = SandboxArgv("/usr/bin/bwrap", sandbox, host, "/tmp/job", {"node", "server.js"});
  const long tmpfs = MountAt(argv, "--tmpfs", "/tmp");
  const long readable = MountAt(argv, "--ro-bind", "/tmp/job/in");
  const long writable = MountAt(argv, "--bind", "/tmp/job/out");
  ASSERT_GE(tmpfs, 0);
  EXPECT_GT(readable, tmpfs) << "a readable path under /tmp must be bound over the private /tmp";
  EXPECT_GT(writable, tmpfs);
  // The start directory is created (empty), never bound: it may hold the configuration.
  EXPECT_EQ(MountAt(argv, "--ro-bind", "/tmp/job"), -1);
  EXPECT_GT(MountAt(argv, "--dir", "/tmp/job"), writable);
  EXPECT_EQ(argv[IndexOf(argv, "--chdir") + 1], "/tmp/job");
  const long separator = IndexOf(argv, "--");
  EXPECT_EQ(Argv(argv.begin() + separator + 1, argv.end()), (Argv{"node", "server.js"}));
}

TEST(SandboxLayoutTest, FindExecutableFollowsThePathAsExecvpDoes) {
  testing::TempDir dir;
  WriteExecutable(dir.File("b/tool"), "#!/bin/sh\n");
  fs::create_directories(dir.File("a"));
  dir.Write("a/tool", "not executable");
  EXPECT_EQ(FindExecutable("tool", dir.File("a") + ":" + dir.File("b"), "/"), dir.File("b/tool"));
  EXPECT_EQ(FindExecutable("tool", "b", dir.path()), dir.File("b/tool"));
  EXPECT_EQ(FindExecutable("./b/tool", "/nowhere", dir.path()), dir.File("b/tool"));
  EXPECT_EQ(FindExecutable("absent-udon-tool", "/usr/bin:/bin", "/"), "");
}

// npm install -g --prefix ~/prefix: bin/tool -> ../lib/node_modules/@scope/pkg/dist/index.js,
// run by `#!/usr/bin/env fakenode`, itself a symlink in another prefix under $HOME.
TEST(SandboxLayoutTest, AnNpmPrefixUnderHomeBringsItsBinLibAndInterpreterButNeverHome) {
  testing::TempDir dir;
  const std::string home = dir.File("home");
  const std::string package = home + "/prefix/lib/node_modules/@scope/pkg";
  WriteExecutable(package + "/dist/index.js", "#!/usr/bin/env fakenode\nconsole.log(1)\n");
  dir.Write("home/prefix/lib/node_modules/@scope/pkg/package.json", "{}");
  fs::create_directories(home + "/prefix/bin");
  fs::create_symlink("../lib/node_modules/@scope/pkg/dist/index.js", home + "/prefix/bin/tool");
  WriteExecutable(dir.File("runtime/bin/fakenode-real"), "\x7f" "ELF");
  fs::create_directories(home + "/nodes/bin");
  fs::create_symlink(dir.File("runtime/bin/fakenode-real"), home + "/nodes/bin/fakenode");
  dir.Write("home/.pgpass", "secret");
  SandboxHost host;
  host.home = home;
  host.path = home + "/prefix/bin:" + home + "/nodes/bin:/usr/bin";
  const std::vector<std::string> trees = CommandTrees({"tool", "/srv/reports"}, dir.path(), host);
  EXPECT_EQ(trees, (std::vector<std::string>{home + "/nodes/bin", home + "/prefix/bin", home + "/prefix/lib",
                                             dir.File("runtime/bin")}));

  // A script right in $HOME (`node ~/server.js`) is bound alone, never $HOME.
  WriteExecutable(home + "/server.js", "console.log(1)\n");
  EXPECT_EQ(CommandTrees({"true", home + "/server.js"}, "/", host), (std::vector<std::string>{home + "/server.js"}));
  const Argv argv = SandboxArgv("/usr/bin/bwrap", SandboxSettings{}, host, "", {"tool"});
  EXPECT_GT(MountAt(argv, "--ro-bind", home + "/prefix/lib"), MountAt(argv, "--tmpfs", home));
  for (const std::string& dest : Destinations(argv)) EXPECT_NE(dest, home + "/.pgpass");
}

TEST(SandboxLayoutTest, AScriptArgumentBringsItsPackageTreeUnderTmp) {
  testing::TempDir dir;
  dir.Write("package.json", "{}");
  WriteExecutable(dir.File("dist/server.js"), "console.log(1)\n");
  SandboxHost host;
  host.path = "/usr/bin:/bin";
  // node from the system is visible already; the script's package root comes along.
  EXPECT_EQ(CommandTrees({"sh", dir.File("dist/server.js")}, "/", host), (std::vector<std::string>{dir.path()}));
  EXPECT_EQ(CommandTrees({"sh", "dist/server.js"}, dir.path(), host), (std::vector<std::string>{dir.path()}));
  // Options and paths that are not files bring nothing.
  EXPECT_TRUE(CommandTrees({"sh", "-c", "true"}, dir.path(), host).empty());
  EXPECT_TRUE(CommandTrees({"sh", dir.path()}, "/", host).empty());
  // A command right in /tmp is bound alone, never the host's /tmp.
  WriteExecutable("/tmp/udon-layout-test-" + std::to_string(getpid()), "#!/bin/sh\n");
  const std::string loose = "/tmp/udon-layout-test-" + std::to_string(getpid());
  EXPECT_EQ(CommandTrees({loose}, "/", host), (std::vector<std::string>{loose}));
  fs::remove(loose);
}

TEST(SandboxLayoutTest, UdonMcpsOwnFilesAreMaskedWhereverABindShowsThem) {
  testing::TempDir dir;
  fs::create_directories(dir.File("shared/state/invalidated"));
  dir.Write("shared/mcp.json", "{}");
  dir.Write("shared/notes.txt", "ok");
  SandboxSettings sandbox;
  sandbox.readable = {dir.File("shared")};
  SandboxHost host;
  host.path = "/usr/bin";
  host.hidden = {dir.File("shared/state"), dir.File("shared/mcp.json"), dir.File("absent"), "/var/lib/udon"};
  const Argv argv = SandboxArgv("/usr/bin/bwrap", sandbox, host, "", {"true"});
  const long bind = MountAt(argv, "--ro-bind", dir.File("shared"));
  ASSERT_GE(bind, 0);
  EXPECT_GT(MountAt(argv, "--tmpfs", dir.File("shared/state")), bind);
  const long file = MountAt(argv, "--ro-bind", dir.File("shared/mcp.json"));
  ASSERT_GT(file, bind);
  EXPECT_EQ(argv[file + 1], "/dev/null");
  // Paths no bind shows, or that do not exist, need no mask.
  EXPECT_EQ(MountAt(argv, "--tmpfs", dir.File("absent")), -1);
  EXPECT_EQ(MountAt(argv, "--tmpfs", "/var/lib/udon"), -1);
}

TEST(SandboxLayoutTest, HiddenPathsAreRegisteredOnceAndAbsolute) {
  HideFromSandboxes("relative-udon-test-file");
  HideFromSandboxes("relative-udon-test-file");
  HideFromSandboxes("");
  const SandboxHost host = CurrentSandboxHost({"PATH=/opt/x:/usr/bin", "HOME=/ignored"});
  EXPECT_EQ(host.path, "/opt/x:/usr/bin");
  EXPECT_EQ(std::count(host.hidden.begin(), host.hidden.end(), AbsolutePath("relative-udon-test-file", "")), 1);
  EXPECT_EQ(CurrentSandboxHost({}).path, "/bin:/usr/bin");
  EXPECT_EQ(AbsolutePath("a/../b/", "/base"), "/base/b");
  EXPECT_TRUE(IsPathUnder("/a/b", "/a"));
  EXPECT_FALSE(IsPathUnder("/ab", "/a"));
  EXPECT_TRUE(IsPathUnder("/a", "/"));
}

}  // namespace
}  // namespace udon::mcp
