#include "json/canonical.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/sha256.h"
#include "json/internal/byte_buffer.h"
#include "json/internal/parser.h"

namespace udon::json {
namespace {

using internal::ByteBuffer;
using internal::CopyBytes;
using internal::CopyChunks;
using internal::kChunk;

// ---------------------------------------------------------------------------------------
// Shared by both paths: number formatting, string escaping, member-name ordering.

// Appends to std::string (the Value path) and to ByteBuffer (the text path).
// ES6 Number::toString from the shortest round-trip digits: plain notation for decimal
// exponents in [-6, 21), otherwise d[.ddd]e±n.
template <class Out>
void AppendEs6Number(Out& out, double value) {
  if (value == 0) {  // also -0
    out.push_back('0');
    return;
  }
  char buffer[32];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const char* p = buffer;
  if (*p == '-') {
    out.push_back('-');
    ++p;
  }
  // A double's shortest round trip has at most 17 digits; the bound keeps every copy from
  // `digits` below provably inside it.
  char digits[20];
  int digit_count = 0;
  for (; *p != 'e' && digit_count < static_cast<int>(sizeof digits); ++p) {
    if (*p != '.') digits[digit_count++] = *p;
  }
  while (*p != 'e') ++p;
  ++p;  // 'e'
  int exponent = 0;
  std::from_chars(*p == '+' ? p + 1 : p, result.ptr, exponent);
  // ES: value = 0.d1d2...dk * 10^n.
  const int n = exponent + 1;
  const int k = digit_count;
  if (k <= n && n <= 21) {
    out.append(digits, k);
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, n);
    out.push_back('.');
    out.append(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    out.append("0.", 2);
    out.append(static_cast<std::size_t>(-n), '0');
    out.append(digits, k);
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits + 1, k - 1);
    }
    out.push_back('e');
    out.push_back(n - 1 < 0 ? '-' : '+');
    char exponent_text[8];
    const auto written =
        std::to_chars(exponent_text, exponent_text + sizeof exponent_text, std::abs(n - 1));
    for (const char* c = exponent_text; c != written.ptr; ++c) out.push_back(*c);  // 1 to 3 digits
  }
}

// Byte classes for the escaper: 0 copies as is, 1 needs an escape, 2 starts or continues a
// multi-byte sequence. kValidatedClasses is for text the parser has already checked to be
// well-formed UTF-8: there only the lead bytes that can start a noncharacter (EF: U+F000..
// U+FFFF, and 4-byte leads) need a look.
constexpr std::array<std::uint8_t, 256> MakeByteClasses(bool validated) {
  std::array<std::uint8_t, 256> classes{};
  for (int c = 0; c < 0x20; ++c) classes[c] = 1;
  classes['"'] = 1;
  classes['\\'] = 1;
  for (int c = validated ? 0xEF : 0x80; c < 0x100; ++c) classes[c] = 2;
  return classes;
}
constexpr std::array<std::uint8_t, 256> kByteClasses = MakeByteClasses(false);
constexpr std::array<std::uint8_t, 256> kValidatedClasses = MakeByteClasses(true);

// First byte at or after p that is not class 0 for validated text, or end. Where SSE2 is,
// 16 bytes at a time while 18 are readable, and there only the leads that do begin a
// noncharacter's encoding stop it (EF B7, EF BF, or a four-byte lead whose third byte is
// BF: see internal::WellFormedPrefix16): text dense in U+E000..U+FFFF and supplementary
// characters would otherwise stop at almost every character.
[[gnu::always_inline]] inline const unsigned char* SkipPlainValidated(const unsigned char* p,
                                                                   const unsigned char* end) {
#if defined(__SSE2__)
  const auto load = [](const unsigned char* at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  };
  const auto equal = [](__m128i v, int byte) {
    return _mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(byte)));
  };
  while (end - p >= 18) {
    const __m128i v = load(p);
    const __m128i second = load(p + 1);
    const __m128i third = load(p + 2);
    const __m128i special =
        _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v),
                     _mm_or_si128(equal(v, '"'), equal(v, '\\')));
    const __m128i lead4 = _mm_and_si128(
        _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(static_cast<char>(0xF0))), v),
        _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(static_cast<char>(0xF4))), v));
    const __m128i noncharacter_start = _mm_or_si128(
        _mm_and_si128(equal(v, 0xEF), _mm_or_si128(equal(second, 0xB7), equal(second, 0xBF))),
        _mm_and_si128(lead4, equal(third, 0xBF)));
    const int mask = _mm_movemask_epi8(_mm_or_si128(special, noncharacter_start));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p != end && kValidatedClasses[*p] == 0) ++p;
  return p;
}

