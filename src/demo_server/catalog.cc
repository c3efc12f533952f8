#include "demo_server/catalog.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/random.h"
#include "base/sha256.h"

namespace udon::demo {
namespace {

using json::Value;
using mcp::ToolContext;
using mcp::ToolOutcome;

// 1x1 red PNG and a 4-sample 8 kHz mono WAV: the smallest real media for the fixtures.
constexpr char kRedPixelPng[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr char kTinyWav[] =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";

ToolOutcome Structured(Value structured, Value extra_content = Value::array()) {
  Value content = Value::array();
  content.push_back({{"type", "text"}, {"text", structured.dump()}});
  for (auto& block : extra_content) content.push_back(std::move(block));
  return {{{"content", std::move(content)}, {"structuredContent", std::move(structured)}}, {}};
}

ToolOutcome Text(std::string text) {
  return {{{"content", Value::array({{{"type", "text"}, {"text", std::move(text)}}})}}, {}};
}

// Execution and input-validation failures are results with isError (SEP-1303).
ToolOutcome ToolError(std::string message) {
  ToolOutcome outcome = Text(std::move(message));
  outcome.result["isError"] = true;
  return outcome;
}

Value Annotations(bool read_only, bool destructive, bool idempotent, bool open_world) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", idempotent},
          {"openWorldHint", open_world}};
}

const Value* Argument(const Value& arguments, const char* name) {
  auto it = arguments.find(name);
  return it == arguments.end() ? nullptr : &*it;
}

bool IsUriLike(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = text[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return false;
  }
  return text.find_first_of(" \t\r\n") == std::string::npos;
}

std::uint64_t Fnv1a(std::string_view text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

void AddRenderTurntable(mcp::Server& server) {
  Value tool = {
      {"name", "render_turntable"},
      {"title", "Render turntable"},
      {"description",
       "Render evenly spaced views of an addressable 3D asset. Takes the asset's URI and "
       "returns the URIs of the rendered images; the same input always yields the same URIs."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"source", {{"type", "string"}, {"format", "uri"}, {"description", "URI of the asset"}}},
          {"angles", {{"type", "integer"}, {"minimum", 1}, {"maximum", 36}}},
          {"resolution", {{"type", "integer"}, {"enum", {1024, 2048, 4096}}}}}},
        {"required", {"source", "angles", "resolution"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"renderedUris",
           {{"type", "array"}, {"items", {{"type", "string"}, {"format", "uri"}}}}}}},
        {"required", {"renderedUris"}}}},
      {"annotations", Annotations(false, false, true, false)}};
  server.AddTool(std::move(tool), [](const Value& arguments, ToolContext&) {
    const Value* source = Argument(arguments, "source");
    const Value* angles = Argument(arguments, "angles");
    const Value* resolution = Argument(arguments, "resolution");
    if (source == nullptr || !source->is_string() || !IsUriLike(source->get<std::string>())) {
      return ToolError("source must be a URI");
    }
    if (angles == nullptr || !angles->is_number_integer() || *angles < 1 || *angles > 36) {
      return ToolError("angles must be an integer from 1 to 36");
    }
    if (resolution == nullptr || !resolution->is_number_integer() ||
        (*resolution != 1024 && *resolution != 2048 && *resolution != 4096)) {
      return ToolError("resolution must be 1024, 2048 or 4096");
    }
    char asset[17];
    std::snprintf(asset, sizeof asset, "%016llx",
                  static_cast<unsigned long long>(Fnv1a(source->get<std::string>())));
    const int count = angles->get<int>();
    Value uris = Value::array();
    Value links = Value::array();
    for (int i = 0; i < count; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "angle-%03d.png", i * 360 / count);
      std::string uri = "render://turntable/" + std::string(asset) + "/" +
                        std::to_string(resolution->get<int>()) + "/" + name;
      links.push_back(
          {{"type", "resource_link"}, {"uri", uri}, {"name", name}, {"mimeType", "image/png"}});
      uris.push_back(std::move(uri));
    }
    return Structured({{"renderedUris", std::move(uris)}}, std::move(links));
  });
}

struct TextStats {
  std::size_t characters = 0, words = 0, sentences = 0, lines = 0, word_bytes = 0;
};

