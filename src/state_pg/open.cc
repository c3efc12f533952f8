#include "state_pg/open.h"

#include "state_pg/pg_store.h"
#include "state_pg/uri.h"

namespace udon::state_pg {
namespace {

class PostgresEvidenceWriter : public gate::EvidenceWriter {
 public:
  explicit PostgresEvidenceWriter(std::string url) : store_(std::move(url)) {}
  Status Append(const json::Value& record) override { return store_.AppendEvidence(gate::EvidenceLine(record)); }

 private:
  PostgresStateStore store_;
};

}  // namespace

Result<std::shared_ptr<gate::StateStore>> OpenStateStore(const std::string& url_or_path) {
  if (url_or_path.empty()) return MakeError("usage.invalid", "the state store must be a path or a postgres:// URI");
  if (gate::IsPostgresUrl(url_or_path)) {
    if (auto parsed = ParseConninfo(url_or_path); !parsed.ok()) return std::move(parsed).error();
    return std::shared_ptr<gate::StateStore>(new PostgresStateStore(url_or_path));
  }
  return std::shared_ptr<gate::StateStore>(new gate::FileStateStore(url_or_path));
}

Result<std::unique_ptr<gate::EvidenceWriter>> OpenEvidenceWriter(const std::string& file_or_url) {
  if (!gate::IsPostgresUrl(file_or_url)) return gate::EvidenceWriter::Open(file_or_url);
  if (auto parsed = ParseConninfo(file_or_url); !parsed.ok()) return std::move(parsed).error();
  return std::unique_ptr<gate::EvidenceWriter>(new PostgresEvidenceWriter(file_or_url));
}

Result<std::vector<std::string>> ReadEvidenceLines(const std::string& url) {
  return PostgresStateStore(url).ReadEvidence();
}

}  // namespace udon::state_pg
