// Test helpers for the uws component: a scratch folder, and a reviewed manifest with a
// UWS document that pins it.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "json/json.h"
#include "manifest/internal/test_manifest.h"
#include "manifest/manifest.h"

namespace udon::uws::testing {

class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("udon-uws-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string Write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The shared test manifest, with list_assets reviewed too and a closed outputSchema.
inline json::Value TestManifestJson() {
  json::Value doc = manifest::internal::ValidManifestJson();
  auto& tools = doc["servers"]["blender_farm"]["toolPages"][0]["tools"];
  tools[0]["outputSchema"]["additionalProperties"] = false;
  json::Value review = manifest::internal::ValidReviewJson();
  review["inputChannels"] = json::Value::object();
  doc["servers"]["blender_farm"]["reviews"]["list_assets"] = review;
  return doc;
}

inline std::string Sha256Of(const json::Value& manifest_json) {
  auto loaded = manifest::Manifest::FromValue(manifest_json);
  return loaded.ok() ? loaded->sha256() : std::string();
}

}  // namespace udon::uws::testing
