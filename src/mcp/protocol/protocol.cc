#include "mcp/protocol/protocol.h"

#include <algorithm>
#include <array>

namespace udon::mcp {

namespace {

struct Revision {
  std::string_view version;
  bool streamable_http;  // false: stdio only
};

// The one revision table, newest first; the era follows from the version (EraOf).
constexpr std::array<Revision, 5> kRevisions = {{{kModernProtocolVersion, true},
                                                 {kLatestLegacyProtocolVersion, true},
                                                 {"2025-06-18", true},
                                                 {"2025-03-26", true},
                                                 {"2024-11-05", false}}};

std::vector<std::string> VersionsWhere(bool (*keep)(const Revision&)) {
  std::vector<std::string> out;
  for (const Revision& revision : kRevisions) {
    if (keep(revision)) out.emplace_back(revision.version);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> versions = VersionsWhere([](const Revision&) { return true; });
  return versions;
}

const std::vector<std::string>& ServedProtocolVersions() {
  static const std::vector<std::string> versions =
      VersionsWhere([](const Revision& revision) { return revision.streamable_http; });
  return versions;
}

bool IsSupportedProtocolVersion(std::string_view version) {
  return std::any_of(kRevisions.begin(), kRevisions.end(),
                     [version](const Revision& revision) { return revision.version == version; });
}

bool IsStdioOnlyProtocolVersion(std::string_view version) {
  return std::any_of(kRevisions.begin(), kRevisions.end(), [version](const Revision& revision) {
    return revision.version == version && !revision.streamable_http;
  });
}

bool IsModernProtocolVersion(std::string_view version) { return version == kModernProtocolVersion; }

bool IsLegacyProtocolVersion(std::string_view version) {
  return IsSupportedProtocolVersion(version) && !IsModernProtocolVersion(version);
}

Era EraOf(std::string_view version) { return IsModernProtocolVersion(version) ? Era::kModern : Era::kLegacy; }

const char* EraName(Era era) { return era == Era::kModern ? "modern" : "legacy"; }

namespace rpc_code {
bool IsModernError(int code) {
  return code == kHeaderMismatch || code == kMissingRequiredClientCapability ||
         code == kUnsupportedProtocolVersion;
}
}  // namespace rpc_code

namespace {

constexpr std::string_view kBase64Prefix = "=?base64?";
constexpr std::string_view kBase64Suffix = "?=";
constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool IsPlainHeaderValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.front() == ' ' || value.front() == '\t' || value.back() == ' ' || value.back() == '\t') {
    return false;
  }
  for (unsigned char c : value) {
    if (c != '\t' && (c < 0x20 || c > 0x7e)) return false;
  }
  // A plain value that looks encoded must be encoded, or it would decode on the far side.
  return !(value.size() >= kBase64Prefix.size() + kBase64Suffix.size() &&
           value.substr(0, kBase64Prefix.size()) == kBase64Prefix &&
           value.substr(value.size() - kBase64Suffix.size()) == kBase64Suffix);
}

std::string Base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kBase64Alphabet[(v >> shift) & 63]);
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

bool Unbase64(std::string_view text, std::string& out) {
  if (text.size() % 4 != 0) return false;
  out.clear();
  unsigned buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size()) return false;
      ++padding;
      continue;
    }
    if (padding > 0) return false;
    const auto index = kBase64Alphabet.find(c);
    if (index == std::string_view::npos) return false;
    buffer = (buffer << 6) | static_cast<unsigned>(index);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return true;
}

}  // namespace

std::string EncodeHeaderValue(std::string_view value) {
  if (IsPlainHeaderValue(value)) return std::string(value);
  return std::string(kBase64Prefix) + Base64(value) + std::string(kBase64Suffix);
}

bool DecodeHeaderValue(std::string_view header, std::string& value) {
  if (header.size() >= kBase64Prefix.size() + kBase64Suffix.size() &&
      header.substr(0, kBase64Prefix.size()) == kBase64Prefix &&
      header.substr(header.size() - kBase64Suffix.size()) == kBase64Suffix) {
    return Unbase64(header.substr(kBase64Prefix.size(),
                                  header.size() - kBase64Prefix.size() - kBase64Suffix.size()),
                    value);
  }
  value = std::string(header);
  return true;
}

}  // namespace udon::mcp
