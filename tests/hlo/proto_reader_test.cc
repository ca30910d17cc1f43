#include "lib/hlo/proto_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "lib/dump/xla_buffer_assignment.h"
#include "lib/dump/xla_buffer_assignment_proto.h"
#include "lib/hlo/module_diff.h"
#include "lib/hlo/text_parser.h"
#include "proto/xla.pb.h"

namespace hlomem::hlo {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Helpers that build protos by hand.

void SetArray(xla::ShapeProto* shape, xla::PrimitiveType type, std::vector<int64_t> dims,
              bool with_layout = true) {
  shape->set_element_type(type);
  for (int64_t d : dims) shape->add_dimensions(d);
  if (with_layout) {
    xla::LayoutProto* layout = shape->mutable_layout();
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      layout->add_minor_to_major(d);
    }
    layout->set_tail_padding_alignment_in_elements(1);
  }
}

xla::HloInstructionProto* AddInstr(xla::HloComputationProto* c, const std::string& name,
                                   const std::string& opcode, int64_t id,
                                   std::vector<int64_t> operands = {}) {
  xla::HloInstructionProto* i = c->add_instructions();
  i->set_name(name);
  i->set_opcode(opcode);
  i->set_id(id);
  for (int64_t op : operands) i->add_operand_ids(op);
  SetArray(i->mutable_shape(), xla::F32, {4});
  return i;
}

// A scheduled module with a while loop, a fusion, a tuple and metadata:
//   body (id 1), cond (id 2), fused (id 3), main (id 4).
xla::HloModuleProto LoopModule() {
  xla::HloModuleProto m;
  m.set_name("loop_module");
  m.set_entry_computation_name("main");
  m.set_entry_computation_id(4);

  auto tuple_shape = [](xla::ShapeProto* s) {
    s->set_element_type(xla::TUPLE);
    SetArray(s->add_tuple_shapes(), xla::S32, {});
    SetArray(s->add_tuple_shapes(), xla::F32, {4});
  };

  xla::HloComputationProto* body = m.add_computations();
  body->set_name("body");
  body->set_id(1);
  {
    auto* p = AddInstr(body, "p", "parameter", 10);
    p->clear_shape();
    tuple_shape(p->mutable_shape());
    auto* gte = AddInstr(body, "gte", "get-tuple-element", 11, {10});
    gte->set_tuple_index(1);
    auto* i0 = AddInstr(body, "i0", "get-tuple-element", 12, {10});
    i0->clear_shape();
    SetArray(i0->mutable_shape(), xla::S32, {});
    auto* t = AddInstr(body, "t", "tuple", 13, {12, 11});
    t->clear_shape();
    tuple_shape(t->mutable_shape());
    body->set_root_id(13);
  }
  xla::HloComputationProto* cond = m.add_computations();
  cond->set_name("cond");
  cond->set_id(2);
  {
    auto* p = AddInstr(cond, "p.1", "parameter", 20);
    p->clear_shape();
    tuple_shape(p->mutable_shape());
    auto* c = AddInstr(cond, "c", "constant", 21);
    c->clear_shape();
    SetArray(c->mutable_shape(), xla::PRED, {});
    cond->set_root_id(21);
  }
  xla::HloComputationProto* fused = m.add_computations();
  fused->set_name("fused");
  fused->set_id(3);
  {
    AddInstr(fused, "fp", "parameter", 30);
    AddInstr(fused, "neg", "negate", 31, {30});
    fused->set_root_id(31);
  }
  xla::HloComputationProto* main = m.add_computations();
  main->set_name("main");
  main->set_id(4);
  {
    AddInstr(main, "x", "parameter", 40)->set_parameter_number(0);
    auto* zero = AddInstr(main, "zero", "constant", 41);
    zero->clear_shape();
    SetArray(zero->mutable_shape(), xla::S32, {});
    auto* f = AddInstr(main, "fusion", "fusion", 42, {40});
    f->set_fusion_kind("kLoop");
    f->add_called_computation_ids(3);
    f->mutable_metadata()->set_op_type("neg");
    f->mutable_metadata()->set_op_name("jit(f)/neg");
    f->mutable_metadata()->set_source_file("f.py");
    f->mutable_metadata()->set_source_line(7);
    auto* t = AddInstr(main, "init", "tuple", 43, {41, 42});
    t->clear_shape();
    tuple_shape(t->mutable_shape());
    auto* w = AddInstr(main, "while", "while", 44, {43});
    w->clear_shape();
    tuple_shape(w->mutable_shape());
    w->add_called_computation_ids(1);  // body
    w->add_called_computation_ids(2);  // condition
    auto* r = AddInstr(main, "result", "get-tuple-element", 45, {44});
    r->set_tuple_index(1);
    r->add_control_predecessor_ids(41);
    main->set_root_id(45);
  }
  // Schedule main differently from proto order: zero after fusion.
  auto& sequences = *m.mutable_schedule()->mutable_sequences();
  for (int64_t id : {40, 42, 41, 43, 44, 45}) sequences[4].add_instruction_ids(id);
  for (int64_t id : {10, 11, 12, 13}) sequences[1].add_instruction_ids(id);
  for (int64_t id : {20, 21}) sequences[2].add_instruction_ids(id);

  auto* alias = m.mutable_input_output_alias()->add_entries();
  alias->set_parameter_number(0);
  alias->set_kind(xla::MAY_ALIAS);
  m.mutable_buffer_donor()->add_entries()->set_parameter_number(0);
  return m;
}

