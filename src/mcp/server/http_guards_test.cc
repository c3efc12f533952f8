// The guards in front of the Streamable HTTP server (contract 7.17): origins and hosts, the
// bearer token, requests in flight per client, body size, and the legacy session table.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "mcp/server/http_server_test_fixture.h"

namespace udon::mcp::http_test {
namespace {

TEST(HttpOriginTest, AcceptsOnlyLoopbackOrigins) {
  EXPECT_TRUE(IsAllowedOrigin(""));
  EXPECT_TRUE(IsAllowedOrigin("http://localhost:3000"));
  EXPECT_TRUE(IsAllowedOrigin("http://127.0.0.1"));
  EXPECT_TRUE(IsAllowedOrigin("https://[::1]:8443"));
  EXPECT_TRUE(IsAllowedOrigin("http://LOCALHOST"));
  EXPECT_FALSE(IsAllowedOrigin("http://evil.example.com"));
  EXPECT_FALSE(IsAllowedOrigin("http://localhost.evil.example.com"));
  EXPECT_FALSE(IsAllowedOrigin("null"));
  EXPECT_FALSE(IsAllowedOrigin("file://localhost"));
  EXPECT_FALSE(IsAllowedOrigin("http://127.0.0.1.nip.io"));
}

// Issue #29 item 11: an origin is a URL; what a URL parser reads as its host is the host.
TEST(HttpOriginTest, UserInformationPathsAndBadPortsAreNoLoopbackOrigin) {
  for (const char* origin : {"http://localhost:1@evil.example", "http://localhost@evil.example",
                             "http://127.0.0.1:80@evil.example:80", "http://[::1]:1@evil.example",
                             "http://localhost:1/@evil.example", "http://localhost:99999", "http://localhost:",
                             "http://localhost:8o", "http://localhost?x", "http://localhost#x",
                             "http://localhost\\@evil.example", "http://"}) {
    EXPECT_FALSE(IsAllowedOrigin(origin)) << origin;
  }
  EXPECT_TRUE(IsAllowedOrigin("http://localhost:65535"));
  for (const char* host : {"localhost:1@evil.example", "localhost@evil.example", "localhost:99999", "localhost:x"}) {
    EXPECT_FALSE(IsAllowedHost(host)) << host;
  }
}

TEST(HttpHostTest, LoopbackNamesAreThoseOnlyThisMachineReaches) {
  for (const char* name : {"localhost", "127.0.0.1", "[::1]", "::1"}) EXPECT_TRUE(IsLoopbackName(name)) << name;
  for (const char* name : {"0.0.0.0", "::", "gateway.internal", "localhost.evil.example", "", "127.0.0.2"}) {
    EXPECT_FALSE(IsLoopbackName(name)) << name;
  }
}

TEST(HttpHostTest, AcceptsOnlyLoopbackHosts) {
  EXPECT_TRUE(IsAllowedHost("localhost:8080"));
  EXPECT_TRUE(IsAllowedHost("127.0.0.1:1"));
  EXPECT_TRUE(IsAllowedHost("[::1]:80"));
  EXPECT_TRUE(IsAllowedHost("localhost"));
  EXPECT_FALSE(IsAllowedHost("evil.example.com:8080"));
  EXPECT_FALSE(IsAllowedHost("[::1"));
  EXPECT_FALSE(IsAllowedHost("[::1]x"));
}
// ---- Guards: bearer token, requests in flight per client, body size. ----

TEST_F(HttpModernTest, ABearerTokenIsRequiredOfEveryRequestWhenSet) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token-value";
  Start(options);
  const Message list = MakeRequest(1, "tools/list", ModernParams());
  auto missing = PostModern(ModernHeaders("tools/list"), list);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(missing->body.find("s3cret"), std::string::npos);
  for (const char* wrong : {"Bearer s3cret-token-valuf", "Bearer s3cret-token-value2", "Bearer ", "Basic czNjcmV0",
                            "s3cret-token-value", "Bearer s3cret-token-valu"}) {
    httplib::Headers headers = ModernHeaders("tools/list");
    headers.emplace("Authorization", wrong);
    auto refused = PostModern(headers, list);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 401) << wrong;
    EXPECT_EQ(refused->body.find("s3cret"), std::string::npos);
  }
  for (const char* right : {"Bearer s3cret-token-value", "bearer s3cret-token-value"}) {
    httplib::Headers headers = ModernHeaders("tools/list");
    headers.emplace("Authorization", right);
    EXPECT_EQ(Answer(headers, list).first, 200) << right;
  }
  auto legacy_get = client_->Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", "x"}});
  ASSERT_TRUE(legacy_get);
  EXPECT_EQ(legacy_get->status, 401);
}

