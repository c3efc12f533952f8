// The evaluator: the mutable state of one validation over an immutable Graph. One
// evaluator for every kind of instance: a template over the views of instance.h,
// instantiated (in validate.cc) for ValueView and DocumentView only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json.h"
#include "schema/internal/graph.h"
#include "schema/internal/instance.h"
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

template <class View>
class Evaluator {
 public:
  // result nullptr: stop at the first failure and build no locations.
  Evaluator(const Graph& graph, ValidationResult* result);
  bool Run(View instance);

 private:
  bool Eval(const Node& node, View instance, Annotations* annotations) {
    // A node without subschemas needs neither depth, scope nor locations on the fast path.
    if (node.leaf && !collect_ && !limit_) return EvalLeaf(node, instance);
    return EvalNode(node, instance, annotations);
  }
  bool EvalNode(const Node& node, View instance, Annotations* annotations);
  bool EvalLeaf(const Node& node, View instance);
  // Eval one level down: keyword_path is appended to the keyword location; instance_token
  // (unless a default string_view) to the instance location.
  bool EvalChild(const Node& node, View instance, Annotations* annotations,
                 std::string_view keyword_path, std::string_view instance_token);
  bool EvalKeyword(const Node& node, const Keyword& keyword, View instance,
                   Annotations* annotations);
  // The keywords that apply subschemas, out of line so that the scalar checks stay lean.
  bool EvalApplicator(const Node& node, const Keyword& keyword, View instance,
                      Annotations* annotations);
  bool EvalProperties(const Keyword& keyword, View instance,
                      Annotations* annotations);
  bool EvalItems(const Keyword& keyword, View instance, Annotations* annotations);
  bool EvalContains(const Node& node, const Keyword& keyword, View instance,
                    Annotations* annotations);
  // $ref / $dynamicRef: refuses a cycle that makes no progress through the instance.
  bool FollowRef(const Node& target, View instance, Annotations* annotations,
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
  std::vector<std::pair<const Node*, const void*>> ref_stack_;  // (target, instance identity)
};

extern template class Evaluator<ValueView>;
extern template class Evaluator<DocumentView>;

}  // namespace udon::schema::internal
