#include "manifest/binding.h"

#include <gtest/gtest.h>

#include "manifest/internal/test_manifest.h"

namespace udon::manifest {
namespace {

using internal::ValidManifestJson;

constexpr const char* kPath = "/reviewed/tools.json";

// Manifests held in memory, with every read counted: the seam that shows how often a path
// is opened.
class Files {
 public:
  ManifestCache::Reader Reader() {
    return [this](const std::string& path) -> Result<std::string> {
      ++reads[path];
      auto it = bytes.find(path);
      if (it == bytes.end()) return MakeError("io.unreadable", "cannot open the file");
      return it->second;
    };
  }
  std::map<std::string, std::string> bytes;
  std::map<std::string, int> reads;
};

std::string PinOf(const json::Value& document) { return Manifest::FromValue(document).value().sha256(); }

Binding RenderBinding(const json::Value& document) {
  return Binding{kPath, PinOf(document), "blender_farm", "render_turntable"};
}

json::Value Block() {
  return {{"manifest", "./tools.json"},
          {"manifestSha256", std::string(64, 'a')},
          {"server", "blender_farm"},
          {"tool", "render_turntable"}};
}

TEST(BindingTest, ParsesTheFourFieldsAndResolvesTheManifestBesideTheDocument) {
  json::Value block = Block();
  block["x-note"] = "extensions are allowed";
  auto binding = ParseBinding(block, "/srv/flows");
  ASSERT_TRUE(binding.ok()) << binding.error().Describe();
  EXPECT_EQ(binding->manifest_path, "/srv/flows/tools.json");
  EXPECT_EQ(binding->manifest_sha256, std::string(64, 'a'));
  EXPECT_EQ(binding->server, "blender_farm");
  EXPECT_EQ(binding->tool, "render_turntable");
  block["manifest"] = "file:///srv/tools.json";
  EXPECT_EQ(ParseBinding(block, "/srv/flows")->manifest_path, "/srv/tools.json");
}

TEST(BindingTest, EveryShapeProblemIsReportedWithItsPointer) {
  json::Value block = Block();
  block.erase("server");
  block["tool"] = 7;
  block["x-"] = true;  // a bare "x-" is no extension in a UWS document
  std::vector<Error> problems;
  auto binding = ParseBinding(block, "/", &problems);
  ASSERT_FALSE(binding.ok());
  EXPECT_EQ(binding.error().code, "uws.invalid");
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].pointer, "/server");
  EXPECT_EQ(problems[1].pointer, "/tool");
  EXPECT_EQ(problems[2].pointer, "/x-");
  for (const Error& problem : problems) EXPECT_EQ(problem.details["rule"], "mcp_binding");
  EXPECT_EQ(ParseBinding(json::Value("a string"), "/").error().pointer, "");
}

TEST(BindingTest, APinOrReferenceOfTheWrongFormIsRefusedAfterTheShape) {
  json::Value block = Block();
  block["manifestSha256"] = std::string(64, 'A');
  EXPECT_EQ(ParseBinding(block, "/").error().pointer, "/manifestSha256");
  block = Block();
  block["manifest"] = "https://example.test/tools.json";
  Error error = ParseBinding(block, "/").error();
  EXPECT_EQ(error.code, "manifest.unreadable");
  EXPECT_EQ(error.pointer, "/manifest");
}

TEST(BindingTest, ResolvesTheToolAndItsReview) {
  Files files;
  const json::Value document = ValidManifestJson();
  files.bytes[kPath] = document.dump();
  ManifestCache cache(files.Reader());
  auto bound = ResolveBinding(RenderBinding(document), Policy{}, cache);
  ASSERT_TRUE(bound.ok()) << bound.error().Describe();
  EXPECT_EQ(bound->tool()["name"], "render_turntable");
  EXPECT_EQ(bound->review.reviewer, "release-review@example.test");
  EXPECT_EQ(bound->manifest->sha256(), PinOf(document));
}

TEST(BindingTest, EachStageRefusesWithItsOwnCode) {
  Files files;
  const json::Value document = ValidManifestJson();
  files.bytes[kPath] = document.dump();
  ManifestCache cache(files.Reader());
  Binding binding = RenderBinding(document);

  Binding unreadable = binding;
  unreadable.manifest_path = "/missing.json";
  EXPECT_EQ(ResolveBinding(unreadable, Policy{}, cache).error().code, "manifest.unreadable");

  Binding pinned = binding;
  pinned.manifest_sha256 = std::string(64, '0');
  Error mismatch = ResolveBinding(pinned, Policy{}, cache).error();
  EXPECT_EQ(mismatch.code, "manifest.digest_mismatch");
  EXPECT_EQ(mismatch.details["pinned"], std::string(64, '0'));
  EXPECT_EQ(mismatch.details["actual"], PinOf(document));

  Binding other = binding;
  other.tool = "no_such_tool";
  EXPECT_EQ(ResolveBinding(other, Policy{}, cache).error().code, "catalog.tool_missing");
  other = binding;
  other.server = "no_such_server";
  EXPECT_EQ(ResolveBinding(other, Policy{}, cache).error().code, "manifest.server_unknown");

  json::Value unreviewed = document;
  unreviewed["servers"]["blender_farm"]["reviews"].erase("render_turntable");
  files.bytes["/unreviewed.json"] = unreviewed.dump();
  Binding missing{"/unreviewed.json", PinOf(unreviewed), "blender_farm", "render_turntable"};
  Error no_review = ResolveBinding(missing, Policy{}, cache).error();
  EXPECT_EQ(no_review.code, "review.missing");
  EXPECT_EQ(no_review.pointer, "/servers/blender_farm/reviews/render_turntable");

  json::Value rejected = document;
  rejected["servers"]["blender_farm"]["reviews"]["render_turntable"]["assertions"]["headless"] = false;
  files.bytes["/rejected.json"] = rejected.dump();
  Binding refused{"/rejected.json", PinOf(rejected), "blender_farm", "render_turntable"};
  Error review = ResolveBinding(refused, Policy{}, cache).error();
  EXPECT_EQ(review.code, "review.rejected");
  EXPECT_EQ(review.pointer, "/servers/blender_farm/reviews/render_turntable/assertions/headless");
}

