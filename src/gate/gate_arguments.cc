// The arguments: validated against the reviewed inputSchema (from the static step), then
// step 6, the last look at the connection before dispatch.
#include "gate/gate.h"

#include "gate/internal/details.h"
#include "gate/internal/run.h"

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
    UDON_RETURN_IF_ERROR(Barrier(run));
  }
  Status events = CheckBindingEvents(run, run.bound_sequence, false);
  run.checked_through = run.connection->client->connection().LastSequence();
  return events;
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
    return error;
  }
  run.barrier = true;
  return OkStatus();
}

}  // namespace udon::gate
