// A module parsed in parts on several threads must be the module the
// sequential parse builds, down to every id, pool offset and table order,
// and bad input must get the sequential parse's diagnostic.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "tests/hlo/hlo_files.h"

namespace hlomem::hlo {
namespace {

ParseOptions InParts(int threads, int* parts_used) {
  ParseOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;  // cut even small modules
  options.parts_used = parts_used;
  return options;
}

// Every field, compared as values (names and texts by content: the parts
// own their copies).
void ExpectIdentical(const Module& a, const Module& b, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.entry, b.entry);
  ASSERT_EQ(a.computations.size(), b.computations.size());
  for (size_t k = 0; k < a.computations.size(); ++k) {
    const Computation& x = a.computations[k];
    const Computation& y = b.computations[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.first_instruction, y.first_instruction) << x.name;
    EXPECT_EQ(x.instruction_count, y.instruction_count) << x.name;
    EXPECT_EQ(x.root, y.root) << x.name;
    EXPECT_EQ(x.is_entry, y.is_entry) << x.name;
    EXPECT_EQ(x.is_fusion, y.is_fusion) << x.name;
    EXPECT_EQ(x.execution_thread, y.execution_thread) << x.name;
    EXPECT_EQ(x.source_offset, y.source_offset) << x.name;
  }
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (InstrId i = 0; i < a.instructions.size(); ++i) {
    const Instruction& x = a.instructions[i];
    const Instruction& y = b.instructions[i];
    const std::string what = absl::StrCat("instruction ", i, " ", x.name);
    ASSERT_EQ(x.name, y.name) << what;
    EXPECT_EQ(x.parameter_number(), y.parameter_number()) << what;
    EXPECT_EQ(x.tuple_index(), y.tuple_index()) << what;
    EXPECT_EQ(x.source_offset(), y.source_offset()) << what;
    EXPECT_EQ(x.shape, y.shape) << what;
    EXPECT_EQ(x.parent, y.parent) << what;
    EXPECT_EQ(x.operands_begin, y.operands_begin) << what;
    EXPECT_EQ(x.operand_count, y.operand_count) << what;
    EXPECT_EQ(x.attributes_begin, y.attributes_begin) << what;
    EXPECT_EQ(x.attribute_count, y.attribute_count) << what;
    EXPECT_EQ(x.dimensions_begin, y.dimensions_begin) << what;
    EXPECT_EQ(x.dimension_count, y.dimension_count) << what;
    EXPECT_EQ(x.metadata, y.metadata) << what;
    EXPECT_EQ(x.extras, y.extras) << what;
    EXPECT_EQ(x.opcode, y.opcode) << what;
    EXPECT_EQ(x.fusion_kind, y.fusion_kind) << what;
    EXPECT_EQ(x.is_root, y.is_root) << what;
    EXPECT_EQ(x.is_implicit, y.is_implicit) << what;
    EXPECT_EQ(x.elided_metadata_at, y.elided_metadata_at) << what;
    ASSERT_EQ(a.users(i).size(), b.users(i).size()) << what;
    EXPECT_TRUE(std::equal(a.users(i).begin(), a.users(i).end(), b.users(i).begin())) << what;
  }
  EXPECT_EQ(a.operand_pool, b.operand_pool);
  EXPECT_EQ(a.control_predecessor_pool, b.control_predecessor_pool);
  EXPECT_EQ(a.dimension_pool, b.dimension_pool);
  ASSERT_EQ(a.callee_pool.size(), b.callee_pool.size());
  for (size_t k = 0; k < a.callee_pool.size(); ++k) {
    EXPECT_EQ(a.callee_pool[k].role, b.callee_pool[k].role) << k;
    EXPECT_EQ(a.callee_pool[k].computation, b.callee_pool[k].computation) << k;
  }
  ASSERT_EQ(a.attribute_pool.size(), b.attribute_pool.size());
  for (size_t k = 0; k < a.attribute_pool.size(); ++k) {
    EXPECT_EQ(a.attribute_pool[k].key, b.attribute_pool[k].key) << k;
    EXPECT_EQ(a.attribute_pool[k].value, b.attribute_pool[k].value) << k;
  }
  ASSERT_EQ(a.output_operand_alias_pool.size(), b.output_operand_alias_pool.size());
  for (size_t k = 0; k < a.output_operand_alias_pool.size(); ++k) {
    EXPECT_EQ(a.output_operand_alias_pool[k].operand, b.output_operand_alias_pool[k].operand);
    EXPECT_EQ(a.output_operand_alias_pool[k].output_index,
              b.output_operand_alias_pool[k].output_index);
  }
  ASSERT_EQ(a.metadata.size(), b.metadata.size());
  for (size_t k = 0; k < a.metadata.size(); ++k) {
    EXPECT_EQ(a.metadata[k].op_type, b.metadata[k].op_type) << k;
    EXPECT_EQ(a.metadata[k].op_name, b.metadata[k].op_name) << k;
    EXPECT_EQ(a.metadata[k].source_file, b.metadata[k].source_file) << k;
    EXPECT_EQ(a.metadata[k].source_line, b.metadata[k].source_line) << k;
    EXPECT_EQ(a.metadata[k].stack_frame_id, b.metadata[k].stack_frame_id) << k;
    EXPECT_EQ(a.metadata[k].text, b.metadata[k].text) << k;
  }
  ASSERT_EQ(a.extras.size(), b.extras.size());
  for (size_t k = 0; k < a.extras.size(); ++k) {
    const InstructionExtras& x = a.extras[k];
    const InstructionExtras& y = b.extras[k];
    EXPECT_EQ(x.opcode_text, y.opcode_text) << k;
    EXPECT_EQ(x.custom_call_target, y.custom_call_target) << k;
    EXPECT_EQ(x.literal, y.literal) << k;
    EXPECT_EQ(x.callees_begin, y.callees_begin) << k;
    EXPECT_EQ(x.callee_count, y.callee_count) << k;
    EXPECT_EQ(x.control_predecessors_begin, y.control_predecessors_begin) << k;
    EXPECT_EQ(x.control_predecessor_count, y.control_predecessor_count) << k;
    EXPECT_EQ(x.output_operand_aliases_begin, y.output_operand_aliases_begin) << k;
    EXPECT_EQ(x.output_operand_alias_count, y.output_operand_alias_count) << k;
  }
  ASSERT_EQ(a.shapes.size(), b.shapes.size());
  for (ShapeId s = 0; s < a.shapes.size(); ++s) {
    EXPECT_TRUE(a.shapes.get(s) == b.shapes.get(s)) << "shape " << s << " "
                                                    << a.shapes.ToString(s) << " vs "
                                                    << b.shapes.ToString(s);
  }
  EXPECT_TRUE(std::equal(a.constants().begin(), a.constants().end(), b.constants().begin(),
                         b.constants().end()));
  for (CompId c = 0; c < a.computations.size(); ++c) {
    EXPECT_TRUE(std::equal(a.parameters(c).begin(), a.parameters(c).end(),
                           b.parameters(c).begin(), b.parameters(c).end()));
    EXPECT_TRUE(std::equal(a.callers(c).begin(), a.callers(c).end(), b.callers(c).begin(),
                           b.callers(c).end()));
  }
}

// Parses `file` sequentially and in 2, 3 and 7 parts; returns the fewest
// parts any parallel parse used.
int ExpectPartsMatchSequential(const std::shared_ptr<const FileContents>& file) {
  absl::StatusOr<std::vector<Module>> sequential = ParseHloText(file);
  int fewest_parts = 1 << 30;
  for (int threads : {2, 3, 7}) {
    int parts = 0;
    absl::StatusOr<std::vector<Module>> parallel = ParseHloText(file, InParts(threads, &parts));
    fewest_parts = std::min(fewest_parts, parts);
    const std::string where = absl::StrCat(file->path(), " in ", threads, " threads");
    if (!sequential.ok()) {
      EXPECT_FALSE(parallel.ok()) << where;
      if (!parallel.ok()) EXPECT_EQ(parallel.status().message(), sequential.status().message());
      continue;
    }
    EXPECT_LE(parts, threads) << where;
    if (!parallel.ok()) {
      ADD_FAILURE() << where << ": " << parallel.status().message();
      continue;
    }
    EXPECT_EQ(parallel->size(), sequential->size()) << where;
    for (size_t m = 0; m < std::min(parallel->size(), sequential->size()); ++m) {
      ExpectIdentical((*sequential)[m], (*parallel)[m], where);
    }
  }
  return fewest_parts;
}

// The modules of `file` parsed on `threads` threads, cut into that many
// parts; empty (a failure recorded) when the parse fails.
std::vector<Module> ParsedInParts(const std::shared_ptr<const FileContents>& file, int threads) {
  int parts = 0;
  absl::StatusOr<std::vector<Module>> parsed = ParseHloText(file, InParts(threads, &parts));
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parts, threads);
  return parsed.ok() ? std::move(*parsed) : std::vector<Module>();
}

