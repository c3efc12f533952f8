#include "cli/output.h"

#include "gate/gate.h"
#include "json/display.h"

#include <cstdio>
#include <exception>
#include <iostream>

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

}  // namespace

int ExitCodeFor(const Error& error) { return gate::ExitCodeFor(error.code); }

void PrintJsonResult(json::Value fields) {
  OrderedValue result = {{"ok", true}};
  for (auto& [name, value] : fields.items()) result[name] = OrderedValue(std::move(value));
  PrintLine(Dump(result));
}

int ReportError(const Error& error, bool json, int exit_code, std::string_view subject) {
  std::string human = "udon-mcp: error: ";
  if (!subject.empty()) {
    human += subject;
    human += ": ";
  }
  human += error.Describe() + " [" + error.code + "]";
  PrintForPeople(stderr, human, "the error above");
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

void PrintForPeople(std::FILE* stream, std::string_view line, std::string_view subject) {
  json::DisplayText shown = json::ForDisplay(line);
  shown.text += '\n';
  if (!shown.hidden.empty()) shown.text += "udon-mcp: note: " + json::HiddenNotice(shown.hidden, subject) + "\n";
  std::fwrite(shown.text.data(), 1, shown.text.size(), stream);
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

int RunApp(CLI::App& app, int argc, char** argv) {
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
