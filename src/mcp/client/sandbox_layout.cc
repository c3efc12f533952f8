#include "mcp/client/sandbox_layout.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

namespace udon::mcp {
namespace {

namespace fs = std::filesystem;

// Read-only in every sandbox, besides the /lib* entries of the root.
constexpr std::array<std::string_view, 5> kSystemDirs = {"/usr", "/bin", "/sbin", "/etc", "/opt"};
// Where hosts keep what belongs to users, services and sockets: a tree derived from a
// command never covers one of these whole (nor $HOME).
constexpr std::array<std::string_view, 14> kNeverWhole = {"/tmp",  "/var/tmp", "/run",  "/var/run", "/var/lib",
                                                          "/srv",  "/mnt",     "/media", "/root",   "/home",
                                                          "/dev",  "/proc",    "/sys",  "/boot"};
// Files that mark the root of a package or of a Python environment.
constexpr std::array<std::string_view, 4> kPackageMarkers = {"package.json", "pyvenv.cfg", "pyproject.toml",
                                                             "setup.py"};
// A #! interpreter that is itself a script (a venv's wrapper) is followed this deep.
constexpr int kMaxInterpreterDepth = 4;
constexpr std::size_t kMaxShebang = 256;
// execvp's search path when the environment has none.
constexpr const char* kDefaultPath = "/bin:/usr/bin";

std::mutex& HiddenMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::string>& HiddenPaths() {
  static std::vector<std::string> paths;
  return paths;
}

// The path with every symlink resolved; "" when it does not exist.
std::string Canonical(const std::string& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  return error ? std::string() : real.string();
}

// The system directories present here: kSystemDirs and the root's /lib* entries.
std::vector<std::string> SystemDirs() {
  std::vector<std::string> dirs(kSystemDirs.begin(), kSystemDirs.end());
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("lib", 0) == 0) dirs.push_back("/" + name);
  }
  return dirs;
}

// Whether `path` (as named, or once resolved) lies in a system directory, so already visible.
bool IsSystemPath(const std::string& path) {
  const std::string real = Canonical(path);
  for (const std::string& dir : SystemDirs()) {
    if (IsPathUnder(path, dir)) return true;
    const std::string real_dir = Canonical(dir);
    if (!real.empty() && IsPathUnder(real, real_dir)) return true;
  }
  return false;
}

// `tree`, unless it is or contains $HOME, `/` or one of kNeverWhole: then `file` alone.
std::string Bounded(const std::string& tree, const std::string& file, const std::string& home) {
  if (IsPathUnder(home, tree)) return file;
  for (std::string_view shared : kNeverWhole) {
    if (IsPathUnder(std::string(shared), tree)) return file;
  }
  return tree;
}

// See CommandTrees: the outermost node_modules above `real_file`, else the nearest marked
// directory below $HOME, else its own directory.
std::string PackageRoot(const std::string& real_file, const std::string& home) {
  const fs::path dir = fs::path(real_file).parent_path();
  std::string modules;
  for (fs::path p = dir; p.has_relative_path(); p = p.parent_path()) {
    if (p.filename() == "node_modules") modules = p.string();
  }
  if (!modules.empty()) return modules;
  for (fs::path p = dir; p.has_relative_path() && !IsPathUnder(home, p.string()); p = p.parent_path()) {
    for (std::string_view marker : kPackageMarkers) {
      std::error_code ignored;
      if (fs::exists(p / marker, ignored)) return p.string();
    }
  }
  return dir.string();
}

// The program a #! line names: its interpreter, or for `#!/usr/bin/env [-S] NAME …` NAME
// looked up along the PATH. "" for anything else.
std::string Interpreter(const std::string& script, const SandboxHost& host, const std::string& cwd) {
  std::ifstream in(script, std::ios::binary);
  char head[kMaxShebang] = {};
  in.read(head, sizeof head - 1);
  const std::string text(head, static_cast<std::size_t>(in.gcount()));
  if (text.rfind("#!", 0) != 0) return "";
  std::istringstream words(text.substr(2, text.find('\n') - 2));
  std::string interpreter, word;
  words >> interpreter;
  if (fs::path(interpreter).filename() != "env") return interpreter;
  while (words >> word) {
    if (word[0] != '-' && word.find('=') == std::string::npos) return FindExecutable(word, host.path, cwd);
  }
  return "";
}