// The JSON escape of each byte that needs one (class 1), in its shortest form.
struct Escape {
  char text[6];
  std::uint8_t length;
};
constexpr std::array<Escape, 256> kEscapes = [] {
  constexpr char kHex[] = "0123456789abcdef";
  std::array<Escape, 256> escapes{};
  for (int c = 0; c < 0x20; ++c) {
    escapes[c] = {{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]}, 6};
  }
  escapes['\b'] = {{'\\', 'b'}, 2};
  escapes['\f'] = {{'\\', 'f'}, 2};
  escapes['\n'] = {{'\\', 'n'}, 2};
  escapes['\r'] = {{'\\', 'r'}, 2};
  escapes['\t'] = {{'\\', 't'}, 2};
  escapes['"'] = {{'\\', '"'}, 2};
  escapes['\\'] = {{'\\', '\\'}, 2};
  return escapes;
}();

bool IsNoncharacter(std::uint32_t cp) {
  return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

std::uint32_t DecodeUtf8(const unsigned char* p, std::size_t length) {
  switch (length) {
    case 2: return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
    case 3: return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    case 4:
      return ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
             (p[3] & 0x3Fu);
    default: return p[0];
  }
}

// True if a minimally escaped string as written (well-formed UTF-8, escapes only for
// ASCII characters) holds a noncharacter. Only the lead bytes EF..F4 can begin one.
bool HoldsNoncharacter(std::string_view written) {
  const auto* p = reinterpret_cast<const unsigned char*>(written.data());
  const auto* end = p + written.size();
  while ((p = SkipPlainValidated(p, end)) != end) {
    if (*p < 0xEF) {  // a quote, backslash or control character of an escape
      ++p;
      continue;
    }
    const std::size_t length = *p >= 0xF0 ? 4 : 3;
    if (IsNoncharacter(DecodeUtf8(p, length))) return true;
    p += length;
  }
  return false;
}

// Appends the JCS form of a string (quotes included). Returns false for text JCS cannot
// carry: bytes that are not well-formed UTF-8, or I-JSON noncharacters. Malformed UTF-8
// only reaches here from a Value built in code: with kValidated (text from the parser) it
// is known not to occur.
template <bool kValidated, class Out>
bool AppendCanonicalString(Out& out, std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  const unsigned char* run = p;
  out.push_back('"');
  while (p != end) {
    if constexpr (kValidated) {
      p = SkipPlainValidated(p, end);
      if (p == end) break;
    }
    const unsigned char c = *p;
    const std::uint8_t byte_class = kValidated ? kValidatedClasses[c] : kByteClasses[c];
    if (byte_class == 0) {
      ++p;
      continue;
    }
    if (byte_class == 2) {
      const std::size_t length = kValidated ? (c >= 0xF0 ? 4 : 3)
                                            : internal::Utf8SequenceLength(p, end);
      if (length == 0) return false;
      // Only EF (U+F000..U+FFFF, U+FDD0..) and 4-byte leads can start a noncharacter.
      if ((c == 0xEF || c >= 0xF0) && IsNoncharacter(DecodeUtf8(p, length))) return false;
      p += length;
      continue;
    }
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    out.append(kEscapes[c].text, kEscapes[c].length);
    ++p;
    run = p;
  }
  out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
  out.push_back('"');
  return true;
}

// RFC 8785 orders member names by their UTF-16 code units. UTF-8 byte order agrees with
// that except where a code point in U+E000..U+FFFF (lead byte EE/EF) meets a
// supplementary one (lead byte F0..F4, surrogates D800..DBFF in UTF-16), which UTF-16 puts
// first. The strings are equal up to the first differing byte, so both sides of it belong
// to code points that start at the same place.
int CompareUtf16(std::string_view a, std::string_view b) {
  const std::size_t common = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < common && a[i] == b[i]) ++i;
  if (i == common) return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  const auto x = static_cast<unsigned char>(a[i]);
  const auto y = static_cast<unsigned char>(b[i]);
  if ((x & 0xC0) != 0x80) {  // the code points start here: their lead bytes differ
    const bool x_high_bmp = x == 0xEE || x == 0xEF;
    const bool y_high_bmp = y == 0xEE || y == 0xEF;
    if (x_high_bmp && y >= 0xF0) return 1;
    if (y_high_bmp && x >= 0xF0) return -1;
  }
  return x < y ? -1 : 1;
}

