#include "json/document.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "json/internal/number.h"
#include "json/internal/parser.h"

namespace udon::json {

namespace {

// std::string_view's order (unsigned bytes), inline: member names are short, and a call to
// memcmp per comparison costs more than the loop.
inline bool NameLess(const Document::Member& a, const Document::Member& b) {
  const std::uint32_t n = a.name_size < b.name_size ? a.name_size : b.name_size;
  const auto* p = reinterpret_cast<const unsigned char*>(a.name);
  const auto* q = reinterpret_cast<const unsigned char*>(b.name);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return p[i] < q[i];
  }
  return a.name_size < b.name_size;
}

// Objects are small: an insertion sort, without std::sort's set-up, below 16 members.
template <class Iterator>
void SortMembers(Iterator begin, Iterator end) {
  if (end - begin > 16) {
    std::sort(begin, end, NameLess);
    return;
  }
  for (Iterator i = begin + (begin != end ? 1 : 0); i < end; ++i) {
    if (!NameLess(*i, *(i - 1))) continue;
    const Document::Member moving = *i;
    Iterator j = i;
    do {
      *j = *(j - 1);
      --j;
    } while (j != begin && NameLess(moving, *(j - 1)));
    *j = moving;
  }
}

inline bool SameName(const Document::Member& a, const Document::Member& b) {
  return a.name_size == b.name_size && std::memcmp(a.name, b.name, a.name_size) == 0;
}

}  // namespace

// The parser's handler that fills a Document.
//
// Duplicate member names: checking every name against its siblings as it comes costs a
// scan per name, so the builder only looks for neighbours that are equal once an object is
// sorted, at its end. json::Parse refuses a duplicate at the second name, and its error
// names that place; Document::Parse asks it for the error of any text refused here.
class DocumentBuilder {
 public:
  explicit DocumentBuilder(Document& document) : doc_(document) {}

  bool OnBeginObject() { return Open(Document::Kind::kObject); }
  bool OnBeginArray() { return Open(Document::Kind::kArray); }

  bool OnEndObject() {
    const Document::Frame& frame = doc_.frames_.back();
    auto begin = doc_.pending_members_.begin() + static_cast<std::ptrdiff_t>(frame.pending);
    auto end = doc_.pending_members_.end();
    // json::Value keeps members in a std::map: the same order (unsigned bytes).
    SortMembers(begin, end);
    if (std::adjacent_find(begin, end, SameName) != end) return Duplicate();
    Close(doc_.pending_members_, doc_.members_);
    return true;
  }

  bool OnEndArray() {
    Close(doc_.pending_elements_, doc_.elements_);
    return true;
  }

  bool OnKey(const internal::StringToken& token) {
    const std::string_view name = Keep(token);
    doc_.pending_members_.push_back(
        {name.data(), static_cast<std::uint32_t>(name.size()), 0});
    return true;
  }

  bool OnString(const internal::StringToken& token) {
    const std::string_view text = Keep(token);
    Document::Node node;
    node.kind = Document::Kind::kString;
    node.size = static_cast<std::uint32_t>(text.size());
    node.chars = text.data();
    Put(node);
    return true;
  }

  bool OnNumber(const internal::NumberToken& token) {
    const internal::StoredNumber number = internal::StoreNumber(token);
    Document::Node node;
    switch (number.kind) {
      case internal::StoredNumber::Kind::kInteger:
        node.kind = Document::Kind::kInteger;
        node.integer = number.integer;
        break;
      case internal::StoredNumber::Kind::kUnsigned:
        node.kind = Document::Kind::kUnsigned;
        node.unsigned_integer = number.unsigned_integer;
        break;
      case internal::StoredNumber::Kind::kFloat:
        node.kind = Document::Kind::kFloat;
        node.number = number.number;
        break;
    }
    Put(node);
    return true;
  }

  bool OnBool(bool flag) {
    Document::Node node;
    node.kind = flag ? Document::Kind::kTrue : Document::Kind::kFalse;
    Put(node);
    return true;
  }