// Adds `tree` (bounded for `file`) unless it is missing or already visible.
void AddTree(const std::string& tree, const std::string& file, const std::string& home,
             std::vector<std::string>& trees) {
  const std::string bounded = Bounded(tree, file, home);
  std::error_code ignored;
  if (bounded.empty() || !fs::exists(bounded, ignored) || IsSystemPath(bounded)) return;
  trees.push_back(bounded);
}

// The trees of one program as named (CommandTrees), then those of its interpreter.
void AddProgram(const std::string& named, int depth, const SandboxHost& host, const std::string& cwd,
                std::vector<std::string>& trees) {
  if (named.empty() || depth > kMaxInterpreterDepth) return;
  const std::string real = Canonical(named);
  if (real.empty()) return;
  const fs::path named_dir = fs::path(named).parent_path();
  AddTree(named_dir.string(), named, host.home, trees);
  if (named_dir.filename() == "bin") AddTree((named_dir.parent_path() / "lib").string(), named, host.home, trees);
  AddTree(PackageRoot(real, host.home), real, host.home, trees);
  AddProgram(Interpreter(real, host, cwd), depth + 1, host, cwd, trees);
}

// Sorted, and without a path that another one already covers.
std::vector<std::string> Outermost(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    if (out.empty() || !IsPathUnder(path, out.back())) out.push_back(path);
  }
  return out;
}

// bwrap's argv as it grows, and every bind made so far (resolved source, destination) for
// the masks.
struct Layout {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> binds;

  void Bind(const char* op, const std::string& path) { Bind(op, path, path); }
  void Bind(const char* op, const std::string& source, const std::string& dest) {
    argv.insert(argv.end(), {op, source, dest});
    const std::string real = Canonical(source);
    if (!real.empty()) binds.emplace_back(real, dest);
  }
};

// The system directories read-only; a symlink among them (/bin -> usr/bin) stays a symlink.
// The entry's own etc directory, when it names one, stands in for the host's /etc.
void AddSystem(Layout& layout, const SandboxSettings& sandbox) {
  for (const std::string& dir : SystemDirs()) {
    if (dir == "/etc" && !sandbox.etc.empty()) {
      layout.Bind("--ro-bind", sandbox.etc, dir);
      continue;
    }
    std::error_code error;
    const fs::file_status status = fs::symlink_status(dir, error);
    if (error) continue;
    if (fs::is_symlink(status)) {
      const fs::path target = fs::read_symlink(dir, error);
      if (!error) layout.argv.insert(layout.argv.end(), {"--symlink", target.string(), dir});
    } else if (fs::is_directory(status)) {
      layout.Bind("--ro-bind", dir);
    }
  }
  // With the host's network, name resolution needs the file /etc/resolv.conf points to
  // (often under /run): that one file, never its directory.
  const std::string resolver = Canonical("/etc/resolv.conf");
  if (sandbox.network && !resolver.empty() && !IsSystemPath(resolver)) layout.Bind("--ro-bind", resolver);
}

