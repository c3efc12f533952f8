#include "manifest/carry_over.h"

#include "manifest/internal/report_line.h"

namespace udon::manifest {
namespace {

using internal::ReportLine;

// The capture the reviewer actually read: an earlier carry-over's mark says, else the
// old manifest's own capturedAt. Carrying a review twice keeps pointing at the first.
json::Value CarriedOverMark(const json::Value& review, const Manifest& old) {
  auto mark = review.find(kCarriedOverMember);
  if (mark != review.end() && mark->is_object() && mark->contains("fromCapturedAt")) return *mark;
  auto captured = old.document().find("capturedAt");
  return {{"fromCapturedAt", captured != old.document().end() ? *captured : json::Value()}};
}

Status CarryServer(const std::string& server, const Manifest& old, Manifest& fresh, CarryOverReport& report) {
  const json::Value* entry = old.server(server);
  if (entry == nullptr || !entry->contains("reviews")) return OkStatus();
  const bool captured = fresh.has_server(server);
  if (captured) {
    const json::Value empty = json::Value::object();
    const json::Value* info_old = old.server_info(server);
    const json::Value* info_fresh = fresh.server_info(server);
    auto info = json::Diff(info_old ? *info_old : empty, info_fresh ? *info_fresh : empty);
    if (!info.empty()) report.server_info_changed.emplace_back(server, std::move(info));
  }
  for (const auto& [tool, review] : (*entry)["reviews"].items()) {
    const auto before = old.FindTool(server, tool);
    const auto after = captured ? fresh.FindTool(server, tool) : std::vector<ToolLocation>{};
    if (after.empty()) {
      report.dropped.push_back({server, tool, DropReason::kRemoved, {}});
    } else if (before.size() != 1 || after.size() != 1) {
      report.dropped.push_back({server, tool, DropReason::kAmbiguous, {}});
    } else if (auto differences = json::Diff(*before.front().tool, *after.front().tool); !differences.empty()) {
      report.dropped.push_back({server, tool, DropReason::kChanged, std::move(differences)});
    } else {
      json::Value carried = review;
      carried[kCarriedOverMember] = CarriedOverMark(review, old);
      report.kept.push_back({server, tool});
      UDON_RETURN_IF_ERROR(fresh.SetReview(server, tool, std::move(carried)));
    }
  }
  return OkStatus();
}

// " /a, /b" after a report line's text.
void ShowPointers(ReportLine& line, const std::vector<json::Difference>& differences) {
  for (std::size_t i = 0; i < differences.size(); ++i) {
    line.Fixed(i == 0 ? " " : ", ").Shown(differences[i].pointer, "the pointer");
  }
}

json::Value PointersToJson(const std::vector<json::Difference>& differences) {
  json::Value pointers = json::Value::array();
  for (const auto& d : differences) pointers.push_back(d.pointer);
  return pointers;
}

}  // namespace

const char* DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kChanged: return "changed";
    case DropReason::kRemoved: return "removed";
    case DropReason::kAmbiguous: return "ambiguous";
  }
  return "changed";
}

Result<CarryOverReport> CarryOverReviews(const Manifest& old, Manifest& fresh) {
  CarryOverReport report;
  for (const std::string& server : old.server_keys()) {
    UDON_RETURN_IF_ERROR(CarryServer(server, old, fresh, report));
  }
  return report;
}

json::Value CarryOverToJson(const CarryOverReport& report) {
  json::Value out = {{"kept", json::Value::array()}, {"dropped", json::Value::array()},
                     {"serverInfoChanged", json::Value::array()}};
  for (const KeptReview& kept : report.kept) out["kept"].push_back({{"server", kept.server}, {"tool", kept.tool}});
  for (const DroppedReview& dropped : report.dropped) {
    json::Value entry = {{"server", dropped.server}, {"tool", dropped.tool}, {"reason", DropReasonName(dropped.reason)}};
    if (dropped.reason == DropReason::kChanged) entry["pointers"] = PointersToJson(dropped.differences);
    out["dropped"].push_back(std::move(entry));
  }
  for (const auto& [server, differences] : report.server_info_changed) {
    out["serverInfoChanged"].push_back({{"server", server}, {"pointers", PointersToJson(differences)}});
  }
  return out;
}

std::string CarryOverToText(const CarryOverReport& report) {
  std::string out;
  for (const KeptReview& kept : report.kept) {
    ReportLine line("");
    line.Fixed("kept review of ").Shown(kept.server, "the server key").Fixed("/").Shown(kept.tool, "the tool name");
    line.Fixed(": tool unchanged");
    line.AppendTo(out);
  }
  for (const DroppedReview& dropped : report.dropped) {
    ReportLine line("");
    line.Fixed("dropped review of ").Shown(dropped.server, "the server key").Fixed("/");
    line.Shown(dropped.tool, "the tool name").Fixed(": ").Fixed(DropReasonName(dropped.reason));
    ShowPointers(line, dropped.differences);
    line.AppendTo(out);
  }
  for (const auto& [server, differences] : report.server_info_changed) {
    ReportLine line("");
    line.Fixed("note: serverInfo of ").Shown(server, "the server key").Fixed(" changed");
    ShowPointers(line, differences);
    line.Fixed(" (reviews were kept by Tool object)");
    line.AppendTo(out);
  }
  return out;
}

}  // namespace udon::manifest
