// libpq connection strings as udon-mcp reads and shows them: parsed by libpq itself
// (PQconninfoParse, URI and key=value forms alike), never shown with a password.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace udon::state_pg {

// The options a connection string sets, in libpq's order, each as libpq decoded it (a
// URI's percent-escapes resolved). Options the string leaves unset are absent.
using Conninfo = std::vector<std::pair<std::string, std::string>>;

// Errors: usage.invalid (libpq cannot parse it; the text is not repeated: it may hold a
// password).
Result<Conninfo> ParseConninfo(std::string_view conninfo);

// The value of `keyword`, or empty when the string does not set it.
std::string ConninfoValue(const Conninfo& options, std::string_view keyword);

// The value of `keyword`, else the environment variable libpq reads for it (`getenv`:
// std::getenv, or a test's).
std::string ConninfoOrEnvironment(const Conninfo& options, std::string_view keyword, const char* variable,
                                  const char* (*getenv)(const char*));

// The entries of one of libpq's comma-separated lists (host, hostaddr, port), empty ones
// included: "" is one empty entry.
std::vector<std::string> SplitConninfoList(const std::string& list);

// For messages and details: the options libpq reads from the string, as key=value pairs,
// with password and sslpassword (the client key's passphrase) shown as ***. Whatever libpq
// would send as a password is never shown, however the URI spells it; a string libpq
// cannot parse is not shown at all.
std::string RedactConninfo(std::string_view conninfo);

}  // namespace udon::state_pg
