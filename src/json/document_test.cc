#include "json/document.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json/json.h"

namespace udon::json {
namespace {

// The document's content as a Value, kinds included, to compare with Parse's.
Value ToValue(const Document& document, const Document::Node& node) {
  switch (node.kind) {
    case Document::Kind::kNull: return Value(nullptr);
    case Document::Kind::kFalse: return Value(false);
    case Document::Kind::kTrue: return Value(true);
    case Document::Kind::kInteger: return Value(node.integer);
    case Document::Kind::kUnsigned: return Value(node.unsigned_integer);
    case Document::Kind::kFloat: return Value(node.number);
    case Document::Kind::kString: return Value(std::string(Document::string(node)));
    case Document::Kind::kArray: {
      Value array = Value::array();
      for (std::size_t i = 0; i < node.size; ++i) {
        array.push_back(ToValue(document, document.element(node, i)));
      }
      return array;
    }
    case Document::Kind::kObject: {
      Value object = Value::object();
      const Document::Member* members = document.members(node);
      for (std::size_t i = 0; i < node.size; ++i) {
        if (i > 0) {  // sorted, the order json::Value iterates in
          EXPECT_LT(Document::name(members[i - 1]), Document::name(members[i]));
        }
        object[std::string(Document::name(members[i]))] =
            ToValue(document, document.node(members[i].value));
      }
      return object;
    }
  }
  return Value();
}

// Same value and the same kind of every number as json::Parse.
bool SameKinds(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!SameKinds(a[i], b[i])) return false;
    }
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!SameKinds(it.value(), b.at(it.key()))) return false;
    }
  }
  return true;
}

void ExpectSameAsParse(Document& document, std::string_view text, ParseOptions options = {}) {
  auto expected = Parse(text, options);
  Status status = document.Parse(text, options);
  ASSERT_EQ(status.ok(), expected.ok()) << text;
  if (expected.ok()) {
    const Value built = ToValue(document, document.root());
    EXPECT_EQ(built, *expected) << text;
    EXPECT_TRUE(SameKinds(built, *expected)) << text;
    return;
  }
  const Error& want = expected.error();
  const Error& got = status.error();
  EXPECT_EQ(got.code, want.code) << text;
  EXPECT_EQ(got.message, want.message) << text;
  EXPECT_EQ(got.pointer, want.pointer) << text;
  ASSERT_TRUE(got.location.has_value() && want.location.has_value()) << text;
  EXPECT_EQ(got.location->offset, want.location->offset) << text;
  EXPECT_EQ(got.location->line, want.location->line) << text;
  EXPECT_EQ(got.location->column, want.location->column) << text;
}

TEST(DocumentTest, ReadsWhatParseReadsWithTheSameNumberKinds) {
  Document document;
  for (const char* text :
       {R"({"a":[1,-2,3.5,true,false,null,"x\u00e9\ud83d\ude00"],"b":{}})", "[]", "{}", "0",
        "-0", "\"\"", "[18446744073709551615, -9223372036854775808, 18446744073709551616]",
        "[9223372036854775807, 9223372036854775808, -9223372036854775809, 1e2, 1.0, 1e-400]",
        "[12345678901234567890123, -0.0, 0.1]", R"({"z":1,"a":{"y":[],"b":"\\"},"m":null})",
        "  {\n \"k\" : [ 1 , { } ] }\n", R"({"\u00e9":1,"e":2,"\u0000":3,"":4})"}) {
    ExpectSameAsParse(document, text);
  }
}

TEST(DocumentTest, SortsMembersByUnsignedBytes) {
  Document document;
  ASSERT_TRUE(document.Parse("{\"\xC3\xA9\":1,\"b\":2,\"a\":3,\"B\":4,\"aa\":5}").ok());
  const Document::Member* members = document.members(document.root());
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < document.root().size; ++i) names.push_back(Document::name(members[i]));
  EXPECT_EQ(names, (std::vector<std::string_view>{"B", "a", "aa", "b", "\xC3\xA9"}));
}

