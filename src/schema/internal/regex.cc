#include "schema/internal/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace udon::schema::internal {
namespace {

// ECMA-262 WhiteSpace and LineTerminator beyond what PCRE's ASCII \s covers.
constexpr std::string_view kExtraSpace =
    "\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

// ECMA long general-category names that PCRE2 only knows by their short form.
constexpr std::array<std::pair<std::string_view, std::string_view>, 39> kCategoryNames = {{
    {"Letter", "L"}, {"Cased_Letter", "L&"}, {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"}, {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"}, {"Mark", "M"}, {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"}, {"Number", "N"},
    {"Decimal_Number", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"},
    {"Punctuation", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"},
    {"Math_Symbol", "Sm"}, {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
    {"Control", "Cc"}, {"Format", "Cf"}, {"Surrogate", "Cs"}, {"Private_Use", "Co"},
    {"Unassigned", "Cn"}, {"digit", "Nd"},
}};

bool IsHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

void AppendCodePoint(std::uint32_t cp, std::string* out) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\x{%x}", static_cast<unsigned>(cp));
  out->append(buffer);
}

// Parses \uXXXX (with a following low surrogate) or \u{X...} at pattern[i] == 'u'. Advances
// i to the last consumed character.
bool TranslateUnicodeEscape(std::string_view p, std::size_t* i, std::string* out) {
  std::size_t at = *i + 1;
  if (at < p.size() && p[at] == '{') {
    std::size_t close = p.find('}', at);
    if (close == std::string_view::npos) return false;
    std::string_view hex = p.substr(at + 1, close - at - 1);
    if (!IsHex(hex) || hex.size() > 8) return false;
    std::uint32_t cp = static_cast<std::uint32_t>(std::stoul(std::string(hex), nullptr, 16));
    if (cp > 0x10FFFF) return false;
    AppendCodePoint(cp, out);
    *i = close;
    return true;
  }
  if (at + 4 > p.size() || !IsHex(p.substr(at, 4))) return false;
  std::uint32_t cp = static_cast<std::uint32_t>(std::stoul(std::string(p.substr(at, 4)), nullptr, 16));
  std::size_t last = at + 3;
  if (cp >= 0xD800 && cp <= 0xDBFF && last + 6 < p.size() + 0 && p[last + 1] == '\\' &&
      p[last + 2] == 'u' && IsHex(p.substr(last + 3, 4))) {
    std::uint32_t low =
        static_cast<std::uint32_t>(std::stoul(std::string(p.substr(last + 3, 4)), nullptr, 16));
    if (low >= 0xDC00 && low <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      last += 6;
    }
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // a lone surrogate matches nothing in UTF-8
  AppendCodePoint(cp, out);
  *i = last;
  return true;
}

bool TranslatePropertyEscape(std::string_view p, std::size_t* i, std::string* out) {
  char kind = p[*i];
  std::size_t open = *i + 1;
  if (open >= p.size() || p[open] != '{') return false;
  std::size_t close = p.find('}', open);
  if (close == std::string_view::npos) return false;
  std::string name(p.substr(open + 1, close - open - 1));
  for (const auto& [long_name, short_name] : kCategoryNames) {
    if (name == long_name || name == "General_Category=" + std::string(long_name) ||
        name == "gc=" + std::string(long_name)) {
      name = short_name;
    }
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '=' && c != '&') {
      return false;
    }
  }
  out->push_back('\\');
  out->push_back(kind);
  out->append("{" + name + "}");
  *i = close;
  return true;
}

// One escape sequence starting after the backslash at p[*i]; in_class changes how the
// multi-character classes are spelled.
bool TranslateEscape(std::string_view p, std::size_t* i, bool in_class, std::string* out) {
  char c = p[*i];
  switch (c) {
    case 'd': case 'D': case 'w': case 'W': case 'n': case 'r': case 't': case 'f':
    case 'v':
      out->push_back('\\');
      out->push_back(c);
      return true;
    case 'b': case 'B':
      if (in_class && c == 'b') {
        out->append("\\x{8}");
      } else if (in_class) {
        return false;
      } else {
        out->push_back('\\');
        out->push_back(c);
      }
      return true;
    case 's':
      out->append(in_class ? "\\s" : "[\\s");
      out->append(kExtraSpace);
      if (!in_class) out->push_back(']');
      return true;
    case 'S':
      if (in_class) {
        out->append("\\S");
      } else {
        out->append("[^\\s");
        out->append(kExtraSpace);
        out->push_back(']');
      }
      return true;
    case 'u':
      return TranslateUnicodeEscape(p, i, out);
    case 'x':
      if (*i + 2 >= p.size() + 0 || !IsHex(p.substr(*i + 1, 2))) return false;
      out->append("\\x{" + std::string(p.substr(*i + 1, 2)) + "}");
      *i += 2;
      return true;
    case 'c':
      if (*i + 1 >= p.size() || !std::isalpha(static_cast<unsigned char>(p[*i + 1]))) {
        return false;
      }
      out->append("\\c");
      out->push_back(p[++*i]);
      return true;
    case 'p': case 'P':
      return TranslatePropertyEscape(p, i, out);
    case '0':
      if (*i + 1 < p.size() && std::isdigit(static_cast<unsigned char>(p[*i + 1]))) return false;
      out->append("\\x{0}");
      return true;
    case 'k':
      if (in_class || *i + 1 >= p.size() || p[*i + 1] != '<') return false;
      out->append("\\k");
      return true;
    default:
      break;
  }
  if (c >= '1' && c <= '9') {
    if (in_class) return false;
    out->push_back('\\');
    out->push_back(c);
    return true;
  }
  // Identity escapes: only syntax characters (and "-" in a class) under the u flag.
  static constexpr std::string_view kSyntax = "^$\\.*+?()[]{}|/";
  if (kSyntax.find(c) != std::string_view::npos || (in_class && c == '-')) {
    out->push_back('\\');
    out->push_back(c);
    return true;
  }
  return false;
}

// Well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool IsUtf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    std::uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((length == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (length == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;
    }
    i += length;
  }
  return true;
}

}  // namespace

