#include "json/diff.h"

#include <gtest/gtest.h>

namespace udon::json {
namespace {

std::vector<std::string> Pointers(const std::vector<Difference>& diffs) {
  std::vector<std::string> out;
  for (const auto& d : diffs) out.push_back(std::string(DifferenceKindName(d.kind)) + " " + d.pointer);
  return out;
}

TEST(DiffTest, EqualValuesHaveNoDifferences) {
  Value a = Value::parse(R"({"a":[1,{"b":"c"}],"d":null})");
  EXPECT_TRUE(Diff(a, a).empty());
  EXPECT_TRUE(CanonicallyEqual(a, a));
}

TEST(DiffTest, NumbersCompareByValueAsInTheCanonicalForm) {
  EXPECT_TRUE(Diff(Value(1), Value(1.0)).empty());
  EXPECT_TRUE(CanonicallyEqual(Value(1), Value(1.0)));
  EXPECT_FALSE(CanonicallyEqual(Value(1), Value("1")));
}

TEST(DiffTest, ReportsAddedRemovedAndChangedPointers) {
  Value a = Value::parse(R"({"description":"x","inputSchema":{"properties":{"a/b":{}}},"tags":[1,2]})");
  Value b = Value::parse(R"({"description":"y","inputSchema":{"properties":{}},"tags":[1,2,3],"title":"t"})");
  EXPECT_EQ(Pointers(Diff(a, b)),
            (std::vector<std::string>{"changed /description", "removed /inputSchema/properties/a~1b",
                                      "added /tags/2", "added /title"}));
  EXPECT_FALSE(CanonicallyEqual(a, b));
}

TEST(DiffTest, ATypeChangeIsOneDifference) {
  EXPECT_EQ(Pointers(Diff(Value::parse(R"({"a":{"b":1}})"), Value::parse(R"({"a":[1]})"))),
            (std::vector<std::string>{"changed /a"}));
  EXPECT_EQ(Pointers(Diff(Value(1), Value::object())), (std::vector<std::string>{"changed "}));
}

}  // namespace
}  // namespace udon::json