Error NotCanonicalizable(const char* message, std::string pointer) {
  return MakeError("json.not_canonicalizable", message, std::move(pointer));
}

// ---------------------------------------------------------------------------------------
// Canonicalize(const Value&)

class ValueWriter {
 public:
  explicit ValueWriter(std::string& out) : out_(out) {}

  Status Write(const Value& value) {
    if (!WriteValue(value, 0)) return std::move(error_);
    return OkStatus();
  }

 private:
  // One step of the path to the value being written, to name it in an error.
  struct Step {
    const std::string* name;  // nullptr for an array index
    std::size_t index;
  };

  bool WriteValue(const Value& value, std::size_t depth) {
    switch (value.type()) {
      case Value::value_t::null: out_.append("null"); return true;
      case Value::value_t::boolean: out_.append(value.get<bool>() ? "true" : "false"); return true;
      case Value::value_t::string:
        if (!AppendCanonicalString<false>(out_, value.get_ref<const std::string&>())) {
          return Fail(NotCanonicalizable("string is not valid Unicode or holds a noncharacter",
                                         PathPointer()));
        }
        return true;
      case Value::value_t::number_integer:
        AppendEs6Number(out_, static_cast<double>(value.get<std::int64_t>()));
        return true;
      case Value::value_t::number_unsigned:
        AppendEs6Number(out_, static_cast<double>(value.get<std::uint64_t>()));
        return true;
      case Value::value_t::number_float: {
        const double number = value.get<double>();
        if (!std::isfinite(number)) {
          return Fail(NotCanonicalizable("number is not finite", PathPointer()));
        }
        AppendEs6Number(out_, number);
        return true;
      }
      case Value::value_t::array: return WriteArray(value, depth + 1);
      case Value::value_t::object: return WriteObject(value, depth + 1);
      case Value::value_t::binary:
      case Value::value_t::discarded: break;
    }
    return Fail(NotCanonicalizable("value has no JSON form", PathPointer()));
  }

  bool WriteArray(const Value& array, std::size_t depth) {
    if (depth > kDefaultMaxDepth) return TooDeep();
    out_.push_back('[');
    std::size_t index = 0;
    for (const Value& element : array) {
      if (index != 0) out_.push_back(',');
      path_.push_back({nullptr, index});
      if (!WriteValue(element, depth)) return false;
      path_.pop_back();
      ++index;
    }
    out_.push_back(']');
    return true;
  }

  bool WriteObject(const Value& object, std::size_t depth) {
    if (depth > kDefaultMaxDepth) return TooDeep();
    using Member = std::pair<const std::string*, const Value*>;
    std::vector<Member> members;
    members.reserve(object.size());
    for (const auto& [name, member] : object.items()) members.emplace_back(&name, &member);
    // nlohmann keeps members in byte order, which is UTF-16 order unless names mix
    // U+E000..U+FFFF with supplementary code points.
    const auto before = [](const Member& a, const Member& b) {
      return CompareUtf16(*a.first, *b.first) < 0;
    };
    if (!std::is_sorted(members.begin(), members.end(), before)) {
      std::sort(members.begin(), members.end(), before);
    }
    out_.push_back('{');
    bool first = true;
    for (const auto& [name, member] : members) {
      if (!first) out_.push_back(',');
      first = false;
      path_.push_back({name, 0});
      if (!AppendCanonicalString<false>(out_, *name)) {
        return Fail(NotCanonicalizable(
            "member name is not valid Unicode or holds a noncharacter", PathPointer()));
      }
      out_.push_back(':');
      if (!WriteValue(*member, depth)) return false;
      path_.pop_back();
    }
    out_.push_back('}');
    return true;
  }