std::shared_ptr<const FileContents> Bytes(const std::string& name, std::string bytes) {
  return FileContents::FromString(name, std::move(bytes));
}

std::string Serialize(const google::protobuf::Message& message) {
  std::string out;
  EXPECT_TRUE(message.SerializeToString(&out));
  return out;
}

// ---------------------------------------------------------------------------
// Building the model.

TEST(ProtoReaderTest, BuildsModuleFromHloModuleProto) {
  auto result = ReadHloProto(Bytes("m.pb", Serialize(LoopModule())));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->kind, ProtoKind::kHloModuleProto);
  EXPECT_FALSE(result->has_buffer_assignment());
  const Module& m = result->module;
  EXPECT_EQ(m.name, "loop_module");
  EXPECT_TRUE(m.is_scheduled);
  EXPECT_EQ(m.path, "m.pb");
  ASSERT_EQ(m.computations.size(), 4u);
  EXPECT_EQ(m.entry, 3u);
  EXPECT_TRUE(m.comp(3).is_entry);
  EXPECT_TRUE(m.comp(2).is_fusion);

  // Schedule order, not proto order.
  std::vector<absl::string_view> names;
  for (InstrId id : m.instructions_of(3)) names.push_back(m.instr(id).name);
  EXPECT_THAT(names, ElementsAre("x", "fusion", "zero", "init", "while", "result"));

  const InstrId w = m.FindInstruction("while");
  ASSERT_NE(w, kNoId);
  EXPECT_EQ(m.instr(w).opcode, Opcode::kWhile);
  EXPECT_EQ(m.callee(w, CallRole::kBody), m.FindComputation("body"));
  EXPECT_EQ(m.callee(w, CallRole::kCondition), m.FindComputation("cond"));
  EXPECT_EQ(m.shapes.ToString(m.instr(w).shape), "(s32[], f32[4]{0})");
  EXPECT_EQ(m.attribute(w, "body"), "body");
  EXPECT_EQ(m.attribute(w, "condition"), "cond");

  const InstrId f = m.FindInstruction("fusion");
  EXPECT_EQ(m.instr(f).fusion_kind, FusionKind::kLoop);
  EXPECT_EQ(m.callee(f, CallRole::kCalls), m.FindComputation("fused"));
  EXPECT_EQ(m.attribute(f, "kind"), "kLoop");
  EXPECT_EQ(m.metadata_of(f).op_name, "jit(f)/neg");
  EXPECT_EQ(m.metadata_of(f).source_line, 7);
  EXPECT_EQ(m.SourceOf(f).file, "f.py");
  EXPECT_EQ(m.attribute(f, "metadata"),
            "{op_type=\"neg\" op_name=\"jit(f)/neg\" source_file=\"f.py\" source_line=7}");
  EXPECT_EQ(m.metadata[0].op_name, "");

  const InstrId r = m.FindInstruction("result");
  EXPECT_TRUE(m.instr(r).is_root);
  EXPECT_EQ(m.comp(3).root, r);
  EXPECT_EQ(m.instr(r).tuple_index(), 1);
  EXPECT_EQ(m.attribute(r, "index"), "1");
  ASSERT_EQ(m.control_predecessors(r).size(), 1u);
  EXPECT_EQ(m.instr(m.control_predecessors(r)[0]).name, "zero");
  EXPECT_EQ(m.attribute(r, "control-predecessors"), "{zero}");
  EXPECT_EQ(m.instr(r).source_offset(), 13u);  // 4 + 2 + 2 before main, 6th in main

  const InstrId x = m.FindInstruction("x");
  EXPECT_EQ(m.instr(x).parameter_number(), 0);
  EXPECT_EQ(m.parameters(3).size(), 1u);
  EXPECT_EQ(m.instr(m.FindInstruction("zero")).parameter_number(), -1);
  // Scalars carry no layout, like the text parser's f32[].
  EXPECT_FALSE(m.shape_of(m.FindInstruction("zero")).layout.has_value());
  EXPECT_EQ(m.shape_of(x).layout->tail_padding_alignment, 0);

  ASSERT_EQ(m.input_output_aliases.size(), 1u);
  EXPECT_EQ(m.input_output_aliases[0].kind, AliasKind::kMayAlias);
  ASSERT_EQ(m.buffer_donors.size(), 1u);

  // Proto ids map to the model's ids.
  EXPECT_EQ(result->instruction_ids.at(45), r);
  EXPECT_EQ(result->instruction_ids.at(40), x);
}

