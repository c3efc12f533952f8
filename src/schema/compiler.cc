// Compilation: index every schema resource ($id, $anchor, $dynamicAnchor), then turn each
// reachable schema object into a Node with its $ref targets resolved.
#include "schema/internal/compiler.h"
#include "json/pointer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

#include "schema/internal/metaschemas.h"
#include "schema/internal/uri.h"

namespace udon::schema::internal {
namespace {

constexpr std::string_view k202012Uri = "https://json-schema.org/draft/2020-12/schema";
constexpr std::string_view kDraft07Uri = "http://json-schema.org/draft-07/schema";
constexpr std::string_view kVocabPrefix = "https://json-schema.org/draft/2020-12/vocab/";
constexpr std::size_t kMaxMetaSchemaChain = 8;

Error Invalid(std::string message, const std::string& pointer) {
  return MakeError("schema.invalid", std::move(message), pointer);
}

// Appends a keyword of `kind` to the node and returns it for the caller to fill in.
Keyword& AddKeyword(Node* node, KeywordKind kind, std::string_view name, std::uint8_t applies_to) {
  Keyword keyword;
  keyword.kind = kind;
  keyword.name = std::string(name);
  keyword.applies_to = applies_to;
  node->keywords.push_back(std::move(keyword));
  return node->keywords.back();
}

std::string StripEmptyFragment(std::string_view uri) {
  if (!uri.empty() && uri.back() == '#') uri.remove_suffix(1);
  return std::string(uri);
}

// Resolves an RFC 6901 pointer (already percent-decoded) within document.
const json::Value* ResolvePointer(const json::Value& document, std::string_view pointer) {
  const json::Value* current = &document;
  if (pointer.empty()) return current;
  if (pointer[0] != '/') return nullptr;
  std::size_t at = 1;
  while (true) {
    std::size_t end = pointer.find('/', at);
    if (end == std::string_view::npos) end = pointer.size();
    std::string token;
    for (std::size_t i = at; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (pointer[i] == '~') {
        return nullptr;
      } else {
        token += pointer[i];
      }
    }
    if (current->is_object()) {
      auto it = current->find(token);
      if (it == current->end()) return nullptr;
      current = &*it;
    } else if (current->is_array()) {
      if (token.empty() || token.size() > 18 ||
          token.find_first_not_of("0123456789") != std::string::npos ||
          (token.size() > 1 && token[0] == '0')) {
        return nullptr;
      }
      std::size_t index = std::stoull(token);
      if (index >= current->size()) return nullptr;
      current = &(*current)[index];
    } else {
      return nullptr;
    }
    if (end == pointer.size()) return current;
    at = end + 1;
  }
}

bool IsNonNegativeInteger(const json::Value& v, std::uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    if (v.get<std::int64_t>() < 0) return false;
    *out = static_cast<std::uint64_t>(v.get<std::int64_t>());
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!(d >= 0) || std::trunc(d) != d) return false;
    *out = d >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(d);
    return true;
  }
  return false;
}

// The subschema keywords of each dialect, by shape.
struct SubschemaKeywords {
  std::vector<std::string_view> single;
  std::vector<std::string_view> map;
  std::vector<std::string_view> array;
};

const SubschemaKeywords& SubschemasOf(bool draft07) {
  static const SubschemaKeywords k2020 = {
      {"additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else",
       "unevaluatedItems", "unevaluatedProperties", "contentSchema"},
      {"$defs", "properties", "patternProperties", "dependentSchemas", "dependencies"},
      {"allOf", "anyOf", "oneOf", "prefixItems"}};
  static const SubschemaKeywords k07 = {
      {"additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if",
       "then", "else", "items"},
      {"definitions", "properties", "patternProperties", "dependencies"},
      {"allOf", "anyOf", "oneOf", "items"}};
  return draft07 ? k07 : k2020;
}

}  // namespace

const std::vector<std::pair<std::string, std::shared_ptr<const json::Value>>>& BundledMetaSchemas() {
  static const auto* documents = [] {
    auto* list = new std::vector<std::pair<std::string, std::shared_ptr<const json::Value>>>();
    for (std::size_t i = 0; i < kMetaSchemaCount; ++i) {
      auto parsed = json::Parse(kMetaSchemaTexts[i]);
      // The texts are fixed at build time; the unit tests parse each one.
      if (!parsed.ok()) continue;
      std::string id = StripEmptyFragment(parsed.value().value("$id", std::string()));
      list->emplace_back(id, std::make_shared<const json::Value>(std::move(parsed).value()));
    }
    return list;
  }();
  return *documents;
}

}  // namespace udon::schema::internal

