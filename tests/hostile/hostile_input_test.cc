// Hostile inputs through the real binary: each bad file alone is exit 2 and
// an error naming it (located for HLO text); inside a directory beside a
// good module it is a warning naming it, and the report still comes out.
// No crash, no hang, memory bounded by the input size.
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hostile/run_hlomem.h"
#include "tests/hostile/scratch_dir.h"

namespace hlomem::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kGoodModulePath =
    std::string(HLOMEM_TESTDATA_DIR) +
    "/jax/argmax/module_0000.jit_argmax_both.cpu_after_optimizations.txt";
constexpr char kGoodName[] = "module_0000.jit_argmax_both.cpu_after_optimizations.txt";
constexpr char kBadName[] = "module_0001.hostile.cpu_after_optimizations.txt";

// A scheduled module whose entry holds `body`, with the program shape
// `signature` (none when empty).
std::string EntryModule(absl::string_view body,
                        absl::string_view signature = "(p: f32[4]) -> f32[4]") {
  return absl::StrCat("HloModule m, is_scheduled=true\n\nENTRY %e", signature.empty() ? "" : " ",
                      signature, " {\n", body, "}\n");
}

std::string NestedTuple(int depth) {
  return absl::StrCat(std::string(static_cast<size_t>(depth), '('), "f32[]",
                      std::string(static_cast<size_t>(depth), ')'));
}

std::string Garbage(size_t size, bool printable) {
  std::mt19937 rng(1234);
  std::string out(size, '\0');
  for (char& c : out) {
    c = static_cast<char>(printable ? 0x20 + rng() % 0x5f : rng() % 256);
  }
  return out;
}

struct HostileText {
  std::string name;
  std::string contents;
  std::string message;  // part of the error
  bool located = true;  // "path:line:col: error:" rather than "path: error:"
};

void PrintTo(const HostileText& c, std::ostream* os) { *os << c.name; }

