// How two versions of a schema relate: by the instances they accept, for drift reports.
//
// CompareSchemas is sound, not complete: it says widened (every instance the old schema
// accepts, the new one accepts) or narrowed (the reverse) only when a conjunction of steps,
// each sound on its own, proves it; whatever it cannot prove is restructured, never a
// guess. The steps, on the common subset of JSON Schema (2020-12 and draft-07):
//   - documentation keywords (IsDocumentationKeyword) are set aside first, at every depth;
//   - `true`, `{}` and `false` compare as the sets everything and nothing;
//   - `type` as a set of types (integer within number), `enum` as a set of values, `const`
//     (absent: every value), `required` as a set of names (fewer: wider);
//   - bounds: minimum, exclusiveMinimum, minLength, minItems, minProperties (lower: wider),
//     their max counterparts (higher: wider), uniqueItems (dropped: wider);
//   - properties: each name compares the schema that applies to it on each side (its
//     `properties` entry, else `additionalProperties`, absent meaning `true`), and every other
//     name compares `additionalProperties`: so a property added where the old schema had
//     `additionalProperties: false` widens, and one added where it had none narrows;
//   - `items` (a schema) compares recursively;
//   - every other keyword must be equal on both sides; `$ref` is followed only as a local
//     JSON pointer ("#/...") whose target is equal on both sides; `$dynamicRef`, anchors and
//     nested `$id` make any change restructured.
// Steps in both directions make the whole restructured. Schemas written differently that
// accept the same instances (a property `{}` added where any value was allowed) compare as
// widened: true, and the weaker claim.
//
// No errors: a schema that is not a JSON Schema compares as restructured when it changed.
#pragma once

#include <string_view>

#include "json/json.h"

namespace udon::schema {

enum class SchemaDrift {
  kSame,           // canonically equal
  kDocumentation,  // only documentation keywords differ: the same instances
  kWidened,        // the new schema accepts every instance the old one accepts
  kNarrowed,       // the old schema accepts every instance the new one accepts
  kRestructured,   // neither could be proved
};

// "same", "documentation", "widened", "narrowed", "restructured".
const char* SchemaDriftName(SchemaDrift drift);

SchemaDrift CompareSchemas(const json::Value& before, const json::Value& after);

// description, title, examples, $comment, default, deprecated, readOnly, writeOnly: keywords
// that never change which instances a schema accepts.
bool IsDocumentationKeyword(std::string_view name);

}  // namespace udon::schema
