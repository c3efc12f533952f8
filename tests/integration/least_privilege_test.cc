// Least privilege for the stdio servers udon-mcp starts (docs/contract.md 7.10), witnessed by
// the server itself: udon-privilege-peer (tests/support/privilege_peer.cc) reports its
// environment's names, the descriptors it inherited, whether it could reach a listener on
// the host's 127.0.0.1 or on host Unix sockets, and which files it could read, write or
// remove.
//
// - Environment and descriptors through the client library (the transport under test),
//   and the reserved variables through the real udon-mcp binary as well.
// - The sandbox through the real udon-mcp binary: capture and a gated call still work, the
//   host's loopback is out of reach, only the writable directories (and a private /tmp)
//   can be written, and the evidence says so; the unsandboxed control can connect.
// - Issue #29: no host Unix socket (under /run, /tmp, /var/tmp, $HOME) connects from
//   inside, $HOME is empty, the state directory, the configuration and the evidence file
//   stay masked even where a visible tree holds them; a server copied under /tmp and the
//   real filesystem server installed under a prefix in $HOME still run sandboxed.
// - A sandbox that cannot be built (no bwrap, a kernel refusing namespaces) is
//   config.invalid and the server never starts.
// These tests need a working bubblewrap: where it cannot create namespaces they fail with
// bwrap's reason rather than pass.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "json/json.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"
#include "mcp/client/least_privilege.h"
#include "test_support.h"

namespace udon {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::TempDir;

constexpr const char* kCanary = "UDON_LP_CANARY";
constexpr const char* kListed = "UDON_LP_LISTED";

std::string PeerBinary() { return testing::BinaryDir() + "/tests/integration/udon-privilege-peer"; }

bool Contains(const json::Value& array, const json::Value& item) {
  return std::find(array.begin(), array.end(), item) != array.end();
}

// Fails (never skips under CI) when this machine cannot run the sandbox, with bwrap's reason.
void RequireSandbox() {
  if (access("/usr/bin/bwrap", X_OK) != 0 && std::getenv("CI") == nullptr) {
    GTEST_SKIP() << "bubblewrap is not installed (scripts/install-deps.sh installs it)";
  }
  Status available = mcp::CheckSandboxAvailable("/usr/bin/bwrap");
  ASSERT_TRUE(available.ok()) << "the sandbox cannot run here: " << available.error().Describe() << " "
                              << available.error().details.dump();
}

// A listener on the host's 127.0.0.1: connect() succeeds through the backlog alone.
class LoopbackListener {
 public:
  LoopbackListener() : fd_(testing::ListenOnLoopback(port_)) {}
  ~LoopbackListener() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }

 private:
  int port_ = 0;
  int fd_ = -1;
};

// A listener on a host Unix socket: connect() succeeds through the backlog alone.
class UnixListener {
 public:
  explicit UnixListener(std::string path) : path_(std::move(path)) {
    sockaddr_un address{};
    if (path_.size() >= sizeof address.sun_path) return;
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd_, 16) != 0)) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~UnixListener() {
    if (fd_ < 0) return;
    close(fd_);
    unlink(path_.c_str());
  }
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;
  bool listening() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Sets variables in this process (the parent udon-mcp's environment) for one test.
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> values) : values_(std::move(values)) {
    for (const auto& [name, value] : values_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : values_) unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> values_;
};

