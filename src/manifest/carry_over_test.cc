#include "manifest/carry_over.h"

#include <gtest/gtest.h>

#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::ValidManifestJson;

// A later capture of the same server: new instants, no reviews.
json::Value FreshCapture() {
  json::Value doc = ValidManifestJson();
  doc["capturedAt"] = "2026-09-02T12:00:00Z";
  doc["expiresAt"] = "2026-09-09T12:00:00Z";
  doc["servers"]["blender_farm"]["reviews"] = json::Value::object();
  return doc;
}

json::Value& Render(json::Value& doc) { return doc["servers"]["blender_farm"]["toolPages"][0]["tools"][0]; }

json::Value WithListAssetsReview() {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["reviews"]["list_assets"] = internal::ValidReviewJson();
  doc["servers"]["blender_farm"]["reviews"]["list_assets"]["inputChannels"] = json::Value::object();
  return doc;
}

const Seconds kNow = *ParseInstant("2026-09-03T00:00:00Z");

TEST(CarryOverTest, KeepsReviewsOfUnchangedToolsMarkedAndStillValid) {
  Manifest old = *Manifest::FromValue(ValidManifestJson());
  Manifest fresh = *Manifest::FromValue(FreshCapture());
  const std::string unreviewed_sha = fresh.sha256();
  auto report = CarryOverReviews(old, fresh);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_EQ(report->kept[0].tool, "render_turntable");
  EXPECT_TRUE(report->dropped.empty());
  EXPECT_NE(fresh.sha256(), unreviewed_sha) << "the digest follows the carried review";
  const json::Value* review = fresh.review("blender_farm", "render_turntable");
  ASSERT_NE(review, nullptr);
  // The reviewer's instant stays; the mark names the capture the reviewer read.
  EXPECT_EQ((*review)["reviewedAt"], "2026-08-30T13:00:00Z");
  EXPECT_EQ((*review)[kCarriedOverMember]["fromCapturedAt"], "2026-08-30T12:00:00Z");
  // Earlier than the new capturedAt, accepted because it is marked carried over.
  EXPECT_TRUE(fresh.CheckInstants(kNow, Policy{}).ok());
  EXPECT_TRUE(fresh.CheckFreshness(kNow, Policy{}).ok());
}

TEST(CarryOverTest, DropsChangedRemovedAndAmbiguousToolsWithTheReason) {
  Manifest old = *Manifest::FromValue(WithListAssetsReview());
  json::Value changed = FreshCapture();
  Render(changed)["description"] = "Render views, and upload them.";
  Manifest fresh = *Manifest::FromValue(changed);
  auto report = CarryOverReviews(old, fresh);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->dropped.size(), 1u);
  EXPECT_EQ(report->dropped[0].tool, "render_turntable");
  EXPECT_EQ(report->dropped[0].reason, DropReason::kChanged);
  ASSERT_EQ(report->dropped[0].differences.size(), 1u);
  EXPECT_EQ(report->dropped[0].differences[0].pointer, "/description");
  EXPECT_EQ(fresh.review("blender_farm", "render_turntable"), nullptr);
  ASSERT_EQ(report->kept.size(), 1u);
  EXPECT_EQ(report->kept[0].tool, "list_assets");

  json::Value removed = FreshCapture();
  removed["servers"]["blender_farm"]["toolPages"][1]["tools"] = json::Value::array();
  Render(removed)["name"] = "render_turntable_v2";
  Manifest without = *Manifest::FromValue(removed);
  report = CarryOverReviews(old, without);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->kept.empty());
  ASSERT_EQ(report->dropped.size(), 2u);
  for (const auto& dropped : report->dropped) EXPECT_EQ(dropped.reason, DropReason::kRemoved) << dropped.tool;

  json::Value twice = FreshCapture();
  twice["servers"]["blender_farm"]["toolPages"][1]["tools"].push_back(Render(twice));
  Manifest duplicated = *Manifest::FromValue(twice);
  report = CarryOverReviews(old, duplicated);
  ASSERT_TRUE(report.ok());
  bool ambiguous = false;
  for (const auto& dropped : report->dropped) ambiguous = ambiguous || dropped.reason == DropReason::kAmbiguous;
  EXPECT_TRUE(ambiguous);
  EXPECT_EQ(duplicated.review("blender_farm", "render_turntable"), nullptr);
}

