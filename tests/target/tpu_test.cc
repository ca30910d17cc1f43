#include "lib/target/tpu.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/hlo/text_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem::target {
namespace {

using ::testing::StartsWith;

// The generation's name, "(none)" for nullptr, "(error)" on an error.
std::string GenerationOf(absl::string_view text) {
  const absl::StatusOr<const TpuGeneration*> g = ParseTpuTargetArguments("t.txt", text);
  if (!g.ok()) return "(error)";
  return *g == nullptr ? "(none)" : std::string((*g)->name);
}

// A target_arguments.txt as XLA:TPU writes it, trimmed.
std::string Topology(absl::string_view version, absl::string_view variant = "") {
  return absl::StrCat("replica_count: 1\ntpu_topology_args {\n  version: ", version, "\n",
                      variant.empty() ? "" : absl::StrCat("  variant: \"", variant, "\"\n"),
                      "  chips_per_host_bounds {\n    x: 2\n    y: 2\n    z: 1\n  }\n}\n");
}

// The bytes XLA:TPU gives the buffer of `shape` (text), through a module
// whose parameter has that shape.
int64_t TpuBytes(absl::string_view shape) {
  absl::StatusOr<std::vector<hlo::Module>> modules = hlo::ParseHloString(absl::StrCat(
      "HloModule m\n\nENTRY e {\n  ROOT p = ", shape, " parameter(0)\n}\n"));
  EXPECT_TRUE(modules.ok()) << modules.status();
  if (!modules.ok()) return -1;
  const hlo::Module& m = modules->front();
  return MakeTpuTarget(FindTpuGeneration("v5p"))->BufferBytes(m.shapes, m.instr(m.comp(m.entry).root).shape);
}

TEST(TpuTargetTest, ASplitArrayTakesItsLargestPiece) {
  // XLA:TPU's own sizes (testdata/accel/tpu_v5p/scan_rnn): 2 MiB, not 4.
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)}"), 4 << 20);
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)SC(0:512)}"), 2 << 20);
  // Uneven pieces: the largest, rows 256 to 1024.
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)SC(0:256)}"), 3 << 20);
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)SC(0:128,640)}"), 2 << 20);
  // A malformed split is ignored: the whole array.
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)SC(0:2048)}"), 4 << 20);
  EXPECT_EQ(TpuBytes("f32[1024,1024]{1,0:T(8,128)S(1)SC(5:512)}"), 4 << 20);
}

TEST(TpuTargetTest, HostFlagsTakeAPage) {
  EXPECT_EQ(TpuBytes("s32[2]{0:S(4)}"), 4096);
  EXPECT_EQ(MakeTpuTarget(nullptr)->Space(4).name, "host");
  EXPECT_FALSE(MakeTpuTarget(nullptr)->Space(4).in_memory_analysis);
}

TEST(TpuTargetArgumentsTest, CodeNamesToGenerations) {
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_VIPERFISH", "lite")), "v5e");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_VIPERFISH")), "v5p");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_PUFFERFISH")), "v4");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_GHOSTLITE")), "v6e");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_JELLYFISH")), "v2");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_DRAGONFISH")), "v3");
  // v4 lite (v4i) and generations hlomem does not know name no device.
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_PUFFERFISH", "lite")), "(none)");
  EXPECT_EQ(GenerationOf(Topology("TPU_VERSION_SOMETHING_NEW")), "(none)");
  EXPECT_EQ(GenerationOf("replica_count: 1\n"), "(none)");
  EXPECT_EQ(GenerationOf(""), "(none)");
  // Only tpu_topology_args' own version counts.
  EXPECT_EQ(GenerationOf("other { version: TPU_VERSION_VIPERFISH }"), "(none)");
}

TEST(TpuTargetArgumentsTest, FoundGenerationCarriesItsMemory) {
  const absl::StatusOr<const TpuGeneration*> v5e =
      ParseTpuTargetArguments("t.txt", Topology("TPU_VERSION_VIPERFISH", "lite"));
  ASSERT_TRUE(v5e.ok());
  ASSERT_NE(*v5e, nullptr);
  EXPECT_EQ((*v5e)->hbm_bytes, int64_t{16} << 30);
  EXPECT_EQ((*v5e)->program_hbm_bytes, (int64_t{15} << 30) + (int64_t{768} << 20));
  EXPECT_EQ(*v5e, FindTpuGeneration("v5e"));
}

TEST(TpuTargetArgumentsTest, MalformedTextIsAnError) {
  const absl::StatusOr<const TpuGeneration*> g =
      ParseTpuTargetArguments("args.txt", "tpu_topology_args {\n  version: TPU_VERSION_VIPERFISH\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(g.status().message()),
              StartsWith("args.txt:3:1: error: unterminated message: expected '}'"));
}