void WriteFile(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

bool ConnectsToUnixSocket(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

// Where the host's Unix sockets live: /run (a directory of the test's own when it may
// create one there, as root in CI, else $XDG_RUNTIME_DIR when under /run), /tmp, /var/tmp
// and `home`.
std::vector<std::string> SocketDirectories(const std::string& run_dir, const std::string& home) {
  std::vector<std::string> dirs;
  std::error_code error;
  if (fs::create_directory(run_dir, error) || fs::is_directory(run_dir, error)) {
    dirs.push_back(run_dir);
  } else if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime != nullptr &&
                                                                   std::string(runtime).rfind("/run/", 0) == 0) {
    dirs.push_back(runtime);
  }
  dirs.insert(dirs.end(), {"/tmp", "/var/tmp", home});
  return dirs;
}

// The names a package.json lists under dependencies, optionalDependencies and
// peerDependencies (npm installs peers too), for it and the packages nested under it.
std::vector<std::string> Dependencies(const std::string& package_dir) {
  std::vector<std::string> names;
  std::ifstream in(package_dir + "/package.json");
  std::stringstream text;
  text << in.rdbuf();
  const json::Value manifest = json::Value::parse(text.str(), nullptr, false);
  for (const char* member : {"dependencies", "optionalDependencies", "peerDependencies"}) {
    if (!manifest.is_object() || !manifest.contains(member)) continue;
    for (const auto& [name, range] : manifest[member].items()) names.push_back(name);
  }
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(package_dir + "/node_modules", ignored)) {
    const std::string name = entry.path().filename().string();
    std::vector<fs::path> nested_packages;
    if (name[0] == '@') {
      for (const auto& scoped : fs::directory_iterator(entry.path(), ignored)) nested_packages.push_back(scoped.path());
    } else if (name[0] != '.') {
      nested_packages.push_back(entry.path());
    }
    for (const fs::path& nested : nested_packages) {
      for (const std::string& dependency : Dependencies(nested.string())) names.push_back(dependency);
    }
  }
  return names;
}

// A copy of a package directory: hard links where the file system allows them.
void CopyPackage(const std::string& from, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  std::error_code error;
  const auto options = fs::copy_options::recursive | fs::copy_options::copy_symlinks;
  fs::copy(from, to, options | fs::copy_options::create_hard_links, error);
  if (!error) return;
  fs::remove_all(to, error);
  fs::copy(from, to, options);
}

// What `npm install -g --prefix PREFIX PACKAGE` leaves, without the network: the package
// from tests/node_modules in PREFIX/lib/node_modules with every dependency it needs nested
// under it, and its bin links in PREFIX/bin.
void InstallUnderPrefix(const std::string& package, const std::string& prefix) {
  const std::string target = prefix + "/lib/node_modules/" + package;
  CopyPackage(testing::PeerModuleDir(package), target);
  std::set<std::string> copied;
  std::vector<std::string> pending = Dependencies(target);
  while (!pending.empty()) {
    const std::string name = pending.back();
    pending.pop_back();
    if (!copied.insert(name).second || !fs::exists(testing::PeerModuleDir(name))) continue;
    CopyPackage(testing::PeerModuleDir(name), target + "/node_modules/" + name);
    for (const std::string& dependency : Dependencies(testing::PeerModuleDir(name))) pending.push_back(dependency);
  }
  std::ifstream in(target + "/package.json");
  std::stringstream text;
  text << in.rdbuf();
  fs::create_directories(prefix + "/bin");
  const json::Value manifest = json::Value::parse(text.str());
  for (const auto& [name, path] : manifest["bin"].items()) {
    fs::create_symlink("../lib/node_modules/" + package + "/" + path.get<std::string>(), prefix + "/bin/" + name);
  }
}

// The peer's report for one `inspect` call through the client library.
json::Value Inspect(const mcp::ServerConfig& server, const json::Value& arguments = json::Value::object()) {
  mcp::ClientOptions options;
  options.request_timeout = std::chrono::seconds(30);
  auto client = mcp::Client::Connect(server, options);
  EXPECT_TRUE(client.ok()) << client.error().Describe();
  if (!client.ok()) return nullptr;
  auto opened = (*client)->Negotiate();
  EXPECT_TRUE(opened.ok()) << opened.error().Describe();
  auto outcome = (*client)->CallTool("inspect", arguments);
  (*client)->Close();
  EXPECT_TRUE(outcome.ok() && outcome->result) << (outcome.ok() ? "no result" : outcome.error().Describe());
  if (!outcome.ok() || !outcome->result) return nullptr;
  return (*outcome->result)["structuredContent"];
}

