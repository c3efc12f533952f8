// What a rewritten host entry hands `udon-mcp serve` in its `env` for the upstream server,
// each value under a name of its own (docs/contract.md 7.21). The host sets an entry's
// `env` in the environment of the process it starts, which after --apply is the gateway:
// - the entry's own `env` members travel as UDON_UPSTREAM_ENV_<NAME>, so that LD_PRELOAD,
//   LD_LIBRARY_PATH, HOME, XDG_*, TLS or proxy variables meant for the upstream never steer
//   the enforcing process; D/mcp.json gives them back to the upstream under their names;
// - secrets written outside `env` move into it: an `args` value holding URL credentials, a
//   connection string's password or a --token=... / --api-key VALUE option
//   (UDON_UPSTREAM_ARG_<i>), a `url` with userinfo or a query (UDON_UPSTREAM_URL), and every
//   header whose value is not one whole ${NAME} reference (UDON_UPSTREAM_HEADER_<i>).
// D/mcp.json names each as ${env:...}: the values stay in the host file, their only holder.
#pragma once

#include <string>
#include <vector>

#include "json/json.h"

namespace udon::adopt {

struct CarriedVariable {
  std::string name;        // in the gateway's environment
  std::string env_member;  // the entry's `env` member it carries; "" for a moved value
  std::string value;       // a moved value, or the env member's (secrets: never print them)
};

struct SplitEntry {
  json::Value upstream;  // the entry, a ${env:NAME} reference in place of each carried value
  std::vector<CarriedVariable> carried;
};

// The entry's carried values and what remains; `entry` is an object (a host entry).
SplitEntry SplitCarried(const json::Value& entry);

// Whether an `args` value must not be written outside the host file; `previous` is the
// argument before it ("" for the first).
bool IsSecretArgument(const std::string& arg, const std::string& previous);

}  // namespace udon::adopt
