// The streamed JSON must be byte-identical to nlohmann's dump of the same
// document: reports written before and after streaming stay comparable.
#include "lib/report/json_stream.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

using Json = nlohmann::ordered_json;

// Writes `doc` through JsonStream, value by value (Value() only for the
// "prebuilt" members, to cover re-indentation at depth).
void Stream(const Json& doc, JsonStream* out) {
  switch (doc.type()) {
    case Json::value_t::object:
      out->BeginObject();
      for (const auto& [key, value] : doc.items()) {
        out->Key(key);
        if (key == "prebuilt") {
          out->Value(value);
        } else {
          Stream(value, out);
        }
      }
      out->EndObject();
      break;
    case Json::value_t::array:
      out->BeginArray();
      for (const Json& value : doc) Stream(value, out);
      out->EndArray();
      break;
    case Json::value_t::string:
      out->String(doc.get<std::string>());
      break;
    case Json::value_t::boolean:
      out->Bool(doc.get<bool>());
      break;
    case Json::value_t::null:
      out->Null();
      break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      out->Int(doc.get<int64_t>());
      break;
    default:
      out->Value(doc);
      break;
  }
}

Json Document() {
  Json doc;
  doc["schema_version"] = 1;
  doc["empty_object"] = Json::object();
  doc["empty_array"] = Json::array();
  doc["strings"] = {"plain", "quote \" and \\ backslash", "tab\tnewline\n", "ctrl \x01",
                    "utf-8 \xc3\xa9\xe2\x82\xac", "invalid \xff\xfe utf-8", "del \x7f", ""};
  doc["numbers"] = {0, -1, INT64_MAX, INT64_MIN, 0.5, 1e-7, 80.0};
  doc["nested"] = {{"a", {{"b", Json::array({1, Json::object(), Json::array({Json::array()})})}}},
                   {"null", nullptr},
                   {"flags", {true, false}}};
  doc["prebuilt"] = {{"inner", {{"list", {1, 2, 3}}, {"text", "x\ny"}}}, {"empty", Json::array()}};
  doc["rows"] = Json::array();
  for (int k = 0; k < 3; ++k) {
    doc["rows"].push_back({{"k", k}, {"prebuilt", {{"file", "f.py"}, {"line", k}}}});
  }
  return doc;
}

TEST(JsonStreamTest, MatchesNlohmannDumpIndented) {
  const Json doc = Document();
  std::string streamed;
  JsonStream out(&streamed, 2);
  Stream(doc, &out);
  EXPECT_EQ(streamed, doc.dump(2, ' ', false, Json::error_handler_t::replace));
}

TEST(JsonStreamTest, MatchesNlohmannDumpOnOneLine) {
  const Json doc = Document();
  std::string streamed;
  JsonStream out(&streamed, -1);
  Stream(doc, &out);
  EXPECT_EQ(streamed, doc.dump(-1, ' ', false, Json::error_handler_t::replace));
}

TEST(JsonStreamTest, EmptyContainersAtTopLevel) {
  std::string streamed;
  JsonStream out(&streamed, 4);
  out.BeginArray();
  out.BeginObject();
  out.EndObject();
  out.EndArray();
  EXPECT_EQ(streamed, "[\n    {}\n]");
}

}  // namespace
}  // namespace hlomem::report
