// Text for terminals: strings from outside (a server's tool names, descriptions, schema
// member names, serverInfo) shown to a person with every code point they could not see,
// or that would reorder what they see, replaced by a visible marker. Raw bidi controls can
// make printed text read differently from its bytes ("Trojan Source"), and zero-width or
// tag characters can carry text no one sees; a reviewer must see them named.
//
// Every text output that shows such strings (diff, check, review --show, refusals) goes
// through ForDisplay; --json output keeps exact values (JSON escaping is unambiguous).
// docs/contract.md section 7.9 lists the classes, the marker and the notice.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace udon::json {

// Whether the context can show line breaks: a multi-line text (a description read on its
// own lines) keeps newline and tab; anything printed inside one line escapes them, so a
// value can never start a line of its own that looks like the tool's output.
enum class LineBreaks { kEscape, kKeep };

// What was hidden in one or more strings.
struct HiddenCharacters {
  std::vector<char32_t> code_points;  // each one replaced, in order, repeats included
  std::size_t invalid_bytes = 0;      // bytes that are not well-formed UTF-8

  bool empty() const { return code_points.empty() && invalid_bytes == 0; }
  void Add(const HiddenCharacters& other);
};

struct DisplayText {
  std::string text;         // printable: hidden code points as <U+XXXX>, bad bytes as <0xXX>
  HiddenCharacters hidden;  // what the markers stand for
};

// True for the code points ForDisplay replaces (newline and tab included; the LineBreaks
// choice keeps those two where a context allows them).
bool IsHiddenCodePoint(char32_t cp);

// "U+202E" (at least four hex digits, upper case).
std::string CodePointName(char32_t cp);

// `text` with every hidden code point replaced by "<U+XXXX>" and every byte that is not
// well-formed UTF-8 by "<0xXX>". Printable text (any script, emoji, combining marks) stays
// as it is.
DisplayText ForDisplay(std::string_view text, LineBreaks breaks = LineBreaks::kEscape);

// One piece of a text shown to a person, for a renderer that draws markers itself (the
// browser workbench): printable text as it is, or one hidden code point or invalid byte
// that ForDisplay replaces, named ("U+202E", "0xFF") without the angle brackets.
struct DisplaySegment {
  std::string text;
  bool hidden = false;
};

// The same decisions as ForDisplay, as segments: adjacent printable text in one segment,
// one segment per hidden code point or invalid byte. Joining the segments, with every
// hidden one as "<" + text + ">", gives ForDisplay(text, breaks).text.
std::vector<DisplaySegment> DisplaySegments(std::string_view text, LineBreaks breaks = LineBreaks::kEscape);

// The notice for people, e.g. "the new value held 3 hidden characters (U+202E, U+200B,
// U+E0041)": the count of replacements, then the distinct code points in order of first
// appearance (at most eight, then "..."), then "and N bytes that are not UTF-8" when any.
// Empty when nothing was hidden. `subject` names what held them ("this value").
std::string HiddenNotice(const HiddenCharacters& hidden, std::string_view subject = "this value");

// One line for people on a stream: ForDisplay(line) and a newline, then, when it hid
// anything, "udon-mcp: note: <subject> held N hidden characters (...)" on a line of its own.
std::string LineForPeople(std::string_view line, std::string_view subject);

}  // namespace udon::json
