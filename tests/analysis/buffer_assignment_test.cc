// Small modules whose buffer assignment is worked out by hand in the
// comments, as in XLA's heap_simulator_test; the real-world check against
// XLA is ground_truth_test.cc.
#include "lib/analysis/buffer_assignment.h"

#include <map>
#include <random>
#include <string>

#include "absl/strings/str_replace.h"

#include "gtest/gtest.h"
#include "lib/analysis/heap_simulator.h"
#include "lib/analysis/memory_profile.h"
#include "lib/hlo/text_parser.h"
#include "lib/target/tpu.h"

namespace hlomem::analysis {
namespace {

struct Assigned {
  std::vector<hlo::Module> modules;
  std::unique_ptr<BufferAssignment> assignment;
};

Assigned Assign(absl::string_view text,
                const target::Target& target = target::DefaultTarget()) {
  Assigned out;
  auto modules = hlo::ParseHloString(text, "test.hlo");
  if (!modules.ok()) {
    ADD_FAILURE() << modules.status().message();
    return out;
  }
  out.modules = std::move(*modules);
  auto assignment = BufferAssignment::Run(out.modules.front(), target);
  if (!assignment.ok()) {
    ADD_FAILURE() << assignment.status().message();
    return out;
  }
  out.assignment = std::move(*assignment);
  return out;
}

// The offset of each instruction's top-level value, by instruction name.
std::map<std::string, int64_t> TopLevelOffsets(const BufferAssignment& ba) {
  const Dataflow& df = ba.dataflow();
  std::map<std::string, int64_t> offsets;
  for (ValueId v = 0; v < df.values().size(); ++v) {
    if (df.defined_at_top(v)) {
      offsets[std::string(ba.module().instr(df.value(v).instruction).name)] = ba.offset_of(v);
    }
  }
  return offsets;
}

// A value keeps its memory space in 30 bits: a layout's S(n) past that is
// refused with the instruction named, not wrapped into another space. The
// largest space that fits is kept as written.
TEST(BufferAssignmentTest, MemorySpacePastTheValuesFieldIsAnError) {
  auto module_in_space = [](int64_t space) {
    return absl::StrReplaceAll(R"(HloModule m

ENTRY e {
  p = f32[4]{0:S(SPACE)} parameter(0)
  ROOT n = f32[4]{0:S(SPACE)} negate(p)
})",
                               {{"SPACE", std::to_string(space)}});
  };
  auto modules = hlo::ParseHloString(module_in_space(HloValue::kMaxColor + 1), "test.hlo");
  ASSERT_TRUE(modules.ok()) << modules.status().message();
  auto refused = BufferAssignment::Run(modules->front(), target::DefaultTarget());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "test.hlo: error: instruction 'p' has memory space 536870912; hlomem handles 0 to "
            "536870911");

  Assigned kept = Assign(module_in_space(HloValue::kMaxColor));
  ASSERT_NE(kept.assignment, nullptr);
  const Dataflow& df = kept.assignment->dataflow();
  for (ValueId v = 0; v < df.values().size(); ++v) {
    EXPECT_EQ(df.value(v).color, HloValue::kMaxColor);
  }
}

// engine.md §4.4, with the reduce's init constant scheduled first:
//   c0(0) p0(1) a(2) b(3) d(4) r(5); end = 6.
//   p0: 1024 B parameter; r: 4 B output; c0: 4 B constant;
//   reducer x, y, s: 3 x 4 B thread-local.
//   Heap: b = add(a, a) is elementwise, so it takes a's chunk when a dies
//   (Free(a), ShareWith(b, a)); d = reverse(b) is not elementwise and
//   overlaps b at step 4 (allocs before frees): 2 x 1024 = 2048 B.
//   Total = 1024 + 4 + 4 + 12 + 2048 = 3092 B.
TEST(BufferAssignmentTest, EngineDocToyExample) {
  Assigned a = Assign(R"(
HloModule toy, is_scheduled=true

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  c0 = f32[] constant(0)
  p0 = f32[256]{0} parameter(0)
  a = f32[256]{0} exponential(p0)
  b = f32[256]{0} add(a, a)
  d = f32[256]{0} reverse(b), dimensions={0}
  ROOT r = f32[] reduce(d, c0), dimensions={0}, to_apply=add
}
)");
  ASSERT_NE(a.assignment, nullptr);
  const AssignmentStats& st = a.assignment->stats();
  EXPECT_EQ(st.total_bytes, 3092);
  EXPECT_EQ(st.argument_bytes, 1024);
  EXPECT_EQ(st.output_bytes, 4);
  EXPECT_EQ(st.temp_bytes, 2048);
  EXPECT_EQ(st.constant_bytes, 4);
  EXPECT_EQ(st.thread_local_bytes, 12);
  // Live temp bytes never exceed 2048 (a/b share one chunk), and the heap
  // is exactly that: no fragmentation.
  EXPECT_EQ(st.heap_lower_bound, 2048);
  EXPECT_EQ(ComputeMemoryProfile(*a.assignment).fragmentation_bytes, 0);
}

// p0 is donated to the output r. n = negate(p0) dies where r starts; since
// r = negate(n) is elementwise on n, n fits in the donated allocation ahead
// of r: no temp at all. Total = 1024 (parameter, also the output).
TEST(BufferAssignmentTest, TempReusesDonatedParameter) {
  Assigned a = Assign(R"(
HloModule donate, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }

ENTRY e {
  p0 = f32[256]{0} parameter(0)
  n = f32[256]{0} negate(p0)
  ROOT r = f32[256]{0} negate(n)
}
)");
  ASSERT_NE(a.assignment, nullptr);
  const AssignmentStats& st = a.assignment->stats();
  EXPECT_EQ(st.total_bytes, 1024);
  EXPECT_EQ(st.argument_bytes, 1024);
  EXPECT_EQ(st.alias_bytes, 1024);
  EXPECT_EQ(st.output_bytes, 1024);
  EXPECT_EQ(st.temp_bytes, 0);
}

// The same with r = reverse(n): reverse cannot write over its operand, so
// n and r overlap at r's step and n needs its own 1024 B temp.
TEST(BufferAssignmentTest, NonElementwiseConsumerBlocksReuse) {
  Assigned a = Assign(R"(
HloModule donate, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }

ENTRY e {
  p0 = f32[256]{0} parameter(0)
  n = f32[256]{0} negate(p0)
  ROOT r = f32[256]{0} reverse(n), dimensions={0}
}
)");
  ASSERT_NE(a.assignment, nullptr);
  const AssignmentStats& st = a.assignment->stats();
  EXPECT_EQ(st.total_bytes, 2048);
  EXPECT_EQ(st.temp_bytes, 1024);
  EXPECT_EQ(st.alias_bytes, 1024);
}