TextStats Analyze(const std::string& text) {
  TextStats stats;
  bool in_word = false;
  bool sentence_open = false;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++stats.characters;
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (c == '\n') ++stats.lines;
    if (space) {
      in_word = false;
      continue;
    }
    if (c == '.' || c == '!' || c == '?') {
      if (sentence_open) ++stats.sentences;
      sentence_open = false;
      in_word = false;
      continue;
    }
    if (!in_word) ++stats.words;
    in_word = true;
    sentence_open = true;
    ++stats.word_bytes;
  }
  if (sentence_open) ++stats.sentences;
  if (!text.empty() && text.back() != '\n') ++stats.lines;
  return stats;
}

void AddAnalyzeText(mcp::Server& server) {
  Value tool = {
      {"name", "analyze_text"},
      {"title", "Analyze text"},
      {"description", "Count characters, words, sentences and lines of a text."},
      {"inputSchema",
       {{"type", "object"},
        {"properties", {{"text", {{"type", "string"}, {"maxLength", 1000000}}}}},
        {"required", {"text"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"characters", {{"type", "integer"}, {"minimum", 0}}},
          {"words", {{"type", "integer"}, {"minimum", 0}}},
          {"sentences", {{"type", "integer"}, {"minimum", 0}}},
          {"lines", {{"type", "integer"}, {"minimum", 0}}},
          {"averageWordLength", {{"type", "number"}, {"minimum", 0}}}}},
        {"required", {"characters", "words", "sentences", "lines", "averageWordLength"}},
        {"additionalProperties", false}}},
      {"annotations", Annotations(true, false, true, false)}};
  server.AddTool(std::move(tool), [](const Value& arguments, ToolContext&) {
    const Value* text = Argument(arguments, "text");
    if (text == nullptr || !text->is_string()) return ToolError("text must be a string");
    const TextStats stats = Analyze(text->get<std::string>());
    const double average =
        stats.words == 0 ? 0.0
                         : std::round(100.0 * static_cast<double>(stats.word_bytes) /
                                      static_cast<double>(stats.words)) / 100.0;
    return Structured({{"characters", stats.characters},
                       {"words", stats.words},
                       {"sentences", stats.sentences},
                       {"lines", stats.lines},
                       {"averageWordLength", average}});
  });
}

struct Unit {
  const char* category;
  double scale;   // to the category's base unit
  double offset;  // added after scaling (temperatures)
};

const std::map<std::string, Unit, std::less<>>& Units() {
  static const std::map<std::string, Unit, std::less<>> units = {
      {"m", {"length", 1.0, 0.0}},        {"km", {"length", 1000.0, 0.0}},
      {"cm", {"length", 0.01, 0.0}},      {"mm", {"length", 0.001, 0.0}},
      {"in", {"length", 0.0254, 0.0}},    {"ft", {"length", 0.3048, 0.0}},
      {"mi", {"length", 1609.344, 0.0}},  {"g", {"mass", 0.001, 0.0}},
      {"kg", {"mass", 1.0, 0.0}},         {"lb", {"mass", 0.45359237, 0.0}},
      {"oz", {"mass", 0.028349523125, 0.0}}, {"K", {"temperature", 1.0, 0.0}},
      {"C", {"temperature", 1.0, 273.15}}, {"F", {"temperature", 5.0 / 9.0, 255.3722222222222}},
  };
  return units;
}