mcp::ServerConfig Parse(const json::Value& entry) {
  auto config = mcp::ParseRuntimeConfig(json::Value({{"mcpServers", {{"peer", entry}}}}).dump(), mcp::ProcessEnv());
  EXPECT_TRUE(config.ok()) << config.error().Describe();
  return config.ok() ? config->servers.at("peer") : mcp::ServerConfig{};
}

TEST(LeastPrivilegeTest, TheServerSeesTheDefaultSetItsEnvAndWhatItsEntryListsOnly) {
  ScopedEnv parent({{kCanary, "cnry-parent-1"}, {kListed, "listed"}, {"PGPASSWORD", "pg-secret"},
                    {"UDON_MCP_STATE", "postgres://state"}, {"LC_TIME", "C"}});
  const json::Value env = Inspect(Parse({{"command", PeerBinary()},
                                         {"env", {{"CONFIGURED", "yes"}}},
                                         {"inheritEnv", {kListed}}}))["env"];
  EXPECT_FALSE(Contains(env, kCanary)) << env.dump();
  EXPECT_TRUE(Contains(env, kListed)) << env.dump();
  EXPECT_TRUE(Contains(env, "CONFIGURED")) << env.dump();
  EXPECT_TRUE(Contains(env, "PATH")) << env.dump();
  EXPECT_TRUE(Contains(env, "LC_TIME")) << env.dump();
  EXPECT_FALSE(Contains(env, "PGPASSWORD")) << env.dump();
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE")) << env.dump();
}

TEST(LeastPrivilegeTest, StateUrlAndPasswordNeverReachAServerEvenWhenListed) {
  ScopedEnv parent({{kCanary, "cnry-parent-2"}, {"PGPASSWORD", "pg-secret"}, {"UDON_MCP_STATE", "postgres://state"}});
  // Built by hand: the configuration loader refuses these entries before they get here.
  mcp::ServerConfig listed;
  listed.key = "peer";
  listed.command = PeerBinary();
  listed.inherit_env = {"PGPASSWORD", "UDON_MCP_STATE"};
  const json::Value env = Inspect(listed)["env"];
  EXPECT_FALSE(Contains(env, "PGPASSWORD")) << env.dump();
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE")) << env.dump();

  mcp::ServerConfig everything = listed;
  everything.inherit_env_all = true;
  const json::Value all = Inspect(everything)["env"];
  EXPECT_TRUE(Contains(all, kCanary)) << all.dump();
  EXPECT_FALSE(Contains(all, "PGPASSWORD")) << all.dump();
  EXPECT_FALSE(Contains(all, "UDON_MCP_STATE")) << all.dump();
}

TEST(LeastPrivilegeTest, OnlyStdinStdoutAndStderrReachTheServer) {
  // Descriptors opened the careless way (no O_CLOEXEC), as a library or a stream might.
  const int file = open("/dev/null", O_RDONLY);
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(file, 3);
  ASSERT_GE(sock, 3);
  mcp::ServerConfig server;
  server.key = "peer";
  server.command = PeerBinary();
  EXPECT_EQ(Inspect(server)["fds"], json::Value({0, 1, 2}));
  close(file);
  close(sock);
}

TEST(LeastPrivilegeTest, OnlyStdinStdoutAndStderrReachASandboxedServer) {
  RequireSandbox();
  const int file = open("/dev/null", O_RDONLY);
  ASSERT_GE(file, 3);
  mcp::ServerConfig server;
  server.key = "peer";
  server.command = PeerBinary();
  server.sandbox = mcp::SandboxSettings{};
  EXPECT_EQ(Inspect(server)["fds"], json::Value({0, 1, 2}));
  close(file);
}

