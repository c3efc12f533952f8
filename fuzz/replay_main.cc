// A standalone main for fuzz targets: runs LLVMFuzzerTestOneInput once on every file named
// on the command line or found (recursively) in a named directory, so a fuzz target's
// regressions and seeds replay in any build, g++ included. Paths that do not exist are
// skipped (a target may have no committed regressions yet), but at least one input must
// run: a replay that ran nothing fails.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A heap copy of exactly the input's size, so AddressSanitizer sees reads past the end.
  std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
  // Named first, so the last line before a crash says which input it was.
  std::cerr << path.string() << "\n";
  LLVMFuzzerTestOneInput(input.data(), input.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) {
        if (!RunFile(file)) return 1;
        ++ran;
      }
    } else if (std::filesystem::is_regular_file(path, error)) {
      if (!RunFile(path)) return 1;
      ++ran;
    }
  }
  std::cout << "replayed " << ran << " inputs\n";
  return ran == 0 ? 1 : 0;
}
