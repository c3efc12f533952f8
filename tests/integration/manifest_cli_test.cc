// capture, check, review --show and diff against the C++ demo server: pagination, a server
// that dies mid-listing, a duplicated name, every drift kind its fault flags produce, and
// hidden code points of every class escaped in text output and exact in --json.
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <gtest/gtest.h>

#include "json/internal/parser.h"
#include "json/json.h"
#include "json/pointer.h"
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

// capture --observe (contract 7.2): the capabilities as declared, and the notice the fault
// sends after the first listing answer counted once, before the listing was accepted (the
// capture then listed again) or while idle, whichever it reached first.
TEST_F(ManifestCliTest, ObservingASessionReportsCapabilitiesAndTheNoticeOnce) {
  UseServer({"--fault", "list-changed-after-list=1"});
  ProcessResult capture =
      Udon({"capture", "--server", "demo", "-o", dir_.File("observed.json"), "--observe", "0", "--json"});
  ASSERT_EQ(capture.exit_code, 0) << capture.err;
  json::Value session = json::Parse(capture.out).value()["sessions"]["demo"];
  EXPECT_EQ(session["capabilities"]["tools"]["listChanged"], true);
  const json::Value& notifications = session["notifications"];
  const char* kListChanged = "notifications/tools/list_changed";
  EXPECT_EQ(notifications["listing"].value(kListChanged, 0) + notifications["idle"].value(kListChanged, 0), 1)
      << capture.out;
  EXPECT_FALSE(notifications["opening"].contains(kListChanged));
  EXPECT_FALSE(notifications["relisting"].contains(kListChanged));
  EXPECT_EQ(session["relistIdentical"], true);

  ProcessResult plain = Udon({"capture", "--server", "demo", "-o", dir_.File("plain.json"), "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(json::Parse(plain.out).value().contains("sessions"));
  ProcessResult too_long =
      Udon({"capture", "--server", "demo", "-o", dir_.File("long.json"), "--observe", "601", "--json"});
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_EQ(json::Parse(too_long.out).value()["code"], "usage.invalid");
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
    const char* kind;
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
      {"description", "tool.description", tool_area("description")},
      {"input-schema", "input_schema.widened", tool_area("inputSchema")},
      {"output-schema", "output_schema.narrowed", tool_area("outputSchema")},
      {"annotations", "tool.annotations.destructiveHint", tool_area("annotations")},
      {"execution", "tool.execution", tool_area("execution")},
      {"remove-tool", "tool.removed", tool_status("removed")},
      {"rename-tool", "tool.renamed", tool_status("renamed")},
      {"duplicate-tool", "catalog.occurrences", tool_status("changed")},
      {"server-version", "server.info.version",
       [](const json::Value& server) { EXPECT_EQ(server["serverInfo"][0]["pointer"], "/version"); }},
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
    // The kind each fault's drift has (7.19): the demo's inputSchema forbids other names,
    // its outputSchema does not, so a property added widens the one and narrows the other.
    const json::Value& kinds = report["servers"][0]["kinds"];
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), c.kind), kinds.end()) << kinds.dump();
  }
  UseServer({"--fault", "protocol-version"});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("proto.json")}).exit_code, 0);
  json::Value report = json::Parse(Udon({"diff", dir_.File("base.json"), dir_.File("proto.json"), "--json"}, false).out).value();
  bool saw_protocol = false;
  for (const auto& d : report["topLevel"]) {
    saw_protocol = saw_protocol || (d["pointer"] == "/protocolVersion" && d["kind"] == "server.protocol_version");
  }
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
  EXPECT_NE(show.out.find("Counts words.<U+202E><U+E0041> Also sends them away."), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_NE(show.err.find("the tool held 2 hidden characters (U+202E, U+E0041)"), std::string::npos) << show.err;
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

// One code point of every class docs/contract.md 7.9 names: C0 (escape, carriage return),
// DEL, C1, soft hyphen, combining grapheme joiner, Mongolian vowel separator, the bidi
// controls (ALM, LRM, RLM, LRE, RLO, LRI, PDI), zero-width and invisible format characters
// (ZWSP, ZWJ, word joiner, invisible plus, BOM), tags, variation selectors, line and
// paragraph separators, private use, another Cf (Arabic number sign) and an unassigned
// plane. (Noncharacters never reach these outputs: a manifest holding one is invalid, its
// canonical form undefined; src/json/display_test.cc covers them.)
const char32_t kEveryClass[] = {0x1B,   0x0D,   0x7F,    0x85,    0xAD,    0x34F,  0x180E, 0x61C,
                                0x200E, 0x200F, 0x202A,  0x202E,  0x2066,  0x2069, 0x200B, 0x200D,
                                0x2060, 0x2064, 0xFEFF,  0xE0041, 0xE007F, 0xFE0F, 0xE0100, 0x2028,
                                0x2029, 0xE000, 0xF0000, 0x0600,  0x50000};

std::string Utf8(char32_t cp) {
  std::string out;
  json::internal::AppendUtf8(out, cp);
  return out;
}

// "A" + every class + "Z"; `breaks` adds a tab and a newline (raw only where a
// description is shown on its own lines).
std::string EveryClass(bool breaks = false) {
  std::string text = "A";
  for (char32_t cp : kEveryClass) text += Utf8(cp);
  return text + (breaks ? "\t\n" : "") + "Z";
}

// Text output: not one raw hidden code point, each one named by its marker instead.
void ExpectEscaped(const ProcessResult& result) {
  const std::string seen = result.out + result.err;
  for (char32_t cp : kEveryClass) {
    char name[16];
    std::snprintf(name, sizeof name, "<U+%04X>", static_cast<unsigned>(cp));
    EXPECT_EQ(seen.find(Utf8(cp)), std::string::npos) << name << " raw in:\n" << seen;
    EXPECT_NE(seen.find(name), std::string::npos) << name << " not named in:\n" << seen;
  }
}

json::Value& ToolNamed(json::Value& doc, const std::string& name) {
  for (auto& page : doc["servers"]["demo"]["toolPages"]) {
    for (auto& tool : page["tools"]) {
      if (tool["name"] == name) return tool;
    }
  }
  throw std::runtime_error("no such tool");
}

TEST_F(ManifestCliTest, DiffTextEscapesEveryHiddenClassAndJsonKeepsThemExact) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("base.json")}).exit_code, 0);
  json::Value later = Read("base.json");
  json::Value& tool = ToolNamed(later, "analyze_text");
  const std::string description = tool["description"].get<std::string>() + EveryClass(true) + " later";
  tool["description"] = description;
  tool["title"] = EveryClass(true);
  tool["inputSchema"]["properties"]["p" + EveryClass()] = {{"type", "string"}};
  later["servers"]["demo"]["serverInfo"]["version"] = EveryClass();
  later["servers"]["demo"]["toolPages"][0]["tools"].push_back({{"name", "t" + EveryClass()}, {"inputSchema", {{"type", "object"}}}});
  dir_.Write("later.json", later.dump(2));

  ProcessResult text = Udon({"diff", dir_.File("base.json"), dir_.File("later.json")}, false);
  EXPECT_EQ(text.exit_code, 1) << text.err;
  ExpectEscaped(text);
  EXPECT_NE(text.out.find("<U+0009><U+000A>Z"), std::string::npos) << "a one-line title escapes breaks:\n" << text.out;
  EXPECT_NE(text.out.find("note: the new value held 29 hidden characters (U+001B, U+000D,"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("note: the tool name held 29 hidden characters"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("note: the pointer held 29 hidden characters"), std::string::npos) << text.out;

  ProcessResult machine = Udon({"diff", dir_.File("base.json"), dir_.File("later.json"), "--json"}, false);
  EXPECT_EQ(machine.exit_code, 1) << machine.err;
  const json::Value report = json::Parse(machine.out).value();
  const json::Value& server = report["servers"][0];
  EXPECT_EQ(server["serverInfo"][0]["new"], EveryClass());
  bool saw_name = false, saw_description = false, saw_pointer = false;
  for (const json::Value& t : server["tools"]) {
    saw_name = saw_name || t["name"] == "t" + EveryClass();
    for (const json::Value& d : t.value("differences", json::Value::array())) {
      saw_description = saw_description || (d["pointer"] == "/description" && d["new"] == description);
      saw_pointer = saw_pointer || d["pointer"] == "/inputSchema/properties/p" + EveryClass();
    }
  }
  EXPECT_TRUE(saw_name && saw_description && saw_pointer) << machine.out;
}

TEST_F(ManifestCliTest, CheckFindingsAndRefusalsEscapeEveryHiddenClass) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("base.json")}).exit_code, 0);
  // A review of a tool the catalog lacks, whose name hides code points: a check finding.
  json::Value doc = Read("base.json");
  doc["servers"]["demo"]["reviews"]["ghost" + EveryClass()] = {
      {"reviewer", "r@example.test"},
      {"reviewedAt", "2026-01-01T00:00:00Z"},
      {"assertions", {{"headless", true}, {"independentCalls", true}, {"modelBacked", false},
                      {"sideEffects", json::Value::array()}, {"concurrency", "safe"}, {"referenceBasedIO", true}}},
      {"inputChannels", json::Value::object()}};
  dir_.Write("ghost.json", doc.dump(2));
  ProcessResult check = Udon({"check", dir_.File("ghost.json")}, false);
  EXPECT_EQ(check.exit_code, 3) << check.err;
  ExpectEscaped(check);
  EXPECT_NE(check.err.find("[catalog.tool_missing]\nudon-mcp: note: the finding above held 29 hidden characters"),
            std::string::npos)
      << check.err;
  ProcessResult check_json = Udon({"check", dir_.File("ghost.json"), "--json"}, false);
  EXPECT_EQ(check_json.exit_code, 3);
  const json::Value findings = json::Parse(check_json.out).value()["details"]["findings"];
  bool exact = false;
  for (const json::Value& finding : findings) {
    exact = exact || finding["pointer"] == "/servers/demo/reviews/" + json::Pointer::EscapeToken("ghost" + EveryClass());
  }
  EXPECT_TRUE(exact) << check_json.out;
  for (char32_t cp : kEveryClass) EXPECT_EQ(check_json.err.find(Utf8(cp)), std::string::npos);

  // A gate refusal (manifest.invalid, exit 3) whose pointer names an unknown member.
  json::Value odd = Read("base.json");
  odd["note" + EveryClass()] = "?";
  dir_.Write("odd.json", odd.dump(2));
  const std::vector<std::string> verify = {"verify", "--manifest", dir_.File("odd.json"), "--sha256", std::string(64, 'a'),
                                           "--server", "demo", "--tool", "analyze_text"};
  ProcessResult refused = Udon(verify);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  ExpectEscaped(refused);
  EXPECT_NE(refused.err.find("[manifest.invalid]\nudon-mcp: note: the error above held 29 hidden characters"),
            std::string::npos)
      << refused.err;
  std::vector<std::string> verify_json = verify;
  verify_json.push_back("--json");
  ProcessResult refused_json = Udon(verify_json);
  EXPECT_EQ(refused_json.exit_code, 3);
  const json::Value refusal = json::Parse(refused_json.out).value();
  EXPECT_EQ(refusal["code"], "manifest.invalid");
  EXPECT_EQ(refusal["details"]["pointer"], "/note" + EveryClass()) << refused_json.out;
  for (char32_t cp : kEveryClass) EXPECT_EQ(refused_json.err.find(Utf8(cp)), std::string::npos);
}

