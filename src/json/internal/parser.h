// The strict JSON reader shared by Parse (builds a Value) and CanonicalizeText (builds a
// compact tree for RFC 8785). It validates everything the bytes can be wrong about
// (grammar, UTF-8, escapes, surrogates, number range, depth, trailing bytes) and leaves
// structural questions, like duplicate member names, to the handler.
//
// Handler contract (each returns false to stop; then handler.failure() names why):
//   bool OnBeginObject();  bool OnKey(const StringToken& name);
//   bool OnEndObject();    bool OnBeginArray();  bool OnEndArray();
//   bool OnString(const StringToken&);           bool OnNumber(const NumberToken&);
//   bool OnBool(bool);     bool OnNull();
//   std::pair<const char*, const char*> failure() const;  // {code, message}
// Decoded strings are valid UTF-8 and are only valid during the call.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json/internal/byte_buffer.h"
#include "json/json.h"
#include "base/result.h"

namespace udon::json::internal {

struct StringToken {
  std::string_view text;  // decoded
  // The string had no escapes: text is a view of the input's own bytes.
  bool in_input;
  // The string as written between its quotes (a view of the input), and whether that
  // spelling is minimal: escapes only where JSON requires them (quote, backslash, control
  // characters), each in its shortest form (\" \\ \b \f \n \r \t, else \u00xx in
  // lowercase), which is the form RFC 8785 and ES JSON.stringify write. Always true when
  // in_input.
  std::string_view written;
  bool minimally_escaped;
  // False only if written holds no noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF): known
  // almost for free while validating. Set for any lead byte EF..F4 (the only ones that can
  // begin a noncharacter), or, where 16 bytes are checked at once, only for EF B7 and EF BF
  // and for a four-byte sequence whose third byte is BF.
  bool may_hold_noncharacter;
};

struct NumberToken {
  std::string_view text;  // the literal as written
  bool is_integer;        // no fraction and no exponent
  double value;           // nearest double; finite (overflow is refused)
  // For integers of at most 19 digits (always below 2^64): the exact magnitude and sign,
  // so a handler that wants an integer need not convert the text again. -0 has
  // magnitude 0 and negative set.
  bool has_magnitude = false;
  bool negative = false;
  std::uint64_t magnitude = 0;
  // The literal is already what ES Number::toString prints for value (and so its RFC 8785
  // form). May be false for some literals that are; never true for one that is not.
  bool as_written = false;
};

// Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 if it is not one.
inline std::size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](std::size_t i) { return p + i < end && (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
    if (c == 0xED && p[1] > 0x9F) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && p[1] > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Writes the UTF-8 encoding of cp (at most U+10FFFF, not a surrogate) to out, which has
// room for four bytes; returns its length.
inline std::size_t EncodeUtf8(char* out, std::uint32_t cp) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

inline void AppendUtf8(std::string& out, std::uint32_t cp) {
  char bytes[4];
  out.append(bytes, EncodeUtf8(bytes, cp));
}

// The first byte at or after p that is not plain printable ASCII inside a string ('"',
// '\\', a control character or a non-ASCII byte), or end. 16 bytes at a time where SSE2 is.
inline const unsigned char* SkipPlainStringBytes(const unsigned char* p,
                                                 const unsigned char* end) {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: bytes >= 0x80 are negative, so "less than 0x20" also catches them.
    const __m128i special = _mm_or_si128(_mm_cmplt_epi8(v, space),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                                      _mm_cmpeq_epi8(v, backslash)));
    const int mask = _mm_movemask_epi8(special);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p != end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) ++p;
  return p;
}

#if defined(__SSE2__)
// Bit i set if byte i of the 16 at p is JSON whitespace.
inline unsigned WhitespaceMask16(const unsigned char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i blank = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
  return static_cast<unsigned>(_mm_movemask_epi8(blank));
}
#endif