// The one draft-07 schema of the catalog, so clients meet both dialects.
void AddConvertUnits(mcp::Server& server) {
  Value names = Value::array();
  for (const auto& [name, unit] : Units()) names.push_back(name);
  Value tool = {
      {"name", "convert_units"},
      {"title", "Convert units"},
      {"description", "Convert a length, mass or temperature between units."},
      {"inputSchema",
       {{"$schema", "http://json-schema.org/draft-07/schema#"},
        {"type", "object"},
        {"properties",
         {{"value", {{"type", "number"}}},
          {"from", {{"type", "string"}, {"enum", names}}},
          {"to", {{"type", "string"}, {"enum", names}}}}},
        {"required", {"value", "from", "to"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"$schema", "http://json-schema.org/draft-07/schema#"},
        {"type", "object"},
        {"properties",
         {{"value", {{"type", "number"}}},
          {"unit", {{"type", "string"}}},
          {"category", {{"type", "string"}, {"enum", {"length", "mass", "temperature"}}}}}},
        {"required", {"value", "unit", "category"}}}},
      {"annotations", Annotations(true, false, true, false)}};
  server.AddTool(std::move(tool), [](const Value& arguments, ToolContext&) {
    const Value* value = Argument(arguments, "value");
    const Value* from = Argument(arguments, "from");
    const Value* to = Argument(arguments, "to");
    if (value == nullptr || !value->is_number()) return ToolError("value must be a number");
    if (from == nullptr || !from->is_string() || to == nullptr || !to->is_string()) {
      return ToolError("from and to must be unit names");
    }
    auto source = Units().find(from->get<std::string>());
    auto target = Units().find(to->get<std::string>());
    if (source == Units().end() || target == Units().end()) return ToolError("unknown unit");
    if (std::string_view(source->second.category) != target->second.category) {
      return ToolError("units measure different quantities");
    }
    const double base = value->get<double>() * source->second.scale + source->second.offset;
    const double converted = (base - target->second.offset) / target->second.scale;
    if (!std::isfinite(converted)) return ToolError("result out of range");
    return Structured({{"value", std::round(converted * 1e9) / 1e9},
                       {"unit", target->first},
                       {"category", source->second.category}});
  });
}

std::vector<std::string> Sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (char c : text) {
    current.push_back(c);
    if (c == '.' || c == '!' || c == '?') {
      const auto start = current.find_first_not_of(" \t\r\n");
      if (start != std::string::npos) out.push_back(current.substr(start));
      current.clear();
    }
  }
  const auto start = current.find_first_not_of(" \t\r\n");
  if (start != std::string::npos) out.push_back(current.substr(start));
  return out;
}

// Deliberately nondeterministic, like a model-backed tool: the same input gives different
// answers from call to call.
void AddSummarize(mcp::Server& server) {
  Value tool = {
      {"name", "summarize"},
      {"title", "Summarize"},
      {"description",
       "Summarize a text in a few sentences. The summary is generated and varies from call "
       "to call."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"text", {{"type", "string"}, {"maxLength", 1000000}}},
          {"maxSentences", {{"type", "integer"}, {"minimum", 1}, {"maximum", 10}, {"default", 1}}}}},
        {"required", {"text"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"summary", {{"type", "string"}}}, {"variant", {{"type", "integer"}, {"minimum", 1}}}}},
        {"required", {"summary", "variant"}}}},
      {"annotations", Annotations(true, false, false, true)}};
  auto state = std::make_shared<std::pair<std::mutex, std::mt19937_64>>();
  state->second.seed(std::random_device{}());
  auto calls = std::make_shared<std::atomic<long>>(0);
  server.AddTool(std::move(tool), [state, calls](const Value& arguments, ToolContext&) {
    const Value* text = Argument(arguments, "text");
    if (text == nullptr || !text->is_string()) return ToolError("text must be a string");
    long max_sentences = 1;
    if (const Value* m = Argument(arguments, "maxSentences")) {
      if (!m->is_number_integer() || *m < 1 || *m > 10) {
        return ToolError("maxSentences must be an integer from 1 to 10");
      }
      max_sentences = m->get<long>();
    }
    std::vector<std::string> sentences = Sentences(text->get<std::string>());
    std::string summary;
    {
      std::lock_guard lock(state->first);
      for (long i = 0; i < max_sentences && !sentences.empty(); ++i) {
        const std::size_t pick = state->second() % sentences.size();
        if (!summary.empty()) summary.push_back(' ');
        summary += sentences[pick];
        sentences.erase(sentences.begin() + static_cast<std::ptrdiff_t>(pick));
      }
    }
    return Structured({{"summary", summary}, {"variant", ++*calls}});
  });
}

void AddSlowCount(mcp::Server& server) {
  Value tool = {
      {"name", "slow_count"},
      {"title", "Slow count"},
      {"description",
       "Count to a number slowly, reporting progress after each step. Stops when cancelled."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"count", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}},
          {"delayMs",
           {{"type", "integer"}, {"minimum", 0}, {"maximum", 60000}, {"default", 100}}}}},
        {"required", {"count"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties", {{"counted", {{"type", "integer"}, {"minimum", 1}}}}},
        {"required", {"counted"}}}},
      {"annotations", Annotations(true, false, true, false)}};
  server.AddTool(std::move(tool), [](const Value& arguments, ToolContext& context) {
    const Value* count = Argument(arguments, "count");
    if (count == nullptr || !count->is_number_integer() || *count < 1 || *count > 1000) {
      return ToolError("count must be an integer from 1 to 1000");
    }
    long delay = 100;
    if (const Value* d = Argument(arguments, "delayMs")) {
      if (!d->is_number_integer() || *d < 0 || *d > 60000) {
        return ToolError("delayMs must be an integer from 0 to 60000");
      }
      delay = d->get<long>();
    }
    const long total = count->get<long>();
    for (long i = 1; i <= total; ++i) {
      if (!context.SleepFor(std::chrono::milliseconds(delay))) return ToolError("cancelled");
      context.Progress(static_cast<double>(i), static_cast<double>(total));
    }
    return Structured({{"counted", total}});
  });
}

