// `udon-mcp adopt` with real hosts (Claude Code and Gemini CLI, pinned in tests/package.json),
// offline, in a throwaway HOME: the host lists the demo server ungated; adopt captures it,
// the tools are reviewed, --apply rewrites the host's file; the host's `mcp list` now
// connects to the gateway entry, --check says what it offers; --undo restores the file byte
// for byte. The entry's env value (a stand-in secret) never reaches the adoption directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "conformance_runner.h"
#include "demo_http.h"
#include "json/json.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kSecret = "adopt-secret-value-7f3a";

class AdoptRealHost : public ::testing::Test {
 protected:
  std::string Home() const {
    fs::create_directories(dir_.File("home/project"));
    fs::create_directories(dir_.File("home/.gemini"));
    return dir_.File("home");
  }
  std::string Adopted() const { return dir_.File("adopted"); }

  // As RealHostRefusal (serve_interop_test.cc): offline, no updates, no telemetry.
  RunOptions HostOptions() const {
    RunOptions options = PinnedNodeOptions();
    options.env["HOME"] = Home();
    options.env["XDG_CONFIG_HOME"] = Home() + "/.config";
    options.env["DISABLE_AUTOUPDATER"] = "1";
    options.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
    options.env["DISABLE_TELEMETRY"] = "1";
    options.env["DISABLE_ERROR_REPORTING"] = "1";
    options.env["UDON_MCP_STATE_DIR"] = dir_.File("state");
    options.unset_env = {"CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"};
    options.cwd = Home() + "/project";
    options.timeout = std::chrono::seconds(90);
    return options;
  }

  ProcessResult Udon(std::vector<std::string> args) const {
    args.insert(args.begin(), UdonMcpBinary());
    return RunProcess(args, HostOptions());
  }

  // Reviews two of the demo's tools; the others stay unreviewed (not offered).
  void ReviewTwoTools(const std::string& host, const std::string& key) const {
    const std::string manifest = Adopted() + "/" + host + "/" + key + ".tools.json";
    const std::string server = host + "." + key;
    for (const char* tool : {"analyze_text", "convert_units"}) {
      ProcessResult reviewed = Udon({"review", manifest, "--server", server, "--tool", tool, "--reviewer",
                                     "adopt-test@udon-mcp.invalid", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--no-side-effects", "--concurrency", "safe",
                                     "--reference-based-io"});
      ASSERT_EQ(reviewed.exit_code, 0) << reviewed.out << reviewed.err;
    }
  }

  // Captures, refuses to apply before a review, reviews, applies; `original` is the file as
  // adopt read it.
  void AdoptAndApply(const std::string& host, const std::string& file, std::string& original) const {
    ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--host", host, "--json"});
    ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
    original = dir_.Read(file);
    ProcessResult early = Udon({"adopt", "--dir", Adopted(), "--apply", "--json"});
    EXPECT_EQ(early.exit_code, 2) << early.out << early.err;
    EXPECT_NE(early.out.find("adopt.not_reviewed"), std::string::npos) << early.out;
    EXPECT_EQ(dir_.Read(file), original);
    for (const std::string& key : keys_) ReviewTwoTools(host, key);
    ProcessResult applied = Udon({"adopt", "--dir", Adopted(), "--apply"});
    ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    std::printf("adopt --apply:\n%s", applied.out.c_str());
  }

  // --check: every gateway entry connects and offers exactly the two reviewed tools.
  void ExpectCheckOffersTheReviewedTools() const {
    ProcessResult checked = Udon({"adopt", "--dir", Adopted(), "--check", "--json"});
    ASSERT_EQ(checked.exit_code, 0) << checked.out << checked.err;
    auto report = json::Parse(checked.out);
    ASSERT_TRUE(report.ok()) << checked.out;
    ASSERT_EQ((*report)["entries"].size(), keys_.size()) << checked.out;
    for (const Json& entry : (*report)["entries"]) {
      EXPECT_TRUE(entry["connected"].get<bool>()) << entry;
      EXPECT_EQ(entry["offered"], Json({"analyze_text", "convert_units"})) << entry;
      ASSERT_FALSE(entry["withheld"].empty()) << entry;
      for (const Json& withheld : entry["withheld"]) EXPECT_EQ(withheld["why"], "unreviewed") << entry;
    }
  }