TEST(ProtoReaderTest, HloProtoAndSnapshotCarryTheBufferAssignment) {
  xla::HloProto hlo;
  *hlo.mutable_hlo_module() = LoopModule();
  auto* buffer = hlo.mutable_buffer_assignment()->add_logical_buffers();
  buffer->set_id(7);
  buffer->set_size(16);
  buffer->mutable_defined_at()->set_instruction_id(42);
  auto* allocation = hlo.mutable_buffer_assignment()->add_buffer_allocations();
  allocation->set_size(16);
  allocation->set_maybe_live_out(true);
  auto* assigned = allocation->add_assigned();
  assigned->set_logical_buffer_id(7);
  assigned->set_size(16);

  auto from_hlo = ReadHloProto(Bytes("h.pb", Serialize(hlo)));
  ASSERT_TRUE(from_hlo.ok()) << from_hlo.status();
  EXPECT_EQ(from_hlo->kind, ProtoKind::kHloProto);
  ASSERT_TRUE(from_hlo->has_buffer_assignment());
  EXPECT_EQ(from_hlo->buffer_assignment->logical_buffers_size(), 1);

  xla::HloSnapshot snapshot;
  *snapshot.mutable_hlo() = hlo;
  auto from_snapshot = ReadHloProto(Bytes("s.pb", Serialize(snapshot)));
  ASSERT_TRUE(from_snapshot.ok()) << from_snapshot.status();
  EXPECT_EQ(from_snapshot->kind, ProtoKind::kHloSnapshot);
  EXPECT_TRUE(from_snapshot->has_buffer_assignment());
  EXPECT_EQ(DiffModules(from_hlo->module, from_snapshot->module), "");

  auto converted = dump::XlaBufferAssignmentFromProto(*from_hlo);
  ASSERT_TRUE(converted.ok()) << converted.status();
  ASSERT_EQ(converted->allocations.size(), 1u);
  EXPECT_EQ(converted->total_bytes, 16);
  ASSERT_EQ(converted->allocations[0].values.size(), 1u);
  EXPECT_EQ(converted->allocations[0].values[0].instruction, "fusion");
  EXPECT_EQ(converted->allocations[0].values[0].shape, "f32[4]{0}");
}