// capture, review, digest and a gated call through the udon-mcp binary.
class SandboxCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outside_ = testing::BinaryDir() + "/tests/integration/least-privilege-outside-" + std::to_string(getpid());
    fs::create_directories(outside_);
    fs::create_directories(dir_.File("out"));
    fs::create_directories(dir_.File("state"));
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(outside_, ignored);
  }

  ProcessResult Udon(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    testing::RunOptions options;
    options.env = std::move(env);
    options.env.insert(env_.begin(), env_.end());
    options.env.emplace("UDON_MCP_STATE_DIR", dir_.File("state"));
    options.cwd = dir_.path();
    return testing::RunProcess(args, options);
  }

  void WriteConfig(const json::Value& entry) {
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"peer", entry}}}}).dump(2));
  }

  // capture + review + digest; returns the pin.
  std::string Reviewed() {
    ProcessResult capture = Udon({"capture", "--server", "peer", "-o", "tools.json"});
    EXPECT_EQ(capture.exit_code, 0) << capture.out << capture.err;
    ProcessResult review = Udon({"review", "tools.json", "--server", "peer", "--tool", "inspect", "--reviewer",
                                 "tester@example.test", "--headless", "--independent-calls", "--model-backed",
                                 "false", "--side-effect", "writes_files", "--concurrency", "safe",
                                 "--reference-based-io", "--channel", "/connectPort=data", "--channel",
                                 "/writePaths=data", "--channel", "/connectSockets=data", "--channel",
                                 "/readPaths=data", "--channel", "/removePaths=data"});
    EXPECT_EQ(review.exit_code, 0) << review.out << review.err;
    return Udon({"digest", "tools.json"}).out.substr(0, 64);
  }

  ProcessResult Call(const std::string& sha, const json::Value& arguments,
                     std::map<std::string, std::string> env = {}) {
    return Udon({"call", "--json", "--manifest", "tools.json", "--sha256", sha, "--server", "peer", "--tool", "inspect",
                 "--args", arguments.dump(), "--expect-output", "--evidence", "evidence.jsonl"},
                std::move(env));
  }

  json::Value LastEvidence() {
    std::istringstream lines(dir_.Read("evidence.jsonl"));
    std::string line, last;
    while (std::getline(lines, line)) {
      if (!line.empty()) last = line;
    }
    return json::Value::parse(last);
  }

  TempDir dir_;
  // A host directory outside /tmp, not listed as writable, inside the tree of the peer's
  // binary: visible, read-only, to a sandboxed peer unless something hides it.
  std::string outside_;
  std::map<std::string, std::string> env_;  // for every udon-mcp run of the test
};

TEST_F(SandboxCliTest, ASandboxedServerAnswersCaptureAndAGatedCallButReachesNeitherLoopbackNorFiles) {
  RequireSandbox();
  LoopbackListener listener;
  ASSERT_GT(listener.port(), 0);
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"network", false}, {"writable", {dir_.File("out")}}}}});
  const std::string sha = Reviewed();
  const std::string private_tmp = "/tmp/udon-lp-private-" + std::to_string(getpid());
  ProcessResult call = Call(sha, {{"connectPort", listener.port()},
                                  {"writePaths", {dir_.File("out/allowed.txt"), outside_ + "/denied.txt",
                                                  dir_.File("denied.txt"), private_tmp}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["connected"], false) << "the host's 127.0.0.1 must be out of reach";
  // The start directory (dir_) is an empty private one inside: a write there stays inside.
  EXPECT_EQ(report["written"], json::Value({true, false, true, true})) << report.dump();
  EXPECT_EQ(report["fds"], json::Value({0, 1, 2}));
  EXPECT_TRUE(fs::exists(dir_.File("out/allowed.txt")));
  EXPECT_FALSE(fs::exists(outside_ + "/denied.txt"));
  EXPECT_FALSE(fs::exists(dir_.File("denied.txt")));
  EXPECT_FALSE(fs::exists(private_tmp)) << "the sandbox's /tmp must be its own";
  const json::Value evidence = LastEvidence();
  EXPECT_EQ(evidence["sandbox"],
            json::Value({{"enabled", true}, {"network", false}, {"readable", 0}, {"writable", 1}}))
      << evidence.dump();
}

TEST_F(SandboxCliTest, WithoutASandboxTheSameServerReachesTheHostLoopback) {
  LoopbackListener listener;
  WriteConfig({{"command", PeerBinary()}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"connectPort", listener.port()}, {"writePaths", {outside_ + "/control.txt"}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["connected"], true);
  EXPECT_EQ(report["written"], json::Value({true}));
  EXPECT_EQ(LastEvidence()["sandbox"], json::Value({{"enabled", false}}));
}

TEST_F(SandboxCliTest, NetworkTrueKeepsTheHostNetwork) {
  RequireSandbox();
  LoopbackListener listener;
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"network", true}}}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"connectPort", listener.port()}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_EQ(json::Value::parse(call.out)["structuredContent"]["connected"], true);
  EXPECT_EQ(LastEvidence()["sandbox"],
            json::Value({{"enabled", true}, {"network", true}, {"readable", 0}, {"writable", 0}}));
}

