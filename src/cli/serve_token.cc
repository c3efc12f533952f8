#include "cli/serve_token.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "base/file.h"
#include "base/random.h"

namespace udon::cli {
namespace {

constexpr std::size_t kMaxTokenFileBytes = 4096;
constexpr std::size_t kMintedTokenBytes = 32;

// Whether `path` is a token file only this user can read: then its token may be reused.
bool IsPrivateFile(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid() &&
         (info.st_mode & 077) == 0;
}

Error WriteFailed(const std::string& path) {
  Error error = MakeError("state.write_failed", "the minted token file cannot be written in the state directory");
  error.details["path"] = path;
  return error;
}

// The state directory, created 0700 when it does not exist yet.
Status EnsureDirectory(const std::string& dir, const std::string& token_path) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) return WriteFailed(token_path);
    }
  }
  return OkStatus();
}

}  // namespace

Result<std::string> ReadTokenFile(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, kMaxTokenFileBytes));
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  std::string token = begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
  if (token.size() < 16 || token.find_first_of(" \t\r\n") != std::string::npos) {
    return MakeError("usage.invalid", "the token file must hold one token of at least 16 characters");
  }
  return token;
}

Result<MintedToken> MintServeToken(const std::string& state_dir) {
  MintedToken minted;
  // Absolute: the printed host configuration must work from any directory.
  std::error_code ignored;
  const std::filesystem::path absolute = std::filesystem::absolute(state_dir, ignored);
  minted.path = (absolute.empty() ? std::filesystem::path(state_dir) : absolute).lexically_normal().string() + "/" +
                kServeTokenFileName;
  if (IsPrivateFile(minted.path)) {
    if (auto kept = ReadTokenFile(minted.path); kept.ok()) {
      minted.token = std::move(kept).value();
      minted.reused = true;
      return minted;
    }
  }
  UDON_ASSIGN_OR_RETURN(minted.token, base::RandomHex(kMintedTokenBytes));
  UDON_RETURN_IF_ERROR(EnsureDirectory(minted.path.substr(0, minted.path.rfind('/')), minted.path));
  if (!base::WriteSecretFileAtomic(minted.path, minted.token + "\n").ok()) return WriteFailed(minted.path);
  return minted;
}

std::string TokenInstructions(const std::string& token_path, const std::string& url) {
  return "every request needs the bearer token in " + token_path +
         " (mode 0600; never printed). Give it to a host, e.g.:\n"
         "  claude mcp add --transport http udon " + url + " --header \"Authorization: Bearer $(cat '" + token_path +
         "')\"\n"
         "  or in a host's JSON configuration, with UDON_MCP_TOKEN=$(cat '" + token_path +
         "') in its environment:\n"
         "  {\"type\": \"http\", \"url\": \"" + url + "\", \"headers\": {\"Authorization\": \"Bearer ${UDON_MCP_TOKEN}\"}}";
}

}  // namespace udon::cli