TEST(ProtoReaderTest, TextFormatKinds) {
  std::string module_text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(LoopModule(), &module_text));
  auto bare = ReadHloProtoText(Bytes("m.pbtxt", module_text));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->kind, ProtoKind::kHloModuleProto);

  auto wrapped = ReadHloProtoText(
      Bytes("h.pbtxt", absl::StrCat("hlo_module {\n", module_text,
                                    "\n  some_future_field: 3\n}\n"
                                    "future_message { a: 1 }\n")));
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_EQ(wrapped->kind, ProtoKind::kHloProto);
  EXPECT_EQ(DiffModules(bare->module, wrapped->module), "");

  auto unoptimized = ReadHloProtoText(Bytes(
      "u.pbtxt", absl::StrCat("hlo_module {\n", module_text, "}\npartitions { arguments {} }\n")));
  ASSERT_TRUE(unoptimized.ok()) << unoptimized.status();
  EXPECT_EQ(unoptimized->kind, ProtoKind::kHloUnoptimizedSnapshot);
}

TEST(ProtoReaderTest, ShapesAndLayouts) {
  xla::HloModuleProto m = LoopModule();
  xla::HloInstructionProto* x = m.mutable_computations(3)->mutable_instructions(0);
  x->clear_shape();
  xla::ShapeProto* s = x->mutable_shape();
  s->set_element_type(xla::BF16);
  s->add_dimensions(16);
  s->add_dimensions(std::numeric_limits<int64_t>::min());  // unbounded
  s->add_dimensions(8);
  s->add_is_dynamic_dimension(true);
  s->add_is_dynamic_dimension(true);
  s->add_is_dynamic_dimension(false);
  xla::LayoutProto* layout = s->mutable_layout();
  for (int64_t d : {2, 1, 0}) layout->add_minor_to_major(d);
  layout->add_tiles()->add_dimensions(8);
  layout->mutable_tiles(0)->add_dimensions(128);
  layout->add_tiles()->add_dimensions(2);
  layout->mutable_tiles(1)->add_dimensions(1);
  layout->set_memory_space(1);
  layout->set_tail_padding_alignment_in_elements(4);
  auto result = ModuleFromProto(m, "m.pb");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->shapes.ToString(result->instr(result->FindInstruction("x")).shape),
            "bf16[<=16,?,8]{2,1,0:T(8,128)(2,1)L(4)S(1)}");
}

// ---------------------------------------------------------------------------
// Errors.

TEST(ProtoReaderTest, GarbageIsAnError) {
  auto result = ReadHloProto(Bytes("junk.pb", "this is not a protobuf \xff\xff\xff"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "junk.pb: error: not an XLA HloProto, HloModuleProto or HloSnapshot "
            "(binary protobuf)");
  auto empty = ReadHloProto(Bytes("empty.pb", ""));
  EXPECT_FALSE(empty.ok());
  auto text = ReadHloProtoText(Bytes("junk.pbtxt", "hlo_module { name: \"x\" "));
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("protobuf text format"));
}

TEST(ProtoReaderTest, TruncatedProtoIsAnError) {
  xla::HloProto hlo;
  *hlo.mutable_hlo_module() = LoopModule();
  const std::string bytes = Serialize(hlo);
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{1}}) {
    auto result = ReadHloProto(Bytes("cut.pb", bytes.substr(0, cut)));
    EXPECT_FALSE(result.ok()) << "cut at " << cut;
  }
}

TEST(ProtoReaderTest, RandomAndMutatedInputsNeverCrash) {
  std::mt19937 rng(1234);
  xla::HloProto hlo;
  *hlo.mutable_hlo_module() = LoopModule();
  const std::string valid = Serialize(hlo);
  int accepted = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    }
    auto result = ReadHloProto(Bytes("mutated.pb", bytes));
    if (result.ok()) ++accepted;
    std::string random(rng() % 256, '\0');
    for (char& c : random) c = static_cast<char>(rng() & 0xff);
    (void)ReadHloProto(Bytes("random.pb", random));
    (void)ReadHloProtoText(Bytes("random.pbtxt", random));
  }
  // Most single-byte corruptions of names or sizes still parse.
  EXPECT_GT(accepted, 0);
}

