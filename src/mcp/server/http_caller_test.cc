// The HTTP server with an authenticate hook (serve --auth oauth): the hook's refusal and
// challenge reach the client before anything else is looked at, the public metadata is
// served without a credential, each caller lists and reaches only its own tools, and a
// legacy session is its opener's alone.
#include <memory>
#include <string>

#include "mcp/server/http_server_test_fixture.h"

namespace udon::mcp::http_test {
namespace {

constexpr const char* kChallenge = "Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\"";

// "Bearer alice" may use t2 alone, "Bearer root" everything; anything else is refused.
HttpServerOptions WithCallers(int* judged = nullptr) {
  HttpServerOptions options;
  options.public_documents["/.well-known/oauth-protected-resource/mcp"] = R"({"resource":"x"})";
  options.authenticate = [judged](const std::string& authorization) {
    if (judged != nullptr) ++*judged;
    AuthVerdict verdict;
    auto caller = std::make_shared<Caller>();
    if (authorization == "Bearer alice") {
      caller->subject = "alice";
      caller->tools = {"t2"};
      verdict.caller = caller;
    } else if (authorization == "Bearer root") {
      caller->subject = "root";
      caller->all_tools = true;
      verdict.caller = caller;
    } else {
      verdict.www_authenticate = kChallenge;
      verdict.message = "no usable token";
    }
    return verdict;
  };
  return options;
}

std::vector<std::string> Names(const Value& answer) {
  std::vector<std::string> names;
  for (const Value& tool : answer["result"]["tools"]) names.push_back(tool["name"].get<std::string>());
  return names;
}

TEST_F(HttpModernTest, TheHooksRefusalCarriesItsChallengeAndTheMetadataNeedsNoCredential) {
  int judged = 0;
  Start(WithCallers(&judged));
  auto refused = PostModern(ModernHeaders("tools/list"), MakeRequest(1, "tools/list", ModernParams()));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"), kChallenge);
  EXPECT_EQ(judged, 1);
  auto metadata = client_->Get("/.well-known/oauth-protected-resource/mcp");
  ASSERT_TRUE(metadata);
  EXPECT_EQ(metadata->status, 200);
  EXPECT_EQ(metadata->body, R"({"resource":"x"})");
  for (const char* path : {"/.well-known/oauth-protected-resource", "/token", "/register"}) {
    auto other = client_->Get(path);
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 404) << path;
  }
  EXPECT_EQ(judged, 1);  // the metadata and 404s ask no credential
}

TEST_F(HttpModernTest, EachCallerListsOnlyItsOwnToolsPageByPage) {
  Start(WithCallers());
  httplib::Headers alice = ModernHeaders("tools/list");
  alice.emplace("Authorization", "Bearer alice");
  auto [status, answer] = Answer(alice, MakeRequest(1, "tools/list", ModernParams()));
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Names(answer), std::vector<std::string>{"t2"});
  EXPECT_FALSE(answer["result"].contains("nextCursor"));
  httplib::Headers root = ModernHeaders("tools/list");
  root.emplace("Authorization", "Bearer root");
  std::vector<std::string> all;
  Value params = ModernParams();
  for (int page = 0; page < 5; ++page) {
    auto [root_status, root_answer] = Answer(root, MakeRequest(2, "tools/list", params));
    ASSERT_EQ(root_status, 200);
    for (const std::string& name : Names(root_answer)) all.push_back(name);
    if (!root_answer["result"].contains("nextCursor")) break;
    params = ModernParams({{"cursor", root_answer["result"]["nextCursor"]}});
  }
  EXPECT_EQ(all, (std::vector<std::string>{"t1", "t2", "regional"}));
}

TEST_F(HttpServerTest, ALegacySessionIsItsOpenersAlone) {
  Start(WithCallers());
  httplib::Headers alice = Headers();
  alice.emplace("Authorization", "Bearer alice");
  auto opened = client_->Post("/mcp", alice, SerializeMessage(InitializeMessage()), "application/json");
  ASSERT_TRUE(opened);
  ASSERT_EQ(opened->status, 200);
  const std::string session = opened->get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  auto list_as = [&](const char* credential) {
    httplib::Headers headers = Headers(session);
    headers.emplace("Authorization", credential);
    return client_->Post("/mcp", headers, SerializeMessage(MakeRequest(9, "tools/list")), "application/json");
  };
  auto own = list_as("Bearer alice");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200);
  auto events = Events(own->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(Names(events.back()), std::vector<std::string>{"t2"});
  auto other = list_as("Bearer root");  // a valid token, another subject
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

// A page beside the endpoint (serve's /metrics) describes every tool: its counters name
// them all. A caller whose scopes open only some tools, and whom tools/list shows only
// those, must not learn the others' names (and their use) there.
TEST_F(HttpServerTest, APageIsOnlyForACallerWhoMayUseEveryTool) {
  HttpServerOptions options = WithCallers();
  options.pages.push_back({"/metrics", "text/plain", [] { return std::string("calls{tool=\"t1\"} 1\n"); }});
  Start(options);
  auto as_alice = client_->Get("/metrics", httplib::Headers{{"Authorization", "Bearer alice"}});
  ASSERT_TRUE(as_alice);
  EXPECT_EQ(as_alice->status, 403);
  EXPECT_EQ(as_alice->body.find("t1"), std::string::npos) << as_alice->body;
  auto as_root = client_->Get("/metrics", httplib::Headers{{"Authorization", "Bearer root"}});
  ASSERT_TRUE(as_root);
  EXPECT_EQ(as_root->status, 200);
  EXPECT_NE(as_root->body.find("t1"), std::string::npos);
}

}  // namespace
}  // namespace udon::mcp::http_test