TEST(ParallelParseTest, CommittedJaxDumpsMatchTheSequentialParse) {
  const std::vector<std::string> files =
      HloTextFilesUnder(std::string(HLOMEM_TESTDATA_DIR) + "/jax");
  ASSERT_GE(files.size(), 80u);
  size_t cut = 0;
  for (const std::string& path : files) {
    auto file = FileContents::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    if (ExpectPartsMatchSequential(*file) >= 2) ++cut;
  }
  // A module whose second half is one computation (the entry, usually)
  // has no cut there; most have one (95 of the 163 files when written).
  EXPECT_GE(cut, files.size() / 2) << "of " << files.size();
}

TEST(ParallelParseTest, SharedCorpusMatchesTheSequentialParse) {
  const std::vector<std::string> files = HloTextFilesUnder(HLOMEM_CORPUS_DIR);
  if (files.empty()) GTEST_SKIP() << HLOMEM_CORPUS_DIR << " is absent";
  for (const std::string& path : files) {
    auto file = FileContents::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ExpectPartsMatchSequential(*file);
  }
}

// A module of `count` small computations; the entry calls each, and each
// calls the one after it when `forward_calls` (a name defined later, in
// another part).
std::string ManyComputations(int count, bool forward_calls) {
  std::string text = "HloModule many\n\n";
  for (int k = 0; k < count; ++k) {
    absl::StrAppend(&text, "%c", k, " (p: f32[4]) -> f32[4] {\n",
                    "  %p = f32[4]{0} parameter(0)\n");
    if (forward_calls && k + 1 < count) {
      absl::StrAppend(&text, "  %n = f32[4]{0} call(%p), to_apply=%c", k + 1, "\n",
                      "  ROOT %r = f32[4]{0} add(%n, %p), metadata={op_name=\"op", k % 3, "\"}\n");
    } else {
      absl::StrAppend(&text, "  ROOT %r = f32[4]{0} add(%p, %p), metadata={op_name=\"op", k % 3,
                      "\"}\n");
    }
    absl::StrAppend(&text, "}\n\n");
  }
  absl::StrAppend(&text, "ENTRY %main (a: f32[4]) -> (f32[4], f32[4]) {\n",
                  "  %a = f32[4]{0} parameter(0)\n");
  std::string last = "%a";
  for (int k = 0; k < count; ++k) {
    absl::StrAppend(&text, "  %x", k, " = f32[4]{0} call(", last, "), to_apply=%c", k, "\n");
    last = absl::StrCat("%x", k);
  }
  absl::StrAppend(&text, "  ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(", last, ", %a)\n}\n");
  return text;
}

