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
  std::size_t flagged = 0;
  // A right-to-left override and a tag character hidden in a description.
  const std::string hidden = "Safe tool\xE2\x80\xAE" "edoc\xF3\xA0\x81\x81 end";
  EXPECT_EQ(EscapeForReview(hidden, flagged), "Safe tool\\u{202E}edoc\\u{E0041} end");
  EXPECT_EQ(flagged, 2u);
  flagged = 0;
  EXPECT_EQ(EscapeForReview("plain\nline \\u{202E} \xE6\x97\xA5", flagged),
            "plain\nline \\\\u{202E} \xE6\x97\xA5");
  EXPECT_EQ(flagged, 0u);

  json::Value tool = RenderTool();
  tool["description"] = hidden;
  tool["inputSchema"]["properties"]["source"]["description"] = "zero\xE2\x80\x8Bwidth";
  flagged = 0;
  const std::string shown = RenderToolForReview(tool, flagged);
  EXPECT_EQ(flagged, 3u);
  EXPECT_NE(shown.find("description: Safe tool\\u{202E}edoc"), std::string::npos);
  EXPECT_NE(shown.find("zero\\u{200B}width"), std::string::npos);
  EXPECT_EQ(shown.find("\xE2\x80\xAE"), std::string::npos);
}

}  // namespace
}  // namespace udon::manifest