// The first byte at or after p that is not JSON whitespace, or end. Indented documents
// have a newline and an indentation of up to a few dozen bytes before most tokens: 32
// bytes are looked at in one step where SSE2 is, so that most runs end without a loop.
inline const unsigned char* SkipWhitespace(const unsigned char* p, const unsigned char* end) {
#if defined(__SSE2__)
  while (end - p >= 32) {
    const unsigned mask = WhitespaceMask16(p) | (WhitespaceMask16(p + 16) << 16);
    if (mask != 0xFFFFFFFFu) return p + __builtin_ctz(~mask);
    p += 32;
  }
  while (end - p >= 16) {
    const unsigned mask = ~WhitespaceMask16(p) & 0xFFFFu;
    if (mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
#endif
  while (p != end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  return p;
}

#if defined(__SSE2__)
// Of the 16 bytes at p, which begin at a character, the length of the longest prefix made
// of plain string bytes and whole well-formed UTF-8 sequences (the rules of
// Utf8SequenceLength): it ends at the first quote, backslash or control character, at the
// lead byte of the first malformed sequence, or at that of a sequence the block cuts off.
// Sets may_hold_noncharacter if the prefix has EF B7, EF BF, or a four-byte sequence whose
// third byte is BF: every noncharacter begins so (U+FDD0..U+FDEF: EF B7 90..AF;
// U+FFFE, U+FFFF: EF BF BE..BF; U+xFFFE, U+xFFFF: F0..F4 xx BF BE..BF).
// All in SSE2: classes of bytes are compared as signed bytes (80..FF are negative) and
// combined as bit masks, one bit a byte.
inline unsigned WellFormedPrefix16(const unsigned char* p, bool& may_hold_noncharacter) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const auto mask = [](__m128i m) { return static_cast<unsigned>(_mm_movemask_epi8(m)); };
  const auto equal = [&](int byte) {
    return mask(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(byte))));
  };
  // For a bound in 80..FF: the bytes from 80 up to below it.
  const auto below = [&](int bound) {
    return mask(_mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(bound))));
  };
  const unsigned high = mask(v);
  const unsigned control = mask(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v));
  const unsigned special = control | equal('"') | equal('\\');
  const unsigned below_90 = below(0x90);
  const unsigned below_a0 = below(0xA0);
  const unsigned continuation = below(0xC0);
  const unsigned below_c2 = below(0xC2);
  const unsigned below_e0 = below(0xE0);
  const unsigned below_f0 = below(0xF0);
  const unsigned below_f5 = below(0xF5);
  const unsigned lead2 = below_e0 & ~below_c2;
  const unsigned lead3 = below_f0 & ~below_e0;
  const unsigned lead4 = below_f5 & ~below_f0;
  const unsigned invalid_lead = (below_c2 & ~continuation) | (high & ~below_f5);
  // The continuation bytes the leads call for (bits 16..18: past the block).
  const unsigned needed = ((lead2 | lead3 | lead4) << 1) | ((lead3 | lead4) << 2) | (lead4 << 3);
  // Second bytes out of range: overlongs (E0 80..9F, F0 80..8F), surrogates (ED A0..BF),
  // above U+10FFFF (F4 90..BF).
  const unsigned bad_second = ((equal(0xE0) << 1) & below_a0) |
                              ((equal(0xED) << 1) & continuation & ~below_a0) |
                              ((equal(0xF0) << 1) & below_90) |
                              ((equal(0xF4) << 1) & continuation & ~below_90);
  const unsigned stops = special | invalid_lead | (continuation & ~needed) |
                         (needed & ~continuation & 0xFFFFu) | bad_second | 0x10000u;
  unsigned length = static_cast<unsigned>(__builtin_ctz(stops));
  // Every sequence before the first stop is whole and well-formed except perhaps the last,
  // which the stop may cut: then the prefix ends at its lead.
  const unsigned leads = (lead2 | lead3 | lead4) & ((1u << length) - 1);
  if (leads != 0) {
    const unsigned last = 31u - static_cast<unsigned>(__builtin_clz(leads));
    const unsigned bit = 1u << last;
    const unsigned sequence = (lead2 & bit) != 0 ? 2 : (lead3 & bit) != 0 ? 3 : 4;
    if (last + sequence > length) length = last;
  }
  const unsigned bf = equal(0xBF);
  const unsigned noncharacter_start =
      (equal(0xEF) & ((equal(0xB7) | bf) >> 1)) | (lead4 & (bf >> 2));
  if ((noncharacter_start & ((1u << length) - 1)) != 0) may_hold_noncharacter = true;
  return length;
}
#endif