TEST_F(SandboxCliTest, ASandboxThatCannotBeBuiltIsConfigInvalidAndNothingStarts) {
  RequireSandbox();
  WriteConfig({{"command", PeerBinary()}, {"sandbox", true}});
  const std::string sha = Reviewed();
  // A missing bwrap, and one that fails the probe as a kernel refusing namespaces would.
  for (const auto& [bwrap, reason] : std::vector<std::pair<std::string, std::string>>{
           {"/nonexistent/bwrap", "bwrap_missing"}, {"/bin/false", "namespaces_refused"}}) {
    SCOPED_TRACE(bwrap);
    WriteConfig({{"command", PeerBinary()}, {"args", {"--touch", dir_.File("started")}}, {"sandbox", true}});
    ProcessResult call = Call(sha, json::Value::object(), {{"UDON_MCP_BWRAP", bwrap}});
    EXPECT_EQ(call.exit_code, 2) << call.out << call.err;
    const json::Value out = json::Value::parse(call.out);
    EXPECT_EQ(out["code"], "config.invalid") << call.out;
    EXPECT_EQ(out["details"]["reason"], reason) << call.out;
    EXPECT_EQ(out["details"]["server"], "peer") << call.out;
    // UDON_MCP_BWRAP's value is an environment value: never in a message or details.
    EXPECT_EQ((call.out + call.err).find(bwrap), std::string::npos) << call.out << call.err;
    EXPECT_FALSE(fs::exists(dir_.File("started"))) << "the server started without its sandbox";
    ProcessResult capture = Udon({"capture", "--server", "peer", "-o", "again.json"}, {{"UDON_MCP_BWRAP", bwrap}});
    EXPECT_EQ(capture.exit_code, 2) << capture.out << capture.err;
    EXPECT_FALSE(fs::exists(dir_.File("started"))) << "capture started the server without its sandbox";
  }
}