  // No file of the adoption directory holds the entry's env value.
  void ExpectNoSecretInTheAdoption() const {
    for (const auto& item : fs::recursive_directory_iterator(Adopted())) {
      if (!item.is_regular_file()) continue;
      const std::string text = dir_.Read(fs::relative(item.path(), dir_.path()).string());
      EXPECT_EQ(text.find(kSecret), std::string::npos) << item.path();
    }
  }

  // The one line of `mcp list` that names the entry.
  static std::string LineOf(const std::string& listing, const std::string& key) {
    std::size_t at = listing.find(key + ":");
    if (at == std::string::npos) return "";
    return listing.substr(at, listing.find('\n', at) - at);
  }

  // Issue 38, item 2: D is 0700, and so is every directory in it; every file is 0600.
  void ExpectTheAdoptionOwnerOnly() const {
    EXPECT_EQ(fs::status(Adopted()).permissions(), fs::perms::owner_all);
    for (const auto& item : fs::recursive_directory_iterator(Adopted())) {
      const fs::perms wanted = item.is_directory() ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write;
      EXPECT_EQ(item.status().permissions(), wanted) << item.path();
    }
  }

  TempDir dir_;
  std::vector<std::string> keys_ = {"demo"};  // the host's entries, each the demo server
};

TEST_F(AdoptRealHost, GeminiCliConnectsToTheGatewayEntryAndUndoRestoresItsFile) {
  const std::string gemini = PeerModuleDir("@google/gemini-cli") + "/bundle/gemini.js";
  UDON_REQUIRE_INSTALLED(gemini, "Gemini CLI (@google/gemini-cli)");
  const std::string home = Home();
  dir_.Write("home/.gemini/settings.json",
             Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}, {"env", {{"DEMO_SECRET", kSecret}}}}}}},
                  {"general", {{"enableAutoUpdate", false}, {"enableAutoUpdateNotification", false}}},
                  {"privacy", {{"usageStatisticsEnabled", false}}},
                  {"telemetry", {{"enabled", false}}}}
                 .dump(2));
  dir_.Write("home/.gemini/trustedFolders.json", Json{{home + "/project", "TRUST_FOLDER"}}.dump());
  const std::string original = dir_.Read("home/.gemini/settings.json");
  ProcessResult before = RunProcess({NodeBinary(), gemini, "mcp", "list"}, HostOptions());
  std::printf("gemini mcp list (before):\n%s%s", before.out.c_str(), before.err.c_str());
  EXPECT_NE(LineOf(before.out + before.err, "demo").find("Connected"), std::string::npos) << before.out << before.err;
  ProcessResult listed = Udon({"adopt", "--list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("\"gated\":false"), std::string::npos) << listed.out;

  std::string adopted;
  AdoptAndApply("gemini", "home/.gemini/settings.json", adopted);
  EXPECT_EQ(adopted, original);
  ExpectNoSecretInTheAdoption();
  EXPECT_NE(dir_.Read("home/.gemini/settings.json").find(kSecret), std::string::npos);  // it stayed there
  ProcessResult after = RunProcess({NodeBinary(), gemini, "mcp", "list"}, HostOptions());
  std::printf("gemini mcp list (after --apply):\n%s%s", after.out.c_str(), after.err.c_str());
  const std::string line = LineOf(after.out + after.err, "demo");
  EXPECT_NE(line.find("udon-mcp serve"), std::string::npos) << after.out << after.err;
  EXPECT_NE(line.find("Connected"), std::string::npos) << after.out << after.err;
  ExpectCheckOffersTheReviewedTools();
  ProcessResult gated = Udon({"adopt", "--list", "--json"});
  EXPECT_NE(gated.out.find("\"gated\":true"), std::string::npos) << gated.out;

  // A wrong pin: the host would show "Disconnected"; --check names the gateway's refusal.
  dir_.Write("adopted/gemini/demo.pin", std::string(64, 'a') + "\n");
  ProcessResult refused = Udon({"adopt", "--dir", Adopted(), "--check"});
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_NE(refused.out.find("gemini/demo: not connected: manifest.digest_mismatch"), std::string::npos)
      << refused.out << refused.err;

  ProcessResult undone = Udon({"adopt", "--dir", Adopted(), "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.out << undone.err;
  EXPECT_EQ(dir_.Read("home/.gemini/settings.json"), original);
}

// Three servers in Claude Code's user configuration (the issue's "done when"), one with a
// secret in its env.
TEST_F(AdoptRealHost, ClaudeCodeConnectsToTheGatewayEntriesAndUndoRestoresItsFile) {
  const std::string claude = PeerModuleDir("@anthropic-ai/claude-code") + "/bin/claude.exe";
  UDON_REQUIRE_INSTALLED(claude, "Claude Code (@anthropic-ai/claude-code)");
  Home();
  keys_ = {"demo", "notes", "units"};
  for (const std::string& key : keys_) {
    ProcessResult added = RunProcess({claude, "mcp", "add", "--scope", "user", key, "-e",
                                      std::string("DEMO_SECRET=") + kSecret, "--", DemoServerBinary()},
                                     HostOptions());
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  }
  ProcessResult before = RunProcess({claude, "mcp", "list"}, HostOptions());
  std::printf("claude mcp list (before):\n%s", before.out.c_str());
  for (const std::string& key : keys_) {
    EXPECT_NE(LineOf(before.out, key).find("Connected"), std::string::npos) << before.out << before.err;
  }

  std::string original;
  AdoptAndApply("claude-code", "home/.claude.json", original);
  ExpectNoSecretInTheAdoption();
  EXPECT_NE(dir_.Read("home/.claude.json").find(kSecret), std::string::npos);  // it stayed there
  ProcessResult after = RunProcess({claude, "mcp", "list"}, HostOptions());
  std::printf("claude mcp list (after --apply):\n%s", after.out.c_str());
  for (const std::string& key : keys_) {
    const std::string line = LineOf(after.out, key);
    EXPECT_NE(line.find("udon-mcp serve"), std::string::npos) << after.out << after.err;
    EXPECT_NE(line.find("Connected"), std::string::npos) << after.out << after.err;
  }
  ExpectCheckOffersTheReviewedTools();

  ProcessResult undone = Udon({"adopt", "--dir", Adopted(), "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.out << undone.err;
  EXPECT_EQ(dir_.Read("home/.claude.json"), original);
}

// --review workbench: one workbench per captured manifest, on loopback, until stopped; a
// Cursor file in the throwaway HOME (no host needed: nothing is applied).
TEST_F(AdoptRealHost, ReviewInTheWorkbenchServesTheCapturedManifest) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}}}}}}.dump(2));
  BackgroundProcess adopt({UdonMcpBinary(), "adopt", "--dir", Adopted(), "--host", "cursor", "--review", "workbench"},
                          HostOptions());
  std::string url;
  for (int i = 0; i < 600 && url.empty() && adopt.running(); ++i) {
    const std::string output = adopt.Output();
    const auto at = output.find("cursor/demo: open http://127.0.0.1:");
    if (at != std::string::npos && output.find('\n', at) != std::string::npos) {
      url = output.substr(at + 18, output.find('\n', at) - at - 18);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_FALSE(url.empty()) << adopt.Output();
  const std::string authority = url.substr(7, url.find('/', 7) - 7);
  httplib::Client client("127.0.0.1", std::stoi(authority.substr(authority.find(':') + 1)));
  auto overview = client.Get((url.substr(7 + authority.size()) + "api/overview").c_str());
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->status, 200) << overview->body;
  EXPECT_NE(overview->body.find("cursor.demo"), std::string::npos) << overview->body;
  adopt.Stop();
  ProcessResult early = Udon({"adopt", "--dir", Adopted(), "--apply", "--json"});
  EXPECT_NE(early.out.find("adopt.not_reviewed"), std::string::npos) << early.out << early.err;
}