// The first byte at or after p that is not plain string text or part of a well-formed
// UTF-8 sequence ('"', '\\', a control character, malformed UTF-8), or end. Once a string
// has a non-ASCII byte, its rest is checked 16 bytes at a time where SSE2 is (text that
// mixes scripts would otherwise switch between the ASCII scan and the one for sequences
// at every few bytes). Sets may_hold_noncharacter as StringToken describes it.
inline const unsigned char* SkipWellFormedStringBytes(const unsigned char* p,
                                                      const unsigned char* end,
                                                      bool& may_hold_noncharacter) {
  for (;;) {
    p = SkipPlainStringBytes(p, end);
    if (p == end || *p < 0x80) return p;
#if defined(__SSE2__)
    while (end - p >= 16) {
      const unsigned length = WellFormedPrefix16(p, may_hold_noncharacter);
      p += length;
      // Short of 16 at a special ASCII byte or malformed UTF-8: done; at a sequence the
      // block cut off: the next block starts with it.
      if (length == 0 || (length < 16 && *p < 0x80)) return p;
    }
    if (p == end || *p < 0x80) continue;
#endif
    do {
      const std::size_t n = Utf8SequenceLength(p, end);
      if (n == 0) return p;
      if (*p >= 0xEF) may_hold_noncharacter = true;
      p += n;
    } while (p != end && *p >= 0x80);
  }
}

SourceLocation LocateOffset(std::string_view text, std::size_t offset);
// The text of a member name as written between its quotes, which the parser has accepted.
std::string DecodeMemberName(std::string_view written);
std::string EscapePointerToken(std::string_view token);

