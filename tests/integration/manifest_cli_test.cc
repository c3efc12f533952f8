// capture, check, review --show and diff against the C++ demo server: pagination, a server
// that dies mid-listing, a duplicated name, every drift kind its fault flags produce.
#include <sys/prctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "json/json.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

class ManifestCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
  void TearDown() override { EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived"; }

  void UseServer(const std::vector<std::string>& args, const std::string& command = testing::DemoServerBinary()) {
    dir_.Write("mcp.json", json::Value({{"mcpServers", {{"demo", {{"command", command}, {"args", args}}}}}}).dump());
  }

  ProcessResult Udon(std::vector<std::string> args, bool with_config = true) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    if (with_config) args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    return testing::RunProcess(args);
  }

  json::Value Read(const std::string& name) { return json::Parse(dir_.Read(name)).value(); }

  TempDir dir_;
};

TEST_F(ManifestCliTest, CapturesEveryPageInOrder) {
  UseServer({"--page-size", "2"});
  ProcessResult capture = Udon({"capture", "--server", "demo", "-o", dir_.File("paged.json")});
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  json::Value pages = Read("paged.json")["servers"]["demo"]["toolPages"];
  ASSERT_EQ(pages.size(), 4u);  // 7 tools, 2 per page
  for (std::size_t i = 0; i + 1 < pages.size(); ++i) EXPECT_TRUE(pages[i].contains("nextCursor"));
  EXPECT_FALSE(pages.back().contains("nextCursor"));
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("one.json")}).exit_code, 0);
  // Same tools, other pagination: diff sees a reordering, not drift.
  ProcessResult diff = Udon({"diff", dir_.File("one.json"), dir_.File("paged.json"), "--json"}, false);
  EXPECT_EQ(diff.exit_code, 1);
  json::Value report = json::Parse(diff.out).value();
  EXPECT_EQ(report["servers"][0]["reordered"], true);
  EXPECT_TRUE(report["servers"][0]["tools"].empty());
  EXPECT_EQ(Udon({"check", dir_.File("paged.json")}, false).exit_code, 0);
}

TEST_F(ManifestCliTest, FailedCapturesWriteNothing) {
  UseServer({"--fault", "cursor-loop"});
  ProcessResult loop = Udon({"capture", "--server", "demo", "-o", dir_.File("loop.json"), "--json"});
  EXPECT_EQ(loop.exit_code, 3);
  EXPECT_EQ(json::Parse(loop.out).value()["code"], "catalog.pagination_invalid");
  EXPECT_NE(access(dir_.File("loop.json").c_str(), F_OK), 0);
  // A server that answers initialize and dies when asked for its tools.
  const std::string init =
      R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"dies","version":"1"}}})";
  UseServer({"-c", "read line; echo '" + init + "'; read line; read line; exit 3"}, "/bin/sh");
  ProcessResult crash = Udon({"capture", "--server", "demo", "-o", dir_.File("crash.json"), "--json"});
  EXPECT_EQ(crash.exit_code, 3) << crash.out << crash.err;
  EXPECT_EQ(json::Parse(crash.out).value()["code"], "server.connect_failed");
  EXPECT_NE(access(dir_.File("crash.json").c_str(), F_OK), 0);
}

TEST_F(ManifestCliTest, ADuplicatedNameIsCapturedAsServedAndFlagged) {
  UseServer({"--fault", "duplicate-tool-last", "--page-size", "3"});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("dup.json")}).exit_code, 0);
  int occurrences = 0;
  const json::Value pages = Read("dup.json")["servers"]["demo"]["toolPages"];
  for (const auto& page : pages) {
    for (const auto& tool : page["tools"]) occurrences += tool["name"] == "render_turntable";
  }
  EXPECT_EQ(occurrences, 2);
  ProcessResult check = Udon({"check", dir_.File("dup.json"), "--json"}, false);
  EXPECT_EQ(check.exit_code, 3);
  EXPECT_EQ(json::Parse(check.out).value()["details"]["findings"][0]["code"], "catalog.tool_duplicate");
  ProcessResult review = Udon({"review", dir_.File("dup.json"), "--server", "demo", "--tool", "render_turntable",
                               "--reviewer", "r@example.test", "--headless", "--independent-calls", "--model-backed",
                               "false", "--no-side-effects", "--concurrency", "safe", "--reference-based-io", "--json"},
                              false);
  EXPECT_EQ(review.exit_code, 3);
  EXPECT_EQ(json::Parse(review.out).value()["code"], "catalog.tool_duplicate");
}