// Section 3 of issue 32: what a host shows only as fewer tools, --check says with the code
// serve gave. The capture's policy allows no side effects; the gateway runs under it (the
// entry gets --policy) and withholds a tool reviewed with one. A Cursor file, no host needed.
TEST_F(AdoptRealHost, CheckSaysWhyTheGatewayWithholdsAReviewedTool) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}}}}}}.dump(2));
  const std::string original = dir_.Read("home/.cursor/mcp.json");
  dir_.Write("policy.json", R"({"allowedSideEffects": []})");
  ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--host", "cursor", "--policy", dir_.File("policy.json")});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  const std::string manifest = Adopted() + "/cursor/demo.tools.json";
  for (const auto& [tool, effects] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"analyze_text", {"--no-side-effects"}}, {"render_turntable", {"--side-effect", "creates_render_artifacts"}}}) {
    std::vector<std::string> args = {"review", manifest, "--server", "cursor.demo", "--tool", tool, "--reviewer",
                                     "adopt-test@udon-mcp.invalid", "--headless", "--independent-calls",
                                     "--model-backed", "false", "--concurrency", "safe", "--reference-based-io"};
    args.insert(args.end(), effects.begin(), effects.end());
    ProcessResult reviewed = Udon(args);
    ASSERT_EQ(reviewed.exit_code, 0) << reviewed.out << reviewed.err;
  }
  ProcessResult applied = Udon({"adopt", "--dir", Adopted(), "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ProcessResult checked = Udon({"adopt", "--dir", Adopted(), "--check", "--json"});
  ASSERT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  const Json entry = json::Parse(checked.out).value()["entries"][0];
  EXPECT_EQ(entry["offered"], Json({"analyze_text"})) << entry;
  EXPECT_NE(entry["withheld"].dump().find(R"({"tool":"render_turntable","why":"review.rejected"})"),
            std::string::npos)
      << entry;
  ProcessResult undone = Udon({"adopt", "--dir", Adopted(), "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.out << undone.err;
  EXPECT_EQ(dir_.Read("home/.cursor/mcp.json"), original);
}

// --protocol-version names the revision adopt opens servers at: a capture's, and the check's
// connection to each gateway (as a host speaking it). --list, --apply and --undo open none:
// there it is a usage error that reads and writes nothing, never an option dropped.
TEST_F(AdoptRealHost, ProtocolVersionReachesTheCheckAndIsRefusedWhereNoServerIsOpened) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}}}}}}.dump(2));
  const std::string original = dir_.Read("home/.cursor/mcp.json");
  auto ExpectUsageError = [](const ProcessResult& refused, const char* mode) {
    EXPECT_EQ(refused.exit_code, 2) << mode << refused.out << refused.err;
    EXPECT_NE(refused.out.find("\"usage.invalid\""), std::string::npos) << mode << refused.out;
  };
  ExpectUsageError(Udon({"adopt", "--list", "--protocol-version", "2025-06-18", "--json"}), "--list");
  ProcessResult captured =
      Udon({"adopt", "--dir", Adopted(), "--host", "cursor", "--protocol-version", "2025-06-18", "--json"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  ReviewTwoTools("cursor", "demo");
  ExpectUsageError(Udon({"adopt", "--dir", Adopted(), "--apply", "--protocol-version", "2025-06-18", "--json"}),
                   "--apply");
  EXPECT_EQ(dir_.Read("home/.cursor/mcp.json"), original);
  ProcessResult applied = Udon({"adopt", "--dir", Adopted(), "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  const std::string rewritten = dir_.Read("home/.cursor/mcp.json");
  for (const char* version : {"2025-03-26", "2025-06-18"}) {
    ProcessResult checked = Udon({"adopt", "--dir", Adopted(), "--check", "--protocol-version", version, "--json"});
    ASSERT_EQ(checked.exit_code, 0) << checked.out << checked.err;
    const Json entry = json::Parse(checked.out).value()["entries"][0];
    EXPECT_EQ(entry["protocolVersion"], version) << entry;
    EXPECT_EQ(entry["offered"], Json({"analyze_text", "convert_units"})) << entry;
  }
  ExpectUsageError(Udon({"adopt", "--dir", Adopted(), "--check", "--protocol-version", "1999-01-01", "--json"}),
                   "--check with an unknown version");
  ExpectUsageError(Udon({"adopt", "--dir", Adopted(), "--undo", "--protocol-version", "2025-06-18", "--json"}),
                   "--undo");
  EXPECT_EQ(dir_.Read("home/.cursor/mcp.json"), rewritten);
  ProcessResult undone = Udon({"adopt", "--dir", Adopted(), "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.out << undone.err;
  EXPECT_EQ(dir_.Read("home/.cursor/mcp.json"), original);
}

// An option that means nothing in the mode given was silently dropped (--login or --review
// with --apply, --dir with --list): each such combination is a usage error naming the
// option and why, and nothing is read or written (no D is made, the host file stays).
TEST_F(AdoptRealHost, AnOptionThatMeansNothingInTheModeGivenIsAUsageError) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}}}}}}.dump(2));
  const std::string original = dir_.Read("home/.cursor/mcp.json");
  dir_.Write("policy.json", "{}");
  using Words = std::vector<std::string>;
  // Options that mean something in a capture only.
  const std::vector<Words> capture_only = {
      {"--host", "cursor"}, {"--server", "demo"},     {"--review", "cli"}, {"--review", "workbench"},
      {"--sandbox"},        {"--no-sandbox"},         {"--expires-in", "3"}, {"--login"},
      {"--no-browser"},     {"--policy", dir_.File("policy.json")}};
  struct Family {
    Words mode;
    std::vector<Words> refused;  // beside capture_only
  };
  const std::vector<Family> families = {
      {{"--list"}, {{"--dir", Adopted()}, {"--protocol-version", "2025-06-18"}}},
      {{"--dir", Adopted(), "--apply"}, {{"--project", "."}, {"--protocol-version", "2025-06-18"}}},
      {{"--dir", Adopted(), "--undo"}, {{"--project", "."}, {"--protocol-version", "2025-06-18"}}},
      {{"--dir", Adopted(), "--check"}, {{"--project", "."}}},
  };
  for (const Family& family : families) {
    std::vector<Words> options = capture_only;
    options.insert(options.end(), family.refused.begin(), family.refused.end());
    for (const Words& option : options) {
      Words args = {"adopt"};
      args.insert(args.end(), family.mode.begin(), family.mode.end());
      args.insert(args.end(), option.begin(), option.end());
      args.push_back("--json");
      SCOPED_TRACE(family.mode.back() + " " + option.front());
      ProcessResult refused = Udon(args);
      EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
      auto error = json::Parse(refused.out);
      ASSERT_TRUE(error.ok()) << refused.out << refused.err;
      EXPECT_EQ((*error)["code"], "usage.invalid") << refused.out;
      EXPECT_EQ((*error)["details"]["option"], option.front()) << refused.out;
      EXPECT_EQ((*error)["message"].get<std::string>().rfind(option.front() + " is for ", 0), 0u) << refused.out;
    }
  }
  EXPECT_FALSE(fs::exists(Adopted()));
  EXPECT_EQ(dir_.Read("home/.cursor/mcp.json"), original);
}