TEST(CarryOverTest, ServerNotCapturedDropsItsReviewsAndServerInfoChangeIsNoted) {
  Manifest old = *Manifest::FromValue(ValidManifestJson());
  json::Value other = FreshCapture();
  other["servers"]["other"] = other["servers"]["blender_farm"];
  other["servers"].erase("blender_farm");
  Manifest fresh = *Manifest::FromValue(other);
  auto report = CarryOverReviews(old, fresh);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->dropped.size(), 1u);
  EXPECT_EQ(report->dropped[0].reason, DropReason::kRemoved);

  json::Value bumped = FreshCapture();
  bumped["servers"]["blender_farm"]["serverInfo"]["version"] = "0.8.3";
  Manifest newer = *Manifest::FromValue(bumped);
  report = CarryOverReviews(old, newer);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->kept.size(), 1u);
  ASSERT_EQ(report->server_info_changed.size(), 1u);
  EXPECT_EQ(report->server_info_changed[0].second[0].pointer, "/version");
  const json::Value json = CarryOverToJson(*report);
  EXPECT_EQ(json["serverInfoChanged"][0]["pointers"][0], "/version");
  EXPECT_NE(CarryOverToText(*report).find("note: serverInfo of blender_farm changed /version"), std::string::npos);
}

TEST(CarryOverTest, CarryingTwiceKeepsTheCaptureTheReviewerRead) {
  Manifest old = *Manifest::FromValue(ValidManifestJson());
  Manifest second = *Manifest::FromValue(FreshCapture());
  ASSERT_TRUE(CarryOverReviews(old, second).ok());
  json::Value third_doc = FreshCapture();
  third_doc["capturedAt"] = "2026-09-05T12:00:00Z";
  third_doc["expiresAt"] = "2026-09-12T12:00:00Z";
  Manifest third = *Manifest::FromValue(third_doc);
  ASSERT_TRUE(CarryOverReviews(second, third).ok());
  EXPECT_EQ((*third.review("blender_farm", "render_turntable"))[kCarriedOverMember]["fromCapturedAt"],
            "2026-08-30T12:00:00Z");
}

TEST(CarryOverTest, TheInstantRuleAcceptsOnlyAConsistentMark) {
  json::Value doc = FreshCapture();
  json::Value review = internal::ValidReviewJson();  // reviewed 2026-08-30T13:00:00Z
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"] = review;
  EXPECT_EQ(Manifest::FromValue(doc)->CheckInstants(kNow, Policy{}).error().code, "manifest.invalid_instant");
  // A mark claiming a capture after the review: the review cannot have read it.
  review[kCarriedOverMember] = {{"fromCapturedAt", "2026-08-31T00:00:00Z"}};
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"] = review;
  EXPECT_EQ(Manifest::FromValue(doc)->CheckInstants(kNow, Policy{}).error().code, "manifest.invalid_instant");
  review[kCarriedOverMember] = {{"fromCapturedAt", "not an instant"}};
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"] = review;
  EXPECT_EQ(Manifest::FromValue(doc)->CheckInstants(kNow, Policy{}).error().code, "manifest.invalid_instant");
  review[kCarriedOverMember] = {{"fromCapturedAt", "2026-08-30T12:00:00Z"}};
  doc["servers"]["blender_farm"]["reviews"]["render_turntable"] = review;
  EXPECT_TRUE(Manifest::FromValue(doc)->CheckInstants(kNow, Policy{}).ok());
}

TEST(CarryOverTest, TextEscapesNamesAndListsPointers) {
  CarryOverReport report;
  report.kept.push_back({"s", "a\xE2\x80\xAE" "b"});
  report.dropped.push_back({"s", "t", DropReason::kChanged, {{"/description", json::DifferenceKind::kChanged}}});
  const std::string text = CarryOverToText(report);
  EXPECT_NE(text.find("kept review of s/a<U+202E>b: tool unchanged"), std::string::npos) << text;
  EXPECT_NE(text.find("note: the tool name held 1 hidden character"), std::string::npos) << text;
  EXPECT_NE(text.find("dropped review of s/t: changed /description"), std::string::npos) << text;
  EXPECT_EQ(CarryOverToJson(report)["dropped"][0]["pointers"][0], "/description");
}

}  // namespace
}  // namespace udon::manifest