// XLA:TPU keeps temps out of donated parameters unless the program would
// not fit otherwise. p0 and p1 are donated to o0 and o1; c0 and c1 are
// layout copies (not the parameters' layout, the same array), s their sum.
// c1 kills p1, c0 kills p0; c0 (live [t3, t4]) could sit in p1's allocation
// before o1 is written. v5e offers 15.75 GiB: at 4 MiB an array, the
// program fits with c1, c0 and s in the heap (s takes c1's chunk): 4 arrays
// of parameters and 2 of heap. At 4 GiB it would need 16 GiB that way, so
// c0 goes into p1's allocation: 12 GiB.
TEST(BufferAssignmentTest, TpuTempsTakeDonatedParametersOnlyWhenOverHbm) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  auto program = [](absl::string_view dims) {
    return absl::StrReplaceAll(R"(
HloModule donate, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

ENTRY e {
  p0 = f32[DIMS]{1,0:T(8,128)} parameter(0)
  p1 = f32[DIMS]{1,0:T(8,128)} parameter(1)
  c1 = f32[DIMS]{0,1:T(8,128)} copy(p1)
  c0 = f32[DIMS]{0,1:T(8,128)} copy(p0)
  s = f32[DIMS]{0,1:T(8,128)} add(c0, c1)
  o0 = f32[DIMS]{1,0:T(8,128)} copy(s)
  o1 = f32[DIMS]{1,0:T(8,128)} negate(o0)
  ROOT t = (f32[DIMS]{1,0:T(8,128)}, f32[DIMS]{1,0:T(8,128)}) tuple(o0, o1)
}
)",
                               {{"DIMS", dims}});
  };
  constexpr int64_t kMiB = int64_t{1} << 20;
  constexpr int64_t kGiB = int64_t{1} << 30;
  Assigned small = Assign(program("1024,1024"), *v5e);
  ASSERT_NE(small.assignment, nullptr);
  EXPECT_EQ(small.assignment->stats().temp_bytes, 8 * kMiB);
  Assigned big = Assign(program("32768,32768"), *v5e);
  ASSERT_NE(big.assignment, nullptr);
  EXPECT_EQ(big.assignment->stats().temp_bytes, 4 * kGiB);
  EXPECT_EQ(big.assignment->stats().argument_bytes, 8 * kGiB);
}

// Over the HBM, any temp may take a donated parameter's allocation while
// the parameter is dead, not only a temp of the parameter's own array: h
// (half of p0) goes into p1's allocation, dead once c1 copied it and free
// until o1 is written. Normally c1, h and g are 8 GiB of heap beside 8 GiB
// of parameters, over v5e's 15.75 GiB; tight, the heap is 6 GiB.
TEST(BufferAssignmentTest, TpuAnyTempTakesADeadDonatedParameterWhenOverHbm) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"(
HloModule donate_any, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

ENTRY e {
  p0 = f32[32768,32768]{1,0:T(8,128)} parameter(0)
  p1 = f32[32768,32768]{1,0:T(8,128)} parameter(1)
  c1 = f32[32768,32768]{0,1:T(8,128)} copy(p1)
  h = f32[16384,32768]{1,0:T(8,128)} slice(p0), slice={[0:16384], [0:32768]}
  g = f32[16384,32768]{1,0:T(8,128)} slice(p0), slice={[16384:32768], [0:32768]}
  o0 = f32[32768,32768]{1,0:T(8,128)} concatenate(h, g), dimensions={0}
  o1 = f32[32768,32768]{1,0:T(8,128)} copy(c1)
  ROOT t = (f32[32768,32768]{1,0:T(8,128)}, f32[32768,32768]{1,0:T(8,128)}) tuple(o0, o1)
}
)",
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(a.assignment->stats().temp_bytes, 6 * kGiB);
  EXPECT_EQ(a.assignment->stats().argument_bytes, 8 * kGiB);
}

// p0's halves h and g (taken by HALF), y their sum, o0 two copies of y:
// over v5e's HBM (8 GiB of parameters, 8 of outputs, 4 of heap normally).
std::string UnwrittenOutputProgram(absl::string_view half_h, absl::string_view half_g) {
  return absl::StrReplaceAll(R"(
HloModule output_early, is_scheduled=true

ENTRY e {
  p0 = f32[32768,32768]{1,0:T(8,128)} parameter(0)
  p1 = f32[32768,32768]{1,0:T(8,128)} parameter(1)
  x = f32[32768,32768]{1,0:T(8,128)} negate(p1)
  h = f32[16384,32768]{1,0:T(8,128)} HALF_H
  g = f32[16384,32768]{1,0:T(8,128)} HALF_G
  y = f32[16384,32768]{1,0:T(8,128)} add(h, g)
  o0 = f32[32768,32768]{1,0:T(8,128)} concatenate(y, y), dimensions={0}
  ROOT t = (f32[32768,32768]{1,0:T(8,128)}, f32[32768,32768]{1,0:T(8,128)}) tuple(o0, x)
}
)",
                             {{"HALF_H", half_h}, {"HALF_G", half_g}});
}

constexpr char kGather[] = "all-gather(p0), replica_groups={}, dimensions={0}";

// Over the HBM a temp may also take an output's allocation before the
// output is written: g (sliced from p0) goes into o0's, free until the
// concatenate writes o0; the heap is 2 GiB.
TEST(BufferAssignmentTest, TpuTempsTakeAnUnwrittenOutputWhenOverHbm) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(UnwrittenOutputProgram("slice(p0), slice={[0:16384], [0:32768]}",
                                             "slice(p0), slice={[16384:32768], [0:32768]}"),
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(a.assignment->stats().temp_bytes, 2 * kGiB);
  EXPECT_EQ(a.assignment->stats().output_bytes, 8 * kGiB + 512);  // + the root tuple's table
}

// With h and g gathered instead: an all-gather's output stays in the heap
// even over the HBM, so h, g and y need 4 GiB there, as normally.
TEST(BufferAssignmentTest, TpuAllGathersStayInTheHeapWhenOverHbm) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(UnwrittenOutputProgram(kGather, kGather), *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(a.assignment->stats().temp_bytes, 4 * kGiB);
}

// XLA:TPU's memory_analysis() peak counts VMEM value by value: b
// overwrites a in place (aliasing_operands), so the two share VMEM's one
// 4 MiB chunk, yet both count at b's step. Peak = p0 and o (4 MiB each)
// + 8 MiB of VMEM values; HBM has no temps.
TEST(BufferAssignmentTest, TpuVmemPeakCountsAnInPlaceUserBesideItsOperand) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"(
HloModule vmem, is_scheduled=true