void AddAsyncRender(mcp::Server& server) {
  Value tool = {
      {"name", "async_render"},
      {"title", "Asynchronous render"},
      {"description", "Render a high-quality still of an asset as a long-running task."},
      {"inputSchema",
       {{"type", "object"},
        {"properties", {{"source", {{"type", "string"}, {"format", "uri"}}}}},
        {"required", {"source"}},
        {"additionalProperties", false}}},
      {"execution", {{"taskSupport", "required"}}},
      {"annotations", Annotations(false, false, true, false)}};
  // The spec: a call without task augmentation to a taskSupport "required" tool is -32601.
  // This server offers no tasks, so every call is refused the same way.
  server.AddTool(std::move(tool), [](const Value&, ToolContext&) {
    return ToolOutcome{{}, mcp::RpcError{mcp::kMethodNotFound,
                                         "tool requires task augmentation", nullptr}};
  });
}

// One line appended with one write(2) (O_APPEND): lines of many processes never interleave.
bool AppendLine(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string line = text + "\n";
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  return written;
}

// A tool with a side effect that must not run concurrently: it notices when two calls
// overlap (in this process, or across processes sharing a ledger file) and says so.
void AddAppendLedger(mcp::Server& server, const CatalogOptions& options) {
  Value tool = {
      {"name", "append_ledger"},
      {"title", "Append to ledger"},
      {"description",
       "Append an entry to the server's ledger and return its sequence number. Calls must "
       "not overlap: overlapped is true when another append ran at the same time."},
      {"inputSchema",
       {{"type", "object"},
        {"properties", {{"entry", {{"type", "string"}, {"maxLength", 1000}}}}},
        {"required", {"entry"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"sequence", {{"type", "integer"}, {"minimum", 1}}},
          {"overlapped", {{"type", "boolean"}}}}},
        {"required", {"sequence", "overlapped"}}}},
      {"annotations", Annotations(false, false, false, false)}};
  // Two calls overlap when one was inside when the other entered, or one entered while
  // the other was inside: both are checked under the lock, at entry and at exit.
  struct Ledger {
    std::mutex mutex;
    int inside = 0;
    long entries = 0;
    long sequence = 0;
    bool Enter(long& entry) {
      std::lock_guard lock(mutex);
      entry = ++entries;
      return inside++ != 0;
    }
    bool Leave(long entry) {
      std::lock_guard lock(mutex);
      --inside;
      return entries != entry;
    }
    long Next() {
      std::lock_guard lock(mutex);
      return ++sequence;
    }
  };
  auto ledger = std::make_shared<Ledger>();
  const int delay = options.ledger_delay_ms;
  const std::string file = options.ledger_file;
  const std::string entries = options.entries_file;
  server.AddTool(std::move(tool), [ledger, delay, file, entries](const Value& arguments, ToolContext&) {
    const Value* entry = Argument(arguments, "entry");
    if (entry == nullptr || !entry->is_string()) return ToolError("entry must be a string");
    if (!entries.empty() && !AppendLine(entries, entry->get<std::string>())) {
      return ToolError("entries file cannot be written");
    }
    long ticket = 0;
    bool overlapped = ledger->Enter(ticket);
    int fd = -1;
    if (!file.empty()) {
      fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0) {
        ledger->Leave(ticket);
        return ToolError("ledger file cannot be opened");
      }
      if (flock(fd, LOCK_EX | LOCK_NB) != 0) overlapped = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    const long sequence = ledger->Next();
    if (fd >= 0) {
      const std::string line = std::to_string(sequence) + "\n";
      const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      close(fd);  // also releases the lock
      if (!written) {
        ledger->Leave(ticket);
        return ToolError("ledger file cannot be written");
      }
    }
    if (ledger->Leave(ticket)) overlapped = true;
    return Structured({{"sequence", sequence}, {"overlapped", overlapped}});
  });
}

