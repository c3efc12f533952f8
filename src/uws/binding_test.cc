#include "uws/binding.h"

#include <gtest/gtest.h>

#include "base/file.h"
#include "uws/check.h"
#include "uws/internal/test_util.h"

namespace udon::uws {
namespace {

using testing::ScratchDir;

class UwsBinding : public ::testing::Test {
 protected:
  UwsBinding() {
    manifest_ = testing::TestManifestJson();
    dir_.Write("mcp/farm.tools.json", manifest_.dump());
    sha_ = testing::Sha256Of(manifest_);
  }

  json::Value Binding(const std::string& tool = "render_turntable") const {
    return {{"manifest", "./mcp/farm.tools.json"}, {"manifestSha256", sha_}, {"server", "blender_farm"}, {"tool", tool}};
  }

  json::Value Operation(json::Value binding, json::Value extra = json::Value::object()) const {
    json::Value op = {{"operationId", "render"},
                      {"x-uws-operation-profile", "openudon.mcp-tool-call.0.1"},
                      {"x-openudon-mcp", std::move(binding)},
                      {"request", {{"body", {{"source", "$inputs.uri"}, {"angles", 6}, {"resolution", 2048}}}}},
                      {"outputs", {{"images", "$response.body#/renderedUris"}}}};
    for (auto& [key, value] : extra.items()) {
      if (value.is_null()) {
        op.erase(key);
      } else {
        op[key] = value;
      }
    }
    return op;
  }

  CheckedDocument Check(json::Value operation, json::Value workflows = nullptr) const {
    json::Value doc = {{"uws", "1.9.1"}, {"info", {{"title", "t"}, {"version", "1"}}}, {"operations", {std::move(operation)}}};
    if (!workflows.is_null()) doc["workflows"] = std::move(workflows);
    std::string path = dir_.Write("doc.uws.json", doc.dump());
    return CheckDocument(path, manifest::Policy{});
  }

  std::vector<std::string> Codes(json::Value operation) const {
    CheckedDocument checked = Check(std::move(operation));
    std::vector<std::string> codes;
    for (const auto& error : checked.bindings.errors) codes.push_back(error.code);
    if (checked.error && checked.bindings.errors.empty()) codes.push_back(checked.error->code);
    return codes;
  }

  ScratchDir dir_;
  json::Value manifest_;
  std::string sha_;
};

using CodeList = std::vector<std::string>;

TEST_F(UwsBinding, ValidBindingResolves) {
  CheckedDocument checked = Check(Operation(Binding()));
  ASSERT_TRUE(checked.ok()) << checked.error->Describe() << checked.error->details.dump();
  const McpOperation& bound = checked.bindings.operations.at("render");
  EXPECT_EQ(bound.binding.manifest_path, dir_.path() + "/mcp/farm.tools.json");
  EXPECT_EQ(bound.binding.tool, "render_turntable");
  EXPECT_EQ(bound.bound_paths, (std::vector<std::string>{"/source"}));
  EXPECT_TRUE(bound.expects_output);
}

TEST_F(UwsBinding, FileUriResolves) {
  json::Value binding = Binding();
  binding["manifest"] = "file://" + dir_.path() + "/mcp/farm.tools.json";
  EXPECT_EQ(Codes(Operation(binding)), CodeList{});
  binding["manifest"] = "https://example.test/farm.tools.json";
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"manifest.unreadable"});
  binding["manifest"] = "./mcp/absent.json";
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"manifest.unreadable"});
}

TEST_F(UwsBinding, ExactlyFourFields) {
  json::Value binding = Binding();
  binding["x-note"] = "extensions are fine";
  EXPECT_EQ(Codes(Operation(binding)), CodeList{});
  binding["timeoutMs"] = 5;
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"uws.invalid"});
  binding = Binding();
  binding.erase("tool");
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"uws.invalid"});
  binding = Binding();
  binding["server"] = 3;
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"uws.invalid"});
  EXPECT_EQ(Codes(Operation(nullptr, {{"x-openudon-mcp", nullptr}})), CodeList{"uws.invalid"});
}

TEST_F(UwsBinding, DigestShapeAndMatch) {
  json::Value binding = Binding();
  for (char& c : sha_) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  binding["manifestSha256"] = sha_;
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"uws.invalid"});
  binding["manifestSha256"] = std::string(64, '0');
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"manifest.digest_mismatch"});
}