std::vector<HostileText> HostileTexts() {
  const std::string param = "  %p = f32[4]{0} parameter(0)\n";
  const std::string root = "  ROOT %n = f32[4]{0} negate(%p)\n";
  const std::string huge = "4611686018427387904";  // 2^62
  return {
      {"empty", "", "file is empty", false},
      {"only_whitespace", "\n \t\n\r\n", "file is empty", false},
      {"binary_garbage", Garbage(4096, false), "error", false},
      {"text_garbage", Garbage(4096, true), "error"},
      {"header_only", "HloModule m\n", "module has no computations"},
      {"cut_mid_instruction", EntryModule(param).substr(0, 80), "unbalanced '{'"},
      {"unterminated_string",
       EntryModule(param + "  ROOT %n = f32[4]{0} negate(%p), metadata={op_name=\"abc"),
       "unterminated string"},
      {"unbalanced_brackets", EntryModule(param + "  ROOT %n = f32[4]{0} negate(%p), x={{{\n"),
       "unbalanced"},
      {"tuple_nested_1e5_deep",
       EntryModule(absl::StrCat("  ROOT %p = ", NestedTuple(100000), " parameter(0)\n")),
       "nesting deeper than 1000 levels (--max-nesting-depth raises the limit)"},
      {"computation_calls_itself",
       "HloModule m\n%c (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
       "  ROOT %r = f32[] call(%x), to_apply=%c\n}\n"
       "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
       "  ROOT %y = f32[] call(%p), to_apply=%c\n}\n",
       "call cycle"},
      {"computations_call_each_other",
       "HloModule m\n%a (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
       "  ROOT %r = f32[] call(%x), to_apply=%b\n}\n"
       "%b (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
       "  ROOT %r = f32[] call(%x), to_apply=%a\n}\n"
       "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
       "  ROOT %y = f32[] call(%p), to_apply=%a\n}\n",
       "call cycle"},
      {"operand_cycle",
       EntryModule(param + "  %a = f32[4]{0} add(%b, %p)\n  %b = f32[4]{0} add(%a, %p)\n" +
                   "  ROOT %n = f32[4]{0} negate(%b)\n"),
       "depends on itself"},
      {"operand_is_itself", EntryModule(param + "  ROOT %n = f32[4]{0} add(%n, %p)\n"),
       "depends on itself"},
      {"undefined_operand", EntryModule(param + "  ROOT %n = f32[4]{0} negate(%q)\n"),
       "undefined instruction 'q'"},
      {"undefined_computation",
       EntryModule(param + "  ROOT %n = f32[4]{0} call(%p), to_apply=%nowhere\n"),
       "computation 'nowhere' is not defined"},
      {"duplicate_instruction",
       EntryModule(param + "  %p = f32[4]{0} parameter(1)\n" + root), "already defined"},
      {"duplicate_computation",
       "HloModule m\n%c (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n"
       "%c (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n"
       "ENTRY %e (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
       "  ROOT %y = f32[] call(%p), to_apply=%c\n}\n",
       "computation 'c' is already defined"},
      {"duplicate_parameter_number",
       EntryModule(param + "  %q = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} add(%p, %q)\n"),
       "parameter number 0 is already used"},
      {"tuple_index_out_of_range",
       EntryModule(param + "  %t = (f32[4]{0}) tuple(%p)\n" +
                   "  ROOT %g = f32[4]{0} get-tuple-element(%t), index=7\n"),
       "out of range"},
      {"dimension_bytes_overflow",
       EntryModule(absl::StrCat("  ROOT %p = f32[", huge, ",", huge, "]{1,0} parameter(0)\n")),
       "more than 2^63 elements"},
      {"array_bytes_overflow",
       EntryModule(absl::StrCat("  ROOT %p = f32[", huge, "]{0} parameter(0)\n")),
       "overflows 64 bits"},
      {"total_bytes_overflow",
       EntryModule(absl::StrCat("  %p = s8[", huge, "]{0} parameter(0)\n", "  %q = s8[", huge,
                                "]{0} parameter(1)\n", "  ROOT %t = (s8[", huge, "]{0}, s8[",
                                huge, "]{0}) tuple(%p, %q)\n"),
                   absl::StrCat("(p: s8[", huge, "], q: s8[", huge, "]) -> (s8[", huge,
                                "], s8[", huge, "])")),
       "more than 4 EiB"},
      {"dimension_too_large_for_int64",
       EntryModule("  ROOT %p = f32[99999999999999999999]{0} parameter(0)\n"),
       "integer is too large"},
      {"parameter_number_beyond_32_bits",
       EntryModule("  ROOT %p = f32[4]{0} parameter(2147483648)\n"), "integer is too large"},
      {"tuple_index_beyond_32_bits",
       EntryModule(param + "  %t = (f32[4]{0}) tuple(%p)\n" +
                   "  ROOT %g = f32[4]{0} get-tuple-element(%t), index=-4294967296\n"),
       "integer is too large"},
      {"negative_dimension", EntryModule("  ROOT %p = f32[-4]{0} parameter(0)\n"),
       "negative dimension size -4"},
      {"layout_not_a_permutation", EntryModule("  ROOT %p = f32[2,3]{0,0} parameter(0)\n"),
       "not a permutation"},
      {"layout_rank_mismatch", EntryModule("  ROOT %p = f32[2,3]{2,1,0} parameter(0)\n"),
       "layout has 3 dimensions but the shape has rank 2"},
      {"layout_zero_tile", EntryModule("  ROOT %p = f32[2,3]{1,0:T(0,128)} parameter(0)\n"),
       "invalid tile dimension 0"},
      {"layout_negative_memory_space",
       EntryModule("  ROOT %p = f32[2,3]{1,0:S(-1)} parameter(0)\n"), "negative memory space"},
      {"layout_garbage", EntryModule("  ROOT %p = f32[2,3]{1,0:Q} parameter(0)\n"),
       "unexpected character in layout"},
      {"unknown_element_type", EntryModule("  ROOT %p = f33[4]{0} parameter(0)\n"),
       "unknown element type 'f33'"},
      {"elided_operands", EntryModule(param + "  ROOT %n = f32[4]{0} add(...)\n"),
       "elided operands"},
      {"bitcast_without_operand", EntryModule(param + "  ROOT %b = f32[4]{0} bitcast()\n"),
       "bitcast needs at least 1 operand(s), has 0"},
      {"tuple_operand_count_mismatch",
       EntryModule(param + "  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%p)\n",
                   "(p: f32[4]) -> (f32[4], f32[4])"),
       "tuple has 1 operands but its shape 2 elements"},
      {"aliasing_names_a_missing_operand",
       EntryModule(param + "  ROOT %c = f32[4]{0} custom-call(%p), custom_call_target=\"x\", " +
                   "output_to_operand_aliasing={{}: (3, {})}\n"),
       "output_to_operand_aliasing names operand 3"},
      {"compact_operand_names_its_own_instruction",
       EntryModule(param + "  ROOT %t = (f32[4]{0}) tuple(t#0)\n"),
       "refers to an instruction not defined before it"},
      {"compact_operand_past_tuple_end",
       EntryModule(param + "  %t = (f32[4]{0}) tuple(%p)\n  ROOT %n = f32[4]{0} negate(t#3)\n"),
       "indexes past the end of a tuple"},
  };
}

