// Issue 17 through the real binary and the demo server: re-capturing onto a reviewed
// manifest (refused without --force; --update carries the reviews of unchanged tools, and
// the gate accepts them), review flags given false, diff of unchanged captures, and the
// summary check prints.
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "json/json.h"
#include "demo_cli_fixture.h"
#include "test_support.h"

namespace udon {
namespace {

using testing::ProcessResult;
using testing::TempDir;

class RecaptureCliTest : public testing::DemoCliTest {
 protected:
  ProcessResult Udon(std::vector<std::string> args) { return DemoCliTest::Udon(args, {"--config", dir_.File("mcp.json")}); }

  // diff takes no --config.
  ProcessResult Diff(std::vector<std::string> args) {
    args.insert(args.begin(), {testing::UdonMcpBinary(), "diff"});
    return testing::RunProcess(args);
  }

  std::vector<std::string> ReviewArgs(const std::string& tool, const std::string& channel) {
    return {"review", dir_.File("tools.json"), "--server", "demo", "--tool", tool, "--reviewer", "r@example.test",
            "--headless", "--independent-calls", "--model-backed", "false", "--no-side-effects", "--concurrency",
            "safe", "--reference-based-io", "--channel", channel};
  }

  json::Value Read(const std::string& name) { return json::Parse(dir_.Read(name)).value(); }
  json::Value Reviews() { return Read("tools.json")["servers"]["demo"]["reviews"]; }

  // Two captures a second apart differ in capturedAt, and a review made after the first
  // is earlier than the second: the case the instant rule (contract 7.7) is about.
  static void NextSecond() { std::this_thread::sleep_for(std::chrono::milliseconds(1100)); }

};

TEST_F(RecaptureCliTest, CaptureRefusesToDropReviewsAndUpdateCarriesUnchangedOnes) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  ProcessResult analyze = Udon(ReviewArgs("analyze_text", "/text=data"));
  ASSERT_EQ(analyze.exit_code, 0) << analyze.err;
  std::vector<std::string> render = ReviewArgs("render_turntable", "/source=data");
  render.insert(render.end(), {"--channel", "/angles=data", "--channel", "/resolution=data"});
  ASSERT_EQ(Udon(render).exit_code, 0);
  const std::string reviewed = dir_.Read("tools.json");
  const json::Value before = Read("tools.json");

  // -o onto reviews: refused before any server starts, the file untouched.
  ProcessResult refused = Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--json"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(json::Parse(refused.out).value()["code"], "usage.reviews_would_be_lost") << refused.out;
  EXPECT_NE(refused.err.find("--update"), std::string::npos) << refused.err;
  EXPECT_EQ(dir_.Read("tools.json"), reviewed);

  // The server changed one tool: its review is dropped with the pointer, the other kept.
  NextSecond();
  UseServer({"--fault", "description"});
  ProcessResult update = Udon({"capture", "--update", dir_.File("tools.json")});
  ASSERT_EQ(update.exit_code, 0) << update.err;
  EXPECT_NE(update.out.find("kept review of demo/analyze_text: tool unchanged\n"), std::string::npos) << update.out;
  EXPECT_NE(update.out.find("dropped review of demo/render_turntable: changed /description\n"), std::string::npos)
      << update.out;
  const json::Value after = Read("tools.json");
  EXPECT_NE(after["capturedAt"], before["capturedAt"]);
  const json::Value& kept = after["servers"]["demo"]["reviews"]["analyze_text"];
  EXPECT_EQ(kept["reviewedAt"], before["servers"]["demo"]["reviews"]["analyze_text"]["reviewedAt"])
      << "the reviewer did not review again";
  EXPECT_EQ(kept["x-udon-carriedOver"]["fromCapturedAt"], before["capturedAt"]);
  EXPECT_FALSE(after["servers"]["demo"]["reviews"].contains("render_turntable"));

