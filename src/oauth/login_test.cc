// BearerFor's refresh against a local authorization server (cpp-httplib): the server's
// metadata is fetched once per process, so every later refresh is one token request.
#include "oauth/login.h"

#include <httplib.h>

#include <atomic>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "test_support.h"

namespace udon::oauth {
namespace {

TEST(BearerForTest, ARefreshFetchesTheAuthorizationServerMetadataOncePerProcess) {
  httplib::Server server;
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  std::atomic<int> metadata_requests{0};
  std::atomic<int> token_requests{0};
  server.Get("/.well-known/oauth-authorization-server", [&](const httplib::Request&, httplib::Response& response) {
    ++metadata_requests;
    response.set_content(R"({"issuer":")" + origin + R"(","authorization_endpoint":")" + origin +
                             R"(/authorize","token_endpoint":")" + origin +
                             R"(/token","code_challenge_methods_supported":["S256"]})",
                         "application/json");
  });
  server.Post("/token", [&](const httplib::Request&, httplib::Response& response) {
    const std::string n = std::to_string(++token_requests);
    response.set_content(R"({"access_token":"access-)" + n + R"(","token_type":"Bearer","expires_in":3600,)"
                             R"("refresh_token":"refresh-)" + n + R"("})",
                         "application/json");
  });
  std::thread serving([&] { server.listen_after_bind(); });

  testing::TempDir dir;
  FileTokenStore store(dir.path());
  StoredLogin login;
  login.key = {origin, origin + "/mcp"};
  login.client.kind = ClientKind::kDynamic;
  login.client.client_id = "client-1";
  login.client.token_endpoint_auth_method = "none";
  login.access_token = "access-0";
  login.refresh_token = "refresh-0";
  login.expires_at_unix = 4'000'000'000;
  login.obtained_at_unix = 1'800'000'000;
  ASSERT_TRUE(store.Save(login).ok());

  BearerOptions options;
  options.server_key = "remote";
  options.server_url = origin + "/mcp";
  // Two 401s in one process (a serve, a probe): each refreshes the rejected token.
  for (const char* rejected : {"access-0", "access-1"}) {
    options.rejected_token = rejected;
    Result<std::string> token = BearerFor(store, options);
    ASSERT_TRUE(token.ok()) << token.error().code << ": " << token.error().message;
    EXPECT_NE(*token, rejected);
  }
  server.stop();
  serving.join();
  EXPECT_EQ(token_requests.load(), 2);
  EXPECT_EQ(metadata_requests.load(), 1) << "a refresh fetched the authorization server metadata again";
}

}  // namespace
}  // namespace udon::oauth
