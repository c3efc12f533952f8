// Test helpers: reading the shared test data as exact bytes.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace udon::json::testing {

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline std::string JcsData(const std::string& relative) {
  return ReadBytes(std::string(UDON_SHARED_DIR) + "/testdata/jcs/" + relative);
}

// "7b 22 ..." (whitespace-separated hex bytes) to bytes.
inline std::string FromHexDump(const std::string& dump) {
  std::istringstream in(dump);
  std::string out;
  std::string byte;
  while (in >> byte) out.push_back(static_cast<char>(std::stoi(byte, nullptr, 16)));
  return out;
}

}  // namespace udon::json::testing