  // The kept review passes check and the gate: a real call goes through.
  ProcessResult check = Udon({"check", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  const std::string sha = testing::RunProcess({testing::UdonMcpBinary(), "digest", dir_.File("tools.json")}).out.substr(0, 64);
  ProcessResult call = Udon({"call", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo",
                             "--tool", "analyze_text", "--args", R"({"text":"One. Two."})", "--json"});
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_EQ(json::Parse(call.out).value()["ok"], true) << call.out;
  // The dropped one is missing its review, as a fresh capture's would be.
  ProcessResult missing = Udon({"verify", "--manifest", dir_.File("tools.json"), "--sha256", sha, "--server", "demo",
                                "--tool", "render_turntable", "--json"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(json::Parse(missing.out).value()["code"], "review.missing") << missing.out;

  // Carried again (--json): still kept, still naming the capture the reviewer read.
  NextSecond();
  ProcessResult again = Udon({"capture", "--update", dir_.File("tools.json"), "--server", "demo", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json::Value report = json::Parse(again.out).value()["reviews"];
  ASSERT_EQ(report["kept"].size(), 1u) << again.out;
  EXPECT_EQ(report["kept"][0]["tool"], "analyze_text");
  EXPECT_TRUE(report["dropped"].empty()) << again.out;
  EXPECT_EQ(Reviews()["analyze_text"]["x-udon-carriedOver"]["fromCapturedAt"], before["capturedAt"]);

  // --force overwrites, reviews and all; -o with --update is a usage error.
  EXPECT_EQ(Udon({"capture", "--update", dir_.File("tools.json"), "-o", dir_.File("x.json")}).exit_code, 2);
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json"), "--force"}).exit_code, 0);
  EXPECT_TRUE(Reviews().empty());
}

TEST_F(RecaptureCliTest, AssertionFlagsGivenFalseAreRejectedLikeTheFileForm) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  const std::vector<std::pair<std::string, std::string>> flags = {
      {"--headless", "headless"}, {"--independent-calls", "independentCalls"},
      {"--reference-based-io", "referenceBasedIO"}};
  for (const auto& [flag, member] : flags) {
    SCOPED_TRACE(flag);
    std::vector<std::string> args = ReviewArgs("analyze_text", "/text=data");
    for (std::string& arg : args) {
      if (arg == flag) arg = flag + "=false";
    }
    args.push_back("--json");
    ProcessResult stated_false = Udon(args);
    EXPECT_EQ(stated_false.exit_code, 3) << stated_false.out;
    const json::Value error = json::Parse(stated_false.out).value();
    EXPECT_EQ(error["code"], "review.rejected") << stated_false.out;
    EXPECT_EQ(error["details"]["pointer"], "/assertions/" + member) << stated_false.out;

    // The same review as a file gives the same answer.
    json::Value file = {{"reviewer", "r@example.test"},
                        {"assertions", {{"headless", true}, {"independentCalls", true}, {"modelBacked", false},
                                        {"sideEffects", json::Value::array()}, {"concurrency", "safe"},
                                        {"referenceBasedIO", true}}},
                        {"inputChannels", {{"/text", "data"}}}};
    file["assertions"][member] = false;
    dir_.Write("review.json", file.dump());
    ProcessResult from_file = Udon({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text",
                                    "--from", dir_.File("review.json"), "--json"});
    EXPECT_EQ(json::Parse(from_file.out).value()["code"], error["code"]);
    EXPECT_EQ(json::Parse(from_file.out).value()["details"]["pointer"], error["details"]["pointer"]);

    // Left out it is not stated at all.
    std::vector<std::string> without;
    for (const std::string& arg : ReviewArgs("analyze_text", "/text=data")) {
      if (arg != flag) without.push_back(arg);
    }
    without.push_back("--json");
    EXPECT_EQ(json::Parse(Udon(without).out).value()["code"], "review.incomplete");
  }
  EXPECT_FALSE(Read("tools.json")["servers"]["demo"]["reviews"].contains("analyze_text")) << "nothing written";
  std::vector<std::string> stated_true = ReviewArgs("analyze_text", "/text=data");
  stated_true[stated_true.size() - 3] = "--reference-based-io=true";
  ProcessResult accepted = Udon(stated_true);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
}

TEST_F(RecaptureCliTest, DiffOfUnchangedCapturesExitsZeroUnlessStrict) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("a.json")}).exit_code, 0);
  NextSecond();
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("b.json")}).exit_code, 0);
  ProcessResult text = Diff({dir_.File("a.json"), dir_.File("b.json")});
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("only the capture instants differ"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("changed /capturedAt: "), std::string::npos) << text.out;
  ProcessResult machine = Diff({dir_.File("a.json"), dir_.File("b.json"), "--json"});
  EXPECT_EQ(machine.exit_code, 0);
  const json::Value report = json::Parse(machine.out).value();
  EXPECT_EQ(report["identical"], false);
  EXPECT_EQ(report["significant"], false);
  EXPECT_EQ(Diff({dir_.File("a.json"), dir_.File("b.json"), "--strict"}).exit_code, 1);
  EXPECT_EQ(json::Parse(Diff({dir_.File("a.json"), dir_.File("b.json"), "--json", "--strict"}).out).value()["significant"],
            true);

  // A member added on one side prints as (absent) on the other; a description's replaced
  // line prints old (-) before new (+).
  json::Value later = Read("b.json");
  for (auto& page : later["servers"]["demo"]["toolPages"]) {
    for (auto& tool : page["tools"]) {
      if (tool["name"] != "analyze_text") continue;
      tool["description"] = tool["description"].get<std::string>() + "\nnew last line";
    }
  }
  json::Value earlier = Read("a.json");
  for (auto& page : earlier["servers"]["demo"]["toolPages"]) {
    for (auto& tool : page["tools"]) {
      if (tool["name"] != "analyze_text") continue;
      tool["description"] = tool["description"].get<std::string>() + "\nold last line";
      tool.erase("title");
    }
  }
  dir_.Write("earlier.json", earlier.dump(2));
  dir_.Write("later.json", later.dump(2));
  ProcessResult changed = Diff({dir_.File("earlier.json"), dir_.File("later.json")});
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_EQ(changed.out.find("only the capture instants differ"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("added /title: (absent) -> Analyze text\n"), std::string::npos) << changed.out;
  const std::size_t old_line = changed.out.find("- old last line");
  const std::size_t new_line = changed.out.find("+ new last line");
  ASSERT_NE(old_line, std::string::npos) << changed.out;
  ASSERT_NE(new_line, std::string::npos) << changed.out;
  EXPECT_LT(old_line, new_line) << changed.out;
}

