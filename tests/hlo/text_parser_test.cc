#include "lib/hlo/text_parser.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/verifier.h"

namespace hlomem::hlo {
namespace {

using ::testing::ElementsAre;

Module ParseOne(absl::string_view text) {
  auto modules = ParseHloString(text, "test.hlo");
  EXPECT_TRUE(modules.ok()) << modules.status().message();
  if (!modules.ok() || modules->size() != 1) return Module();
  absl::Status verified = VerifyModule(modules->front());
  EXPECT_TRUE(verified.ok()) << verified.message();
  return std::move(modules->front());
}

std::string ParseError(absl::string_view text) {
  auto modules = ParseHloString(text, "test.hlo");
  if (modules.ok()) {
    for (const Module& m : *modules) {
      absl::Status verified = VerifyModule(m);
      if (!verified.ok()) return std::string(verified.message());
    }
    return "(no error)";
  }
  return std::string(modules.status().message());
}

// clang-format off
TEST(TextParserTest, ShortStyleScheduledModule) {
  Module m = ParseOne(R"(
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0})->f32[8,128]{1,0}}

fused_add {
  p0 = f32[8,128]{1,0} parameter(0)
  ROOT add.1 = f32[8,128]{1,0} add(p0, p0)
}

ENTRY main {
  Arg_0.1 = f32[8,128]{1,0} parameter(0)
  ROOT fusion = f32[8,128]{1,0} fusion(Arg_0.1), kind=kLoop, calls=fused_add, metadata={op_type="add" op_name="jit(f)/add" source_file="/tmp/f.py" source_line=12}
}
)");
  EXPECT_EQ(m.name, "jit_f");
  EXPECT_TRUE(m.is_scheduled);
  ASSERT_EQ(m.computations.size(), 2u);
  EXPECT_EQ(m.comp(m.entry).name, "main");
  EXPECT_TRUE(m.comp(0).is_fusion);
  const InstrId fusion = m.FindInstruction("fusion");
  EXPECT_EQ(m.instr(fusion).fusion_kind, FusionKind::kLoop);
  EXPECT_EQ(m.callee(fusion, CallRole::kCalls), 0u);
  EXPECT_EQ(m.comp(m.entry).root, fusion);
  EXPECT_EQ(m.shapes.ByteSize(m.instr(fusion).shape), 8 * 128 * 4);
  EXPECT_EQ(m.metadata_of(fusion).op_name, "jit(f)/add");
  EXPECT_EQ(m.SourceOf(fusion).file, "/tmp/f.py");
  EXPECT_EQ(m.SourceOf(fusion).line, 12);
  EXPECT_EQ(m.entry_computation_layout, "{(f32[8,128]{1,0})->f32[8,128]{1,0}}");
}

TEST(TextParserTest, LongStyleWithOperandShapesAndProgramShapes) {
  Module m = ParseOne(R"(
HloModule m

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[16]) -> f32[] {
  %p = f32[16]{0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[16]{0} %p, f32[] %zero), dimensions={0}, to_apply=%add
}
)");
  const InstrId r = m.FindInstruction("r");
  ASSERT_NE(r, kNoId);
  EXPECT_EQ(m.instr(r).opcode, Opcode::kReduce);
  ASSERT_EQ(m.operands(r).size(), 2u);
  EXPECT_EQ(m.instr(m.operands(r)[0]).name, "p");
  EXPECT_THAT(m.dimensions(r), ElementsAre(0));
  EXPECT_EQ(m.comp(m.callee(r, CallRole::kToApply)).name, "add");
  EXPECT_EQ(m.literal(m.FindInstruction("zero")), "0");
}

TEST(TextParserTest, TuplesIndexCommentsAndElidedConstants) {
  Module m = ParseOne(R"(
HloModule t

ENTRY e {
  a = f32[1024]{0} constant({...})
  b = s32[] constant(7)
  t = (f32[1024]{0}, s32[], f32[1024]{0}, s32[], s32[], /*index=5*/s32[]) tuple(a, b, a, b, b, /*index=5*/b)
  ROOT g = s32[] get-tuple-element(t), index=5
}
)");
  const InstrId t = m.FindInstruction("t");
  EXPECT_EQ(m.operands(t).size(), 6u);
  EXPECT_EQ(m.shapes.ByteSize(m.instr(t).shape), 6 * 8);  // pointer table
  EXPECT_EQ(m.instr(m.FindInstruction("g")).tuple_index(), 5);
  EXPECT_EQ(m.literal(m.FindInstruction("a")), "{...}");
}

