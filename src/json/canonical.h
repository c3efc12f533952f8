// RFC 8785 JSON Canonicalization Scheme (JCS).
#pragma once

#include <string>
#include <string_view>

#include "json/json.h"
#include "base/result.h"

namespace udon::json {

// Canonical UTF-8 bytes of a value: members sorted by UTF-16 code units, ES6 number
// serialization, minimal string escaping. Refuses what JCS cannot represent
// (json.not_canonicalizable): non-finite numbers, strings that are not valid Unicode,
// and I-JSON noncharacters.
Result<std::string> Canonicalize(const Value& value);

// Strict parse plus canonicalization straight from bytes, without building a Value: the
// fast path for large documents. Same errors as Parse, then as Canonicalize.
Result<std::string> CanonicalizeText(std::string_view text, const ParseOptions& options = {});

// Lowercase hex SHA-256 of the RFC 8785 canonical form: the digest manifests pin.
Result<std::string> CanonicalSha256(const Value& value);

// CanonicalSha256 straight from bytes: the strict parse of CanonicalizeText, with the
// canonical bytes streamed into the hash instead of returned. Same errors as
// CanonicalizeText.
Result<std::string> CanonicalSha256Text(std::string_view text, const ParseOptions& options = {});

// ES6 Number.prototype.toString for a finite double (shortest round-trip digits, -0 as 0).
std::string FormatEs6Number(double value);

}  // namespace udon::json