template <class Handler>
class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options, Handler& handler)
      : text_(text),
        p_(reinterpret_cast<const unsigned char*>(text.data())),
        begin_(p_),
        end_(p_ + text.size()),
        options_(options),
        handler_(handler) {}

  Status Run() {
    if (options_.max_bytes != 0 && text_.size() > options_.max_bytes) {
      return Fail("json.too_large", "document exceeds the size limit");
    }
    if (end_ - p_ >= 3 && p_[0] == 0xEF && p_[1] == 0xBB && p_[2] == 0xBF) {
      return Fail("json.syntax", "a byte order mark is not allowed");
    }
    SkipSpace();
    if (!ParseValue()) return std::move(error_);
    SkipSpace();
    if (p_ != end_) return Fail("json.trailing_bytes", "unexpected bytes after the document");
    return OkStatus();
  }

  // Bytes consumed so far: in a handler's OnBeginObject/OnBeginArray the container's
  // opening bracket is the byte before; in OnEndObject/OnEndArray its closing one.
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }

 private:
  // The current member name is only needed to name the pointer of an error: it stays a
  // view of the input as written, decoded only then.
  struct Frame {
    bool is_object = false;
    std::size_t index = 0;
    bool has_key = false;
    bool key_escaped = false;
    std::string_view written_key;

    std::string key() const {
      return key_escaped ? DecodeMemberName(written_key) : std::string(written_key);
    }
  };

  bool ParseValue() {
    if (p_ == end_) return Stop("json.syntax", "unexpected end of input");
    switch (*p_) {
      case '{': return ParseObject();
      case '[': return ParseArray();
      case '"': {
        if (!ParseString()) return false;
        return Check(handler_.OnString(scratch_token_));
      }
      case 't': return ParseLiteral("true", 4) && Check(handler_.OnBool(true));
      case 'f': return ParseLiteral("false", 5) && Check(handler_.OnBool(false));
      case 'n': return ParseLiteral("null", 4) && Check(handler_.OnNull());
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return ParseNumber();
        if (*p_ >= 0x80 && Utf8SequenceLength(p_, end_) == 0) {
          return Stop("json.invalid_utf8", "invalid UTF-8");
        }
        return Stop("json.syntax", "unexpected character");
    }
  }

  bool Enter(bool is_object) {
    if (stack_.size() >= options_.max_depth) {
      return Stop("json.too_deep", "nesting exceeds the depth limit");
    }
    stack_.emplace_back();
    stack_.back().is_object = is_object;
    ++p_;
    return true;
  }

  bool ParseObject() {
    if (!Enter(true) || !Check(handler_.OnBeginObject())) return false;
    SkipSpace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      stack_.pop_back();
      return Check(handler_.OnEndObject());
    }
    for (;;) {
      SkipSpace();
      if (p_ == end_ || *p_ != '"') return Stop("json.syntax", "expected a member name");
      if (!ParseString()) return false;
      Frame& frame = stack_.back();
      frame.key_escaped = !scratch_token_.in_input;
      frame.written_key = scratch_token_.written;
      frame.has_key = true;
      if (!Check(handler_.OnKey(scratch_token_))) return false;
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return Stop("json.syntax", "expected ':' after a member name");
      ++p_;
      SkipSpace();
      if (!ParseValue()) return false;
      SkipSpace();
      if (p_ == end_) return Stop("json.syntax", "unexpected end of input in an object");
      if (*p_ == ',') {
        ++p_;
        stack_.back().has_key = false;
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        stack_.pop_back();
        return Check(handler_.OnEndObject());
      }
      return Stop("json.syntax", "expected ',' or '}' in an object");
    }
  }

  bool ParseArray() {
    if (!Enter(false) || !Check(handler_.OnBeginArray())) return false;
    SkipSpace();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      stack_.pop_back();
      return Check(handler_.OnEndArray());
    }
    for (;;) {
      SkipSpace();
      if (!ParseValue()) return false;
      SkipSpace();
      if (p_ == end_) return Stop("json.syntax", "unexpected end of input in an array");
      if (*p_ == ',') {
        ++p_;
        ++stack_.back().index;
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        stack_.pop_back();
        return Check(handler_.OnEndArray());
      }
      return Stop("json.syntax", "expected ',' or ']' in an array");
    }
  }

  // Leaves the decoded string in scratch_token_: a view of the input when it has no
  // escapes, of scratch_ otherwise.
  bool ParseString() {
    ++p_;  // opening quote
    const unsigned char* start = p_;
    // Fast path: plain bytes and well-formed UTF-8 up to the closing quote (anything else
    // is left to the copying loop below, which reports it).
    bool may_hold_noncharacter = false;
    p_ = SkipWellFormedStringBytes(p_, end_, may_hold_noncharacter);
    if (p_ != end_ && *p_ == '"') {
      // Both views from the local: copying .text back out of the token just stored would
      // read 16 bytes across two 8-byte stores, which the CPU cannot forward (a stall of
      // about a third of this function's time, by perf).
      const std::string_view text(reinterpret_cast<const char*>(start), p_ - start);
      scratch_token_.text = text;
      scratch_token_.in_input = true;
      scratch_token_.written = text;
      scratch_token_.minimally_escaped = true;
      scratch_token_.may_hold_noncharacter = may_hold_noncharacter;
      ++p_;
      return true;
    }
    scratch_length_ = 0;
    AppendToScratch(start, p_);
    bool minimal = true;
    while (p_ != end_) {
      const unsigned char c = *p_;
      if (c == '"') {
        scratch_token_.text = std::string_view(scratch_.data(), scratch_length_);
        scratch_token_.in_input = false;
        scratch_token_.written =
            std::string_view(reinterpret_cast<const char*>(start), p_ - start);
        scratch_token_.minimally_escaped = minimal;
        scratch_token_.may_hold_noncharacter = may_hold_noncharacter;
        ++p_;
        return true;
      }
      if (c < 0x20) return Stop("json.syntax", "control character in a string must be escaped");
      if (c == '\\') {
        const unsigned char* escape = p_;
        if (!ParseEscape()) return false;
        if (minimal) minimal = IsMinimalEscape(escape, p_);
        continue;
      }
      // A run of plain bytes and well-formed UTF-8 up to the next escape, copied at once. It
      // is empty only at malformed UTF-8: anything else stops at a quote, backslash or
      // control character, handled above.
      const unsigned char* run = p_;
      p_ = SkipWellFormedStringBytes(p_, end_, may_hold_noncharacter);
      if (p_ == run) return Stop("json.invalid_utf8", "invalid UTF-8 in a string");
      AppendToScratch(run, p_);
    }
    return Stop("json.syntax", "unterminated string");
  }

  // Room for count more decoded bytes at the end of scratch_. scratch_ only grows and
  // scratch_length_ is the part in use: a std::string is zero-filled as it grows, so it is
  // grown rarely, and the escapes of a string are written with plain stores, not a
  // push_back each.
  char* ScratchRoom(std::size_t count) {
    if (scratch_.size() - scratch_length_ < count) [[unlikely]] {
      scratch_.resize(std::max(scratch_.size() * 2, scratch_length_ + count + 64));
    }
    return scratch_.data() + scratch_length_;
  }

  void AppendToScratch(const unsigned char* begin, const unsigned char* end) {
    const auto count = static_cast<std::size_t>(end - begin);
    CopyBytes(ScratchRoom(count), reinterpret_cast<const char*>(begin), count);
    scratch_length_ += count;
  }

  // True if the well-formed escape [begin, end) is the shortest spelling of a character
  // that must be escaped (see StringToken::minimally_escaped).
  static bool IsMinimalEscape(const unsigned char* begin, const unsigned char* end) {
    if (end - begin == 2) return begin[1] != '/';
    if (end - begin != 6 || begin[2] != '0' || begin[3] != '0') return false;
    const unsigned char high = begin[4];
    const unsigned char low = begin[5];
    if (high != '0' && high != '1') return false;
    if (!IsDigit(low) && !(low >= 'a' && low <= 'f')) return false;
    // \u0008 \u0009 \u000a \u000c \u000d have two-character forms.
    return !(high == '0' && (low == '8' || low == '9' || low == 'a' || low == 'c' || low == 'd'));
  }

  // What each byte after a backslash decodes to, 0 where it is not a one-character escape.
  static constexpr std::array<char, 256> kSimpleEscapes = [] {
    std::array<char, 256> table{};
    table['"'] = '"';
    table['\\'] = '\\';
    table['/'] = '/';
    table['b'] = '\b';
    table['f'] = '\f';
    table['n'] = '\n';
    table['r'] = '\r';
    table['t'] = '\t';
    return table;
  }();
  // The value of each hexadecimal digit, 0xFF for other bytes.
  static constexpr std::array<std::uint8_t, 256> kHexValues = [] {
    std::array<std::uint8_t, 256> table{};
    for (auto& value : table) value = 0xFF;
    for (int c = 0; c < 10; ++c) table['0' + c] = static_cast<std::uint8_t>(c);
    for (int c = 0; c < 6; ++c) {
      table['a' + c] = static_cast<std::uint8_t>(10 + c);
      table['A' + c] = static_cast<std::uint8_t>(10 + c);
    }
    return table;
  }();

  bool ReadHex4(std::uint32_t& out) {
    if (end_ - p_ < 4) return Stop("json.syntax", "truncated \\u escape");
    const std::uint32_t a = kHexValues[p_[0]];
    const std::uint32_t b = kHexValues[p_[1]];
    const std::uint32_t c = kHexValues[p_[2]];
    const std::uint32_t d = kHexValues[p_[3]];
    if (((a | b | c | d) & 0xF0) != 0) return Stop("json.syntax", "invalid \\u escape");
    out = (a << 12) | (b << 8) | (c << 4) | d;
    p_ += 4;
    return true;
  }

  bool ParseEscape() {
    ++p_;  // backslash
    if (p_ == end_) return Stop("json.syntax", "unterminated escape");
    const unsigned char c = *p_++;
    char* out = ScratchRoom(4);
    if (c != 'u') {
      const char decoded = kSimpleEscapes[c];
      if (decoded == 0) {
        --p_;
        return Stop("json.syntax", "invalid escape");
      }
      *out = decoded;
      ++scratch_length_;
      return true;
    }
    std::uint32_t cp = 0;
    if (!ReadHex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return Stop("json.lone_surrogate", "unpaired low surrogate escape");
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
        return Stop("json.lone_surrogate", "unpaired high surrogate escape");
      }
      p_ += 2;
      std::uint32_t low = 0;
      if (!ReadHex4(low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) {
        return Stop("json.lone_surrogate", "high surrogate escape not followed by a low one");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    scratch_length_ += EncodeUtf8(out, cp);
    return true;
  }

  bool ParseLiteral(const char* word, std::size_t length) {
    if (static_cast<std::size_t>(end_ - p_) < length ||
        std::string_view(reinterpret_cast<const char*>(p_), length) != word) {
      return Stop("json.syntax", "invalid literal");
    }
    p_ += length;
    return true;
  }

  static bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

  bool ParseNumber() {
    const unsigned char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return Stop("json.syntax", "invalid number");
    const unsigned char* integer_begin = p_;
    std::uint64_t magnitude = 0;  // wraps beyond 19 digits, where it is not used
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && IsDigit(*p_)) return Stop("json.syntax", "leading zeros are not allowed");
    } else {
      for (; p_ != end_ && IsDigit(*p_); ++p_) magnitude = magnitude * 10 + (*p_ - '0');
    }
    const std::size_t integer_digits = static_cast<std::size_t>(p_ - integer_begin);
    bool is_integer = true;
    // The digits of a fraction continue the magnitude (up to 19 digits in all).
    const unsigned char* fraction_begin = p_;
    std::size_t fraction_digits = 0;
    if (p_ != end_ && *p_ == '.') {
      is_integer = false;
      ++p_;
      if (p_ == end_ || !IsDigit(*p_)) return Stop("json.syntax", "invalid number fraction");
      fraction_begin = p_;
      for (; p_ != end_ && IsDigit(*p_); ++p_) magnitude = magnitude * 10 + (*p_ - '0');
      fraction_digits = static_cast<std::size_t>(p_ - fraction_begin);
    }
    bool has_exponent = false;
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_integer = false;
      has_exponent = true;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !IsDigit(*p_)) return Stop("json.syntax", "invalid number exponent");
      while (p_ != end_ && IsDigit(*p_)) ++p_;
    }
    NumberToken token;
    token.text = std::string_view(reinterpret_cast<const char*>(start), p_ - start);
    token.is_integer = is_integer;
    if (is_integer && integer_digits <= 19) {
      // Below 10^19 < 2^64 the magnitude is exact, and converting it to double rounds once,
      // to nearest: the same double from_chars gives for the text, without parsing it again.
      token.has_magnitude = true;
      token.negative = negative;
      token.magnitude = magnitude;
      token.value = negative ? -static_cast<double>(magnitude) : static_cast<double>(magnitude);
      // Up to 15 digits an integer is an exact double below 10^21, which ES prints as
      // written (the grammar already forbids leading zeros); only -0 changes.
      token.as_written = integer_digits <= 15 && !(negative && magnitude == 0);
      return Check(handler_.OnNumber(token));
    }
    if (!has_exponent && integer_digits + fraction_digits <= 19 && magnitude <= kExactLimit) {
      // Both the digits as an integer (at most 2^53) and 10^fraction_digits (at most 10^18)
      // are exact doubles, and IEEE division rounds once, to nearest: the double from_chars
      // gives, without its general algorithm.
      const double value = static_cast<double>(magnitude) / kPowersOfTen[fraction_digits];
      token.value = negative ? -value : value;
      token.as_written = IsShortestDecimal(integer_begin, integer_digits, fraction_begin,
                                           fraction_digits);
      return Check(handler_.OnNumber(token));
    }
    const auto [ptr, ec] =
        std::from_chars(token.text.data(), token.text.data() + token.text.size(), token.value);
    if (ec == std::errc::result_out_of_range) {
      if (Overflows(token.text)) {
        p_ = start;
        return Stop("json.number_overflow", "number is too large for a double");
      }
      token.value = token.text[0] == '-' ? -0.0 : 0.0;  // underflow rounds to zero, as ES does
    } else if (ec != std::errc() || ptr != token.text.data() + token.text.size()) {
      p_ = start;
      return Stop("json.syntax", "invalid number");
    }
    return Check(handler_.OnNumber(token));
  }

  static constexpr std::uint64_t kExactLimit = std::uint64_t{1} << 53;
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                            1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                            1e14, 1e15, 1e16, 1e17, 1e18};

  // True if a literal with a fraction and no exponent is already what ES Number::toString
  // prints for its value: at most 15 significant digits (each such decimal is the only
  // one of at most 15 digits that rounds to its double, so it is the shortest that
  // round-trips), no trailing zero in the fraction, and not below 10^-6 (where ES switches
  // to exponent notation).
  static bool IsShortestDecimal(const unsigned char* integer_begin, std::size_t integer_digits,
                                const unsigned char* fraction_begin, std::size_t fraction_digits) {
    if (fraction_begin[fraction_digits - 1] == '0') return false;
    if (integer_begin[0] != '0') return integer_digits + fraction_digits <= 15;
    std::size_t zeros = 0;  // leading zeros of the fraction of 0.xxx
    while (fraction_begin[zeros] == '0') ++zeros;
    return zeros <= 5 && fraction_digits - zeros <= 15;
  }

  // Decides between overflow and underflow for an out-of-range literal from its decimal
  // exponent: digits before the point (ignoring leading zeros) plus the written exponent.
  static bool Overflows(std::string_view text) {
    std::size_t i = text[0] == '-' ? 1 : 0;
    long long magnitude = 0;
    bool seen_nonzero = false;
    long long leading_fraction_zeros = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (text[i] != '0') seen_nonzero = true;
      if (seen_nonzero) ++magnitude;
    }
    if (i < text.size() && text[i] == '.') {
      for (++i; i < text.size() && IsDigit(text[i]); ++i) {
        if (!seen_nonzero) {
          if (text[i] != '0') seen_nonzero = true;
          else ++leading_fraction_zeros;
        }
      }
    }
    if (!seen_nonzero) return false;
    long long exponent = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
      ++i;
      bool negative = false;
      if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
      for (; i < text.size(); ++i) {
        if (exponent < 1'000'000'000) exponent = exponent * 10 + (text[i] - '0');
      }
      if (negative) exponent = -exponent;
    }
    const long long decimal_exponent =
        (magnitude > 0 ? magnitude : -leading_fraction_zeros) + exponent;
    return decimal_exponent > 0;
  }

  [[gnu::always_inline]] void SkipSpace() {
    // Compact JSON has no whitespace between tokens; every whitespace byte is <= ' '.
    if (p_ == end_ || *p_ > ' ') return;
    // Indented JSON has one space after each ':'.
    if (*p_ == ' ' && end_ - p_ >= 2 && p_[1] > ' ') {
      ++p_;
      return;
    }
#if defined(__SSE2__)
    // And a newline and up to 31 spaces before most tokens: only spaces are looked for.
    if (*p_ == '\n' && end_ - p_ >= 33) {
      const __m128i space = _mm_set1_epi8(' ');
      const auto spaces_at = [&](const unsigned char* at) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
        return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, space)));
      };
      const unsigned spaces = spaces_at(p_ + 1) | (spaces_at(p_ + 17) << 16);
      if (spaces != 0xFFFFFFFFu) {
        const unsigned char* next = p_ + 1 + __builtin_ctz(~spaces);
        if (*next > ' ') {
          p_ = next;
          return;
        }
      }
    }