// The measurable goal of one resolver: every static user of a binding shares one read.
TEST(ManifestCacheTest, GetReadsAPathOnceForEveryBindingOfIt) {
  Files files;
  const json::Value document = ValidManifestJson();
  files.bytes[kPath] = document.dump();
  ManifestCache cache(files.Reader());
  Binding render = RenderBinding(document);
  Binding list = render;
  list.tool = "list_assets";
  ASSERT_TRUE(ResolveBinding(render, Policy{}, cache).ok());
  (void)ResolveBinding(list, Policy{}, cache);
  ASSERT_TRUE(ResolveBinding(render, Policy{}, cache).ok());
  EXPECT_EQ(files.reads[kPath], 1);
  EXPECT_EQ(cache.Get(kPath)->get(), cache.Get(kPath)->get());
  EXPECT_EQ(files.reads[kPath], 1);
}

TEST(ManifestCacheTest, AnUnreadableManifestIsAlsoReadOnce) {
  Files files;
  ManifestCache cache(files.Reader());
  EXPECT_EQ(cache.Get(kPath).error().code, "manifest.unreadable");
  EXPECT_EQ(cache.Get(kPath).error().code, "manifest.unreadable");
  EXPECT_EQ(files.reads[kPath], 1);
}

// The gate's read: the bytes every time, the parse only when they changed.
TEST(ManifestCacheTest, RereadReadsEveryTimeAndReparsesOnlyChangedBytes) {
  Files files;
  json::Value document = ValidManifestJson();
  files.bytes[kPath] = document.dump();
  ManifestCache cache(files.Reader());
  auto first = cache.Get(kPath);
  ASSERT_TRUE(first.ok());
  auto again = cache.Reread(kPath);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(files.reads[kPath], 2);
  EXPECT_EQ(again->get(), first->get()) << "unchanged bytes reuse the parse";

  files.bytes[kPath] = document.dump(2);  // other bytes, same canonical form
  auto reformatted = cache.Reread(kPath);
  ASSERT_TRUE(reformatted.ok());
  EXPECT_NE(reformatted->get(), first->get());
  EXPECT_EQ((*reformatted)->sha256(), (*first)->sha256());

  document["x-edit"] = true;
  files.bytes[kPath] = document.dump();
  auto edited = cache.Reread(kPath);
  ASSERT_TRUE(edited.ok());
  EXPECT_NE((*edited)->sha256(), (*first)->sha256());
  EXPECT_EQ(cache.Get(kPath)->get(), edited->get()) << "Get answers with the latest read";
  EXPECT_EQ(files.reads[kPath], 4);

  files.bytes.erase(kPath);
  EXPECT_EQ(cache.Reread(kPath).error().code, "manifest.unreadable");
}

// Unchanged bytes skip the hash, so the comparison must see every byte: an edit that keeps
// the length (one character of a description) is a changed manifest.
TEST(ManifestCacheTest, RereadSeesAnEditThatKeepsTheLength) {
  Files files;
  json::Value document = ValidManifestJson();
  document["x-note"] = "aaaa";
  files.bytes[kPath] = document.dump();
  ManifestCache cache(files.Reader());
  auto first = cache.Reread(kPath);
  ASSERT_TRUE(first.ok());
  document["x-note"] = "aaab";
  const std::string edited_bytes = document.dump();
  ASSERT_EQ(edited_bytes.size(), files.bytes[kPath].size());
  files.bytes[kPath] = edited_bytes;
  auto edited = cache.Reread(kPath);
  ASSERT_TRUE(edited.ok());
  EXPECT_NE((*edited)->sha256(), (*first)->sha256());
  EXPECT_EQ((*edited)->sha256(), PinOf(document));
}

// A failed read keeps no bytes, so no later content (not even an empty file) is taken for it.
TEST(ManifestCacheTest, AnEmptyFileAfterAFailedReadIsParsedNotTakenForTheFailure) {
  Files files;
  ManifestCache cache(files.Reader());
  EXPECT_EQ(cache.Reread(kPath).error().code, "manifest.unreadable");
  files.bytes[kPath] = "";
  EXPECT_EQ(cache.Reread(kPath).error().code, "manifest.invalid");
}

TEST(ManifestCacheTest, ABrokenManifestIsInvalid) {
  Files files;
  files.bytes[kPath] = "{\"profile\": ";
  ManifestCache cache(files.Reader());
  EXPECT_EQ(cache.Get(kPath).error().code, "manifest.invalid");
}

}  // namespace
}  // namespace udon::manifest