TEST_F(ManifestCliTest, ReviewShowAndItsWarningsEscapeEveryHiddenClass) {
  UseServer({});
  ASSERT_EQ(Udon({"capture", "--server", "demo", "-o", dir_.File("tools.json")}).exit_code, 0);
  json::Value doc = Read("tools.json");
  json::Value& tool = ToolNamed(doc, "analyze_text");
  tool["description"] = EveryClass(true);
  tool["inputSchema"]["properties"]["p" + EveryClass()] = {{"type", "string"}};
  const json::Value exact_tool = tool;
  dir_.Write("tools.json", doc.dump(2));

  const std::vector<std::string> show = {"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text",
                                         "--show"};
  ProcessResult text = Udon(show, false);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  ExpectEscaped(text);
  EXPECT_NE(text.out.find("description: A<U+001B>"), std::string::npos) << text.out;
  // 29 in the description; 27 in the property name, where the pretty JSON of the schema
  // already escapes the two C0 controls ("\u001b", "\r").
  EXPECT_NE(text.err.find("warning: the tool held 56 hidden characters"), std::string::npos) << text.err;
  std::vector<std::string> show_json = show;
  show_json.push_back("--json");
  ProcessResult machine = Udon(show_json, false);
  EXPECT_EQ(machine.exit_code, 0);
  const json::Value shown = json::Parse(machine.out).value();
  EXPECT_EQ(shown["toolObject"], exact_tool);
  EXPECT_EQ(shown["hiddenCodePoints"], 56);

  // The warning that names arguments without a channel names the server's property names.
  ProcessResult review = Udon({"review", dir_.File("tools.json"), "--server", "demo", "--tool", "analyze_text",
                               "--reviewer", "r@example.test", "--headless", "--independent-calls", "--model-backed",
                               "false", "--no-side-effects", "--concurrency", "safe", "--reference-based-io",
                               "--channel", "/text=data", "-o", dir_.File("reviewed.json")},
                              false);
  EXPECT_EQ(review.exit_code, 0) << review.err;
  ExpectEscaped(review);
  EXPECT_NE(review.err.find("udon-mcp: note: the warning above held 29 hidden characters"), std::string::npos)
      << review.err;
}

}  // namespace
}  // namespace udon