void ExpectBounded(const RunResult& run, int64_t input_bytes) {
  EXPECT_FALSE(run.timed_out) << run.output;
  EXPECT_EQ(run.signal, 0) << run.output;
  EXPECT_LE(run.max_rss_bytes, MemoryBound(input_bytes));
}

class HostileTextTest : public ::testing::TestWithParam<HostileText> {};

TEST_P(HostileTextTest, AloneIsExit2AndAnErrorNamingTheFile) {
  const HostileText& c = GetParam();
  ScratchDir dir;
  const std::string path = dir.Write(c.name + ".hlo", c.contents);
  const RunResult run = RunHlomem({"parse", path});
  ExpectBounded(run, static_cast<int64_t>(c.contents.size()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  if (c.located) {
    EXPECT_TRUE(HasLocatedError(run.output, path)) << run.output;
  } else {
    EXPECT_TRUE(HasErrorFor(run.output, path)) << run.output;
  }
  EXPECT_THAT(run.output, HasSubstr(c.message));
}

// A bad module beside a good one stops the run, naming it: figures without
// it would pass a gate wrongly. --skip-unreadable goes on with a warning.
TEST_P(HostileTextTest, BesideAGoodModuleStopsTheRunNamingTheFile) {
  const HostileText& c = GetParam();
  ScratchDir dir;
  dir.Write(kGoodName, ReadFileOrDie(kGoodModulePath));
  const std::string bad = dir.Write(kBadName, c.contents);
  RunResult run = RunHlomem({"report", "--no-color", dir.path()});
  ExpectBounded(run, static_cast<int64_t>(c.contents.size()));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(HasErrorFor(run.output, bad)) << run.output;
  EXPECT_THAT(run.output, HasSubstr("1 module of the dump could not be read"));
  EXPECT_THAT(run.output, Not(HasSubstr("module jit_argmax_both")));

  run = RunHlomem({"report", "--no-color", "--skip-unreadable", dir.path()});
  ExpectBounded(run, static_cast<int64_t>(c.contents.size()));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
  EXPECT_THAT(run.output, HasSubstr(bad + ": warning: module skipped"));
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileTextTest, ::testing::ValuesIn(HostileTexts()),
                         [](const ::testing::TestParamInfo<HostileText>& param) {
                           return param.param.name;
                         });

// Dumps of large models put megabytes on one line; a whole module on a
// single 100 MB line must parse in memory proportional to it, and an error
// on it must not echo the line.
TEST(HostileInputTest, SingleHundredMegabyteLine) {
  ScratchDir dir;
  const std::string head =
      "HloModule big, is_scheduled=true ENTRY %e (p: f32[4]) -> f32[4] { "
      "%p = f32[4]{0} parameter(0) ROOT %n = f32[4]{0} negate(%p), metadata={op_name=\"";
  std::string text = head;
  text.append(size_t{100} << 20, 'a');
  const std::string good = dir.Write("big.hlo", absl::StrCat(text, "\"} }"));
  RunResult run = RunHlomem({"parse", good});
  ExpectBounded(run, static_cast<int64_t>(text.size()));
  EXPECT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  EXPECT_THAT(run.output, HasSubstr("module big: 1 computations, 2 instructions"));

  const std::string cut = dir.Write("cut.hlo", text);  // the string never closes
  run = RunHlomem({"parse", cut});
  ExpectBounded(run, static_cast<int64_t>(text.size()));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(HasLocatedError(run.output, cut)) << run.output.substr(0, 2000);
  EXPECT_THAT(run.output, HasSubstr("unterminated string"));
  EXPECT_LT(run.output.size(), 4096u);
}

TEST(HostileInputTest, GoodModuleAloneStillReports) {
  const RunResult run = RunHlomem({"report", "--no-color", kGoodModulePath});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, Not(HasSubstr("warning")));
}

// ---- a real module edited to disagree with itself ----------------------------

// Hand edits that leave a module parseable but describing shapes that do
// not exist: the good module with `edits` applied (each text replaced once),
// and the located error it must give, verbatim after the path; "" when the
// edited module is still consistent and must parse.
struct SelfContradiction {
  std::string name;
  std::vector<std::pair<std::string, std::string>> edits;
  std::string error;
};

void PrintTo(const SelfContradiction& c, std::ostream* os) { *os << c.name; }

std::vector<SelfContradiction> SelfContradictions() {
  // Lines 36-39 of the module, region_2.5:
  //   %region_2.5 (reduce_max.3: f32[], reduce_max.4: f32[]) -> f32[] {
  //     %reduce_max.3 = f32[] parameter(0), ...
  //     %reduce_max.4 = f32[] parameter(1), ...
  //     ROOT %reduce_max.5 = f32[] maximum(%reduce_max.3, %reduce_max.4), ...
  const std::string maximum = "maximum(%reduce_max.3, %reduce_max.4)";
  // Line 101, in the entry: fusion(%x.1), x.1 being f32[16384,16384]{1,0}.
  const std::string fusion_of_x = "fusion(%x.1), kind=kLoop, calls=%fused_computation.2";
  const auto fusion_of = [](absl::string_view operand) {
    return absl::StrCat("fusion(", operand, "), kind=kLoop, calls=%fused_computation.2");
  };
  return {
      // Operands written with their shapes (long form).
      {"operand_shape_as_defined", {{fusion_of_x, fusion_of("f32[16384,16384]{1,0} %x.1")}}, ""},
      {"operand_shape_without_its_layout", {{fusion_of_x, fusion_of("f32[16384,16384] %x.1")}},
       ""},
      {"operand_shape_with_other_dimensions",
       {{fusion_of_x, fusion_of("f32[16384,8192] %x.1")}},
       ":101:65: error: operand 'x.1' is declared as f32[16384,8192], but its definition has "
       "shape f32[16384,16384]{1,0}"},
      {"operand_shape_with_another_layout",
       {{fusion_of_x, fusion_of("f32[16384,16384]{0,1} %x.1")}},
       ":101:65: error: operand 'x.1' is declared as f32[16384,16384]{0,1}, but its definition "
       "has shape f32[16384,16384]{1,0}"},
      {"operand_shape_with_another_element_type",
       {{maximum, "maximum(%reduce_max.3, s32[] %reduce_max.4)"}},
       ":39:53: error: operand 'reduce_max.4' is declared as s32[], but its definition has "
       "shape f32[]"},
      // Named before it is defined: checked once the body has been read.
      {"operand_shape_of_a_later_instruction",
       {{"  %reduce_max.4 = f32[] parameter(1), metadata={op_name=\"reduce_max\"}\n", ""},
        {maximum, "maximum(%reduce_max.3, f32[2] %reduce_max.4)"},
        {"stack_frame_id=8}\n}\n\n%fused_computation (",
         "stack_frame_id=8}\n  %reduce_max.4 = f32[] parameter(1)\n}\n\n%fused_computation ("}},
       ":38:53: error: operand 'reduce_max.4' is declared as f32[2], but its definition has "
       "shape f32[]"},
      {"compact_operand_shape",
       {{"tuple(%iota_reduce_fusion.1#1,", "tuple(f32[16384]{0} %iota_reduce_fusion.1#1,"}},
       ":104:63: error: operand 'iota_reduce_fusion.1#1' is declared as f32[16384]{0}, but its "
       "definition has shape s32[16384]{0}"},
      // The program shape against the root and the parameters.
      {"signature_with_layouts",
       {{"%fused_computation (param_0: f32[16384,16384], param_1: f32[]) -> f32[] {",
         "%fused_computation (param_0: f32[16384,16384]{1,0}, param_1: f32[]) -> f32[] {"}},
       ""},
      {"root_shape_other_than_the_result",
       {{"-> (s32[16384], s32[16384], f32[]) {", "-> (s32[16384], s32[16384], f32[2]) {"}},
       ":104:19: error: root 'tuple.5' has shape (s32[16384]{0}, s32[16384]{0}, f32[]), but "
       "computation 'main.6' declares its result as (s32[16384], s32[16384], f32[2])"},
      {"parameter_shape_other_than_the_signature",
       {{"(reduce_max.3: f32[], reduce_max.4: f32[])", "(reduce_max.3: f32[], reduce_max.4: s32[])"}},
       ":38:19: error: parameter 'reduce_max.4' has shape f32[], but computation 'region_2.5' "
       "declares parameter 1 as s32[]"},
      {"parameter_layout_other_than_the_signature",
       {{"%fused_computation (param_0: f32[16384,16384], param_1: f32[]) -> f32[] {",
         "%fused_computation (param_0: f32[16384,16384]{0,1}, param_1: f32[]) -> f32[] {"}},
       ":43:14: error: parameter 'param_0' has shape f32[16384,16384]{1,0}, but computation "
       "'fused_computation' declares parameter 0 as f32[16384,16384]{0,1}"},
      // Operand counts the opcode does not take.
      {"binary_op_with_three_operands",
       {{maximum, "maximum(%reduce_max.3, %reduce_max.4, %reduce_max.3)"}},
       ":39:3: error: maximum takes exactly 2 operand(s), has 3"},
      {"select_with_two_operands",
       {{"select(%or.2, %reduce.4, %reduce.6)", "select(%or.2, %reduce.4)"}},
       ":84:3: error: select needs at least 3 operand(s), has 2"},
      {"iota_with_an_operand",
       {{"iota(), iota_dimension=1", "iota(%param_0.1), iota_dimension=1"}},
       ":67:3: error: iota takes exactly 0 operand(s), has 1"},
      {"reduce_without_its_init_value",
       {{"reduce(%param_0, %param_1)", "reduce(%param_0)"}},
       ":45:3: error: reduce needs at least 2 operand(s), has 1"},
      // A fusion against the computation it calls (a fuzzed calls= once
      // sent the analysis past the end of a root tuple's operands).
      {"fusion_with_an_operand_too_many",
       {{fusion_of_x, "fusion(%x.1, %x.1), kind=kLoop, calls=%fused_computation.2"}},
       ":101:3: error: fusion has 2 operand(s), but its computation 'fused_computation.2' has 1 "
       "parameter(s)"},
      {"fusion_nesting_unlike_its_root",
       {{"%ynn_fusion = f32[] fusion(", "%ynn_fusion = (f32[], f32[]) fusion("}},
       ":103:3: error: fusion's shape (f32[], f32[]) does not nest like the root of its "
       "computation 'fused_computation', f32[]"},
  };
}

class SelfContradictionTest : public ::testing::TestWithParam<SelfContradiction> {};

TEST_P(SelfContradictionTest, GivesItsLocatedErrorVerbatim) {
  const SelfContradiction& c = GetParam();
  std::string text = ReadFileOrDie(kGoodModulePath);
  for (const auto& [from, to] : c.edits) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    ASSERT_EQ(text.find(from, at + 1), std::string::npos) << from << " is not unique";
    text.replace(at, from.size(), to);
  }
  ScratchDir dir;
  const std::string path = dir.Write(c.name + ".txt", text);
  const RunResult run = RunHlomem({"parse", path});
  if (c.error.empty()) {
    EXPECT_EQ(run.exit_code, 0) << run.output;
  } else {
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr(path + c.error + "\n")) << run.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SelfContradictionTest,
                         ::testing::ValuesIn(SelfContradictions()),
                         [](const ::testing::TestParamInfo<SelfContradiction>& param) {
                           return param.param.name;
                         });