// Issue #29 item 8: a host refused for want of the token is told so in words, and finds no
// OAuth metadata (404, not 401) that would send it into Dynamic Client Registration.
TEST_F(HttpModernTest, ARefusalSaysATokenIsNeededAndNoOAuthPathAnswers401) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token-value";
  Start(options);
  auto missing = PostModern(ModernHeaders("tools/list"), MakeRequest(1, "tools/list", ModernParams()));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  auto body = json::Parse(missing->body);
  ASSERT_TRUE(body.ok()) << missing->body;
  EXPECT_NE((*body)["error"]["message"].get<std::string>().find("requires a bearer token"), std::string::npos);
  for (const char* path : {"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                           "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
                           "/register", "/authorize", "/token", "/elsewhere"}) {
    auto get = client_->Get(path);
    ASSERT_TRUE(get);
    EXPECT_EQ(get->status, 404) << path;
    EXPECT_FALSE(get->has_header("WWW-Authenticate")) << path;
    auto post = client_->Post(path, "{}", "application/json");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 404) << path;
    // An OAuth error body (hosts show its description after their registration attempt).
    auto oauth = json::Parse(post->body);
    ASSERT_TRUE(oauth.ok()) << post->body;
    EXPECT_NE((*oauth)["error_description"].get<std::string>().find("requires a bearer token"), std::string::npos);
  }
}

TEST_F(HttpDepartureTest, ARefusedBodyIsNotReadAsTheNextRequest) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token-value";
  Start(options);
  // Refused before its body is read: the connection must not go on with those bytes.
  const std::string body = "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  RawConnection connection(port_);
  ASSERT_TRUE(connection.Send("POST", ModernHeaders("tools/list"), body));
  ASSERT_TRUE(connection.ReadUntil("\r\n\r\n"));
  EXPECT_NE(connection.received().find(" 401 "), std::string::npos);
  connection.ReadUntil("HTTP/1.1 4");  // a second answer, if any, or the end of the stream
  EXPECT_EQ(connection.received().find("HTTP/1.1", 1), std::string::npos) << connection.received();
}

TEST_F(HttpModernTest, NamedHostsAreAcceptedBesideLoopbackAndNoOthers) {
  HttpServerOptions options;
  options.allowed_hosts = {"gateway.internal"};
  Start(options);
  const Message list = MakeRequest(1, "tools/list", ModernParams());
  auto with = [&](const char* host, const char* origin) {
    httplib::Headers headers = ModernHeaders("tools/list");
    headers.emplace("Host", host);
    if (origin != nullptr) headers.emplace("Origin", origin);
    return Answer(headers, list).first;
  };
  EXPECT_EQ(with("gateway.internal:8808", nullptr), 200);
  EXPECT_EQ(with("Gateway.Internal:8808", "https://gateway.internal:8808"), 200);
  EXPECT_EQ(with("127.0.0.1:1", nullptr), 200);
  EXPECT_EQ(with("evil.example:8808", nullptr), 403);
  EXPECT_EQ(with("gateway.internal:8808", "http://evil.example"), 403);
  EXPECT_EQ(with("gateway.internal.evil.example", nullptr), 403);
}

TEST_F(HttpModernTest, WithoutATokenNoAuthorizationIsAsked) {
  Start();
  EXPECT_EQ(Answer(ModernHeaders("tools/list"), MakeRequest(1, "tools/list", ModernParams())).first, 200);
}

