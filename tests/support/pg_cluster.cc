#include "pg_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace udon::testing {
namespace {

// Unprivileged ids for initdb and postgres when the tests run as root.
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::vector<std::string> AsPostgresUser(std::vector<std::string> argv) {
  if (geteuid() != 0) return argv;
  std::vector<std::string> out = {OnPath("setpriv"), "--reuid=" + std::to_string(kNobody),
                                  "--regid=" + std::to_string(kNogroup), "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

bool Openssl(const std::vector<std::string>& args, std::string& failure) {
  std::vector<std::string> argv = {OnPath("openssl")};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = RunProcess(argv);
  if (result.exit_code != 0) failure = "openssl " + args.front() + " failed: " + result.out + result.err;
  return result.exit_code == 0;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

std::optional<TestCertificates> MakeTestCertificates(const std::string& dir, const std::string& host,
                                                     std::string& failure) {
  std::filesystem::create_directories(dir);
  const std::vector<std::string> key = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};
  TestCertificates made{dir + "/ca.crt", {dir + "/server.crt", dir + "/server.key"}};
  std::vector<std::string> ca = {"req", "-x509", "-days", "2", "-subj", "/CN=udon-mcp test CA",
                                 "-keyout", dir + "/ca.key", "-out", made.ca_cert};
  std::vector<std::string> request = {"req", "-subj", "/CN=" + host, "-keyout", made.server.key_file,
                                      "-out", dir + "/server.csr"};
  ca.insert(ca.end(), key.begin(), key.end());
  request.insert(request.end(), key.begin(), key.end());
  std::ofstream(dir + "/server.ext") << "subjectAltName=DNS:" << host << "\n";
  const bool ok = Openssl(ca, failure) && Openssl(request, failure) &&
                  Openssl({"x509", "-req", "-days", "2", "-in", dir + "/server.csr", "-CA", made.ca_cert, "-CAkey",
                           dir + "/ca.key", "-CAcreateserial", "-extfile", dir + "/server.ext", "-out",
                           made.server.cert_file},
                          failure);
  if (!ok) return std::nullopt;
  return made;
}

std::optional<std::string> PgCluster::BinDir() {
  std::vector<std::string> candidates;
  ProcessResult config = RunProcess({OnPath("pg_config"), "--bindir"});
  if (config.exit_code == 0) {
    std::string dir = config.out;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
    candidates.push_back(dir);
  }
  candidates.push_back("/usr/lib/postgresql/15/bin");
  for (const std::string& dir : candidates) {
    if (Executable(dir + "/initdb") && Executable(dir + "/postgres")) return dir;
  }
  return std::nullopt;
}

PgCluster::PgCluster(std::optional<PgTls> tls) {
  auto bin = BinDir();
  if (!bin) {
    failure_ = "no PostgreSQL binaries";
    return;
  }
  bin_ = *bin;
  char templ[] = "/tmp/udon-pg-XXXXXX";
  if (mkdtemp(templ) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = templ;
  if (geteuid() == 0 && chown(dir_.c_str(), kNobody, kNogroup) != 0) throw std::runtime_error("chown failed");
  // initdb is never run on a path with the password or anything else secret in it.
  RunOptions in_dir;
  in_dir.cwd = dir_;
  ProcessResult init = RunProcess(AsPostgresUser({bin_ + "/initdb", "-D", dir_ + "/data", "-U", "udon", "-A",
                                                  "trust", "-E", "UTF8", "--no-sync", "--no-instructions"}),
                                  in_dir);
  if (init.exit_code != 0) {
    failure_ = "initdb failed: " + init.out + init.err;
    return;
  }
  if (tls && !InstallTls(*tls)) return;
  Start();
}

PgCluster::~PgCluster() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

// The server's certificate and key in the cluster's directory, owned by the server's user
// (PostgreSQL refuses a key others can read); postgres then listens on 127.0.0.1 too.
bool PgCluster::InstallTls(const PgTls& tls) {
  std::error_code error;
  for (const auto& [from, to] : {std::pair{tls.cert_file, dir_ + "/server.crt"},
                                 std::pair{tls.key_file, dir_ + "/server.key"}}) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, error);
    if (error || chmod(to.c_str(), 0600) != 0 || (geteuid() == 0 && chown(to.c_str(), kNobody, kNogroup) != 0)) {
      failure_ = "cannot install " + from + " in the cluster";
      return false;
    }
  }
  port_ = FreeLoopbackPort();
  tls_ = port_ > 0;
  if (!tls_) failure_ = "no free port on 127.0.0.1";
  return tls_;
}

bool PgCluster::Start() {
  if (running_) return true;
  std::vector<std::string> tcp = {"-c", "listen_addresses="};
  if (tls_) {
    tcp = {"-c", "listen_addresses=127.0.0.1", "-c", "ssl=on", "-c", "ssl_cert_file=" + dir_ + "/server.crt",
           "-c", "ssl_key_file=" + dir_ + "/server.key"};
  }
  std::vector<std::string> argv = {bin_ + "/postgres", "-D", dir_ + "/data", "-k", dir_, "-p",
                                   std::to_string(port_), "-c", "max_connections=100"};
  argv.insert(argv.end(), tcp.begin(), tcp.end());
  argv = AsPostgresUser(std::move(argv));
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const std::string log = dir_ + "/postgres.log";
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    setpgid(0, 0);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execvp(c_argv[0], c_argv.data());
    _exit(127);
  }
  setpgid(pid_, pid_);
  running_ = WaitReady();
  if (!running_) {
    failure_ = "postgres did not start: " + ReadAll(log);
    Stop();
  }
  return running_;
}

bool PgCluster::WaitReady() {
  for (int i = 0; i < 300; ++i) {
    ProcessResult ready = RunProcess({bin_ + "/pg_isready", "-q", "-h", dir_, "-p", std::to_string(port_)});
    if (ready.exit_code == 0) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void PgCluster::Stop() {
  running_ = false;
  if (pid_ < 0) return;
  kill(pid_, SIGINT);  // fast shutdown: sessions are terminated, the cluster stays sound
  int status;
  bool exited = false;
  for (int i = 0; i < 300 && !exited; ++i) {
    exited = waitpid(pid_, &status, WNOHANG) == pid_;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid_, SIGKILL);  // nothing of its group outlives it
  if (!exited) waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string PgCluster::Url() const {
  return "postgresql:///postgres?host=" + dir_ + "&port=" + std::to_string(port_) + "&user=udon";
}

std::string PgCluster::UrlWithPassword(const std::string& password) const {
  return "postgresql://udon:" + password + "@/postgres?host=" + dir_ + "&port=" + std::to_string(port_);
}

ProcessResult PgCluster::Psql(const std::string& sql) const {
  return RunProcess({bin_ + "/psql", "-X", "-A", "-t", "-h", dir_, "-p", std::to_string(port_), "-U", "udon", "-d",
                     "postgres", "-c", sql});
}

ProcessResult PgCluster::Dump() const {
  return RunProcess({bin_ + "/pg_dump", "-h", dir_, "-p", std::to_string(port_), "-U", "udon", "-d", "postgres"});
}

}  // namespace udon::testing
