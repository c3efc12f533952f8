#include "gate/evidence_key.h"

#include <array>
#include <cstdint>
#include <filesystem>

#include "gate/state.h"
#include "json/canonical.h"
#include "base/key_file.h"
#include "base/sha256.h"

namespace udon::gate {
namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr const char* kIdLabel = "udon-mcp evidence key id\n";

}  // namespace

EvidenceKey::EvidenceKey(std::string key) : key_(std::move(key)) {
  id_ = "k1:" + base::Sha256Hex(std::string(kIdLabel) + key_).substr(0, 16);
}

Result<EvidenceKey> EvidenceKey::LoadOrCreate(const std::string& state_dir) {
  std::error_code error;
  std::filesystem::create_directories(state_dir, error);
  if (error) return MakeError("state.unavailable", "the state directory cannot be created");
  const base::KeyFile file{state_dir + "/evidence.key", kKeyBytes, "state.unavailable", "the evidence key"};
  UDON_ASSIGN_OR_RETURN(std::string key, base::LoadOrCreateKeyFile(file, state_dir));
  return EvidenceKey(std::move(key));
}

std::string EvidenceKey::Digest(const json::Value& value) const {
  auto canonical = json::Canonicalize(value);
  if (!canonical.ok()) return {};
  const std::array<std::uint8_t, 32> mac = base::HmacSha256(key_, *canonical);
  return HexName(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

}  // namespace udon::gate