Value NoArguments() { return {{"type", "object"}, {"additionalProperties", false}}; }

void AddFixture(mcp::Server& server, const char* name, const char* description,
                mcp::ToolHandler handler, Value input_schema = NoArguments()) {
  server.AddTool({{"name", name}, {"description", description}, {"inputSchema", std::move(input_schema)}},
                 std::move(handler));
}

// The diagnostic tools the 2026-07-28 scenarios (server-stateless, the SEP-2243 header
// scenarios) call by name.
void AddModernFixtures(mcp::Server& server) {
  AddFixture(server, "test_missing_capability",
             "Needs the client's sampling capability; without it the request is refused (-32021).",
             [](const Value&, ToolContext& context) {
               if (!context.HasClientCapability("sampling")) {
                 return ToolOutcome{
                     {},
                     mcp::RpcError{mcp::rpc_code::kMissingRequiredClientCapability,
                                   "Missing required client capability",
                                   {{"requiredCapabilities", {{"sampling", Value::object()}}}}}};
               }
               return Text("The client declared the sampling capability.");
             });
  AddFixture(server, "test_streaming_elicitation",
             "Answers on its request stream with results only, never with a server request.",
             [](const Value&, ToolContext&) {
               return Text("Input is requested in results (multi round-trip), never as a request.");
             });
  AddFixture(server, "test_logging_tool", "Logs three info messages when the request asks for logs.",
             [](const Value&, ToolContext& context) {
               for (const char* message : {"Tool execution started", "Tool processing data",
                                           "Tool execution completed"}) {
                 context.Log("info", message);
               }
               return Text("Logging test completed.");
             });
  auto added = std::make_shared<std::atomic<int>>(0);
  AddFixture(server, "test_trigger_tool_change",
             "Adds a tool to the catalog and announces the change to listening clients.",
             [&server, added](const Value&, ToolContext& context) {
               const std::string name = "test_dynamic_tool_" + std::to_string(++*added);
               server.AddTool({{"name", name},
                               {"description", "A tool added by test_trigger_tool_change."},
                               {"inputSchema", NoArguments()}},
                              [](const Value&, ToolContext&) { return Text("dynamic"); });
               context.ToolsListChanged();
               return Text("Added " + name + ".");
             });
  AddFixture(server, "test_header_param",
             "Echoes its region, which travels in the Mcp-Param-Region header over HTTP.",
             [](const Value& arguments, ToolContext&) {
               const Value* region = Argument(arguments, "region");
               return Text("region: " + (region != nullptr && region->is_string()
                                             ? region->get<std::string>()
                                             : std::string("(none)")));
             },
             {{"type", "object"},
              {"properties",
               {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                {"query", {{"type", "string"}}}}},
              {"required", {"region"}}});
}

// Multi round-trip (2026-07-28 input_required) helpers for the SEP-2322 fixtures.
Value Elicit(const char* message, Value properties, Value required) {
  return {{"method", "elicitation/create"},
          {"params",
           {{"message", message},
            {"requestedSchema",
             {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}}}}}};
}

Value Sample(const char* text, int max_tokens) {
  return {{"method", "sampling/createMessage"},
          {"params",
           {{"messages", Value::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})},
            {"maxTokens", max_tokens}}}};
}

Value ListRoots() { return {{"method", "roots/list"}, {"params", Value::object()}}; }

ToolOutcome InputRequired(Value requests, const std::string& state = {}) {
  Value result = {{"resultType", "input_required"}, {"inputRequests", std::move(requests)}};
  if (!state.empty()) result["requestState"] = state;
  return {std::move(result), {}};
}

ToolOutcome TamperedState() {
  return {{}, mcp::RpcError{mcp::kInvalidParams, "requestState failed its integrity check", nullptr}};
}

// requestState is "STEP.MAC": the step a client must not be able to forge, and a keyed
// SHA-256 over it with a per-process secret, so a modified state is detected.
class StateSeal {
 public:
  StateSeal() {
    auto secret = base::RandomHex(32);
    if (!secret.ok()) std::abort();  // a guessable secret would make every seal forgeable
    secret_ = std::move(secret).value();
  }
  std::string Seal(const std::string& step) const { return step + "." + base::Sha256Hex(secret_ + step); }
  // The step a sealed state carries; nullopt if it was not sealed here or was changed.
  std::optional<std::string> Open(const std::string& state) const {
    const auto dot = state.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string step = state.substr(0, dot);
    if (Seal(step) != state) return std::nullopt;
    return step;
  }