TEST_F(RecaptureCliTest, CheckSummarizesToolsReviewsAndExpiry) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  ProcessResult unreviewed = Udon({"check", dir_.File("tools.json")});
  EXPECT_EQ(unreviewed.exit_code, 0) << unreviewed.err;
  EXPECT_EQ(unreviewed.out.rfind("ok ", 0), 0u) << unreviewed.out;
  EXPECT_NE(unreviewed.out.find("server demo: 7 tools, 0 reviewed\n"), std::string::npos) << unreviewed.out;
  // --expires-in 7 (the default), checked in the capture's second or within seconds of it.
  EXPECT_TRUE(unreviewed.out.find("(in 6 days 23 hours)\n") != std::string::npos ||
              unreviewed.out.find("(in 7 days)\n") != std::string::npos)
      << unreviewed.out;
  EXPECT_NE(unreviewed.out.find("expires " + Read("tools.json")["expiresAt"].get<std::string>()), std::string::npos);

  ASSERT_EQ(Udon(ReviewArgs("analyze_text", "/text=data")).exit_code, 0);
  ProcessResult reviewed = Udon({"check", dir_.File("tools.json")});
  EXPECT_EQ(reviewed.exit_code, 0);
  EXPECT_NE(reviewed.out.find("server demo: 7 tools, 1 reviewed\n"), std::string::npos) << reviewed.out;
  ProcessResult machine = Udon({"check", dir_.File("tools.json"), "--json"});
  EXPECT_EQ(machine.exit_code, 0);
  const json::Value summary = json::Parse(machine.out).value();
  EXPECT_EQ(summary["servers"]["demo"]["tools"], 7);
  EXPECT_EQ(summary["servers"]["demo"]["reviewed"], 1);
  EXPECT_EQ(summary["servers"]["demo"]["unreviewed"].size(), 6u);
  EXPECT_EQ(summary["expiresAt"], Read("tools.json")["expiresAt"]);
  EXPECT_GT(summary["expiresInSeconds"].get<std::int64_t>(), 6 * 86'400);
  EXPECT_LE(summary["expiresInSeconds"].get<std::int64_t>(), 7 * 86'400);

  // With findings the summary still reaches stdout, and --json carries it in details.
  ProcessResult missing = Udon({"check", dir_.File("tools.json"), "--server", "demo", "--tool", "summarize"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.out.find("server demo: 7 tools, 1 reviewed"), std::string::npos) << missing.out;
  ProcessResult missing_json = Udon({"check", dir_.File("tools.json"), "--server", "demo", "--tool", "summarize", "--json"});
  EXPECT_EQ(json::Parse(missing_json.out).value()["details"]["servers"]["demo"]["reviewed"], 1) << missing_json.out;
}

}  // namespace
}  // namespace udon