namespace udon::schema {

KeywordValue KeywordValueOf(std::string_view name) {
  using internal::SubschemasOf;
  auto among = [name](const std::vector<std::string_view>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (bool draft07 : {false, true}) {
    const internal::SubschemaKeywords& keywords = SubschemasOf(draft07);
    if (among(keywords.map)) return KeywordValue::kSchemaMap;
    if (among(keywords.array) && !among(keywords.single)) return KeywordValue::kSchemaArray;
  }
  if (among(SubschemasOf(false).single) || among(SubschemasOf(true).single)) return KeywordValue::kSchema;
  if (name == "dependentRequired") return KeywordValue::kNameMap;
  // The keyword list is the bundled meta-schemas' own: each names its keywords as properties.
  static const std::set<std::string, std::less<>> kKeywords = [] {
    std::set<std::string, std::less<>> keywords;
    for (const auto& [id, document] : internal::BundledMetaSchemas()) {
      auto properties = document->find("properties");
      if (properties == document->end() || !properties->is_object()) continue;
      for (const auto& [keyword, schema] : properties->items()) keywords.insert(keyword);
    }
    return keywords;
  }();
  return kKeywords.count(name) != 0 ? KeywordValue::kValue : KeywordValue::kNone;
}

}  // namespace udon::schema

namespace udon::schema::internal {

Compiler::Compiler(const CompileOptions& options, Graph* graph)
    : options_(options), graph_(graph) {
  limits_.max_pattern_bytes = options.max_pattern_bytes;
  limits_.match_limit = options.regex_match_limit;
}

Result<const Node*> Compiler::CompileRoot(std::shared_ptr<const json::Value> schema) {
  Dialect dialect;
  UDON_ASSIGN_OR_RETURN(dialect, DialectForUri(options_.default_dialect, 0));
  UDON_RETURN_IF_ERROR(LoadDocument(std::move(schema), StripEmptyFragment(options_.base_uri),
                                    dialect));
  Resource* root = resources_.at(StripEmptyFragment(options_.base_uri));
  UDON_ASSIGN_OR_RETURN(Node * node, CompileNode(*root->root, 0));
  UDON_RETURN_IF_ERROR(CompileDynamicAnchors());
  return static_cast<const Node*>(node);
}

Result<Dialect> Compiler::DialectForUri(std::string_view uri_text, std::size_t chain) {
  std::string uri = StripEmptyFragment(uri_text);
  Dialect dialect;
  if (uri == k202012Uri) return dialect;
  if (uri == kDraft07Uri) {
    dialect.draft07 = true;
    return dialect;
  }
  const json::Value* meta = chain < kMaxMetaSchemaChain ? FindDocument(uri) : nullptr;
  if (meta == nullptr || !meta->is_object()) {
    return MakeError("input.unsupported_dialect",
                     "$schema names a dialect other than JSON Schema 2020-12 or draft-07",
                     "/$schema");
  }
  auto schema_it = meta->find("$schema");
  if (schema_it == meta->end() || !schema_it->is_string() ||
      StripEmptyFragment(schema_it->get<std::string>()) == uri) {
    return MakeError("input.unsupported_dialect",
                     "a custom meta-schema must build on JSON Schema 2020-12 or draft-07",
                     "/$schema");
  }
  UDON_ASSIGN_OR_RETURN(dialect, DialectForUri(schema_it->get<std::string>(), chain + 1));
  auto vocabulary = meta->find("$vocabulary");
  if (dialect.draft07 || vocabulary == meta->end() || !vocabulary->is_object()) return dialect;
  dialect.applicator = dialect.unevaluated = dialect.validation = false;
  for (const auto& [vocab, required] : vocabulary->items()) {
    std::string_view name = vocab;
    bool known = name.rfind(kVocabPrefix, 0) == 0;
    name.remove_prefix(known ? kVocabPrefix.size() : 0);
    if (known && name == "applicator") {
      dialect.applicator = true;
    } else if (known && name == "unevaluated") {
      dialect.unevaluated = true;
    } else if (known && name == "validation") {
      dialect.validation = true;
    } else if (known && name == "format-assertion") {
      dialect.format_assertion = true;
    } else if (!(known && (name == "core" || name == "meta-data" || name == "content" ||
                           name == "format-annotation")) &&
               required.is_boolean() && required.get<bool>()) {
      return MakeError("input.unsupported_dialect",
                       "the meta-schema requires a vocabulary the validator lacks", "/$schema");
    }
  }
  return dialect;
}

const json::Value* Compiler::FindDocument(const std::string& uri) {
  for (const auto& [id, document] : BundledMetaSchemas()) {
    if (id == uri) return document.get();
  }
  if (options_.registry != nullptr) return options_.registry->Find(uri);
  return nullptr;
}

std::shared_ptr<const json::Value> Compiler::FindDocumentShared(const std::string& uri) {
  for (const auto& [id, document] : BundledMetaSchemas()) {
    if (id == uri) return document;
  }
  if (options_.registry != nullptr) {
    auto it = options_.registry->documents_.find(uri);
    if (it != options_.registry->documents_.end()) return it->second;
  }
  return nullptr;
}

Status Compiler::LoadDocument(std::shared_ptr<const json::Value> document, const std::string& uri,
                              const Dialect& inherited) {
  graph_->documents.push_back(document);
  const json::Value& root = *document;
  Dialect dialect = inherited;
  if (root.is_object()) {
    auto schema_it = root.find("$schema");
    if (schema_it != root.end()) {
      if (!schema_it->is_string()) return Invalid("$schema must be a string", "/$schema");
      UDON_ASSIGN_OR_RETURN(dialect, DialectForUri(schema_it->get<std::string>(), 0));
    }
  } else if (!root.is_boolean()) {
    return Invalid("a schema must be an object or a boolean", "");
  }
  Resource* resource = NewResource(uri, &root, dialect, "");
  return Index(root, resource, "", "", 0, true);
}

Resource* Compiler::NewResource(const std::string& uri, const json::Value* root,
                                const Dialect& dialect, const std::string& document_pointer) {
  auto resource = std::make_unique<Resource>();
  resource->uri = uri;
  resource->root = root;
  resource->dialect = dialect;
  resource->document_pointer = document_pointer;
  graph_->resources.push_back(std::make_unique<ResourceNodes>());
  resource->nodes = graph_->resources.back().get();
  Resource* raw = resource.get();
  resource_store_.push_back(std::move(resource));
  resources_.emplace(uri, raw);
  return raw;
}

Status Compiler::Index(const json::Value& value, Resource* resource, const std::string& pointer,
                       const std::string& document_pointer, std::size_t depth, bool document_root) {
  if (depth > options_.max_depth) {
    return MakeError("schema.limit_exceeded", "the schema is nested too deeply", document_pointer);
  }
  if (!value.is_object()) {
    if (value.is_boolean()) locations_.emplace(&value, Location{resource, pointer, document_pointer});
    return OkStatus();
  }
  std::string local_pointer = pointer;
  bool draft07 = resource->dialect.draft07;
  auto id_it = value.find("$id");
  if (id_it != value.end() && !(draft07 && value.contains("$ref"))) {
    if (!id_it->is_string()) return Invalid("$id must be a string", document_pointer + "/$id");
    std::string resolved = ResolveUri(resource->uri, id_it->get<std::string>());
    std::string uri, fragment;
    SplitFragment(resolved, &uri, &fragment);
    if (uri != resource->uri) {
      if (document_root) {
        resource->uri = uri;
        resources_.emplace(uri, resource);
      } else {
        Dialect dialect = resource->dialect;
        auto schema_it = value.find("$schema");
        if (schema_it != value.end() && schema_it->is_string()) {
          UDON_ASSIGN_OR_RETURN(dialect, DialectForUri(schema_it->get<std::string>(), 0));
        }
        resource = NewResource(uri, &value, dialect, document_pointer);
        draft07 = dialect.draft07;
      }
      local_pointer.clear();
    }
    if (!fragment.empty() && draft07) resource->anchors[fragment] = &value;
  }
  if (!draft07) {
    for (const char* keyword : {"$anchor", "$dynamicAnchor"}) {
      auto it = value.find(keyword);
      if (it == value.end()) continue;
      if (!it->is_string()) return Invalid("an anchor must be a string", document_pointer);
      resource->anchors[it->get<std::string>()] = &value;
      if (keyword[1] == 'd') resource->dynamic_anchors[it->get<std::string>()] = &value;
    }
  }
  locations_.emplace(&value, Location{resource, local_pointer, document_pointer});
  const SubschemaKeywords& keywords = SubschemasOf(draft07);
  for (std::string_view keyword : keywords.single) {
    auto it = value.find(keyword);
    if (it == value.end() || !(it->is_object() || it->is_boolean())) continue;
    std::string token = "/" + std::string(keyword);
    UDON_RETURN_IF_ERROR(Index(*it, resource, local_pointer + token, document_pointer + token,
                               depth + 1, false));
  }
  for (std::string_view keyword : keywords.map) {
    auto it = value.find(keyword);
    if (it == value.end() || !it->is_object()) continue;
    for (const auto& [name, child] : it->items()) {
      std::string token = "/" + std::string(keyword) + "/" + json::Pointer::EscapeToken(name);
      UDON_RETURN_IF_ERROR(Index(child, resource, local_pointer + token,
                                 document_pointer + token, depth + 1, false));
    }
  }
  for (std::string_view keyword : keywords.array) {
    auto it = value.find(keyword);
    if (it == value.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < it->size(); ++i) {
      std::string token = "/" + std::string(keyword) + "/" + std::to_string(i);
      UDON_RETURN_IF_ERROR(Index((*it)[i], resource, local_pointer + token,
                                 document_pointer + token, depth + 1, false));
    }
  }
  return OkStatus();
}

Result<Resource*> Compiler::FindResource(const std::string& uri, const Dialect& inherited) {
  auto it = resources_.find(uri);
  if (it != resources_.end()) return it->second;
  std::shared_ptr<const json::Value> document = FindDocumentShared(uri);
  if (document == nullptr) return static_cast<Resource*>(nullptr);
  UDON_RETURN_IF_ERROR(LoadDocument(std::move(document), uri, inherited));
  it = resources_.find(uri);
  return it == resources_.end() ? nullptr : it->second;
}

Result<const json::Value*> Compiler::ResolveReference(const Location& from,
                                                      const std::string& reference,
                                                      const std::string& error_pointer,
                                                      std::string* fragment_out) {
  std::string target = ResolveUri(from.resource->uri, reference);
  std::string uri, raw_fragment, fragment;
  SplitFragment(target, &uri, &raw_fragment);
  Error unresolved = MakeError("schema.unresolved_ref",
                               "a reference does not resolve within the schema, the bundled "
                               "meta-schemas or the registry",
                               error_pointer);
  if (!PercentDecode(raw_fragment, &fragment)) return unresolved;
  UDON_ASSIGN_OR_RETURN(Resource * resource, FindResource(uri, from.resource->dialect));
  if (resource == nullptr) return unresolved;
  const json::Value* value = nullptr;
  if (fragment.empty() || fragment[0] == '/') {
    value = ResolvePointer(*resource->root, fragment);
    if (value != nullptr && !locations_.contains(value)) {
      locations_.emplace(value, Location{resource, fragment, resource->document_pointer + fragment});
    }
  } else {
    auto anchor = resource->anchors.find(fragment);
    if (anchor != resource->anchors.end()) value = anchor->second;
  }
  if (value == nullptr) return unresolved;
  if (!value->is_object() && !value->is_boolean()) {
    return Invalid("a reference points at a value that is not a schema", error_pointer);
  }
  *fragment_out = fragment;
  return value;
}

Status Compiler::CompileDynamicAnchors() {
  if (!graph_->uses_dynamic_scope) return OkStatus();
  // Every resource may enter the dynamic scope, so each $dynamicAnchor needs a node.
  // Compiling one can load further documents, hence the index loop.
  for (std::size_t i = 0; i < resource_store_.size(); ++i) {
    Resource* resource = resource_store_[i].get();
    for (const auto& [name, value] : resource->dynamic_anchors) {
      UDON_ASSIGN_OR_RETURN(Node * node, CompileNode(*value, 0));
      resource->nodes->dynamic_anchors.emplace(name, node);
    }
  }
  return OkStatus();
}

Result<Node*> Compiler::CompileNode(const json::Value& value, std::size_t depth) {
  auto found = compiled_.find(&value);
  if (found != compiled_.end()) return found->second;
  if (depth > options_.max_depth) {
    return MakeError("schema.limit_exceeded", "the schema is nested too deeply");
  }
  auto location_it = locations_.find(&value);
  if (location_it == locations_.end()) {
    return Invalid("a subschema is not reachable through a schema keyword", "");
  }
  const Location location = location_it->second;
  graph_->nodes.push_back(std::make_unique<Node>());
  Node* node = graph_->nodes.back().get();
  compiled_.emplace(&value, node);
  node->resource = location.resource->nodes;
  node->location = location.resource->uri + "#" + location.pointer;
  if (value.is_boolean()) {
    node->trivial = value.get<bool>() ? Node::Trivial::kTrue : Node::Trivial::kFalse;
    return node;
  }
  if (!value.is_object()) {
    return Invalid("a schema must be an object or a boolean", location.document_pointer);
  }
  UDON_RETURN_IF_ERROR(CompileKeywords(value, location, node, depth));
  if (node->keywords.empty() && node->type_mask == 0) node->trivial = Node::Trivial::kTrue;
  FuseRequiredIntoProperties(node);
  node->leaf = node->trivial == Node::Trivial::kNone &&
               std::all_of(node->keywords.begin(), node->keywords.end(), [](const Keyword& k) {
    return k.kind < KeywordKind::kContains || k.kind == KeywordKind::kMinProperties ||
           k.kind == KeywordKind::kMaxProperties || k.kind == KeywordKind::kRequired ||
           k.kind == KeywordKind::kDependentRequired;
  });
  return node;
}

void Compiler::FuseRequiredIntoProperties(Node* node) {
  Keyword* properties = nullptr;
  Keyword* required = nullptr;
  for (Keyword& keyword : node->keywords) {
    if (keyword.kind == KeywordKind::kProperties) properties = &keyword;
    if (keyword.kind == KeywordKind::kRequired) required = &keyword;
  }
  if (properties == nullptr || required == nullptr) return;
  std::vector<NamedNode*> covered;
  for (const std::string& name : required->strings) {
    auto it = std::find_if(properties->named.begin(), properties->named.end(),
                           [&](const NamedNode& named) { return named.name == name; });
    if (it == properties->named.end()) return;
    covered.push_back(&*it);
  }
  for (NamedNode* named : covered) named->required = true;
  properties->count = covered.size();
  required->flag = true;
}

Result<const Node*> Compiler::Child(const json::Value& object, std::string_view keyword,
                                    const Location& location, std::size_t depth) {
  const json::Value& child = object.at(std::string(keyword));
  if (!child.is_object() && !child.is_boolean()) {
    return Invalid("the keyword's value must be a schema",
                   location.document_pointer + "/" + std::string(keyword));
  }
  UDON_ASSIGN_OR_RETURN(Node * node, CompileNode(child, depth + 1));
  return static_cast<const Node*>(node);
}

Status Compiler::CompileKeywords(const json::Value& object, const Location& location, Node* node,
                                 std::size_t depth) {
  const Dialect& dialect = location.resource->dialect;
  const std::string& at = location.document_pointer;
  auto has = [&](std::string_view keyword) { return object.contains(keyword); };
  auto get = [&](std::string_view keyword) -> const json::Value& {
    return object.at(std::string(keyword));
  };
  auto add = [node](KeywordKind kind, std::string_view name, std::uint8_t applies_to) -> Keyword& {
    return AddKeyword(node, kind, name, applies_to);
  };

  if (has("$ref")) {
    const json::Value& ref = get("$ref");
    if (!ref.is_string()) return Invalid("$ref must be a string", at + "/$ref");
    std::string fragment;
    UDON_ASSIGN_OR_RETURN(const json::Value* target,
                          ResolveReference(location, ref.get<std::string>(), at + "/$ref",
                                           &fragment));
    UDON_ASSIGN_OR_RETURN(Node * target_node, CompileNode(*target, depth + 1));
    add(KeywordKind::kRef, "$ref", 0).sub = target_node;
    if (dialect.draft07) return OkStatus();  // draft-07 ignores every sibling of $ref
  }
  if (!dialect.draft07 && has("$dynamicRef")) {
    const json::Value& ref = get("$dynamicRef");
    if (!ref.is_string()) return Invalid("$dynamicRef must be a string", at + "/$dynamicRef");
    std::string fragment;
    UDON_ASSIGN_OR_RETURN(const json::Value* target,
                          ResolveReference(location, ref.get<std::string>(),
                                           at + "/$dynamicRef", &fragment));
    UDON_ASSIGN_OR_RETURN(Node * target_node, CompileNode(*target, depth + 1));
    Keyword& keyword = add(KeywordKind::kDynamicRef, "$dynamicRef", 0);
    keyword.sub = target_node;
    // Only a reference whose static target bears the same $dynamicAnchor is dynamic.
    if (!fragment.empty() && fragment[0] != '/' && target->is_object()) {
      auto anchor = target->find("$dynamicAnchor");
      if (anchor != target->end() && anchor->is_string() &&
          anchor->get<std::string>() == fragment) {
        keyword.dynamic_name = fragment;
        graph_->uses_dynamic_scope = true;
      }
    }
  }

  if (dialect.validation) UDON_RETURN_IF_ERROR(CompileValidation(object, location, node));
  bool format_assertion = options_.format_assertion || dialect.format_assertion;
  if (format_assertion && has("format")) {
    if (!get("format").is_string()) return Invalid("format must be a string", at + "/format");
    FormatCheck check = FindFormatCheck(get("format").get<std::string>());
    if (check != nullptr) {
      Keyword& keyword = add(KeywordKind::kFormat, "format", kString);
      keyword.format = check;
      keyword.format_name = get("format").get<std::string>();
    }
  }
  if (dialect.applicator || dialect.draft07) {
    UDON_RETURN_IF_ERROR(CompileApplicators(object, location, node, depth));
  }
  if (!dialect.draft07 && dialect.unevaluated) {
    if (has("unevaluatedItems")) {
      UDON_ASSIGN_OR_RETURN(const Node* sub, Child(object, "unevaluatedItems", location, depth));
      add(KeywordKind::kUnevaluatedItems, "unevaluatedItems", kArray).sub = sub;
      node->collects_items = true;
    }
    if (has("unevaluatedProperties")) {
      UDON_ASSIGN_OR_RETURN(const Node* sub,
                            Child(object, "unevaluatedProperties", location, depth));
      add(KeywordKind::kUnevaluatedProperties, "unevaluatedProperties", kObject).sub = sub;
      node->collects_properties = true;
    }
  }
  return OkStatus();
}

Status Compiler::CompileValidation(const json::Value& object, const Location& location,
                                   Node* node) {
  const std::string& at = location.document_pointer;
  auto add = [node](KeywordKind kind, std::string_view name, std::uint8_t applies_to) -> Keyword& {
    return AddKeyword(node, kind, name, applies_to);
  };
  auto it = object.find("type");
  if (it != object.end()) {
    static const std::pair<std::string_view, std::uint8_t> kTypes[] = {
        {"null", kNull},     {"boolean", kBoolean}, {"object", kObject},  {"array", kArray},
        {"number", kNumber}, {"string", kString},   {"integer", kInteger}};
    auto bit_of = [&](const json::Value& name) -> std::uint8_t {
      if (!name.is_string()) return 0;
      for (const auto& [type_name, bit] : kTypes) {
        if (name.get<std::string>() == type_name) return bit;
      }
      return 0;
    };
    std::uint8_t mask = 0;
    if (it->is_array()) {
      for (const auto& name : *it) {
        std::uint8_t bit = bit_of(name);
        if (bit == 0) return Invalid("type names an unknown type", at + "/type");
        mask |= bit;
      }
      if (it->empty()) return Invalid("type must not be an empty array", at + "/type");
    } else {
      mask = bit_of(*it);
      if (mask == 0) return Invalid("type names an unknown type", at + "/type");
    }
    node->type_mask = mask;
  }
  if ((it = object.find("const")) != object.end()) {
    add(KeywordKind::kConst, "const", 0).value = *it;
  }
  if ((it = object.find("enum")) != object.end()) {
    if (!it->is_array()) return Invalid("enum must be an array", at + "/enum");
    Keyword& keyword = add(KeywordKind::kEnum, "enum", 0);
    keyword.value = *it;
    // An all-string enum (the common case in tool schemas) is a sorted string table.
    keyword.flag = std::all_of(it->begin(), it->end(), [](const json::Value& v) { return v.is_string(); });
    if (keyword.flag) {
      for (const auto& option : *it) keyword.strings.push_back(option.get<std::string>());
      std::sort(keyword.strings.begin(), keyword.strings.end());
    }
  }
  struct Count {
    const char* name;
    KeywordKind kind;
    std::uint8_t applies_to;
  };
  static const Count kCounts[] = {
      {"minItems", KeywordKind::kMinItems, kArray},
      {"maxItems", KeywordKind::kMaxItems, kArray},
      {"minProperties", KeywordKind::kMinProperties, kObject},
      {"maxProperties", KeywordKind::kMaxProperties, kObject},
  };
  bool has_min_length = object.contains("minLength");
  bool has_max_length = object.contains("maxLength");
  if (has_min_length || has_max_length) {
    std::uint64_t min_length = 0, max_length = 0;
    if ((has_min_length && !IsNonNegativeInteger(object.at("minLength"), &min_length)) ||
        (has_max_length && !IsNonNegativeInteger(object.at("maxLength"), &max_length))) {
      return Invalid("the keyword's value must be a non-negative integer",
                     at + (has_min_length && !IsNonNegativeInteger(object.at("minLength"),
                                                                   &min_length)
                               ? "/minLength"
                               : "/maxLength"));
    }
    Keyword& keyword = add(KeywordKind::kLength, "minLength", kString);
    keyword.count = min_length;
    keyword.has_max = has_max_length;
    keyword.max_count = max_length;
  }
  for (const Count& count : kCounts) {
    if ((it = object.find(count.name)) == object.end()) continue;
    std::uint64_t limit = 0;
    if (!IsNonNegativeInteger(*it, &limit)) {
      return Invalid("the keyword's value must be a non-negative integer",
                     at + "/" + count.name);
    }
    add(count.kind, count.name, count.applies_to).count = limit;
  }
  struct Limit {
    const char* name;
    KeywordKind kind;
  };
  static const Limit kLimits[] = {
      {"minimum", KeywordKind::kMinimum},
      {"maximum", KeywordKind::kMaximum},
      {"exclusiveMinimum", KeywordKind::kExclusiveMinimum},
      {"exclusiveMaximum", KeywordKind::kExclusiveMaximum},
      {"multipleOf", KeywordKind::kMultipleOf},
  };
  for (const Limit& limit : kLimits) {
    if ((it = object.find(limit.name)) == object.end()) continue;
    if (!it->is_number()) {
      return Invalid("the keyword's value must be a number", at + "/" + limit.name);
    }
    Keyword& keyword = add(limit.kind, limit.name, kNumber);
    keyword.number = it->get<double>();
    keyword.is_integer = it->is_number_integer() && !it->is_number_unsigned();
    if (keyword.is_integer) keyword.integer = it->get<std::int64_t>();
    if (limit.kind == KeywordKind::kMultipleOf && !(keyword.number > 0)) {
      return Invalid("multipleOf must be greater than 0", at + "/multipleOf");
    }
  }
  if ((it = object.find("pattern")) != object.end()) {
    if (!it->is_string()) return Invalid("pattern must be a string", at + "/pattern");
    UDON_ASSIGN_OR_RETURN(auto regex, CompileRegex(it->get<std::string>(), at + "/pattern"));
    add(KeywordKind::kPattern, "pattern", kString).regex = std::move(regex);
  }
  if ((it = object.find("uniqueItems")) != object.end()) {
    if (!it->is_boolean()) return Invalid("uniqueItems must be a boolean", at + "/uniqueItems");
    if (it->get<bool>()) add(KeywordKind::kUniqueItems, "uniqueItems", kArray).flag = true;
  }
  if ((it = object.find("required")) != object.end()) {
    UDON_ASSIGN_OR_RETURN(auto names, StringArray(*it, at + "/required"));
    add(KeywordKind::kRequired, "required", kObject).strings = std::move(names);
  }
  if (!location.resource->dialect.draft07 &&
      (it = object.find("dependentRequired")) != object.end()) {
    if (!it->is_object()) {
      return Invalid("dependentRequired must be an object", at + "/dependentRequired");
    }
    Keyword& keyword = add(KeywordKind::kDependentRequired, "dependentRequired", kObject);
    for (const auto& [name, list] : it->items()) {
      UDON_ASSIGN_OR_RETURN(auto names,
                            StringArray(list, at + "/dependentRequired/" + json::Pointer::EscapeToken(name)));
      keyword.dependencies.emplace_back(name, std::move(names));
    }
  }
  return OkStatus();
}

Result<std::vector<std::string>> Compiler::StringArray(const json::Value& value,
                                                       const std::string& pointer) {
  if (!value.is_array()) return Invalid("the keyword's value must be an array of strings", pointer);
  std::vector<std::string> names;
  for (const auto& name : value) {
    if (!name.is_string()) {
      return Invalid("the keyword's value must be an array of strings", pointer);
    }
    names.push_back(name.get<std::string>());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::shared_ptr<const Regex>> Compiler::CompileRegex(const std::string& pattern,
                                                            const std::string& pointer) {
  auto cached = regexes_.find(pattern);
  if (cached != regexes_.end()) return cached->second;
  bool too_long = false;
  std::shared_ptr<const Regex> regex = Regex::Compile(pattern, limits_, &too_long);
  if (too_long) {
    return MakeError("schema.limit_exceeded", "a pattern is longer than the limit", pointer);
  }
  if (regex == nullptr) {
    return Invalid("a pattern is not a valid ECMA-262 regular expression", pointer);
  }
  regexes_.emplace(pattern, regex);
  return regex;
}

Status Compiler::CompileApplicators(const json::Value& object, const Location& location,
                                    Node* node, std::size_t depth) {
  const bool draft07 = location.resource->dialect.draft07;
  const std::string& at = location.document_pointer;
  auto add = [node](KeywordKind kind, std::string_view name, std::uint8_t applies_to) -> Keyword& {
    return AddKeyword(node, kind, name, applies_to);
  };
  auto schema_map = [&](std::string_view keyword, std::vector<NamedNode>* out) -> Status {
    const json::Value& map = object.at(std::string(keyword));
    if (!map.is_object()) {
      return Invalid("the keyword's value must be an object", at + "/" + std::string(keyword));
    }
    for (const auto& [name, child] : map.items()) {
      if (!child.is_object() && !child.is_boolean()) {
        return Invalid("the keyword's values must be schemas",
                       at + "/" + std::string(keyword) + "/" + json::Pointer::EscapeToken(name));
      }
      UDON_ASSIGN_OR_RETURN(Node * child_node, CompileNode(child, depth + 1));
      out->push_back({name, child_node});
    }
    return OkStatus();
  };
  auto schema_array = [&](std::string_view keyword, std::vector<const Node*>* out) -> Status {
    const json::Value& list = object.at(std::string(keyword));
    if (!list.is_array() || list.empty()) {
      return Invalid("the keyword's value must be a non-empty array of schemas",
                     at + "/" + std::string(keyword));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object() && !list[i].is_boolean()) {
        return Invalid("the keyword's values must be schemas",
                       at + "/" + std::string(keyword) + "/" + std::to_string(i));
      }
      UDON_ASSIGN_OR_RETURN(Node * child_node, CompileNode(list[i], depth + 1));
      out->push_back(child_node);
    }
    return OkStatus();
  };

  // Object applicators.
  bool has_properties = object.contains("properties");
  bool has_patterns = object.contains("patternProperties");
  bool has_additional = object.contains("additionalProperties");
  if (has_properties || has_patterns || has_additional) {
    Keyword keyword;
    keyword.kind = KeywordKind::kProperties;
    keyword.applies_to = kObject;
    keyword.has_properties = has_properties;
    keyword.has_patterns = has_patterns;
    if (has_properties) UDON_RETURN_IF_ERROR(schema_map("properties", &keyword.named));
    if (has_patterns) {
      std::vector<NamedNode> patterns;
      UDON_RETURN_IF_ERROR(schema_map("patternProperties", &patterns));
      for (auto& pattern : patterns) {
        UDON_ASSIGN_OR_RETURN(auto regex,
                              CompileRegex(pattern.name, at + "/patternProperties/" +
                                                             json::Pointer::EscapeToken(pattern.name)));
        keyword.patterns.push_back({pattern.name, std::move(regex), pattern.node});
      }
    }
    if (has_additional) {
      UDON_ASSIGN_OR_RETURN(keyword.sub, Child(object, "additionalProperties", location, depth));
    }
    node->keywords.push_back(std::move(keyword));
  }
  if (object.contains("propertyNames")) {
    UDON_ASSIGN_OR_RETURN(const Node* sub, Child(object, "propertyNames", location, depth));
    add(KeywordKind::kPropertyNames, "propertyNames", kObject).sub = sub;
  }
  if (!draft07 && object.contains("dependentSchemas")) {
    Keyword& keyword = add(KeywordKind::kDependentSchemas, "dependentSchemas", kObject);
    UDON_RETURN_IF_ERROR(schema_map("dependentSchemas", &keyword.named));
  }
  // "dependencies" (draft-07; kept in 2020-12 for compatibility): arrays name required
  // properties, schemas apply to the whole object.
  auto dependencies = object.find("dependencies");
  if (dependencies != object.end()) {
    if (!dependencies->is_object()) {
      return Invalid("dependencies must be an object", at + "/dependencies");
    }
    Keyword required;
    required.kind = KeywordKind::kDependentRequired;
    required.name = "dependencies";
    required.applies_to = kObject;
    Keyword schemas = required;
    schemas.kind = KeywordKind::kDependentSchemas;
    for (const auto& [name, value] : dependencies->items()) {
      std::string pointer = at + "/dependencies/" + json::Pointer::EscapeToken(name);
      if (value.is_array()) {
        UDON_ASSIGN_OR_RETURN(auto names, StringArray(value, pointer));
        required.dependencies.emplace_back(name, std::move(names));
      } else if (value.is_object() || value.is_boolean()) {
        UDON_ASSIGN_OR_RETURN(Node * child, CompileNode(value, depth + 1));
        schemas.named.push_back({name, child});
      } else {
        return Invalid("a dependency must be an array of names or a schema", pointer);
      }
    }
    if (!required.dependencies.empty()) node->keywords.push_back(std::move(required));
    if (!schemas.named.empty()) node->keywords.push_back(std::move(schemas));
  }

  // Array applicators.
  Keyword items;
  items.kind = KeywordKind::kItems;
  items.applies_to = kArray;
  items.flag = draft07;
  bool has_items = false;
  if (draft07) {
    auto items_it = object.find("items");
    if (items_it != object.end() && items_it->is_array()) {
      UDON_RETURN_IF_ERROR(schema_array("items", &items.subs));
      if (object.contains("additionalItems")) {
        UDON_ASSIGN_OR_RETURN(items.sub, Child(object, "additionalItems", location, depth));
      }
      has_items = true;
    } else if (items_it != object.end()) {
      UDON_ASSIGN_OR_RETURN(items.sub, Child(object, "items", location, depth));
      has_items = true;
    }
  } else {
    if (object.contains("prefixItems")) {
      UDON_RETURN_IF_ERROR(schema_array("prefixItems", &items.subs));
      has_items = true;
    }
    if (object.contains("items")) {
      UDON_ASSIGN_OR_RETURN(items.sub, Child(object, "items", location, depth));
      has_items = true;
    }
  }
  if (has_items) node->keywords.push_back(std::move(items));
  if (object.contains("contains")) {
    Keyword& keyword = add(KeywordKind::kContains, "contains", kArray);
    UDON_ASSIGN_OR_RETURN(keyword.sub, Child(object, "contains", location, depth));
    keyword.count = 1;
    if (!draft07 && location.resource->dialect.validation) {
      auto min_it = object.find("minContains");
      if (min_it != object.end() && !IsNonNegativeInteger(*min_it, &keyword.count)) {
        return Invalid("minContains must be a non-negative integer", at + "/minContains");
      }
      auto max_it = object.find("maxContains");
      if (max_it != object.end()) {
        if (!IsNonNegativeInteger(*max_it, &keyword.max_count)) {
          return Invalid("maxContains must be a non-negative integer", at + "/maxContains");
        }
        keyword.has_max = true;
      }
    }
  }

  // In-place applicators.
  for (auto [name, kind] : {std::pair{"allOf", KeywordKind::kAllOf},
                            std::pair{"anyOf", KeywordKind::kAnyOf},
                            std::pair{"oneOf", KeywordKind::kOneOf}}) {
    if (!object.contains(name)) continue;
    Keyword& keyword = add(kind, name, 0);
    UDON_RETURN_IF_ERROR(schema_array(name, &keyword.subs));
  }
  if (object.contains("not")) {
    UDON_ASSIGN_OR_RETURN(const Node* sub, Child(object, "not", location, depth));
    add(KeywordKind::kNot, "not", 0).sub = sub;
  }
  if (object.contains("if")) {
    Keyword& keyword = add(KeywordKind::kIf, "if", 0);
    UDON_ASSIGN_OR_RETURN(keyword.sub, Child(object, "if", location, depth));
    if (object.contains("then")) {
      UDON_ASSIGN_OR_RETURN(keyword.then_node, Child(object, "then", location, depth));
    }
    if (object.contains("else")) {
      UDON_ASSIGN_OR_RETURN(keyword.else_node, Child(object, "else", location, depth));
    }
  }
  return OkStatus();
}

}  // namespace udon::schema::internal
