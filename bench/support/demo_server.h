// The demo server as the benchmarks start it: Streamable HTTP on an ephemeral loopback
// port, its URL read from the {"event":"listening",...} line it prints first.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "json/json.h"

namespace udon::bench {

// Starts `binary --transport http --host 127.0.0.1 --port 0 extra...`; returns the URL it
// reports, or "" when it could not start. `pid` receives the child's process id.
inline std::string StartDemoHttpServer(const std::string& binary, const std::vector<std::string>& extra,
                                       pid_t& pid) {
  int out[2];
  if (pipe(out) != 0) return "";
  std::vector<std::string> args = {binary, "--transport", "http", "--host", "127.0.0.1", "--port", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  auto parsed = json::Parse(line);
  if (!parsed.ok() || !parsed->contains("url") || !(*parsed)["url"].is_string()) return "";
  return (*parsed)["url"].get<std::string>();
}

}  // namespace udon::bench
