#include "mcp/client/tool_pages.h"

#include <utility>

namespace udon::mcp {

bool ListedPages::built() const { return pending_ == 0; }

const std::vector<json::Value>& ListedPages::Whole() const {
  if (pending_ == 0) return pages_;
  for (std::size_t i = 0; i < pages_.size(); ++i) {
    if (unbuilt_[i] == nullptr) continue;
    // The one way a lean read is made whole (CompleteLeanResult): the same strict parse
    // over the frame the listing already accepted.
    Message page;
    page.kind = MessageKind::kResult;
    page.result = std::move(pages_[i]);
    page.lean_tools = std::move(unbuilt_[i]);
    CompleteLeanResult(page);
    pages_[i] = std::move(page.result);
  }
  pending_ = 0;
  return pages_;
}

std::vector<json::Value>& ListedPages::Whole() {
  static_cast<const ListedPages&>(*this).Whole();
  return pages_;
}

ListedPages::operator std::vector<json::Value>() && { return std::move(Whole()); }

ListedPages::operator std::vector<json::Value>() const& { return Whole(); }

void ListedPages::Append(json::Value result, std::shared_ptr<const LeanToolList> lean) {
  if (lean != nullptr) ++pending_;
  pages_.push_back(std::move(result));
  unbuilt_.push_back(std::move(lean));
}

}  // namespace udon::mcp
