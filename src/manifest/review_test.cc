#include "manifest/review.h"

#include <gtest/gtest.h>

#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::RenderTool;
using internal::ValidReviewJson;

Error ReviewError(const json::Value& review, const Policy& policy = {}) {
  auto result = ValidateReview(review, policy);
  EXPECT_FALSE(result.ok());
  return result.ok() ? Error{} : result.error();
}

TEST(ReviewTest, AcceptsTheStage1Review) {
  auto review = ValidateReview(ValidReviewJson(), Policy{});
  ASSERT_TRUE(review.ok()) << review.error().Describe();
  EXPECT_EQ(review->reviewer, "release-review@example.test");
  EXPECT_FALSE(review->model_backed);
  EXPECT_EQ(review->side_effects, std::vector<std::string>{"creates_render_artifacts"});
  EXPECT_EQ(review->concurrency, Concurrency::kSafe);
  EXPECT_EQ(review->input_channels.size(), 3u);
  EXPECT_TRUE(ValidateReviewAgainstTool(*review, RenderTool()).ok());
}

TEST(ReviewTest, AbsentOrMalformedFieldsAreIncomplete) {
  for (const char* pointer :
       {"/reviewer", "/reviewedAt", "/assertions", "/inputChannels", "/assertions/headless",
        "/assertions/independentCalls", "/assertions/modelBacked", "/assertions/sideEffects",
        "/assertions/concurrency", "/assertions/referenceBasedIO"}) {
    json::Value review = ValidReviewJson();
    json::Value::json_pointer ptr(pointer);
    review[ptr.parent_pointer()].erase(ptr.back());
    Error error = ReviewError(review);
    EXPECT_EQ(error.code, "review.incomplete") << pointer;
    EXPECT_EQ(error.pointer, pointer);
  }
  json::Value review = ValidReviewJson();
  review["assertions"]["modelBacked"] = "unknown";
  EXPECT_EQ(ReviewError(review).code, "review.incomplete");
  review = ValidReviewJson();
  review["reviewedAt"] = "yesterday";
  EXPECT_EQ(ReviewError(review).code, "review.incomplete");
}

TEST(ReviewTest, UnacceptableAssertionsAreRejected) {
  for (const char* name : {"headless", "independentCalls", "referenceBasedIO"}) {
    json::Value review = ValidReviewJson();
    review["assertions"][name] = false;
    Error error = ReviewError(review);
    EXPECT_EQ(error.code, "review.rejected") << name;
    EXPECT_EQ(error.pointer, std::string("/assertions/") + name);
  }
  json::Value review = ValidReviewJson();
  review["assertions"]["concurrency"] = "unknown";
  EXPECT_EQ(ReviewError(review).code, "review.rejected");
  review = ValidReviewJson();
  review["assertions"]["serializeScope"] = "tool";  // only with serialize
  EXPECT_EQ(ReviewError(review).code, "review.rejected");
  review = ValidReviewJson();
  review["inputChannels"]["/source"] = "secret";
  EXPECT_EQ(ReviewError(review).code, "review.rejected");
  review = ValidReviewJson();
  review["inputChannels"]["source"] = "data";  // not a pointer
  EXPECT_EQ(ReviewError(review).code, "review.rejected");
}

TEST(ReviewTest, LocalPolicyCanRejectAReviewThatStage1Accepts) {
  Policy no_models;
  no_models.allow_model_backed = false;
  json::Value review = ValidReviewJson();
  review["assertions"]["modelBacked"] = true;
  EXPECT_EQ(ReviewError(review, no_models).code, "review.rejected");
  Policy read_only;
  read_only.allowed_side_effects = std::vector<std::string>{};
  EXPECT_EQ(ReviewError(ValidReviewJson(), read_only).pointer, "/assertions/sideEffects/0");
  review = ValidReviewJson();
  review["assertions"]["sideEffects"] = json::Value::array();
  EXPECT_TRUE(ValidateReview(review, read_only).ok());
}