// parameter(N) and index=N share one field: each reads only its own opcode's.
TEST(TextParserTest, ParameterNumberAndTupleIndexEachBelongToTheirOpcode) {
  Module m = ParseOne(R"(
HloModule t

ENTRY e {
  p0 = s32[] parameter(0)
  p3 = (s32[], s32[], s32[]) parameter(1)
  p2 = s32[] parameter(2), index=7
  ROOT g = s32[] get-tuple-element(p3), index=2
}
)");
  // An index= on another opcode is kept as written, not as its number.
  EXPECT_EQ(m.instr(m.FindInstruction("p2")).parameter_number(), 2);
  const Instruction& p3 = m.instr(m.FindInstruction("p3"));
  const Instruction& g = m.instr(m.FindInstruction("g"));
  EXPECT_EQ(p3.parameter_number(), 1);
  EXPECT_EQ(p3.tuple_index(), -1);
  EXPECT_EQ(g.tuple_index(), 2);
  EXPECT_EQ(g.parameter_number(), -1);
  EXPECT_EQ(m.instr(m.FindInstruction("p0")).parameter_number(), 0);
}

// Source offsets take 40 bits, split across two fields.
TEST(InstructionTest, SourceOffsetsKeepFortyBits) {
  Instruction instr;
  for (uint64_t offset : {uint64_t{0}, uint64_t{0xffffffff}, (uint64_t{1} << 32) + 7,
                          Instruction::kMaxSourceOffset}) {
    instr.set_source_offset(offset);
    EXPECT_EQ(instr.source_offset(), offset);
  }
}

TEST(TextParserTest, LayoutsAndElementTypes) {
  Module m = ParseOne(R"(
HloModule layouts

ENTRY e {
  a = u4[1024,512]{1,0:E(4)} parameter(0)
  b = s4[1024,512]{1,0} parameter(1)
  c = f32[3,5]{1,0:T(8,128)} parameter(2)
  d = bf16[2,4,128,64]{2,3,1,0:T(8,128)(2,1)S(1)} parameter(3)
  e = f32[<=16,8]{1,0} parameter(4)
  f = pred[10]{0} parameter(5)
  g = (f8e4m3fn[4], c64[2], token[], opaque[]) parameter(6)
  ROOT h = f32[]{:T(128)} parameter(7)
}
)");
  auto bytes = [&](absl::string_view name) {
    return m.shapes.ByteSize(m.instr(m.FindInstruction(name)).shape);
  };
  auto padded = [&](absl::string_view name) {
    return m.shapes.PaddedByteSize(m.instr(m.FindInstruction(name)).shape);
  };
  EXPECT_EQ(bytes("a"), 1024 * 512 / 2);   // packed 4-bit
  EXPECT_EQ(bytes("b"), 1024 * 512);       // one byte per s4 without E(4)
  EXPECT_EQ(bytes("c"), 3 * 5 * 4);
  EXPECT_EQ(padded("c"), 8 * 128 * 4);     // engine.md's T(8,128) example
  EXPECT_EQ(bytes("e"), 16 * 8 * 4 + 2 * 4);  // bound size + dynamic metadata
  EXPECT_EQ(bytes("f"), 10);
  EXPECT_EQ(bytes("g"), 4 * 8);
  const Shape& d = m.shape_of(m.FindInstruction("d"));
  ASSERT_TRUE(d.layout.has_value());
  EXPECT_EQ(d.layout->memory_space, 1);
  ASSERT_EQ(d.layout->tiles.size(), 2u);
  EXPECT_THAT(d.layout->tiles[1], ElementsAre(2, 1));
  EXPECT_EQ(m.shapes.ToString(m.instr(m.FindInstruction("d")).shape),
            "bf16[2,4,128,64]{2,3,1,0:T(8,128)(2,1)S(1)}");
  EXPECT_EQ(m.shapes.ToString(m.instr(m.FindInstruction("e")).shape), "f32[<=16,8]{1,0}");
}

TEST(TextParserTest, AliasingDonorsAndInPlaceAttributes) {
  Module m = ParseOne(R"(
HloModule donate, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (2, {}) }

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  p2 = f32[8]{0} parameter(2)
  cc = f32[8]{0} custom-call(p2), custom_call_target="my_op", output_to_operand_aliasing={{}: (0, {})}
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(p0, cc), control-predecessors={p1}
}
)");
  ASSERT_EQ(m.input_output_aliases.size(), 2u);
  EXPECT_EQ(m.input_output_aliases[1].parameter, 1);
  EXPECT_THAT(m.input_output_aliases[1].output_index, ElementsAre(1));
  EXPECT_EQ(m.input_output_aliases[1].kind, AliasKind::kMustAlias);
  ASSERT_EQ(m.buffer_donors.size(), 1u);
  EXPECT_EQ(m.buffer_donors[0].parameter, 2);
  const InstrId cc = m.FindInstruction("cc");
  EXPECT_EQ(m.custom_call_target(cc), "my_op");
  ASSERT_EQ(m.output_operand_aliases(cc).size(), 1u);
  EXPECT_EQ(m.output_operand_aliases(cc)[0].operand, 0);
  const InstrId t = m.FindInstruction("t");
  ASSERT_EQ(m.control_predecessors(t).size(), 1u);
  EXPECT_EQ(m.instr(m.control_predecessors(t)[0]).name, "p1");
}

