// What every command shares: exit codes (exit_codes.h), the --json result and error
// shapes on stdout, human diagnostics on stderr, and running a command body.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "json/json.h"
#include "base/result.h"
#include "mcp/client/client.h"

namespace udon::cli {


// Prints `{"ok":true, ...fields}` on stdout, one line.
void PrintJsonResult(json::Value fields);

// Reports a failure: the human form on stderr (prefixed with the command and, when given,
// the input it concerns) and, with --json, `{"ok":false,"code","message","details"}` on
// stdout, details carrying the pointer and source location. Returns exit_code. The human
// form adds what details know for some codes (drift pointers, serverInfo members, the
// schema keyword and missing property, the HTTP status), never argument or result values.
int ReportError(const Error& error, bool json, int exit_code, std::string_view subject = {});
// The same, with public values only the human form shows (gate::GateResult::for_people).
int ReportErrorShowing(const Error& error, bool json, int exit_code, const json::Value& for_people);
int ReportError(const Error& error, bool json, std::string_view subject = {});

// Writes one line for people to `stream` (stdout or stderr) through json::ForDisplay, so
// server-supplied strings in it (tool names, pointers, serverInfo members) cannot hide
// or reorder text; when it hid anything, a second line
// "udon-mcp: note: <subject> held N hidden characters (U+XXXX, ...)" follows.
void PrintForPeople(std::FILE* stream, std::string_view line, std::string_view subject);
// A result for people on stdout (text mode of call and run): pretty JSON with hidden code
// points in its strings shown as markers, and a note on stderr when there were any. The
// exact value is what --json prints.
void PrintResultForPeople(const json::Value& value);

// --diagnostics (call, verify, run, probe, capture): the flag, and its printing on stderr
// only, every line through json::ForDisplay ("udon-mcp: diagnostics: <what>: <line>").
void AddDiagnosticsFlag(CLI::App* command, bool& diagnostics);
void PrintDiagnostics(const std::vector<mcp::Diagnostic>& diagnostics, std::string_view context = {});
// Without --diagnostics: one short line on stderr when the error is one it would explain.
void NoteDiagnostics(const Error& error);

// Progress on long work goes to stderr only when it is a terminal and --json is off.
bool ProgressWanted(bool json);
void PrintProgress(std::string_view line);

// Installs body as the subcommand's action; its return value becomes the process exit code.
// Exceptions escaping body are reported as internal errors (exit 1).
void SetAction(CLI::App* command, const bool* json, std::function<int()> body);

// Parses the command line and runs the selected command. Usage errors exit 2.
int RunApp(CLI::App& app, int argc, char** argv);

}  // namespace udon::cli