  bool OnNull() {
    Put(Document::Node());
    return true;
  }

  std::pair<const char*, const char*> failure() const { return failure_; }

 private:
  bool Duplicate() {
    failure_ = {"json.duplicate_key", "duplicate member name"};
    return false;
  }

  // The decoded text where it stays valid until the next Parse: the input itself when it
  // had no escapes, else a copy in the document's blocks.
  std::string_view Keep(const internal::StringToken& token) {
    if (token.in_input || token.text.empty()) return token.text;
    char* copy = doc_.Allocate(token.text.size());
    std::memcpy(copy, token.text.data(), token.text.size());
    return {copy, token.text.size()};
  }

  std::uint32_t Put(const Document::Node& node) {
    const auto index = static_cast<std::uint32_t>(doc_.nodes_.size());
    doc_.nodes_.push_back(node);
    if (!doc_.frames_.empty()) {
      if (doc_.frames_.back().is_object) {
        doc_.pending_members_.back().value = index;
      } else {
        doc_.pending_elements_.push_back(index);
      }
    }
    return index;
  }

  // Moves the innermost container's members or elements from the pending list to their
  // table, where they lie side by side, and closes its frame.
  template <class Item>
  void Close(std::vector<Item>& pending, std::vector<Item>& table) {
    const Document::Frame& frame = doc_.frames_.back();
    auto begin = pending.begin() + static_cast<std::ptrdiff_t>(frame.pending);
    Document::Node& node = doc_.nodes_[frame.node];
    node.first = static_cast<std::uint32_t>(table.size());
    node.size = static_cast<std::uint32_t>(pending.end() - begin);
    table.insert(table.end(), begin, pending.end());
    pending.erase(begin, pending.end());
    doc_.frames_.pop_back();
  }

  bool Open(Document::Kind kind) {
    Document::Node node;
    node.kind = kind;
    node.first = 0;
    const std::uint32_t index = Put(node);
    Document::Frame& frame = doc_.frames_.emplace_back();
    frame.node = index;
    frame.is_object = kind == Document::Kind::kObject;
    frame.pending = frame.is_object ? doc_.pending_members_.size() : doc_.pending_elements_.size();
    return true;
  }

  Document& doc_;
  std::pair<const char*, const char*> failure_{"json.syntax", "invalid JSON"};
};

Document::Document() = default;
Document::~Document() = default;

char* Document::Allocate(std::size_t n) {
  constexpr std::size_t kBlockSize = 4096;
  if (blocks_.empty() || block_used_ + n > blocks_.back().size) {
    const std::size_t size = std::max(kBlockSize, n);
    blocks_.push_back({std::make_unique<char[]>(size), size});
    block_used_ = 0;
  }
  char* out = blocks_.back().bytes.get() + block_used_;
  block_used_ += n;
  return out;
}

Status Document::Parse(std::string_view text, const ParseOptions& options) {
  // Node indexes and sizes are 32-bit: longer text is refused as too large.
  ParseOptions bounded = options;
  constexpr std::size_t kMaxBytes = std::numeric_limits<std::uint32_t>::max();
  if (bounded.max_bytes == 0 || bounded.max_bytes > kMaxBytes) bounded.max_bytes = kMaxBytes;
  Status status = Build(text, bounded);
  if (status.ok()) return status;
  nodes_.clear();
  // Rare input: json::Parse, refusing it too, names the exact place (a duplicate at its
  // second name rather than where its object closes).
  auto whole = json::Parse(text, bounded);
  return whole.ok() ? status : std::move(whole).error();
}

Status Document::Build(std::string_view text, const ParseOptions& options) {
  nodes_.clear();
  elements_.clear();
  members_.clear();
  frames_.clear();
  pending_elements_.clear();
  pending_members_.clear();
  if (blocks_.size() > 1) blocks_.erase(blocks_.begin() + 1, blocks_.end());
  block_used_ = 0;
  DocumentBuilder builder(*this);
  internal::Parser<DocumentBuilder> parser(text, options, builder);
  return parser.Run();
}

}  // namespace udon::json
