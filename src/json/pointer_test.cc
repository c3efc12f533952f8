#include "json/pointer.h"

#include <gtest/gtest.h>

namespace udon::json {
namespace {

// The RFC 6901 section 5 document.
Value Rfc6901Document() {
  return Parse(R"({"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,"i\\j":5,
                          "k\"l":6," ":7,"m~n":8})").value();
}

TEST(Pointer, Rfc6901Examples) {
  const Value document = Rfc6901Document();
  const std::pair<const char*, Value> cases[] = {
      {"", document},         {"/foo", Value::array({"bar", "baz"})},
      {"/foo/0", "bar"},      {"/", 0},
      {"/a~1b", 1},           {"/c%d", 2},
      {"/e^f", 3},            {"/g|h", 4},
      {"/i\\j", 5},           {"/k\"l", 6},
      {"/ ", 7},              {"/m~0n", 8},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    Result<Pointer> pointer = Pointer::Parse(text);
    ASSERT_TRUE(pointer.ok());
    const Value* found = pointer->Resolve(document);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, expected);
    EXPECT_EQ(pointer->ToString(), text);
  }
}

TEST(Pointer, InvalidSyntax) {
  for (const char* text : {"foo", "/a~", "/a~2", "/~x/b"}) {
    Result<Pointer> pointer = Pointer::Parse(text);
    ASSERT_FALSE(pointer.ok()) << text;
    EXPECT_EQ(pointer.error().code, "json.pointer_invalid");
  }
}

TEST(Pointer, EscapingOrderIsTildeFirst) {
  EXPECT_EQ(Pointer::EscapeToken("~1/"), "~01~1");
  Result<Pointer> pointer = Pointer::Parse("/~01");
  ASSERT_TRUE(pointer.ok());
  EXPECT_EQ(pointer->tokens(), std::vector<std::string>{"~1"});
}

TEST(Pointer, ArrayIndicesMustBeCanonical) {
  const Value document = Parse(R"({"a":[10,20]})").value();
  EXPECT_EQ(*Pointer::Parse("/a/1")->Resolve(document), 20);
  for (const char* text : {"/a/01", "/a/-", "/a/2", "/a/x", "/a/", "/a/1/b", "/b"}) {
    EXPECT_EQ(Pointer::Parse(text)->Resolve(document), nullptr) << text;
  }
}

TEST(Pointer, NavigationHelpers) {
  const Pointer root;
  const Pointer child = root.Child("a/b").Child(3);
  EXPECT_EQ(child.ToString(), "/a~1b/3");
  EXPECT_EQ(child.Parent().ToString(), "/a~1b");
  EXPECT_EQ(root.Parent(), root);
  EXPECT_TRUE(root.IsPrefixOf(child));
  EXPECT_TRUE(child.Parent().IsPrefixOf(child));
  EXPECT_FALSE(child.IsPrefixOf(child.Parent()));
  EXPECT_TRUE(child.IsPrefixOf(child));
}

TEST(Pointer, ResolvesMutably) {
  Value document = Parse(R"({"a":{"b":1}})").value();
  Value* found = Pointer::Parse("/a/b")->Resolve(document);
  ASSERT_NE(found, nullptr);
  *found = 2;
  EXPECT_EQ(document["a"]["b"], 2);
}

}  // namespace
}  // namespace udon::json