TEST(ParallelParseTest, ForwardCallsAcrossPartsResolve) {
  auto file = FileContents::FromString("many.hlo", ManyComputations(40, true));
  EXPECT_EQ(ExpectPartsMatchSequential(file), 2);
  const std::vector<Module> parsed = ParsedInParts(file, 4);
  ASSERT_FALSE(parsed.empty());
  const Module& m = parsed.front();
  // Each c_k (k < 39) calls c_{k+1}, wherever it was parsed.
  for (int k = 0; k + 1 < 40; ++k) {
    const CompId caller = m.FindComputation(absl::StrCat("c", k));
    const CompId callee = m.FindComputation(absl::StrCat("c", k + 1));
    ASSERT_NE(caller, kNoId);
    const InstrId call = m.comp(caller).first_instruction + 1;
    EXPECT_EQ(m.callee(call, CallRole::kToApply), callee) << k;
  }
  // Three metadata texts over 40 computations, shared across parts: 1 + 3.
  EXPECT_EQ(m.metadata.size(), 4u);
}

// Bad input in a later part must get the diagnostic the sequential parse
// gives, not one from a part.
TEST(ParallelParseTest, ErrorsAreTheSequentialParsesErrors) {
  const std::string good = ManyComputations(30, false);
  const std::string c25 = "%c25 (p: f32[4]) -> f32[4] {";
  ASSERT_NE(good.find(c25), std::string::npos);
  std::vector<std::string> bad = {
      // An undefined operand late in the text.
      absl::StrCat(good.substr(0, good.find("%x28 = f32[4]{0} call(%x27)")),
                   "%x28 = f32[4]{0} call(%x99)", good.substr(good.find(", to_apply=%c28"))),
      // A computation defined twice, in different parts.
      absl::StrCat(good.substr(0, good.find(c25)), "%c2",
                   good.substr(good.find(c25) + 4)),
      // Two ENTRY computations, one per part.
      absl::StrCat(good.substr(0, good.find("%c3 (")), "ENTRY ", good.substr(good.find("%c3 ("))),
      // A call to a computation that exists nowhere.
      absl::StrCat(good.substr(0, good.find(", to_apply=%c27")), ", to_apply=%nowhere",
                   good.substr(good.find(", to_apply=%c27") + 15)),
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    auto file = FileContents::FromString("bad.hlo", bad[k]);
    auto sequential = ParseHloText(file);
    ASSERT_FALSE(sequential.ok()) << k;
    for (int threads : {2, 3, 5}) {
      auto parallel = ParseHloText(file, InParts(threads, nullptr));
      ASSERT_FALSE(parallel.ok()) << k;
      EXPECT_EQ(parallel.status().message(), sequential.status().message()) << k;
    }
  }
}

