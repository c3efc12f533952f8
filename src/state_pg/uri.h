// libpq connection URIs as udon-mcp shows them: never with a password.
#pragma once

#include <string>
#include <string_view>

namespace udon::state_pg {

// The URI with any password removed (the userinfo's ":password" and a "password" query
// parameter become "***"), for messages and details. Passwords belong in the environment
// (PGPASSWORD) or a passfile (~/.pgpass, PGPASSFILE), never in output.
std::string RedactUri(std::string_view uri);

}  // namespace udon::state_pg