// ---- the file system -------------------------------------------------------

TEST(HostileFileSystemTest, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  ScratchDir dir;
  dir.Write(kGoodName, ReadFileOrDie(kGoodModulePath));
  const std::string bad = dir.Write(kBadName, ReadFileOrDie(kGoodModulePath));
  ASSERT_EQ(::chmod(bad.c_str(), 0), 0);

  RunResult run = RunHlomem({"parse", bad});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(HasErrorFor(run.output, bad)) << run.output;

  run = RunHlomem({"report", "--no-color", dir.path()});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr(bad + ": warning:"));
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
}

// What root cannot read either: a link to nowhere, a directory where a file
// should be.
TEST(HostileFileSystemTest, DanglingLinkAndDirectoryInPlaceOfAFile) {
  ScratchDir dir;
  dir.Write(kGoodName, ReadFileOrDie(kGoodModulePath));
  const std::string dangling = dir.path() + "/" + kBadName;
  ASSERT_EQ(::symlink("/nonexistent/target", dangling.c_str()), 0);
  const std::string directory =
      dir.path() + "/module_0002.directory.cpu_after_optimizations.txt";
  ASSERT_EQ(::mkdir(directory.c_str(), 0755), 0);

  for (const std::string& bad : {dangling, directory}) {
    const RunResult run = RunHlomem({"parse", bad});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_TRUE(HasErrorFor(run.output, bad)) << run.output;
  }
  const RunResult run = RunHlomem({"report", "--no-color", dir.path()});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr(dangling + ": warning:"));
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
}