// Issue 38 item 1, from the attacker's side: the current directory is a clone whose
// .mcp.json runs a command. Without --project adopt reads no project file; with it, the
// .mcp.json server the user never approved in Claude Code is not started, and another
// host's project entry is captured in the sandbox, whatever sandbox it asks for itself.
TEST_F(AdoptRealHost, AClonedProjectsServersRunOnlyWhenAskedAndThenSandboxed) {
  Home();
  const std::string marker = dir_.File("clone-ran");
  dir_.Write("home/project/.mcp.json",
             Json{{"mcpServers", {{"clone", {{"command", "/bin/sh"}, {"args", {"-c", "touch " + marker}}}}}}}.dump());
  fs::create_directories(dir_.File("home/project/.cursor"));
  dir_.Write("home/project/.cursor/mcp.json",
             Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}, {"sandbox", {{"network", true}}}}}}}}
                 .dump());
  ProcessResult listed = Udon({"adopt", "--list", "--json"});
  EXPECT_EQ(listed.out.find(".mcp.json"), std::string::npos) << listed.out;
  ProcessResult plain = Udon({"adopt", "--dir", Adopted(), "--json"});  // in the clone
  EXPECT_EQ(plain.exit_code, 2) << plain.out << plain.err;
  EXPECT_NE(plain.out.find("adopt.nothing_selected"), std::string::npos) << plain.out;
  EXPECT_FALSE(fs::exists(marker));

  ProcessResult project_list = Udon({"adopt", "--list", "--project", ".", "--json"});
  EXPECT_NE(project_list.out.find("/.mcp.json"), std::string::npos) << project_list.out;
  ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--project", ".", "--json"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  EXPECT_NE(captured.out.find("not approved in Claude Code"), std::string::npos) << captured.out;
  EXPECT_FALSE(fs::exists(marker));
  const Json runtime = json::Parse(dir_.Read("adopted/mcp.json")).value();
  EXPECT_EQ(runtime["mcpServers"]["cursor.demo"]["sandbox"], true) << runtime;
}