  std::string PathPointer() const {
    std::string pointer;
    for (const Step& step : path_) {
      pointer.push_back('/');
      pointer += step.name != nullptr ? internal::EscapePointerToken(*step.name)
                                      : std::to_string(step.index);
    }
    return pointer;
  }

  bool TooDeep() {
    return Fail(MakeError("json.too_deep", "nesting exceeds the depth limit", PathPointer()));
  }

  bool Fail(Error error) {
    error_ = Status(std::move(error));
    return false;
  }

  std::string& out_;
  std::vector<Step> path_;
  Status error_;
};

// ---------------------------------------------------------------------------------------
// CanonicalizeText: the parser's events write canonical tokens straight into one buffer in
// document order; only the order of object members is still wrong there. When an object
// closes with its members out of order:
//  - a small one (up to kInPlaceLimit bytes, no large reordered object inside) is permuted
//    in place through a scratch copy while it is still in cache;
//  - a larger one leaves a record of its members' byte spans in canonical order, and a
//    final pass copies the buffer with those objects' members rearranged.
// So a byte is copied at most a few times, and nothing is allocated per value.

// Where the finished canonical bytes go: a string (CanonicalizeText) or SHA-256
// (CanonicalSha256Text). Both take the same append calls as ByteBuffer.
class StringSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void push_back(char c) { out_.push_back(c); }
  void append(const char* bytes, std::size_t count) { out_.append(bytes, count); }

 private:
  std::string& out_;
};

// Feeds SHA-256 in blocks: the final pass emits many short pieces (a brace, a comma, one
// member), which are gathered here; long ones go to the hash without a copy.
class HashSink {
 public:
  explicit HashSink(base::Sha256Stream& hash) : hash_(hash) {}
  void push_back(char c) {
    if (used_ == kBlock) Flush();
    block_[used_++] = c;
  }
  void append(const char* bytes, std::size_t count) {
    if (count >= kDirect) {
      Flush();
      hash_.Update(std::string_view(bytes, count));
      return;
    }
    if (kBlock - used_ < count) Flush();
    CopyBytes(block_.data() + used_, bytes, count);
    used_ += count;
  }
  void Flush() {
    hash_.Update(std::string_view(block_.data(), used_));
    used_ = 0;
  }

 private:
  static constexpr std::size_t kBlock = 16 * 1024;
  static constexpr std::size_t kDirect = 1024;
  base::Sha256Stream& hash_;
  std::array<char, kBlock> block_;
  std::size_t used_ = 0;
};

class CanonicalTextWriter {
 public:
  explicit CanonicalTextWriter(std::string_view input)
      : input_end_(input.data() + input.size()) {
    // Canonical text is rarely longer than its source (only number spellings like 1e20 and
    // some escapes grow); the buffer grows if it is.
    out_.reserve(input.size() + 64);
  }

  bool OnBeginObject() {
    Separate();
    objects_.push_back({out_.size(), members_.size(), reordered_.size(), keys_.size()});
    out_.push_back('{');
    first_in_container_ = true;
    return true;
  }

  bool OnKey(const internal::StringToken& token) {
    Separate();
    const std::string_view name = token.text;
    const std::size_t begin = out_.size();
    if (!AppendString(token)) return Refuse("member name holds a noncharacter");
    // Escaping only lengthens, so an output of the same length is the name itself: it is
    // read back from out_ when the members are ordered. Only escaped names are kept aside.
    if (out_.size() - begin == name.size() + 2) {
      members_.push_back({begin, kInOutput, name.size()});
    } else {
      members_.push_back({begin, keys_.size(), name.size()});
      keys_.append(name);
    }
    out_.push_back(':');
    first_in_container_ = true;  // the value follows without a comma
    return true;
  }

  bool OnEndObject() {
    const OpenObject object = objects_.back();
    objects_.pop_back();
    if (members_.size() - object.first_member > 1) {
      out_.ZeroSlack(kChunk);  // for MemberPrefix and CopyChunks
      if (!OrderMembers(object)) return false;
    }
    members_.resize(object.first_member);
    keys_.resize(object.keys_size);
    out_.push_back('}');
    first_in_container_ = false;
    return true;
  }