 private:
  std::string secret_;
};

// The client's response under `key`, if it sent one (extra keys are ignored).
const Value* InputResponse(const ToolContext& context, const char* key) {
  const Value& responses = context.input_responses();
  auto it = responses.find(key);
  return it == responses.end() || !it->is_object() ? nullptr : &*it;
}

std::string ElicitedString(const Value& response, const char* field) {
  auto action = response.find("action");
  if (action == response.end() || *action != "accept" || !response.contains("content") ||
      !response["content"].is_object()) {
    return "(declined)";
  }
  const Value& content = response["content"];
  return content.contains(field) && content[field].is_string() ? content[field].get<std::string>()
                                                               : std::string("(none)");
}

Value NameRequest() { return Elicit("What is your name?", {{"name", {{"type", "string"}}}}, {"name"}); }

// The SEP-2322 scenarios' tools whose state travels in an integrity-protected requestState.
void AddRequestStateFixtures(mcp::Server& server) {
  auto seal = std::make_shared<StateSeal>();
  AddFixture(server, "test_input_required_result_request_state",
             "Asks for confirmation with an integrity-protected requestState.",
             [seal](const Value&, ToolContext& context) {
               const Value* response = InputResponse(context, "confirm");
               if (response != nullptr && context.request_state()) {
                 if (seal->Open(*context.request_state()) != "confirm") return TamperedState();
                 return Text("state-ok: confirmation received.");
               }
               return InputRequired(
                   {{"confirm", Elicit("Please confirm", {{"ok", {{"type", "boolean"}}}}, {"ok"})}},
                   seal->Seal("confirm"));
             });
  AddFixture(server, "test_input_required_result_tampered_state",
             "Like test_input_required_result_request_state; a changed requestState is refused.",
             [seal](const Value&, ToolContext& context) {
               if (context.request_state()) {
                 if (seal->Open(*context.request_state()) != "tamper-check") return TamperedState();
                 if (InputResponse(context, "confirm") != nullptr) return Text("state-ok");
               }
               return InputRequired(
                   {{"confirm", Elicit("Please confirm", {{"ok", {{"type", "boolean"}}}}, {"ok"})}},
                   seal->Seal("tamper-check"));
             });
  AddFixture(server, "test_input_required_result_multiple_inputs",
             "Asks for a name, a greeting and the roots at once.",
             [seal](const Value&, ToolContext& context) {
               if (context.request_state()) {
                 if (seal->Open(*context.request_state()) != "multiple") return TamperedState();
                 if (InputResponse(context, "user_name") != nullptr &&
                     InputResponse(context, "greeting") != nullptr &&
                     InputResponse(context, "client_roots") != nullptr) {
                   return Text("All inputs received.");
                 }
               }
               return InputRequired({{"user_name", NameRequest()},
                                     {"greeting", Sample("Generate a greeting", 50)},
                                     {"client_roots", ListRoots()}},
                                    seal->Seal("multiple"));
             });
  AddFixture(server, "test_input_required_result_multi_round",
             "Asks for a name, then a colour, carrying its progress in requestState.",
             [seal](const Value&, ToolContext& context) {
               const auto round2 = [&] {
                 return InputRequired({{"step2", Elicit("Step 2: What is your favorite color?",
                                                        {{"color", {{"type", "string"}}}}, {"color"})}},
                                      seal->Seal("round-2"));
               };
               if (context.request_state()) {
                 const std::optional<std::string> step = seal->Open(*context.request_state());
                 if (!step) return TamperedState();
                 if (*step == "round-1") {
                   if (InputResponse(context, "step1") != nullptr) return round2();
                 } else if (*step == "round-2") {
                   if (InputResponse(context, "step2") != nullptr) return Text("Both steps completed.");
                   return round2();
                 }
               }
               return InputRequired({{"step1", Elicit("Step 1: What is your name?",
                                                      {{"name", {{"type", "string"}}}}, {"name"})}},
                                    seal->Seal("round-1"));
             });
}

