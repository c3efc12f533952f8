// The schema compiler (see schema.h): resource index, reference resolution, node building.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "schema/internal/graph.h"
#include "schema/schema.h"

namespace udon::schema::internal {

// Which keywords a schema resource's dialect and vocabularies switch on.
struct Dialect {
  bool draft07 = false;
  bool applicator = true;
  bool unevaluated = true;
  bool validation = true;
  bool format_assertion = false;  // the format-assertion vocabulary
};

struct Resource {
  std::string uri;  // absolute, without fragment
  const json::Value* root = nullptr;
  Dialect dialect;
  std::string document_pointer;  // where root lies in its document
  std::unordered_map<std::string, const json::Value*> anchors;
  std::unordered_map<std::string, const json::Value*> dynamic_anchors;
  ResourceNodes* nodes = nullptr;
};

// Where a schema object lies: its resource, its pointer within that resource and within
// its document.
struct Location {
  Resource* resource = nullptr;
  std::string pointer;
  std::string document_pointer;
};

// The bundled meta-schemas, parsed once: (URI without fragment, document).
const std::vector<std::pair<std::string, std::shared_ptr<const json::Value>>>& BundledMetaSchemas();

class Compiler {
 public:
  Compiler(const CompileOptions& options, Graph* graph);
  Result<const Node*> CompileRoot(std::shared_ptr<const json::Value> schema);

 private:
  Result<Dialect> DialectForUri(std::string_view uri, std::size_t chain);
  const json::Value* FindDocument(const std::string& uri);
  std::shared_ptr<const json::Value> FindDocumentShared(const std::string& uri);
  Status LoadDocument(std::shared_ptr<const json::Value> document, const std::string& uri,
                      const Dialect& inherited);
  Resource* NewResource(const std::string& uri, const json::Value* root, const Dialect& dialect,
                        const std::string& document_pointer);
  Status Index(const json::Value& value, Resource* resource, const std::string& pointer,
               const std::string& document_pointer, std::size_t depth, bool document_root);
  Result<Resource*> FindResource(const std::string& uri, const Dialect& inherited);
  Result<const json::Value*> ResolveReference(const Location& from, const std::string& reference,
                                              const std::string& error_pointer,
                                              std::string* fragment_out);
  Status CompileDynamicAnchors();
  Result<Node*> CompileNode(const json::Value& value, std::size_t depth);
  // Lets the properties pass check "required" when every required name has a subschema.
  static void FuseRequiredIntoProperties(Node* node);
  Result<const Node*> Child(const json::Value& object, std::string_view keyword,
                            const Location& location, std::size_t depth);
  Status CompileKeywords(const json::Value& object, const Location& location, Node* node,
                         std::size_t depth);
  Status CompileValidation(const json::Value& object, const Location& location, Node* node);
  Status CompileApplicators(const json::Value& object, const Location& location, Node* node,
                            std::size_t depth);
  Result<std::vector<std::string>> StringArray(const json::Value& value,
                                               const std::string& pointer);
  Result<std::shared_ptr<const Regex>> CompileRegex(const std::string& pattern,
                                                    const std::string& pointer);

  const CompileOptions& options_;
  Graph* graph_;
  RegexLimits limits_;
  std::vector<std::unique_ptr<Resource>> resource_store_;
  std::unordered_map<std::string, Resource*> resources_;
  std::unordered_map<const json::Value*, Location> locations_;
  std::unordered_map<const json::Value*, Node*> compiled_;
  std::unordered_map<std::string, std::shared_ptr<const Regex>> regexes_;
};

}  // namespace udon::schema::internal
