#include "reference/reference.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace udon::reference {
namespace {

namespace fs = std::filesystem;

// A command tree with what the real one has: flags, valued and repeatable options, a fixed
// set of choices, a required positional, a nested command and a hidden option.
struct Tree {
  CLI::App app{"tool: does things"};
  std::string output, format, hidden;
  std::vector<std::string> files, servers;
  bool json = false;

  Tree() {
    app.set_version_flag("--version", "tool 1.2.3");
    CLI::App* make = app.add_subcommand("make", "Make a thing from .files (see --json)");
    make->add_option("-o,--output", output, "Where to write it")->required();
    make->add_option("--server", servers, "Server key (repeatable)");
    make->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "dot"}));
    make->add_flag("--json", json, "Machine output");
    make->add_option("--secret-hook", hidden, "Not for people")->group("");
    CLI::App* group = app.add_subcommand("group", "Commands of a group");
    CLI::App* nested = group->add_subcommand("nested", "A nested command");
    nested->add_option("FILE", files, "Input files")->required();
  }
};

const ManPage* Page(const std::vector<ManPage>& pages, const std::string& file) {
  for (const ManPage& page : pages) {
    if (page.file == file) return &page;
  }
  return nullptr;
}
// A page of a temporary list would dangle (the ASan build caught one).
const ManPage* Page(std::vector<ManPage>&& pages, const std::string& file) = delete;

TEST(ManPages, OnePagePerVisibleCommandNestedOnesIncluded) {
  Tree tree;
  std::vector<ManPage> pages = RenderManPages(tree.app, "tool", "1.2.3 (commit abc)");
  std::vector<std::string> files;
  for (const ManPage& page : pages) files.push_back(page.file);
  EXPECT_EQ(files, (std::vector<std::string>{"tool.1", "tool-make.1", "tool-group.1", "tool-group-nested.1"}));
}

TEST(ManPages, OptionsValuesAndDescriptionsAreRoff) {
  Tree tree;
  const PageNotes notes{{{0, "Success."}, {2, "Usage."}}, "More: docs/tool.md."};
  std::vector<ManPage> pages = RenderManPages(tree.app, "tool", "1.2.3", notes);
  const ManPage* make = Page(pages, "tool-make.1");
  ASSERT_NE(make, nullptr);
  EXPECT_NE(make->roff.find(".TH \"TOOL-MAKE\" \"1\" \"\" \"tool 1.2.3\""), std::string::npos);
  EXPECT_NE(make->roff.find(".SH NAME\ntool\\-make \\- Make a thing"), std::string::npos);
  EXPECT_NE(make->roff.find("\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fITEXT\\fR\nWhere to write it (required)"),
            std::string::npos);
  EXPECT_NE(make->roff.find("\\fB\\-\\-server\\fR \\fITEXT\\fR ..."), std::string::npos);
  EXPECT_NE(make->roff.find("\\fB\\-\\-json\\fR\nMachine output"), std::string::npos);
  EXPECT_NE(make->roff.find("(see \\-\\-json)"), std::string::npos);
  EXPECT_EQ(make->roff.find("secret"), std::string::npos);
  EXPECT_NE(make->roff.find("\\fBtool\\fR(1)"), std::string::npos);
  EXPECT_EQ(make->roff.find("EXIT STATUS"), std::string::npos);

  const ManPage* nested = Page(pages, "tool-group-nested.1");
  ASSERT_NE(nested, nullptr);
  EXPECT_NE(nested->roff.find(".SH SYNOPSIS\n\\fBtool group nested\\fR\n[\\fIOPTIONS\\fR] \\fIFILE\\fR..."),
            std::string::npos);
  const ManPage* top = Page(pages, "tool.1");
  ASSERT_NE(top, nullptr);
  EXPECT_NE(top->roff.find(".SH EXIT STATUS\n.TP\n\\fB0\\fR\nSuccess.\n.TP\n\\fB2\\fR\nUsage.\n"), std::string::npos);
  EXPECT_NE(top->roff.find("\\fBtool\\-group\\fR(1)\n.PP\nMore: docs/tool.md.\n"), std::string::npos);
  EXPECT_NE(top->roff.find("\\fBmake\\fR\nMake a thing"), std::string::npos);
  EXPECT_NE(top->roff.find("\\fBtool\\-make\\fR(1)"), std::string::npos);
  EXPECT_NE(top->roff.find(".SH NAME\ntool \\- does things\n"), std::string::npos) << "no \"tool: \" prefix";
}

