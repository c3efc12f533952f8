#include "manifest/manifest.h"

#include <gtest/gtest.h>

#include "json/canonical.h"

#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::ValidManifestJson;

Error LoadError(const json::Value& doc) {
  auto manifest = Manifest::FromValue(doc);
  EXPECT_FALSE(manifest.ok());
  return manifest.ok() ? Error{} : manifest.error();
}

TEST(ManifestTest, LoadsAValidManifestAndPinsItsCanonicalDigest) {
  auto manifest = Manifest::FromValue(ValidManifestJson());
  ASSERT_TRUE(manifest.ok()) << manifest.error().Describe();
  EXPECT_EQ(manifest->sha256(), *json::CanonicalSha256(ValidManifestJson()));
  EXPECT_EQ(manifest->protocol_version(), "2025-11-25");
  EXPECT_EQ(manifest->server_keys(), std::vector<std::string>{"blender_farm"});
  EXPECT_TRUE(manifest->CheckCaptureComplete().ok());
  auto found = manifest->FindTool("blender_farm", "render_turntable");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].Pointer("blender_farm"), "/servers/blender_farm/toolPages/0/tools/0");
  EXPECT_NE(manifest->review("blender_farm", "render_turntable"), nullptr);
}

TEST(ManifestTest, FormattingNeverChangesTheDigest) {
  auto compact = Manifest::FromText(ValidManifestJson().dump());
  auto pretty = Manifest::FromText(Manifest::FromValue(ValidManifestJson())->ToPrettyJson());
  ASSERT_TRUE(compact.ok() && pretty.ok());
  EXPECT_EQ(compact->sha256(), pretty->sha256());
}

TEST(ManifestTest, ExtensionMembersAreKeptAndHashed) {
  json::Value doc = ValidManifestJson();
  doc["x-note"] = "kept";
  doc["servers"]["blender_farm"]["x-origin"] = 1;
  auto manifest = Manifest::FromValue(doc);
  ASSERT_TRUE(manifest.ok());
  EXPECT_NE(manifest->sha256(), Manifest::FromValue(ValidManifestJson())->sha256());
}

TEST(ManifestTest, RefusesUnknownMembersAtEveryLevel) {
  struct Case { const char* pointer; };
  for (const char* where : {"", "/servers/blender_farm", "/servers/blender_farm/reviews/render_turntable",
                            "/servers/blender_farm/reviews/render_turntable/assertions"}) {
    json::Value doc = ValidManifestJson();
    auto target = json::Value::json_pointer(where);
    doc[target]["surprise"] = true;
    Error error = LoadError(doc);
    EXPECT_EQ(error.code, "manifest.invalid") << where;
    EXPECT_EQ(error.pointer, std::string(where) + "/surprise");
  }
}

TEST(ManifestTest, RefusesWrongProfileTypesAndServerKeys) {
  json::Value doc = ValidManifestJson();
  doc["profile"] = "openudon.mcp-tool-manifest.0.2";
  EXPECT_EQ(LoadError(doc).pointer, "/profile");
  doc = ValidManifestJson();
  doc["servers"]["bad key!"] = doc["servers"]["blender_farm"];
  EXPECT_EQ(LoadError(doc).code, "manifest.invalid");
  doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["toolPages"] = json::Value::object();
  EXPECT_EQ(LoadError(doc).pointer, "/servers/blender_farm/toolPages");
  doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["toolPages"][1]["tools"][0].erase("name");
  EXPECT_EQ(LoadError(doc).pointer, "/servers/blender_farm/toolPages/1/tools/0");
}

TEST(ManifestTest, RefusesBytesTheStrictParserRefuses) {
  auto duplicate = Manifest::FromText(R"({"profile":"openudon.mcp-tool-manifest.0.1","profile":"x"})");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code, "manifest.invalid");
  EXPECT_EQ(duplicate.error().details["jsonCode"], "json.duplicate_key");
  EXPECT_EQ(Manifest::FromText("{\"profile\":\"\xff\"}").error().code, "manifest.invalid");
  EXPECT_EQ(Manifest::Load("/nonexistent/manifest.json").error().code, "manifest.unreadable");
}

TEST(ManifestTest, IncompleteCaptureIsNamed) {
  for (const char* member : {"/protocolVersion", "/capturedAt", "/expiresAt",
                             "/servers/blender_farm/serverInfo", "/servers/blender_farm/toolPages"}) {
    json::Value doc = ValidManifestJson();
    doc.erase(json::Value::json_pointer(member).back());
    if (std::string(member).rfind("/servers", 0) == 0) {
      doc["servers"]["blender_farm"].erase(json::Value::json_pointer(member).back());
    }
    auto manifest = Manifest::FromValue(doc);
    ASSERT_TRUE(manifest.ok()) << member;
    Status status = manifest->CheckCaptureComplete();
    ASSERT_FALSE(status.ok()) << member;
    EXPECT_EQ(status.error().code, "manifest.incomplete") << member;
  }
}

TEST(ManifestTest, AFirstPageOnlyCaptureIsIncomplete) {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["toolPages"].erase(1);  // the page that ended the listing
  auto manifest = Manifest::FromValue(doc);
  ASSERT_TRUE(manifest.ok());
  Status status = manifest->CheckCaptureComplete();
  EXPECT_EQ(status.error().code, "manifest.incomplete");
  EXPECT_EQ(status.error().pointer, "/servers/blender_farm/toolPages/0/nextCursor");
}

