#include "evidence/chart_spec.h"

#include <vector>

#include "evidence/charts.h"

namespace udon::evidence {
namespace {

Error SpecError(const std::string& message, const std::string& pointer) {
  return MakeError("evidence.chart_invalid", message, pointer);
}

bool IsOptional(const json::Value& object, const char* member, bool (json::Value::*is)() const) {
  return !object.contains(member) || (object[member].*is)();
}

Result<charts::Bar> BarFrom(const json::Value& entry, const std::string& at) {
  if (!entry.is_object()) return SpecError("a bar must be an object", at);
  if (!entry.contains("label") || !entry["label"].is_string()) return SpecError("a bar needs a \"label\" string", at + "/label");
  if (!entry.contains("value") || !entry["value"].is_number() || entry["value"].get<double>() < 0) {
    return SpecError("a bar needs a \"value\" number of at least 0", at + "/value");
  }
  if (!IsOptional(entry, "text", &json::Value::is_string)) return SpecError("a bar's \"text\" must be a string", at + "/text");
  if (!IsOptional(entry, "alert", &json::Value::is_boolean)) return SpecError("a bar's \"alert\" must be a boolean", at + "/alert");
  charts::Bar bar{entry["label"].get<std::string>(), entry["value"].get<double>(), {}, false};
  if (entry.contains("text")) bar.text = entry["text"].get<std::string>();
  if (entry.contains("alert")) bar.alert = entry["alert"].get<bool>();
  return bar;
}

}  // namespace

Result<std::string> BarChartFromSpec(const json::Value& spec) {
  if (!spec.is_object()) return SpecError("a chart description must be an object", "");
  if (!spec.contains("title") || !spec["title"].is_string()) return SpecError("the chart needs a \"title\" string", "/title");
  if (!spec.contains("bars") || !spec["bars"].is_array()) return SpecError("the chart needs a \"bars\" array", "/bars");
  if (!IsOptional(spec, "maximum", &json::Value::is_number) ||
      (spec.contains("maximum") && spec["maximum"].get<double>() < 0)) {
    return SpecError("\"maximum\" must be a number of at least 0", "/maximum");
  }
  if (!IsOptional(spec, "empty", &json::Value::is_string)) return SpecError("\"empty\" must be a string", "/empty");
  std::vector<charts::Bar> bars;
  for (std::size_t i = 0; i < spec["bars"].size(); ++i) {
    UDON_ASSIGN_OR_RETURN(charts::Bar bar, BarFrom(spec["bars"][i], "/bars/" + std::to_string(i)));
    bars.push_back(std::move(bar));
  }
  const double maximum = spec.contains("maximum") ? spec["maximum"].get<double>() : 0;
  const std::string empty = spec.contains("empty") ? spec["empty"].get<std::string>() : "none observed";
  return charts::BarChart(bars, spec["title"].get<std::string>(), maximum, empty);
}

}  // namespace udon::evidence