TEST(ReviewTest, SerializeScopeDefaultsToTool) {
  json::Value review = ValidReviewJson();
  review["assertions"]["concurrency"] = "serialize";
  EXPECT_EQ(ValidateReview(review, {})->serialize_scope, SerializeScope::kTool);
  review["assertions"]["serializeScope"] = "server";
  EXPECT_EQ(ValidateReview(review, {})->serialize_scope, SerializeScope::kServer);
}

TEST(ReviewTest, ChannelsMustResolveInTheInputSchema) {
  json::Value review_json = ValidReviewJson();
  review_json["inputChannels"]["/options/style"] = "instruction";  // through $ref
  auto review = ValidateReview(review_json, {});
  ASSERT_TRUE(review.ok());
  EXPECT_TRUE(ValidateReviewAgainstTool(*review, RenderTool()).ok());
  review_json["inputChannels"]["/nope"] = "data";
  review = ValidateReview(review_json, {});
  Status status = ValidateReviewAgainstTool(*review, RenderTool());
  EXPECT_EQ(status.error().code, "review.rejected");
  EXPECT_EQ(status.error().pointer, "/inputChannels/~1nope");
}

TEST(ReviewTest, TaskRequiredToolsCannotBeReviewed) {
  json::Value tool = RenderTool();
  tool["execution"] = {{"taskSupport", "required"}};
  EXPECT_EQ(ValidateReviewAgainstTool(*ValidateReview(ValidReviewJson(), {}), tool).error().code,
            "catalog.task_required");
  tool["execution"]["taskSupport"] = "optional";
  EXPECT_TRUE(ValidateReviewAgainstTool(*ValidateReview(ValidReviewJson(), {}), tool).ok());
}

TEST(ReviewTest, CoverageIsByPathOrAncestor) {
  json::Value review_json = ValidReviewJson();
  review_json["inputChannels"] = {{"/options", "data"}};
  auto review = ValidateReview(review_json, {});
  ASSERT_TRUE(review.ok());
  EXPECT_TRUE(ChannelCovers(*review, "/options"));
  EXPECT_TRUE(ChannelCovers(*review, "/options/style"));
  EXPECT_FALSE(ChannelCovers(*review, "/optionsX"));
  EXPECT_FALSE(ChannelCovers(*review, "/source"));
  EXPECT_EQ(UnclassifiedTopLevelArguments(*review, RenderTool()),
            (std::vector<std::string>{"angles", "resolution", "source"}));
  review_json["inputChannels"] = {{"", "data"}};
  EXPECT_TRUE(UnclassifiedTopLevelArguments(*ValidateReview(review_json, {}), RenderTool()).empty());
}

TEST(ReviewTest, SelectToolNeedsExactlyOneOccurrence) {
  json::Value doc = internal::ValidManifestJson();
  auto manifest = Manifest::FromValue(doc);
  EXPECT_TRUE(SelectTool(*manifest, "blender_farm", "render_turntable").ok());
  EXPECT_EQ(SelectTool(*manifest, "blender_farm", "Render_Turntable").error().code,
            "catalog.tool_missing");
  EXPECT_EQ(SelectTool(*manifest, "other", "render_turntable").error().code,
            "manifest.server_unknown");
  doc["servers"]["blender_farm"]["toolPages"][1]["tools"].push_back(RenderTool());
  auto duplicated = Manifest::FromValue(doc);
  Error error = SelectTool(*duplicated, "blender_farm", "render_turntable").error();
  EXPECT_EQ(error.code, "catalog.tool_duplicate");
  EXPECT_EQ(error.pointer, "/servers/blender_farm/toolPages/1/tools/1");
}