// The SEP-2322 scenarios' tools: results that ask the client for input and are retried.
void AddInputRequiredFixtures(mcp::Server& server) {
  AddFixture(server, "test_input_required_result_elicitation",
             "Asks for the user's name by elicitation, then greets them.",
             [](const Value&, ToolContext& context) {
               const Value* response = InputResponse(context, "user_name");
               if (response == nullptr) return InputRequired({{"user_name", NameRequest()}});
               return Text("Hello, " + ElicitedString(*response, "name") + "!");
             });
  AddFixture(server, "test_input_required_result_sampling",
             "Asks the client's model a question by sampling, then reports the answer.",
             [](const Value&, ToolContext& context) {
               const Value* response = InputResponse(context, "capital_question");
               if (response == nullptr) {
                 return InputRequired(
                     {{"capital_question", Sample("What is the capital of France?", 100)}});
               }
               std::string answer = "(no text)";
               if (response->contains("content") && (*response)["content"].is_object()) {
                 const Value& content = (*response)["content"];
                 if (content.contains("text") && content["text"].is_string()) answer = content["text"];
               }
               return Text("Sampling response: " + answer);
             });
  AddFixture(server, "test_input_required_result_list_roots",
             "Asks the client for its roots, then lists them.",
             [](const Value&, ToolContext& context) {
               const Value* response = InputResponse(context, "client_roots");
               if (response == nullptr) return InputRequired({{"client_roots", ListRoots()}});
               std::string uris;
               if (response->contains("roots") && (*response)["roots"].is_array()) {
                 for (const Value& root : (*response)["roots"]) {
                   if (root.is_object() && root.contains("uri") && root["uri"].is_string()) {
                     uris += (uris.empty() ? "" : ", ") + root["uri"].get<std::string>();
                   }
                 }
               }
               return Text("Roots: " + (uris.empty() ? std::string("(none)") : uris));
             });
  AddRequestStateFixtures(server);
  AddFixture(server, "test_input_required_result_capabilities",
             "Asks only for input the request's client capabilities allow.",
             [](const Value&, ToolContext& context) {
               Value requests = Value::object();
               if (context.HasClientCapability("elicitation")) requests["user_name"] = NameRequest();
               if (context.HasClientCapability("sampling")) {
                 requests["greeting"] = Sample("Generate a greeting", 50);
               }
               if (context.HasClientCapability("roots")) requests["client_roots"] = ListRoots();
               bool answered = !requests.empty();
               for (const auto& [key, request] : requests.items()) {
                 answered = answered && InputResponse(context, key.c_str()) != nullptr;
               }
               if (requests.empty()) return Text("The client declared no input capability.");
               if (answered) return Text("All inputs received.");
               return InputRequired(std::move(requests));
             });
}

