#include "json/diff.h"

#include "json/pointer.h"

namespace udon::json {
namespace {

bool ScalarsEqual(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    // The canonical form treats every number as an IEEE double.
    return a.get<double>() == b.get<double>();
  }
  return a == b;
}

bool SameKind(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return true;
  return a.type() == b.type();
}

void Walk(const Value& a, const Value& b, const std::string& pointer, std::vector<Difference>& out) {
  if (!SameKind(a, b)) {
    out.push_back({pointer, DifferenceKind::kChanged});
    return;
  }
  if (a.is_object()) {
    for (const auto& [name, value] : a.items()) {
      const std::string child = pointer + "/" + Pointer::EscapeToken(name);
      auto it = b.find(name);
      if (it == b.end()) out.push_back({child, DifferenceKind::kRemoved});
      else Walk(value, *it, child, out);
    }
    for (const auto& [name, value] : b.items()) {
      if (!a.contains(name)) {
        out.push_back({pointer + "/" + Pointer::EscapeToken(name), DifferenceKind::kAdded});
      }
    }
    return;
  }
  if (a.is_array()) {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) Walk(a[i], b[i], pointer + "/" + std::to_string(i), out);
    for (std::size_t i = common; i < a.size(); ++i) {
      out.push_back({pointer + "/" + std::to_string(i), DifferenceKind::kRemoved});
    }
    for (std::size_t i = common; i < b.size(); ++i) {
      out.push_back({pointer + "/" + std::to_string(i), DifferenceKind::kAdded});
    }
    return;
  }
  if (!ScalarsEqual(a, b)) out.push_back({pointer, DifferenceKind::kChanged});
}

}  // namespace

const char* DifferenceKindName(DifferenceKind kind) {
  switch (kind) {
    case DifferenceKind::kAdded: return "added";
    case DifferenceKind::kRemoved: return "removed";
    case DifferenceKind::kChanged: return "changed";
  }
  return "changed";
}

std::vector<Difference> Diff(const Value& before, const Value& after) {
  std::vector<Difference> out;
  Walk(before, after, "", out);
  return out;
}

bool CanonicallyEqual(const Value& a, const Value& b) {
  if (!SameKind(a, b)) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [name, value] : a.items()) {
      auto it = b.find(name);
      if (it == b.end() || !CanonicallyEqual(value, *it)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!CanonicallyEqual(a[i], b[i])) return false;
    }
    return true;
  }
  return ScalarsEqual(a, b);
}

}  // namespace udon::json