TEST(TextParserTest, WhileConditionalAndNestedFrontendAttributes) {
  Module m = ParseOne(R"(
HloModule loops, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["data"=1, "model"=2]>}}

cond {
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4]{0}) tuple(j, x)
}

br_a {
  a = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(a)
}

br_b {
  b = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} copy(b)
}

ENTRY e {
  init = (s32[], f32[4]{0}) parameter(0)
  w = (s32[], f32[4]{0}) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}
  x = f32[4]{0} get-tuple-element(w), index=1
  pr = pred[] parameter(1)
  ROOT r = f32[4]{0} conditional(pr, x, x), true_computation=br_a, false_computation=br_b
}
)");
  const InstrId w = m.FindInstruction("w");
  EXPECT_EQ(m.comp(m.callee(w, CallRole::kBody)).name, "body");
  EXPECT_EQ(m.comp(m.callee(w, CallRole::kCondition)).name, "cond");
  EXPECT_EQ(*m.attribute(w, "backend_config"), R"({"known_trip_count":{"n":"10"}})");
  const InstrId r = m.FindInstruction("r");
  ASSERT_EQ(m.callees(r).size(), 2u);
  EXPECT_EQ(m.comp(m.callees(r)[1].computation).name, "br_b");
  EXPECT_EQ(m.header_attributes[0].value,
            R"({xla.sdy.meshes={mesh = #sdy.mesh<["data"=1, "model"=2]>}})");
}

TEST(TextParserTest, StackFrameSectionsResolveSourceLines) {
  Module m = ParseOne(R"(
HloModule frames

FileNames
1 "/home/u/train.py"
2 "/home/u/model.py"

FunctionNames
1 "<module>"
2 "loss"

FileLocations
1 {file_name_id=1 function_name_id=1 line=209 end_line=209 column=18 end_column=56}
2 {file_name_id=2 function_name_id=2 line=33 end_line=34 column=4 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=1}

ENTRY e {
  ROOT p = f32[2]{0} parameter(0), metadata={op_name="x" stack_frame_id=2}
}
)");
  const SourceLocation loc = m.SourceOf(m.FindInstruction("p"));
  EXPECT_EQ(loc.file, "/home/u/model.py");
  EXPECT_EQ(loc.line, 33);
}

TEST(TextParserTest, HeaderlessComputationWithoutRoot) {
  // As in the corpus's u4_all_gather_1x8.hlo: no HloModule line, no ROOT.
  Module m = ParseOne(R"(e {
  a = u4[1024,512]{1,0:E(4)} parameter(0)
  b = u4[1024,4096]{1,0:E(4)} all-gather(a), dimensions={1}
})");
  EXPECT_EQ(m.name, "");
  EXPECT_EQ(m.instr(m.comp(m.entry).root).name, "b");
}

TEST(TextParserTest, SeveralModulesSeparatedByDashes) {
  auto modules = ParseHloString(R"(
// RUN: some-tool %s
HloModule first
ENTRY e {
  ROOT p = f32[] parameter(0)
}
// -----
HloModule second
ENTRY e {
  ROOT p = f32[] parameter(0)
}
)");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  ASSERT_EQ(modules->size(), 2u);
  EXPECT_EQ((*modules)[1].name, "second");
}

TEST(TextParserTest, AsyncSyntaxSugarAndExecutionThreads) {
  Module m = ParseOne(R"(
HloModule async, is_scheduled=true

host_fn {
  p = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(p)
}, execution_thread="host"

ENTRY e {
  p = f32[4]{0} parameter(0)
  s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[4]{0} custom-call-done(s)
}
)");
  EXPECT_EQ(m.comp(0).execution_thread, "host");
  EXPECT_EQ(m.instr(m.FindInstruction("s")).opcode, Opcode::kAsyncStart);
  EXPECT_EQ(m.instr(m.FindInstruction("d")).opcode, Opcode::kAsyncDone);
  EXPECT_EQ(m.opcode_text(m.FindInstruction("s")), "custom-call-start");
}