// The tools @modelcontextprotocol/conformance server scenarios call by name.
void AddConformanceFixtures(mcp::Server& server) {
  AddFixture(server, "test_simple_text", "Returns a simple text block.",
             [](const Value&, ToolContext&) {
               return Text("This is a simple text response for testing.");
             });
  AddFixture(server, "test_image_content", "Returns a 1x1 PNG image.",
             [](const Value&, ToolContext&) {
               return ToolOutcome{{{"content", Value::array({{{"type", "image"},
                                                              {"data", kRedPixelPng},
                                                              {"mimeType", "image/png"}}})}},
                                  {}};
             });
  AddFixture(server, "test_audio_content", "Returns a short WAV clip.",
             [](const Value&, ToolContext&) {
               return ToolOutcome{{{"content", Value::array({{{"type", "audio"},
                                                              {"data", kTinyWav},
                                                              {"mimeType", "audio/wav"}}})}},
                                  {}};
             });
  AddFixture(server, "test_embedded_resource", "Returns an embedded text resource.",
             [](const Value&, ToolContext&) {
               Value resource = {{"uri", "test://embedded-resource"},
                                 {"mimeType", "text/plain"},
                                 {"text", "This is an embedded resource content."}};
               return ToolOutcome{
                   {{"content", Value::array({{{"type", "resource"}, {"resource", resource}}})}},
                   {}};
             });
  AddFixture(server, "test_multiple_content_types", "Returns text, image and resource blocks.",
             [](const Value&, ToolContext&) {
               Value content = Value::array();
               content.push_back({{"type", "text"}, {"text", "Multiple content types test:"}});
               content.push_back(
                   {{"type", "image"}, {"data", kRedPixelPng}, {"mimeType", "image/png"}});
               content.push_back({{"type", "resource"},
                                  {"resource",
                                   {{"uri", "test://mixed-content-resource"},
                                    {"mimeType", "application/json"},
                                    {"text", R"({"test":"data","value":123})"}}}});
               return ToolOutcome{{{"content", std::move(content)}}, {}};
             });
  AddFixture(server, "test_error_handling", "Always fails with a tool error.",
             [](const Value&, ToolContext&) {
               return ToolError("This tool intentionally returns an error for testing");
             });
  AddFixture(server, "test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.",
             [](const Value&, ToolContext& context) {
               for (int step = 0; step <= 2; ++step) {
                 if (step > 0 && !context.SleepFor(std::chrono::milliseconds(50))) {
                   return ToolError("cancelled");
                 }
                 context.Progress(step * 50.0, 100.0);
               }
               return Text("Progress test completed.");
             });
  AddFixture(server, "test_tool_with_logging", "Sends three info log messages.",
             [](const Value&, ToolContext& context) {
               const char* messages[] = {"Tool execution started", "Tool processing data",
                                         "Tool execution completed"};
               for (int i = 0; i < 3; ++i) {
                 if (i > 0 && !context.SleepFor(std::chrono::milliseconds(50))) {
                   return ToolError("cancelled");
                 }
                 context.Log("info", messages[i]);
               }
               return Text("Logging test completed.");
             });
  AddModernFixtures(server);
  AddInputRequiredFixtures(server);
  Value schema = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"type", "object"},
      {"$defs",
       {{"address",
         {{"$anchor", "addressDef"},
          {"type", "object"},
          {"properties", {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"address", {{"$ref", "#/$defs/address"}}},
        {"contactMethod", {{"type", "string"}, {"enum", {"phone", "email"}}}},
        {"phone", {{"type", "string"}}},
        {"email", {{"type", "string"}}}}},
      {"allOf",
       Value::array({{{"anyOf", Value::array({{{"required", {"phone"}}},
                                              {{"required", {"email"}}}})}}})},
      {"if",
       {{"properties", {{"contactMethod", {{"const", "phone"}}}}},
        {"required", {"contactMethod"}}}},
      {"then", {{"required", {"phone"}}}},
      {"else", {{"required", {"email"}}}},
      {"additionalProperties", false}};
  AddFixture(server, "json_schema_2020_12_tool",
             "Accepts input described by a JSON Schema 2020-12 document.",
             [](const Value& arguments, ToolContext&) { return Text(arguments.dump()); },
             std::move(schema));
}

// Generated tools in four shapes, named synthetic_00000 onward.
void AddSyntheticTools(mcp::Server& server, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "synthetic_%05zu", i);
    Value properties;
    Value required = Value::array();
    switch (i % 4) {
      case 0:
        properties = {{"text", {{"type", "string"}, {"maxLength", 100 + i % 50}}}};
        required.push_back("text");
        break;
      case 1:
        properties = {{"amount", {{"type", "number"}, {"minimum", 0}, {"maximum", 1000 + i}}}};
        required.push_back("amount");
        break;
      case 2:
        properties = {{"mode", {{"type", "string"}, {"enum", {"fast", "balanced", "exact"}}}},
                      {"flag", {{"type", "boolean"}}}};
        break;
      default:
        properties = {{"items", {{"type", "array"}, {"items", {{"type", "integer"}}}, {"maxItems", 10}}},
                      {"options",
                       {{"type", "object"},
                        {"properties", {{"depth", {{"type", "integer"}, {"minimum", 1}}}}}}}};
        required.push_back("items");
        break;
    }
    Value tool = {{"name", name},
                  {"description", "Generated tool number " + std::to_string(i) + " for scale tests."},
                  {"inputSchema",
                   {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}}},
                  {"outputSchema",
                   {{"type", "object"},
                    {"properties", {{"tool", {{"type", "string"}}}, {"index", {{"type", "integer"}}}}},
                    {"required", {"tool", "index"}}}},
                  {"annotations", Annotations(true, false, true, false)}};
    server.AddTool(std::move(tool), [tool_name = std::string(name), i](const Value&, ToolContext&) {
      return Structured({{"tool", tool_name}, {"index", i}});
    });
  }
}

}  // namespace

void RegisterTools(mcp::Server& server, const CatalogOptions& options) {
  AddRenderTurntable(server);
  AddAnalyzeText(server);
  AddConvertUnits(server);
  AddSummarize(server);
  AddSlowCount(server);
  AddAsyncRender(server);
  AddAppendLedger(server, options);
  if (options.conformance_fixtures) AddConformanceFixtures(server);
  AddSyntheticTools(server, options.synthetic_tools);
}

}  // namespace udon::demo