ENTRY e {
  p0 = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  a = f32[1024,1024]{1,0:T(8,128)S(1)} negate(p0)
  b = f32[1024,1024]{1,0:T(8,128)S(1)} negate(a), backend_config={"aliasing_operands":{"lists":[{"indices":["0","1"]}]}}
  ROOT o = f32[1024,1024]{1,0:T(8,128)} copy(b)
}
)",
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 4 * kMiB);
  EXPECT_EQ(a.assignment->stats().peak_memory_bytes, 16 * kMiB);
}

// aliasing_operands says an operand may share the output's buffer; XLA:TPU
// shares it only where the operand dies there. b lists a, which c reads
// later, so b gets a chunk of its own; c, a's last reader, takes a's chunk,
// and d, listing b at b's last read, takes b's: VMEM 8 MiB (4 MiB if every
// listed pair shared, 12 MiB if none did).
TEST(BufferAssignmentTest, TpuAliasingOperandsShareOnlyAnOperandThatDiesThere) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"(
HloModule vmem_alias_live, is_scheduled=true

ENTRY e {
  p0 = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  a = f32[1024,1024]{1,0:T(8,128)S(1)} negate(p0)
  b = f32[1024,1024]{1,0:T(8,128)S(1)} negate(a), backend_config={"aliasing_operands":{"lists":[{"indices":["0","1"]}]}}
  c = f32[1024,1024]{1,0:T(8,128)S(1)} add(a, b), backend_config={"aliasing_operands":{"lists":[{"indices":["0","2"]}]}}
  d = f32[1024,1024]{1,0:T(8,128)S(1)} add(b, c), backend_config={"aliasing_operands":{"lists":[{"indices":["0","2"]}]}}
  ROOT o = f32[1024,1024]{1,0:T(8,128)} copy(d)
}
)",
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8 * kMiB);
}

// A list naming one operand and two outputs lets the operand's buffer go to
// one of them: both outputs live on after the fusion, so they cannot share
// it (a v5p GPT-2 step's MLP fusions, with bf16[28,6176,256] outputs, were
// 88.5 MB short of XLA's HBM while both took it). VMEM 8 MiB: 4 if all three
// shared, 12 if none did.
TEST(BufferAssignmentTest, TpuAliasingOperandsGiveAnOperandToOneOutput) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"(
HloModule vmem_alias_two_outputs, is_scheduled=true

fused {
  x = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  n = f32[1024,1024]{1,0:T(8,128)} negate(x)
  e = f32[1024,1024]{1,0:T(8,128)} exponential(x)
  ROOT t = (f32[1024,1024]{1,0:T(8,128)}, f32[1024,1024]{1,0:T(8,128)}) tuple(n, e)
}

ENTRY e {
  p0 = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  a = f32[1024,1024]{1,0:T(8,128)S(1)} negate(p0)
  f = (f32[1024,1024]{1,0:T(8,128)S(1)}, f32[1024,1024]{1,0:T(8,128)S(1)}) fusion(a), kind=kLoop, calls=fused, backend_config={"aliasing_operands":{"lists":[{"indices":["0","1","2"]}]}}
  f0 = f32[1024,1024]{1,0:T(8,128)S(1)} get-tuple-element(f), index=0
  f1 = f32[1024,1024]{1,0:T(8,128)S(1)} get-tuple-element(f), index=1
  o0 = f32[1024,1024]{1,0:T(8,128)} copy(f0)
  o1 = f32[1024,1024]{1,0:T(8,128)} copy(f1)
  ROOT o = (f32[1024,1024]{1,0:T(8,128)}, f32[1024,1024]{1,0:T(8,128)}) tuple(o0, o1)
}
)",
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8 * kMiB);
}

// Memory-space assignment gives each VMEM buffer its own chunk: b =
// negate(a) may overwrite a by XLA's generic rules, and a dies at b, yet b
// does not take a's chunk (they are not one buffer): VMEM is 8 MiB, where
// the heap simulator's reuse would make it 4 MiB.
TEST(BufferAssignmentTest, TpuVmemValuesDoNotTakeTheirOperandsChunks) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"(
HloModule vmem_reuse, is_scheduled=true

ENTRY e {
  p0 = f32[1024,1024]{1,0:T(8,128)} parameter(0)
  a = f32[1024,1024]{1,0:T(8,128)S(1)} negate(p0)
  b = f32[1024,1024]{1,0:T(8,128)S(1)} negate(a)
  ROOT o = f32[1024,1024]{1,0:T(8,128)} copy(b)
}
)",
                      *v5e);
  ASSERT_NE(a.assignment, nullptr);
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8 * kMiB);
}

// kPlaceWith: a sliced prefetch. A (100 B) is live at ticks 0-3 below B
// (64 B, at 0, ticks 1-2); C (64 B) joins A's chunk 128 B above A's start
// once B is gone (ticks 4-5). Placed as one, A cannot go at 0 (its 100 B
// would cover B), so A sits at 64, C at 192: heap 256. Each counts its own
// bytes in the live peak.
TEST(HeapSimulatorTest, PlacedWithKeepsItsDistanceFromTheOther) {
  const std::vector<HeapEvent> events = {
      {HeapEvent::kAlloc, 1, 64, 0},  {HeapEvent::kAlloc, 0, 100, 0},
      {HeapEvent::kFree, 1, 64, 0},   {HeapEvent::kPlaceWith, 2, 64, 0, 128},
      {HeapEvent::kFree, 0, 100, 0},  {HeapEvent::kFree, 2, 64, 0},
  };
  const HeapResult heap = BestHeap(events, 3, 64, target::HeapOrders::kAllocationOnly);
  EXPECT_EQ(heap.offsets, (std::vector<int64_t>{64, 0, 192}));
  EXPECT_EQ(heap.heap_size, 256);
  EXPECT_EQ(LiveBytesPeak(events, 3), 164);
}

// Intervals count at both ends: [0,2] and [2,3] overlap at step 2,
// [0,2] and [3,4] do not.
TEST(HeapSimulatorTest, IntervalsMeetingAtAStepBothCount) {
  EXPECT_EQ(IntervalsPeak({{0, 2, 100}, {2, 3, 50}}), 150);
  EXPECT_EQ(IntervalsPeak({{0, 2, 100}, {3, 4, 50}}), 100);
  EXPECT_EQ(IntervalsPeak({}), 0);
}