TEST(ManifestTest, FreshnessChecksExpiryAndTheWindow) {
  auto manifest = Manifest::FromValue(ValidManifestJson());
  ASSERT_TRUE(manifest.ok());
  Policy policy;
  const Seconds captured = *ParseInstant("2026-08-30T12:00:00Z");
  EXPECT_TRUE(manifest->CheckFreshness(captured + 3600, policy).ok());
  EXPECT_EQ(manifest->CheckFreshness(captured + 7 * kSecondsPerDay, policy).error().code,
            "manifest.expired");
  policy.max_review_window_days = 6;
  EXPECT_EQ(manifest->CheckFreshness(captured, policy).error().code,
            "manifest.window_exceeds_policy");
}

TEST(ManifestTest, ACaptureFromTheFutureIsAnInvalidInstant) {
  // A year ahead with a 29-day window: inside the window and not expired, yet refused.
  json::Value doc = ValidManifestJson();
  doc["capturedAt"] = "2027-08-30T12:00:00Z";
  doc["expiresAt"] = "2027-09-28T12:00:00Z";
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"]["reviewedAt"] = "2027-08-30T13:00:00Z";
  auto manifest = Manifest::FromValue(doc);
  ASSERT_TRUE(manifest.ok());
  const Seconds now = *ParseInstant("2026-08-30T12:00:00Z");
  Status status = manifest->CheckFreshness(now, Policy{});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "manifest.invalid_instant");
  EXPECT_EQ(status.error().pointer, "/capturedAt");
}

TEST(ManifestTest, ClockSkewIsToleratedUpToThePolicy) {
  auto manifest = Manifest::FromValue(ValidManifestJson());
  ASSERT_TRUE(manifest.ok());
  // reviewedAt is 13:00:00; capturedAt 12:00:00.
  const Seconds reviewed = *ParseInstant("2026-08-30T13:00:00Z");
  Policy policy;
  EXPECT_TRUE(manifest->CheckInstants(reviewed - 300, policy).ok());
  EXPECT_EQ(manifest->CheckInstants(reviewed - 301, policy).error().code, "manifest.invalid_instant");
  policy.clock_skew_seconds = 0;
  EXPECT_TRUE(manifest->CheckInstants(reviewed, policy).ok());
  Status ahead = manifest->CheckInstants(reviewed - 1, policy);
  ASSERT_FALSE(ahead.ok());
  EXPECT_EQ(ahead.error().pointer, "/servers/blender_farm/reviews/render_turntable/reviewedAt");
  EXPECT_EQ(manifest->CheckFreshness(reviewed - 1, policy).error().code, "manifest.invalid_instant");
}

TEST(ManifestTest, AReviewOlderThanItsCaptureIsAnInvalidInstant) {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"]["reviewedAt"] = "2026-08-30T11:59:59Z";
  auto manifest = Manifest::FromValue(doc);
  ASSERT_TRUE(manifest.ok());
  Status status = manifest->CheckFreshness(*ParseInstant("2026-08-31T12:00:00Z"), Policy{});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "manifest.invalid_instant");
  EXPECT_EQ(status.error().pointer, "/servers/blender_farm/reviews/render_turntable/reviewedAt");
  // Reviewed in the same second as the capture is fine.
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"]["reviewedAt"] = "2026-08-30T12:00:00Z";
  EXPECT_TRUE(Manifest::FromValue(doc)->CheckFreshness(*ParseInstant("2026-08-31T12:00:00Z"), Policy{}).ok());
}

TEST(ManifestTest, ToolNamesCountDuplicates) {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["toolPages"][1]["tools"].push_back(internal::RenderTool());
  auto manifest = Manifest::FromValue(doc);
  ASSERT_TRUE(manifest.ok());
  auto names = manifest->ToolNames("blender_farm");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], (std::pair<std::string, std::size_t>{"render_turntable", 2}));
  EXPECT_EQ(manifest->FindTool("blender_farm", "render_turntable").size(), 2u);
}

// FindTool's index holds positions: a copy's locations point into the copy, and SetReview
// (which rebuilds nothing of the pages) leaves them right.
TEST(ManifestTest, FindToolPointsIntoTheManifestItIsAskedOf) {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["toolPages"][1]["tools"].push_back(internal::RenderTool());
  auto original = Manifest::FromValue(doc);
  ASSERT_TRUE(original.ok());
  const Manifest copy = *original;
  auto in_copy = copy.FindTool("blender_farm", "render_turntable");
  ASSERT_EQ(in_copy.size(), 2u);
  EXPECT_EQ(in_copy[1].Pointer("blender_farm"), "/servers/blender_farm/toolPages/1/tools/1");
  EXPECT_EQ(in_copy[1].tool, &copy.document()["servers"]["blender_farm"]["toolPages"][1]["tools"][1]);
  EXPECT_EQ(*in_copy[0].tool, internal::RenderTool());
  EXPECT_TRUE(copy.FindTool("blender_farm", "absent").empty());
  EXPECT_TRUE(copy.FindTool("no_such_server", "render_turntable").empty());
}

TEST(ManifestTest, SetReviewRehashes) {
  auto manifest = Manifest::FromValue(ValidManifestJson());
  ASSERT_TRUE(manifest.ok());
  const std::string before = manifest->sha256();
  json::Value review = internal::ValidReviewJson();
  review["notes"] = "second look";
  ASSERT_TRUE(manifest->SetReview("blender_farm", "render_turntable", review).ok());
  EXPECT_NE(manifest->sha256(), before);
  EXPECT_EQ(manifest->sha256(), *json::CanonicalSha256(manifest->document()));
  EXPECT_EQ(manifest->SetReview("nope", "t", review).error().code, "manifest.server_unknown");
}

}  // namespace
}  // namespace udon::manifest
