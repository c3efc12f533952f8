// The resolver interface of UWS 1.9 content trust: a profile- or source-specific view of
// an operation's input channels and output contracts. The analyzer asks every resolver
// about every operation; a resolver that does not recognize the operation says so
// (owned = false). Kinds, capabilities and trust levels stay strings here because a
// resolver may claim something invalid, and the analyzer decides what that means (1.9.1
// normalizes it, the 1.9.2 strict mode discards the whole claim).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "uws/document.h"

namespace udon::trust {

// A resolver-supplied source expression inside a channel, for interpolation languages
// the core scanner cannot read. `path` optionally locates it within the channel.
struct Reference {
  std::string expression;
  std::string path;  // RFC 6901, relative to the channel; "" = the channel itself
};

// An RFC 6901 pointer into the operation object and how the operation interprets the
// value there. "" or "/" mean /request; a pointer that starts with neither /request nor
// /x- is taken relative to /request.
struct InputChannel {
  std::string path;
  std::string kind;  // data | instruction | authority
  std::vector<Reference> references;
};

struct OutputContract {
  std::string capability;  // free_text | constrained_scalar | composite | unknown; "" = unknown
  std::optional<bool> inherits_input_provenance;  // overrides the operation-wide setting
};

struct OperationContract {
  std::vector<InputChannel> inputs;
  std::map<std::string, OutputContract> outputs;  // by declared operation output
  std::string default_trust;                      // trusted | untrusted | unknown; "" = unknown
  bool inherits_input_provenance = false;
};

struct Resolution {
  bool owned = false;
  OperationContract contract;
  // A resolver failure. The report only ever says content_trust.resolver_failure at the
  // operation; this error is for the caller's diagnostics, never for the report.
  std::optional<Error> error;
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // `operation` is document.root["operations"][index].
  virtual Resolution ResolveOperation(const uws::Document& document, std::size_t index,
                                      const json::Value& operation) const = 0;
};

}  // namespace udon::trust