// Text laid out unlike any printer's: a lone '}' closing an attribute value
// and an unindented instruction ending in '{' look like a computation's end
// and the next one's start. A part cut there fails to parse; the body is
// then parsed again sequentially, to the same module.
TEST(ParallelParseTest, WrongCutsFallBackToTheSequentialParse) {
  std::string text = "HloModule odd\n\n";
  for (int k = 0; k < 20; ++k) {
    absl::StrAppend(&text, "%c", k, " (p: f32[4]) -> f32[4] {\n",
                    "%p = f32[4]{0} parameter(0)\n",
                    "%q = f32[4]{0} add(%p, %p), frontend_attributes={\n}\n",
                    "ROOT %r = f32[4]{0} add(%q, %p), frontend_attributes={\n}\n}\n\n");
  }
  absl::StrAppend(&text, "ENTRY %main (a: f32[4]) -> f32[4] {\n",
                  "  %a = f32[4]{0} parameter(0)\n",
                  "  ROOT %x = f32[4]{0} call(%a), to_apply=%c0\n}\n");
  auto file = FileContents::FromString("odd.hlo", text);
  ASSERT_TRUE(ParseHloText(file).ok());
  EXPECT_EQ(ExpectPartsMatchSequential(file), 1);
}

// A file of several modules: parts cut into the next module are not this
// module's, and that module is parsed as it would be alone.
TEST(ParallelParseTest, CutsPastTheModuleEndAreDropped) {
  const std::string text = absl::StrCat(ManyComputations(3, true), "\n",
                                        ManyComputations(30, true));
  auto file = FileContents::FromString("two.hlo", text);
  // The second module is cut in parts of its own.
  EXPECT_EQ(ExpectPartsMatchSequential(file), 2);
  auto parsed = ParseHloText(file, InParts(5, nullptr));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].computations.size(), 4u);
  EXPECT_EQ((*parsed)[1].computations.size(), 31u);
}