// XLA:TPU's SparseCore offload, as its dumps show it (jnp.histogram's
// scatter-add): async-start() with no operands, which arrive at an
// async-update ((operands...), output); the wrapped computations run
// there, on the sparsecore thread, and start their call with an
// async-start whose context is a u32[] in S(8). XLA:TPU's assignment puts
// the scatter's result and its zeros (the in-place operand, update {0,0})
// in one live-out allocation, and that inner call-start's tuple tables in
// colour 7 at no size.
TEST(BufferAssignmentTest, TpuSparseCoreOffloadTakesItsOperandsAtTheUpdate) {
  const std::unique_ptr<target::Target> v5p =
      target::MakeTpuTarget(target::FindTpuGeneration("v5p"));
  Assigned a = Assign(R"HLO(
HloModule histogram, is_scheduled=true

%region (a: f32[], b: f32[]) -> f32[] {
  %a = f32[]{:T(128)} parameter(0)
  %b = f32[]{:T(128)} parameter(1)
  ROOT %s = f32[]{:T(128)} add(%a, %b)
}, execution_thread="sparsecore"

%scatter_body (p0: f32[1024], p1: s32[4096], p2: f32[4096]) -> f32[1024] {
  %p0 = f32[1024]{0:T(1024)} parameter(0)
  %p1 = s32[4096]{0:T(1024)} parameter(1)
  %p2 = f32[4096]{0:T(1024)} parameter(2)
  ROOT %scatter = f32[1024]{0:T(1024)} scatter(%p0, %p1, %p2), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%region
}, execution_thread="sparsecore"

%offloaded (q0: f32[1024], q1: s32[4096], q2: f32[4096]) -> f32[1024] {
  %q0 = f32[1024]{0:T(1024)} parameter(0)
  %q1 = s32[4096]{0:T(1024)} parameter(1)
  %q2 = f32[4096]{0:T(1024)} parameter(2)
  ROOT %offload = f32[1024]{0:T(1024)} fusion(%q0, %q1, %q2), kind=kCustom, calls=%scatter_body
}, execution_thread="sparsecore"

%inner_async (r0: f32[1024], r1: s32[4096], r2: f32[4096]) -> f32[1024] {
  %r0 = f32[1024]{0:T(1024)} parameter(0)
  %r1 = s32[4096]{0:T(1024)} parameter(1)
  %r2 = f32[4096]{0:T(1024)} parameter(2)
  ROOT %offload.call = f32[1024]{0:T(1024)} call(%r0, %r1, %r2), to_apply=%offloaded
}, execution_thread="sparsecore"

%called (s0: f32[1024], s1: s32[4096], s2: f32[4096]) -> f32[1024] {
  %s0 = f32[1024]{0:T(1024)} parameter(0)
  %s1 = s32[4096]{0:T(1024)} parameter(1)
  %s2 = f32[4096]{0:T(1024)} parameter(2)
  %call-start = ((f32[1024]{0:T(1024)}, s32[4096]{0:T(1024)}, f32[4096]{0:T(1024)}), f32[1024]{0:T(1024)}, u32[]{:S(8)}) async-start(%s0, %s1, %s2), async_execution_thread="sparsecore", calls=%inner_async
  ROOT %call-done = f32[1024]{0:T(1024)} async-done(%call-start)
}, execution_thread="sparsecore"

%outer_async (t0: f32[1024], t1: s32[4096], t2: f32[4096]) -> f32[1024] {
  %t0 = f32[1024]{0:T(1024)} parameter(0)
  %t1 = s32[4096]{0:T(1024)} parameter(1)
  %t2 = f32[4096]{0:T(1024)} parameter(2)
  ROOT %call = f32[1024]{0:T(1024)} call(%t0, %t1, %t2), to_apply=%called
}, execution_thread="sparsecore"

ENTRY %main (ids: s32[4096]) -> f32[1024] {
  %ids = s32[4096]{0:T(1024)} parameter(0)
  %one = f32[]{:T(128)} constant(1)
  %zero = f32[]{:T(128)} constant(0)
  %start = ((), (), (s32[1]{0:T(128)S(2)})) async-start(), async_execution_thread="sparsecore", calls=%outer_async
  %ones = f32[4096]{0:T(1024)} broadcast(%one), dimensions={}
  %init = f32[1024]{0:T(1024)} broadcast(%zero), dimensions={}
  %update = ((f32[1024]{0:T(1024)}, s32[4096]{0:T(1024)}, f32[4096]{0:T(1024)}), f32[1024]{0:T(1024)}) async-update(%start, %init, %ids, %ones)
  ROOT %done = f32[1024]{0:T(1024)} async-done(%update)
}
)HLO", *v5p);
  ASSERT_NE(a.assignment, nullptr);
  const BufferAssignment& ba = *a.assignment;
  const Dataflow& df = ba.dataflow();
  const hlo::Module& m = ba.module();
  auto value_of = [&](absl::string_view name, const ShapeIndex& index) -> ValueId {
    for (ValueId v = 0; v < df.values().size(); ++v) {
      if (m.instr(df.value(v).instruction).name == name && df.value_index(v) == index) return v;
    }
    ADD_FAILURE() << "no value " << name;
    return 0;
  };
  const ValueId init = value_of("init", {});
  const ValueId offload = value_of("offload", {});
  EXPECT_EQ(df.buffer_of(init), df.buffer_of(offload));
  const Allocation& out = ba.allocations()[static_cast<size_t>(
      ba.allocation_of_buffer(df.buffer_of(init)))];
  EXPECT_TRUE(out.maybe_live_out);
  EXPECT_EQ(out.size, 4096);
  // The offloaded scatter runs at the update, after `ones` is made.
  EXPECT_GT(ba.live_range(offload).start, ba.live_range(value_of("ones", {})).start);
  for (const ShapeIndex& index : {ShapeIndex{}, ShapeIndex{0}}) {
    const HloValue& table = df.value(value_of("call-start", index));
    EXPECT_EQ(table.color, 7);
    EXPECT_EQ(table.size, 0);
  }
  EXPECT_EQ(ba.stats().color_bytes.at(7), 0);
  // Values of what the offload runs (`called`, a callee of the wrapped
  // computation) live until the offload's async-done, as XLA's live ranges
  // have them (a SparseCore gather's call-start tables in a SmolLM2 step on
  // v5p: to the outer done, 9 steps past their own call-done); without
  // that they would end at the inner call-done, two steps before.
  const int64_t done = ba.schedule().time_of(m.FindInstruction("done"));
  EXPECT_EQ(ba.live_range(value_of("call-start", {})).end, done);
  EXPECT_GT(done, ba.schedule().time_of(m.FindInstruction("call-done")) + 1);
  // HBM: ids 16 KiB, out 4 KiB, two constants and the reducer's three
  // thread-local scalars 512 B each, and the temps: `ones` and four 32-byte
  // tables (start {} and {2}, update {} and {0}), each in a 16 KiB slot but
  // the last.
  EXPECT_EQ(ba.stats().color_bytes.at(0), 16384 + 4096 + 5 * 512 + 4 * 16384 + 32);
}