bool TranslateEcmaPattern(std::string_view p, std::string* out) {
  out->clear();
  bool in_class = false;
  bool after_quantifier = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    bool quantifier = false;
    if (c == '\\') {
      if (++i >= p.size()) return false;
      if (!TranslateEscape(p, &i, in_class, out)) return false;
    } else if (in_class) {
      if (c == ']') {
        in_class = false;
      } else if (c == '[') {
        out->push_back('\\');  // PCRE would read "[:alpha:]" as a POSIX class
      }
      out->push_back(c);
    } else {
      switch (c) {
        case '[':
          if (p.substr(i, 2) == "[]") {
            out->append("(?!)");
            ++i;
          } else if (p.substr(i, 3) == "[^]") {
            out->append("[\\s\\S]");
            i += 2;
          } else {
            in_class = true;
            out->push_back('[');
            if (i + 1 < p.size() && p[i + 1] == '^') out->push_back(p[++i]);
          }
          break;
        case ']':
          return false;  // a lone "]" is a syntax error under the u flag
        case '.':
          out->append("[^\\n\\r\\x{2028}\\x{2029}]");
          break;
        case '(':
          if (i + 1 < p.size() && p[i + 1] == '?') {
            std::string_view rest = p.substr(i + 2);
            bool allowed = rest.rfind(':', 0) == 0 || rest.rfind('=', 0) == 0 ||
                           rest.rfind('!', 0) == 0 || rest.rfind("<=", 0) == 0 ||
                           rest.rfind("<!", 0) == 0 ||
                           (rest.rfind('<', 0) == 0 && rest.size() > 1 &&
                            (std::isalpha(static_cast<unsigned char>(rest[1])) || rest[1] == '_' ||
                             rest[1] == '$'));
            if (!allowed) return false;
          }
          out->push_back(c);
          break;
        case '*': case '+': case '?':
          if (after_quantifier && c != '?') return false;  // possessive: PCRE only
          quantifier = !(after_quantifier && c == '?');
          out->push_back(c);
          break;
        case '}': {
          out->push_back(c);
          // "{n}", "{n,}" or "{n,m}" is a quantifier.
          std::size_t open = p.rfind('{', i);
          std::string_view body =
              open == std::string_view::npos ? std::string_view() : p.substr(open + 1, i - open - 1);
          quantifier = !body.empty() && std::isdigit(static_cast<unsigned char>(body[0])) &&
                       body.find_first_not_of("0123456789,") == std::string_view::npos;
          break;
        }
        default:
          out->push_back(c);
          break;
      }
    }
    after_quantifier = quantifier;
  }
  return !in_class;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

std::shared_ptr<const Regex> Regex::Compile(std::string_view pattern, const RegexLimits& limits,
                                            bool* too_long) {
  if (too_long != nullptr) *too_long = false;
  if (pattern.size() > limits.max_pattern_bytes) {
    if (too_long != nullptr) *too_long = true;
    return nullptr;
  }
  std::string translated;
  if (!TranslateEcmaPattern(pattern, &translated)) return nullptr;
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
                                   translated.size(), PCRE2_UTF | PCRE2_DOLLAR_ENDONLY,
                                   &error_code, &error_offset, nullptr);
  if (code == nullptr) return nullptr;
  std::shared_ptr<Regex> regex(new Regex());
  regex->code_ = code;
  // Without JIT (unsupported platform) the interpreter runs under the same limits.
  regex->jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  regex->limits_ = limits;
  return regex;
}

RegexOutcome Regex::Search(std::string_view subject) const {
  // Per thread, because a JIT stack and match data serve one match at a time; the limits
  // are set on every call since patterns of different schemas may carry different ones.
  struct ThreadState {
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    ThreadState() { pcre2_jit_stack_assign(context, nullptr, jit_stack); }
    ~ThreadState() {
      pcre2_jit_stack_free(jit_stack);
      pcre2_match_context_free(context);
      pcre2_match_data_free(data);
    }
  };
  thread_local ThreadState state;
  pcre2_set_match_limit(state.context, limits_.match_limit);
  pcre2_set_depth_limit(state.context, limits_.depth_limit);
  pcre2_set_heap_limit(state.context, 64 * 1024);  // KiB
  const auto* code = static_cast<const pcre2_code*>(code_);
  const auto* bytes = reinterpret_cast<PCRE2_SPTR>(subject.data());
  // pcre2_jit_match skips pcre2_match's setup, including its UTF-8 check, so the subject is
  // checked here first: JIT code on malformed UTF-8 is undefined behaviour.
  int rc = jit_ && IsUtf8(subject)
               ? pcre2_jit_match(code, bytes, subject.size(), 0, 0, state.data, state.context)
               : pcre2_match(code, bytes, subject.size(), 0, 0, state.data, state.context);
  if (rc >= 0) return RegexOutcome::kMatch;
  if (rc == PCRE2_ERROR_NOMATCH) return RegexOutcome::kNoMatch;
  return RegexOutcome::kLimit;
}

}  // namespace udon::schema::internal
