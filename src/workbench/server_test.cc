#include "workbench/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "manifest/internal/test_manifest.h"
#include "test_support.h"

namespace udon::workbench {
namespace {

constexpr int kPort = 4242;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("m.json", manifest::internal::ValidManifestJson().dump(2));
    bench_ = std::make_unique<Workbench>(WorkbenchOptions{dir_.File("m.json"), "", std::nullopt, "", {}});
    auto created = WorkbenchServer::Create(*bench_, {});
    ASSERT_TRUE(created.ok());
    server_ = std::move(created).value();
    server_->set_port(kPort);
  }

  Request Get(const std::string& rest) const {
    return {"GET", "/" + server_->token() + "/" + rest, {}, {{"host", "127.0.0.1:4242"}}, ""};
  }
  Request Post(const std::string& rest, const std::string& body) const {
    Request request = Get(rest);
    request.method = "POST";
    request.headers["content-type"] = "application/json";
    request.headers["x-udon-csrf"] = server_->csrf();
    request.headers["origin"] = "http://127.0.0.1:4242";
    request.body = body;
    return request;
  }
  int Status(const Request& request) { return server_->Handle(request).status; }

  testing::TempDir dir_;
  std::unique_ptr<Workbench> bench_;
  std::unique_ptr<WorkbenchServer> server_;
};

TEST_F(ServerTest, ServesThePageAndItsFilesUnderTheToken) {
  const Response page = server_->Handle(Get(""));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"app.js\" defer></script>"), std::string::npos);
  // No inline script: the CSP allows scripts from this origin only.
  EXPECT_EQ(page.body.find("<script>"), std::string::npos);
  EXPECT_EQ(server_->Handle(Get("app.js")).content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Status(Get("app.css")), 200);
  EXPECT_EQ(Status(Get("nothing")), 404);
  const Response overview = server_->Handle(Get("api/overview"));
  ASSERT_EQ(overview.status, 200);
  EXPECT_EQ(json::Value::parse(overview.body)["csrf"], server_->csrf());
}

TEST_F(ServerTest, RefusesAMissingOrWrongToken) {
  Request request = Get("");
  request.path = "/";
  EXPECT_EQ(Status(request), 403);
  request.path = "/index.html";
  EXPECT_EQ(Status(request), 403);
  std::string wrong = server_->token();
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  request.path = "/" + wrong + "/";
  EXPECT_EQ(Status(request), 403);
  request.path = "/" + server_->token().substr(0, 63) + "/";
  EXPECT_EQ(Status(request), 403);
  request.path = "/" + server_->token();  // no slash after the token: nothing to serve
  EXPECT_EQ(Status(request), 403);
  const Response refused = server_->Handle(request);
  EXPECT_EQ(json::Value::parse(refused.body)["error"]["code"], "workbench.forbidden");
}

// DNS rebinding and other pages: only this listener's Host, and an Origin only of itself.
TEST_F(ServerTest, RefusesAnotherHostOriginOrACrossSiteFetch) {
  for (const char* host : {"evil.example:4242", "127.0.0.1:4243", "127.0.0.1", "", "localhost.evil.example:4242"}) {
    Request request = Get("");
    request.headers["host"] = host;
    EXPECT_EQ(Status(request), 403) << host;
  }
  Request localhost = Get("");
  localhost.headers["host"] = "LOCALHOST:4242";
  EXPECT_EQ(Status(localhost), 200);
  for (const char* origin : {"http://evil.example", "null", "http://127.0.0.1:4243", "https://127.0.0.1:4242"}) {
    Request request = Get("api/overview");
    request.headers["origin"] = origin;
    EXPECT_EQ(Status(request), 403) << origin;
  }
  Request cross = Get("api/overview");
  cross.headers["sec-fetch-site"] = "cross-site";
  EXPECT_EQ(Status(cross), 403);
}

TEST_F(ServerTest, AChangeNeedsTheCsrfTokenAndAJsonBody) {
  const std::string body = R"({"server":"blender_farm","tool":"list_assets","baseSha256":"x","review":{}})";
  Request no_csrf = Post("api/review", body);
  no_csrf.headers.erase("x-udon-csrf");
  EXPECT_EQ(Status(no_csrf), 403);
  Request wrong_csrf = Post("api/review", body);
  wrong_csrf.headers["x-udon-csrf"] = server_->token();
  EXPECT_EQ(Status(wrong_csrf), 403);
  Request form = Post("api/review", body);
  form.headers["content-type"] = "text/plain";  // what a cross-site form could send
  EXPECT_EQ(Status(form), 403);
  EXPECT_EQ(dir_.Read("m.json"), manifest::internal::ValidManifestJson().dump(2));
  // With both, the request reaches the workbench (which finds the base digest stale).
  const Response stale = server_->Handle(Post("api/review", body));
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(json::Value::parse(stale.body)["error"]["code"], "workbench.stale");
  EXPECT_EQ(Status(Post("api/review", "not json")), 400);
  Request put = Get("api/overview");
  put.method = "PUT";
  EXPECT_EQ(Status(put), 404);
}

TEST(ServerHelpersTest, TokensAreRandomHexAndComparedWhole) {
  auto a = RandomHex(32), b = RandomHex(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_TRUE(SameSecret(*a, *a));
  EXPECT_FALSE(SameSecret(*a, *b));
  EXPECT_FALSE(SameSecret(*a, a->substr(0, 63)));
  EXPECT_FALSE(SameSecret("", *a));
}

TEST(ServerHelpersTest, ListensOnLoopbackOnly) {
  EXPECT_EQ(ParseListenAddress("127.0.0.1:8080")->port, 8080);
  EXPECT_EQ(ParseListenAddress("localhost:0")->host, "127.0.0.1");
  for (const char* refused : {"0.0.0.0:8080", "192.168.1.2:80", "[::]:80", "127.0.0.1", "127.0.0.1:x",
                              "127.0.0.1:70000", "example.com:80"}) {
    auto parsed = ParseListenAddress(refused);
    ASSERT_FALSE(parsed.ok()) << refused;
    EXPECT_EQ(parsed.error().code, "usage.invalid");
  }
}

// Over a real socket: bound to 127.0.0.1, and every response carries the CSP.
TEST(ServerSocketTest, EveryResponseCarriesTheContentSecurityPolicy) {
  testing::TempDir dir;
  dir.Write("m.json", manifest::internal::ValidManifestJson().dump(2));
  Workbench bench({dir.File("m.json"), "", std::nullopt, "", {}});
  auto server = WorkbenchServer::Create(bench, {});
  ASSERT_TRUE(server.ok());
  auto port = (*server)->Bind();
  ASSERT_TRUE(port.ok()) << port.error().Describe();
  std::thread serving([&] { (*server)->Serve(); });
  httplib::Client client("127.0.0.1", *port);
  auto page = client.Get(("/" + (*server)->token() + "/").c_str());
  auto refused = client.Get("/");
  (*server)->Stop();
  serving.join();
  ASSERT_TRUE(page && refused);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Security-Policy"), kContentSecurityPolicy);
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(page->get_header_value("Referrer-Policy"), "no-referrer");
  EXPECT_EQ(refused->status, 403);
  EXPECT_EQ(refused->get_header_value("Content-Security-Policy"), kContentSecurityPolicy);
  EXPECT_EQ((*server)->Url(), "http://127.0.0.1:" + std::to_string(*port) + "/" + (*server)->token() + "/");
}

}  // namespace
}  // namespace udon::workbench