TEST_F(HttpDepartureTest, RequestsInFlightBeyondAClientsLimitAre429) {
  HttpServerOptions options;
  options.max_in_flight_per_client = 1;
  Start(options);
  const Message list = MakeRequest(1, "tools/list", ModernParams());
  EXPECT_EQ(Answer(ModernHeaders("tools/list"), list).first, 200);  // one at a time is fine
  {
    // The client's one request in flight, once the server has taken it. Until then a list
    // of the same client can hold the slot for a moment, and the call is the one refused
    // (a race of the test's own requests, seen under ASan): then the call is sent again.
    std::unique_ptr<RawConnection> call;
    Value body;
    bool list_refused = false;
    for (int attempt = 0; attempt < 50 && !list_refused; ++attempt) {
      call = std::make_unique<RawConnection>(port_);
      ASSERT_TRUE(call->Send("POST", ModernHeaders("tools/call", "slow"),
                             SerializeMessage(MakeRequest(2, "tools/call", ModernParams({{"name", "slow"}})))));
      list_refused = Eventually([&] {
        auto answer = Answer(ModernHeaders("tools/list"), list);
        body = answer.second;
        return answer.first == 429 || call->ReadUntilWithin(" 429 ", std::chrono::milliseconds(5));
      }) && !call->received().starts_with("HTTP/1.1 429");
    }
    EXPECT_TRUE(list_refused);
    EXPECT_EQ(body["jsonrpc"], "2.0");
    EXPECT_TRUE(body["error"]["code"].is_number_integer());
  }
  // Its slot is free again once the call's client has left.
  EXPECT_TRUE(Eventually([&] { return Answer(ModernHeaders("tools/list"), list).first == 200; }));
}

// Open streams have a budget of their own: a client's listen stream never blocks its calls.
TEST_F(HttpDepartureTest, StreamsBeyondAClientsLimitAre429AndLeaveItsRequestsAlone) {
  HttpServerOptions options;
  options.max_in_flight_per_client = 1;
  Start(options);
  RawConnection stream(port_);
  ASSERT_TRUE(Listen(stream, "held"));
  EXPECT_EQ(Answer(ModernHeaders("tools/list"), MakeRequest(1, "tools/list", ModernParams())).first, 200);
  RawConnection second(port_);
  ASSERT_TRUE(second.Send("POST", ModernHeaders("subscriptions/listen"), ListenBody("second")));
  ASSERT_TRUE(second.ReadUntil("\r\n"));
  EXPECT_NE(second.received().find(" 429 "), std::string::npos) << second.received();
}