// Issue 38 items 5 and 13: the block `adopt` prints, pasted into a shell as it is, records
// the reviews and applies; a key that holds a line break, a command and a terminal escape
// starts no command and reaches the terminal escaped.
TEST_F(AdoptRealHost, ThePrintedReviewBlockWorksWhenPastedAndAHostileKeyStaysInert) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  const std::string pasted = dir_.File("pasted");
  const std::string hostile = "x'\ntouch " + pasted + "; echo \x1b]0;owned\x07 `touch " + pasted + "` $HOME #";
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{hostile, {{"command", DemoServerBinary()}}}}}}.dump(2));
  ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--host", "cursor"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  EXPECT_EQ(captured.out.find('\x1b'), std::string::npos) << captured.out;
  EXPECT_EQ(captured.out.find('\x07'), std::string::npos) << captured.out;
  const std::size_t block = captured.out.find("\n# ");
  ASSERT_NE(block, std::string::npos) << captured.out;
  RunOptions shell = HostOptions();
  const char* path = std::getenv("PATH");
  shell.env["PATH"] = fs::path(UdonMcpBinary()).parent_path().string() + ":" + (path ? path : "/usr/bin:/bin");
  shell.env["USER"] = "adopt-test";
  ProcessResult ran = RunProcess({"/bin/sh", "-c", captured.out.substr(block + 1)}, shell);
  EXPECT_EQ(ran.exit_code, 0) << captured.out << ran.out << ran.err;  // the last line: --apply
  EXPECT_EQ(ran.err.find("review.incomplete"), std::string::npos) << ran.err;
  EXPECT_FALSE(fs::exists(pasted));
  ProcessResult checked = Udon({"adopt", "--dir", Adopted(), "--check"});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_EQ(checked.out.find('\x1b'), std::string::npos) << checked.out;
}

