#include "manifest/pin_file.h"

#include <sstream>

namespace udon::manifest {

PinFile ParsePinFile(std::string_view text) {
  PinFile pin;
  std::istringstream words{std::string(text)};
  words >> pin.manifest_sha256;
  std::string line;
  std::getline(words, line);  // the rest of the first word's line
  while (std::getline(words, line)) {
    std::istringstream fields(line);
    std::string tag, server, digest, extra;
    if (fields >> tag >> server >> digest && tag == "entry" && !(fields >> extra)) pin.entries[server] = digest;
  }
  return pin;
}

std::string PinFileText(const PinFile& pin) {
  std::string text = pin.manifest_sha256 + "\n";
  for (const auto& [server, digest] : pin.entries) text += "entry " + server + " " + digest + "\n";
  return text;
}

}  // namespace udon::manifest