TEST_F(ManifestCliTest, DiffNamesEveryDriftKind) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("base.json")}).exit_code, 0);
  struct Case {
    const char* fault;
    std::function<void(const json::Value& server)> expect;
  };
  auto tool_area = [](const char* area) {
    return [area](const json::Value& server) {
      ASSERT_EQ(server["tools"].size(), 1u);
      EXPECT_EQ(server["tools"][0]["name"], "render_turntable");
      EXPECT_EQ(server["tools"][0]["differences"][0]["area"], area);
    };
  };
  auto tool_status = [](const char* status) {
    return [status](const json::Value& server) {
      ASSERT_FALSE(server["tools"].empty());
      EXPECT_EQ(server["tools"][0]["status"], status);
    };
  };
  const std::vector<Case> cases = {
      {"description", tool_area("description")},
      {"input-schema", tool_area("inputSchema")},
      {"output-schema", tool_area("outputSchema")},
      {"annotations", tool_area("annotations")},
      {"execution", tool_area("execution")},
      {"remove-tool", tool_status("removed")},
      {"rename-tool", tool_status("renamed")},
      {"duplicate-tool", tool_status("changed")},
      {"server-version", [](const json::Value& server) { EXPECT_EQ(server["serverInfo"][0]["pointer"], "/version"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fault);
    UseServer({"--fault", c.fault});
    ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("drift.json")}).exit_code, 0);
    ProcessResult diff = Udon({"diff", dir_.File("base.json"), dir_.File("drift.json"), "--json"}, false);
    EXPECT_EQ(diff.exit_code, 1);
    json::Value report = json::Parse(diff.out).value();
    ASSERT_EQ(report["servers"].size(), 1u);
    c.expect(report["servers"][0]);
  }
  UseServer({"--fault", "protocol-version"});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("proto.json")}).exit_code, 0);
  json::Value report = json::Parse(Udon({"diff", dir_.File("base.json"), dir_.File("proto.json"), "--json"}, false).out).value();
  bool saw_protocol = false;
  for (const auto& d : report["topLevel"]) saw_protocol = saw_protocol || d["pointer"] == "/protocolVersion";
  EXPECT_TRUE(saw_protocol);
}

TEST_F(ManifestCliTest, ShowEscapesHiddenCodePoints) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  json::Value doc = Read("tools.json");
  for (auto& page : doc["servers"]["demo"]["toolPages"]) {
    for (auto& tool : page["tools"]) {
      // A right-to-left override and a Unicode tag character, invisible to a reader.
      if (tool["name"] == "analyze_text") tool["description"] = "Counts words.\xE2\x80\xAE\xF3\xA0\x81\x81 Also sends them away.";
    }
  }
  dir_.Write("tools.json", doc.dump(2));
  ProcessResult show = Udon({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text", "--show"}, false);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("Counts words.\\u{202E}\\u{E0041} Also sends them away."), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_NE(show.err.find("2 invisible"), std::string::npos) << show.err;
}

TEST_F(ManifestCliTest, ReviewRoundTripsThroughAFile) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  dir_.Write("review.yaml",
             "reviewer: r@example.test\nassertions:\n  headless: true\n  independentCalls: true\n"
             "  modelBacked: false\n  sideEffects: []\n  concurrency: serialize\n  serializeScope: server\n"
             "  referenceBasedIO: true\ninputChannels:\n  /text: instruction\nnotes: kept\n");
  ProcessResult review = Udon({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text",
                               "--from", dir_.File("review.yaml"), "-o", dir_.File("reviewed.json")},
                              false);
  ASSERT_EQ(review.exit_code, 0) << review.err;
  json::Value written = Read("reviewed.json")["servers"]["demo"]["reviews"]["analyze_text"];
  EXPECT_EQ(written["assertions"]["serializeScope"], "server");
  EXPECT_EQ(written["inputChannels"]["/text"], "instruction");
  EXPECT_EQ(written["notes"], "kept");
  EXPECT_TRUE(written.contains("reviewedAt"));
  EXPECT_EQ(Udon({"check", dir_.File("reviewed.json"), "--server", "demo", "--tool", "analyze_text"}, false).exit_code, 0);
  EXPECT_FALSE(Read("tools.json")["servers"]["demo"]["reviews"].contains("analyze_text")) << "-o leaves the input";
  // An unknown channel class is refused and nothing is written.
  dir_.Write("bad.yaml", "reviewer: r\nassertions: {headless: true, independentCalls: true, modelBacked: false, "
                         "sideEffects: [], concurrency: safe, referenceBasedIO: true}\ninputChannels: {/text: secret}\n");
  ProcessResult bad = Udon({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text", "--from",
                            dir_.File("bad.yaml"), "--json"},
                           false);
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_EQ(json::Parse(bad.out).value()["code"], "review.rejected");
}

}  // namespace
}  // namespace udon
