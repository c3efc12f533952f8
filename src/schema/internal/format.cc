// Format checks after RFC 3339 (dates, times, durations), RFC 5321 (email), RFC 1123
// (hostname), RFC 2673/4291 (IP addresses), RFC 3986/3987 (URI/IRI), RFC 6570 (URI
// templates), RFC 4122 (UUID), RFC 6901 (JSON pointer) and ECMA-262 (regex).
#include "schema/internal/format.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <string>

#include "schema/internal/regex.h"

namespace udon::schema::internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// n ASCII digits at text[at...] as a number, or -1.
int Digits(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!IsDigit(text[i])) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

bool CheckDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  int year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int last = kDays[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
  return day <= last;
}

bool CheckTime(std::string_view s) {
  if (s.size() < 9 || s[2] != ':' || s[5] != ':') return false;
  int hour = Digits(s, 0, 2), minute = Digits(s, 3, 2), second = Digits(s, 6, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) {
    return false;
  }
  std::size_t at = 8;
  if (at < s.size() && s[at] == '.') {
    std::size_t start = ++at;
    while (at < s.size() && IsDigit(s[at])) ++at;
    if (at == start) return false;
  }
  if (at >= s.size()) return false;
  int offset_minutes = 0;
  if (s[at] == 'Z' || s[at] == 'z') {
    if (at + 1 != s.size()) return false;
  } else if (s[at] == '+' || s[at] == '-') {
    if (s.size() != at + 6 || s[at + 3] != ':') return false;
    int offset_hour = Digits(s, at + 1, 2), offset_minute = Digits(s, at + 4, 2);
    if (offset_hour < 0 || offset_hour > 23 || offset_minute < 0 || offset_minute > 59) {
      return false;
    }
    offset_minutes = (offset_hour * 60 + offset_minute) * (s[at] == '+' ? 1 : -1);
  } else {
    return false;
  }
  if (second == 60) {
    // A leap second exists only at 23:59:60 UTC.
    int utc = ((hour * 60 + minute - offset_minutes) % 1440 + 1440) % 1440;
    return utc == 23 * 60 + 59;
  }
  return true;
}

bool CheckDateTime(std::string_view s) {
  if (s.size() < 11 || (s[10] != 'T' && s[10] != 't')) return false;
  return CheckDate(s.substr(0, 10)) && CheckTime(s.substr(11));
}

bool CheckDuration(std::string_view s) {
  if (s.size() < 2 || s[0] != 'P') return false;
  std::size_t at = 1;
  static constexpr std::string_view kDateUnits = "YMD";
  static constexpr std::string_view kTimeUnits = "HMS";
  bool in_time = false;
  bool any = false;
  bool weeks = false;
  std::size_t next_unit = 0;
  bool time_has_element = false;
  while (at < s.size()) {
    if (s[at] == 'T') {
      if (in_time || weeks) return false;
      in_time = true;
      next_unit = 0;
      ++at;
      continue;
    }
    std::size_t start = at;
    while (at < s.size() && IsDigit(s[at])) ++at;
    if (at == start || at >= s.size()) return false;
    char unit = s[at++];
    if (unit == 'W' && !in_time) {
      if (any) return false;
      weeks = true;
      any = true;
      continue;
    }
    if (weeks) return false;
    std::string_view units = in_time ? kTimeUnits : kDateUnits;
    // After the first unit of a part, each unit must be the next one: P1Y2D lacks months.
    std::size_t position = units.find(unit, next_unit);
    if (position == std::string_view::npos) return false;
    bool part_started = in_time ? time_has_element : any;
    if (part_started && position != next_unit) return false;
    next_unit = position + 1;
    any = true;
    if (in_time) time_has_element = true;
  }
  return any && (!in_time || time_has_element);
}

bool CheckIpv4(std::string_view s) {
  int parts = 0;
  std::size_t at = 0;
  while (true) {
    std::size_t start = at;
    while (at < s.size() && IsDigit(s[at])) ++at;
    std::size_t length = at - start;
    if (length == 0 || length > 3 || (length > 1 && s[start] == '0')) return false;
    if (Digits(s, start, length) > 255) return false;
    ++parts;
    if (at == s.size()) break;
    if (s[at] != '.' || parts == 4) return false;
    ++at;
  }
  return parts == 4;
}

bool CheckIpv6(std::string_view s) {
  if (s.empty()) return false;
  std::size_t double_colon = s.find("::");
  if (double_colon != std::string_view::npos && s.find("::", double_colon + 1) != std::string_view::npos) {
    return false;
  }
  auto count_groups = [](std::string_view part, bool allow_ipv4_tail, int* groups) {
    *groups = 0;
    if (part.empty()) return true;
    std::size_t at = 0;
    while (true) {
      std::size_t end = part.find(':', at);
      std::string_view group = part.substr(at, end == std::string_view::npos ? part.size() - at : end - at);
      if (end == std::string_view::npos && allow_ipv4_tail && group.find('.') != std::string_view::npos) {
        if (!CheckIpv4(group)) return false;
        *groups += 2;
        return true;
      }
      if (group.empty() || group.size() > 4) return false;
      for (char c : group) {
        if (!IsHexDigit(c)) return false;
      }
      ++*groups;
      if (end == std::string_view::npos) return true;
      at = end + 1;
    }
  };
  int head = 0, tail = 0;
  if (double_colon == std::string_view::npos) {
    return count_groups(s, true, &head) && head == 8;
  }
  if (!count_groups(s.substr(0, double_colon), false, &head)) return false;
  if (!count_groups(s.substr(double_colon + 2), true, &tail)) return false;
  return head + tail <= 7;
}

