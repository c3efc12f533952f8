#include "manifest/policy.h"

#include <gtest/gtest.h>

namespace udon::manifest {
namespace {

TEST(PolicyTest, DefaultsMatchTheContract) {
  auto policy = PolicyFromJson(json::Value::object());
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(PolicyToJson(*policy), json::Value::parse(R"({"maxReviewWindowDays": 30,
      "allowModelBacked": true, "allowedSideEffects": null, "blockOnFindings": "none",
      "callTimeoutSeconds": 60, "maxPages": 1000, "maxMessageBytes": 16777216,
      "strictListChanged": false, "serializeTimeoutSeconds": 60, "clockSkewSeconds": 300,
      "sessionIdleSeconds": 3600})"));
}

TEST(PolicyTest, ReadsEveryMember) {
  auto policy = PolicyFromJson(json::Value::parse(R"({"maxReviewWindowDays": 7,
      "allowModelBacked": false, "allowedSideEffects": ["a"], "blockOnFindings": "high",
      "callTimeoutSeconds": 5, "maxPages": 3, "maxMessageBytes": 1024, "strictListChanged": true,
      "serializeTimeoutSeconds": 2, "clockSkewSeconds": 0, "sessionIdleSeconds": 5,
      "state": "postgresql://db/state"})"));
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->state, "postgresql://db/state");
  EXPECT_EQ(PolicyToJson(*policy)["state"], "postgresql://db/state");
  EXPECT_EQ(policy->max_review_window_days, 7);
  EXPECT_FALSE(policy->allow_model_backed);
  EXPECT_EQ(policy->allowed_side_effects, std::vector<std::string>{"a"});
  EXPECT_EQ(policy->block_on_findings, FindingsBlock::kHigh);
  EXPECT_EQ(policy->call_timeout_seconds, 5);
  EXPECT_EQ(policy->max_pages, 3u);
  EXPECT_EQ(policy->max_message_bytes, 1024u);
  EXPECT_TRUE(policy->strict_list_changed);
  EXPECT_EQ(policy->serialize_timeout_seconds, 2);
  EXPECT_EQ(policy->clock_skew_seconds, 0);
  EXPECT_EQ(policy->session_idle_seconds, 5);
}

TEST(PolicyTest, RefusesUnknownMembersAndBadValues) {
  for (const char* text : {R"({"maxReviewWindowDay": 7})", R"({"maxReviewWindowDays": 0})",
                           R"({"maxReviewWindowDays": 1.5})", R"({"allowModelBacked": "yes"})",
                           R"({"allowedSideEffects": [1]})", R"({"blockOnFindings": "all"})",
                           R"({"clockSkewSeconds": -1})", R"({"clockSkewSeconds": 3601})",
                           R"({"clockSkewSeconds": "300"})", R"({"state": ""})", R"({"state": 5})",
                           R"({"sessionIdleSeconds": 0})", R"({"sessionIdleSeconds": 604801})",
                           R"([])"}) {
    auto policy = PolicyFromJson(json::Value::parse(text));
    ASSERT_FALSE(policy.ok()) << text;
    EXPECT_EQ(policy.error().code, "policy.invalid") << text;
  }
  EXPECT_EQ(PolicyFromJson(json::Value::parse(R"({"x": 1})")).error().pointer, "/x");
}

}  // namespace
}  // namespace udon::manifest