// Issue 38 item 10: the host entry still starts "a binary named udon-mcp", byte for byte
// what --apply wrote, but that binary is now something else: --check says so.
TEST_F(AdoptRealHost, CheckFlagsAToolNoManifestReviewed) {
  Home();
  fs::create_directories(dir_.File("home/.cursor"));
  fs::create_directories(dir_.File("bin"));
  dir_.Write("home/.cursor/mcp.json", Json{{"mcpServers", {{"demo", {{"command", DemoServerBinary()}}}}}}.dump(2));
  const std::string copy = dir_.File("bin/udon-mcp");
  fs::copy_file(UdonMcpBinary(), copy);
  fs::permissions(copy, fs::perms::owner_all);
  ProcessResult captured = RunProcess({copy, "adopt", "--dir", Adopted(), "--host", "cursor"}, HostOptions());
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  ReviewTwoTools("cursor", "demo");
  ProcessResult applied = RunProcess({copy, "adopt", "--dir", Adopted(), "--apply"}, HostOptions());
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ASSERT_NE(dir_.Read("home/.cursor/mcp.json").find(copy), std::string::npos);
  fs::remove(copy);
  dir_.Write("bin/udon-mcp", "#!/bin/sh\nexec '" + DemoServerBinary() + "'\n");
  fs::permissions(copy, fs::perms::owner_all);
  ProcessResult checked = Udon({"adopt", "--dir", Adopted(), "--check", "--json"});
  EXPECT_EQ(checked.exit_code, 3) << checked.out << checked.err;
  const Json entry = json::Parse(checked.out).value()["entries"][0];
  EXPECT_TRUE(entry["connected"].get<bool>()) << entry;
  EXPECT_EQ(entry["error"]["code"], "adopt.unreviewed_offered") << entry;
  EXPECT_NE(entry["offeredUnreviewed"].dump().find("render_turntable"), std::string::npos) << entry;
}