bool CheckHostname(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t at = 0;
  while (true) {
    std::size_t end = s.find('.', at);
    std::string_view label = s.substr(at, end == std::string_view::npos ? s.size() - at : end - at);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!IsAlpha(c) && !IsDigit(c) && c != '-') return false;
    }
    // "--" in positions 3-4 is reserved for A-labels ("xn--").
    if (label.size() >= 4 && label[2] == '-' && label[3] == '-' &&
        !((label[0] == 'x' || label[0] == 'X') && (label[1] == 'n' || label[1] == 'N'))) {
      return false;
    }
    if (end == std::string_view::npos) return true;
    at = end + 1;
  }
}

bool IsAtext(char c) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-/=?^_`{|}~";
  return IsAlpha(c) || IsDigit(c) || kSpecials.find(c) != std::string_view::npos;
}

bool CheckEmail(std::string_view s) {
  std::size_t at = s.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 >= s.size()) return false;
  std::string_view local = s.substr(0, at);
  std::string_view domain = s.substr(at + 1);
  if (local.front() == '"') {
    if (local.size() < 2 || local.back() != '"') return false;
    for (std::size_t i = 1; i + 1 < local.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(local[i]);
      if (c == '\\') {
        if (++i + 1 >= local.size()) return false;
      } else if (c == '"' || c < 0x20 || c == 0x7F) {
        return false;
      }
    }
  } else {
    if (local.front() == '.' || local.back() == '.' ||
        local.find("..") != std::string_view::npos) {
      return false;
    }
    for (char c : local) {
      if (c != '.' && !IsAtext(c)) return false;
    }
  }
  if (domain.front() == '[') {
    if (domain.back() != ']') return false;
    std::string_view literal = domain.substr(1, domain.size() - 2);
    if (literal.rfind("IPv6:", 0) == 0) return CheckIpv6(literal.substr(5));
    return CheckIpv4(literal);
  }
  return CheckHostname(domain);
}

bool IsUnreserved(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
bool IsSubDelim(char c) {
  static constexpr std::string_view kSubDelims = "!$&'()*+,;=";
  return kSubDelims.find(c) != std::string_view::npos;
}

// Characters of a URI component: unreserved, pct-encoded, sub-delims and extra; with iri,
// any non-ASCII byte (ucschar in UTF-8).
bool CheckChars(std::string_view s, std::string_view extra, bool iri) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() + 0 || !IsHexDigit(s[i + 1]) || !IsHexDigit(s[i + 2])) return false;
      i += 2;
    } else if (!(IsUnreserved(c) || IsSubDelim(c) || extra.find(c) != std::string_view::npos ||
                 (iri && static_cast<unsigned char>(c) >= 0x80))) {
      return false;
    }
  }
  return true;
}

bool CheckAuthority(std::string_view authority, bool iri) {
  std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    if (!CheckChars(authority.substr(0, at), ":", iri)) return false;
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view literal = authority.substr(1, close - 1);
    if (literal.empty()) return false;
    if (literal[0] == 'v' || literal[0] == 'V') {
      if (!CheckChars(literal, ":", false)) return false;
    } else if (!CheckIpv6(literal)) {
      return false;
    }
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return false;
      for (char c : rest.substr(1)) {
        if (!IsDigit(c)) return false;
      }
    }
    return true;
  }
  std::size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos) {
    for (char c : authority.substr(colon + 1)) {
      if (!IsDigit(c)) return false;
    }
    host = authority.substr(0, colon);
  }
  return CheckChars(host, "", iri);
}

bool CheckUriGeneric(std::string_view s, bool require_scheme, bool iri) {
  std::size_t hash = s.find('#');
  if (hash != std::string_view::npos) {
    if (!CheckChars(s.substr(hash + 1), ":@/?", iri)) return false;
    s = s.substr(0, hash);
  }
  std::size_t question = s.find('?');
  if (question != std::string_view::npos) {
    if (!CheckChars(s.substr(question + 1), ":@/?", iri)) return false;
    s = s.substr(0, question);
  }
  std::size_t colon = s.find(':');
  std::size_t slash = s.find('/');
  bool has_scheme = colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash);
  if (has_scheme) {
    std::string_view scheme = s.substr(0, colon);
    if (scheme.empty() || !IsAlpha(scheme[0])) return false;
    for (char c : scheme) {
      if (!IsAlpha(c) && !IsDigit(c) && c != '+' && c != '-' && c != '.') return false;
    }
    s = s.substr(colon + 1);
  } else if (require_scheme) {
    return false;
  }
  if (s.rfind("//", 0) == 0) {
    std::size_t end = s.find('/', 2);
    if (end == std::string_view::npos) end = s.size();
    if (!CheckAuthority(s.substr(2, end - 2), iri)) return false;
    s = s.substr(end);
  }
  return CheckChars(s, ":@/", iri);
}

bool CheckUri(std::string_view s) { return CheckUriGeneric(s, true, false); }
bool CheckUriReference(std::string_view s) { return CheckUriGeneric(s, false, false); }
bool CheckIri(std::string_view s) { return CheckUriGeneric(s, true, true); }
bool CheckIriReference(std::string_view s) { return CheckUriGeneric(s, false, true); }

bool IsPercentEncoded(std::string_view s, std::size_t at) {
  return at + 2 < s.size() && s[at] == '%' && IsHexDigit(s[at + 1]) && IsHexDigit(s[at + 2]);
}

// RFC 6570 expression body: [operator] varspec *("," varspec), varspec = varname
// [":" max-length | "*"], varname = varchar *(["."] varchar).
bool CheckTemplateExpression(std::string_view body) {
  static constexpr std::string_view kOperators = "+#./;?&";
  if (!body.empty() && kOperators.find(body[0]) != std::string_view::npos) body.remove_prefix(1);
  std::size_t at = 0;
  while (true) {
    std::size_t name_start = at;
    bool after_dot = true;
    while (at < body.size()) {
      char c = body[at];
      if (IsAlpha(c) || IsDigit(c) || c == '_') {
        ++at;
        after_dot = false;
      } else if (IsPercentEncoded(body, at)) {
        at += 3;
        after_dot = false;
      } else if (c == '.' && !after_dot) {
        ++at;
        after_dot = true;
      } else {
        break;
      }
    }
    if (at == name_start || after_dot) return false;
    if (at < body.size() && body[at] == '*') {
      ++at;
    } else if (at < body.size() && body[at] == ':') {
      std::size_t digits_start = ++at;
      while (at < body.size() && IsDigit(body[at])) ++at;
      std::size_t digits = at - digits_start;
      if (digits == 0 || digits > 4 || body[digits_start] == '0') return false;
    }
    if (at == body.size()) return true;
    if (body[at] != ',') return false;
    ++at;
  }
}

bool CheckUriTemplate(std::string_view s) {
  static constexpr std::string_view kExcluded = " \"<>\\^`{|}";
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '{') {
      std::size_t close = s.find('}', i);
      if (close == std::string_view::npos) return false;
      if (!CheckTemplateExpression(s.substr(i + 1, close - i - 1))) return false;
      i = close;
    } else if (c == '%') {
      if (!IsPercentEncoded(s, i)) return false;
      i += 2;
    } else if (c < 0x20 || c == 0x7F || kExcluded.find(static_cast<char>(c)) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

bool CheckUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !IsHexDigit(s[i])) return false;
  }
  return true;
}