// The demo server's case: a program without commands, exit statuses or a page to point to.
TEST(ManPages, ALoneProgramKeepsItsFooterAndWithoutNotesHasNoExitStatusOrSeeAlso) {
  CLI::App app{"solo: serves things"};
  std::string port;
  app.add_option("--port", port, "Port");
  app.footer("Faults:\n  a    first\n  bb   second\n");
  const std::vector<ManPage> pages = RenderManPages(app, "solo", "1");
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0].file, "solo.1");
  EXPECT_NE(pages[0].roff.find("\\fB\\-\\-port\\fR \\fITEXT\\fR\nPort"), std::string::npos);
  // The footer keeps the columns --help shows.
  EXPECT_NE(pages[0].roff.find(".PP\n.nf\nFaults:\n  a    first\n  bb   second\n.fi\n"), std::string::npos);
  EXPECT_EQ(pages[0].roff.find("EXIT STATUS"), std::string::npos);
  EXPECT_EQ(pages[0].roff.find("SEE ALSO"), std::string::npos);
  const std::vector<ManPage> noted = RenderManPages(app, "solo", "1", {{}, "More: docs/solo.md."});
  EXPECT_NE(noted[0].roff.find(".SH SEE ALSO\nMore: docs/solo.md.\n"), std::string::npos);
}

TEST(ManPages, ControlCharactersAtLineStartsAndBackslashesAreText) {
  CLI::App app{"top"};
  app.add_subcommand("x", ".TH injected\n'also\nback\\slash");
  const std::vector<ManPage> pages = RenderManPages(app, "t", "1");
  const ManPage* page = Page(pages, "t-x.1");
  ASSERT_NE(page, nullptr);
  EXPECT_NE(page->roff.find("\\&.TH injected\n\\&'also\nback\\eslash"), std::string::npos);
  EXPECT_EQ(page->roff.find("\n.TH injected"), std::string::npos);
}

// Runs the completion function in bash for the typed words (the last one is being
// completed) and returns the candidates, one per line.
std::string Complete(const std::string& script, const std::vector<std::string>& words) {
  const fs::path file = fs::path(testing::TempDir()) / "tool.bash-completion";
  std::ofstream(file) << script;
  std::string command = "cd '" + testing::TempDir() + "' && bash -c 'source \"$0\"; COMP_WORDS=(";
  for (const std::string& word : words) command += " \"" + word + "\"";
  command += "); COMP_CWORD=" + std::to_string(words.size() - 1) +
             "; _tool; printf \"%s\\n\" \"${COMPREPLY[@]}\" | sort' '" + file.string() + "'";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "bash failed: " + out;
}

TEST(BashCompletion, CommandsOptionsChoicesAndFilesAtEveryPath) {
  Tree tree;
  const std::string script = RenderBashCompletion(tree.app, "tool");
  EXPECT_NE(script.find("complete -o filenames -F _tool tool\n"), std::string::npos);
  EXPECT_EQ(Complete(script, {"tool", ""}), "group\nmake\n");
  EXPECT_EQ(Complete(script, {"tool", "--"}), "--help\n--version\n");
  EXPECT_EQ(Complete(script, {"tool", "make", "--s"}), "--server\n");
  EXPECT_EQ(Complete(script, {"tool", "make", "--format", ""}), "dot\ntext\n");
  EXPECT_EQ(Complete(script, {"tool", "group", ""}), "nested\n");
  EXPECT_EQ(Complete(script, {"tool", "group", "nested", "-"}), "--help\n-h\n");
  // An option's value is never taken for a command: "group" here is a server key.
  EXPECT_EQ(Complete(script, {"tool", "make", "--server", "group", "--j"}), "--json\n");
  // File names after a valued option without choices and for positionals.
  std::ofstream(fs::path(testing::TempDir()) / "tool-input.json") << "{}";
  EXPECT_EQ(Complete(script, {"tool", "make", "-o", "tool-inp"}), "tool-input.json\n");
  EXPECT_EQ(Complete(script, {"tool", "group", "nested", "tool-inp"}), "tool-input.json\n");
}

TEST(WriteReference, WritesEveryPageAndTheCompletion) {
  Tree tree;
  const fs::path dir = fs::path(testing::TempDir()) / "reference";
  ASSERT_TRUE(WriteReference(tree.app, "tool", "1.2.3", dir.string()).ok());
  for (const char* page : {"tool.1", "tool-make.1", "tool-group.1", "tool-group-nested.1"}) {
    EXPECT_TRUE(fs::is_regular_file(dir / "man1" / page)) << page;
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "bash-completion" / "tool"));
  std::ofstream(fs::path(testing::TempDir()) / "blocker") << "";
  EXPECT_EQ(WriteReference(tree.app, "tool", "1", (fs::path(testing::TempDir()) / "blocker").string()).error().code,
            "io.write_failed");
}

}  // namespace
}  // namespace udon::reference
