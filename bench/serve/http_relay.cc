// The floor of an HTTP gateway: a relay that forwards a Streamable HTTP client's POSTs to an
// upstream MCP server and checks nothing, with serve's libraries (a cpp-httplib server
// front with keep-alive, one kept libcurl easy handle upstream). Before each tools/call it
// makes one awaited tools/list upstream in the same session, then forwards the call: the
// two upstream exchanges the gate requires over HTTP (re-list, call). Answers go back as
// JSON, as serve's do; an upstream SSE answer is reduced to its one message.
//
//   http_relay UPSTREAM_URL
// Prints "listening on http://127.0.0.1:PORT/mcp" on stdout. GET (the server's stream) is
// answered 405, DELETE 200 without forwarding. gateways.mjs times the TypeScript SDK
// client through it (http row).
#include <curl/curl.h>
#include <httplib.h>
#include <strings.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace {

constexpr const char* kForwardedHeaders[] = {"Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version"};

struct UpstreamAnswer {
  long status = 0;
  std::string content_type;
  std::string session_id;
  std::string body;
};

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* answer) {
  static_cast<UpstreamAnswer*>(answer)->body.append(data, size * count);
  return size * count;
}

// Keeps the two response headers forwarding needs.
std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* answer) {
  const std::string line(data, size * count);
  const std::size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of("\r\n ") + 1);
    const std::string name = line.substr(0, colon);
    auto* upstream = static_cast<UpstreamAnswer*>(answer);
    if (strcasecmp(name.c_str(), "Content-Type") == 0) upstream->content_type = value;
    if (strcasecmp(name.c_str(), "Mcp-Session-Id") == 0) upstream->session_id = value;
  }
  return size * count;
}

// The JSON-RPC message of an SSE answer: its data line that holds one.
std::string MessageOf(const UpstreamAnswer& answer) {
  if (answer.content_type.rfind("text/event-stream", 0) != 0) return answer.body;
  const std::size_t data = answer.body.find("data: {");
  if (data == std::string::npos) return {};
  const std::size_t start = data + 6;
  const std::size_t end = answer.body.find('\n', start);
  return answer.body.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

class Upstream {
 public:
  explicit Upstream(std::string url) : url_(std::move(url)), curl_(curl_easy_init()) {}
  ~Upstream() { curl_easy_cleanup(curl_); }
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  // POSTs `body` with the client's forwarded headers on the kept handle.
  UpstreamAnswer Post(const httplib::Request& request, const std::string& body) {
    curl_slist* headers = nullptr;
    for (const char* name : kForwardedHeaders) {
      if (request.has_header(name)) {
        headers = curl_slist_append(headers, (std::string(name) + ": " + request.get_header_value(name)).c_str());
      }
    }
    UpstreamAnswer answer;
    curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &answer);
    if (curl_easy_perform(curl_) == CURLE_OK) curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &answer.status);
    curl_slist_free_all(headers);
    return answer;
  }

 private:
  std::string url_;
  CURL* curl_;
};

// As serve's answers: httplib gzips a set_content body for a client that accepts gzip
// (Node's fetch does), but never a provider of known length.
void SetUncompressedJson(httplib::Response& response, std::string body) {
  auto shared = std::make_shared<const std::string>(std::move(body));
  response.set_content_provider(shared->size(), "application/json",
                                [shared](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                  return sink.write(shared->data() + offset, length);
                                });
}

// One client POST: for a tools/call, first the relay's own awaited tools/list.
void Forward(Upstream& upstream, const httplib::Request& request, httplib::Response& response) {
  static long id = 1'000'000'000;
  if (request.body.find("\"tools/call\"") != std::string::npos) {
    const std::string list = R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) + R"(,"method":"tools/list"})";
    if (upstream.Post(request, list).status != 200) {
      response.status = 502;
      return;
    }
  }
  const UpstreamAnswer answer = upstream.Post(request, request.body);
  response.status = answer.status == 0 ? 502 : static_cast<int>(answer.status);
  if (!answer.session_id.empty()) response.set_header("Mcp-Session-Id", answer.session_id);
  if (answer.status != 200) return;
  std::string message = MessageOf(answer);
  if (message.empty()) {
    response.status = 502;  // no message in the upstream's answer
    return;
  }
  SetUncompressedJson(response, std::move(message));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: http_relay UPSTREAM_URL\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  Upstream upstream(argv[1]);
  std::mutex upstream_mutex;  // one kept handle: one exchange at a time
  httplib::Server server;
  // As serve's front: answers go out in several writes, which Nagle's algorithm would hold
  // for the client's delayed ACK; connections are kept as Node's fetch expects.
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(1000);
  server.set_keep_alive_timeout(5);
  server.Post("/mcp", [&](const httplib::Request& request, httplib::Response& response) {
    const std::lock_guard<std::mutex> lock(upstream_mutex);
    Forward(upstream, request, response);
  });
  server.Get("/mcp", [](const httplib::Request&, httplib::Response& response) { response.status = 405; });
  server.Delete("/mcp", [](const httplib::Request&, httplib::Response& response) { response.status = 200; });
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port < 0) return 1;
  std::printf("listening on http://127.0.0.1:%d/mcp\n", port);
  std::fflush(stdout);
  server.listen_after_bind();
  curl_global_cleanup();
  return 0;
}
