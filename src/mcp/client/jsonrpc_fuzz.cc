// Fuzz target: JSON-RPC frame decoding and classification. Oracles: an accepted message is
// classified consistently with its members, serializes to one line, and decodes back to
// the same message; a refused one has one of the documented codes, a pointer that names a
// member of the frame (or where a missing required one belongs), and the transport maps it
// to the right connection-level code; the size limit refuses exactly the frames above it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "fuzz/pointer_check.h"
#include "json/json.h"
#include "json/pointer.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/client/transport.h"

namespace {

using udon::mcp::Message;
using udon::mcp::MessageKind;

bool SameMessage(const Message& a, const Message& b) {
  return a.kind == b.kind && a.id == b.id && a.method == b.method && a.params == b.params &&
         a.result == b.result && a.error == b.error;
}

void CheckAccepted(const Message& message) {
  switch (message.kind) {
    case MessageKind::kRequest:
      UDON_FUZZ_CHECK(message.id.is_string() || message.id.is_number_integer(),
                      "a request has an integer or string id");
      break;
    case MessageKind::kNotification:
      UDON_FUZZ_CHECK(message.id.is_null(), "a notification has no id");
      break;
    case MessageKind::kResult:
    case MessageKind::kError:
      UDON_FUZZ_CHECK(message.method.empty() && message.params.is_null(),
                      "a response has no method or params");
      break;
  }
  UDON_FUZZ_CHECK(message.params.is_null() || message.params.is_structured(),
                  "params are absent, an object or an array");
  if (message.kind == MessageKind::kError) {
    UDON_FUZZ_CHECK(message.error.is_object() && message.error["code"].is_number_integer() &&
                        message.error["message"].is_string(),
                    "an error has an integer code and a string message");
  }
  const std::string line = udon::mcp::SerializeMessage(message);
  UDON_FUZZ_CHECK(line.find('\n') == std::string::npos, "a serialized message is one line");
  auto again = udon::mcp::ParseMessage(line);
  UDON_FUZZ_CHECK(again.ok(), "a serialized message parses");
  UDON_FUZZ_CHECK(SameMessage(*again, message), "a message survives serialization");
}

void CheckRefused(std::string_view frame, const udon::Error& error) {
  const std::string& code = error.code;
  UDON_FUZZ_CHECK(code == "rpc.malformed" || code == "rpc.batch" || code == "rpc.invalid",
                  "a refusal uses one of the documented codes");
  auto pointer = udon::json::Pointer::Parse(error.pointer);
  UDON_FUZZ_CHECK(pointer.ok(), "a refusal's pointer is a valid JSON pointer");
  if (code == "rpc.invalid") {
    auto document = udon::json::Parse(frame);
    UDON_FUZZ_CHECK(document.ok(), "an invalid message is JSON");
    // A missing required member ("jsonrpc" of `{}`) is named where it belongs.
    UDON_FUZZ_CHECK(udon::fuzz::NamesValueOrMissingMember(*pointer, *document),
                    "a refusal's pointer names a member of the frame or a missing one");
  }
  auto framed = udon::mcp::ParseFrame(frame, udon::mcp::kDefaultMaxMessageBytes);
  UDON_FUZZ_CHECK(!framed.ok() && framed.error().code == "mcp.malformed_message" &&
                      framed.error().details.value("cause", "") == code,
                  "the transport reports a malformed message with its cause");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view frame(reinterpret_cast<const char*>(data), size);
  auto message = udon::mcp::ParseMessage(frame);
  if (message.ok()) {
    CheckAccepted(*message);
  } else {
    CheckRefused(frame, message.error());
  }
  if (size > 0) {
    udon::mcp::MessageLimits limits;
    limits.max_bytes = size - 1;
    auto too_large = udon::mcp::ParseMessage(frame, limits);
    UDON_FUZZ_CHECK(!too_large.ok() && too_large.error().code == "rpc.too_large",
                    "a frame one byte above the limit is refused as too large");
    auto framed = udon::mcp::ParseFrame(frame, size - 1);
    UDON_FUZZ_CHECK(!framed.ok() && framed.error().code == "mcp.message_too_large",
                    "the transport reports an oversized frame as too large");
  }
  return 0;
}