TEST(HostileFileSystemTest, SymlinkLoops) {
  ScratchDir dir;
  dir.Write(kGoodName, ReadFileOrDie(kGoodModulePath));
  ASSERT_EQ(::symlink(".", (dir.path() + "/again").c_str()), 0);
  ASSERT_EQ(::mkdir((dir.path() + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("..", (dir.path() + "/sub/back").c_str()), 0);
  const std::string a = dir.path() + "/module_0001.a.cpu_after_optimizations.txt";
  const std::string b = dir.path() + "/module_0002.b.cpu_after_optimizations.txt";
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);

  RunResult run = RunHlomem({"report", "--no-color", dir.path()});
  ExpectBounded(run, 0);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
  EXPECT_THAT(run.output, HasSubstr(a + ": warning:"));

  run = RunHlomem({"parse", a});
  ExpectBounded(run, 0);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(HasErrorFor(run.output, a)) << run.output;
}

TEST(HostileFileSystemTest, ThousandsOfFiles) {
  ScratchDir dir;
  dir.Write(kGoodName, ReadFileOrDie(kGoodModulePath));
  for (int i = 0; i < 3000; ++i) dir.Write(absl::StrCat("notes_", i, ".txt"), "not a dump\n");
  for (int i = 1; i <= 1000; ++i) {
    dir.Write(absl::StrFormat("module_%04d.empty.cpu_after_optimizations.txt", i), "");
  }
  RunResult run = RunHlomem({"report", "--no-color", dir.path()});
  ExpectBounded(run, 0);
  EXPECT_EQ(run.exit_code, 2) << run.output.substr(0, 2000);
  EXPECT_THAT(run.output,
              HasSubstr(dir.path() + "/module_1000.empty.cpu_after_optimizations.txt: error: "
                                     "file is empty"));
  EXPECT_THAT(run.output, HasSubstr("1000 modules of the dump could not be read"));
  run = RunHlomem({"report", "--no-color", "--skip-unreadable", dir.path()});
  ExpectBounded(run, 0);
  EXPECT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
}

TEST(HostileFileSystemTest, NonUtf8FileNames) {
  ScratchDir dir;
  const std::string good_name = "module_0000.\xff\xfe\x80.cpu_after_optimizations.txt";
  const std::string bad_name = "module_0001.\xc3\x28.cpu_after_optimizations.txt";
  dir.Write(good_name, ReadFileOrDie(kGoodModulePath));
  const std::string bad = dir.Write(bad_name, "HloModule broken\nENTRY {\n");
  RunResult run = RunHlomem({"report", "--no-color", "--skip-unreadable", dir.path()});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("module jit_argmax_both"));
  EXPECT_THAT(run.output, HasSubstr(bad + ": warning: module skipped"));

  // JSON must stay valid UTF-8 whatever the names: the unreadable module's
  // path is in it too.
  run = RunHlomem({"report", "--format", "json", "--skip-unreadable", "-o", dir.path() + "/out.json",
                   dir.path()});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const std::string json = ReadFileOrDie(dir.path() + "/out.json");
  EXPECT_THAT(json, HasSubstr("jit_argmax_both"));
  for (size_t i = 0; i < json.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(json[i]);
    if (c < 0x80) continue;
    // A lead byte and its continuation bytes.
    const size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    ASSERT_NE(length, 0u) << "stray continuation byte at " << i;
    ASSERT_LE(i + length, json.size());
    for (size_t k = 1; k < length; ++k) {
      ASSERT_EQ(static_cast<unsigned char>(json[i + k]) & 0xc0, 0x80) << "at " << i;
    }
    i += length - 1;
  }
}

