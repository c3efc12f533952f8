#include "json/yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "json/internal/parser.h"

namespace udon::json {
namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

SourceLocation LocationOf(const YAML::Mark& mark) {
  SourceLocation location;
  location.offset = static_cast<std::size_t>(mark.pos);
  location.line = static_cast<std::size_t>(mark.line) + 1;
  location.column = static_cast<std::size_t>(mark.column) + 1;
  return location;
}

bool AllOf(std::string_view text, bool (*predicate)(char)) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!predicate(c)) return false;
  }
  return true;
}
bool IsDecimal(char c) { return c >= '0' && c <= '9'; }
bool IsOctal(char c) { return c >= '0' && c <= '7'; }
bool IsHex(char c) { return IsDecimal(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// YAML 1.2 core schema float: [-+]? ( \.[0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool IsCoreFloat(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t integer_digits = 0;
  while (i < text.size() && IsDecimal(text[i])) ++i, ++integer_digits;
  std::size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDecimal(text[i])) ++i, ++fraction_digits;
  }
  if (integer_digits == 0 && fraction_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (i == text.size()) return false;
    while (i < text.size() && IsDecimal(text[i])) ++i;
  }
  return i == text.size();
}

// For an out-of-range float: the power of ten of its leading significant digit plus one,
// positive for overflow, not positive for underflow.
long long DecimalExponent(std::string_view text) {
  std::size_t i = text[0] == '-' ? 1 : 0;
  long long position = 0;  // digits before the point, from the first significant one
  bool significant = false;
  for (; i < text.size() && IsDecimal(text[i]); ++i) {
    significant = significant || text[i] != '0';
    if (significant) ++position;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && IsDecimal(text[i]); ++i) {
      if (significant) continue;
      if (text[i] != '0') significant = true;
      else --position;
    }
  }
  long long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    const bool negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    for (; i < text.size(); ++i) {
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (text[i] - '0');
    }
    if (negative) exponent = -exponent;
  }
  return position + exponent;
}

bool IsInfinityOrNan(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  return text == ".inf" || text == ".Inf" || text == ".INF" || text == ".nan" ||
         text == ".NaN" || text == ".NAN";
}

// yaml-cpp passes bytes through and encodes escapes like "\uD800" as they are, so strings
// may not be UTF-8; a JSON value must be.
bool IsValidUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p != end) {
    const std::size_t length = internal::Utf8SequenceLength(p, end);
    if (length == 0) return false;
    p += length;
  }
  return true;
}

class Converter {
 public:
  explicit Converter(std::size_t node_budget) : node_budget_(node_budget) {}

  Result<Value> Convert(const YAML::Node& node) {
    Value out;
    if (!ConvertNode(node, 0, out)) return std::move(error_);
    return out;
  }

 private:
  bool ConvertNode(const YAML::Node& node, std::size_t depth, Value& out) {
    if (++nodes_ > node_budget_) {
      return Fail("yaml.unsupported", "aliases expand beyond the node budget", node.Mark());
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: out = nullptr; return true;
      case YAML::NodeType::Scalar: return ConvertScalar(node, out);
      case YAML::NodeType::Sequence: {
        if (depth >= kDefaultMaxDepth) return TooDeep(node);
        out = Value::array();
        std::size_t index = 0;
        for (const YAML::Node& element : node) {
          path_.push_back(std::to_string(index++));
          Value converted;
          if (!ConvertNode(element, depth + 1, converted)) return false;
          out.push_back(std::move(converted));
          path_.pop_back();
        }
        return true;
      }
      case YAML::NodeType::Map: {
        if (depth >= kDefaultMaxDepth) return TooDeep(node);
        out = Value::object();
        for (const auto& member : node) {
          const YAML::Node& key = member.first;
          if (!key.IsScalar()) {
            return Fail("yaml.unsupported", "mapping keys must be strings", key.Mark());
          }
          const std::string& name = key.Scalar();
          if (!IsValidUtf8(name)) {
            return Fail("yaml.invalid", "mapping key is not valid UTF-8", key.Mark());
          }
          if (out.contains(name)) {
            path_.push_back(internal::EscapePointerToken(name));
            return Fail("yaml.duplicate_key", "duplicate mapping key", key.Mark());
          }
          path_.push_back(internal::EscapePointerToken(name));
          Value converted;
          if (!ConvertNode(member.second, depth + 1, converted)) return false;
          out[name] = std::move(converted);
          path_.pop_back();
        }
        return true;
      }
    }
    return Fail("yaml.unsupported", "unsupported node", node.Mark());
  }