TEST(DocumentTest, RefusesWhatParseRefusesWithTheSameCodesPointersAndLocations) {
  Document document;
  for (const char* text :
       {R"({"a":{"b":1,"c":[{"d":1,"d":2}]}})", R"({"a":1,"\u0061":2})",
        R"({"k\u0031":["\u0041\n", tru]})", R"({"a\/b":{"c":"\t","d":[}]}})",
        "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"", "[\"\xE2\x82\"]", "\xFF",
        "{\"a\":[1,\"\xE2\x82\"]}", R"("\ud800")", R"("\udc00")", R"(["\ud800\u0041"])",
        "1e400", "[-1.5e309]", "{\"n\":[1,2,1e999]}", "{\"a\": 1}\n  x", "", " ", "01", "1.",
        ".5", "+1", "1e", "[1,]", "{\"a\":1,}", "{a:1}", "'a'", "tru", "nul", "\"\t\"",
        "\"\\x\"", "[1 2]", "\"abc", "NaN", "Infinity", "\xEF\xBB\xBF{}", "[-]", "[01]",
        R"({"tools":[{"name":"a"},{"name":tru}]})", R"({"a/b":{"~":[}]}})"}) {
    ExpectSameAsParse(document, text);
  }
}

// The first pass finds a duplicate only when its object closes; the error must still name
// the second name's place, and come before any later fault in the same object.
TEST(DocumentTest, ADuplicateIsReportedWhereParseReportsIt) {
  Document document;
  ExpectSameAsParse(document, R"({"a":1,"b":2,"a":3})");
  ExpectSameAsParse(document, "{\"a\":1,\n\"a\":2,\n\"b\":[1,2,3]}");
  ExpectSameAsParse(document, R"({"a":1,"a":2,"b":tru})");
  ExpectSameAsParse(document, R"({"a":1,"a":2,"b":"\ud800"})");
  ExpectSameAsParse(document, R"({"a":1,"a":2,"b":[[[)");
  ExpectSameAsParse(document, R"({"x":{"a":1,"a":2},"x":3})");
  ExpectSameAsParse(document, R"([{"k":[{"z":0,"z":0}],"k":1}])");
}

TEST(DocumentTest, RefusesDuplicatesInObjectsWithManyMembers) {
  // Large objects (sorted with std::sort, not by insertion): the same verdict and place.
  std::string text = "{";
  for (int i = 0; i < 40; ++i) text += "\"m" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  Document document;
  ExpectSameAsParse(document, text + "\"last\":0}");
  ExpectSameAsParse(document, text + "\"m3\":0}");
  ExpectSameAsParse(document, text + "\"m39\":0}");
  ExpectSameAsParse(document, text + "\"m\\u0033\":0}");
  ExpectSameAsParse(document, "[" + text + "\"x\":{\"a\":1,\"a\":2}}]");
}

TEST(DocumentTest, RefusesNestingAndSizeBeyondTheLimits) {
  Document document;
  ExpectSameAsParse(document, std::string(300, '[') + std::string(300, ']'));
  ExpectSameAsParse(document, std::string(1'000'000, '['));
  ExpectSameAsParse(document, "{\"a\":" + std::string(256, '[') + std::string(256, ']') + "}");
  ParseOptions options;
  options.max_depth = 3;
  ExpectSameAsParse(document, "[[[]]]", options);
  ExpectSameAsParse(document, "[{\"a\":[[]]}]", options);
  options = {};
  options.max_bytes = 4;
  ExpectSameAsParse(document, "[1,2]", options);
  ExpectSameAsParse(document, "[12]", options);
}

TEST(DocumentTest, AReusedDocumentHoldsOnlyTheLatestText) {
  Document document;
  ExpectSameAsParse(document, R"({"a":[1,2,{"b":"\n"}],"c":"d"})");
  ExpectSameAsParse(document, R"({"a":1,"a":2})");  // a failure in between
  ExpectSameAsParse(document, R"(["x",{"y":null}])");
  ExpectSameAsParse(document, "7");
}

TEST(DocumentTest, EscapedStringsStayIntactAcrossManyBlocks) {
  // Decoded strings live in 4 KiB blocks; these fill several, and one needs a block alone.
  std::string text = "[";
  for (int i = 0; i < 500; ++i) text += "\"line\\n" + std::to_string(i) + "\\u00e9\",";
  text += "\"" + std::string(10000, 'q') + "\\t\"]";
  Document document;
  ExpectSameAsParse(document, text);
  ExpectSameAsParse(document, text);
}

}  // namespace
}  // namespace udon::json