// Issue #29's reproducer: a server sandboxed with {"network": false} read ~/.pgpass and the
// state directory's evidence.key, connected to host Unix sockets and deleted another
// server's invalidation. Here $HOME and the state directory lie beside the peer's own
// binary (a tree it sees), the state directory inside its writable directory, and the
// listeners under /run, /tmp, /var/tmp and $HOME: the peer reports, from inside.
TEST_F(SandboxCliTest, ASandboxedServerConnectsToNoHostSocketAndReadsNeitherHomeNorTheStateDirectory) {
  RequireSandbox();
  const std::string home = outside_ + "/home";
  const std::string shared = outside_ + "/shared";
  const std::string state = shared + "/state";
  WriteFile(home + "/.pgpass", "db.internal:5432:*:udon:pg-secret\n");
  WriteFile(state + "/invalidated/other-server.json", "{}");
  env_ = {{"HOME", home}, {"UDON_MCP_STATE_DIR", state}};
  const std::string run_dir = "/run/udon-test-" + std::to_string(getpid());
  std::vector<std::unique_ptr<UnixListener>> listeners;
  json::Value sockets = json::Value::array();
  for (const std::string& dir : SocketDirectories(run_dir, home)) {
    listeners.push_back(std::make_unique<UnixListener>(dir + "/udon-lp-" + std::to_string(getpid()) + ".sock"));
    ASSERT_TRUE(listeners.back()->listening()) << dir;
    ASSERT_TRUE(ConnectsToUnixSocket(listeners.back()->path())) << "the host itself must connect: " << dir;
    sockets.push_back(listeners.back()->path());
  }
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"network", false}, {"writable", {shared}}}}});
  const std::string sha = Reviewed();
  ASSERT_EQ(Call(sha, json::Value::object()).exit_code, 0);  // writes the state's evidence.key
  ASSERT_TRUE(fs::exists(state + "/evidence.key"));

  ProcessResult call = Call(sha, {{"connectSockets", sockets},
                                  {"readPaths", {home + "/.pgpass", home, state + "/evidence.key", state}},
                                  {"removePaths", {state + "/invalidated/other-server.json"}},
                                  {"writePaths", {shared + "/allowed.txt"}}});
  listeners.clear();
  std::error_code ignored;
  fs::remove(run_dir, ignored);
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["sockets"], json::Value(std::vector<bool>(sockets.size(), false)))
      << sockets.dump() << " " << report.dump();
  EXPECT_EQ(report["read"], json::Value({false, false, false, false})) << report.dump();
  EXPECT_EQ(report["removed"], json::Value({false})) << report.dump();
  EXPECT_EQ(report["written"], json::Value({true})) << "the writable directory still works";
  EXPECT_EQ(report["homeEmpty"], true) << report.dump();
  EXPECT_TRUE(fs::exists(state + "/invalidated/other-server.json"));
  EXPECT_EQ(call.out.find("pg-secret"), std::string::npos);
}

