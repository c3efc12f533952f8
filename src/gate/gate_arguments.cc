// The arguments: validated against the reviewed inputSchema (from the static step), then
// step 6, the last look at the connection before dispatch.
#include "gate/gate.h"

#include "gate/internal/details.h"
#include "gate/internal/run.h"
#include "mcp/client/www_authenticate.h"

namespace udon::gate {

using internal::Instance;
using internal::Refuse;
using internal::SchemaErrors;

// Errors: input.schema_violation (details.errors: keyword and instance locations only).
Status Gate::ValidateArguments(Run& run) {
  if (run.arguments == nullptr) return OkStatus();
  if (!run.arguments->is_object()) {
    return Refuse("input.schema_violation", "tools/call arguments must be a JSON object");
  }
  schema::ValidationResult validation = run.input_schema->Validate(*run.arguments);
  if (!validation.valid) {
    Error error = Refuse("input.schema_violation", "the arguments do not validate against the reviewed inputSchema");
    error.details["errors"] =
        SchemaErrors(validation, Instance::kArguments, &(*run.location.tool)["inputSchema"], run.arguments);
    if (validation.limit_error) error.details["limit"] = validation.limit_error->code;
    return error;
  }
  return OkStatus();
}

// Step 6. The arguments were validated against the reviewed inputSchema in the static
// step; the comparison has since proved the live Tool canonically equal to the reviewed
// one, so its inputSchema is the same and nothing about that verdict can differ. What can
// still change is the connection: the barrier and the event check below.
Status Gate::StepArguments(Run& run) {
  if (run.arguments != nullptr) {
    run.arguments_digest = KeyedDigest(*run.arguments);
    // Coalesced: the verification's one barrier, sent after its re-list, serves this call.
    if (!run.lane) UDON_RETURN_IF_ERROR(Barrier(run));
  }
  Status events = CheckBindingEvents(run, run.bound_sequence, false);
  run.checked_through = run.connection->client->connection().LastSequence();
  return events;
}

// Step 7, nothing between it and tools/call: an invalidation recorded since step 2 stops
// the call. Another call of this process (any thread) that saw list_changed, another
// process or runner sharing the store, or the embedder's withdrawal (the gateway's) may
// have recorded one while this call listed and compared. Memory first (this process's own
// records, even before or without their durable write), then one read of the store (for
// PostgreSQL one query on the open connection).
// Errors: manifest.invalidated, state.unavailable, and what GateEnvironment::still_offered returns.
Status Gate::StepRecheck(Run& run) {
  UDON_ASSIGN_OR_RETURN(bool invalidated, Invalidated(run));
  if (invalidated) {
    return Refuse("manifest.invalidated",
                  "list_changed was recorded for this server while this call was checked, before its dispatch; "
                  "capture and review again");
  }
  if (env_.still_offered) return env_.still_offered(run.binding.server, run.binding.tool);
  return OkStatus();
}

// On an ordered transport a ping round trip right before dispatch makes every
// notification the server sent before it visible now, closing the window between the
// comparison and tools/call to what the protocol itself leaves open.
Status Gate::Barrier(Run& run) {
  mcp::Client& client = *run.connection->client;
  if (!client.connection().transport().ordered()) return OkStatus();
  Status pinged = client.Ping(CallTimeout(run.binding.server));
  if (!pinged.ok()) {
    Error error = Refuse("server.connect_failed", "the server did not answer the ping before dispatch");
    error.details["cause"] = pinged.error().details.value("cause", pinged.error().code);
    mcp::KeepRefusedCredential(pinged.error(), error);  // a 401 or 403 to the ping (contract 7.23)
    return error;
  }
  run.barrier = true;
  return OkStatus();
}

}  // namespace udon::gate
