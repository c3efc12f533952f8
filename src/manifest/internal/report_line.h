// One line of a text report for people (`diff`, `capture --update`). Manifest and server
// strings (keys, names, pointers, values) go through json::ForDisplay; each piece that hid
// something gets a note line below the line, naming the piece, so a reader sees what the
// markers stand for.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "json/display.h"

namespace udon::manifest::internal {

class ReportLine {
 public:
  explicit ReportLine(std::string indent) : indent_(std::move(indent)) {}
  ReportLine& Fixed(std::string_view text) {
    text_ += text;
    return *this;
  }
  ReportLine& Shown(std::string_view value, std::string_view what) {
    json::DisplayText shown = json::ForDisplay(value);
    text_ += shown.text;
    Note(shown.hidden, what);
    return *this;
  }
  void Note(const json::HiddenCharacters& hidden, std::string_view what) {
    if (!hidden.empty()) notes_ += indent_ + "  note: " + json::HiddenNotice(hidden, what) + "\n";
  }
  // Text printed below the line and above its notes (a description's line diff).
  void Below(std::string text) { below_ += std::move(text); }
  void AppendTo(std::string& out) const { out += indent_ + text_ + "\n" + below_ + notes_; }

 private:
  std::string indent_, text_, below_, notes_;
};

}  // namespace udon::manifest::internal
