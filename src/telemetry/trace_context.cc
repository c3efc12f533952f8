#include "telemetry/trace_context.h"

#include "base/random.h"

namespace udon::telemetry {
namespace {

bool IsLowerHex(std::string_view text, std::size_t size) {
  if (text.size() != size) return false;
  bool nonzero = false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero || size == 2;  // flags may be 00
}

std::string RandomId(std::size_t bytes) {
  for (;;) {
    auto hex = base::RandomHex(bytes);
    if (hex.ok() && IsLowerHex(*hex, bytes * 2)) return *hex;
    if (!hex.ok()) return std::string(bytes * 2 - 1, '0') + "1";  // CSPRNG gone: still a valid id
  }
}

}  // namespace

std::optional<TraceParent> ParseTraceParent(std::string_view text) {
  // version(2) - trace-id(32) - parent-id(16) - flags(2)
  constexpr std::size_t kLength = 55;
  if (text.size() < kLength || text[2] != '-' || text[35] != '-' || text[52] != '-') return std::nullopt;
  const std::string_view version = text.substr(0, 2);
  if (!IsLowerHex(version, 2) || version == "ff") return std::nullopt;
  if (version == "00" ? text.size() != kLength : (text.size() > kLength && text[kLength] != '-')) {
    return std::nullopt;
  }
  TraceParent parent;
  parent.trace_id = std::string(text.substr(3, 32));
  parent.span_id = std::string(text.substr(36, 16));
  const std::string_view flags = text.substr(53, 2);
  if (!IsLowerHex(parent.trace_id, 32) || !IsLowerHex(parent.span_id, 16) || !IsLowerHex(flags, 2)) {
    return std::nullopt;
  }
  const int low = flags[1] >= 'a' ? flags[1] - 'a' + 10 : flags[1] - '0';
  parent.sampled = (low & 1) != 0;
  return parent;
}

std::string FormatTraceParent(const TraceParent& parent) {
  return "00-" + parent.trace_id + "-" + parent.span_id + (parent.sampled ? "-01" : "-00");
}

bool IsPassableTraceState(std::string_view text) {
  if (text.empty() || text.size() > 512) return false;
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

std::string NewTraceId() { return RandomId(16); }
std::string NewSpanId() { return RandomId(8); }

// One getrandom for a call's ids, not one per id; an all-zero piece is drawn again alone.
std::vector<std::string> NewIds(std::initializer_list<std::size_t> sizes) {
  std::size_t total = 0;
  for (std::size_t size : sizes) total += size;
  auto hex = base::RandomHex(total);
  std::vector<std::string> ids;
  std::size_t at = 0;
  for (std::size_t size : sizes) {
    std::string id = hex.ok() ? hex->substr(at, size * 2) : std::string();
    ids.push_back(IsLowerHex(id, size * 2) ? std::move(id) : RandomId(size));
    at += size * 2;
  }
  return ids;
}

}  // namespace udon::telemetry
