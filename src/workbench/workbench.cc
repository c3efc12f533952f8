#include "workbench/workbench.h"

#include <algorithm>
#include <vector>

#include "base/file.h"
#include "json/canonical.h"
#include "manifest/carry_over.h"
#include "manifest/diff.h"
#include "manifest/review.h"

namespace udon::workbench {
namespace {

const json::Value* Member(const json::Value& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

std::string StringMember(const json::Value& object, const char* name) {
  const json::Value* value = Member(object, name);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

const char* TypeName(const json::Value& value) {
  if (value.is_object()) return "object";
  if (value.is_array()) return "array";
  if (value.is_string()) return "string";
  if (value.is_boolean()) return "boolean";
  if (value.is_null()) return "null";
  return "number";
}

// A member that may be absent: its tree, or null.
json::Value TreeOrNull(const json::Value& tool, const char* name) {
  const json::Value* value = Member(tool, name);
  return value == nullptr ? json::Value(nullptr) : DisplayTree(*value);
}

json::Value SegmentsOrNull(const json::Value& tool, const char* name, json::LineBreaks breaks) {
  const json::Value* value = Member(tool, name);
  if (value == nullptr) return nullptr;
  return Segments(value->is_string() ? value->get<std::string>() : value->dump(), breaks);
}

// Words with the whitespace that follows each, so that joining them gives the text back.
std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of(" \t\n\r", start);
    end = end == std::string_view::npos ? text.size() : text.find_first_not_of(" \t\n\r", end);
    if (end == std::string_view::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
    start = end;
  }
  return words;
}

void AppendOp(json::Value& ops, const char* op, std::string_view text) {
  ops.push_back({{"op", op}, {"s", Segments(text, json::LineBreaks::kKeep)}});
}

// Server, its status and counts for the overview.
json::Value ServerOverview(const manifest::Manifest& m, const std::string& key, bool expired, json::Value& counts) {
  json::Value server = {{"key", key}, {"keyShown", Segments(key)}, {"tools", json::Value::array()}};
  if (const json::Value* info = m.server_info(key)) {
    server["serverInfo"] = {{"name", SegmentsOrNull(*info, "name", json::LineBreaks::kEscape)},
                            {"version", SegmentsOrNull(*info, "version", json::LineBreaks::kEscape)}};
  }
  for (const auto& [name, occurrences] : m.ToolNames(key)) {
    const bool reviewed = m.review(key, name) != nullptr;
    const char* status = !reviewed ? "unreviewed" : expired ? "expired" : "reviewed";
    counts[status] = counts[status].get<int>() + 1;
    counts["tools"] = counts["tools"].get<int>() + 1;
    json::Value entry = {{"name", name}, {"nameShown", Segments(name)}, {"status", status}};
    if (occurrences > 1) entry["occurrences"] = occurrences;
    if (auto found = m.FindTool(key, name); !found.empty()) {
      entry["title"] = SegmentsOrNull(*found.front().tool, "title", json::LineBreaks::kEscape);
      entry["hidden"] = manifest::RenderToolForReview(*found.front().tool).hidden.code_points.size();
    }
    server["tools"].push_back(std::move(entry));
  }
  return server;
}

// A difference of DiffToJson with its pointer, old and new values made displayable, and
// a changed string shown as a word diff.
json::Value ShownDifference(const json::Value& d) {
  json::Value out = {{"pointer", Segments(StringMember(d, "pointer"))}, {"change", StringMember(d, "change")}};
  if (const json::Value* area = Member(d, "area")) out["area"] = *area;
  const json::Value* before = Member(d, "old");
  const json::Value* after = Member(d, "new");
  if (before != nullptr) out["old"] = DisplayTree(*before);
  if (after != nullptr) out["new"] = DisplayTree(*after);
  if (before != nullptr && after != nullptr && before->is_string() && after->is_string()) {
    out["words"] = WordDiff(before->get<std::string>(), after->get<std::string>());
  }
  return out;
}

json::Value ShownDifferences(const json::Value* list) {
  json::Value out = json::Value::array();
  if (list == nullptr || !list->is_array()) return out;
  for (const json::Value& d : *list) out.push_back(ShownDifference(d));
  return out;
}

json::Value ShownServerDrift(const json::Value& server) {
  json::Value out = {{"server", Segments(StringMember(server, "server"))},
                     {"status", StringMember(server, "status")},
                     {"serverInfo", ShownDifferences(Member(server, "serverInfo"))},
                     {"reordered", Member(server, "reordered") != nullptr && *Member(server, "reordered") == true},
                     {"tools", json::Value::array()}};
  if (const json::Value* tools = Member(server, "tools")) {
    for (const json::Value& tool : *tools) {
      json::Value t = {{"name", tool["name"]}, {"nameShown", Segments(StringMember(tool, "name"))},
                       {"status", StringMember(tool, "status")}};
      if (const json::Value* from = Member(tool, "renamedFrom")) {
        t["renamedFrom"] = Segments(from->get<std::string>());
      }
      t["differences"] = ShownDifferences(Member(tool, "differences"));
      out["tools"].push_back(std::move(t));
    }
  }
  return out;
}

Error NoBaseline() {
  return MakeError("workbench.no_baseline", "the workbench was started without --against or --live");
}

Error UsageError(const char* message, std::string pointer = {}) {
  return MakeError("usage.invalid", message, std::move(pointer));
}

}  // namespace

json::Value Segments(std::string_view text, json::LineBreaks breaks) {
  json::Value out = json::Value::array();
  for (const json::DisplaySegment& segment : json::DisplaySegments(text, breaks)) {
    out.push_back({{segment.hidden ? "h" : "t", segment.text}});
  }
  return out;
}

json::Value DisplayTree(const json::Value& value) {
  json::Value node = {{"t", TypeName(value)}};
  if (value.is_object()) {
    node["c"] = json::Value::array();
    for (const auto& [key, child] : value.items()) {
      json::Value shown = DisplayTree(child);
      shown["k"] = Segments(key);
      node["c"].push_back(std::move(shown));
    }
  } else if (value.is_array()) {
    node["c"] = json::Value::array();
    for (const json::Value& child : value) node["c"].push_back(DisplayTree(child));
  } else {
    // Strings keep their line breaks: the tree shows a description on its own lines.
    node["v"] = value.is_string() ? Segments(value.get<std::string>(), json::LineBreaks::kKeep)
                                  : Segments(value.dump());
  }
  return node;
}

json::Value WordDiff(std::string_view before, std::string_view after) {
  const std::vector<std::string_view> a = SplitWords(before), b = SplitWords(after);
  json::Value ops = json::Value::array();
  if (a.size() > kMaxDiffWords || b.size() > kMaxDiffWords) {
    if (!before.empty()) AppendOp(ops, "-", before);
    if (!after.empty()) AppendOp(ops, "+", after);
    return ops;
  }
  // Longest common subsequence of words, suffix table: lcs[i][j] for a[i..], b[j..].
  std::vector<std::vector<std::uint32_t>> lcs(a.size() + 1, std::vector<std::uint32_t>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  // Runs of one operation are merged, so the page draws few spans.
  std::string run;
  const char* run_op = nullptr;
  const auto emit = [&](const char* op, std::string_view word) {
    if (run_op != nullptr && std::string_view(run_op) != op) {
      AppendOp(ops, run_op, run);
      run.clear();
    }
    run_op = op;
    run += word;
  };
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      emit("=", a[i++]);
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      emit("-", a[i++]);  // removals first, as a reader expects "old, then new"
    } else {
      emit("+", b[j++]);
    }
  }
  if (run_op != nullptr) AppendOp(ops, run_op, run);
  return ops;
}

Result<json::Value> Workbench::Overview(manifest::Seconds now) const {
  UDON_ASSIGN_OR_RETURN(manifest::Manifest m, manifest::Manifest::Load(options_.manifest_path));
  const json::Value& doc = m.document();
  const auto expires = manifest::ParseInstant(StringMember(doc, "expiresAt"));
  const bool expired = expires.ok() && now >= *expires;
  json::Value counts = {{"tools", 0}, {"reviewed", 0}, {"unreviewed", 0}, {"expired", 0}};
  json::Value servers = json::Value::array();
  for (const std::string& key : m.server_keys()) servers.push_back(ServerOverview(m, key, expired, counts));
  json::Value overview = {{"manifest", options_.manifest_path},
                          {"sha256", m.sha256()},
                          {"protocolVersion", StringMember(doc, "protocolVersion")},
                          {"capturedAt", StringMember(doc, "capturedAt")},
                          {"expiresAt", StringMember(doc, "expiresAt")},
                          {"now", manifest::FormatInstant(now)},
                          {"expired", expired},
                          {"maxReviewWindowDays", options_.policy.max_review_window_days},
                          {"counts", std::move(counts)},
                          {"servers", std::move(servers)},
                          {"baseline", options_.against_path.empty() ? json::Value(nullptr)
                                                                     : json::Value(options_.against_label)}};
  if (Status fresh = m.CheckFreshness(now, options_.policy); !fresh.ok()) {
    overview["freshness"] = {{"code", fresh.error().code}, {"message", fresh.error().message}};
  }
  return overview;
}

Result<json::Value> Workbench::Tool(const std::string& server, const std::string& tool_name) const {
  UDON_ASSIGN_OR_RETURN(manifest::Manifest m, manifest::Manifest::Load(options_.manifest_path));
  UDON_ASSIGN_OR_RETURN(manifest::ToolLocation selected, manifest::SelectTool(m, server, tool_name));
  const json::Value& tool = *selected.tool;
  UDON_ASSIGN_OR_RETURN(std::string digest, json::CanonicalSha256(tool));
  json::Value pointers = json::Value::array();
  for (const std::string& pointer : manifest::ArgumentPointers(tool)) {
    pointers.push_back({{"pointer", pointer}, {"shown", Segments(pointer)}});
  }
  const json::Value* review = m.review(server, tool_name);
  return json::Value{
      {"server", server},
      {"serverShown", Segments(server)},
      {"name", tool_name},
      {"nameShown", Segments(tool_name)},
      {"title", SegmentsOrNull(tool, "title", json::LineBreaks::kEscape)},
      {"description", SegmentsOrNull(tool, "description", json::LineBreaks::kKeep)},
      {"inputSchema", TreeOrNull(tool, "inputSchema")},
      {"outputSchema", TreeOrNull(tool, "outputSchema")},
      {"annotations", TreeOrNull(tool, "annotations")},
      {"execution", TreeOrNull(tool, "execution")},
      {"toolSha256", digest},
      {"hiddenNotice", json::HiddenNotice(manifest::RenderToolForReview(tool).hidden, "the tool")},
      {"argumentPointers", std::move(pointers)},
      {"review", review == nullptr ? json::Value(nullptr) : *review},
      {"manifestSha256", m.sha256()},
  };
}

Result<json::Value> Workbench::Drift() const {
  if (!has_baseline()) return NoBaseline();
  UDON_ASSIGN_OR_RETURN(manifest::Manifest current, manifest::Manifest::Load(options_.manifest_path));
  manifest::Manifest before = current, after = current;
  if (options_.live) {
    after = *options_.live;
  } else {
    UDON_ASSIGN_OR_RETURN(before, manifest::Manifest::Load(options_.against_path));
  }
  const manifest::ManifestDiff diff = manifest::DiffManifests(before, after);
  const json::Value raw = manifest::DiffToJson(diff, before, after);
  json::Value servers = json::Value::array();
  for (const json::Value& server : raw["servers"]) servers.push_back(ShownServerDrift(server));
  // What the one carry-over action would keep and drop, computed on a copy.
  manifest::Manifest preview = after;
  UDON_ASSIGN_OR_RETURN(manifest::CarryOverReport report, manifest::CarryOverReviews(before, preview));
  return json::Value{{"baseline", options_.against_label},
                     {"live", options_.live.has_value()},
                     {"identical", diff.identical()},
                     {"significant", diff.significant(false)},
                     {"topLevel", ShownDifferences(&raw["topLevel"])},
                     {"servers", std::move(servers)},
                     {"carryOver", manifest::CarryOverToJson(report)},
                     {"manifestSha256", current.sha256()}};
}

Result<manifest::Manifest> Workbench::LoadAt(const json::Value& request) const {
  const json::Value* base = Member(request, "baseSha256");
  if (base == nullptr || !base->is_string()) return UsageError("baseSha256 is missing", "/baseSha256");
  UDON_ASSIGN_OR_RETURN(manifest::Manifest m, manifest::Manifest::Load(options_.manifest_path));
  if (m.sha256() != base->get<std::string>()) {
    return MakeError("workbench.stale", "the manifest file changed since the page read it; reload the page",
                     "/baseSha256");
  }
  return m;
}

Result<json::Value> Workbench::SaveReview(const json::Value& request, manifest::Seconds now) {
  if (!request.is_object()) return UsageError("the request must be an object");
  const std::string server = StringMember(request, "server"), tool = StringMember(request, "tool");
  const json::Value* review = Member(request, "review");
  if (server.empty() || tool.empty() || review == nullptr || !review->is_object()) {
    return UsageError("server, tool and review are required");
  }
  json::Value review_json = *review;
  // As `review --from`: the review time is when the decision is recorded.
  if (!review_json.contains("reviewedAt")) review_json["reviewedAt"] = manifest::FormatInstant(now);
  std::lock_guard lock(write_mutex_);
  UDON_ASSIGN_OR_RETURN(manifest::Manifest m, LoadAt(request));
  UDON_RETURN_IF_ERROR(manifest::ApplyReview(m, server, tool, review_json, options_.policy, now));
  UDON_RETURN_IF_ERROR(base::WriteFileAtomic(options_.manifest_path, m.ToPrettyJson()));
  return json::Value{{"sha256", m.sha256()}, {"review", review_json}};
}

Result<json::Value> Workbench::CarryOver(const json::Value& request) {
  if (!has_baseline()) return NoBaseline();
  if (!request.is_object()) return UsageError("the request must be an object");
  std::lock_guard lock(write_mutex_);
  UDON_ASSIGN_OR_RETURN(manifest::Manifest current, LoadAt(request));
  manifest::Manifest older = current, newer = current;
  if (options_.live) {
    newer = *options_.live;
  } else {
    UDON_ASSIGN_OR_RETURN(older, manifest::Manifest::Load(options_.against_path));
  }
  UDON_ASSIGN_OR_RETURN(manifest::CarryOverReport report, manifest::CarryOverReviews(older, newer));
  UDON_RETURN_IF_ERROR(base::WriteFileAtomic(options_.manifest_path, newer.ToPrettyJson()));
  return json::Value{{"sha256", newer.sha256()}, {"report", manifest::CarryOverToJson(report)}};
}

}  // namespace udon::workbench