TEST(ProtoReaderTest, UndefinedOperandId) {
  xla::HloModuleProto m = LoopModule();
  m.mutable_computations(3)->mutable_instructions(2)->set_operand_ids(0, 142);
  auto result = ReadHloProto(Bytes("bad.pb", Serialize(m)));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "bad.pb: error: computation 'main': instruction 'fusion': operand id 142 "
            "is not defined");
}

TEST(ProtoReaderTest, OtherStructuralErrors) {
  auto message = [](const xla::HloModuleProto& m) {
    auto result = ModuleFromProto(m, "bad.pb");
    return result.ok() ? std::string("ok") : std::string(result.status().message());
  };
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(3)->mutable_instructions(4)->set_called_computation_ids(1, 99);
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': instruction 'while': called "
              "computation id 99 is not defined");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(1)->set_root_id(77);
    EXPECT_EQ(message(m), "bad.pb: error: computation 'cond': root id 77 is not defined");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(2)->mutable_instructions(1)->set_id(30);
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'fused': instruction 'neg': duplicate "
              "instruction id 30");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(2)->set_id(1);
    EXPECT_EQ(message(m), "bad.pb: error: computation 'fused': duplicate computation id 1");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(3)->mutable_instructions(0)->mutable_shape()->set_element_type(
        static_cast<xla::PrimitiveType>(99));
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': instruction 'x': shape: invalid "
              "element type 99");
  }
  {
    // Parameter numbers and tuple indices are kept in 32 bits.
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(3)->mutable_instructions(0)->set_parameter_number(int64_t{1} << 31);
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': instruction 'x': parameter number "
              "2147483648 is too large");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(3)->mutable_instructions(5)->set_tuple_index(-(int64_t{1} << 40));
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': instruction 'result': tuple index "
              "-1099511627776 is too large");
  }
  {
    xla::HloModuleProto m = LoopModule();
    (*m.mutable_schedule()->mutable_sequences())[4].add_instruction_ids(31);
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': schedule names instruction id 31, "
              "which is not defined");
  }
  {
    xla::HloModuleProto m = LoopModule();
    m.mutable_computations(3)->mutable_instructions(0)->set_name("bad\nname");
    m.mutable_computations(3)->mutable_instructions(0)->add_operand_ids(5);
    EXPECT_EQ(message(m),
              "bad.pb: error: computation 'main': instruction 'bad\\nname': operand id 5 "
              "is not defined");
  }
}

TEST(ProtoReaderTest, DeepTupleNestingIsRefused) {
  xla::HloModuleProto m = LoopModule();
  xla::ShapeProto* s = m.mutable_computations(3)->mutable_instructions(0)->mutable_shape();
  s->Clear();
  for (int depth = 0; depth < 1100; ++depth) {
    s->set_element_type(xla::TUPLE);
    s = s->add_tuple_shapes();
  }
  SetArray(s, xla::F32, {1});
  auto result = ModuleFromProto(m, "deep.pb");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("shape nests tuples more than 1000 deep"));
  // The binary parser stops far earlier (protobuf's recursion limit).
  EXPECT_FALSE(ReadHloProto(Bytes("deep.pb", Serialize(m))).ok());
}

// ---------------------------------------------------------------------------
// Shared corpus files.

std::string CorpusDir() { return HLOMEM_CORPUS_DIR; }

TEST(ProtoReaderCorpusTest, TinyHloProtoBinary) {
  const std::string path = CorpusDir() + "/xla-terryysun/hlo_opt_hlo_protobinary.pb";
  if (!fs::exists(path)) GTEST_SKIP() << "corpus file missing: " << path;
  auto file = FileContents::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto result = ReadHloProto(*file);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->kind, ProtoKind::kHloProto);
  const Module& m = result->module;
  EXPECT_EQ(m.name, "module_mod1");
  ASSERT_EQ(m.computations.size(), 1u);
  EXPECT_EQ(m.comp(m.entry).name, "mod1");
  ASSERT_EQ(m.instructions.size(), 1u);
  EXPECT_EQ(m.instr(0).name, "a");
  EXPECT_EQ(m.instr(0).opcode, Opcode::kConstant);
  EXPECT_TRUE(m.instr(0).is_root);
  EXPECT_EQ(m.shapes.ToString(m.instr(0).shape), "s8[]");
  EXPECT_FALSE(m.is_scheduled);
  EXPECT_EQ(m.entry_computation_layout, "{()->s8[]}");
}

