#include "state_pg/open.h"

#include "state_pg/pg_store.h"
#include "state_pg/token_store.h"
#include "state_pg/uri.h"

namespace udon::state_pg {
namespace {

class PostgresEvidenceWriter : public gate::EvidenceWriter {
 public:
  PostgresEvidenceWriter(std::string url, std::chrono::milliseconds connect_bound)
      : store_(std::move(url), connect_bound) {}
  Status Append(const json::Value& record) override { return store_.AppendEvidence(gate::EvidenceLine(record)); }

 private:
  PostgresStateStore store_;
};

// libpq's key=value form ("host=db port=5432") is no file or directory name: taken as one,
// a call would pass on an empty local store. Only a value holding '=' is parsed (libpq is
// loaded for it alone); a path is never valid key=value text once it holds a '/' before
// its first '=' (./host=x), so every path stays expressible.
Status RefuseKeywordConninfo(const std::string& value, const char* what) {
  if (value.find('=') == std::string::npos || !ParseConninfo(value).ok()) return OkStatus();
  return MakeError("usage.invalid", std::string(what) +
                                        " is a libpq key=value connection string (not shown): give a PostgreSQL "
                                        "store as a postgres:// or postgresql:// URI, and a path whose name holds "
                                        "'=' as ./NAME");
}

}  // namespace

Result<std::shared_ptr<gate::StateStore>> OpenStateStore(const std::string& url_or_path,
                                                         std::chrono::milliseconds connect_bound) {
  if (url_or_path.empty()) return MakeError("usage.invalid", "the state store must be a path or a postgres:// URI");
  if (gate::IsPostgresUrl(url_or_path)) {
    if (auto parsed = ParseConninfo(url_or_path); !parsed.ok()) return std::move(parsed).error();
    return std::shared_ptr<gate::StateStore>(new PostgresStateStore(url_or_path, connect_bound));
  }
  UDON_RETURN_IF_ERROR(RefuseKeywordConninfo(url_or_path, "the state store"));
  return std::shared_ptr<gate::StateStore>(new gate::FileStateStore(url_or_path));
}

Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidenceWriter(const std::string& file_or_url,
                                                                 std::chrono::milliseconds connect_bound) {
  if (!gate::IsPostgresUrl(file_or_url)) {
    UDON_RETURN_IF_ERROR(RefuseKeywordConninfo(file_or_url, "the evidence file"));
    return gate::EvidenceWriter::Open(file_or_url);
  }
  if (auto parsed = ParseConninfo(file_or_url); !parsed.ok()) return std::move(parsed).error();
  return std::unique_ptr<gate::EvidenceWriter>(new PostgresEvidenceWriter(file_or_url, connect_bound));
}

Result<std::unique_ptr<oauth::TokenStore>> OpenTokenStore(const std::string& url_or_path, const std::string& state_dir,
                                                          const std::optional<std::string>& key_file,
                                                          std::chrono::milliseconds connect_bound) {
  if (url_or_path.empty()) return MakeError("usage.invalid", "the state store must be a path or a postgres:// URI");
  if (gate::IsPostgresUrl(url_or_path)) {
    if (auto parsed = ParseConninfo(url_or_path); !parsed.ok()) return std::move(parsed).error();
    return std::unique_ptr<oauth::TokenStore>(
        new PostgresTokenStore(url_or_path, ResolveTokenKeySource(key_file, state_dir), connect_bound));
  }
  UDON_RETURN_IF_ERROR(RefuseKeywordConninfo(url_or_path, "the state store"));
  return std::unique_ptr<oauth::TokenStore>(new oauth::FileTokenStore(url_or_path));
}

Result<std::vector<std::string>> ReadEvidenceLines(const std::string& url) {
  return PostgresStateStore(url).ReadEvidence();
}

}  // namespace udon::state_pg
