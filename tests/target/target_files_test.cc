#include "lib/target/target_files.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem::target {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

using Fields = std::vector<std::pair<std::string, std::string>>;

// The fields of `text`, in order; fails the test on an error.
Fields Read(absl::string_view text) {
  Fields fields;
  const absl::Status status = ForEachTextProtoField(
      "t.txtpb", text,
      [&](const std::string& field, const std::string& value) { fields.emplace_back(field, value); });
  EXPECT_TRUE(status.ok()) << status.message();
  return fields;
}

// The error `text` gives; "(no error)" when it reads.
std::string Error(absl::string_view text) {
  const absl::Status status =
      ForEachTextProtoField("t.txtpb", text, [](const std::string&, const std::string&) {});
  if (status.ok()) return "(no error)";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

TEST(TextProtoTest, ScalarsAtTheTop) {
  EXPECT_THAT(Read("a: 1\nb: -2.5e3 c: TPU_VERSION_VIPERFISH\nd: true"),
              ElementsAre(Pair("a", "1"), Pair("b", "-2.5e3"), Pair("c", "TPU_VERSION_VIPERFISH"),
                          Pair("d", "true")));
  EXPECT_THAT(Read(""), ElementsAre());
  EXPECT_THAT(Read("  \n# only a comment\n"), ElementsAre());
}

TEST(TextProtoTest, NestedMessagesJoinTheirNames) {
  EXPECT_THAT(Read("gpu_device_info {\n"
                   "  core_count: 132\n"
                   "  cuda_compute_capability {\n"
                   "    major: 9\n"
                   "  }\n"
                   "  device_memory_size: 84978434048\n"
                   "}\n"
                   "dnn_version_info { major: 8 minor: 9 }\n"
                   "device_description_str: \"NVIDIA H100 80GB HBM3\"\n"),
              ElementsAre(Pair("gpu_device_info.core_count", "132"),
                          Pair("gpu_device_info.cuda_compute_capability.major", "9"),
                          Pair("gpu_device_info.device_memory_size", "84978434048"),
                          Pair("dnn_version_info.major", "8"), Pair("dnn_version_info.minor", "9"),
                          Pair("device_description_str", "NVIDIA H100 80GB HBM3")));
}

TEST(TextProtoTest, MessageSpellings) {
  // A colon before '{', angle brackets, separators, empty messages and an
  // extension name in brackets.
  EXPECT_THAT(Read("a: { b: 1, c: 2; } d < e: 3 > empty {} [ext.type] { f: 4 }"),
              ElementsAre(Pair("a.b", "1"), Pair("a.c", "2"), Pair("d.e", "3"),
                          Pair("[ext.type].f", "4")));
}

TEST(TextProtoTest, ListsGiveOneCallPerElement) {
  EXPECT_THAT(Read("dims: [1, 2, 3]\nnames: [\"a\", 'b']\nnone: []\nm { xs: [ 4 ,5 ] }"),
              ElementsAre(Pair("dims", "1"), Pair("dims", "2"), Pair("dims", "3"),
                          Pair("names", "a"), Pair("names", "b"), Pair("m.xs", "4"),
                          Pair("m.xs", "5")));
}

TEST(TextProtoTest, RepeatedFieldsAreCalledEachTime) {
  EXPECT_THAT(Read("x: 1 x: 2 m { y: 3 } m { y: 4 }"),
              ElementsAre(Pair("x", "1"), Pair("x", "2"), Pair("m.y", "3"), Pair("m.y", "4")));
}

TEST(TextProtoTest, CommentsAnywhereBetweenTokens) {
  EXPECT_THAT(Read("# header\n"
                   "a { # opens\n"
                   "  b: 1  # trailing\n"
                   "  # between\n"
                   "  c: # before the value\n"
                   "     2\n"
                   "}  # closes\n"
                   "s: \"not # a comment\"\n"),
              ElementsAre(Pair("a.b", "1"), Pair("a.c", "2"), Pair("s", "not # a comment")));
}

TEST(TextProtoTest, StringsAreUnescaped) {
  EXPECT_THAT(Read(R"(a: "q\"uote" b: 'it\'s' c: "back\\slash" d: "tab\tnl\nend" e: "\\n")"),
              ElementsAre(Pair("a", "q\"uote"), Pair("b", "it's"), Pair("c", "back\\slash"),
                          Pair("d", "tab\tnl\nend"), Pair("e", "\\n")));
  // protobuf's printer writes bytes outside printable ASCII in octal
  // ("\303\251" for UTF-8 e-acute); hex escapes are read too.
  EXPECT_THAT(Read(R"(a: "caf\303\251" b: "\x41\x4a\x7" c: "\0" d: "\101\10" e: "\8\?")"),
              ElementsAre(Pair("a", "caf\xc3\xa9"), Pair("b", "AJ\a"), Pair("c", std::string(1, '\0')),
                          Pair("d", "A\b"), Pair("e", "8?")));
}

TEST(TextProtoTest, AdjacentStringsConcatenate) {
  EXPECT_THAT(Read("s: \"NVIDIA \" 'H100' \" 80GB\"\n"
                   "t: \"a\"  # comment between parts\n"
                   "   \"b\"\n"
                   "u: \"\" \"\"\n"),
              ElementsAre(Pair("s", "NVIDIA H100 80GB"), Pair("t", "ab"), Pair("u", "")));
}

TEST(TextProtoErrorTest, UnterminatedStringPointsAtItsQuote) {
  EXPECT_THAT(Error("a: 1\nname: \"abc"),
              StartsWith("t.txtpb:2:7: error: unterminated string\nname: \"abc\n      ^"));
  // A string may not run over a line end.
  EXPECT_THAT(Error("a {\n  s: 'ab\ncd'\n}\n"), StartsWith("t.txtpb:2:6: error: unterminated string"));
  EXPECT_THAT(Error("s: \"ends in a backslash\\"),
              StartsWith("t.txtpb:1:4: error: unterminated string"));
}

TEST(TextProtoErrorTest, MissingClosingBrace) {
  // Reported where the text ends, where the '}' was expected.
  EXPECT_THAT(Error("a {\n  b {\n    c: 1\n  }\n"),
              StartsWith("t.txtpb:5:1: error: unterminated message: expected '}'"));
  EXPECT_THAT(Error("a < b: 1"), StartsWith("t.txtpb:1:9: error: unterminated message"));
}

TEST(TextProtoErrorTest, Garbage) {
  EXPECT_THAT(Error("a: 1\n  %%%\n"), StartsWith("t.txtpb:2:3: error: expected a field name"));
  EXPECT_THAT(Error("}"), StartsWith("t.txtpb:1:1: error: expected a field name"));
  EXPECT_THAT(Error("a { b: 1 >"), StartsWith("t.txtpb:1:10: error: expected a field name"));
  EXPECT_THAT(Error("a 1"),
              StartsWith("t.txtpb:1:3: error: expected ':' or '{' after the field name"));
  EXPECT_THAT(Error("x {\n  y:\n}"), StartsWith("t.txtpb:3:1: error: expected a value"));
  EXPECT_THAT(Error("x: "), StartsWith("t.txtpb:1:4: error: expected a value"));
  EXPECT_THAT(Error("x: [1, 2"), StartsWith("t.txtpb:1:9: error: expected a value"));
  EXPECT_THAT(Error("x: [1, }]"), StartsWith("t.txtpb:1:8: error: expected a value"));
  EXPECT_THAT(Error("[unclosed.ext { }"), StartsWith("t.txtpb:1:1: error: expected a field name"));
  EXPECT_THAT(Error("\xff: 1"), StartsWith("t.txtpb:1:1: error: expected a field name"));
}

TEST(TextProtoErrorTest, NestingIsBounded) {
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "m { ";
  EXPECT_THAT(Error(deep), HasSubstr("error: messages nested too deeply"));
  std::string fine;
  for (int i = 0; i < 64; ++i) fine += "m { ";
  fine += "x: 1";
  for (int i = 0; i < 64; ++i) fine += " }";
  const Fields fields = Read(fine);
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].second, "1");
}

}  // namespace
}  // namespace hlomem::target
