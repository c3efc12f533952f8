// Test helper for process hygiene: connects to a stdio server given on the command line,
// prints "server-pid <pid>" once initialized, then waits to be killed.
#include <unistd.h>

#include <cstdio>

#include "mcp/client/client.h"
#include "mcp/client/stdio_transport.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  udon::mcp::ServerConfig server;
  server.key = "victim";
  server.command = argv[1];
  for (int i = 2; i < argc; ++i) server.args.emplace_back(argv[i]);
  auto client = udon::mcp::Client::Connect(server);
  if (!client.ok()) return 1;
  if (!(*client)->Initialize().ok()) return 1;
  auto& transport =
      dynamic_cast<udon::mcp::StdioTransport&>((*client)->connection().transport());
  std::printf("server-pid %d\n", static_cast<int>(transport.pid()));
  std::fflush(stdout);
  while (true) pause();
}