// Fresh /proc and /dev, and empty private /dev/shm, /tmp and $HOME.
void AddPrivate(Layout& layout, const std::string& home) {
  layout.argv.insert(layout.argv.end(),
                     {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp"});
  if (home.empty() || home[0] != '/' || home == "/") return;
  for (const std::string& dir : SystemDirs()) {
    if (IsPathUnder(dir, home)) return;  // a $HOME above /usr cannot be replaced
  }
  std::error_code ignored;
  // A missing $HOME inside a read-only system directory could not be created there.
  if (!fs::exists(home, ignored) && IsSystemPath(fs::path(home).parent_path().string())) return;
  layout.argv.insert(layout.argv.end(), {"--tmpfs", home});
}

// udon-mcp's own files, wherever a bind made them visible: an empty directory or an empty
// file over each.
void AddMasks(Layout& layout, const std::vector<std::string>& hidden) {
  std::set<std::string> masked;
  for (const std::string& path : hidden) {
    const std::string real = Canonical(path);
    if (real.empty()) continue;
    std::error_code ignored;
    const bool directory = fs::is_directory(real, ignored);
    const auto binds = layout.binds;  // the masks below add none
    for (const auto& [source, dest] : binds) {
      if (!IsPathUnder(real, source)) continue;
      const std::string at = dest + real.substr(source.size());
      if (!masked.insert(at).second) continue;
      if (directory) {
        layout.argv.insert(layout.argv.end(), {"--tmpfs", at});
      } else {
        layout.argv.insert(layout.argv.end(), {"--ro-bind", "/dev/null", at});
      }
    }
  }
}

}  // namespace

bool IsPathUnder(const std::string& path, const std::string& dir) {
  if (path.empty() || dir.empty()) return false;
  if (path == dir || dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

std::string AbsolutePath(const std::string& path, const std::string& base) {
  std::error_code ignored;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  if (p.is_relative()) p = fs::current_path(ignored) / p;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

void HideFromSandboxes(const std::string& path) {
  if (path.empty()) return;
  const std::string absolute = AbsolutePath(path, "");
  std::lock_guard lock(HiddenMutex());
  std::vector<std::string>& paths = HiddenPaths();
  if (std::find(paths.begin(), paths.end(), absolute) == paths.end()) paths.push_back(absolute);
}

SandboxHost CurrentSandboxHost(const std::vector<std::string>& child_env) {
  SandboxHost host;
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') host.home = AbsolutePath(home, "/");
  host.path = kDefaultPath;
  for (const std::string& entry : child_env) {
    if (entry.rfind("PATH=", 0) == 0) host.path = entry.substr(5);
  }
  std::lock_guard lock(HiddenMutex());
  host.hidden = HiddenPaths();
  return host;
}

std::string FindExecutable(const std::string& command, const std::string& path, const std::string& cwd) {
  if (command.empty()) return "";
  if (command.find('/') != std::string::npos) return AbsolutePath(command, cwd);
  std::istringstream entries(path);
  std::string dir;
  while (std::getline(entries, dir, ':')) {
    const std::string candidate = AbsolutePath((dir.empty() ? std::string(".") : dir) + "/" + command, cwd);
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::vector<std::string> CommandTrees(const std::vector<std::string>& command, const std::string& cwd,
                                      const SandboxHost& host) {
  std::vector<std::string> trees;
  if (command.empty()) return trees;
  AddProgram(FindExecutable(command[0], host.path, cwd), 0, host, cwd, trees);
  // The script of an interpreter (`node server.js`): the first argument, when it names a
  // regular file.
  if (command.size() > 1 && !command[1].empty() && command[1][0] != '-') {
    const std::string script = AbsolutePath(command[1], cwd);
    std::error_code ignored;
    if (fs::is_regular_file(script, ignored)) AddProgram(script, 0, host, cwd, trees);
  }
  return Outermost(std::move(trees));
}

std::vector<std::string> SandboxArgv(const std::string& bwrap, const SandboxSettings& sandbox, const SandboxHost& host,
                                     const std::string& cwd, const std::vector<std::string>& command) {
  Layout layout;
  // --unshare-all takes the network too; --unshare-user also when run as root (bwrap
  // would otherwise skip the user namespace); no capabilities, even as root.
  layout.argv = {bwrap, "--unshare-all", "--unshare-user", sandbox.network ? "--share-net" : "--unshare-net",
                 "--die-with-parent", "--new-session", "--cap-drop", "ALL"};
  AddSystem(layout, sandbox);
  AddPrivate(layout, host.home);
  for (const std::string& tree : CommandTrees(command, cwd, host)) layout.Bind("--ro-bind", tree);
  for (const std::string& path : sandbox.readable) layout.Bind("--ro-bind", path);
  for (const std::string& dir : sandbox.writable) layout.Bind("--bind", dir);
  // The start directory exists inside, empty unless a bind above shows it.
  if (!cwd.empty()) layout.argv.insert(layout.argv.end(), {"--dir", cwd});
  AddMasks(layout, host.hidden);
  layout.argv.insert(layout.argv.end(), {"--remount-ro", "/"});
  if (!cwd.empty()) layout.argv.insert(layout.argv.end(), {"--chdir", cwd});
  layout.argv.push_back("--");
  layout.argv.insert(layout.argv.end(), command.begin(), command.end());
  return layout.argv;
}

}  // namespace udon::mcp