TEST_F(UwsBinding, ServerToolAndReview) {
  json::Value binding = Binding("no_such_tool");
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"catalog.tool_missing"});
  binding = Binding();
  binding["server"] = "elsewhere";
  EXPECT_EQ(Codes(Operation(binding)), CodeList{"manifest.server_unknown"});
  manifest_["servers"]["blender_farm"]["reviews"].erase("render_turntable");
  dir_.Write("mcp/farm.tools.json", manifest_.dump());
  sha_ = testing::Sha256Of(manifest_);
  EXPECT_EQ(Codes(Operation(Binding())), CodeList{"review.missing"});
  manifest_["servers"]["blender_farm"]["reviews"]["render_turntable"] = manifest::internal::ValidReviewJson();
  manifest_["servers"]["blender_farm"]["reviews"]["render_turntable"]["assertions"]["headless"] = false;
  dir_.Write("mcp/farm.tools.json", manifest_.dump());
  sha_ = testing::Sha256Of(manifest_);
  EXPECT_EQ(Codes(Operation(Binding())), CodeList{"review.rejected"});
}

TEST_F(UwsBinding, RequestUsesOnlyBody) {
  json::Value request = {{"body", {{"source", "$inputs.uri"}, {"angles", 6}, {"resolution", 2048}}}, {"query", json::Value::object()}};
  CheckedDocument checked = Check(Operation(Binding(), {{"request", request}}));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error->code, "uws.unsupported");
  EXPECT_EQ(checked.error->pointer, "/operations/0/request/query");
}

TEST_F(UwsBinding, OutputsNeedAnOutputSchema) {
  json::Value op = Operation(Binding("list_assets"), {{"request", nullptr}});
  EXPECT_EQ(Codes(op), CodeList{"binding.output_schema_required"});
  op.erase("outputs");
  EXPECT_EQ(Codes(op), CodeList{});
}

TEST_F(UwsBinding, ReadingTheResponseBodyCountsAsDeclaredOutputs) {
  // list_assets has no outputSchema; the operation declares no outputs.
  json::Value op = Operation(Binding("list_assets"), {{"request", nullptr}, {"outputs", nullptr}});
  CheckedDocument plain = Check(op);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain.bindings.operations.at("render").expects_output);

  json::Value criteria = op;
  criteria["successCriteria"] = {{{"condition", "$response.body#/count >= 1"}}};
  CheckedDocument checked = Check(criteria);
  ASSERT_EQ(checked.bindings.errors.size(), 1u);
  EXPECT_EQ(checked.bindings.errors[0].code, "binding.output_schema_required");
  EXPECT_EQ(checked.bindings.errors[0].pointer, "/operations/0/successCriteria/0/condition");

  json::Value action = op;
  action["onFailure"] = {{{"name", "again"}, {"type", "retry"}, {"retryLimit", 1},
                          {"criteria", {{{"condition", "$inputs.x == $response.body#/busy"}}}}}};
  checked = Check(action);
  ASSERT_EQ(checked.bindings.errors.size(), 1u);
  EXPECT_EQ(checked.bindings.errors[0].pointer, "/operations/0/onFailure/0/criteria/0/condition");

  // A step that calls the operation and reads its body in the step's outputs.
  json::Value workflows = {{{"workflowId", "main"}, {"type", "sequence"},
                            {"steps", {{{"stepId", "list"}, {"operationRef", "render"},
                                        {"outputs", {{"first", "$response.body#/renderedUris/0"}}}}}}}};
  checked = Check(op, workflows);
  ASSERT_EQ(checked.bindings.errors.size(), 1u);
  EXPECT_EQ(checked.bindings.errors[0].code, "binding.output_schema_required");
  EXPECT_EQ(checked.bindings.errors[0].pointer, "/workflows/0/steps/0/outputs/first");

  // With an outputSchema the same reads are fine, and the gate must then demand
  // structuredContent at run time.
  json::Value reviewed = Operation(Binding(), {{"outputs", nullptr}});
  checked = Check(reviewed, workflows);
  ASSERT_TRUE(checked.ok()) << checked.error->Describe() << checked.error->details.dump();
  EXPECT_TRUE(checked.bindings.operations.at("render").expects_output);
  checked = Check(reviewed);
  ASSERT_TRUE(checked.ok());
  EXPECT_FALSE(checked.bindings.operations.at("render").expects_output);
}

TEST_F(UwsBinding, LiteralBodyAgainstInputSchema) {
  json::Value good = {{"body", {{"source", "file:///a.blend"}, {"angles", 6}, {"resolution", 2048}}}};
  EXPECT_EQ(Codes(Operation(Binding(), {{"request", good}})), CodeList{});
  json::Value bad = {{"body", {{"source", "file:///a.blend"}, {"angles", 99}, {"resolution", 2048}}}};
  EXPECT_EQ(Codes(Operation(Binding(), {{"request", bad}})), CodeList{"input.schema_violation"});
  EXPECT_EQ(Codes(Operation(Binding(), {{"request", nullptr}})), CodeList{"input.schema_violation"}) << "absent body is {}";
}