// ---- resource guards ---------------------------------------------------------

TEST(ResourceGuardTest, MaxElementsIsAClearErrorAndCanBeRaised) {
  ScratchDir dir;
  std::string body = "  %p = f32[4]{0} parameter(0)\n";
  for (int i = 0; i < 199; ++i) {
    absl::StrAppend(&body, "  %n", i, " = f32[4]{0} negate(%", i == 0 ? "p" : absl::StrCat("n", i - 1),
                    ")\n");
  }
  absl::StrAppend(&body, "  ROOT %r = f32[4]{0} negate(%n198)\n");
  const std::string path = dir.Write("many.hlo", EntryModule(body));

  RunResult run = RunHlomem({"report", "--max-elements", "100", path});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(HasLocatedError(run.output, path)) << run.output;
  EXPECT_THAT(run.output, HasSubstr("more than 100 elements"));
  EXPECT_THAT(run.output, HasSubstr("--max-elements raises the limit"));

  run = RunHlomem({"parse", "--max-elements", "201", path});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  run = RunHlomem({"parse", "--max-elements", "0", path});
  EXPECT_EQ(run.exit_code, 2) << run.output;
}

TEST(ResourceGuardTest, MaxNestingDepthIsAClearErrorAndCanBeRaised) {
  ScratchDir dir;
  const std::string path = dir.Write(
      "deep.hlo",
      EntryModule(absl::StrCat("  ROOT %p = ", NestedTuple(1500), " parameter(0)\n"), ""));
  RunResult run = RunHlomem({"report", path});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(HasLocatedError(run.output, path)) << run.output.substr(0, 2000);
  EXPECT_THAT(run.output, HasSubstr("--max-nesting-depth raises the limit"));

  run = RunHlomem({"report", "--format", "json", "--max-nesting-depth", "1600", path});
  EXPECT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  run = RunHlomem({"report", "--max-nesting-depth", "2001", path});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--max-nesting-depth"));
}

// The deepest nesting the flag allows must not exhaust the stack anywhere:
// parser, verifier, analysis, writers.
TEST(ResourceGuardTest, DeepestAllowedNestingRunsToTheEnd) {
  ScratchDir dir;
  const std::string path = dir.Write(
      "deepest.hlo",
      EntryModule(absl::StrCat("  ROOT %p = ", NestedTuple(1990), " parameter(0)\n"), ""));
  for (const char* format : {"text", "json"}) {
    const RunResult run =
        RunHlomem({"report", "--format", format, "--max-nesting-depth", "2000", path});
    EXPECT_FALSE(run.timed_out);
    EXPECT_EQ(run.signal, 0);
    EXPECT_EQ(run.exit_code, 0) << run.output.substr(0, 2000);
  }
}

}  // namespace
}  // namespace hlomem::testing
