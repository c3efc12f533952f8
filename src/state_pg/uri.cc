#include "state_pg/uri.h"

#include <libpq-fe.h>

#include <memory>

namespace udon::state_pg {
namespace {

bool IsSecret(std::string_view keyword) { return keyword == "password" || keyword == "sslpassword"; }

// A value as libpq's key=value syntax reads it back: bare when it can be, else quoted.
std::string Quoted(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \t\n\r\f\v'\\") == std::string::npos) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

Result<Conninfo> ParseConninfo(std::string_view conninfo) {
  char* message = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
      PQconninfoParse(std::string(conninfo).c_str(), &message), PQconninfoFree);
  // libpq's message may quote the string, password and all: never kept.
  if (message != nullptr) PQfreemem(message);
  if (!options) {
    return MakeError("usage.invalid",
                     "libpq cannot parse the PostgreSQL connection string (not shown: it may hold a password)");
  }
  Conninfo parsed;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val != nullptr) parsed.emplace_back(option->keyword, option->val);
  }
  return parsed;
}

std::string ConninfoValue(const Conninfo& options, std::string_view keyword) {
  for (const auto& [key, value] : options) {
    if (key == keyword) return value;
  }
  return {};
}

std::string ConninfoOrEnvironment(const Conninfo& options, std::string_view keyword, const char* variable,
                                  const char* (*getenv)(const char*)) {
  std::string value = ConninfoValue(options, keyword);
  if (!value.empty()) return value;
  const char* from_env = getenv(variable);
  return from_env != nullptr ? from_env : "";
}

std::vector<std::string> SplitConninfoList(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string RedactConninfo(std::string_view conninfo) {
  auto parsed = ParseConninfo(conninfo);
  if (!parsed.ok()) return "(a connection string libpq cannot parse)";
  std::string out;
  for (const auto& [key, value] : *parsed) {
    if (!out.empty()) out += ' ';
    out += key + "=" + (IsSecret(key) ? std::string("***") : Quoted(value));
  }
  return out;
}

}  // namespace udon::state_pg
