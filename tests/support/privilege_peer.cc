// udon-privilege-peer: a test-only MCP server over stdio that reports what it was given
// by whoever started it, for the least-privilege tests (tests/integration/
// least_privilege_test.cc). Kept out of the demo server's public catalog on purpose.
//
//   udon-privilege-peer [--touch FILE]
//
// --touch creates FILE at start-up (the witness that the server ran at all). Its one tool,
// `inspect`, answers with structuredContent:
//   env        the names of its environment variables (names, never values)
//   fds        the descriptors open when it started (from /proc/self/fd)
//   connected  whether a TCP connection to 127.0.0.1:connectPort succeeded (when asked)
//   written    per writePaths entry, whether creating and writing that file succeeded
//   sockets    per connectSockets entry, whether connecting to that Unix socket succeeded
//   read       per readPaths entry, whether it could be read: a file's first byte, or a
//              directory with at least one entry
//   removed    per removePaths entry, whether unlinking that file succeeded
//   homeEmpty  whether $HOME is a directory without entries
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "json/json.h"
#include "mcp/server/server.h"
#include "mcp/server/stdio_server.h"

extern char** environ;

namespace {

using udon::json::Value;

// Taken first thing in main, before anything of ours opens a descriptor.
std::vector<int> OpenDescriptors() {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const int fd = std::atoi(entry->d_name);
    if (fd != own) fds.push_back(fd);
  }
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

bool ConnectsTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

bool ConnectsToSocket(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return false;
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

// Entries of a directory other than . and .., or -1 when it cannot be opened.
int DirectoryEntries(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) ++count;
  }
  closedir(dir);
  return count;
}

bool Reads(const std::string& path) {
  if (DirectoryEntries(path) > 0) return true;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char byte;
  const bool ok = read(fd, &byte, 1) == 1;
  close(fd);
  return ok;
}

// One boolean per string of arguments[name], from `probe`.
Value EachPath(const Value& arguments, const char* name, bool (*probe)(const std::string&)) {
  Value out = Value::array();
  if (!arguments.contains(name)) return out;
  for (const Value& path : arguments[name]) out.push_back(probe(path.get<std::string>()));
  return out;
}

bool Writes(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = write(fd, "x", 1) == 1;
  close(fd);
  return ok;
}

Value InspectTool() {
  return {{"name", "inspect"},
          {"description", "Reports the environment names, inherited descriptors, and whether it can connect, read, write "
                          "and remove."},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"connectPort", {{"type", "integer"}}},
              {"writePaths", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"connectSockets", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"readPaths", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"removePaths", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}},
          {"outputSchema",
           {{"type", "object"},
            {"properties",
             {{"env", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"fds", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
              {"connected", {{"type", {"boolean", "null"}}}},
              {"written", {{"type", "array"}, {"items", {{"type", "boolean"}}}}},
              {"sockets", {{"type", "array"}, {"items", {{"type", "boolean"}}}}},
              {"read", {{"type", "array"}, {"items", {{"type", "boolean"}}}}},
              {"removed", {{"type", "array"}, {"items", {{"type", "boolean"}}}}},
              {"homeEmpty", {{"type", "boolean"}}}}},
            {"required", {"env", "fds", "connected", "written", "sockets", "read", "removed", "homeEmpty"}}}}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> inherited = OpenDescriptors();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--touch") == 0) (void)Writes(argv[i + 1]);
  }
  Value names = Value::array();
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    names.push_back(text.substr(0, text.find('=')));
  }

  udon::mcp::ServerOptions options;
  options.server_info = {{"name", "udon-privilege-peer"}, {"version", "1.0.0"}};
  udon::mcp::Server server(options);
  server.AddTool(InspectTool(), [&](const Value& arguments, udon::mcp::ToolContext&) {
    Value connected = nullptr;
    if (arguments.contains("connectPort")) connected = ConnectsTo(arguments["connectPort"].get<int>());
    const char* home = std::getenv("HOME");
    Value report = {{"env", names},
                    {"fds", inherited},
                    {"connected", connected},
                    {"written", EachPath(arguments, "writePaths", Writes)},
                    {"sockets", EachPath(arguments, "connectSockets", ConnectsToSocket)},
                    {"read", EachPath(arguments, "readPaths", Reads)},
                    {"removed", EachPath(arguments, "removePaths", [](const std::string& path) {
                       return unlink(path.c_str()) == 0;
                     })},
                    {"homeEmpty", home != nullptr && DirectoryEntries(home) == 0}};
    udon::mcp::ToolOutcome outcome;
    outcome.result = {{"content", {{{"type", "text"}, {"text", "inspected"}}}}, {"structuredContent", report}};
    return outcome;
  });
  udon::mcp::RunStdioServer(server);
  return 0;
}