TEST(TextParserTest, PrintThenParseGivesTheSameModel) {
  const char* text = R"(
HloModule rt, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[16]{0} parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add, metadata={op_name="sum"}
  ROOT b = f32[16]{0} broadcast(r), dimensions={}
}
)";
  Module first = ParseOne(text);
  const std::string printed = PrintModule(first);
  Module second = ParseOne(printed);
  EXPECT_EQ(PrintModule(second), printed);
  EXPECT_EQ(second.instructions.size(), first.instructions.size());
  EXPECT_EQ(second.input_output_aliases.size(), 1u);
  EXPECT_EQ(second.metadata_of(second.FindInstruction("r")).op_name, "sum");
}

// The shared metadata attribute is kept out of the attribute list and
// printed back in its place; a second metadata attribute (which wins, as in
// XLA) puts the first back into the list as written.
TEST(TextParserTest, ElidedMetadataPrintsInPlace) {
  Module m = ParseOne(R"(
ENTRY e {
  a = f32[] parameter(0), metadata={op_name="p"}
  b = f32[] negate(a), sharding={replicated}, metadata={op_name="n" source_line=3}, backend_config="c"
  ROOT c = f32[] negate(b), metadata={op_name="first"}, metadata={op_name="second"}
}
)");
  const InstrId b = m.FindInstruction("b");
  ASSERT_NE(b, kNoId);
  EXPECT_EQ(m.attributes(b).size(), 2u);
  EXPECT_EQ(m.instr(b).elided_metadata_at, 1);
  EXPECT_EQ(m.attribute(b, "metadata"), "{op_name=\"n\" source_line=3}");
  // The shared text's fields point into the module's copy, not the input.
  const OpMetadata& shared = m.metadata_of(b);
  EXPECT_EQ(shared.op_name, "n");
  EXPECT_GE(shared.op_name.data(), shared.text.data());
  EXPECT_LE(shared.op_name.data() + shared.op_name.size(), shared.text.data() + shared.text.size());
  EXPECT_EQ(PrintInstruction(m, b),
            "b = f32[] negate(a), sharding={replicated}, metadata={op_name=\"n\" source_line=3}, "
            "backend_config=\"c\"");
  const InstrId c = m.FindInstruction("c");
  EXPECT_EQ(m.metadata_of(c).op_name, "second");
  EXPECT_EQ(PrintInstruction(m, c),
            "ROOT c = f32[] negate(b), metadata={op_name=\"first\"}, metadata={op_name=\"second\"}");
  EXPECT_EQ(PrintInstruction(m, m.FindInstruction("a")),
            "a = f32[] parameter(0), metadata={op_name=\"p\"}");
}

// Diagnostics are user-facing: pin them word for word, caret included.
// A caller whose output or operands do not match the computation it calls
// (the analysis walks one into the other by index).
TEST(TextParserErrorTest, CallerUnlikeItsComputation) {
  const std::string one_leaf =
      "HloModule m\nf (p: f32[]) -> (f32[]) {\n  p = f32[] parameter(0)\n"
      "  ROOT t = (f32[]) tuple(p)\n}\n";
  EXPECT_THAT(ParseError(one_leaf +
                         "ENTRY e (a: f32[]) -> (f32[], f32[]) {\n  a = f32[] parameter(0)\n"
                         "  ROOT x = (f32[], f32[]) call(a), to_apply=f\n}\n"),
              ::testing::StartsWith("test.hlo:8:3: error: call's shape (f32[], f32[]) does not "
                                    "nest like the root of its computation 'f', (f32[])\n"));
  EXPECT_THAT(ParseError(one_leaf +
                         "ENTRY e (a: f32[]) -> (f32[]) {\n  a = f32[] parameter(0)\n"
                         "  ROOT x = (f32[]) call(a, a), to_apply=f\n}\n"),
              ::testing::StartsWith("test.hlo:8:3: error: call has 2 operand(s), but its "
                                    "computation 'f' has 1 parameter(s)\n"));
  EXPECT_THAT(
      ParseError("HloModule m\nb (p: (f32[], f32[])) -> (f32[]) {\n"
                 "  p = (f32[], f32[]) parameter(0)\n  g = f32[] get-tuple-element(p), index=0\n"
                 "  ROOT t = (f32[]) tuple(g)\n}\n"
                 "c (p: (f32[], f32[])) -> pred[] {\n  p = (f32[], f32[]) parameter(0)\n"
                 "  ROOT k = pred[] constant(false)\n}\n"
                 "ENTRY e (a: f32[]) -> (f32[], f32[]) {\n  a = f32[] parameter(0)\n"
                 "  t0 = (f32[], f32[]) tuple(a, a)\n"
                 "  ROOT w = (f32[], f32[]) while(t0), condition=c, body=b\n}\n"),
      ::testing::StartsWith("test.hlo:14:3: error: while's shape (f32[], f32[]) does not nest "
                            "like the root of its body 'b', (f32[])\n"));
  EXPECT_THAT(
      ParseError(one_leaf +
                 "g (p: f32[]) -> (f32[], f32[]) {\n  p = f32[] parameter(0)\n"
                 "  ROOT t = (f32[], f32[]) tuple(p, p)\n}\n"
                 "ENTRY e (a: f32[], i: s32[]) -> (f32[], f32[]) {\n  a = f32[] parameter(0)\n"
                 "  i = s32[] parameter(1)\n"
                 "  ROOT x = (f32[], f32[]) conditional(i, a, a), branch_computations={f, g}\n}\n"),
      ::testing::StartsWith("test.hlo:13:3: error: conditional's shape (f32[], f32[]) does not "
                            "nest like the root of its branch 'f', (f32[])\n"));
  const std::string scalar_branches =
      "HloModule m\nb0 (p: f32[]) -> f32[] {\n  ROOT p = f32[] parameter(0)\n}\n"
      "b1 (p: f32[], q: f32[]) -> f32[] {\n  q = f32[] parameter(1)\n"
      "  ROOT p = f32[] parameter(0)\n}\n"
      "ENTRY e (a: f32[], i: s32[]) -> f32[] {\n  a = f32[] parameter(0)\n"
      "  i = s32[] parameter(1)\n";
  EXPECT_THAT(ParseError(scalar_branches +
                         "  ROOT x = f32[] conditional(i, a), branch_computations={b0, b0, b0}\n}\n"),
              ::testing::StartsWith("test.hlo:12:3: error: conditional has 2 operand(s) for 3 "
                                    "branch(es); it takes the branch index and one per branch\n"));
  EXPECT_THAT(ParseError(scalar_branches +
                         "  ROOT x = f32[] conditional(i, a, a), branch_computations={b0, b1}\n}\n"),
              ::testing::StartsWith("test.hlo:12:3: error: conditional's branch 'b1' has 2 "
                                    "parameter(s); a branch takes one\n"));
}