TEST_F(UwsBinding, BoundPathsNeedReviewedChannels) {
  json::Value body = {{"source", "$inputs.uri"}, {"angles", 6}, {"resolution", 2048}, {"options", {{"style", "$inputs.style"}}}};
  CheckedDocument checked = Check(Operation(Binding(), {{"request", {{"body", body}}}}));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error->code, "review.unclassified_channel");
  EXPECT_EQ(checked.error->pointer, "/operations/0/request/body/options/style");
  EXPECT_EQ(Codes(Operation(Binding(), {{"request", {{"body", "$inputs.args"}}}})), CodeList{"review.unclassified_channel"});
}

TEST_F(UwsBinding, ImpossibleOutputPointers) {
  EXPECT_EQ(Codes(Operation(Binding(), {{"outputs", {{"first", "$response.body#/renderedUris/0"}}}})), CodeList{});
  EXPECT_EQ(Codes(Operation(Binding(), {{"outputs", {{"x", "$response.body#/renderedUri"}}}})), CodeList{"uws.invalid"});
  EXPECT_EQ(Codes(Operation(Binding(), {{"outputs", {{"x", "$response.body#/renderedUris/name"}}}})), CodeList{"uws.invalid"});
  EXPECT_EQ(Codes(Operation(Binding(), {{"outputs", {{"x", "$response.body#/renderedUris/0/deeper"}}}})), CodeList{"uws.invalid"});
}

TEST_F(UwsBinding, ProfileMismatch) {
  json::Value op = Operation(Binding());
  op["x-uws-operation-profile"] = "uws.runtime.1.0";
  EXPECT_EQ(Codes(op), CodeList{"uws.invalid"});
}

// Where each stage of the binding's resolution points in the document; the manifest-side
// pointer stays in details.manifestPointer.
TEST_F(UwsBinding, EachResolutionProblemPointsAtItsBindingMember) {
  auto first = [this](json::Value binding) {
    CheckedDocument checked = Check(Operation(std::move(binding)));
    return checked.bindings.errors.empty() ? Error{} : checked.bindings.errors.front();
  };
  json::Value binding = Binding();
  binding["manifest"] = "./mcp/absent.tools.json";
  EXPECT_EQ(first(binding).pointer, "/operations/0/x-openudon-mcp/manifest");
  binding = Binding();
  binding["manifestSha256"] = std::string(64, '0');
  Error mismatch = first(binding);
  EXPECT_EQ(mismatch.pointer, "/operations/0/x-openudon-mcp/manifestSha256");
  EXPECT_EQ(mismatch.details["pinned"], std::string(64, '0'));
  EXPECT_EQ(mismatch.details["actual"], sha_);
  binding = Binding();
  binding["unknown"] = true;
  EXPECT_EQ(first(binding).pointer, "/operations/0/x-openudon-mcp/unknown");
  manifest_["servers"]["blender_farm"]["reviews"]["render_turntable"]["assertions"]["headless"] = false;
  dir_.Write("mcp/farm.tools.json", manifest_.dump());
  sha_ = testing::Sha256Of(manifest_);
  Error rejected = first(Binding());
  EXPECT_EQ(rejected.pointer, "/operations/0/x-openudon-mcp");
  EXPECT_EQ(rejected.details["manifestPointer"], "/servers/blender_farm/reviews/render_turntable/assertions/headless");
}

// Issue 21: the bindings of one manifest share one read of it (the run's manifest cache).
TEST_F(UwsBinding, EveryBindingOfOneManifestSharesOneRead) {
  int reads = 0;
  manifest::ManifestCache manifests([&reads](const std::string& path) {
    ++reads;
    return base::ReadFile(path);
  });
  json::Value operations = json::Value::array();
  for (const char* id : {"render_a", "render_b", "render_c"}) {
    json::Value operation = Operation(Binding());
    operation["operationId"] = id;
    operations.push_back(std::move(operation));
  }
  json::Value doc = {{"uws", "1.9.1"}, {"info", {{"title", "t"}, {"version", "1"}}}, {"operations", operations}};
  CheckedDocument checked = CheckDocument(dir_.Write("doc.uws.json", doc.dump()), manifest::Policy{}, manifests);
  ASSERT_TRUE(checked.ok()) << checked.error->Describe();
  EXPECT_EQ(checked.bindings.operations.size(), 3u);
  EXPECT_EQ(reads, 1);
}

}  // namespace
}  // namespace udon::uws