// A readable directory shows its files, but never udon-mcp's configuration, evidence file or
// state directory inside it.
TEST_F(SandboxCliTest, AReadableDirectoryShowsItsFilesButNeverUdonMcpsOwn) {
  RequireSandbox();
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"readable", {dir_.path()}}}}});
  const std::string sha = Reviewed();
  ASSERT_EQ(Call(sha, json::Value::object()).exit_code, 0);  // the evidence file and the key exist from here on
  ProcessResult call = Call(sha, {{"readPaths", {dir_.File("tools.json"), dir_.File("mcp.json"),
                                                 dir_.File("evidence.jsonl"), dir_.File("state")}},
                                  {"writePaths", {dir_.File("tools.json")}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["read"], json::Value({true, false, false, false})) << report.dump();
  EXPECT_EQ(report["written"], json::Value({false})) << "readable means read-only";
  EXPECT_EQ(LastEvidence()["sandbox"],
            json::Value({{"enabled", true}, {"network", false}, {"readable", 1}, {"writable", 0}}));
}

// Issue 38 (the drift study's captures): a server given its own etc directory reads that
// directory's files at /etc and none of the host's: not /etc/shadow (readable by root, whom
// the sandbox's user namespace maps), not the host's hostname or release.
TEST_F(SandboxCliTest, AServerGivenItsOwnEtcReadsNoneOfTheHostsEtc) {
  RequireSandbox();
  fs::create_directories(dir_.File("etc"));
  dir_.Write("etc/passwd", "study:x:" + std::to_string(getuid()) + ":" + std::to_string(getgid()) + "::/:/bin/sh\n");
  WriteConfig({{"command", PeerBinary()}, {"sandbox", {{"etc", dir_.File("etc")}}}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"readPaths", {"/etc/passwd", "/etc/shadow", "/etc/hostname", "/etc/os-release"}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["read"], json::Value({true, false, false, false})) << report.dump();
}

// A fresh clone under /tmp, away from the start directory: the server's binary lies under
// the private /tmp and comes back, read-only, with its directory.
TEST_F(SandboxCliTest, AServerWhoseTreeLiesUnderTmpRunsSandboxed) {
  RequireSandbox();
  TempDir clone;
  const std::string copy = clone.File("build/udon-privilege-peer");
  fs::create_directories(clone.File("build"));
  fs::copy_file(PeerBinary(), copy);
  WriteConfig({{"command", copy}, {"sandbox", true}});
  const std::string sha = Reviewed();
  ProcessResult call = Call(sha, {{"readPaths", {copy}}, {"writePaths", {clone.File("build/x")}}});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  const json::Value report = json::Value::parse(call.out)["structuredContent"];
  EXPECT_EQ(report["read"], json::Value({true}));
  EXPECT_EQ(report["written"], json::Value({false}));
}

// The real filesystem server from npm, installed under a prefix in $HOME (bin link into
// lib/node_modules, node itself found through that prefix's bin), still runs sandboxed.
TEST_F(SandboxCliTest, TheRealFilesystemServerInstalledUnderAPrefixInHomeRunsSandboxed) {
  RequireSandbox();
  UDON_REQUIRE_PEERS();
  const std::string home = outside_ + "/home";
  const std::string prefix = home + "/.npm-global";
  InstallUnderPrefix("@modelcontextprotocol/server-filesystem", prefix);
  fs::create_symlink(testing::NodeBinary(), prefix + "/bin/node");
  WriteFile(dir_.File("data/notes.txt"), "hello from inside the sandbox\n");
  env_ = {{"HOME", home}, {"PATH", prefix + "/bin:/usr/bin:/bin"}};
  dir_.Write("mcp.json", json::Value({{"mcpServers",
                                       {{"files",
                                         {{"command", "mcp-server-filesystem"},
                                          {"args", {dir_.File("data")}},
                                          {"sandbox", {{"readable", {dir_.File("data")}}}}}}}}})
                             .dump(2));
  ProcessResult capture = Udon({"capture", "--diagnostics", "--server", "files", "-o", "fs.json"});
  ASSERT_EQ(capture.exit_code, 0) << capture.out << capture.err;
  ProcessResult review = Udon({"review", "fs.json", "--server", "files", "--tool", "read_text_file", "--reviewer",
                               "tester@example.test", "--headless", "--independent-calls", "--model-backed", "false",
                               "--no-side-effects", "--concurrency", "safe", "--reference-based-io", "--channel",
                               "/path=data", "--channel", "/head=data", "--channel", "/tail=data"});
  ASSERT_EQ(review.exit_code, 0) << review.out << review.err;
  const std::string sha = Udon({"digest", "fs.json"}).out.substr(0, 64);
  ProcessResult call = Udon({"call", "--json", "--manifest", "fs.json", "--sha256", sha, "--server", "files", "--tool",
                             "read_text_file", "--args", json::Value({{"path", dir_.File("data/notes.txt")}}).dump()});
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_NE(call.out.find("hello from inside the sandbox"), std::string::npos) << call.out;
}

TEST_F(SandboxCliTest, ReservedVariablesStayWithUdonMcpAndInheritEnvTrueIsFlagged) {
  WriteConfig({{"command", PeerBinary()}, {"inheritEnv", true}});
  const std::string sha = Reviewed();
  const std::map<std::string, std::string> parent = {
      {kCanary, "cnry-parent-3"}, {"PGPASSWORD", "pg-secret"}, {"UDON_MCP_STATE", dir_.File("shared-state")}};
  ProcessResult call = Call(sha, json::Value::object(), parent);
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_NE(call.err.find("inheritEnv: true"), std::string::npos) << call.err;
  const json::Value env = json::Value::parse(call.out)["structuredContent"]["env"];
  EXPECT_TRUE(Contains(env, kCanary));
  EXPECT_FALSE(Contains(env, "PGPASSWORD"));
  EXPECT_FALSE(Contains(env, "UDON_MCP_STATE"));

  // Named explicitly, they make the configuration invalid: nothing is started.
  for (const json::Value& entry :
       {json::Value({{"command", PeerBinary()}, {"inheritEnv", {"PGPASSWORD"}}}),
        json::Value({{"command", PeerBinary()}, {"env", {{"STATE", "${env:UDON_MCP_STATE}"}}}})}) {
    WriteConfig(entry);
    ProcessResult refused = Call(sha, json::Value::object(), parent);
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_EQ(json::Value::parse(refused.out)["code"], "config.invalid") << refused.out;
  }
}

}  // namespace
}  // namespace udon
