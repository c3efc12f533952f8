#include "json/display.h"

#include <algorithm>
#include <cstdio>

#include "json/internal/parser.h"

namespace udon::json {
namespace {

struct Range {
  char32_t first, last;
};

// Code points a reader cannot see, or that change how the text around them reads, which a
// small table can name without the Unicode database. Sorted; docs/contract.md 7.9 lists
// the same classes.
constexpr Range kHidden[] = {
    {0x0000, 0x001F},    // C0 controls (newline and tab: see LineBreaks)
    {0x007F, 0x009F},    // DEL and the C1 controls
    {0x00AD, 0x00AD},    // soft hyphen
    {0x034F, 0x034F},    // combining grapheme joiner
    {0x0600, 0x0605},    // Arabic prepended format characters (Cf)
    {0x061C, 0x061C},    // Arabic letter mark (bidi)
    {0x06DD, 0x06DD},    // Arabic end of ayah (Cf)
    {0x070F, 0x070F},    // Syriac abbreviation mark (Cf)
    {0x0890, 0x0891},    // Arabic pound and piastre marks above (Cf)
    {0x08E2, 0x08E2},    // Arabic disputed end of ayah (Cf)
    {0x115F, 0x1160},    // Hangul choseong and jungseong fillers (blank)
    {0x17B4, 0x17B5},    // Khmer inherent vowels (invisible)
    {0x180B, 0x180F},    // Mongolian variation selectors and vowel separator
    {0x200B, 0x200F},    // zero width space, non-joiner, joiner; LRM, RLM
    {0x2028, 0x202E},    // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
    {0x2060, 0x206F},    // word joiner, invisible operators, LRI, RLI, FSI, PDI, deprecated
    {0x3164, 0x3164},    // Hangul filler (blank)
    {0xE000, 0xF8FF},    // private use area
    {0xFDD0, 0xFDEF},    // noncharacters
    {0xFE00, 0xFE0F},    // variation selectors
    {0xFEFF, 0xFEFF},    // zero width no-break space (byte order mark)
    {0xFFA0, 0xFFA0},    // halfwidth Hangul filler (blank)
    {0xFFF0, 0xFFFB},    // unassigned specials; interlinear annotation controls
    {0x110BD, 0x110BD},  // Kaithi number sign (Cf)
    {0x110CD, 0x110CD},  // Kaithi number sign above (Cf)
    {0x13430, 0x1343F},  // Egyptian hieroglyph format controls
    {0x1BCA0, 0x1BCA3},  // shorthand format controls
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0x40000, 0xDFFFF},  // planes 4 to 13: nothing assigned
    {0xE0000, 0xEFFFF},  // plane 14: tags, variation selectors supplement, unassigned
    {0xF0000, 0x10FFFF}, // planes 15 and 16: private use
};

void AppendMarker(std::string& out, const char* format, unsigned value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, format, value);
  out += buffer;
}

}  // namespace

void HiddenCharacters::Add(const HiddenCharacters& other) {
  code_points.insert(code_points.end(), other.code_points.begin(), other.code_points.end());
  invalid_bytes += other.invalid_bytes;
}

bool IsHiddenCodePoint(char32_t cp) {
  if ((cp & 0xFFFE) == 0xFFFE) return true;  // U+xFFFE and U+xFFFF of every plane
  const Range* range = std::upper_bound(std::begin(kHidden), std::end(kHidden), cp,
                                        [](char32_t value, const Range& r) { return value < r.first; });
  return range != std::begin(kHidden) && cp <= (range - 1)->last;
}

std::string CodePointName(char32_t cp) {
  std::string name;
  AppendMarker(name, "U+%04X", static_cast<unsigned>(cp));
  return name;
}

namespace {

// The one walk over a text that decides what is hidden: `printable(bytes)` for a code point
// shown as it is, `code_point(cp)` for a hidden one, `invalid(byte)` for a byte that is not
// well-formed UTF-8. ForDisplay and DisplaySegments differ only in what they build.
template <typename Printable, typename CodePoint, typename Invalid>
void WalkForDisplay(std::string_view text, LineBreaks breaks, Printable printable, CodePoint code_point,
                    Invalid invalid) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const std::size_t n = internal::Utf8SequenceLength(p, end);
    if (n == 0) {  // not UTF-8 (a path, say): named, never passed to the terminal
      invalid(*p);
      ++p;
      continue;
    }
    char32_t cp = n == 1 ? p[0] : p[0] & (0xFF >> (n + 1));
    for (std::size_t i = 1; i < n; ++i) cp = (cp << 6) | (p[i] & 0x3F);
    const bool kept_break = breaks == LineBreaks::kKeep && (cp == '\n' || cp == '\t');
    if (IsHiddenCodePoint(cp) && !kept_break) {
      code_point(cp);
    } else {
      printable(std::string_view(reinterpret_cast<const char*>(p), n));
    }
    p += n;
  }
}

}  // namespace

DisplayText ForDisplay(std::string_view text, LineBreaks breaks) {
  DisplayText shown;
  shown.text.reserve(text.size());
  WalkForDisplay(
      text, breaks, [&](std::string_view bytes) { shown.text.append(bytes); },
      [&](char32_t cp) {
        shown.text += "<" + CodePointName(cp) + ">";
        shown.hidden.code_points.push_back(cp);
      },
      [&](unsigned char byte) {
        AppendMarker(shown.text, "<0x%02X>", byte);
        ++shown.hidden.invalid_bytes;
      });
  return shown;
}

std::vector<DisplaySegment> DisplaySegments(std::string_view text, LineBreaks breaks) {
  std::vector<DisplaySegment> segments;
  WalkForDisplay(
      text, breaks,
      [&](std::string_view bytes) {
        if (segments.empty() || segments.back().hidden) segments.push_back({});
        segments.back().text.append(bytes);
      },
      [&](char32_t cp) { segments.push_back({CodePointName(cp), true}); },
      [&](unsigned char byte) {
        DisplaySegment segment{{}, true};
        AppendMarker(segment.text, "0x%02X", byte);
        segments.push_back(std::move(segment));
      });
  return segments;
}

std::string HiddenNotice(const HiddenCharacters& hidden, std::string_view subject) {
  if (hidden.empty()) return {};
  constexpr std::size_t kNamed = 8;
  std::string notice(subject);
  notice += " held";
  if (!hidden.code_points.empty()) {
    const std::size_t count = hidden.code_points.size();
    notice += " " + std::to_string(count) + (count == 1 ? " hidden character (" : " hidden characters (");
    std::vector<char32_t> distinct;
    for (char32_t cp : hidden.code_points) {
      if (std::find(distinct.begin(), distinct.end(), cp) == distinct.end()) distinct.push_back(cp);
    }
    for (std::size_t i = 0; i < distinct.size() && i < kNamed; ++i) {
      notice += (i == 0 ? "" : ", ") + CodePointName(distinct[i]);
    }
    notice += distinct.size() > kNamed ? ", ...)" : ")";
  }
  if (hidden.invalid_bytes > 0) {
    if (!hidden.code_points.empty()) notice += " and";
    notice += " " + std::to_string(hidden.invalid_bytes) +
              (hidden.invalid_bytes == 1 ? " byte that is not UTF-8" : " bytes that are not UTF-8");
  }
  return notice;
}

std::string LineForPeople(std::string_view line, std::string_view subject) {
  DisplayText shown = ForDisplay(line);
  shown.text += '\n';
  if (!shown.hidden.empty()) shown.text += "udon-mcp: note: " + HiddenNotice(shown.hidden, subject) + "\n";
  return shown.text;
}

}  // namespace udon::json