TEST(ProtoReaderCorpusTest, ShardedUnoptimizedSnapshotText) {
  const std::string path = CorpusDir() + "/xla-terryysun/sharded_unoptimized_hlo_snapshot.pbtxt";
  if (!fs::exists(path)) GTEST_SKIP() << "corpus file missing: " << path;
  auto file = FileContents::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto result = ReadHloProtoText(*file);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->kind, ProtoKind::kHloUnoptimizedSnapshot);
  const Module& m = result->module;
  EXPECT_EQ(m.name, "jit__lambda_");
  EXPECT_EQ(m.comp(m.entry).name, "main.5");
  std::vector<absl::string_view> names;
  for (InstrId id : m.instructions_of(m.entry)) names.push_back(m.instr(id).name);
  EXPECT_THAT(names, ElementsAre("Arg_0.1", "constant.2", "broadcast.3", "multiply.4"));
  const InstrId mul = m.FindInstruction("multiply.4");
  EXPECT_TRUE(m.instr(mul).is_root);
  ASSERT_EQ(m.operands(mul).size(), 2u);
  EXPECT_EQ(m.instr(m.operands(mul)[0]).name, "Arg_0.1");
  EXPECT_EQ(m.shapes.ToString(m.instr(mul).shape), "s64[8,1]{1,0}");
  EXPECT_EQ(m.metadata_of(mul).source_line, 3599);
  EXPECT_EQ(m.metadata_of(mul).stack_frame_id, 10);
  EXPECT_EQ(m.stack_frames.frames.size(), 10u);
  EXPECT_EQ(m.metadata_of(m.FindInstruction("Arg_0.1")).op_name, "x");
}

// ---------------------------------------------------------------------------
// Real dumps: testdata/jax/<case>/ hold the text and the .hlo.pb of the same
// after-optimizations module, and XLA's buffer-assignment text.

struct JaxCase {
  std::string name;
  std::string pb;    // *.cpu_after_optimizations.hlo.pb
  std::string text;  // *.cpu_after_optimizations.txt
  std::string buffer_assignment;  // *.cpu_after_optimizations-buffer-assignment.txt
  std::string memory_analysis;    // memory_analysis.json
};

std::vector<JaxCase> FindJaxCases() {
  std::vector<JaxCase> cases;
  const fs::path root = fs::path(HLOMEM_TESTDATA_DIR) / "jax";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return cases;
  for (const auto& dir : fs::directory_iterator(root, ec)) {
    if (!dir.is_directory()) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const std::string name = f.filename().string();
      const std::string suffix = ".hlo.pb";
      if (!absl::EndsWith(name, "_after_optimizations" + suffix)) continue;
      const std::string stem = f.string().substr(0, f.string().size() - suffix.size());
      JaxCase c;
      c.name = dir.path().filename().string() + "/" + name;
      c.pb = f.string();
      c.text = stem + ".txt";
      c.buffer_assignment = stem + "-buffer-assignment.txt";
      c.memory_analysis = (dir.path() / "memory_analysis.json").string();
      cases.push_back(std::move(c));
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const JaxCase& a, const JaxCase& b) { return a.name < b.name; });
  return cases;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `"key": 123` from a flat JSON object; -1 when absent.
int64_t JsonInt(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  size_t pos = json.find(needle);
  if (pos == std::string::npos) return -1;
  return std::stoll(json.substr(pos + needle.size()));
}

// 2026 dumps print get-tuple-elements inline as `%producer#index`.
bool HasCompactGte(const std::string& text) {
  for (size_t pos = text.find('#'); pos != std::string::npos; pos = text.find('#', pos + 1)) {
    if (pos > 0 && pos + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[pos + 1])) &&
        (std::isalnum(static_cast<unsigned char>(text[pos - 1])) || text[pos - 1] == '_')) {
      return true;
    }
  }
  return false;
}