// Every target_arguments.txt of the accelerator test data names its
// directory's generation. Found by suffix, not by a file's hashed name, so a
// regenerated dump cannot drop out of the test unseen: each generation's
// directory must yield nearly all of its cases (81 to 95 files committed).
TEST(TpuTargetArgumentsTest, AccelTestData) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(HLOMEM_TESTDATA_DIR) / "accel";
  constexpr absl::string_view kSuffix = ".target_arguments.txt";
  for (const std::string generation : {"v4", "v5e", "v5p", "v6e"}) {
    const fs::path dir = root / ("tpu_" + generation);
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    int read = 0;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !absl::EndsWith(name, kSuffix)) continue;
      std::ifstream in(entry.path());
      ASSERT_TRUE(in) << entry.path();
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(GenerationOf(text.str()), generation) << entry.path();
      ++read;
    }
    EXPECT_GE(read, 80) << "too few *" << kSuffix << " files under " << dir;
  }
}

TEST(FindTpuGenerationTest, Spellings) {
  // jax's device_kind ("TPU v5 lite", "TPU v5"), topology names
  // ("v5litepod"), and the short names; any case.
  for (const char* name : {"v5e", "V5E", "TPU v5 lite", "v5lite", "v5litepod", "tpuv5e"}) {
    ASSERT_NE(FindTpuGeneration(name), nullptr) << name;
    EXPECT_EQ(FindTpuGeneration(name)->name, "v5e") << name;
  }
  for (const char* name : {"v5p", "TPU v5", "TPU v5p", "v5"}) {
    ASSERT_NE(FindTpuGeneration(name), nullptr) << name;
    EXPECT_EQ(FindTpuGeneration(name)->name, "v5p") << name;
  }
  for (const char* name : {"v6e", "TPU v6 lite", "v6litepod", "Trillium"}) {
    ASSERT_NE(FindTpuGeneration(name), nullptr) << name;
    EXPECT_EQ(FindTpuGeneration(name)->name, "v6e") << name;
  }
  EXPECT_EQ(FindTpuGeneration("TPU v4")->name, "v4");
  EXPECT_EQ(FindTpuGeneration("v3")->name, "v3");
  EXPECT_EQ(FindTpuGeneration("v2")->name, "v2");
}

TEST(FindTpuGenerationTest, UnknownNamesGiveNull) {
  // The --target spelling "tpu-v6e" is ResolveTarget's to strip.
  for (const char* name : {"", "tpu", "v7", "v5x", "tpu-v6e", "h100", "v4 lite", "cpu"}) {
    EXPECT_EQ(FindTpuGeneration(name), nullptr) << name;
  }
}

TEST(TpuTargetTest, NamesAndDevice) {
  const std::unique_ptr<Target> v5p = MakeTpuTarget(FindTpuGeneration("v5p"));
  EXPECT_EQ(v5p->backend(), Backend::kTpu);
  EXPECT_EQ(v5p->name(), "tpu v5p");
  ASSERT_TRUE(v5p->device().has_value());
  EXPECT_EQ(v5p->device()->capacity, FindTpuGeneration("v5p")->hbm_bytes);
  const std::unique_ptr<Target> bare = MakeTpuTarget(nullptr);
  EXPECT_EQ(bare->name(), "tpu");
  EXPECT_FALSE(bare->device().has_value());
}

