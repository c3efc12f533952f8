// `udon-mcp workbench` through the real binary (issue 23): --live captures the demo server
// again, the drift names the tool whose description moved, and the one carry-over action
// replaces the manifest with the fresh capture plus the review of the unchanged tool, as
// `capture --update` does; the listen address is loopback only. The page itself is tested
// in Chromium (tests/browser/).
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "json/json.h"
#include "demo_cli_fixture.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

class WorkbenchCliTest : public testing::DemoCliTest {
 protected:
  // The first line the workbench prints: {"ok":true,"url":...,"port":...}.
  static json::Value Started(testing::BackgroundProcess& process) {
    for (int i = 0; i < 400; ++i) {
      const std::string output = process.Output();
      if (const auto end = output.find('\n'); end != std::string::npos) {
        auto parsed = json::Parse(output.substr(0, end));
        return parsed.ok() ? *parsed : json::Value(output);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return nullptr;
  }

};

TEST_F(WorkbenchCliTest, LiveDriftAndCarryOverFollowCaptureUpdate) {
  UseServer({});
  const std::string manifest = dir_.File("tools.json");
  ASSERT_EQ(Udon({"capture", "--config", dir_.File("mcp.json"), "--server", "demo", "-o", manifest}).exit_code, 0);
  ProcessResult reviewed =
      Udon({"review", manifest, "--server", "demo", "--tool", "analyze_text", "--reviewer", "r@example.test",
            "--headless", "--independent-calls", "--model-backed", "false", "--no-side-effects", "--concurrency",
            "safe", "--reference-based-io", "--channel", "/text=data"});
  ASSERT_EQ(reviewed.exit_code, 0) << reviewed.err;
  // Reviews are dated to the second; the live capture must come after the review.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  UseServer({"--fault", "description=render_turntable"});

  testing::BackgroundProcess workbench({testing::UdonMcpBinary(), "workbench", manifest, "--live", "--config",
                                        dir_.File("mcp.json"), "--json"});
  const json::Value started = Started(workbench);
  ASSERT_TRUE(started.is_object() && started.contains("url")) << workbench.Output();
  const int port = started["port"].get<int>();
  const std::string base = started["url"].get<std::string>().substr(("http://127.0.0.1:" + std::to_string(port)).size());
  httplib::Client client("127.0.0.1", port);

  auto drift = client.Get((base + "api/drift").c_str());
  ASSERT_TRUE(drift);
  ASSERT_EQ(drift->status, 200) << drift->body;
  const json::Value d = json::Parse(drift->body).value();
  EXPECT_TRUE(d["live"].get<bool>());
  ASSERT_EQ(d["servers"].size(), 1u);
  const json::Value& tools = d["servers"][0]["tools"];
  ASSERT_EQ(tools.size(), 1u) << drift->body;
  EXPECT_EQ(tools[0]["name"], "render_turntable");
  EXPECT_EQ(tools[0]["differences"][0]["area"], "description");
  EXPECT_EQ(d["carryOver"]["kept"], json::Value::parse(R"([{"server":"demo","tool":"analyze_text"}])"));

  auto overview = client.Get((base + "api/overview").c_str());
  ASSERT_TRUE(overview && overview->status == 200);
  const std::string csrf = json::Parse(overview->body).value()["csrf"].get<std::string>();
  const std::string body = json::Value({{"baseSha256", d["manifestSha256"]}}).dump();
  auto refused = client.Post((base + "api/carry-over").c_str(), body, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);  // no CSRF token
  auto carried = client.Post((base + "api/carry-over").c_str(), {{"X-Udon-Csrf", csrf}}, body, "application/json");
  ASSERT_TRUE(carried);
  ASSERT_EQ(carried->status, 200) << carried->body;
  workbench.Stop();

  // The manifest is now the live capture (the drifted description) with the kept review.
  const json::Value written = json::Parse(dir_.Read("tools.json")).value();
  EXPECT_TRUE(written["servers"]["demo"]["reviews"].contains("analyze_text"));
  EXPECT_FALSE(written["servers"]["demo"]["reviews"].contains("render_turntable"));
  ProcessResult digest = Udon({"digest", manifest});
  EXPECT_EQ(digest.out.substr(0, 64), json::Parse(carried->body).value()["sha256"].get<std::string>());
  ProcessResult diff = Udon({"diff", manifest, manifest});
  EXPECT_EQ(diff.exit_code, 0);
  // The gate accepts the carried review against the drifted server.
  ProcessResult verify = Udon({"verify", "--config", dir_.File("mcp.json"), "--manifest", manifest, "--sha256",
                               digest.out.substr(0, 64), "--server", "demo", "--tool", "analyze_text"});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
}

TEST_F(WorkbenchCliTest, ListensOnLoopbackOnlyAndRefusesUnusableInput) {
  dir_.Write("tools.json", "{}");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"workbench", dir_.File("tools.json"), "--listen", "0.0.0.0:8080", "--json"},
        std::vector<std::string>{"workbench", dir_.File("tools.json"), "--against", "x", "--live", "--json"}}) {
    ProcessResult result = Udon(args);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(json::Parse(result.out).value()["code"], "usage.invalid") << result.out;
  }
  ProcessResult invalid = Udon({"workbench", dir_.File("tools.json"), "--json"});
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_EQ(json::Parse(invalid.out).value()["code"], "manifest.invalid") << invalid.out;
}

}  // namespace
}  // namespace udon