#endif
    p_ = SkipWhitespace(p_, end_);
  }

  bool Check(bool handler_ok) {
    if (handler_ok) return true;
    const auto [code, message] = handler_.failure();
    return Stop(code, message);
  }

  std::string CurrentPointer() const {
    std::string pointer;
    for (const Frame& frame : stack_) {
      if (frame.is_object) {
        if (!frame.has_key) break;
        pointer += '/';
        pointer += EscapePointerToken(frame.key());
      } else {
        pointer += '/';
        pointer += std::to_string(frame.index);
      }
    }
    return pointer;
  }

  bool Stop(const char* code, const char* message) {
    Error error = MakeError(code, message, CurrentPointer());
    error.location = LocateOffset(text_, static_cast<std::size_t>(p_ - begin_));
    error_ = Status(std::move(error));
    return false;
  }

  Status Fail(const char* code, const char* message) {
    Stop(code, message);
    return std::move(error_);
  }

  std::string_view text_;
  const unsigned char* p_;
  const unsigned char* begin_;
  const unsigned char* end_;
  const ParseOptions& options_;
  Handler& handler_;
  std::vector<Frame> stack_;
  std::string scratch_;
  std::size_t scratch_length_ = 0;
  StringToken scratch_token_{};
  Status error_;
};

}  // namespace udon::json::internal