// One computation larger than any part, as a train step's entry is: each
// instruction reads the one before it and the parameter at the top; every
// tenth also waits on the instruction ten above it, every fourth is
// written in long form (operand shapes before names), and two tuples in
// the first tenth are read through compact operands ("x5#0"), which keep
// cuts out of the text up to the last of them.
std::string OneLargeBody(int count) {
  std::string text = absl::StrCat("HloModule large\n\n",
                                  "%helper (p: f32[4]) -> f32[4] {\n",
                                  "  ROOT %p = f32[4]{0} parameter(0)\n}\n\n",
                                  "ENTRY %main (a: f32[4]) -> f32[4] {\n",
                                  "  %a = f32[4]{0} parameter(0)\n");
  std::string last = "a";
  for (int k = 0; k < count; ++k) {
    const std::string name = absl::StrCat("x", k);
    if (k % 25 == 5 && k < count / 10) {
      absl::StrAppend(&text, "  %", name, " = (f32[4]{0}, f32[4]{0}) tuple(%", last, ", %a)\n");
      absl::StrAppend(&text, "  %", name, "_first = f32[4]{0} add(%", name, "#0, %", name, "#1)\n");
      last = absl::StrCat(name, "_first");
      continue;
    }
    if (k % 4 == 0) {
      absl::StrAppend(&text, "  %", name, " = f32[4]{0} add(f32[4]{0} %", last,
                      ", f32[4]{0} %a)");
    } else {
      absl::StrAppend(&text, "  %", name, " = f32[4]{0} add(%", last, ", %a)");
    }
    if (k % 10 == 9) absl::StrAppend(&text, ", control-predecessors={%x", k - 9, "}");
    absl::StrAppend(&text, ", metadata={op_name=\"op", k % 7, "\"}\n");
    last = name;
  }
  absl::StrAppend(&text, "  ROOT %out = f32[4]{0} call(%", last, "), to_apply=%helper\n}\n");
  return text;
}

TEST(ParallelParseTest, ABodyLargerThanAPartIsCutInside) {
  const std::string text = OneLargeBody(400);
  auto file = FileContents::FromString("large.hlo", text);
  EXPECT_EQ(ExpectPartsMatchSequential(file), 2);
  const std::vector<Module> parsed = ParsedInParts(file, 6);
  ASSERT_FALSE(parsed.empty());
  const Module& m = parsed.front();
  const CompId entry = m.entry;
  // The parameter, 400 x, a tuple's two get-tuple-elements and its user
  // for each of 2 tuples, the root.
  EXPECT_EQ(m.comp(entry).instruction_count, 1u + 400u + 2u * 3u + 1u);
  EXPECT_EQ(m.instr(m.comp(entry).root).name, "out");
  // The last instruction reads the parameter parsed in the first part.
  const InstrId x399 = m.FindInstruction("x399");
  EXPECT_EQ(m.operands(x399)[1], m.comp(entry).first_instruction);
  // A forward reference across a cut: the first instruction reads one near
  // the end (a cycle the verifier rejects, but the parser resolves).
  std::string forward = text;
  forward.replace(forward.find("add(f32[4]{0} %a, f32[4]{0} %a)"), 31,
                  "add(f32[4]{0} %x398, f32[4]{0} %a)");
  auto forward_file = FileContents::FromString("forward.hlo", forward);
  EXPECT_EQ(ExpectPartsMatchSequential(forward_file), 2);
}