  bool OnBeginArray() {
    Separate();
    out_.push_back('[');
    first_in_container_ = true;
    return true;
  }

  bool OnEndArray() {
    out_.push_back(']');
    first_in_container_ = false;
    return true;
  }

  bool OnString(const internal::StringToken& token) {
    Separate();
    first_in_container_ = false;
    if (!AppendString(token)) return Refuse("string holds a noncharacter");
    return true;
  }

  bool OnNumber(const internal::NumberToken& token) {
    Separate();
    first_in_container_ = false;
    if (token.as_written) {
      AppendInput(token.text.data(), token.text.size());
    } else {
      AppendEs6Number(out_, token.value);
    }
    return true;
  }

  bool OnBool(bool flag) {
    Separate();
    first_in_container_ = false;
    if (flag) out_.append("true", 4);
    else out_.append("false", 5);
    return true;
  }

  bool OnNull() {
    Separate();
    first_in_container_ = false;
    out_.append("null", 4);
    return true;
  }

  std::pair<const char*, const char*> failure() const { return failure_; }

  // Writes the canonical bytes to sink, once the parser has finished without error.
  template <class Sink>
  void Emit(Sink& sink) const {
    if (reordered_.empty()) {
      sink.append(out_.data(), out_.size());
      return;
    }
    EmitRange(sink, 0, out_.size(), 0, reordered_.size());
  }
  std::size_t size() const { return out_.size(); }

 private:
  // Objects up to this size are permuted in place when they close.
  static constexpr std::size_t kInPlaceLimit = 4 * 1024;

  struct OpenObject {
    std::size_t begin;             // offset of '{' in out_
    std::size_t first_member;      // index into members_
    std::size_t first_reordered;   // reordered_.size() when the object opened
    std::size_t keys_size;         // keys_.size() when the object opened
  };
  // key_offset of a member whose name is written unescaped right after its quote in out_.
  static constexpr std::size_t kInOutput = static_cast<std::size_t>(-1);
  struct Member {
    std::size_t begin;       // offset of the name's opening quote in out_
    std::size_t key_offset;  // into keys_, or kInOutput
    std::size_t key_length;
  };
  // The bytes of a member of a reordered object.
  struct Span {
    std::size_t begin;
    std::size_t end;
  };
  // An object whose members are copied in canonical order by the final pass: out_[begin,
  // end) holds "{...}", spans_[first_span, first_span + span_count) its members. Records are
  // kept in document order of their '{' (an object's record precedes those inside it).
  struct Reordered {
    std::size_t begin;
    std::size_t end;
    std::size_t first_span;
    std::size_t span_count;
  };

  // Whether a comma comes is as good as random to a branch predictor.
  [[gnu::always_inline]] void Separate() { out_.PushBackIf(',', !first_in_container_); }

  // Appends a piece of the input: one that fits a chunk as a chunk (see CopyChunks), unless
  // it is too near the input's end for its read.
  [[gnu::always_inline]] void AppendInput(const char* bytes, std::size_t count) {
    if (count <= kChunk && input_end_ - bytes >= static_cast<std::ptrdiff_t>(kChunk)) {
      out_.AppendChunks(bytes, count);
    } else {
      out_.append(bytes, count);
    }
  }

  // A string written with minimal escapes (all strings without any, and what JSON
  // serializers write) is its own canonical form, if it holds no noncharacter: the bytes
  // as written are copied. Others are escaped again from their decoded text.
  bool AppendString(const internal::StringToken& token) {
    if (!token.minimally_escaped) return AppendCanonicalString<true>(out_, token.text);
    if (token.may_hold_noncharacter && HoldsNoncharacter(token.written)) return false;
    // With the quotes around it in the input.
    AppendInput(token.written.data() - 1, token.written.size() + 2);
    return true;
  }

  // A member of the object being ordered: the first eight bytes of its name (zero-padded,
  // big-endian) and its index among the object's members.
  struct Ordered {
    std::uint64_t prefix;
    std::uint32_t index;
  };

