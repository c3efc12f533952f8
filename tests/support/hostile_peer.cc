// udon-hostile-peer: a test double that speaks MCP over stdio or over a hand-written HTTP
// server on a raw loopback socket, answers initialize properly, and then misbehaves at the
// byte level in one chosen mode, during tools/list or tools/call. Everything it sends
// carries kMarker, so tests can prove no peer value leaks into udon-mcp's diagnostics.
//
//   udon-hostile-peer --transport stdio|http [--port N] --mode MODE [--during list|call|discover]
//
// Modes (the table in tests/integration/hostile_peers_test.cc): good, non-json, batch,
// wrong-id, duplicate-key, huge-line, huge-event (http), endless-notifications, ping-flood,
// drip, drip-sse (http), flood, stderr-flood (stdio), invalid-utf8, deep, exit-mid-frame,
// close-mid-body (http), wrong-content-type (http), huge-headers (http), redirect (http),
// black-hole (http), hang-up (stdio: exit; http: close the connection; answering nothing).
// `--during discover` misbehaves on server/discover: a strict legacy server (the peer
// speaks 2025-11-25 only and otherwise refuses server/discover as an unknown method).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "json/json.h"

namespace {

constexpr std::string_view kMarker = "HOSTILE-PAYLOAD-7f3a9c";
constexpr std::size_t kHugeBytes = 100u * 1024u * 1024u;
constexpr int kDeepLevels = 100'000;
constexpr int kFloodCount = 10'000;
constexpr auto kDripInterval = std::chrono::milliseconds(200);

struct Settings {
  std::string transport = "stdio";
  std::string mode = "good";
  std::string during = "call";
  int port = 0;
};

Settings settings;
// black-hole: once it misbehaved, every later POST is held open without an answer.
std::atomic<bool> swallowing{false};

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// ---- payloads ------------------------------------------------------------------------

std::string Quote(std::string_view text) { return udon::json::Value(std::string(text)).dump(); }

std::string ToolsResult() {
  return R"({"tools":[{"name":"echo","description":"Echoes its text argument.",)"
         R"("inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]})";
}

std::string CallResult() {
  return R"({"content":[{"type":"text","text":)" + Quote(std::string(kMarker) + " echo") + "}]}";
}

// The peer speaks one revision and answers it whatever was asked.
std::string InitializeResult() {
  return R"({"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},)"
         R"("serverInfo":{"name":"udon-hostile-peer","version":"1.0.0"}})";
}

std::string Response(const udon::json::Value& id, const std::string& result) {
  return R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"result":)" + result + "}";
}

std::string Notification(int n) {
  return R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":)" +
         Quote(std::string(kMarker) + " " + std::to_string(n)) + "}}";
}

// A server-to-client request the client must answer.
std::string Ping(int n) {
  return R"({"jsonrpc":"2.0","id":)" + Quote(std::string(kMarker) + "-" + std::to_string(n)) + R"(,"method":"ping"})";
}

// The result this request deserves when the peer behaves.
std::string GoodResponse(const std::string& method, const udon::json::Value& id) {
  if (method == "initialize") return Response(id, InitializeResult());
  if (method == "tools/list") return Response(id, ToolsResult());
  if (method == "tools/call") return Response(id, CallResult());
  if (method == "ping") return Response(id, "{}");
  return R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"error":{"code":-32601,"message":"Method not found"}})";
}

udon::json::Value WrongId(const udon::json::Value& id) {
  if (id.is_number_integer()) return id.get<std::int64_t>() + 1000;
  return "not-" + id.dump();
}

