// The determinism probe and the evidence report end to end against the demo server:
// capture, review, probe (deterministic, nondeterministic, side-effect refusal, a
// serialized tool under concurrency), then evidence summarize over what was recorded.
#include <sys/prctl.h>
#include <unistd.h>

#include <set>

#include <gtest/gtest.h>

#include "gate/evidence_key.h"
#include "json/json.h"
#include "base/sha256.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

const char* kCanary = "CANARY-probe-value-3c9b";

class ProbeCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

  void SetUp() override {
    json::Value config = {{"mcpServers",
                           {{"demo",
                             {{"command", testing::DemoServerBinary()},
                              {"args", {"--ledger-file", dir_.File("ledger.txt"), "--ledger-delay-ms", "50",
                                        "--log-requests", dir_.File("requests.log")}}}}}}};
    dir_.Write("mcp.json", config.dump(2));
    ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
    Review("analyze_text", {"--model-backed", "false", "--no-side-effects", "--concurrency", "safe", "--channel",
                            "/text=data"});
    Review("summarize", {"--model-backed", "true", "--no-side-effects", "--concurrency", "safe", "--channel",
                         "/text=data", "--channel", "/maxSentences=data"});
    Review("append_ledger", {"--model-backed", "false", "--side-effect", "ledger.append", "--concurrency",
                             "serialize", "--channel", "/entry=data"});
    sha_ = Digest("tools.json");
  }

  void TearDown() override {
    EXPECT_TRUE(testing::Descendants(getpid()).empty()) << "a child process survived";
  }

  // A gate-facing command; config_flag false for commands without --config.
  ProcessResult Udon(std::vector<std::string> args, bool config_flag = true) {
    args.insert(args.begin(), testing::UdonMcpBinary());
    if (config_flag) args.insert(args.end(), {"--config", dir_.File("mcp.json")});
    RunOptions options;
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.cwd = dir_.path();
    ProcessResult result = testing::RunProcess(args, options);
    EXPECT_EQ(result.out.find(kCanary), std::string::npos);
    EXPECT_EQ(result.err.find(kCanary), std::string::npos);
    return result;
  }

  void Review(const std::string& tool, std::vector<std::string> assertions, const std::string& file = "tools.json") {
    std::vector<std::string> args = {"review", dir_.File(file), "--server", "demo", "--tool", tool, "--reviewer",
                                     "tester@example.test", "--headless", "--independent-calls",
                                     "--reference-based-io"};
    args.insert(args.end(), assertions.begin(), assertions.end());
    ProcessResult review = Udon(args);
    ASSERT_EQ(review.exit_code, 0) << review.err;
  }

  std::string Digest(const std::string& file) {
    ProcessResult result = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File(file)});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out.substr(0, 64);
  }

  ProcessResult Probe(const std::string& tool, const std::string& args, std::vector<std::string> extra,
                      const std::string& file = "tools.json", const std::string& sha = {}) {
    std::vector<std::string> argv = {"probe", "--manifest", dir_.File(file), "--sha256", sha.empty() ? sha_ : sha,
                                     "--server", "demo", "--tool", tool, "--args", args, "--json", "--evidence",
                                     dir_.File("evidence.jsonl")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Udon(argv);
  }

  static json::Value Report(const ProcessResult& result) {
    auto parsed = json::Parse(result.out);
    EXPECT_TRUE(parsed.ok()) << result.out << result.err;
    return parsed.ok() ? *parsed : json::Value();
  }

  TempDir dir_;
  std::string sha_;
};

const std::string kText = std::string("The first sentence is here. A second one follows. ") +
                          "Then a third. And a fourth. Finally the fifth, with " + kCanary + ".";

std::string TextArgs() { return json::Value{{"text", kText}}.dump(); }

