#include "cli/output.h"

#include "json/display.h"
#include "reference/reference.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <set>

namespace udon::cli {
namespace {

// Machine output keeps "ok" first, and never fails on odd bytes (a path need not be UTF-8).
using OrderedValue = nlohmann::ordered_json;
std::string Dump(const OrderedValue& value) {
  return value.dump(-1, ' ', false, OrderedValue::error_handler_t::replace);
}

void PrintLine(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// CLI11 ends a parse with this exception to hand the command's exit code back.
class CommandExit : public CLI::RuntimeError {
 public:
  explicit CommandExit(int code) : CLI::RuntimeError(code) {}
};

std::string Quoted(const json::Value& value) {
  return value.dump(-1, ' ', false, json::Value::error_handler_t::replace);
}

std::string LastToken(const std::string& pointer) {
  const std::size_t slash = pointer.rfind('/');
  return slash == std::string::npos ? pointer : pointer.substr(slash + 1);
}

std::string OrRoot(const std::string& pointer) { return pointer.empty() ? "(root)" : pointer; }

// The lines a code's details add to its human form. Everything here is either ours,
// schema-derived, a pointer, or serverInfo (public); the caller escapes it.
std::vector<std::string> DetailLines(const Error& error, const json::Value& for_people) {
  std::vector<std::string> lines;
  const json::Value& d = error.details;
  if (!d.is_object()) return lines;
  auto array = [&d, &for_people](const char* key) -> const json::Value* {
    for (const json::Value* source : {&for_people, &d}) {
      if (!source->is_object()) continue;
      auto it = source->find(key);
      if (it != source->end() && it->is_array()) return &*it;
    }
    return nullptr;
  };
  if (error.code == "catalog.tool_drift") {
    if (const json::Value* pointers = array("pointers")) {
      for (const json::Value& p : *pointers) {
        lines.push_back("differs at " + OrRoot(p.value("pointer", "")) + " (" + p.value("change", "") + ")");
      }
    }
  } else if (error.code == "server.server_info_mismatch") {
    if (const json::Value* members = array("serverInfo")) {
      for (const json::Value& m : *members) {
        lines.push_back("serverInfo" + m.value("pointer", "") + ": reviewed " +
                        (m.contains("reviewed") ? Quoted(m["reviewed"]) : "(absent)") + ", live " +
                        (m.contains("live") ? Quoted(m["live"]) : "(absent)"));
      }
    } else if (const json::Value* pointers = array("pointers")) {
      for (const json::Value& p : *pointers) lines.push_back("serverInfo" + p.value("pointer", "") + " differs");
    }
  } else if (error.code == "input.schema_violation") {
    if (const json::Value* errors = array("errors")) {
      for (const json::Value& e : *errors) {
        std::string line = "at " + OrRoot(e.value("instanceLocation", "")) + ": keyword " +
                           LastToken(e.value("keywordLocation", "")) + ": " + e.value("error", "");
        if (e.contains("property")) line += ": " + Quoted(e["property"]);
        lines.push_back(std::move(line));
      }
    }
  }
  if (d.contains("status") && d["status"].is_number_integer()) {
    lines.push_back("HTTP status " + std::to_string(d["status"].get<long long>()));
  }
  return lines;
}

int ReportErrorFor(const Error& error, bool json, int exit_code, std::string_view subject,
                   const json::Value& for_people) {
  std::string human = "udon-mcp: error: ";
  if (!subject.empty()) {
    human += subject;
    human += ": ";
  }
  human += error.Describe() + " [" + error.code + "]";
  PrintForPeople(stderr, human, "the error above");
  for (const std::string& line : DetailLines(error, for_people)) PrintForPeople(stderr, "  " + line, "the line above");
  if (json) {
    json::Value details = error.details.is_object() ? error.details : json::Value::object();
    details["pointer"] = error.pointer;
    if (error.location) {
      details["line"] = error.location->line;
      details["column"] = error.location->column;
      details["offset"] = error.location->offset;
    }
    PrintLine(Dump({{"ok", false},
                    {"code", error.code},
                    {"message", error.message},
                    {"details", OrderedValue(std::move(details))}}));
  }
  return exit_code;
}

}  // namespace

void PrintJsonResult(json::Value fields) {
  OrderedValue result = {{"ok", true}};
  for (auto& [name, value] : fields.items()) result[name] = OrderedValue(std::move(value));
  PrintLine(Dump(result));
}

int ReportError(const Error& error, bool json, int exit_code, std::string_view subject) {
  return ReportErrorFor(error, json, exit_code, subject, json::Value::object());
}

int ReportErrorShowing(const Error& error, bool json, int exit_code, const json::Value& for_people) {
  return ReportErrorFor(error, json, exit_code, {}, for_people);
}

void PrintForPeople(std::FILE* stream, std::string_view line, std::string_view subject) {
  const std::string text = json::LineForPeople(line, subject);
  std::fwrite(text.data(), 1, text.size(), stream);
}

void PrintResultForPeople(const json::Value& value) {
  const std::string pretty = value.dump(2, ' ', false, json::Value::error_handler_t::replace);
  json::DisplayText shown = json::ForDisplay(pretty, json::LineBreaks::kKeep);
  std::printf("%s\n", shown.text.c_str());
  if (!shown.hidden.empty()) {
    std::fprintf(stderr, "udon-mcp: note: %s; --json prints the exact value\n",
                 json::HiddenNotice(shown.hidden, "the result").c_str());
  }
}

void AddDiagnosticsFlag(CLI::App* command, bool& diagnostics) {
  command->add_flag("--diagnostics", diagnostics,
                    "On failure, show on stderr the tool's error text, the server's stderr tail and the "
                    "transport's cause (may include secrets; never in --json, evidence or reports)");
}

void PrintDiagnostics(const std::vector<mcp::Diagnostic>& diagnostics, std::string_view context) {
  std::string prefix = "udon-mcp: diagnostics: ";
  if (!context.empty()) prefix += std::string(context) + ": ";
  for (const mcp::Diagnostic& diagnostic : diagnostics) {
    std::size_t start = 0;
    const std::string& text = diagnostic.text;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + start, end - start);
      if (!line.empty() || end < text.size()) {
        PrintForPeople(stderr, prefix + diagnostic.what + ": " + std::string(line), "the diagnostics line above");
      }
      start = end + 1;
    }
  }
}