// XLA:TPU allocates tuple tables by their size, after the arrays, but a
// loop's carried tuple (one buffer of the while, its init tuple and its
// body's parameter and root) after every other buffer. Here the loop's
// tuple (9 entries, 64 B on v5p) is larger than `small` (2 entries, 32 B)
// and first in post order, yet `small` is created first: the two take the
// first two 16 KiB slots of the combined temp in that order (by size or in
// post order, the loop's tuple would take the first). The program is made
// up; the rule is read off XLA's dumps: the decode loop's of the
// accelerator suite and keras-hub's GPT-2 steps on v6e
// (TrainerGroundTruthTest holds those to XLA's figures).
TEST(BufferAssignmentTest, TpuLoopTupleIsAllocatedAfterTheOtherTables) {
  const std::unique_ptr<target::Target> v5p =
      target::MakeTpuTarget(target::FindTpuGeneration("v5p"));
  Assigned a = Assign(R"HLO(
HloModule loop_table, is_scheduled=true

%cond (c: (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)})) -> pred[] {
  %c = (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)
  %i = s32[]{:T(128)} get-tuple-element(%c), index=0
  %ten = s32[]{:T(128)} constant(10)
  ROOT %lt = pred[]{:T(128)} compare(%i, %ten), direction=LT
}

%body (t: (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)})) -> (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) {
  %t = (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)
  %i = s32[]{:T(128)} get-tuple-element(%t), index=0
  %one = s32[]{:T(128)} constant(1)
  %i1 = s32[]{:T(128)} add(%i, %one)
  %x = f32[1024]{0:T(1024)} get-tuple-element(%t), index=1
  %y = f32[1024]{0:T(1024)} negate(%x)
  ROOT %r = (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(%i1, %y, %y, %y, %y, %y, %y, %y, %y)
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0:T(1024)} parameter(0)
  %zero = s32[]{:T(128)} constant(0)
  %init = (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(%zero, %p, %p, %p, %p, %p, %p, %p, %p)
  %w = (s32[]{:T(128)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) while(%init), condition=%cond, body=%body
  %a = f32[1024]{0:T(1024)} get-tuple-element(%w), index=1
  %n = f32[1024]{0:T(1024)} negate(%a)
  %small = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(%n, %n)
  %b = f32[1024]{0:T(1024)} get-tuple-element(%small), index=1
  ROOT %e = f32[1024]{0:T(1024)} exponential(%b)
}
)HLO", *v5p);
  ASSERT_NE(a.assignment, nullptr);
  std::map<std::string, int64_t> offsets = TopLevelOffsets(*a.assignment);
  EXPECT_EQ(offsets["w"], offsets["init"]);  // one buffer
  EXPECT_EQ(offsets["small"], 0);
  EXPECT_EQ(offsets["w"], 16384);
}

// Other tuple tables come in schedule order in XLA:TPU's first assignment,
// whatever their sizes: `small` (2 entries, 32 B), defined first, is
// created before the combined all-reduce's `ar` (9 entries, 64 B) and, as
// the first table XLA's partition of the allocations moves, ends the
// combined temp. By size, as its tighter second assignment orders them,
// the two trade places (a made-up program; the rule read off real steps'
// offsets, lib/target/tpu.cc).
TEST(BufferAssignmentTest, TpuTupleTablesComeInScheduleOrderInTheFirstAssignment) {
  const std::unique_ptr<target::Target> v5p =
      target::MakeTpuTarget(target::FindTpuGeneration("v5p"));
  Assigned a = Assign(R"HLO(
HloModule all_reduce_table, is_scheduled=true

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0:T(1024)} parameter(0)
  %small = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(%p, %p)
  %a = f32[1024]{0:T(1024)} get-tuple-element(%small), index=0
  %n = f32[1024]{0:T(1024)} negate(%a)
  %ar = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) all-reduce(%n, %n, %n, %n, %n, %n, %n, %n, %n), replica_groups={}, to_apply=%add
  %b = f32[1024]{0:T(1024)} get-tuple-element(%ar), index=8
  ROOT %r = f32[1024]{0:T(1024)} exponential(%b)
}
)HLO", *v5p);
  ASSERT_NE(a.assignment, nullptr);
  std::map<std::string, int64_t> offsets = TopLevelOffsets(*a.assignment);
  // Both sit above the heap of the arrays, a 16 KiB slot apart.
  EXPECT_GT(offsets["ar"], offsets["n"]);
  EXPECT_EQ(offsets["small"], offsets["ar"] + 16384);
}

// A sliced prefetch whose array a while loop carries: the ConcatBitcast's
// buffer also holds the loop's phis and the body's copy `c8`. The two 4 KiB
// slices still sit at their distances in the 8 KiB array (sl0 at the
// array's start, sl1 4 KiB above), and the array with every value of its
// buffer at the slices' offset: VMEM is 8 KiB, not the 16 KiB of the
// slices beside the array they meet at the concatenation.
TEST(BufferAssignmentTest, TpuSlicedPrefetchIntoALoopCarriedBuffer) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"HLO(
HloModule sliced_loop, is_scheduled=true

%body (t: (s32[], f32[16,128])) -> (s32[], f32[16,128]) {
  %t = (s32[]{:T(128)}, f32[16,128]{1,0:T(8,128)S(1)}) parameter(0)
  %i = s32[]{:T(128)} get-tuple-element(%t), index=0
  %one = s32[]{:T(128)} constant(1)
  %i1 = s32[]{:T(128)} add(%i, %one)
  %x = f32[16,128]{1,0:T(8,128)S(1)} get-tuple-element(%t), index=1
  %n = f32[16,128]{1,0:T(8,128)} negate(%x)
  %c8 = f32[16,128]{1,0:T(8,128)S(1)} copy(%n)
  ROOT %r = (s32[]{:T(128)}, f32[16,128]{1,0:T(8,128)S(1)}) tuple(%i1, %c8)
}

%cond (u: (s32[], f32[16,128])) -> pred[] {
  %u = (s32[]{:T(128)}, f32[16,128]{1,0:T(8,128)S(1)}) parameter(0)
  %j = s32[]{:T(128)} get-tuple-element(%u), index=0
  %k = s32[]{:T(128)} constant(4)
  ROOT %lt = pred[]{:T(512)} compare(%j, %k), direction=LT
}

%slice0 (q0: f32[16,128]) -> f32[8,128] {
  %q0 = f32[16,128]{1,0:T(8,128)} parameter(0)
  ROOT %sl0 = f32[8,128]{1,0:T(8,128)S(1)} slice(%q0), slice={[0:8], [0:128]}
}

%slice1 (q1: f32[16,128]) -> f32[8,128] {
  %q1 = f32[16,128]{1,0:T(8,128)} parameter(0)
  ROOT %sl1 = f32[8,128]{1,0:T(8,128)S(1)} slice(%q1), slice={[8:16], [0:128]}
}

