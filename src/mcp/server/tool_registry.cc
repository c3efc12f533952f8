// The server's tool registry: each Tool serialized once when added, the listing order, and
// tools/list pages written from those bytes (LeanToolList::Frame::kToolsArray).
#include "mcp/server/server.h"

#include <charconv>
#include <utility>

#include "mcp/server/internal/server_common.h"

namespace udon::mcp {
namespace {

// A page's Tools written into one JSON array from their texts, with where each one is.
class ToolsArrayWriter {
 public:
  ToolsArrayWriter() {
    list_.holds = LeanToolList::Frame::kToolsArray;
    list_.frame = "[";
  }
  void Add(const json::Value& tool, std::string_view text) {
    if (!list_.tools.empty()) list_.frame += ',';
    json::RawElement& element = list_.tools.emplace_back();
    element.is_object = tool.is_object();
    element.begin = list_.frame.size();
    list_.frame += text;
    element.end = list_.frame.size();
    if (element.is_object) {
      auto name = tool.find("name");
      if (name != tool.end() && name->is_string()) element.name = name->get<std::string>();
    }
  }
  std::shared_ptr<const LeanToolList> Finish() {
    list_.frame += ']';
    return std::make_shared<const LeanToolList>(std::move(list_));
  }

 private:
  LeanToolList list_;
};

}  // namespace

void Server::AddTool(json::Value tool, ToolHandler handler) {
  std::string name = tool.at("name").get<std::string>();
  std::lock_guard lock(catalog_mutex_);
  first_listed_.emplace(name, tools_.size());  // a repeated name keeps its first listing
  tool_texts_.push_back(SerializeValue(tool));
  tools_.push_back(std::move(tool));
  handlers_[std::move(name)] = std::move(handler);
}

bool Server::UnlistTool(const std::string& name) {
  std::lock_guard lock(catalog_mutex_);
  if (first_listed_.count(name) == 0) return false;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    if (tools_[i].value("name", "") == name) continue;
    if (kept != i) {
      tools_[kept] = std::move(tools_[i]);
      tool_texts_[kept] = std::move(tool_texts_[i]);
    }
    ++kept;
  }
  tools_.resize(kept);
  tool_texts_.resize(kept);
  RebuildIndexLocked();
  return true;
}

void Server::SetTools(std::vector<std::pair<json::Value, ToolHandler>> tools) {
  std::lock_guard lock(catalog_mutex_);
  tools_.clear();
  tool_texts_.clear();
  handlers_.clear();
  for (auto& [tool, handler] : tools) {
    std::string name = tool.at("name").get<std::string>();
    tool_texts_.push_back(SerializeValue(tool));
    tools_.push_back(std::move(tool));
    handlers_[std::move(name)] = std::move(handler);
  }
  RebuildIndexLocked();
}

void Server::RebuildIndexLocked() {
  first_listed_.clear();
  for (std::size_t i = 0; i < tools_.size(); ++i) first_listed_.emplace(tools_[i].at("name").get<std::string>(), i);
}

bool Server::HasTool(const std::string& name) const {
  std::lock_guard lock(catalog_mutex_);
  return handlers_.count(name) != 0;
}

std::optional<ToolHandler> Server::FindHandler(const std::string& name) const {
  std::lock_guard lock(catalog_mutex_);
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return std::nullopt;
  return it->second;
}

std::vector<json::Value> Server::ListedTools() const {
  std::vector<json::Value> tools;
  {
    std::lock_guard lock(catalog_mutex_);
    tools = tools_;
  }
  if (hooks_ != nullptr) hooks_->TransformTools(tools);
  return tools;
}

std::optional<Server::ListedPage> Server::ListedTools(std::size_t offset, std::size_t count,
                                                      const Caller* caller) const {
  auto page_end = [&](std::size_t total) { return count == 0 ? total : std::min(total, offset + count); };
  ToolsArrayWriter writer;
  ListedPage page;
  const bool limited = caller != nullptr && !caller->all_tools;
  if ((hooks_ != nullptr && hooks_->TransformsTools()) || limited) {
    std::vector<json::Value> tools = ListedTools();
    if (limited) {
      std::erase_if(tools, [caller](const json::Value& tool) {
        return !tool.contains("name") || !tool["name"].is_string() || !caller->MayUse(tool["name"].get<std::string>());
      });
    }
    if (offset > tools.size()) return std::nullopt;
    for (std::size_t i = offset; i < page_end(tools.size()); ++i) writer.Add(tools[i], SerializeValue(tools[i]));
    page.total = tools.size();
  } else {
    std::lock_guard lock(catalog_mutex_);
    if (offset > tools_.size()) return std::nullopt;
    for (std::size_t i = offset; i < page_end(tools_.size()); ++i) writer.Add(tools_[i], tool_texts_[i]);
    page.total = tools_.size();
  }
  page.tools = writer.Finish();
  return page;
}

std::optional<json::Value> Server::ListedTool(const std::string& name) const {
  if (hooks_ != nullptr && hooks_->TransformsTools()) {
    // A hook may rename, remove or duplicate tools: only the transformed catalog knows.
    const std::vector<json::Value> tools = ListedTools();
    auto it = std::find_if(tools.begin(), tools.end(),
                           [&](const json::Value& tool) { return tool.value("name", "") == name; });
    if (it == tools.end()) return std::nullopt;
    return *it;
  }
  std::lock_guard lock(catalog_mutex_);
  auto it = first_listed_.find(name);
  if (it == first_listed_.end()) return std::nullopt;
  return tools_[it->second];
}

std::string Server::EncodeCursor(std::size_t offset) { return "page-" + std::to_string(offset); }

std::optional<std::size_t> Server::DecodeCursor(std::string_view cursor) {
  constexpr std::string_view kPrefix = "page-";
  if (cursor.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  cursor.remove_prefix(kPrefix.size());
  std::size_t offset = 0;
  auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), offset);
  if (ec != std::errc() || end != cursor.data() + cursor.size() || cursor.empty()) {
    return std::nullopt;
  }
  return offset;
}

}  // namespace udon::mcp