TEST_F(HttpDepartureTest, ALiveSessionIsItsOwnClientForTheLimit) {
  HttpServerOptions options;
  options.max_in_flight_per_client = 1;
  options.keep_alive_ms = 3600 * 1000;
  Start(options);
  const std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  RawConnection stream(port_);
  ASSERT_TRUE(stream.Send("GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}));
  ASSERT_TRUE(stream.ReadUntil("retry:"));  // the session's one open stream
  httplib::Headers in_session = ModernHeaders("subscriptions/listen");
  in_session.emplace("Mcp-Session-Id", session);
  RawConnection second(port_);
  ASSERT_TRUE(second.Send("POST", in_session, ListenBody("in-session")));
  ASSERT_TRUE(second.ReadUntil("\r\n"));
  EXPECT_NE(second.received().find(" 429 "), std::string::npos) << second.received();
  // The same peer without that session is another client; a session id that does not
  // exist is no way around the peer's limit.
  RawConnection other(port_);
  EXPECT_TRUE(Listen(other, "other"));
  httplib::Headers made_up = ModernHeaders("subscriptions/listen");
  made_up.emplace("Mcp-Session-Id", "made-up");
  RawConnection third(port_);
  ASSERT_TRUE(third.Send("POST", made_up, ListenBody("made-up")));
  ASSERT_TRUE(third.ReadUntil("\r\n"));
  EXPECT_NE(third.received().find(" 429 "), std::string::npos) << third.received();
}

TEST_F(HttpServerTest, ABodyOverTheLimitIs413WithOrWithoutALength) {
  Start();  // max_body_bytes 4096
  const std::string large(5000, ' ');
  auto sized = client_->Post("/mcp", Headers(), large, "application/json");
  ASSERT_TRUE(sized);
  EXPECT_EQ(sized->status, 413);
  auto chunked = client_->Post(
      "/mcp", Headers(),
      [&large](std::size_t offset, httplib::DataSink& sink) {
        if (offset < large.size()) {
          sink.write(large.data() + offset, std::min<std::size_t>(1000, large.size() - offset));
        } else {
          sink.done();
        }
        return true;
      },
      "application/json");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);
}

// ---- The legacy session table: ids, idle expiry, eviction (issue #29 items 4 and 5). ----

// std::mt19937_64's output tempering and its inverse: 312 consecutive outputs are the
// generator's whole state.
std::uint64_t Temper(std::uint64_t y) {
  y ^= (y >> 29) & 0x5555555555555555ULL;
  y ^= (y << 17) & 0x71D67FFFEDA60000ULL;
  y ^= (y << 37) & 0xFFF7EEE000000000ULL;
  return y ^ (y >> 43);
}
std::uint64_t UndoRight(std::uint64_t y, int shift, std::uint64_t mask) {
  std::uint64_t x = y;
  for (int i = 0; i <= 64 / shift; ++i) x = y ^ ((x >> shift) & mask);
  return x;
}
std::uint64_t UndoLeft(std::uint64_t y, int shift, std::uint64_t mask) {
  std::uint64_t x = y;
  for (int i = 0; i <= 64 / shift; ++i) x = y ^ ((x << shift) & mask);
  return x;
}
std::uint64_t Untemper(std::uint64_t z) {
  z = UndoRight(z, 43, ~0ULL);
  z = UndoLeft(z, 37, 0xFFF7EEE000000000ULL);
  z = UndoLeft(z, 17, 0x71D67FFFEDA60000ULL);
  return UndoRight(z, 29, 0x5555555555555555ULL);
}
// The next two outputs of a generator whose last 312 outputs, untempered, are `state`.
std::array<std::uint64_t, 2> NextTwo(std::vector<std::uint64_t> state) {
  constexpr std::uint64_t kUpper = ~0ULL << 31, kLower = (1ULL << 31) - 1, kA = 0xB5026F5AA96619E9ULL;
  for (std::size_t k = 0; k < 2; ++k) {
    const std::uint64_t y = (state[k] & kUpper) | (state[k + 1] & kLower);
    state.push_back(state[k + 156] ^ (y >> 1) ^ ((y & 1) != 0 ? kA : 0));
  }
  return {Temper(state[312]), Temper(state[313])};
}
// The two 64-bit outputs a 32-digit id was written from (lowest nibble first, as the
// seeded generator's ids were), and back.
std::array<std::uint64_t, 2> OutputsOf(const std::string& id) {
  std::array<std::uint64_t, 2> outputs{};
  for (std::size_t i = 0; i < 32; ++i) {
    const char c = id[i];
    const std::uint64_t nibble = static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
    outputs[i / 16] |= nibble << (4 * (i % 16));
  }
  return outputs;
}
std::string IdOf(const std::array<std::uint64_t, 2>& outputs) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (std::uint64_t bits : outputs) {
    for (int k = 0; k < 16; ++k, bits >>= 4) id.push_back(kHex[bits & 0xf]);
  }
  return id;
}

// Issue #29 item 4: after 156 sessions, the next client's id was predicted exactly.
TEST_F(HttpServerTest, SessionIdsCannotBePredictedFromEarlierOnes) {
  {  // The attack works on a seeded generator's ids: the test would see a predictable one.
    std::mt19937_64 generator(12345);
    std::vector<std::uint64_t> state;
    for (int i = 0; i < 312; ++i) state.push_back(Untemper(generator()));
    const std::array<std::uint64_t, 2> next = {generator(), generator()};
    ASSERT_EQ(NextTwo(state), next);
  }
  Start();
  std::vector<std::uint64_t> state;
  for (int i = 0; i < 156; ++i) {
    const std::string id = Initialize();
    ASSERT_EQ(id.size(), 32u) << "128 bits as hex";
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    for (std::uint64_t output : OutputsOf(id)) state.push_back(Untemper(output));
  }
  EXPECT_NE(Initialize(), IdOf(NextTwo(state)));
}

