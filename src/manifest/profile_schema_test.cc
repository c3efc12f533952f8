#include "manifest/profile_schema.h"

#include <gtest/gtest.h>

#include "manifest/internal/test_manifest.h"
#include "manifest/manifest.h"
#include "schema/schema.h"

namespace udon::manifest {
namespace {

TEST(ProfileSchemaTest, ShippedSchemasAreValidJsonSchemas) {
  for (const json::Value* schema : {&ManifestProfileSchema(), &BindingSchema()}) {
    ASSERT_TRUE(schema->is_object());
    auto meta = schema::CheckAgainstMetaSchema(*schema);
    ASSERT_TRUE(meta.ok()) << meta.error().Describe();
    EXPECT_TRUE(meta->valid);
  }
}

TEST(ProfileSchemaTest, AgreesWithTheLoaderOnValidAndInvalidManifests) {
  EXPECT_TRUE(CheckAgainstProfileSchema(internal::ValidManifestJson()).empty());
  for (const char* where : {"", "/servers/blender_farm", "/servers/blender_farm/reviews/render_turntable",
                            "/servers/blender_farm/reviews/render_turntable/assertions"}) {
    json::Value doc = internal::ValidManifestJson();
    doc[json::Value::json_pointer(where)]["surprise"] = true;
    EXPECT_FALSE(Manifest::FromValue(doc).ok()) << where;
    EXPECT_FALSE(CheckAgainstProfileSchema(doc).empty()) << where;
  }
  json::Value doc = internal::ValidManifestJson();
  doc["x-extension"] = {{"anything", 1}};
  EXPECT_TRUE(CheckAgainstProfileSchema(doc).empty());
  doc["capturedAt"] = "2026-08-30 12:00";
  auto problems = CheckAgainstProfileSchema(doc);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].pointer, "/capturedAt");
}

TEST(ProfileSchemaTest, BindingSchemaIsClosed) {
  auto compiled = schema::CompiledSchema::Compile(BindingSchema());
  ASSERT_TRUE(compiled.ok());
  json::Value binding = {{"manifest", "./m.json"}, {"manifestSha256", std::string(64, 'a')},
                         {"server", "s"}, {"tool", "t"}};
  EXPECT_TRUE(compiled->IsValid(binding));
  binding["x-note"] = 1;
  EXPECT_TRUE(compiled->IsValid(binding));
  binding["extra"] = 1;
  EXPECT_FALSE(compiled->IsValid(binding));
  binding.erase("extra");
  binding["manifestSha256"] = std::string(64, 'A');
  EXPECT_FALSE(compiled->IsValid(binding));
}

}  // namespace
}  // namespace udon::manifest