TEST_F(ProbeCliTest, DeterministicToolHasOneDigestOnReusedAndFreshConnections) {
  ProcessResult reused = Probe("analyze_text", TextArgs(), {"--repeat", "5"});
  ASSERT_EQ(reused.exit_code, 0) << reused.out << reused.err;
  json::Value report = Report(reused);
  EXPECT_EQ(report["results"]["distinct"], 1);
  EXPECT_EQ(report["outcomes"], (json::Value{{"ok", 5}}));
  EXPECT_EQ(report["results"]["acrossConnections"]["compared"], true);
  EXPECT_EQ(report["results"]["acrossConnections"]["differ"], false);

  ProcessResult fresh = Probe("analyze_text", TextArgs(), {"--repeat", "4", "--concurrency", "2", "--fresh-connections"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out << fresh.err;
  EXPECT_EQ(Report(fresh)["results"]["distinct"], 1);
  EXPECT_EQ(Report(fresh)["results"]["digests"][0]["hmacSha256"], report["results"]["digests"][0]["hmacSha256"]);
  EXPECT_EQ(Report(fresh)["digestKeyId"], report["digestKeyId"]) << "one state directory, one key";
}

TEST_F(ProbeCliTest, NondeterministicToolDiffersAndOnlyAModelBackedReviewAcceptsThat) {
  const std::string args = json::Value{{"text", kText}, {"maxSentences", 2}}.dump();
  ProcessResult backed = Probe("summarize", args, {"--repeat", "5"});
  ASSERT_EQ(backed.exit_code, 0) << backed.out << backed.err;
  json::Value report = Report(backed);
  EXPECT_GT(report["results"]["distinct"].get<int>(), 1);
  EXPECT_TRUE(report["findings"].empty());

  // The same tool reviewed as not model-backed: the probe reports the contradiction.
  dir_.Write("wrong.json", dir_.Read("tools.json"));
  Review("summarize", {"--model-backed", "false", "--no-side-effects", "--concurrency", "safe", "--channel",
                       "/text=data", "--channel", "/maxSentences=data"},
         "wrong.json");
  ProcessResult contradicted = Probe("summarize", args, {"--repeat", "3"}, "wrong.json", Digest("wrong.json"));
  EXPECT_EQ(contradicted.exit_code, 1) << contradicted.out << contradicted.err;
  json::Value finding = Report(contradicted)["findings"][0];
  EXPECT_EQ(finding["code"], "probe.nondeterministic_not_model_backed");
}

TEST_F(ProbeCliTest, SideEffectsAreRefusedWithoutTheFlagAndStartNoServer) {
  const std::string before = dir_.Read("requests.log");
  ProcessResult refused = Probe("append_ledger", R"({"entry":"x"})", {"--repeat", "2"});
  EXPECT_EQ(refused.exit_code, 3);
  json::Value out = Report(refused);
  EXPECT_EQ(out["ok"], false);
  EXPECT_EQ(out["code"], "probe.side_effects_refused");
  EXPECT_NE(refused.err.find("--allow-side-effects"), std::string::npos);
  EXPECT_EQ(dir_.Read("requests.log"), before) << "no server may be contacted";
}

TEST_F(ProbeCliTest, SerializedToolNeverOverlapsUnderConcurrency) {
  ProcessResult probe =
      Probe("append_ledger", R"({"entry":"x"})", {"--repeat", "6", "--concurrency", "3", "--allow-side-effects"});
  // Sequence numbers differ from call to call and the review says modelBacked false: a
  // finding, by the probe's definition (state, not a model, is why here).
  EXPECT_EQ(probe.exit_code, 1) << probe.out << probe.err;
  json::Value report = Report(probe);
  EXPECT_EQ(report["outcomes"], (json::Value{{"ok", 6}}));
  EXPECT_EQ(report["review"]["concurrency"], "serialize");
  // Every result is {"overlapped": false, "sequence": n}: compare digests, never values;
  // the digests are keyed with the state directory's evidence key, which the test reads.
  auto key = gate::EvidenceKey::LoadOrCreate(dir_.File("state"));
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(report["digestKeyId"], key->id());
  std::set<std::string> not_overlapped;
  for (int sequence = 1; sequence <= 6; ++sequence) {
    not_overlapped.insert(key->Digest({{"overlapped", false}, {"sequence", sequence}}));
  }
  int results = 0;
  for (const json::Value& digest : report["results"]["digests"]) {
    EXPECT_EQ(not_overlapped.count(digest["hmacSha256"].get<std::string>()), 1u) << "a call overlapped another";
    results += digest["count"].get<int>();
  }
  EXPECT_EQ(results, 6);
  EXPECT_EQ(dir_.Read("ledger.txt").size() > 0, true);
}

TEST_F(ProbeCliTest, SummarizeWritesAValueFreeReportAndChart) {
  ASSERT_EQ(Probe("analyze_text", TextArgs(), {"--repeat", "3"}).exit_code, 0);
  ASSERT_EQ(Probe("summarize", json::Value{{"text", kText}}.dump(), {"--repeat", "3"}).exit_code, 0);
  ProcessResult summary = Udon({"evidence", "summarize", dir_.File("evidence.jsonl"), "-o", dir_.File("report.md")}, false);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const std::string markdown = dir_.Read("report.md");
  const std::string svg = dir_.Read("report.svg");
  EXPECT_NE(markdown.find("![Gate-step latency"), std::string::npos);
  EXPECT_NE(markdown.find("report.svg"), std::string::npos);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  for (const std::string& text : {markdown, svg, dir_.Read("evidence.jsonl")}) {
    EXPECT_EQ(text.find(kCanary), std::string::npos);
    EXPECT_EQ(text.find("first sentence"), std::string::npos);
  }
  ProcessResult json_summary = Udon({"evidence", "summarize", dir_.File("evidence.jsonl"), "--json"}, false);
  ASSERT_EQ(json_summary.exit_code, 0) << json_summary.err;
  json::Value s = Report(json_summary)["summary"];
  EXPECT_EQ(s["records"], 6);
  EXPECT_EQ(s["commands"], (json::Value{{"probe", 6}}));
  ASSERT_EQ(s["tools"].size(), 2u);
  EXPECT_EQ(s["tools"][0]["tool"], "analyze_text");
  EXPECT_EQ(s["tools"][0]["maxDistinctResults"], 1);
  EXPECT_EQ(s["tools"][1]["tool"], "summarize");
  EXPECT_EQ(s["tools"][1]["modelBacked"], true);
  EXPECT_EQ(s["tools"][1]["contradictsReview"], false);

  ProcessResult missing = Udon({"evidence", "summarize", dir_.File("absent.jsonl"), "--json"}, false);
  EXPECT_EQ(missing.exit_code, 2);
}

}  // namespace
}  // namespace udon