  bool ConvertScalar(const YAML::Node& node, Value& out) {
    const std::string& text = node.Scalar();
    const std::string& tag = node.Tag();
    if (!IsValidUtf8(text)) return Fail("yaml.invalid", "string is not valid UTF-8", node.Mark());
    if (tag == "!" || tag == kStrTag) {  // quoted, or explicitly a string
      out = text;
      return true;
    }
    if (tag != "?") return Fail("yaml.unsupported", "explicit tags are not supported", node.Mark());
    if (text == "true" || text == "True" || text == "TRUE") {
      out = true;
      return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
      out = false;
      return true;
    }
    if (text == "null" || text == "Null" || text == "NULL" || text == "~" || text.empty()) {
      out = nullptr;
      return true;
    }
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'o' || text[1] == 'x')) {
      const std::string_view digits = std::string_view(text).substr(2);
      const bool octal = text[1] == 'o';
      if (AllOf(digits, octal ? IsOctal : IsHex)) {
        std::uint64_t number = 0;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(),
                                               number, octal ? 8 : 16);
        if (ec != std::errc()) {
          return Fail("yaml.unsupported", "integer out of range", node.Mark());
        }
        out = number;
        return true;
      }
    }
    std::string_view unsigned_text = text;
    const bool negative = !text.empty() && text[0] == '-';
    if (!text.empty() && (text[0] == '-' || text[0] == '+')) unsigned_text.remove_prefix(1);
    if (AllOf(unsigned_text, IsDecimal)) {
      const std::string_view parse_text = negative ? std::string_view(text) : unsigned_text;
      const char* last = parse_text.data() + parse_text.size();
      std::int64_t signed_number = 0;
      if (auto r = std::from_chars(parse_text.data(), last, signed_number);
          r.ec == std::errc() && r.ptr == last) {
        out = signed_number;
        return true;
      }
      std::uint64_t unsigned_number = 0;
      if (auto r = std::from_chars(parse_text.data(), last, unsigned_number);
          !negative && r.ec == std::errc() && r.ptr == last) {
        out = unsigned_number;
        return true;
      }
      return ConvertFloat(node, text, out);
    }
    if (IsCoreFloat(text)) return ConvertFloat(node, text, out);
    if (IsInfinityOrNan(text)) {
      return Fail("yaml.unsupported", "infinity and NaN are not JSON numbers", node.Mark());
    }
    out = text;
    return true;
  }

  bool ConvertFloat(const YAML::Node& node, std::string_view text, Value& out) {
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    double number = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc::result_out_of_range) {
      // Underflow rounds to zero as in JSON; overflow has no JSON number.
      if (DecimalExponent(text) <= 0) {
        out = text[0] == '-' ? -0.0 : 0.0;
        return true;
      }
      return Fail("yaml.unsupported", "number is too large for a double", node.Mark());
    }
    if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(number)) {
      return Fail("yaml.unsupported", "number is too large for a double", node.Mark());
    }
    out = number;
    return true;
  }

  bool TooDeep(const YAML::Node& node) {
    return Fail("yaml.unsupported", "nesting exceeds the depth limit", node.Mark());
  }

  bool Fail(const char* code, const char* message, const YAML::Mark& mark) {
    std::string pointer;
    for (const std::string& token : path_) pointer += "/" + token;
    Error error = MakeError(code, message, std::move(pointer));
    if (!mark.is_null()) error.location = LocationOf(mark);
    error_ = std::move(error);
    return false;
  }

  std::size_t node_budget_;
  std::size_t nodes_ = 0;
  std::vector<std::string> path_;
  Error error_;
};

// Records where each document starts and nothing else.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// At most one document. yaml-cpp 0.7 reports an endless stream of empty documents at an
// unconsumed token on some malformed input (its issue #1040: '","', '{"a":1},'), which
// YAML::LoadAll collects until memory runs out; so documents are counted here, at most
// three, and one that starts where the previous one did is malformed input.
Status CheckSingleDocument(const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentStarts documents;
  while (documents.starts.size() < 3 && parser.HandleNextDocument(documents)) {
    const std::size_t count = documents.starts.size();
    if (count >= 2 && documents.starts[count - 1].pos == documents.starts[count - 2].pos) {
      Error error = MakeError("yaml.invalid", "malformed YAML");
      error.location = LocationOf(documents.starts.back());
      return error;
    }
  }
  if (documents.starts.size() > 1) {
    return MakeError("yaml.unsupported", "multi-document streams are not supported");
  }
  return OkStatus();
}

}  // namespace

Result<Value> ParseYaml(std::string_view text) {
  try {
    // YAML 1.2 reads a CR not followed by LF as a line break; yaml-cpp 0.7 keeps it as
    // content ("\r1" became the string "\r1"). Same length, so locations stay exact.
    std::string input(text);
    for (std::size_t i = 0; i < input.size(); ++i) {
      if (input[i] == '\r' && (i + 1 == input.size() || input[i + 1] != '\n')) input[i] = '\n';
    }
    UDON_RETURN_IF_ERROR(CheckSingleDocument(input));
    const YAML::Node document = YAML::Load(input);
    // Aliases share subtrees, so a small document can stand for an enormous one ("billion
    // laughs"). Without aliases a document has fewer nodes than bytes; with them it may
    // expand to twice its size plus 20,000 nodes.
    Converter converter(2 * text.size() + 20'000);
    return converter.Convert(document);
  } catch (const YAML::Exception& exception) {
    Error error = MakeError("yaml.invalid", "malformed YAML");
    if (!exception.mark.is_null()) error.location = LocationOf(exception.mark);
    return error;
  } catch (const std::exception&) {
    return MakeError("yaml.invalid", "malformed YAML");
  }
}

bool IsJsonByContent(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

Result<Value> ParseJsonOrYaml(std::string_view text) {
  if (IsJsonByContent(text)) return Parse(text);
  return ParseYaml(text);
}

}  // namespace udon::json