ENTRY %main (p: f32[16,128]) -> f32[16,128] {
  %p = f32[16,128]{1,0:T(8,128)} parameter(0)
  %zero = s32[]{:T(128)} constant(0)
  %ss0 = ((f32[16,128]{1,0:T(8,128)}), f32[8,128]{1,0:T(8,128)S(1)}, s32[]{:S(2)}) async-start(%p), calls=%slice0
  %ss1 = ((f32[16,128]{1,0:T(8,128)}), f32[8,128]{1,0:T(8,128)S(1)}, s32[]{:S(2)}) async-start(%p), calls=%slice1
  %s0 = f32[8,128]{1,0:T(8,128)S(1)} async-done(%ss0)
  %s1 = f32[8,128]{1,0:T(8,128)S(1)} async-done(%ss1)
  %cat = f32[16,128]{1,0:T(8,128)S(1)} custom-call(%s0, %s1), custom_call_target="ConcatBitcast"
  %init = (s32[]{:T(128)}, f32[16,128]{1,0:T(8,128)S(1)}) tuple(%zero, %cat)
  %w = (s32[]{:T(128)}, f32[16,128]{1,0:T(8,128)S(1)}) while(%init), condition=%cond, body=%body
  %y = f32[16,128]{1,0:T(8,128)S(1)} get-tuple-element(%w), index=1
  ROOT %o = f32[16,128]{1,0:T(8,128)} copy(%y)
}
)HLO", *v5e);
  ASSERT_NE(a.assignment, nullptr);
  const BufferAssignment& ba = *a.assignment;
  const Dataflow& df = ba.dataflow();
  std::map<std::string, int64_t> offsets;
  for (ValueId v = 0; v < df.values().size(); ++v) {
    const hlo::Instruction& instr = ba.module().instr(df.value(v).instruction);
    if (instr.opcode != hlo::Opcode::kTuple && df.defined_at_top(v)) {
      offsets[std::string(instr.name)] = ba.offset_of(v);
    }
  }
  EXPECT_EQ(offsets["sl1"] - offsets["sl0"], 4096);
  EXPECT_EQ(offsets["cat"], offsets["sl0"]);
  EXPECT_EQ(offsets["c8"], offsets["sl0"]);
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8192);
}

// A cross-program prefetch takes VMEM's first chunk, before any other
// buffer: b (16 KiB, defined first, larger, as long-lived) would otherwise
// win offset 0 in every order. The end-of-program prefetch of the same
// parameter (cs2) reuses that chunk once the first has died.
TEST(BufferAssignmentTest, TpuCrossProgramPrefetchIsPlacedFirst) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"HLO(
HloModule cpp, is_scheduled=true

ENTRY %main (p0: f32[32,128], p1: f32[8,128]) -> (f32[8,128], f32[32,128]) {
  %p0 = f32[32,128]{1,0:T(8,128)} parameter(0)
  %p1 = f32[8,128]{1,0:T(8,128)} parameter(1)
  %b = f32[32,128]{1,0:T(8,128)S(1)} negate(%p0)
  %cs = (f32[8,128]{1,0:T(8,128)S(1)}, f32[8,128]{1,0:T(8,128)}, u32[]{:S(2)}) copy-start(%p1), cross_program_prefetch_index=0
  %cd = f32[8,128]{1,0:T(8,128)S(1)} copy-done(%cs)
  %x = f32[8,128]{1,0:T(8,128)} slice(%b), slice={[0:8], [0:128]}
  %y = f32[8,128]{1,0:T(8,128)} add(%x, %cd)
  %z = f32[32,128]{1,0:T(8,128)} negate(%b)
  %cs2 = (f32[8,128]{1,0:T(8,128)S(1)}, f32[8,128]{1,0:T(8,128)}, u32[]{:S(2)}) copy-start(%p1)
  %cd2 = f32[8,128]{1,0:T(8,128)S(1)} copy-done(%cs2)
  ROOT %r = (f32[8,128]{1,0:T(8,128)}, f32[32,128]{1,0:T(8,128)}) tuple(%y, %z)
}
)HLO", *v5e);
  ASSERT_NE(a.assignment, nullptr);
  const BufferAssignment& ba = *a.assignment;
  const Dataflow& df = ba.dataflow();
  std::map<std::string, int64_t> offsets;
  for (ValueId v = 0; v < df.values().size(); ++v) {
    const std::string name(ba.module().instr(df.value(v).instruction).name);
    if (df.defined_at_top(v)) offsets[name] = ba.offset_of(v);
    if (df.value_index(v) == ShapeIndex{0}) offsets[name + "{0}"] = ba.offset_of(v);
  }
  EXPECT_EQ(offsets["cs{0}"], 0);
  EXPECT_EQ(offsets["cs2{0}"], 0);
  EXPECT_EQ(offsets["b"], 4096);
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 20480);
}

// A cross-program prefetch with no end-of-program prefetch after it is
// never freed: its chunk stays taken to the end of the program, so c,
// defined after cd's last use, cannot have offset 0. VMEM 8 KiB, not 4.
TEST(BufferAssignmentTest, TpuCrossProgramPrefetchNotFreedHoldsItsChunk) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"HLO(
HloModule cpp_kept, is_scheduled=true

ENTRY %main (p0: f32[8,128], p1: f32[8,128]) -> (f32[8,128], f32[8,128]) {
  %p0 = f32[8,128]{1,0:T(8,128)} parameter(0)
  %p1 = f32[8,128]{1,0:T(8,128)} parameter(1)
  %cs = (f32[8,128]{1,0:T(8,128)S(1)}, f32[8,128]{1,0:T(8,128)}, u32[]{:S(2)}) copy-start(%p1), cross_program_prefetch_index=0
  %cd = f32[8,128]{1,0:T(8,128)S(1)} copy-done(%cs)
  %y = f32[8,128]{1,0:T(8,128)} add(%p0, %cd)
  %c = f32[8,128]{1,0:T(8,128)S(1)} negate(%p0)
  %z = f32[8,128]{1,0:T(8,128)} negate(%c)
  ROOT %r = (f32[8,128]{1,0:T(8,128)}, f32[8,128]{1,0:T(8,128)}) tuple(%y, %z)
}
)HLO", *v5e);
  ASSERT_NE(a.assignment, nullptr);
  std::map<std::string, int64_t> offsets = TopLevelOffsets(*a.assignment);
  EXPECT_EQ(offsets["c"], 4096);
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8192);
}