  // A prefix's bytes mapped to an order in which prefixes compare as their names do in
  // UTF-16 (see CompareUtf16): the four-byte leads F0..F4 (surrogates in UTF-16) move
  // below EE and EF (U+E000..U+FFFF), every other byte keeps its place. Where two names
  // first differ, both bytes begin a code point or neither does, so the map decides there
  // as CompareUtf16 does.
  static constexpr std::array<std::uint8_t, 256> kUtf16ByteOrder = [] {
    std::array<std::uint8_t, 256> order{};
    for (int c = 0; c < 256; ++c) order[c] = static_cast<std::uint8_t>(c);
    for (int c = 0xF0; c <= 0xF4; ++c) order[c] = static_cast<std::uint8_t>(c - 2);
    order[0xEE] = 0xF3;
    order[0xEF] = 0xF4;
    return order;
  }();

  static std::uint64_t ToUtf16Order(std::uint64_t prefix) {
    std::uint64_t mapped = 0;
    for (int shift = 56; shift >= 0; shift -= 8) {
      mapped = (mapped << 8) | kUtf16ByteOrder[(prefix >> shift) & 0xFF];
    }
    return mapped;
  }

  static std::uint64_t NamePrefix(std::string_view name) {
    const std::size_t length = std::min<std::size_t>(name.size(), 8);
    std::uint64_t prefix = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      const auto byte = i < length ? static_cast<unsigned char>(name[i]) : 0u;
      prefix = (prefix << 8) | kUtf16ByteOrder[byte];
    }
    return prefix;
  }

  // NamePrefix of a member, for a name written in out_ with one load: out_ has eight
  // readable bytes from the start of every name (see OnEndObject), those past the name are
  // masked off.
  std::uint64_t MemberPrefix(const Member& member) const {
    if (member.key_offset != kInOutput) return NamePrefix(Key(member));
    std::uint64_t word;
    std::memcpy(&word, out_.data() + member.begin + 1, sizeof word);
    static_assert(std::endian::native == std::endian::little);
    // The high min(length, 8) bytes, looked up rather than branched on.
    static constexpr std::uint64_t kKeep[9] = {
        0,
        0xFF00000000000000ull,
        0xFFFF000000000000ull,
        0xFFFFFF0000000000ull,
        0xFFFFFFFF00000000ull,
        0xFFFFFFFFFF000000ull,
        0xFFFFFFFFFFFF0000ull,
        0xFFFFFFFFFFFFFF00ull,
        0xFFFFFFFFFFFFFFFFull};
    const std::uint64_t prefix =
        __builtin_bswap64(word) & kKeep[std::min<std::size_t>(member.key_length, 8)];
    // A byte is EE or above if its high bit is set and its low seven bits, plus 0x12, carry
    // into the high bit (no carry crosses bytes: 0x7F + 0x12 < 0x100). Only then is the
    // map needed.
    constexpr std::uint64_t kLow = 0x7F7F7F7F7F7F7F7Full;
    constexpr std::uint64_t kHigh = 0x8080808080808080ull;
    if ((((prefix & kLow) + 0x1212121212121212ull) & prefix & kHigh) != 0) {
      return ToUtf16Order(prefix);
    }
    return prefix;
  }

  // Names of the open objects' members stay where they were written: an object is only
  // rearranged when it closes, and what closes later lies after them.
  std::string_view Key(const Member& member) const {
    if (member.key_offset == kInOutput) {
      return std::string_view(out_.data() + member.begin + 1, member.key_length);
    }
    return std::string_view(keys_).substr(member.key_offset, member.key_length);
  }

  // Up to this many members, an object whose name prefixes all differ is ordered by
  // counting, for each member, the prefixes below its own: without branches on the
  // comparisons, whose outcomes a branch predictor cannot learn.
  static constexpr std::size_t kRankLimit = 16;

  enum class RankResult { kInOrder, kRanked, kTie };

  // Orders order_[0, count) by prefix when all prefixes differ, by counting for each the
  // prefixes below it. The comparisons run over kWidth entries whatever count is, those
  // past count padded with a prefix above any name's (no UTF-8 byte is FF), so that the
  // inner loop unrolls and has no exit to predict.
  template <std::size_t kWidth>
  RankResult RankByPrefix(std::size_t count) {
    std::uint64_t prefixes[kWidth];
    for (std::size_t j = 0; j < kWidth; ++j) {
      prefixes[j] = j < count ? order_[j].prefix : ~std::uint64_t{0};
    }
    std::uint8_t rank[kWidth];
    unsigned ties = 0;
    unsigned moved = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t own = prefixes[i];
      unsigned below = 0;
      unsigned equal = 0;
      for (std::size_t j = 0; j < kWidth; ++j) {
        // The borrow of a subtraction, which compilers keep as a flag instead of turning
        // "a < b ? 1 : 0" into a branch.
        std::uint64_t difference;
        below += __builtin_sub_overflow(prefixes[j], own, &difference) ? 1u : 0u;
        equal += difference == 0 ? 1u : 0u;
      }
      rank[i] = static_cast<std::uint8_t>(below);
      ties |= equal - 1;
      moved |= below ^ static_cast<unsigned>(i);
    }
    if (ties != 0) return RankResult::kTie;
    if (moved == 0) return RankResult::kInOrder;
    for (std::size_t i = 0; i < count; ++i) order_[rank[i]].index = static_cast<std::uint32_t>(i);
    return RankResult::kRanked;
  }

  bool OrderMembers(const OpenObject& object) {
    const Member* first = members_.data() + object.first_member;
    const std::size_t count = members_.size() - object.first_member;
    // Most names differ in their first eight bytes: compared as one big-endian integer of
    // bytes in UTF-16 order (MemberPrefix), they order as the names do; on a tie, the
    // names themselves are compared.
    order_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      order_[i] = {MemberPrefix(first[i]), static_cast<std::uint32_t>(i)};
    }
    bool ranked = false;
    if (count <= kRankLimit) {
      const RankResult result =
          count <= 8 ? RankByPrefix<8>(count) : RankByPrefix<kRankLimit>(count);
      if (result == RankResult::kInOrder) return true;
      ranked = result == RankResult::kRanked;
    }
    if (!ranked) {
      const auto compare = [&](const Ordered& a, const Ordered& b) {
        if (a.prefix != b.prefix) return a.prefix < b.prefix ? -1 : 1;
        return CompareUtf16(Key(first[a.index]), Key(first[b.index]));
      };
      bool sorted = true;
      for (std::size_t i = 1; i < count; ++i) {
        const int order = compare(order_[i - 1], order_[i]);
        if (order == 0) return Duplicate();
        if (order > 0) sorted = false;
      }
      if (sorted) return true;
      std::sort(order_.begin(), order_.end(),
                [&](const Ordered& a, const Ordered& b) { return compare(a, b) < 0; });
      for (std::size_t i = 1; i < count; ++i) {
        if (compare(order_[i - 1], order_[i]) == 0) return Duplicate();
      }
    }
    // A member ends at the comma before the next one; the last one at the current end.
    const std::size_t end = out_.size();
    auto span_end = [&](std::uint32_t index) {
      return index + 1 < count ? first[index + 1].begin - 1 : end;
    };
    const bool has_records_inside = reordered_.size() != object.first_reordered;
    if (!has_records_inside && end - object.begin <= kInPlaceLimit) {
      const std::size_t members_begin = object.begin + 1;
      scratch_.clear();
      scratch_.reserve(kInPlaceLimit + kChunk);  // for CopyChunks
      scratch_.append(out_.data() + members_begin, end - members_begin);
      char* write = out_.data() + members_begin;
      for (std::size_t i = 0; i < count; ++i) {
        if (i != 0) *write++ = ',';
        const std::uint32_t index = order_[i].index;
        const std::size_t length = span_end(index) - first[index].begin;
        CopyChunks(write, scratch_.data() + (first[index].begin - members_begin), length);
        write += length;
      }
      return true;
    }
    // The record must precede the records of the objects inside it: insert it before them.
    const Reordered record{object.begin, end + 1, spans_.size(), count};
    reordered_.insert(reordered_.begin() + static_cast<std::ptrdiff_t>(object.first_reordered),
                      record);
    for (const Ordered& member : order_) {
      spans_.push_back({first[member.index].begin, span_end(member.index)});
    }
    return true;
  }

  // Index of the first record from `from` on whose object starts at or after offset.
  std::size_t FirstReorderedAt(std::size_t offset, std::size_t from) const {
    return static_cast<std::size_t>(
        std::lower_bound(reordered_.begin() + static_cast<std::ptrdiff_t>(from), reordered_.end(),
                         offset, [](const Reordered& r, std::size_t at) { return r.begin < at; }) -
        reordered_.begin());
  }

  // Copies out_[begin, end), whose records are reordered_[first, last), rearranging every
  // reordered object in it.
  template <class Sink>
  void EmitRange(Sink& result, std::size_t begin, std::size_t end, std::size_t first,
                 std::size_t last) const {
    std::size_t position = begin;
    std::size_t next = first;
    while (next < last) {
      const Reordered& object = reordered_[next];
      result.append(out_.data() + position, object.begin - position);
      result.push_back('{');
      for (std::size_t i = 0; i < object.span_count; ++i) {
        if (i != 0) result.push_back(',');
        const Span& span = spans_[object.first_span + i];
        const std::size_t span_first = FirstReorderedAt(span.begin, next + 1);
        EmitRange(result, span.begin, span.end, span_first, FirstReorderedAt(span.end, span_first));
      }
      result.push_back('}');
      position = object.end;
      // Skip the records inside this object: they were emitted through its spans.
      ++next;
      while (next < last && reordered_[next].begin < object.end) ++next;
    }
    result.append(out_.data() + position, end - position);
  }

  bool Duplicate() {
    failure_ = {"json.duplicate_key", "duplicate member name"};
    return false;
  }

  bool Refuse(const char* message) {
    failure_ = {"json.not_canonicalizable", message};
    return false;
  }

  const char* input_end_;
  ByteBuffer out_;
  bool first_in_container_ = true;
  std::vector<OpenObject> objects_;
  std::vector<Member> members_;
  std::string keys_;
  std::vector<Ordered> order_;
  ByteBuffer scratch_;
  std::vector<Span> spans_;
  std::vector<Reordered> reordered_;
  std::pair<const char*, const char*> failure_{"json.syntax", "invalid JSON"};
};

}  // namespace