// Issue 38, items 20 and 2, as `claude mcp add --header` leaves a remote server: its literal
// header is adopted without leaving the host file (the rewritten entry carries it in its
// env, D/mcp.json references it), an entry that cannot be adopted (it sets PGPASSWORD) is
// reported with its code and left as it was, and everything adopt writes is owner-only.
TEST_F(AdoptRealHost, ALiteralHeaderStaysInTheHostFileAndAnEntryThatCannotBeAdoptedStopsNoOther) {
  const std::string claude = PeerModuleDir("@anthropic-ai/claude-code") + "/bin/claude.exe";
  UDON_REQUIRE_INSTALLED(claude, "Claude Code (@anthropic-ai/claude-code)");
  Home();
  HttpDemoServer remote;
  ASSERT_NE(remote.port(), 0) << remote.process().Output();
  const std::vector<std::vector<std::string>> adds = {
      {"demo", "--", DemoServerBinary()},
      {"--transport", "http", "remote", remote.url(), "--header", std::string("Authorization: Bearer ") + kSecret},
      {"broken", "-e", "PGPASSWORD=not-for-upstreams", "--", DemoServerBinary()}};
  for (const auto& add : adds) {
    std::vector<std::string> argv = {claude, "mcp", "add", "--scope", "user"};
    argv.insert(argv.end(), add.begin(), add.end());
    ProcessResult added = RunProcess(argv, HostOptions());
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  }
  // Claude Code completes its own file (userID, ...) on its first listing: before adopt reads it.
  ProcessResult before = RunProcess({claude, "mcp", "list"}, HostOptions());
  EXPECT_NE(LineOf(before.out, "remote").find("Connected"), std::string::npos) << before.out << before.err;
  const std::string original = dir_.Read("home/.claude.json");
  ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--host", "claude-code", "--json"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  const Json report = json::Parse(captured.out).value();
  EXPECT_EQ(report["captured"].size(), 2u) << captured.out;
  ASSERT_EQ(report["refused"].size(), 1u) << captured.out;
  EXPECT_EQ(report["refused"][0]["entry"], "claude-code/broken");
  EXPECT_EQ(report["refused"][0]["code"], "adopt.reserved_variable");
  ExpectNoSecretInTheAdoption();
  ExpectTheAdoptionOwnerOnly();

  keys_ = {"demo", "remote"};
  for (const std::string& key : keys_) ReviewTwoTools("claude-code", key);
  ProcessResult applied = Udon({"adopt", "--dir", Adopted(), "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectNoSecretInTheAdoption();
  ExpectTheAdoptionOwnerOnly();
  const std::string rewritten = dir_.Read("home/.claude.json");
  EXPECT_NE(rewritten.find(kSecret), std::string::npos);
  EXPECT_EQ(rewritten.find(kSecret), rewritten.rfind(kSecret)) << "the host file holds the secret once";
  ProcessResult after = RunProcess({claude, "mcp", "list"}, HostOptions());
  std::printf("claude mcp list (after --apply):\n%s", after.out.c_str());
  for (const std::string& key : keys_) {
    EXPECT_NE(LineOf(after.out, key).find("udon-mcp serve"), std::string::npos) << after.out << after.err;
    EXPECT_NE(LineOf(after.out, key).find("Connected"), std::string::npos) << after.out << after.err;
  }
  EXPECT_EQ(LineOf(after.out, "broken").find("udon-mcp serve"), std::string::npos) << after.out;
  ExpectCheckOffersTheReviewedTools();
  EXPECT_EQ(dir_.Read("home/.claude.json"), rewritten);
  ProcessResult undone = Udon({"adopt", "--dir", Adopted(), "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.out << undone.err;
  EXPECT_EQ(dir_.Read("home/.claude.json"), original);
}

// Issue 38, items 11 and 9, with a real LD_PRELOAD library that notes every process it is
// loaded into: the entry's env reaches the upstream the gateway starts, never the gateway
// itself; and an upstream entry changed in D after --apply (whoever can write D/mcp.json
// chooses what the gateway starts) is refused by the gateway with config.entry_changed.
TEST_F(AdoptRealHost, TheEntrysLdPreloadReachesTheUpstreamNeverTheGatewayAndItsEntryIsPinned) {
  Home();
  const std::string marker = dir_.File("preloaded");
  fs::create_directories(dir_.File("home/.cursor"));
  dir_.Write("home/.cursor/mcp.json",
             Json{{"mcpServers",
                   {{"demo",
                     {{"command", DemoServerBinary()},
                      {"env",
                       {{"LD_PRELOAD", UDON_PRELOAD_MARKER_LIBRARY},
                        {"UDON_TEST_PRELOAD_MARKER", marker},
                        {"ASAN_OPTIONS", "verify_asan_link_order=0"}}}}}}}}
                 .dump(2));
  const std::string upstream = fs::canonical(DemoServerBinary()).string();
  // The processes the library was loaded into since the marker was last removed.
  auto preloaded = [&] {
    std::vector<std::string> processes;
    if (!fs::exists(marker)) return processes;
    std::istringstream lines(dir_.Read("preloaded"));
    for (std::string line; std::getline(lines, line);) processes.push_back(line);
    fs::remove(marker);
    return processes;
  };
  ProcessResult captured = Udon({"adopt", "--dir", Adopted(), "--host", "cursor"});
  ASSERT_EQ(captured.exit_code, 0) << captured.out << captured.err;
  // The capture starts the upstream from D/mcp.json's entry: its LD_PRELOAD is the entry's.
  const std::vector<std::string> at_capture = preloaded();
  EXPECT_FALSE(at_capture.empty());
  for (const std::string& process : at_capture) EXPECT_EQ(process, upstream);
  ReviewTwoTools("cursor", "demo");
  ProcessResult applied = Udon({"adopt", "--dir", Adopted(), "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
  ExpectCheckOffersTheReviewedTools();  // the gateway started as the host starts it
  for (const std::string& process : preloaded()) EXPECT_EQ(process, upstream) << "LD_PRELOAD reached " << process;

  Json runtime = json::Parse(dir_.Read("adopted/mcp.json")).value();
  runtime["mcpServers"]["cursor.demo"]["args"] = Json::array({"--fault", "none"});
  dir_.Write("adopted/mcp.json", runtime.dump(2));
  ProcessResult tampered = Udon({"adopt", "--dir", Adopted(), "--check"});
  EXPECT_EQ(tampered.exit_code, 3) << tampered.out << tampered.err;
  EXPECT_NE(tampered.out.find("cursor/demo: not connected: config.entry_changed"), std::string::npos)
      << tampered.out << tampered.err;

  fs::permissions(Adopted(), fs::perms::all);  // others may now write D
  ProcessResult unsafe = Udon({"adopt", "--dir", Adopted(), "--check", "--json"});
  EXPECT_EQ(unsafe.exit_code, 2) << unsafe.out << unsafe.err;
  EXPECT_NE(unsafe.out.find("adopt.dir_unsafe"), std::string::npos) << unsafe.out << unsafe.err;
}

}  // namespace
}  // namespace udon::testing