bool CheckJsonPointer(std::string_view s) {
  if (s.empty()) return true;
  if (s[0] != '/') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '~' && (i + 1 >= s.size() || (s[i + 1] != '0' && s[i + 1] != '1'))) return false;
  }
  return true;
}

bool CheckRelativeJsonPointer(std::string_view s) {
  std::size_t at = 0;
  while (at < s.size() && IsDigit(s[at])) ++at;
  if (at == 0 || (at > 1 && s[0] == '0')) return false;
  std::string_view rest = s.substr(at);
  if (rest == "#") return true;
  // An index manipulation ("+1", "-2") may follow the prefix.
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    std::size_t digits = 1;
    while (digits < rest.size() && IsDigit(rest[digits])) ++digits;
    if (digits == 1 || (digits > 2 && rest[1] == '0')) return false;
    rest = rest.substr(digits);
  }
  return CheckJsonPointer(rest);
}

bool CheckRegex(std::string_view s) {
  RegexLimits limits;
  return Regex::Compile(s, limits) != nullptr;
}

}  // namespace

FormatCheck FindFormatCheck(std::string_view name) {
  static constexpr std::pair<std::string_view, FormatCheck> kChecks[] = {
      {"date-time", CheckDateTime},
      {"date", CheckDate},
      {"time", CheckTime},
      {"duration", CheckDuration},
      {"email", CheckEmail},
      {"hostname", CheckHostname},
      {"ipv4", CheckIpv4},
      {"ipv6", CheckIpv6},
      {"uri", CheckUri},
      {"uri-reference", CheckUriReference},
      {"iri", CheckIri},
      {"iri-reference", CheckIriReference},
      {"uri-template", CheckUriTemplate},
      {"uuid", CheckUuid},
      {"json-pointer", CheckJsonPointer},
      {"relative-json-pointer", CheckRelativeJsonPointer},
      {"regex", CheckRegex},
  };
  for (const auto& [format, check] : kChecks) {
    if (format == name) return check;
  }
  return nullptr;
}

}  // namespace udon::schema::internal
