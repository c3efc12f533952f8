// The two kinds of instance the one evaluator reads (validate.h is a template over them):
// a json::Value (Validate, IsValid), and a node of a json::Document parsed straight from
// text (ValidateText, IsValidText). Both views answer the same few questions; objects
// present their members sorted by name in both, so merges and error order agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/document.h"
#include "json/json.h"
#include "schema/internal/graph.h"

namespace udon::schema::internal {

class ValueView {
 public:
  explicit ValueView(const json::Value& value) : value_(&value) {}

  std::uint8_t Bit() const {
    switch (value_->type()) {
      case json::Value::value_t::null: return kNull;
      case json::Value::value_t::boolean: return kBoolean;
      case json::Value::value_t::object: return kObject;
      case json::Value::value_t::array: return kArray;
      case json::Value::value_t::string: return kString;
      case json::Value::value_t::number_integer:
      case json::Value::value_t::number_unsigned:
      case json::Value::value_t::number_float: return kNumber;
      default: return 0;
    }
  }
  bool IsString() const { return value_->is_string(); }
  // Numbers: exactly one of these holds.
  bool IsInteger() const { return value_->type() == json::Value::value_t::number_integer; }
  bool IsUnsigned() const { return value_->is_number_unsigned(); }
  bool IsFloat() const { return value_->is_number_float(); }
  std::int64_t Integer() const { return value_->get_ref<const json::Value::number_integer_t&>(); }
  std::uint64_t Unsigned() const {
    return value_->get_ref<const json::Value::number_unsigned_t&>();
  }
  double Number() const { return value_->get<double>(); }  // any number, as a double
  bool Bool() const { return value_->get_ref<const bool&>(); }
  std::string_view String() const { return value_->get_ref<const std::string&>(); }

  // Arrays and objects.
  std::size_t Size() const { return value_->size(); }
  ValueView Item(std::size_t i) const { return ValueView((*value_)[i]); }

  // The members of an object, in name order.
  class Members {
   public:
    explicit Members(const json::Value::object_t& object) : it_(object.begin()), end_(object.end()) {}
    bool Done() const { return it_ == end_; }
    std::string_view Name() const { return it_->first; }
    ValueView Value() const { return ValueView(it_->second); }
    void Next() { ++it_; }

   private:
    json::Value::object_t::const_iterator it_;
    json::Value::object_t::const_iterator end_;
  };
  Members FirstMember() const { return Members(value_->get_ref<const json::Value::object_t&>()); }
  bool Contains(std::string_view name) const { return value_->contains(name); }

  // Tells instances apart for the reference-cycle check.
  const void* Identity() const { return value_; }

  // A member name as a string instance (propertyNames).
  class Key {
   public:
    Key(const ValueView&, std::string_view name) : value_(std::string(name)) {}
    ValueView View() const { return ValueView(value_); }

   private:
    json::Value value_;
  };

 private:
  const json::Value* value_;
};

class DocumentView {
 public:
  using Kind = json::Document::Kind;

  DocumentView(const json::Document& document, const json::Document::Node& node)
      : document_(&document), node_(&node) {}

  std::uint8_t Bit() const {
    switch (node_->kind) {
      case Kind::kNull: return kNull;
      case Kind::kFalse:
      case Kind::kTrue: return kBoolean;
      case Kind::kInteger:
      case Kind::kUnsigned:
      case Kind::kFloat: return kNumber;
      case Kind::kString: return kString;
      case Kind::kArray: return kArray;
      case Kind::kObject: return kObject;
    }
    return 0;
  }
  bool IsString() const { return node_->kind == Kind::kString; }
  bool IsInteger() const { return node_->kind == Kind::kInteger; }
  bool IsUnsigned() const { return node_->kind == Kind::kUnsigned; }
  bool IsFloat() const { return node_->kind == Kind::kFloat; }
  std::int64_t Integer() const { return node_->integer; }
  std::uint64_t Unsigned() const { return node_->unsigned_integer; }
  double Number() const {
    switch (node_->kind) {
      case Kind::kInteger: return static_cast<double>(node_->integer);
      case Kind::kUnsigned: return static_cast<double>(node_->unsigned_integer);
      default: return node_->number;
    }
  }
  bool Bool() const { return node_->kind == Kind::kTrue; }
  std::string_view String() const { return json::Document::string(*node_); }

  std::size_t Size() const { return node_->size; }
  DocumentView Item(std::size_t i) const {
    return DocumentView(*document_, document_->element(*node_, i));
  }

  class Members {
   public:
    Members(const json::Document& document, const json::Document::Member* begin,
            std::size_t size)
        : document_(&document), it_(begin), end_(begin + size) {}
    bool Done() const { return it_ == end_; }
    std::string_view Name() const { return json::Document::name(*it_); }
    DocumentView Value() const { return DocumentView(*document_, document_->node(it_->value)); }
    void Next() { ++it_; }

   private:
    const json::Document* document_;
    const json::Document::Member* it_;
    const json::Document::Member* end_;
  };
  Members FirstMember() const {
    return Members(*document_, document_->members(*node_), node_->size);
  }
  bool Contains(std::string_view name) const {
    const json::Document::Member* members = document_->members(*node_);
    std::size_t low = 0, high = node_->size;  // sorted by name: binary search
    while (low < high) {
      const std::size_t middle = (low + high) / 2;
      const int order = json::Document::name(members[middle]).compare(name);
      if (order == 0) return true;
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return false;
  }

  const void* Identity() const { return node_; }

  class Key {
   public:
    Key(const DocumentView& owner, std::string_view name) : document_(owner.document_) {
      node_.kind = Kind::kString;
      node_.size = static_cast<std::uint32_t>(name.size());
      node_.chars = name.data();
    }
    DocumentView View() const { return DocumentView(*document_, node_); }

   private:
    const json::Document* document_;
    json::Document::Node node_;
  };

 private:
  const json::Document* document_;
  const json::Document::Node* node_;
};

}  // namespace udon::schema::internal
