// The bundled meta-schemas (generated from src/schema/metaschemas/ at configure time).
#pragma once

#include <cstddef>

namespace udon::schema::internal {

// JSON texts; each document's "$id" is the URI it is known by.
extern const char* const kMetaSchemaTexts[];
extern const std::size_t kMetaSchemaCount;

}  // namespace udon::schema::internal
