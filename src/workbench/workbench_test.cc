#include "workbench/workbench.h"

#include <gtest/gtest.h>

#include "json/canonical.h"
#include "manifest/internal/test_manifest.h"
#include "manifest/review.h"
#include "test_support.h"

namespace udon::workbench {
namespace {

using manifest::internal::ValidManifestJson;
using manifest::internal::ValidReviewJson;

// U+202E (right-to-left override) and U+E0041 (tag latin capital A), as UTF-8.
const std::string kHiddenDescription = "Render views.\xE2\x80\xAE" "gnp.\xF3\xA0\x81\x81 Done.";

manifest::Seconds At(const char* instant) { return *manifest::ParseInstant(instant); }

// A manifest with render_turntable (description hiding two code points) unreviewed and
// list_assets unreviewed, written to DIR/name.
std::string WriteManifest(const testing::TempDir& dir, const std::string& name, json::Value doc) {
  dir.Write(name, doc.dump(2));
  return dir.File(name);
}

json::Value UnreviewedDoc() {
  json::Value doc = ValidManifestJson();
  doc["servers"]["blender_farm"]["reviews"] = json::Value::object();
  doc["servers"]["blender_farm"]["toolPages"][0]["tools"][0]["description"] = kHiddenDescription;
  return doc;
}

bool HasMarker(const json::Value& segments, const std::string& name) {
  for (const json::Value& segment : segments) {
    if (segment.contains("h") && segment["h"] == name) return true;
  }
  return false;
}

TEST(WorkbenchTest, OverviewCountsReviewedUnreviewedAndExpired) {
  testing::TempDir dir;
  json::Value doc = ValidManifestJson();  // render_turntable reviewed, list_assets not
  Workbench bench({WriteManifest(dir, "m.json", doc), "", std::nullopt, "", {}});
  auto fresh = bench.Overview(At("2026-08-31T00:00:00Z"));
  ASSERT_TRUE(fresh.ok()) << fresh.error().Describe();
  EXPECT_EQ((*fresh)["counts"], json::Value::parse(R"({"tools":2,"reviewed":1,"unreviewed":1,"expired":0})"));
  EXPECT_EQ((*fresh)["servers"][0]["key"], "blender_farm");
  EXPECT_EQ((*fresh)["capturedAt"], "2026-08-30T12:00:00Z");
  EXPECT_EQ((*fresh)["maxReviewWindowDays"], 30);
  EXPECT_FALSE(fresh->contains("freshness"));
  auto later = bench.Overview(At("2026-09-07T00:00:00Z"));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)["counts"]["expired"], 1);
  EXPECT_EQ((*later)["counts"]["reviewed"], 0);
  EXPECT_EQ((*later)["freshness"]["code"], "manifest.expired");
}

// The page draws markers from the binary's segments: the bidi override and the tag
// character arrive named, exactly as review --show names them.
TEST(WorkbenchTest, ToolPageCarriesMarkersDigestAndArgumentPointers) {
  testing::TempDir dir;
  const json::Value doc = UnreviewedDoc();
  Workbench bench({WriteManifest(dir, "m.json", doc), "", std::nullopt, "", {}});
  auto tool = bench.Tool("blender_farm", "render_turntable");
  ASSERT_TRUE(tool.ok()) << tool.error().Describe();
  EXPECT_TRUE(HasMarker((*tool)["description"], "U+202E"));
  EXPECT_TRUE(HasMarker((*tool)["description"], "U+E0041"));
  EXPECT_EQ((*tool)["hiddenNotice"], "the tool held 2 hidden characters (U+202E, U+E0041)");
  const json::Value& raw = doc["servers"]["blender_farm"]["toolPages"][0]["tools"][0];
  EXPECT_EQ((*tool)["toolSha256"], *json::CanonicalSha256(raw));
  ASSERT_EQ((*tool)["argumentPointers"].size(), 5u);
  EXPECT_EQ((*tool)["argumentPointers"][0]["pointer"], "/angles");
  EXPECT_TRUE((*tool)["review"].is_null());
  EXPECT_EQ((*tool)["inputSchema"]["t"], "object");
  EXPECT_TRUE((*tool)["annotations"].is_null());
  auto missing = bench.Tool("blender_farm", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "catalog.tool_missing");
}

