#include "schema/schema.h"

#include <memory>
#include <utility>

#include "json/document.h"
#include "schema/internal/compiler.h"
#include "schema/internal/graph.h"
#include "schema/internal/uri.h"
#include "schema/internal/validate.h"

namespace udon::schema {
namespace {

std::string WithoutEmptyFragment(std::string_view uri) {
  if (!uri.empty() && uri.back() == '#') uri.remove_suffix(1);
  return std::string(uri);
}

}  // namespace

Status Registry::Add(std::string_view uri, json::Value document) {
  internal::UriParts parts = internal::ParseUri(uri);
  if (!parts.scheme || (parts.fragment && !parts.fragment->empty())) {
    return MakeError("schema.invalid",
                     "a registry URI must be absolute and carry no fragment");
  }
  documents_[WithoutEmptyFragment(uri)] = std::make_shared<const json::Value>(std::move(document));
  return OkStatus();
}

const json::Value* Registry::Find(std::string_view uri) const {
  auto it = documents_.find(WithoutEmptyFragment(uri));
  return it == documents_.end() ? nullptr : it->second.get();
}

json::Value ValidationResult::ToBasicOutput() const {
  json::Value output = json::Value::object();
  output["valid"] = valid;
  if (!valid) {
    json::Value units = json::Value::array();
    for (const OutputUnit& unit : errors) {
      units.push_back({{"keywordLocation", unit.keyword_location},
                       {"absoluteKeywordLocation", unit.absolute_keyword_location},
                       {"instanceLocation", unit.instance_location},
                       {"error", unit.error}});
    }
    if (limit_error) {
      units.push_back({{"keywordLocation", ""},
                       {"instanceLocation", ""},
                       {"error", limit_error->message}});
    }
    output["errors"] = std::move(units);
  }
  return output;
}

Result<CompiledSchema> CompiledSchema::Compile(const json::Value& schema,
                                               const CompileOptions& options) {
  auto graph = std::make_shared<internal::Graph>();
  graph->format_assertion = options.format_assertion;
  graph->max_depth = options.max_depth;
  internal::Compiler compiler(options, graph.get());
  UDON_ASSIGN_OR_RETURN(graph->root,
                        compiler.CompileRoot(std::make_shared<const json::Value>(schema)));
  return CompiledSchema(std::move(graph));
}

namespace {

// Every error, on an instance of either view.
template <class View>
ValidationResult Collect(const internal::Graph& graph, View instance) {
  ValidationResult result;
  internal::Evaluator<View> evaluator(graph, &result);
  result.valid = evaluator.Run(instance);
  if (result.valid) result.errors.clear();
  return result;
}

// The verdict only, stopping at the first failure.
template <class View>
bool Check(const internal::Graph& graph, View instance) {
  internal::Evaluator<View> evaluator(graph, nullptr);
  return evaluator.Run(instance);
}

// One document per thread, reused from call to call so that validating text allocates
// nothing once its arrays have grown; after an unusually large text the memory is let go.
class ScratchDocument {
 public:
  explicit ScratchDocument(std::string_view text) : text_size_(text.size()) {
    if (Slot() == nullptr) Slot() = std::make_unique<json::Document>();
  }
  ~ScratchDocument() {
    if (text_size_ > kKeepBytes) Slot().reset();
  }
  ScratchDocument(const ScratchDocument&) = delete;
  ScratchDocument& operator=(const ScratchDocument&) = delete;
  json::Document& operator*() const { return *Slot(); }

 private:
  static constexpr std::size_t kKeepBytes = 1 << 20;
  static std::unique_ptr<json::Document>& Slot() {
    thread_local std::unique_ptr<json::Document> document;
    return document;
  }
  std::size_t text_size_;
};

// Runs `run` on text read into this thread's scratch document; json::Parse's error if it
// does not parse.
template <class Run>
auto OnText(std::string_view text, const json::ParseOptions& options, Run run)
    -> Result<decltype(run(std::declval<internal::DocumentView>()))> {
  ScratchDocument scratch(text);
  json::Document& document = *scratch;
  UDON_RETURN_IF_ERROR(document.Parse(text, options));
  return run(internal::DocumentView(document, document.root()));
}

}  // namespace

ValidationResult CompiledSchema::Validate(const json::Value& instance) const {
  return Collect(*graph_, internal::ValueView(instance));
}

bool CompiledSchema::IsValid(const json::Value& instance) const {
  return Check(*graph_, internal::ValueView(instance));
}

Result<ValidationResult> CompiledSchema::ValidateText(std::string_view text,
                                                      const json::ParseOptions& options) const {
  return OnText(text, options, [&](internal::DocumentView instance) { return Collect(*graph_, instance); });
}

Result<bool> CompiledSchema::IsValidText(std::string_view text,
                                         const json::ParseOptions& options) const {
  return OnText(text, options, [&](internal::DocumentView instance) { return Check(*graph_, instance); });
}

Result<ValidationResult> CheckAgainstMetaSchema(const json::Value& schema,
                                                const CompileOptions& options) {
  std::string dialect = options.default_dialect;
  if (schema.is_object() && schema.contains("$schema")) {
    if (!schema["$schema"].is_string()) {
      return MakeError("schema.invalid", "$schema must be a string", "/$schema");
    }
    dialect = schema["$schema"].get<std::string>();
  }
  std::string uri = WithoutEmptyFragment(dialect);
  const json::Value* meta = nullptr;
  for (const auto& [id, document] : internal::BundledMetaSchemas()) {
    if (id == uri) meta = document.get();
  }
  if (meta == nullptr && options.registry != nullptr) meta = options.registry->Find(uri);
  if (meta == nullptr) {
    return MakeError("input.unsupported_dialect",
                     "$schema names a dialect other than JSON Schema 2020-12 or draft-07",
                     "/$schema");
  }
  CompileOptions meta_options;
  meta_options.registry = options.registry;
  meta_options.base_uri = uri;
  UDON_ASSIGN_OR_RETURN(CompiledSchema compiled, CompiledSchema::Compile(*meta, meta_options));
  return compiled.Validate(schema);
}

}  // namespace udon::schema