// Bad input on either side of a cut inside a body gets the sequential
// parse's diagnostic.
TEST(ParallelParseTest, ErrorsAcrossACutInsideABodyAreTheSequentialParsesErrors) {
  const std::string good = OneLargeBody(400);
  auto replaced = [&](absl::string_view what, absl::string_view with) {
    std::string text = good;
    const size_t at = text.find(std::string(what));
    EXPECT_NE(at, std::string::npos) << what;
    return text.replace(at, what.size(), std::string(with));
  };
  const std::vector<std::string> bad = {
      // A name defined near the start and again near the end.
      replaced("  %x390 = ", "  %x3 = f32[4]{0} add(%a, %a)\n  %x390 = "),
      // An operand defined nowhere, near the end.
      replaced("add(%x388, %a)", "add(%nowhere, %a)"),
      // Two ROOTs, in different parts.
      replaced("  %x2 = ", "  ROOT %x2 = "),
      // The root disagrees with the signature's result.
      replaced("ENTRY %main (a: f32[4]) -> f32[4] {", "ENTRY %main (a: f32[4]) -> f32[8] {"),
      // A parameter late in the body that the signature gives another shape.
      replaced("  %x384 = f32[4]{0} add(f32[4]{0} %x383, f32[4]{0} %a)",
               "  %x384 = f32[2]{0} parameter(0)"),
      // A written operand shape that disagrees with a definition in
      // another part (the first instruction reads one near the end).
      replaced("add(f32[4]{0} %a, f32[4]{0} %a)", "add(f32[2]{0} %x398, f32[4]{0} %a)"),
      // A control predecessor defined nowhere.
      replaced("control-predecessors={%x380}", "control-predecessors={%gone}"),
      // A compact operand late in the body, whose tuple is defined early.
      replaced("  %x390 = ", "  %late = f32[4]{0} add(%x5#0, %x5#1)\n  %x390 = "),
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    auto file = FileContents::FromString("bad.hlo", bad[k]);
    auto sequential = ParseHloText(file);
    if (k == bad.size() - 1) {
      // Valid, and no cut is made after the tuple: a part there could not
      // tell whether x5#0 exists already.
      ASSERT_TRUE(sequential.ok()) << sequential.status().message();
      EXPECT_EQ(ExpectPartsMatchSequential(file), 1);
      continue;
    }
    ASSERT_FALSE(sequential.ok()) << k;
    for (int threads : {2, 3, 5}) {
      auto parallel = ParseHloText(file, InParts(threads, nullptr));
      ASSERT_FALSE(parallel.ok()) << k << " in " << threads;
      EXPECT_EQ(parallel.status().message(), sequential.status().message()) << k;
    }
  }
}

// A part that fails inside an instruction may leave state behind (here a
// compact operand waiting for its instruction's end); the body parsed
// again sequentially must not see it. The cut falls on the second line of
// an instruction written over two, after a compact operand.
TEST(ParallelParseTest, AFailedPartLeavesNothingToTheSequentialParse) {
  const std::string header = "HloModule split\n";
  std::string body = absl::StrCat(
      "ENTRY %main (a: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n",
      "  %a_tuple_named_at_length_so_that_its_line_holds_the_middle_of_the_text = "
      "(f32[4]{0}, f32[4]{0}) tuple(%a, %a)\n");
  auto filler = [](int from, int count) {
    std::string lines;
    for (int k = from; k < from + count; ++k) {
      absl::StrAppend(&lines, "  %f", k, " = f32[4]{0} add(%a, %a)\n");
    }
    return lines;
  };
  absl::StrAppend(&body, filler(100, 40));
  const std::string split_first =
      "  %split = f32[4]{0} add(%a_tuple_named_at_length_so_that_its_line_holds_the_middle_of_"
      "the_text#0,\n";
  absl::StrAppend(&body, split_first, "      %a)\n", filler(200, 44),
                  "  ROOT %out = f32[4]{0} add(%split, %f243)\n}\n");
  const std::string text = header + body;
  const size_t middle = header.size() + body.size() / 2;
  const size_t split_at = text.find(split_first);
  ASSERT_LT(split_at, middle);
  ASSERT_GT(split_at + split_first.size(), middle);
  auto file = FileContents::FromString("split.hlo", text);
  ASSERT_TRUE(ParseHloText(file).ok());
  // The part cut inside %split fails; the sequential parse then gives the
  // module (the cut is tried again at 3 and 7 threads elsewhere).
  int parts = 0;
  auto in_two = ParseHloText(file, InParts(2, &parts));
  ASSERT_TRUE(in_two.ok()) << in_two.status().message();
  EXPECT_EQ(parts, 1);
  ExpectPartsMatchSequential(file);
}