TEST(ProtoReaderJaxTest, TextAndProtoGiveTheSameModel) {
  const std::vector<JaxCase> cases = FindJaxCases();
  ASSERT_FALSE(cases.empty()) << "no testdata/jax/*/*after_optimizations.hlo.pb found";
  int compared = 0;
  for (const JaxCase& c : cases) {
    SCOPED_TRACE(c.name);
    if (!fs::exists(c.text)) continue;
    auto pb_file = FileContents::Open(c.pb);
    ASSERT_TRUE(pb_file.ok()) << pb_file.status();
    auto from_proto = ReadHloProto(*pb_file);
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    EXPECT_EQ(from_proto->kind, ProtoKind::kHloProto);
    auto text_file = FileContents::Open(c.text);
    ASSERT_TRUE(text_file.ok()) << text_file.status();
    auto from_text = ParseHloText(*text_file);
    if (!from_text.ok()) {
      // The text parser's own tests cover its failures; this test is about
      // the proto side.
      std::cerr << "note: skipping " << c.name << ": text does not parse: "
                << from_text.status().message() << "\n";
      continue;
    }
    ASSERT_EQ(from_text->size(), 1u);
    DiffOptions options;
    options.compare_computation_order = false;
    options.compare_stack_frame_ids = !from_text->front().stack_frames.empty();
    options.structural_get_tuple_elements = HasCompactGte(ReadAll(c.text));
    EXPECT_EQ(DiffModules(from_text->front(), from_proto->module, options), "");
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(ProtoReaderJaxTest, BufferAssignmentMatchesTheTextDump) {
  const std::vector<JaxCase> cases = FindJaxCases();
  ASSERT_FALSE(cases.empty()) << "no testdata/jax/*/*after_optimizations.hlo.pb found";
  int compared = 0;
  for (const JaxCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto pb_file = FileContents::Open(c.pb);
    ASSERT_TRUE(pb_file.ok()) << pb_file.status();
    auto read = ReadHloProto(*pb_file);
    ASSERT_TRUE(read.ok()) << read.status();
    if (!read->has_buffer_assignment() || !fs::exists(c.buffer_assignment)) continue;
    auto from_proto = dump::XlaBufferAssignmentFromProto(*read);
    ASSERT_TRUE(from_proto.ok()) << from_proto.status();
    const std::string text = ReadAll(c.buffer_assignment);
    auto from_text = dump::ParseXlaBufferAssignment(c.buffer_assignment, text);
    ASSERT_TRUE(from_text.ok()) << from_text.status();

    EXPECT_EQ(from_proto->SumOfAllocationSizes(), from_text->SumOfAllocationSizes());
    if (from_text->total_bytes) {
      EXPECT_EQ(from_proto->total_bytes, from_text->total_bytes);
    }
    ASSERT_EQ(from_proto->allocations.size(), from_text->allocations.size());
    for (size_t k = 0; k < from_text->allocations.size(); ++k) {
      const dump::XlaAllocation& p = from_proto->allocations[k];
      const dump::XlaAllocation& t = from_text->allocations[k];
      SCOPED_TRACE(absl::StrCat("allocation ", t.index));
      EXPECT_EQ(p.index, t.index);
      EXPECT_EQ(p.size, t.size);
      EXPECT_EQ(p.color, t.color);
      EXPECT_EQ(p.is_parameter, t.is_parameter);
      EXPECT_EQ(p.parameter_number, t.parameter_number);
      EXPECT_EQ(p.parameter_index, t.parameter_index);
      EXPECT_EQ(p.parameter_shape, t.parameter_shape);
      EXPECT_EQ(p.is_output, t.is_output);
      EXPECT_EQ(p.output_shape, t.output_shape);
      EXPECT_EQ(p.is_constant, t.is_constant);
      EXPECT_EQ(p.is_thread_local, t.is_thread_local);
      EXPECT_EQ(p.maybe_live_out, t.maybe_live_out);
      EXPECT_EQ(p.is_preallocated_temp, t.is_preallocated_temp);
      ASSERT_EQ(p.values.size(), t.values.size());
      for (size_t v = 0; v < t.values.size(); ++v) {
        EXPECT_EQ(p.values[v].id, t.values[v].id);
        EXPECT_EQ(p.values[v].instruction, t.values[v].instruction);
        EXPECT_EQ(p.values[v].shape_index, t.values[v].shape_index);
        EXPECT_EQ(p.values[v].size, t.values[v].size);
        EXPECT_EQ(p.values[v].offset, t.values[v].offset);
        EXPECT_EQ(p.values[v].color, t.values[v].color);
        EXPECT_EQ(p.values[v].shape, t.values[v].shape);
      }
    }
    const dump::XlaMemoryStats ps = from_proto->Stats();
    const dump::XlaMemoryStats ts = from_text->Stats();
    EXPECT_EQ(ps.argument_bytes, ts.argument_bytes);
    EXPECT_EQ(ps.output_bytes, ts.output_bytes);
    EXPECT_EQ(ps.temp_bytes, ts.temp_bytes);
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(ProtoReaderJaxTest, PeakMemoryMatchesJaxMemoryAnalysis) {
  const std::vector<JaxCase> cases = FindJaxCases();
  ASSERT_FALSE(cases.empty()) << "no testdata/jax/*/*after_optimizations.hlo.pb found";
  int compared = 0;
  for (const JaxCase& c : cases) {
    SCOPED_TRACE(c.name);
    if (!fs::exists(c.memory_analysis)) continue;
    // memory_analysis.json describes the case's main module only.
    const std::string json = ReadAll(c.memory_analysis);
    const int64_t expected = JsonInt(json, "peak_memory_in_bytes");
    if (expected < 0) continue;
    auto pb_file = FileContents::Open(c.pb);
    ASSERT_TRUE(pb_file.ok());
    auto read = ReadHloProto(*pb_file);
    ASSERT_TRUE(read.ok()) << read.status();
    if (!read->has_buffer_assignment()) continue;
    auto stats = dump::XlaBufferAssignmentFromProto(*read);
    ASSERT_TRUE(stats.ok());
    // Match the module by its argument bytes (cases may hold several modules).
    if (stats->Stats().argument_bytes != JsonInt(json, "argument_size_in_bytes") ||
        stats->Stats().temp_bytes != JsonInt(json, "temp_size_in_bytes")) {
      continue;
    }
    // jaxlib 0.7.0's serialized assignment kept the heap traces, 0.12's does
    // not, so jax's number is ComputePeakMemory or its static part.
    const std::string case_json =
        ReadAll((fs::path(c.memory_analysis).parent_path() / "case.json").string());
    const bool old_jax = case_json.find("\"jaxlib_version\": \"0.7.0\"") != std::string::npos;
    const bool new_jax = case_json.find("\"jaxlib_version\": \"0.12.0.1\"") != std::string::npos;
    const int64_t static_bytes = dump::StaticPeakBytes(*read->buffer_assignment);
    const int64_t full_bytes = dump::ComputePeakMemory(*read->buffer_assignment);
    if (old_jax) {
      EXPECT_EQ(full_bytes, expected);
    } else if (new_jax) {
      EXPECT_EQ(static_bytes, expected);
    } else {
      EXPECT_TRUE(expected == static_bytes || expected == full_bytes) << expected;
    }
    // The traces' peak fits in the temp allocations (heap_size includes
    // fragmentation, the replay does not).
    int64_t heap_peak = 0;
    for (const dump::HeapTraceReplay& replay :
         dump::ReplayHeapSimulatorTraces(*read->buffer_assignment)) {
      EXPECT_EQ(replay.unknown_buffer_events, 0);
      EXPECT_LE(replay.peak_bytes, stats->Stats().temp_bytes);
      if (replay.event_count > 0) {
        EXPECT_GT(replay.peak_bytes, 0);
        EXPECT_GE(replay.peak_event, 0);
        EXPECT_FALSE(replay.live_at_peak.empty());
      }
      heap_peak = std::max(heap_peak, replay.peak_bytes);
    }
    EXPECT_EQ(full_bytes, static_bytes + heap_peak);
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace hlomem::hlo