TEST(WorkbenchTest, SaveRecordsWhatReviewRecordsAndWritesNothingOnAnError) {
  testing::TempDir dir;
  const std::string path = WriteManifest(dir, "m.json", UnreviewedDoc());
  Workbench bench({path, "", std::nullopt, "", {}});
  const std::string before = dir.Read("m.json");
  const std::string base = manifest::Manifest::FromText(before)->sha256();
  const manifest::Seconds now = At("2026-08-30T14:00:00Z");

  json::Value incomplete = ValidReviewJson();
  incomplete["assertions"].erase("headless");
  auto refused = bench.SaveReview(
      {{"server", "blender_farm"}, {"tool", "render_turntable"}, {"baseSha256", base}, {"review", incomplete}}, now);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "review.incomplete");
  EXPECT_EQ(refused.error().pointer, "/assertions/headless");
  EXPECT_EQ(dir.Read("m.json"), before);

  auto stale = bench.SaveReview(
      {{"server", "blender_farm"}, {"tool", "render_turntable"}, {"baseSha256", std::string(64, '0')},
       {"review", ValidReviewJson()}},
      now);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, "workbench.stale");
  EXPECT_EQ(dir.Read("m.json"), before);

  json::Value review = ValidReviewJson();
  review.erase("reviewedAt");  // the workbench dates the decision, as review --from does
  auto saved = bench.SaveReview(
      {{"server", "blender_farm"}, {"tool", "render_turntable"}, {"baseSha256", base}, {"review", review}}, now);
  ASSERT_TRUE(saved.ok()) << saved.error().Describe();
  // The same library call on the same input gives the same file and digest.
  auto expected = manifest::Manifest::FromText(before);
  review["reviewedAt"] = "2026-08-30T14:00:00Z";
  ASSERT_TRUE(manifest::ApplyReview(*expected, "blender_farm", "render_turntable", review, {}, now).ok());
  EXPECT_EQ(dir.Read("m.json"), expected->ToPrettyJson());
  EXPECT_EQ((*saved)["sha256"], expected->sha256());
}

TEST(WorkbenchTest, DriftShowsChangedToolsAndCarriesOverUnchangedReviews) {
  testing::TempDir dir;
  const std::string old_path = WriteManifest(dir, "old.json", ValidManifestJson());
  json::Value fresh = UnreviewedDoc();  // render_turntable's description changed
  fresh["servers"]["blender_farm"]["reviews"] = json::Value::object();
  json::Value old_doc = ValidManifestJson();
  old_doc["servers"]["blender_farm"]["reviews"]["list_assets"] = ValidReviewJson();
  old_doc["servers"]["blender_farm"]["reviews"]["list_assets"]["inputChannels"] = json::Value::object();
  WriteManifest(dir, "old.json", old_doc);
  const std::string path = WriteManifest(dir, "new.json", fresh);
  Workbench bench({path, old_path, std::nullopt, "old.json", {}});

  auto drift = bench.Drift();
  ASSERT_TRUE(drift.ok()) << drift.error().Describe();
  EXPECT_FALSE((*drift)["identical"].get<bool>());
  const json::Value& tool = (*drift)["servers"][0]["tools"][0];
  EXPECT_EQ(tool["name"], "render_turntable");
  EXPECT_EQ(tool["status"], "changed");
  ASSERT_EQ(tool["differences"].size(), 1u);
  EXPECT_EQ(tool["differences"][0]["area"], "description");
  EXPECT_TRUE(tool["differences"][0].contains("words"));
  EXPECT_EQ((*drift)["carryOver"]["kept"].size(), 1u);
  EXPECT_EQ((*drift)["carryOver"]["dropped"].size(), 1u);

  auto carried = bench.CarryOver({{"baseSha256", (*drift)["manifestSha256"]}});
  ASSERT_TRUE(carried.ok()) << carried.error().Describe();
  auto written = manifest::Manifest::Load(path);
  ASSERT_TRUE(written.ok());
  EXPECT_NE(written->review("blender_farm", "list_assets"), nullptr);
  EXPECT_EQ(written->review("blender_farm", "render_turntable"), nullptr);
  EXPECT_EQ((*carried)["sha256"], written->sha256());

  Workbench without({path, "", std::nullopt, "", {}});
  EXPECT_EQ(without.Drift().error().code, "workbench.no_baseline");
}

TEST(WordDiffTest, MarksRemovedAndAddedWordsAndKeepsTheRest) {
  const json::Value ops = WordDiff("read the file now", "read a file now");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0], json::Value::parse(R"({"op":"=","s":[{"t":"read "}]})"));
  EXPECT_EQ(ops[1]["op"], "-");
  EXPECT_EQ(ops[1]["s"][0]["t"], "the ");
  EXPECT_EQ(ops[2]["op"], "+");
  EXPECT_EQ(ops[2]["s"][0]["t"], "a ");
  EXPECT_EQ(ops[3]["s"][0]["t"], "file now");
  EXPECT_TRUE(WordDiff("", "").empty());
  // A hidden code point inside a word diff is still a marker.
  const json::Value hidden = WordDiff("a", "a \xE2\x80\xAE");
  EXPECT_TRUE(HasMarker(hidden.back()["s"], "U+202E"));
}

TEST(DisplayTreeTest, ObjectsArraysAndScalarsKeepOrderAndShowHiddenKeys) {
  const json::Value tree = DisplayTree(json::Value::parse(R"({"b":[1,"x"],"a\u200b":null})"));
  EXPECT_EQ(tree["t"], "object");
  ASSERT_EQ(tree["c"].size(), 2u);
  EXPECT_TRUE(HasMarker(tree["c"][0]["k"], "U+200B"));  // nlohmann orders members by key
  EXPECT_EQ(tree["c"][0]["t"], "null");
  EXPECT_EQ(tree["c"][1]["t"], "array");
  EXPECT_EQ(tree["c"][1]["c"][0]["v"][0]["t"], "1");
}

}  // namespace
}  // namespace udon::workbench