TEST(TextParserErrorTest, UndefinedOperand) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT a = f32[] add(x, x)\n}\n"),
            "test.hlo:3:22: error: use of undefined instruction 'x'\n"
            "  ROOT a = f32[] add(x, x)\n"
            "                     ^");
}

TEST(TextParserErrorTest, DuplicateName) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n"),
            "test.hlo:3:3: error: instruction 'a' is already defined in this computation\n"
            "  a = f32[] parameter(1)\n"
            "  ^");
}

TEST(TextParserErrorTest, UnknownElementType) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT a = f33[2] parameter(0)\n}\n"),
            "test.hlo:2:12: error: unknown element type 'f33'\n"
            "  ROOT a = f33[2] parameter(0)\n"
            "           ^");
}

TEST(TextParserErrorTest, MissingClosingBrace) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT a = f32[2] parameter(0)\n"),
            "test.hlo:1:1: error: computation is missing its closing '}'\n"
            "ENTRY e {\n"
            "^");
}

TEST(TextParserErrorTest, ByteSizeOverflow) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT a = f64[2147483648,2147483648] parameter(0)\n}\n"),
            "test.hlo:2:12: error: invalid shape: shape's byte size overflows 64 bits\n"
            "  ROOT a = f64[2147483648,2147483648] parameter(0)\n"
            "           ^");
}

TEST(TextParserErrorTest, NegativeDimension) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT a = f32[-3] parameter(0)\n}\n"),
            "test.hlo:2:16: error: negative dimension size -3\n"
            "  ROOT a = f32[-3] parameter(0)\n"
            "               ^");
}

TEST(TextParserErrorTest, InvalidLayout) {
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT a = f32[2,3]{0,0} parameter(0)\n}\n"),
            "test.hlo:2:12: error: invalid shape: layout minor_to_major is not a "
            "permutation of 0..1\n"
            "  ROOT a = f32[2,3]{0,0} parameter(0)\n"
            "           ^");
}

TEST(TextParserErrorTest, EmptyFile) {
  EXPECT_EQ(ParseError("  \n"),
            "test.hlo:1:1: error: expected an HLO module, found an empty file\n"
            "  \n"
            "^");
}

