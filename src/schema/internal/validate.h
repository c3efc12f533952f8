// The evaluator: the mutable state of one validation over an immutable Graph.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json.h"
#include "schema/internal/graph.h"
#include "schema/schema.h"

namespace udon::schema::internal {

// Which members (by position in the object) and items an in-place schema evaluated, for
// unevaluatedProperties / unevaluatedItems.
struct Annotations {
  std::vector<bool> properties;
  std::vector<bool> items;

  void MarkProperty(std::size_t index, std::size_t size);
  void MarkItem(std::size_t index, std::size_t size);
  void MergeFrom(const Annotations& other);
};

class Evaluator {
 public:
  // result nullptr: stop at the first failure and build no locations.
  Evaluator(const Graph& graph, ValidationResult* result);
  bool Run(const json::Value& instance);

 private:
  bool Eval(const Node& node, const json::Value& instance, Annotations* annotations) {
    // A node without subschemas needs neither depth, scope nor locations on the fast path.
    if (node.leaf && !collect_ && !limit_) return EvalLeaf(node, instance);
    return EvalNode(node, instance, annotations);
  }
  bool EvalNode(const Node& node, const json::Value& instance, Annotations* annotations);
  bool EvalLeaf(const Node& node, const json::Value& instance);
  // Eval one level down: keyword_path is appended to the keyword location; instance_token
  // (unless a default string_view) to the instance location.
  bool EvalChild(const Node& node, const json::Value& instance, Annotations* annotations,
                 std::string_view keyword_path, std::string_view instance_token);
  bool EvalKeyword(const Node& node, const Keyword& keyword, const json::Value& instance,
                   Annotations* annotations);
  // The keywords that apply subschemas, out of line so that the scalar checks stay lean.
  bool EvalApplicator(const Node& node, const Keyword& keyword, const json::Value& instance,
                      Annotations* annotations);
  bool EvalProperties(const Keyword& keyword, const json::Value& instance,
                      Annotations* annotations);
  bool EvalItems(const Keyword& keyword, const json::Value& instance, Annotations* annotations);
  bool EvalContains(const Node& node, const Keyword& keyword, const json::Value& instance,
                    Annotations* annotations);
  // $ref / $dynamicRef: refuses a cycle that makes no progress through the instance.
  bool FollowRef(const Node& target, const json::Value& instance, Annotations* annotations,
                 std::string_view keyword);
  void Fail(const Node& node, std::string_view keyword_path, const char* message);
  void HitLimit(const char* message);
  std::size_t ErrorMark() const;
  void DropErrors(std::size_t mark);

  const Graph& graph_;
  ValidationResult* result_;
  const bool collect_;
  std::string keyword_path_;
  std::string instance_path_;
  std::size_t depth_ = 0;
  bool limit_ = false;
  const char* limit_message_ = "";
  std::vector<const ResourceNodes*> dynamic_scope_;
  std::vector<std::pair<const Node*, const json::Value*>> ref_stack_;
};

}  // namespace udon::schema::internal