// HBM is laid out as XLA:TPU allocates, online; VMEM by memory-space
// assignment's orders, SMEM by the smaller of the offline two. Within 2.5 GiB
// of the HBM XLA:TPU offers (which a bare target does not know) it assigns
// again, tighter: temps may enter donated parameters, and HBM is laid out by
// decreasing size.
TEST(TpuTargetTest, HeapOrdersAndTightAssignment) {
  const std::unique_ptr<Target> v6e = MakeTpuTarget(FindTpuGeneration("v6e"));
  EXPECT_EQ(v6e->heap_orders(0), HeapOrders::kAllocationOnly);
  EXPECT_EQ(v6e->heap_orders(1), HeapOrders::kMemorySpaceAssignment);
  EXPECT_EQ(v6e->heap_orders(2), HeapOrders::kSmallerOfBoth);
  EXPECT_FALSE(v6e->TempsShareOutputAllocations());
  EXPECT_TRUE(v6e->TupleTableAssignedLast(5));   // a while loop's carried tuple
  EXPECT_FALSE(v6e->TupleTableAssignedLast(1));  // any other table: by its size
  EXPECT_FALSE(MakeCpuTarget()->TupleTableAssignedLast(5));
  EXPECT_TRUE(v6e->TupleTablesInScheduleOrder(/*tight=*/false));
  EXPECT_FALSE(v6e->TupleTablesInScheduleOrder(/*tight=*/true));  // by size
  EXPECT_FALSE(MakeCpuTarget()->TupleTablesInScheduleOrder(false));
  EXPECT_EQ(v6e->TightAssignmentAbove(),
            FindTpuGeneration("v6e")->program_hbm_bytes - (int64_t{5} << 29));  // 2.5 GiB
  EXPECT_EQ(v6e->tight_heap_orders(0), HeapOrders::kSmallerOfBoth);
  EXPECT_EQ(v6e->tight_heap_orders(1), HeapOrders::kMemorySpaceAssignment);
  EXPECT_EQ(MakeTpuTarget(nullptr)->TightAssignmentAbove(), std::nullopt);
  // Memory-space assignment's budgets: VMEM on v5e and v6e, colour 3 on v4.
  const std::optional<HeapBudget> vmem = v6e->heap_budget(1);
  ASSERT_TRUE(vmem.has_value());
  EXPECT_EQ(vmem->bytes, int64_t{96} << 20);
  EXPECT_EQ(vmem->max_repacks, 4);
  EXPECT_EQ(MakeTpuTarget(FindTpuGeneration("v5e"))->heap_budget(1)->bytes, int64_t{112} << 20);
  EXPECT_EQ(MakeTpuTarget(FindTpuGeneration("v4"))->heap_budget(3)->bytes, int64_t{64} << 20);
  EXPECT_EQ(v6e->heap_budget(0), std::nullopt);
  EXPECT_EQ(MakeTpuTarget(FindTpuGeneration("v5p"))->heap_budget(1), std::nullopt);
  EXPECT_EQ(MakeTpuTarget(nullptr)->heap_budget(1), std::nullopt);
  EXPECT_EQ(MakeCpuTarget()->heap_budget(0), std::nullopt);
  EXPECT_EQ(MakeCpuTarget()->TightAssignmentAbove(), std::nullopt);
}

// memory_analysis()'s peak counts the memories placed by memory-space
// assignment (VMEM, v4's colour 3) value by value; HBM and SMEM as the
// heap simulator shares them.
TEST(TpuTargetTest, PeakCountsMemorySpaceAssignedValues) {
  const std::unique_ptr<Target> v4 = MakeTpuTarget(FindTpuGeneration("v4"));
  EXPECT_FALSE(v4->PeakCountsValues(0));
  EXPECT_TRUE(v4->PeakCountsValues(1));
  EXPECT_FALSE(v4->PeakCountsValues(2));
  EXPECT_TRUE(v4->PeakCountsValues(3));
  EXPECT_FALSE(MakeCpuTarget()->PeakCountsValues(0));
}

// Heap alignment per memory space: v4's colour 3, placed by memory-space
// assignment as VMEM is, in 4 KiB steps as VMEM (XLA puts 71 of its 948
// colour-3 chunks at a multiple of 4 KiB that is not one of 16 KiB).
TEST(TpuTargetTest, HeapAlignmentPerMemorySpace) {
  const std::unique_ptr<Target> v4 = MakeTpuTarget(FindTpuGeneration("v4"));
  EXPECT_EQ(v4->Alignment(0), 16384);
  EXPECT_EQ(v4->Alignment(1), 4096);
  EXPECT_EQ(v4->Alignment(2), 4);
  EXPECT_EQ(v4->Alignment(3), 4096);
  EXPECT_EQ(v4->Alignment(6), 512);
}

// The heap simulator hands a dying operand's chunk to its user in HBM and
// SMEM, never in the memories memory-space assignment places; there a
// branch's result stays live to the conditional output's last use.
TEST(TpuTargetTest, MemorySpaceAssignedHeapsKeepOperandsAndBranchResults) {
  const std::unique_ptr<Target> v4 = MakeTpuTarget(FindTpuGeneration("v4"));
  EXPECT_TRUE(v4->HeapReusesOperandBuffers(0));
  EXPECT_FALSE(v4->HeapReusesOperandBuffers(1));
  EXPECT_TRUE(v4->HeapReusesOperandBuffers(2));
  EXPECT_FALSE(v4->HeapReusesOperandBuffers(3));
  EXPECT_TRUE(MakeCpuTarget()->HeapReusesOperandBuffers(1));
  EXPECT_FALSE(v4->BranchResultsLiveToTheConditionalsEnd(0));
  EXPECT_TRUE(v4->BranchResultsLiveToTheConditionalsEnd(1));
  EXPECT_TRUE(v4->BranchResultsLiveToTheConditionalsEnd(3));
  EXPECT_FALSE(MakeCpuTarget()->BranchResultsLiveToTheConditionalsEnd(1));
}

}  // namespace
}  // namespace hlomem::target