std::string FormatEs6Number(double value) {
  std::string out;
  AppendEs6Number(out, value);
  return out;
}

Result<std::string> Canonicalize(const Value& value) {
  std::string out;
  ValueWriter writer(out);
  UDON_RETURN_IF_ERROR(writer.Write(value));
  return out;
}

namespace {

// Runs the strict parser into writer; on failure, the error CanonicalizeText reports.
Status WriteCanonicalText(std::string_view text, const ParseOptions& options,
                          CanonicalTextWriter& writer) {
  internal::Parser<CanonicalTextWriter> parser(text, options, writer);
  Status status = parser.Run();
  if (!status.ok()) {
    // The fast path finds a duplicate only when its object closes, and stops at a value
    // JCS cannot represent before the parser saw the rest; the DOM parser reports the
    // first parse error in document order. Report what Parse reports.
    Result<Value> parsed = Parse(text, options);
    if (!parsed.ok()) return std::move(parsed).error();
    return status;
  }
  return OkStatus();
}

}  // namespace

Result<std::string> CanonicalizeText(std::string_view text, const ParseOptions& options) {
  CanonicalTextWriter writer(text);
  UDON_RETURN_IF_ERROR(WriteCanonicalText(text, options, writer));
  std::string result;
  result.reserve(writer.size());
  StringSink sink(result);
  writer.Emit(sink);
  return result;
}

Result<std::string> CanonicalSha256(const Value& value) {
  UDON_ASSIGN_OR_RETURN(const std::string canonical, Canonicalize(value));
  return base::Sha256Hex(canonical);
}

Result<std::string> CanonicalSha256Text(std::string_view text, const ParseOptions& options) {
  CanonicalTextWriter writer(text);
  UDON_RETURN_IF_ERROR(WriteCanonicalText(text, options, writer));
  base::Sha256Stream hash;
  HashSink sink(hash);
  writer.Emit(sink);
  sink.Flush();
  return hash.FinishHex();
}

}  // namespace udon::json