// A single, complete hostile message for the modes that send one.
std::string HostileMessage(const std::string& method, const udon::json::Value& id) {
  const std::string& mode = settings.mode;
  const bool list = method == "tools/list";
  if (mode == "non-json") return "<html>" + std::string(kMarker) + " is not JSON</html>";
  if (mode == "batch") return "[" + Response(id, list ? ToolsResult() : CallResult()) + "]";
  if (mode == "wrong-id") return Response(WrongId(id), list ? ToolsResult() : CallResult());
  if (mode == "duplicate-key") {
    return list ? Response(id, R"({"tools":[],"tools":[{"name":)" + Quote(kMarker) + "}]}")
                : Response(id, R"({"content":[],"content":[{"type":"text","text":)" + Quote(kMarker) + "}]}");
  }
  if (mode == "invalid-utf8") {
    const std::string bad = "\"" + std::string(kMarker) + " \xff\xfe\xc0\xaf\"";
    return list ? Response(id, R"({"tools":[{"name":)" + bad + "}]}")
                : Response(id, R"({"content":[{"type":"text","text":)" + bad + "}]}");
  }
  if (mode == "deep") {
    std::string deep(kDeepLevels, '[');
    deep.append(kDeepLevels, ']');
    return list ? Response(id, R"({"tools":[],"deep":)" + deep + "}")
                : Response(id, R"({"content":[],"deep":)" + deep + "}");
  }
  return GoodResponse(method, id);
}

// A response whose text holds kHugeBytes: head, the filler, tail.
std::string HugeHead(const udon::json::Value& id) {
  return R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"result":{"content":[{"type":"text","text":")" +
         std::string(kMarker);
}
constexpr std::string_view kHugeTail = R"("}]}})";

// Streams the huge response, never holding it whole.
bool WriteHuge(int fd, const udon::json::Value& id, std::string_view suffix) {
  if (!WriteAll(fd, HugeHead(id))) return false;
  const std::string chunk(1u << 20, 'A');
  for (std::size_t sent = 0; sent < kHugeBytes; sent += chunk.size()) {
    if (!WriteAll(fd, chunk)) return false;
  }
  return WriteAll(fd, std::string(kHugeTail) + std::string(suffix));
}

bool Drip(int fd, std::string_view bytes) {
  for (char c : bytes) {
    if (!WriteAll(fd, std::string_view(&c, 1))) return false;
    std::this_thread::sleep_for(kDripInterval);
  }
  return true;
}