void NoteDiagnostics(const Error& error) {
  static const std::set<std::string, std::less<>> kExplained = {
      "call.tool_error", "call.protocol_error", "call.indeterminate", "server.connect_failed"};
  if (kExplained.count(error.code) == 0) return;
  std::fprintf(stderr, "udon-mcp: note: --diagnostics shows the tool's error text, the server's stderr and the "
                       "transport's cause\n");
}

bool ProgressWanted(bool json) { return !json && isatty(STDERR_FILENO) == 1; }

void PrintProgress(std::string_view line) {
  PrintForPeople(stderr, "udon-mcp: " + std::string(line), "the progress line above");
}

int ReportError(const Error& error, bool json, std::string_view subject) {
  return ReportError(error, json, ExitCodeFor(error), subject);
}

void SetAction(CLI::App* command, const bool* json, std::function<int()> body) {
  command->callback([json, body = std::move(body)] {
    int code = kExitInternal;
    try {
      code = body();
    } catch (const std::exception&) {
      code = ReportError(MakeError("internal.error", "unexpected internal failure"), *json,
                         kExitInternal);
    }
    throw CommandExit(code);
  });
}

namespace {

// What udon-mcp's man pages say beyond its command tree: the contract's exit statuses
// (exit_codes.h) and where the rest is written down.
reference::PageNotes ReferenceNotes() {
  return {{{kExitOk, "Success."},
           {kExitInternal, "Internal error; also: diff found differences, a probe finding."},
           {kExitInvalidInput, "Usage, configuration, unreadable or invalid input."},
           {kExitRefused, "Refused before dispatch: the tool was not called."},
           {kExitFailed, "Failed after dispatch."},
           {kExitIndeterminate,
            "Indeterminate: dispatched, then invalidated, timed out or disconnected; never retried."}},
          "The files, commands, exit statuses and error codes: docs/contract.md in the documentation "
          "installed with udon-mcp."};
}

}  // namespace

int RunApp(CLI::App& app, int argc, char** argv) {
  if (std::optional<Status> written = reference::MaybeWriteReference(app, argc, argv, ReferenceNotes())) {
    return written->ok() ? kExitOk : ReportError(written->error(), false);
  }
  try {
    app.parse(argc, argv);
  } catch (const CommandExit& exit) {
    return exit.get_exit_code();
  } catch (const CLI::ParseError& error) {
    // Help and --version exit 0; every other parse failure is a usage error.
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace udon::cli
