// The command reference an installed program carries: one man page per command and a bash
// completion script, both rendered from the CLI11 command tree that --help prints, so
// neither can fall behind the binary. udon-mcp and udon-mcp-demo-server both write theirs
// with the hidden first argument `--write-reference DIR VERSION` at build time
// (udon_command_reference in cmake/UdonTargets.cmake); nothing here is a command.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"

namespace udon::reference {

// The hidden first argument of the build's hook (MaybeWriteReference).
inline constexpr std::string_view kWriteReferenceFlag = "--write-reference";

struct ManPage {
  std::string file;  // "udon-mcp.1", "udon-mcp-capture.1", "udon-mcp-evidence-summarize.1"
  std::string roff;
};

struct ExitStatus {
  int status;
  std::string meaning;
};

// What a program's pages say beyond its command tree.
struct PageNotes {
  std::vector<ExitStatus> exit_statuses;  // the program's page lists them; none: no section
  std::string further_reading;            // the last sentence of every page's SEE ALSO
};

// One section-1 page for the program and one for every visible command and nested command,
// in the order --help lists them. version goes into the page footer; no dates (the pages
// of one version are byte-identical whenever they are built).
std::vector<ManPage> RenderManPages(const CLI::App& app, std::string_view program, std::string_view version,
                                    const PageNotes& notes = {});

// A bash completion script for program: at every command path its subcommands and
// options; after an option that takes a value, the value's choices when the option has a
// fixed set, else file names; file names for positionals.
std::string RenderBashCompletion(const CLI::App& app, std::string_view program);

// Writes DIR/man1/<page> for every page and DIR/bash-completion/<program>, each
// atomically. Errors: io.write_failed.
Status WriteReference(const CLI::App& app, std::string_view program, std::string_view version,
                      const std::string& dir, const PageNotes& notes = {});

// The build's hook: when argv is `PROGRAM --write-reference DIR VERSION`, writes the
// reference (PROGRAM's file name names the pages) and returns how that went; otherwise
// nothing. Errors: io.write_failed.
std::optional<Status> MaybeWriteReference(const CLI::App& app, int argc, char** argv, const PageNotes& notes);

}  // namespace udon::reference