// Memory-space assignment's live ranges keep a branch's result live
// through the later branches, to the conditional's output's last use: t,
// a temp of branch b1, cannot share the chunk of b0's result a (and so of
// the output buffer), though a is never read after b0. VMEM 8 KiB, not 4.
TEST(BufferAssignmentTest, TpuBranchResultsLiveThroughTheLaterBranches) {
  const std::unique_ptr<target::Target> v5e =
      target::MakeTpuTarget(target::FindTpuGeneration("v5e"));
  Assigned a = Assign(R"HLO(
HloModule cond_vmem, is_scheduled=true

%b0 (p: f32[8,128]) -> (f32[8,128]) {
  %p = f32[8,128]{1,0:T(8,128)} parameter(0)
  %a = f32[8,128]{1,0:T(8,128)S(1)} negate(%p)
  ROOT %ta = (f32[8,128]{1,0:T(8,128)S(1)}) tuple(%a)
}

%b1 (q: f32[8,128]) -> (f32[8,128]) {
  %q = f32[8,128]{1,0:T(8,128)} parameter(0)
  %t = f32[8,128]{1,0:T(8,128)S(1)} negate(%q)
  %u = f32[8,128]{1,0:T(8,128)} negate(%t)
  %r = f32[8,128]{1,0:T(8,128)S(1)} negate(%u)
  ROOT %tr = (f32[8,128]{1,0:T(8,128)S(1)}) tuple(%r)
}

ENTRY %main (i: s32[], x: f32[8,128]) -> f32[8,128] {
  %i = s32[]{:T(128)} parameter(0)
  %x = f32[8,128]{1,0:T(8,128)} parameter(1)
  %c = (f32[8,128]{1,0:T(8,128)S(1)}) conditional(%i, %x, %x), branch_computations={%b0, %b1}
  %g = f32[8,128]{1,0:T(8,128)S(1)} get-tuple-element(%c), index=0
  ROOT %o = f32[8,128]{1,0:T(8,128)} copy(%g)
}
)HLO", *v5e);
  ASSERT_NE(a.assignment, nullptr);
  std::map<std::string, int64_t> offsets = TopLevelOffsets(*a.assignment);
  EXPECT_EQ(offsets["a"], offsets["r"]);
  EXPECT_NE(offsets["t"], offsets["a"]);
  EXPECT_EQ(a.assignment->stats().color_bytes.at(1), 8192);
}

// A dynamic-update-slice writes into its operand 0: the broadcast and the
// update result are one buffer, the live-out output (1024 B), plus the
// 4-byte update and 4-byte index constants. Total = 1024 + 4 + 4 + 4.
TEST(BufferAssignmentTest, DynamicUpdateSliceIsInPlace) {
  Assigned a = Assign(R"(
HloModule dus, is_scheduled=true

ENTRY e {
  zero = f32[] constant(0)
  big = f32[256]{0} broadcast(zero), dimensions={}
  upd = f32[1]{0} parameter(0)
  i = s32[] constant(3)
  ROOT d = f32[256]{0} dynamic-update-slice(big, upd, i)
}
)");
  ASSERT_NE(a.assignment, nullptr);
  const AssignmentStats& st = a.assignment->stats();
  EXPECT_EQ(st.output_bytes, 1024);
  EXPECT_EQ(st.argument_bytes, 4);
  EXPECT_EQ(st.constant_bytes, 8);
  EXPECT_EQ(st.temp_bytes, 0);
  EXPECT_EQ(st.total_bytes, 1024 + 4 + 8);
}

// A donated parameter's allocation takes a chain of 100 in-place negates
// (each the last user of the one before), so it holds over a hundred slices
// and its interference check goes through the allocation's range index.
// k = reverse(n70) overlaps n70, which sits among those slices: k must get a
// heap temp of its own. Total = 1024 (parameter, aliased output) + 1024 (k).
TEST(BufferAssignmentTest, AllocationWithManySlicesStillRejectsAnOverlap) {
  std::string body = "  p0 = f32[256]{0} parameter(0)\n  n0 = f32[256]{0} negate(p0)\n";
  for (int k = 1; k < 100; ++k) {
    const std::string previous = "n" + std::to_string(k - 1);
    if (k == 71) {
      body += "  k = f32[256]{0} reverse(n70), dimensions={0}\n";
      body += "  n71 = f32[256]{0} add(n70, k)\n";
      continue;
    }
    body += "  n" + std::to_string(k) + " = f32[256]{0} negate(" + previous + ")\n";
  }
  Assigned a = Assign("HloModule chain, is_scheduled=true, "
                      "input_output_alias={ {}: (0, {}, may-alias) }\n\nENTRY e {\n" + body +
                      "  ROOT r = f32[256]{0} negate(n99)\n}\n");
  ASSERT_NE(a.assignment, nullptr);
  size_t most_slices = 0;
  for (const Allocation& alloc : a.assignment->allocations()) {
    most_slices = std::max(most_slices, alloc.slices.size());
  }
  EXPECT_GT(most_slices, 100u);
  const AssignmentStats& st = a.assignment->stats();
  EXPECT_EQ(st.temp_bytes, 1024);
  EXPECT_EQ(st.total_bytes, 2048);
}

