// A read-only JSON document in a few flat arrays, for text that is read once and thrown
// away (validating tool arguments): no allocation per member or string, and the storage is
// reused from one Parse to the next.
//
// Parse reads the text with the same strict parser as json::Parse (internal/parser.h) and
// refuses exactly what it refuses, with the same error codes, pointers and locations.
// Numbers keep Parse's kinds (int64 where it fits, else uint64, else double); the members
// of an object are sorted by name (unsigned bytes), the order json::Value iterates them in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::json {

class Document {
 public:
  enum class Kind : std::uint8_t { kNull, kFalse, kTrue, kInteger, kUnsigned, kFloat, kString,
                                   kArray, kObject };

  struct Node {
    Kind kind = Kind::kNull;
    std::uint32_t size = 0;  // string: bytes; array: elements; object: members
    union {
      std::int64_t integer;
      std::uint64_t unsigned_integer;
      double number;
      const char* chars;    // string: valid UTF-8, not NUL-terminated
      std::uint32_t first;  // array: into elements(); object: into members()
    };
    Node() : integer(0) {}
  };

  struct Member {
    const char* name;
    std::uint32_t name_size;
    std::uint32_t value;  // node index
  };

  Document();
  ~Document();
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  // Replaces the content with the document in text. Strings without escapes stay views of
  // text, which must outlive every use of this document. Errors: those of json::Parse, and
  // json.too_large for text of 4 GiB or more (indexes are 32-bit).
  Status Parse(std::string_view text, const ParseOptions& options = {});

  const Node& root() const { return nodes_.front(); }
  const Node& node(std::uint32_t index) const { return nodes_[index]; }
  // Array: the element at position i.
  const Node& element(const Node& array, std::size_t i) const {
    return nodes_[elements_[array.first + i]];
  }
  // Object: its members, sorted by name.
  const Member* members(const Node& object) const { return members_.data() + object.first; }
  static std::string_view string(const Node& node) { return {node.chars, node.size}; }
  static std::string_view name(const Member& member) { return {member.name, member.name_size}; }

 private:
  friend class DocumentBuilder;
  struct Block {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;
  };
  // An open container while building: its node and where its members or elements begin
  // in the pending lists.
  struct Frame {
    std::uint32_t node = 0;
    std::size_t pending = 0;
    bool is_object = false;
  };

  // One pass of the parser over text.
  Status Build(std::string_view text, const ParseOptions& options);
  // Room for n bytes of decoded string that stays put until the next Parse.
  char* Allocate(std::size_t n);

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> elements_;
  std::vector<Member> members_;
  // Decoded strings (those with escapes), in blocks that never move once written.
  std::vector<Block> blocks_;
  std::size_t block_used_ = 0;
  // Building state, kept between parses so that a reused document does not allocate.
  std::vector<Frame> frames_;
  std::vector<std::uint32_t> pending_elements_;
  std::vector<Member> pending_members_;
};

}  // namespace udon::json