// Messages until the reader goes away (a write fails) or the process is killed.
template <typename Frame, typename Message>
void Endless(int fd, Frame frame, Message message) {
  for (int n = 0;; ++n) {
    if (!WriteAll(fd, frame(message(n)))) return;
    if (n % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Misbehaves(const std::string& method) {
  const char* target = settings.during == "list"       ? "tools/list"
                       : settings.during == "discover" ? "server/discover"
                                                       : "tools/call";
  return settings.mode != "good" && method == target;
}

// ---- stdio ---------------------------------------------------------------------------

std::string Line(std::string message) { return message + "\n"; }

void StdioHostile(const std::string& method, const udon::json::Value& id) {
  const std::string& mode = settings.mode;
  if (mode == "huge-line") {
    if (!WriteHuge(1, id, "\n")) _exit(0);
  } else if (mode == "endless-notifications") {
    Endless(1, Line, Notification);
    _exit(0);
  } else if (mode == "ping-flood") {
    // Requests without end, and the answers are never read: the client's writes to our
    // stdin back up.
    Endless(1, Line, Ping);
    _exit(0);
  } else if (mode == "stderr-flood") {
    const std::string noise = std::string(kMarker) + std::string(64 * 1024, 'E') + "\n";
    for (std::size_t sent = 0; sent < kHugeBytes; sent += noise.size()) {
      if (!WriteAll(2, noise)) break;
    }
    WriteAll(1, Line(GoodResponse(method, id)));
  } else if (mode == "drip") {
    Drip(1, Line(GoodResponse(method, id)));
  } else if (mode == "flood") {
    for (int n = 0; n < kFloodCount; ++n) {
      if (!WriteAll(1, Line(Notification(n)))) _exit(0);
    }
    WriteAll(1, Line(GoodResponse(method, id)));
  } else if (mode == "exit-mid-frame") {
    const std::string line = GoodResponse(method, id);
    WriteAll(1, line.substr(0, line.size() / 2));
    _exit(0);
  } else if (mode == "hang-up") {
    _exit(0);  // a strict server that exits on what it does not know, answering nothing
  } else {
    WriteAll(1, Line(HostileMessage(method, id)));
  }
}

int ServeStdio() {
  WriteAll(2, std::string(kMarker) + " on stderr\n");
  std::string line;
  while (std::getline(std::cin, line)) {
    auto message = udon::json::Parse(line);
    if (!message.ok() || !message->is_object() || !message->contains("id") || !message->contains("method") ||
        !(*message)["method"].is_string()) {
      continue;
    }
    const std::string method = (*message)["method"].get<std::string>();
    const udon::json::Value& id = (*message)["id"];
    if (Misbehaves(method)) {
      StdioHostile(method, id);
    } else if (!WriteAll(1, Line(GoodResponse(method, id)))) {
      return 0;
    }
  }
  return 0;
}

// ---- HTTP ----------------------------------------------------------------------------

struct HttpRequest {
  std::string method;
  std::string body;
};

// Reads one request (headers, then a Content-Length body); false on anything odd.
bool ReadRequest(int fd, HttpRequest& request) {
  std::string data;
  char buffer[16 * 1024];
  std::size_t header_end = std::string::npos;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > 64 * 1024) return false;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  request.method = data.substr(0, data.find(' '));
  std::size_t length = 0;
  std::string headers = data.substr(0, header_end);
  for (char& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto at = headers.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::stoul(headers.substr(at + 17));
  }
  if (length > 16u * 1024u * 1024u) return false;
  request.body = data.substr(header_end + 4);
  while (request.body.size() < length) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return false;
    request.body.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

std::string Head(std::string_view status, std::string_view type, std::string extra = "") {
  std::string head = "HTTP/1.1 " + std::string(status) + "\r\nConnection: close\r\nMcp-Session-Id: hostile-session\r\n";
  if (!type.empty()) head += "Content-Type: " + std::string(type) + "\r\n";
  return head + extra;
}

std::string JsonAnswer(const std::string& body, std::string_view type = "application/json") {
  return Head("200 OK", type, "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n") + body;
}

std::string Event(std::string data) { return "event: message\ndata: " + data + "\n\n"; }

std::string SseHead() { return Head("200 OK", "text/event-stream", "Cache-Control: no-cache\r\n\r\n"); }

// Holds a connection open, answering nothing, until the client gives up on it.
void Swallow(int fd) {
  char buffer[4096];
  while (read(fd, buffer, sizeof buffer) > 0) {
  }
}

void HttpHostile(int fd, const std::string& method, const udon::json::Value& id) {
  const std::string& mode = settings.mode;
  const std::string good = GoodResponse(method, id);
  if (mode == "huge-line") {
    const std::size_t total = HugeHead(id).size() + kHugeBytes + kHugeTail.size();
    if (WriteAll(fd, Head("200 OK", "application/json", "Content-Length: " + std::to_string(total) + "\r\n\r\n"))) {
      WriteHuge(fd, id, "");
    }
  } else if (mode == "huge-event") {
    if (WriteAll(fd, SseHead() + "event: message\ndata: ")) WriteHuge(fd, id, "\n\n");
  } else if (mode == "endless-notifications") {
    if (WriteAll(fd, SseHead())) Endless(fd, Event, Notification);
  } else if (mode == "ping-flood") {
    if (WriteAll(fd, SseHead())) Endless(fd, Event, Ping);
  } else if (mode == "black-hole") {
    swallowing = true;
    Swallow(fd);
  } else if (mode == "redirect") {
    WriteAll(fd, Head("307 Temporary Redirect", "", "Location: http://127.0.0.1:9/" + std::string(kMarker) +
                                                         "\r\nContent-Length: 0\r\n\r\n"));
  } else if (mode == "drip") {
    if (WriteAll(fd, Head("200 OK", "application/json", "Content-Length: " + std::to_string(good.size()) + "\r\n\r\n"))) {
      Drip(fd, good);
    }
  } else if (mode == "drip-sse") {
    if (WriteAll(fd, SseHead())) Drip(fd, Event(good));
  } else if (mode == "flood") {
    if (!WriteAll(fd, SseHead())) return;
    for (int n = 0; n < kFloodCount; ++n) {
      if (!WriteAll(fd, Event(Notification(n)))) return;
    }
    WriteAll(fd, Event(good));
  } else if (mode == "exit-mid-frame" || mode == "close-mid-body") {
    WriteAll(fd, Head("200 OK", "application/json", "Content-Length: " + std::to_string(good.size()) + "\r\n\r\n") +
                     good.substr(0, good.size() / 2));
    if (mode == "exit-mid-frame") _exit(0);
  } else if (mode == "hang-up") {
    // Nothing at all: ServeConnection closes the connection, the server stays up.
  } else if (mode == "wrong-content-type") {
    WriteAll(fd, JsonAnswer(good, "text/html; charset=utf-8"));
  } else if (mode == "huge-headers") {
    if (!WriteAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")) return;
    const std::string value(8 * 1024, 'H');
    for (std::size_t sent = 0; sent < kHugeBytes; sent += value.size()) {
      if (!WriteAll(fd, "X-Hostile-" + std::to_string(sent) + ": " + std::string(kMarker) + value + "\r\n")) return;
    }
    WriteAll(fd, "Content-Length: " + std::to_string(good.size()) + "\r\n\r\n" + good);
  } else {
    WriteAll(fd, JsonAnswer(HostileMessage(method, id)));
  }
}

void ServeConnection(int fd) {
  HttpRequest request;
  if (ReadRequest(fd, request)) {
    if (request.method == "POST" && swallowing) {
      Swallow(fd);
    } else if (request.method == "GET") {
      WriteAll(fd, Head("405 Method Not Allowed", "", "Allow: POST, DELETE\r\nContent-Length: 0\r\n\r\n"));
    } else if (request.method == "DELETE") {
      WriteAll(fd, Head("200 OK", "", "Content-Length: 0\r\n\r\n"));
    } else {
      auto message = udon::json::Parse(request.body);
      if (!message.ok() || !message->is_object()) {
        WriteAll(fd, Head("400 Bad Request", "", "Content-Length: 0\r\n\r\n"));
      } else if (!message->contains("id") || !message->contains("method") || !(*message)["method"].is_string()) {
        WriteAll(fd, Head("202 Accepted", "", "Content-Length: 0\r\n\r\n"));
      } else {
        const std::string method = (*message)["method"].get<std::string>();
        const udon::json::Value& id = (*message)["id"];
        if (Misbehaves(method)) {
          HttpHostile(fd, method, id);
        } else {
          WriteAll(fd, JsonAnswer(GoodResponse(method, id)));
        }
      }
    }
  }
  shutdown(fd, SHUT_RDWR);
  close(fd);
}

int ServeHttp() {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(settings.port));
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, 64) != 0 || getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::fprintf(stderr, "udon-hostile-peer: cannot listen on 127.0.0.1\n");
    return 2;
  }
  const int port = ntohs(address.sin_port);
  std::printf("{\"event\":\"listening\",\"port\":%d,\"url\":\"http://127.0.0.1:%d/mcp\"}\n", port, port);
  std::fflush(stdout);
  while (true) {
    const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return 1;
    }
    std::thread([fd] { ServeConnection(fd); }).detach();
  }
}

bool ParseArguments(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--transport") settings.transport = value;
    else if (flag == "--mode") settings.mode = value;
    else if (flag == "--during") settings.during = value;
    else if (flag == "--port") settings.port = std::stoi(value);
    else return false;
  }
  static const std::set<std::string> kModes = {
      "good",         "non-json", "batch",          "wrong-id",       "duplicate-key",      "huge-line",
      "huge-event",   "flood",    "stderr-flood",   "ping-flood",     "endless-notifications",
      "drip",         "drip-sse", "invalid-utf8",   "deep",           "exit-mid-frame",     "close-mid-body",
      "wrong-content-type",       "huge-headers",   "redirect",       "black-hole",         "hang-up"};
  return argc % 2 == 1 && (settings.transport == "stdio" || settings.transport == "http") &&
         (settings.during == "list" || settings.during == "call" || settings.during == "discover") && kModes.count(settings.mode) == 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!ParseArguments(argc, argv)) {
    std::fprintf(stderr, "usage: udon-hostile-peer --transport stdio|http [--port N] --mode MODE [--during list|call|discover]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  return settings.transport == "http" ? ServeHttp() : ServeStdio();
}
