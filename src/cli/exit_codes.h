// The process exit status: the contract's one table (docs/contract.md sections 3, 4 and
// 7.1). Exit statuses are a command-line concern: libraries return errors only, and every
// command turns an error into its exit status here.
#pragma once

#include <string_view>

#include "base/result.h"

namespace udon::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,      // also: diff found differences, a probe finding
  kExitInvalidInput = 2,  // usage, configuration, unreadable or invalid input
  kExitRefused = 3,       // the gate failed closed before dispatch
  kExitFailed = 4,        // failed after dispatch
  kExitIndeterminate = 5,
};

// Exit status for an error code: unreadable or malformed input is 2, refusals 3, failures
// after dispatch 4, indeterminate 5, anything unexpected 1; the runner's own codes
// (uws.expression_failed 2, uws.criteria_unsatisfied 4, uws.timeout 5) included.
int ExitCodeFor(std::string_view code);
int ExitCodeFor(const Error& error);

// The same for the outcome of a gated call (verify, call, a step of run, a repetition of
// probe): a manifest the gate cannot trust refuses the call, so manifest.invalid is 3
// there (contract section 4: "2/3"), and 2 wherever a manifest is only read; a state store
// the gate cannot consult before dispatch is 3 as well (contract 7.14).
int GatedExitCodeFor(std::string_view code);
int GatedExitCodeFor(const Error& error);

}  // namespace udon::cli