TEST(TextParserTest, ScanOpcode) {
  // XLA 2026's scan: inputs, then carries (num_carries of them); to_apply
  // runs once per step of the scanned dimension.
  Module m = ParseOne(R"(
HloModule scan_module

%combine (x: f32[], carry: f32[]) -> (f32[], f32[]) {
  %x = f32[] parameter(0)
  %carry = f32[] parameter(1)
  %sum = f32[] add(%x, %carry)
  ROOT %t = (f32[], f32[]) tuple(%sum, %sum)
}

ENTRY %main (xs: f32[8]) -> (f32[8], f32[]) {
  %xs = f32[8]{0} parameter(0)
  %init = f32[] constant(0)
  ROOT %s = (f32[8]{0}, f32[]) scan(%xs, %init), dimensions={0}, num_carries=1, is_reverse=false, is_associative=true, to_apply=%combine
}
)");
  EXPECT_EQ(m.name, "scan_module");
  const InstrId s = m.FindInstruction("s");
  ASSERT_NE(s, kNoId);
  EXPECT_EQ(m.instr(s).opcode, Opcode::kScan);
  EXPECT_EQ(OpcodeName(Opcode::kScan), "scan");
  EXPECT_EQ(m.opcode_text(s), "scan");
  EXPECT_EQ(m.operands(s).size(), 2u);
  EXPECT_EQ(m.operands(s)[0], m.FindInstruction("xs"));
  const CompId combine = m.FindComputation("combine");
  EXPECT_EQ(m.callee(s, CallRole::kToApply), combine);
  EXPECT_FALSE(m.comp(combine).is_fusion);
  EXPECT_THAT(m.dimensions(s), ElementsAre(0));
  EXPECT_EQ(m.attribute(s, "num_carries"), "1");
  EXPECT_EQ(m.attribute(s, "is_associative"), "true");
  EXPECT_TRUE(m.shape_of(s).is_tuple());
  EXPECT_EQ(m.comp(m.entry).root, s);
}

TEST(TextParserTest, ScanNeedsToApply) {
  EXPECT_THAT(ParseError("ENTRY e {\n  p = f32[8] parameter(0)\n  c = f32[] constant(0)\n"
                         "  ROOT s = f32[] scan(p, c), dimensions={0}, num_carries=1\n}\n"),
              ::testing::HasSubstr("test.hlo:4:3: error: scan needs to_apply="));
}

TEST(TextParserTest, CustomCallLiteralAttribute) {
  // XLA prints a custom-call's literal with its shape: a scalar's value
  // follows the shape after a space.
  Module m = ParseOne(R"(
HloModule m

ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} custom-call(p), custom_call_target="foo", literal=f32[] 0.1
  b = f32[4]{0} custom-call(a), custom_call_target="bar", literal=s32[2]{0} {1, 2}, api_version=API_VERSION_STATUS_RETURNING
  c = f32[4]{0} custom-call(b), literal=f32[] -inf, custom_call_target="baz"
  ROOT d = f32[4]{0} custom-call(c), custom_call_target="qux", literal=(f32[], s32[]) (1, 2)
}
)");
  const InstrId a = m.FindInstruction("a");
  const InstrId b = m.FindInstruction("b");
  const InstrId c = m.FindInstruction("c");
  const InstrId d = m.FindInstruction("d");
  EXPECT_EQ(m.instr(a).opcode, Opcode::kCustomCall);
  EXPECT_EQ(m.custom_call_target(a), "foo");
  EXPECT_EQ(m.attribute(a, "literal"), "f32[] 0.1");
  EXPECT_EQ(m.operands(a).size(), 1u);
  EXPECT_EQ(m.custom_call_target(b), "bar");
  EXPECT_EQ(m.attribute(b, "literal"), "s32[2]{0} {1, 2}");
  EXPECT_EQ(m.attribute(b, "api_version"), "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(m.attribute(c, "literal"), "f32[] -inf");
  EXPECT_EQ(m.custom_call_target(c), "baz");
  EXPECT_EQ(m.attribute(d, "literal"), "(f32[], s32[]) (1, 2)");
  EXPECT_EQ(m.comp(m.entry).root, d);
}

TEST(TextParserTest, CustomCallLiteralWithoutValue) {
  EXPECT_THAT(ParseError("ENTRY e {\n  ROOT a = f32[] custom-call(), custom_call_target=\"f\", "
                         "literal=f32[], api_version=API_VERSION_ORIGINAL\n}\n"),
              ::testing::HasSubstr("test.hlo:2:70: error: expected the literal's value after "
                                   "its shape"));
}

TEST(TextParserTest, ModuleNameWithTrailingColon) {
  // XLA's lexer reads "name:" as one name token, so XLA parses these headers
  // (its printer writes no colon; 2017 texts and hand-written tests do).
  Module m = ParseOne("HloModule colon_module:\n\n"
                      "ENTRY e {\n  ROOT p = f32[2]{0} parameter(0)\n}\n");
  EXPECT_EQ(m.name, "colon_module");
  EXPECT_EQ(m.computations.size(), 1u);

  Module with_layout = ParseOne(
      "HloModule jit_g:, is_scheduled=true, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
      "ENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n");
  EXPECT_EQ(with_layout.name, "jit_g");
  EXPECT_TRUE(with_layout.is_scheduled);
  EXPECT_EQ(with_layout.entry_computation_layout, "{(f32[2]{0})->f32[2]{0}}");
  EXPECT_EQ(with_layout.instr(with_layout.comp(with_layout.entry).root).opcode, Opcode::kNegate);
}