// Fused bodies get no numbers, nodes or schedule steps; the instructions
// around them are numbered densely in id order, a fused body in between.
TEST(UnfusedIndexTest, NumbersInstructionsOutsideFusedBodies) {
  Assigned a = Assign(R"(
HloModule fused, is_scheduled=true

reducer {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

body {
  q = f32[8]{0} parameter(0)
  ROOT n = f32[8]{0} negate(q)
}

ENTRY e {
  p = f32[8]{0} parameter(0)
  f = f32[8]{0} fusion(p), kind=kLoop, calls=body
  c = f32[] constant(0)
  ROOT r = f32[] reduce(f, c), dimensions={0}, to_apply=reducer
}
)");
  ASSERT_NE(a.assignment, nullptr);
  const hlo::Module& m = a.modules.front();
  const UnfusedIndex index(m);
  std::vector<std::string> names;
  for (InstrId i : index.instructions()) names.emplace_back(m.instr(i).name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y", "s", "p", "f", "c", "r"}));
  EXPECT_EQ(index.size(), 7u);
  EXPECT_EQ(index.of(m.FindInstruction("q")), UnfusedIndex::kFused);
  EXPECT_EQ(index.of(m.FindInstruction("p")), 3u);
  EXPECT_EQ(index.of(m.FindInstruction("r")), 6u);

  const Dataflow& df = a.assignment->dataflow();
  EXPECT_EQ(df.node_count(m.FindInstruction("n")), 0u);
  EXPECT_EQ(df.top_value(m.FindInstruction("n")), kNone);
  EXPECT_EQ(df.node_count(m.FindInstruction("f")), 1u);
  const FlatSchedule& s = a.assignment->schedule();
  EXPECT_EQ(s.time_of(m.FindInstruction("n")), -1);
  EXPECT_EQ(s.time_of(m.FindInstruction("p")), 0);
  EXPECT_EQ(s.time_of(m.FindInstruction("r")), 3);
  EXPECT_EQ(s.time_of(m.FindInstruction("x")), -1);  // runs inside the reduce
}

// Event counter times: X=[0,4], Y=[1,2], Z=[3,5] (Alloc X, Alloc Y, Free Y,
// Alloc Z, Free X, Free Z). Both orders place X at 0, then Z (overlaps X)
// after X rounded up to 64, at 128, then Y (overlaps X, not Z) also at 128.
// Heap = 128 + 100 = 228; live bytes peak at 200 (X with Y, or X with Z).
TEST(HeapSimulatorTest, BestFitWithAlignment) {
  const std::vector<HeapEvent> events = {
      {HeapEvent::kAlloc, 0, 100, 0}, {HeapEvent::kAlloc, 1, 50, 0},
      {HeapEvent::kFree, 1, 50, 0},   {HeapEvent::kAlloc, 2, 100, 0},
      {HeapEvent::kFree, 0, 100, 0},  {HeapEvent::kFree, 2, 100, 0},
  };
  const HeapResult heap = BestHeap(events, 3, 64);
  EXPECT_EQ(heap.heap_size, 228);
  EXPECT_EQ(heap.offsets[0], 0);
  EXPECT_EQ(heap.offsets[2], 128);
  EXPECT_EQ(heap.offsets[1], 128);
  EXPECT_EQ(LiveBytesPeak(events, 3), 200);
}

// XLA:TPU's HBM heap: each buffer placed when it is allocated, best fit
// among the chunks live then. A multi-output fusion's leaves S (16 B, dies
// first), B (1000 B) and M (100 B, dies last), allocated in that order:
// S at 0, B at 64, M at 64 + 1024 = 1088; T (50 B), allocated after S is
// freed, takes S's gap at 0. The decreasing-lifetime order places the
// equally long B, M, S by size instead: B at 0, M at 1024, S at 1152.
TEST(HeapSimulatorTest, AllocationOrderPlacesEachBufferAsItComes) {
  const std::vector<HeapEvent> events = {
      {HeapEvent::kAlloc, 0, 16, 0},   {HeapEvent::kAlloc, 1, 1000, 0},
      {HeapEvent::kAlloc, 2, 100, 0},  {HeapEvent::kFree, 0, 16, 0},
      {HeapEvent::kAlloc, 3, 50, 0},   {HeapEvent::kFree, 1, 1000, 0},
      {HeapEvent::kFree, 2, 100, 0},   {HeapEvent::kFree, 3, 50, 0},
  };
  const HeapResult online = BestHeap(events, 4, 64, target::HeapOrders::kAllocationOnly);
  EXPECT_EQ(online.offsets, (std::vector<int64_t>{0, 64, 1088, 0}));
  EXPECT_EQ(online.heap_size, 1188);
  const HeapResult temporal =
      GlobalDecreasingSizeBestFit(events, 4, 64, HeapOrder::kTemporal);
  EXPECT_EQ(temporal.offsets[1], 0);
  EXPECT_EQ(temporal.offsets[2], 1024);
  EXPECT_EQ(temporal.offsets[0], 1152);
  // T then goes to S's slot, at 1152: 1202 B. Both offline orders need
  // that; the decreasing-size one alone too.
  EXPECT_EQ(temporal.heap_size, 1202);
  EXPECT_EQ(BestHeap(events, 4, 64, target::HeapOrders::kSmallerOfBoth).heap_size, 1202);
  const HeapResult spatial = GlobalDecreasingSizeBestFit(events, 4, 64, HeapOrder::kSpatial);
  EXPECT_EQ(spatial.offsets[1], 0);  // the largest lowest
  EXPECT_EQ(spatial.heap_size, 1202);
}

// ShareWith puts a buffer in another's chunk; the shared chunk counts once.
TEST(HeapSimulatorTest, SharedChunkCountsOnce) {
  const std::vector<HeapEvent> events = {
      {HeapEvent::kAlloc, 0, 64, 0},
      {HeapEvent::kFree, 0, 64, 0},
      {HeapEvent::kShareWith, 1, 64, 0},
      {HeapEvent::kFree, 1, 64, 0},
  };
  const HeapResult heap = BestHeap(events, 2, 64);
  EXPECT_EQ(heap.heap_size, 64);
  EXPECT_EQ(heap.offsets[1], heap.offsets[0]);
  EXPECT_EQ(LiveBytesPeak(events, 2), 64);
}

// Thousands of buffers, so the placed-chunk search spans many blocks and
// tree levels: in both orders no two buffers live at once may overlap, and
// a buffer placed on top of the others never leaves the heap's bounds.
TEST(HeapSimulatorTest, RandomLifetimesNeverOverlap) {
  constexpr uint32_t kBuffers = 3000;
  std::mt19937 rng(7);
  std::vector<std::vector<uint32_t>> starting(kBuffers), ending(kBuffers);
  std::vector<int64_t> size(kBuffers);
  for (uint32_t id = 0; id < kBuffers; ++id) {
    const uint32_t start = rng() % kBuffers;
    const uint32_t end = std::min<uint32_t>(kBuffers - 1, start + rng() % 200);
    starting[start].push_back(id);
    ending[end].push_back(id);
    size[id] = 1 + static_cast<int64_t>(rng() % 5000);
  }
  std::vector<HeapEvent> events;
  std::vector<int64_t> born(kBuffers), died(kBuffers);
  for (uint32_t t = 0; t < kBuffers; ++t) {
    for (uint32_t id : starting[t]) {
      born[id] = static_cast<int64_t>(events.size());
      events.push_back({HeapEvent::kAlloc, id, size[id], 0});
    }
    for (uint32_t id : ending[t]) {
      died[id] = static_cast<int64_t>(events.size());
      events.push_back({HeapEvent::kFree, id, size[id], 0});
    }
  }
  for (HeapOrder order : {HeapOrder::kSpatial, HeapOrder::kTemporal, HeapOrder::kAllocation}) {
    const HeapResult heap = GlobalDecreasingSizeBestFit(events, kBuffers, 64, order);
    int overlaps = 0;
    for (uint32_t a = 0; a < kBuffers; ++a) {
      ASSERT_GE(heap.offsets[a], 0);
      ASSERT_EQ(heap.offsets[a] % 64, 0);
      ASSERT_LE(heap.offsets[a] + size[a], heap.heap_size);
      for (uint32_t b = a + 1; b < kBuffers; ++b) {
        const bool live_together = born[a] < died[b] && born[b] < died[a];
        const bool share_bytes = heap.offsets[a] < heap.offsets[b] + size[b] &&
                                 heap.offsets[b] < heap.offsets[a] + size[a];
        overlaps += live_together && share_bytes;
      }
    }
    EXPECT_EQ(overlaps, 0) << static_cast<int>(order);
  }
}

}  // namespace
}  // namespace hlomem::analysis
