#include "adopt/jsonc.h"

#include <utility>

namespace udon::adopt {
namespace {

Error Invalid(std::string message) { return MakeError("adopt.file_invalid", std::move(message)); }

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Blanks text[from, to) except line ends.
void Blank(std::string& text, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    if (text[i] != '\n' && text[i] != '\r') text[i] = ' ';
  }
}

// The offset just past the string that starts at text[at] (a quote).
Result<std::size_t> StringEnd(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return Invalid("a string does not end");
}

// Where the // comment at text[at] ends (its line end, or the end of the text). The hosts'
// readers disagree on what ends one: VS Code's also ends it at a lone CR (older versions at
// VT, FF, U+2028 and U+2029 too), Gemini CLI's only at LF. A comment holding
// any of those would hide from one reader what another runs: refused.
Result<std::size_t> LineCommentEnd(std::string_view text, std::size_t at) {
  std::size_t end = text.find_first_of("\n\r", at);
  if (end != std::string_view::npos && text[end] == '\r' && (end + 1 == text.size() || text[end + 1] != '\n')) {
    return Invalid("a // comment holds a lone carriage return, a line end the hosts read differently");
  }
  if (end == std::string_view::npos) end = text.size();
  const std::string_view comment = text.substr(at, end - at);
  if (comment.find_first_of("\v\f") != std::string_view::npos ||
      comment.find("\xE2\x80\xA8") != std::string_view::npos ||
      comment.find("\xE2\x80\xA9") != std::string_view::npos) {
    return Invalid("a // comment holds a line separator (VT, FF, U+2028, U+2029) the hosts read differently");
  }
  return end;
}

// A comma followed (after blanks) by } or ] is a trailing comma: blank it.
void BlankTrailingCommas(std::string& text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == ',') {
      std::size_t next = i + 1;
      while (next < text.size() && IsSpace(text[next])) ++next;
      if (next < text.size() && (text[next] == '}' || text[next] == ']')) text[i] = ' ';
    }
  }
}

// Reads values of blanked text, remembering nothing but where they are.
class Scanner {
 public:
  explicit Scanner(std::string_view text, std::size_t pos = 0) : text_(text), pos_(pos) {}

  std::size_t pos() const { return pos_; }
  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }
  bool Take(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  // A member name, unescaped.
  Result<std::string> Name() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '"') return Invalid("a member name was expected");
    UDON_ASSIGN_OR_RETURN(std::size_t end, StringEnd(text_, pos_));
    auto name = json::Parse(text_.substr(pos_, end - pos_));
    if (!name.ok() || !name->is_string()) return Invalid("a member name is not a valid string");
    pos_ = end;
    return name->get<std::string>();
  }
  // Skips one value; returns where it began.
  Result<std::size_t> SkipValue(int depth = 0) {
    SkipSpace();
    if (depth > 256 || pos_ >= text_.size()) return Invalid("a value was expected");
    const std::size_t begin = pos_;
    const char c = text_[pos_];
    if (c == '"') {
      UDON_ASSIGN_OR_RETURN(pos_, StringEnd(text_, pos_));
    } else if (c == '{' || c == '[') {
      UDON_RETURN_IF_ERROR(SkipContainer(c == '{', depth));
    } else {
      while (pos_ < text_.size() && !IsSpace(text_[pos_]) && text_[pos_] != ',' && text_[pos_] != '}' &&
             text_[pos_] != ']') {
        ++pos_;
      }
      if (pos_ == begin) return Invalid("a value was expected");
    }
    return begin;
  }

 private:
  Status SkipContainer(bool object, int depth) {
    ++pos_;
    const char close = object ? '}' : ']';
    if (Take(close)) return OkStatus();
    do {
      if (object) {
        UDON_RETURN_IF_ERROR(Name());
        if (!Take(':')) return Invalid("a ':' was expected");
      }
      UDON_RETURN_IF_ERROR(SkipValue(depth + 1));
    } while (Take(','));
    if (!Take(close)) return Invalid("a ',' or the end of a container was expected");
    return OkStatus();
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string IndentOfLine(std::string_view text, std::size_t at) {
  std::size_t start = text.rfind('\n', at == 0 ? 0 : at - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  std::size_t end = start;
  while (end < at && (text[end] == ' ' || text[end] == '\t')) ++end;
  return std::string(text.substr(start, end - start));
}

}  // namespace

Result<std::string> BlankJsonc(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') {
      UDON_ASSIGN_OR_RETURN(std::size_t end, StringEnd(out, i));
      i = end - 1;
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      UDON_ASSIGN_OR_RETURN(std::size_t end, LineCommentEnd(out, i));
      Blank(out, i, end);
      i = end == 0 ? 0 : end - 1;
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      const std::size_t end = out.find("*/", i + 2);
      if (end == std::string::npos) return Invalid("a /* comment does not end");
      Blank(out, i, end + 2);
      i = end + 1;
    }
  }
  BlankTrailingCommas(out);
  return out;
}

Result<json::Value> ParseJsonc(std::string_view text) {
  UDON_ASSIGN_OR_RETURN(std::string blanked, BlankJsonc(text));
  auto value = json::Parse(blanked);
  if (!value.ok()) {
    Error error = Invalid("the file is not JSON (with comments): " + value.error().message);
    error.details["jsonCode"] = value.error().code;
    error.location = value.error().location;
    return error;
  }
  return std::move(value).value();
}

Result<std::vector<std::pair<std::string, ValueSpan>>> ObjectMembers(std::string_view blanked,
                                                                   const ValueSpan& span) {
  std::vector<std::pair<std::string, ValueSpan>> members;
  Scanner inner(blanked.substr(0, span.end), span.begin);
  if (!inner.Take('{')) return Invalid("an object was expected");
  if (inner.Take('}')) return members;
  do {
    inner.SkipSpace();
    ValueSpan member;
    member.key_begin = inner.pos();
    UDON_ASSIGN_OR_RETURN(std::string name, inner.Name());
    if (!inner.Take(':')) return Invalid("a ':' was expected");
    UDON_ASSIGN_OR_RETURN(member.begin, inner.SkipValue());
    member.end = inner.pos();
    member.indent = IndentOfLine(blanked, member.key_begin);
    members.emplace_back(std::move(name), std::move(member));
  } while (inner.Take(','));
  if (!inner.Take('}')) return Invalid("a ',' or '}' was expected");
  return members;
}

Result<ValueSpan> FindMember(std::string_view blanked, const std::vector<std::string>& path) {
  Scanner root(blanked);
  ValueSpan span;
  UDON_ASSIGN_OR_RETURN(span.begin, root.SkipValue());
  span.end = root.pos();
  std::string pointer;
  for (const std::string& name : path) {
    pointer += "/" + name;
    if (blanked[span.begin] != '{') return MakeError("adopt.entry_missing", "the entry is not in the file", pointer);
    UDON_ASSIGN_OR_RETURN(auto members, ObjectMembers(blanked, span));
    bool found = false;
    for (auto& [member_name, member_span] : members) {
      if (member_name == name) {
        span = member_span;
        found = true;
        break;
      }
    }
    if (!found) return MakeError("adopt.entry_missing", "the entry is not in the file", pointer);
  }
  return span;
}

}  // namespace udon::adopt