TEST(TextParserErrorTest, TupleNestingLimit) {
  std::string deep = "ENTRY e {\n  ROOT a = ";
  for (int i = 0; i < 2000; ++i) deep += "(";
  deep += "f32[]";
  for (int i = 0; i < 2000; ++i) deep += ")";
  deep += " parameter(0)\n}\n";
  EXPECT_THAT(ParseError(deep), ::testing::HasSubstr("error: nesting deeper than 1000 levels"));
}

TEST(VerifierTest, CallCycle) {
  EXPECT_EQ(ParseError("HloModule m\n"
                       "a {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=b\n}\n"
                       "b {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n"
                       "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=a\n}\n"),
            "test.hlo:8:3: error: call cycle: computation 'a' is called while it is being "
            "executed\n"
            "  ROOT c = f32[] call(p), to_apply=a\n"
            "  ^");
}

TEST(VerifierTest, OperandCycle) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] add(b, b)\n  ROOT b = f32[] add(a, a)\n}\n"),
            "test.hlo:2:3: error: instruction 'a' depends on itself through its operands\n"
            "  a = f32[] add(b, b)\n"
            "  ^");
}

TEST(VerifierTest, TupleIndexOutOfRange) {
  EXPECT_EQ(ParseError("ENTRY e {\n  p = (f32[], f32[]) parameter(0)\n"
                       "  ROOT g = f32[] get-tuple-element(p), index=2\n}\n"),
            "test.hlo:3:3: error: tuple index 2 is out of range for a 2-element tuple\n"
            "  ROOT g = f32[] get-tuple-element(p), index=2\n"
            "  ^");
}
// clang-format on

// ---- large computations --------------------------------------------------
// A computation of 3000 instructions: past the first 1024, names enter the
// name map only at the end of the body (the parser's deferred names).
// Instruction a<k> adds a<k-2> and a<k-1100>, so operands name recent
// instructions, far ones and (for k <= 1100) the parameter. `edit` changes
// lines: lines[i] defines a<i-1>.
std::string LargeComputation(const std::function<void(std::vector<std::string>&)>& edit = {}) {
  std::vector<std::string> lines = {"  p0 = f32[] parameter(0)", "  a0 = f32[] add(p0, p0)",
                                    "  a1 = f32[] add(a0, p0)"};
  for (int k = 2; k < 3000; ++k) {
    lines.push_back(absl::StrCat("  a", k, " = f32[] add(a", k - 2, ", ",
                                 k > 1100 ? absl::StrCat("a", k - 1100) : "p0", ")"));
  }
  if (edit) edit(lines);
  lines.back() = "  ROOT" + lines.back().substr(1);
  return absl::StrCat("HloModule m\n\nENTRY e {\n", absl::StrJoin(lines, "\n"), "\n}\n");
}