TEST(ReviewTest, ShowEscapesWhatAReviewerCannotSee) {
  // A right-to-left override and a tag character hidden in a description, a zero-width
  // space in a schema, a line break in a member name.
  json::Value tool = RenderTool();
  tool["description"] = "Safe tool\xE2\x80\xAE" "edoc\xF3\xA0\x81\x81 end\nsecond line";
  tool["inputSchema"]["properties"]["source"]["description"] = "zero\xE2\x80\x8Bwidth";
  tool["x-odd\nmember"] = "\xE6\x97\xA5";
  const json::DisplayText shown = RenderToolForReview(tool);
  EXPECT_EQ(shown.hidden.code_points, (std::vector<char32_t>{0x202E, 0xE0041, 0x200B, 0x0A}));
  EXPECT_NE(shown.text.find("description: Safe tool<U+202E>edoc<U+E0041> end\nsecond line\n"), std::string::npos)
      << shown.text;
  EXPECT_NE(shown.text.find("zero<U+200B>width"), std::string::npos);
  EXPECT_NE(shown.text.find("x-odd<U+000A>member:\n\"\xE6\x97\xA5\"\n"), std::string::npos) << shown.text;
  EXPECT_EQ(shown.text.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_EQ(shown.text.find("\xE2\x80\x8B"), std::string::npos);
  EXPECT_TRUE(RenderToolForReview(RenderTool()).hidden.empty());
}


// One function records a review for `review` and the workbench: on success the review is
// in place and the digest follows; on any error the manifest is byte-for-byte unchanged.
TEST(ApplyReviewTest, RecordsAValidReviewAndLeavesTheManifestUnchangedOnAnyError) {
  json::Value doc = internal::ValidManifestJson();
  doc["servers"]["blender_farm"]["reviews"] = json::Value::object();
  auto loaded = Manifest::FromValue(doc);
  ASSERT_TRUE(loaded.ok()) << loaded.error().Describe();
  Manifest m = std::move(loaded).value();
  const Seconds now = *ParseInstant("2026-08-30T14:00:00Z");
  const std::string before = m.sha256();

  json::Value incomplete = ValidReviewJson();
  incomplete["assertions"].erase("headless");
  auto refused = ApplyReview(m, "blender_farm", "render_turntable", incomplete, Policy{}, now);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "review.incomplete");
  EXPECT_EQ(refused.error().pointer, "/assertions/headless");
  EXPECT_EQ(m.sha256(), before);

  json::Value future = ValidReviewJson();
  future["reviewedAt"] = "2026-09-30T13:00:00Z";
  auto from_future = ApplyReview(m, "blender_farm", "render_turntable", future, Policy{}, now);
  ASSERT_FALSE(from_future.ok());
  EXPECT_EQ(from_future.error().code, "manifest.invalid_instant");
  EXPECT_EQ(m.sha256(), before);

  auto missing = ApplyReview(m, "blender_farm", "no_such_tool", ValidReviewJson(), Policy{}, now);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "catalog.tool_missing");

  auto applied = ApplyReview(m, "blender_farm", "render_turntable", ValidReviewJson(), Policy{}, now);
  ASSERT_TRUE(applied.ok()) << applied.error().Describe();
  EXPECT_NE(m.sha256(), before);
  ASSERT_NE(m.review("blender_farm", "render_turntable"), nullptr);
  EXPECT_EQ(*m.review("blender_farm", "render_turntable"), ValidReviewJson());
}

TEST(ArgumentPointersTest, ListsPropertiesThroughLocalRefsAndEachResolves) {
  const json::Value tool = RenderTool();
  const std::vector<std::string> pointers = ArgumentPointers(tool);
  EXPECT_EQ(pointers, (std::vector<std::string>{"/angles", "/options", "/options/style", "/resolution", "/source"}));
  Review review;
  for (const std::string& pointer : pointers) review.input_channels.push_back({pointer, ChannelClass::kData});
  EXPECT_TRUE(ValidateReviewAgainstTool(review, tool).ok());
  EXPECT_TRUE(ArgumentPointers(json::Value::parse(R"({"name":"x"})")).empty());
}

}  // namespace
}  // namespace udon::manifest
