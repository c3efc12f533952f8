// The anchor of a fresh stdio `udon-mcp call`: the least any client process does to reach
// a stdio server. Spawns SERVER ARGS..., writes one initialize request, reads its answer
// (one line), closes the server's stdin, waits for it and exits 0 (1 when no answer came).
// No library: only what a minimal client must do.
//
//   spawn_initialize SERVER [ARGS...]
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int to_server[2], from_server[2];
  if (pipe(to_server) != 0 || pipe(from_server) != 0) return 2;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(to_server[0], 0);
    dup2(from_server[1], 1);
    close(to_server[1]);
    close(from_server[0]);
    execv(argv[1], argv + 1);
    _exit(127);
  }
  close(to_server[0]);
  close(from_server[1]);
  const std::string request =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"spawn_initialize","version":"1"}}})"
      "\n";
  if (write(to_server[1], request.data(), request.size()) != static_cast<ssize_t>(request.size())) return 1;
  std::string answer;
  char buffer[4096];
  while (answer.find('\n') == std::string::npos) {
    const ssize_t n = read(from_server[0], buffer, sizeof buffer);
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  close(to_server[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  return answer.find("\"result\"") != std::string::npos ? 0 : 1;
}