TEST(TextParserLargeComputationTest, OperandsResolveAsInSmallOnes) {
  auto modules = ParseHloString(LargeComputation([](std::vector<std::string>& lines) {
    lines[2000] = "  a1999 = f32[] add(a2500, a1997)";  // a forward reference
  }), "test.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status();
  const Module& m = modules->front();
  ASSERT_TRUE(VerifyModule(m).ok());
  for (const int k : {2, 1100, 1101, 1500, 2999}) {
    const InstrId id = m.FindInstruction(absl::StrCat("a", k));
    ASSERT_NE(id, kNoId);
    EXPECT_EQ(m.instr(m.operands(id)[0]).name, absl::StrCat("a", k - 2)) << k;
    EXPECT_EQ(m.instr(m.operands(id)[1]).name, k > 1100 ? absl::StrCat("a", k - 1100) : "p0");
  }
  const InstrId forward = m.FindInstruction("a1999");
  EXPECT_EQ(m.instr(m.operands(forward)[0]).name, "a2500");
}

TEST(TextParserLargeComputationTest, DuplicateNameIsTheFirstError) {
  // The duplicate, then a later syntax error: the duplicate is reported.
  EXPECT_THAT(ParseError(LargeComputation([](std::vector<std::string>& lines) {
                lines[2000] = "  a1500 = f32[] add(a1998, p0)";
                lines[2500] = "  a2499 = f32[] add(a2497 p0)";
              })),
              ::testing::StartsWith("test.hlo:2004:3: error: instruction 'a1500' is already "
                                    "defined in this computation\n"));
  // A duplicate name on an instruction whose operands fail to parse.
  EXPECT_THAT(ParseError(LargeComputation([](std::vector<std::string>& lines) {
                lines[2000] = "  a5 = f32[] add(a1998,, p0)";
              })),
              ::testing::StartsWith("test.hlo:2004:3: error: instruction 'a5' is already "
                                    "defined in this computation\n"));
  // An error before the duplicate comes first.
  EXPECT_THAT(ParseError(LargeComputation([](std::vector<std::string>& lines) {
                lines[2000] = "  a1999 = f32[] add(zz, p0)";
                lines[2500] = "  a7 = f32[] add(a2498, p0)";
              })),
              ::testing::StartsWith("test.hlo:2504:3: error: instruction 'a7' is already "
                                    "defined in this computation\n"));
}

TEST(TextParserLargeComputationTest, CompactOperandsPastTheDeferredNames) {
  auto modules = ParseHloString(LargeComputation([](std::vector<std::string>& lines) {
    lines[1500] = "  a1499 = (f32[], f32[]) tuple(a1497, p0)";
    lines[1501] = "  a1500 = f32[] add(a1499#0, a1499#1)";
    lines[2000] = "  a1999 = f32[] add(a1499#1, a1997)";
    lines[2500] = "  a2499 = f32[] add(a1500, a2497)";
  }), "test.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status();
  const Module& m = modules->front();
  const InstrId user = m.FindInstruction("a1999");
  EXPECT_EQ(m.instr(m.operands(user)[0]).name, "a1499#1");
  EXPECT_EQ(m.instr(m.operands(m.FindInstruction("a2499"))[0]).name, "a1500");
  EXPECT_THAT(ParseError(LargeComputation([](std::vector<std::string>& lines) {
                lines[1500] = "  a1499 = (f32[], f32[]) tuple(a1497, p0)";
                lines[2000] = "  a1999 = f32[] add(a1499#1, a1997)";
                lines[2500] = "  a100 = f32[] add(a2498, p0)";
              })),
              ::testing::StartsWith("test.hlo:2504:3: error: instruction 'a100' is already "
                                    "defined in this computation\n"));
}

// Names copied once: OwnNames copies a range's names out of the input,
// and OwnNamesOutsideFusions then copies only the names still viewing it,
// skipping fused computations.
TEST(TextParserTest, NamesAreCopiedOutOfTheInputOnce) {
  auto parsed = ParseHloString(R"(HloModule m
%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p)
}
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused
  ROOT %out = f32[4]{0} add(%f, %a)
}
)", "m.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Module& m = parsed->front();
  const absl::string_view input = m.source->data();
  auto views_input = [&](InstrId i) {
    const char* name = m.instr(i).name.data();
    return name >= input.data() && name < input.data() + input.size();
  };
  const InstrId a = m.FindInstruction("a"), f = m.FindInstruction("f");
  const InstrId out = m.FindInstruction("out"), p = m.FindInstruction("p");
  ASSERT_TRUE(views_input(a) && views_input(f) && views_input(out) && views_input(p));
  m.OwnNames(a, f + 1);
  EXPECT_FALSE(views_input(a));
  EXPECT_FALSE(views_input(f));
  EXPECT_TRUE(views_input(out));
  const char* copied_a = m.instr(a).name.data();
  m.OwnNamesOutsideFusions();
  EXPECT_EQ(m.instr(a).name.data(), copied_a);  // not copied again
  EXPECT_FALSE(views_input(out));
  EXPECT_TRUE(views_input(p));  // fused: reports do not quote it
  EXPECT_EQ(m.instr(a).name, "a");
  EXPECT_EQ(m.instr(f).name, "f");
  EXPECT_EQ(m.instr(out).name, "out");
}

// The backend is guessed from every custom call's target long after a
// large module's text has been given back: the targets must not view it.
TEST(TextParserTest, CustomCallTargetsAreCopiedOutOfTheInput) {
  auto parsed = ParseHloString(R"(HloModule m
%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %c = f32[4]{0} custom-call(%p), custom_call_target="__cublas$gemm"
}
ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused
  ROOT %s = f32[4]{0} custom-call(%f), custom_call_target=Sharding
}
)", "m.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const Module& m = parsed->front();
  const absl::string_view input = m.source->data();
  for (const auto& [name, target] : {std::pair<const char*, const char*>{"c", "__cublas$gemm"},
                                     {"s", "Sharding"}}) {
    const absl::string_view written = m.custom_call_target(m.FindInstruction(name));
    EXPECT_EQ(written, target);
    EXPECT_TRUE(written.data() < input.data() || written.data() >= input.data() + input.size())
        << name;
  }
}

}  // namespace
}  // namespace hlomem::hlo