// Issue #29 item 5: 1,022 initialize requests locked out the next client (503).
TEST_F(HttpServerTest, AFullTableForgetsTheLeastRecentlyUsedIdleSession) {
  Start();  // the default table of 1,024
  const std::string first = Initialize();
  ASSERT_FALSE(first.empty());
  for (int i = 0; i < 1100; ++i) ASSERT_FALSE(Initialize().empty()) << i;
  const std::string newcomer = Initialize();
  ASSERT_FALSE(newcomer.empty());
  EXPECT_EQ(StatusIn(newcomer), 200);
  EXPECT_EQ(StatusIn(first), 404);  // evicted: it initializes again
}

TEST_F(HttpServerTest, EvictionTakesTheLeastRecentlyUsedAndNeverABusySession) {
  HttpServerOptions options;
  options.max_sessions = 2;
  options.keep_alive_ms = 3600 * 1000;
  Start(options);
  const std::string a = Initialize();
  const std::string b = Initialize();
  ASSERT_EQ(StatusIn(a), 200);  // a is now the more recent
  const std::string c = Initialize();                             // b goes
  EXPECT_EQ(StatusIn(b), 404);
  EXPECT_EQ(StatusIn(a), 200);
  // Both sessions busy (a GET stream each): a newcomer is refused, no one evicted.
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (const std::string& session : {a, c}) {
    streams.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(streams.back()->Send("GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}));
    ASSERT_TRUE(streams.back()->ReadUntil("retry:"));
  }
  auto refused = Post(InitializeMessage());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(StatusIn(a), 200);
  streams.front()->Close();  // a is idle again once its stream is known to be gone
  EXPECT_TRUE(Eventually([&] {
    auto admitted = Post(InitializeMessage());
    return admitted && admitted->status == 200;
  }));
  EXPECT_EQ(StatusIn(a), 404);
  EXPECT_EQ(StatusIn(c), 200);
}

// Issue #29 item 5: sessions never expired. An idle one does now; one with a GET stream open
// is not idle. (The sleep is a lower bound only: at least session_idle has passed.)
TEST_F(HttpServerTest, AnIdleSessionExpiresAndOneWithAStreamDoesNot) {
  HttpServerOptions options;
  options.session_idle = std::chrono::seconds(1);
  options.keep_alive_ms = 3600 * 1000;
  Start(options);
  const std::string idle = Initialize();
  const std::string streaming = Initialize();
  RawConnection stream(port_);
  ASSERT_TRUE(stream.Send("GET", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", streaming}}));
  ASSERT_TRUE(stream.ReadUntil("retry:"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(StatusIn(idle), 404);
  EXPECT_EQ(StatusIn(streaming), 200);
}

// Issue #29 item 5: 16 listen streams from one client made every other client's requests
// 429 (the limit was per address, and every loopback client shares one).
TEST_F(HttpDepartureTest, OneClientsSixteenListenStreamsLeaveOtherClientsServed) {
  HttpServerOptions options;
  options.max_in_flight_per_client = 16;  // as serve
  Start(options);
  std::vector<std::unique_ptr<RawConnection>> streams;
  for (int i = 0; i < 16; ++i) {
    streams.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(Listen(*streams.back(), "l" + std::to_string(i))) << i;
  }
  const std::string session = Initialize();  // a legacy newcomer from the same address
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(StatusIn(session), 200);
  EXPECT_EQ(Answer(ModernHeaders("tools/list"), MakeRequest(3, "tools/list", ModernParams())).first, 200);
}

// ---- Read-only pages (serve's /metrics) and the trace context a call carries. ----

TEST_F(HttpServerTest, APageIsServedBehindTheSameTokenAndOtherPathsStay404) {
  HttpServerOptions options;
  options.bearer_token = "s3cret-token-value";
  options.pages.push_back({"/metrics", "text/plain; version=0.0.4; charset=utf-8", [] { return std::string("m 1\n"); }});
  Start(options);
  auto anonymous = client_->Get("/metrics");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->body.find("m 1"), std::string::npos);
  auto page = client_->Get("/metrics", {{"Authorization", "Bearer s3cret-token-value"}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "m 1\n");
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  auto other = client_->Get("/metricz", {{"Authorization", "Bearer s3cret-token-value"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

TEST_F(HttpServerTest, ATraceContextReachesTheToolFromMetaElseFromTheHeaders) {
  std::mutex mutex;
  std::vector<TraceContext> seen;
  std::vector<std::string> transports, sessions;
  server_->AddTool({{"name", "traced"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                   [&](const Value&, ToolContext& context) {
                     std::lock_guard lock(mutex);
                     seen.push_back(context.trace());
                     transports.push_back(context.network_transport());
                     sessions.push_back(context.session_id());
                     return ToolOutcome{{{"content", Value::array()}}, {}};
                   });
  Start();
  const std::string session = Initialize();
  const std::string in_meta = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::string in_header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  httplib::Headers headers = Headers(session);
  headers.emplace("traceparent", in_header);
  headers.emplace("tracestate", "h=1");
  auto by_header = client_->Post("/mcp", headers, SerializeMessage(MakeRequest(2, "tools/call", {{"name", "traced"}})),
                                 "application/json");
  ASSERT_TRUE(by_header && by_header->status == 200);
  const Message meta_wins =
      MakeRequest(3, "tools/call", {{"name", "traced"}, {"_meta", {{"traceparent", in_meta}}}});
  auto both = client_->Post("/mcp", headers, SerializeMessage(meta_wins), "application/json");
  ASSERT_TRUE(both && both->status == 200);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].traceparent, in_header);
  EXPECT_EQ(seen[0].tracestate, "h=1");
  EXPECT_EQ(seen[1].traceparent, in_meta);
  EXPECT_EQ(seen[1].tracestate, "");  // the header's tracestate belongs to the header's parent
  EXPECT_EQ(transports[0], "tcp");
  EXPECT_EQ(sessions[0], session);
}

}  // namespace
// A balancer's probes, and a drain: readiness turns 503 at once, a call in flight is
// answered, a new request is refused before anything of it starts.
TEST_F(HttpModernTest, ADrainAnswersTheCallInFlightAndRefusesNewRequestsAndReadiness) {
  std::atomic<bool> release{false};
  std::atomic<int> started{0};
  server_->AddTool({{"name", "slow"}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}},
                   [&](const Value&, ToolContext&) {
                     ++started;
                     while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                     return ToolOutcome{{{"content", Value::array()}}, {}};
                   });
  HttpServerOptions options;
  options.bearer_token = "probe-token-0123456789abcdef";
  options.health_path = "/healthz";
  options.ready_path = "/readyz";
  options.ready = [] { return udon::OkStatus(); };
  Start(options);
  EXPECT_EQ(client_->Get("/readyz")->status, 200) << "probes need no token";
  httplib::Headers headers = ModernHeaders("tools/call", "slow");
  headers.emplace("Authorization", "Bearer probe-token-0123456789abcdef");
  const Message call = MakeRequest(3, "tools/call", ModernParams({{"name", "slow"}}));
  int in_flight_status = 0;
  std::thread caller([&] { in_flight_status = Answer(headers, call).first; });
  while (started == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::size_t left = 99;
  std::thread drain([&] { left = http_->Drain(std::chrono::seconds(30)); });
  httplib::Client other("127.0.0.1", port_);
  while (other.Get("/readyz")->status != 503) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(other.Get("/readyz")->body, R"({"code":"serve.draining","status":"unavailable"})");
  EXPECT_EQ(other.Get("/healthz")->status, 200);
  auto refused = other.Post("/mcp", headers, SerializeMessage(call), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(started, 1) << "a request was started while draining";
  release = true;
  caller.join();
  drain.join();
  EXPECT_EQ(in_flight_status, 200);
  EXPECT_EQ(left, 0u);
}

TEST_F(HttpModernTest, ReadinessNamesTheCodeOfWhatIsMissing) {
  HttpServerOptions options;
  options.ready_path = "/readyz";
  options.ready = [] { return udon::Status(udon::MakeError("state.unavailable", "the store does not answer")); };
  Start(options);
  auto ready = client_->Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_EQ(ready->body, R"({"code":"state.unavailable","status":"unavailable"})");
  EXPECT_EQ(client_->Get("/healthz")->status, 404) << "a path not configured is no probe";
}

}  // namespace udon::mcp::http_test