// Finalize in ranges relies on operands lying in their user's computation;
// a module built otherwise (as a reader could) gets the same tables anyway.
TEST(ParallelParseTest, FinalizeInRangesIndexesOperandsFromOtherComputations) {
  auto parsed = ParseHloString(ManyComputations(12, false), "many.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  Module& m = parsed->front();
  // The entry's last call now also reads c0's parameter.
  const InstrId c0_parameter = m.comp(m.FindComputation("c0")).first_instruction;
  const InstrId last_call = m.FindInstruction("x11");
  ASSERT_NE(last_call, kNoId);
  m.operand_pool[m.instr(last_call).operands_begin] = c0_parameter;
  auto users_table = [&] {
    std::vector<std::vector<InstrId>> users;
    for (InstrId i = 0; i < m.instructions.size(); ++i) {
      users.emplace_back(m.users(i).begin(), m.users(i).end());
    }
    return users;
  };
  m.Finalize(1);
  const std::vector<std::vector<InstrId>> expected = users_table();
  EXPECT_EQ(expected[c0_parameter].back(), last_call);
  for (int threads : {2, 3, 8}) {
    m.Finalize(threads);
    EXPECT_EQ(users_table(), expected) << threads;
  }
}

// The verifier checks ranges of computations side by side; it must report
// the error a sequential check finds first.
TEST(ParallelVerifyTest, ReportsTheFirstErrorInComputationOrder) {
  const std::string good = ManyComputations(30, true);
  auto bad_index = [](int k) {
    return std::make_pair(absl::StrCat("  ROOT %r = f32[4]{0} add(%n, %p), metadata={op_name=\"op",
                                       k % 3, "\"}\n"),
                          absl::StrCat("  %t = (f32[4]{0}) tuple(%n)\n",
                                       "  ROOT %r = f32[4]{0} get-tuple-element(%t), index=", k,
                                       "\n"));
  };
  const auto replace_in = [](std::string text, absl::string_view after,
                             const std::pair<std::string, std::string>& what) {
    const size_t at = text.find(what.first, text.find(std::string(after)));
    EXPECT_NE(at, std::string::npos);
    return text.replace(at, what.first.size(), what.second);
  };
  // Errors in c4 and c24: each alone, then both (c4's comes first).
  const std::string late = replace_in(good, "%c24 (", bad_index(24));
  const std::string both = replace_in(late, "%c4 (", bad_index(4));
  // A call cycle through computations checked in different ranges.
  const std::string cycle = absl::StrCat(
      good.substr(0, good.find("to_apply=%c29")), "to_apply=%c1",
      good.substr(good.find("to_apply=%c29") + 13));
  for (const std::string* text : {&good, &late, &both, &cycle}) {
    auto parsed = ParseHloString(*text, "v.hlo");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const absl::Status sequential = VerifyModule(parsed->front(), 1);
    EXPECT_EQ(sequential.ok(), text == &good);
    for (int threads : {2, 3, 5, 40}) {
      EXPECT_EQ(VerifyModule(parsed->front(), threads), sequential) << threads;
    }
  }
  auto parsed = ParseHloString(both, "v.hlo");
  ASSERT_TRUE(parsed.ok());
  EXPECT_THAT(std::string(VerifyModule(parsed->front(), 4).message()),
              ::testing::HasSubstr("tuple index 4 is out of range"));
}

TEST(ParallelParseTest, SmallModulesStaySequential) {
  int parts = 0;
  ParseOptions options;
  options.threads = 8;  // min_part_bytes keeps its default
  options.parts_used = &parts;
  auto parsed = ParseHloString(ManyComputations(40, true), "many.hlo", options);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parts, 1);
}

}  // namespace
}  // namespace hlomem::hlo
