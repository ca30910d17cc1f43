#include "lib/dump/dump_file_name.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace hlomem::dump {
namespace {

struct NameCase {
  std::string basename;
  std::string prefix;
  int64_t module_id;
  std::string module_name;
  std::string suffix;
  std::string backend;
  Stage stage;
  FileKind kind;
  bool compressed;
};

void PrintTo(const NameCase& c, std::ostream* os) { *os << c.basename; }

class ParseDumpFileNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(ParseDumpFileNameTest, SplitsNameAndSuffix) {
  const NameCase& expected = GetParam();
  const std::optional<DumpFileName> name = ParseDumpFileName(expected.basename);
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->prefix, expected.prefix);
  EXPECT_EQ(name->module_id, expected.module_id);
  EXPECT_EQ(name->module_name, expected.module_name);
  EXPECT_EQ(name->suffix, expected.suffix);
  EXPECT_EQ(name->backend, expected.backend);
  EXPECT_EQ(StageName(name->stage), StageName(expected.stage));
  EXPECT_EQ(FileKindName(name->kind), FileKindName(expected.kind));
  EXPECT_EQ(name->compressed, expected.compressed);
}

constexpr Stage kAfter = Stage::kAfterOptimizations;
constexpr Stage kBefore = Stage::kBeforeOptimizations;
constexpr Stage kPass = Stage::kIntermediate;
constexpr Stage kUnknown = Stage::kUnknown;

// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Names, ParseDumpFileNameTest,
    ::testing::Values(
        // JAX on CPU, every file of one after-optimizations dump.
        NameCase{"module_0001.jit_f.cpu_after_optimizations.txt", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloText, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kBufferAssignment, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-buffer-assignment-values.txt", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kBufferAssignmentValues, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-live-range.txt", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kLiveRange, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kMemoryUsageReport, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-memory-usage-report.pb", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kMemoryUsageReportProto, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations-memory-usage-report.pb.gz", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kMemoryUsageReportProto, true},
        NameCase{"module_0001.jit_f.cpu_after_optimizations.hlo.pb", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloProto, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations.hlo.pb.gz", "", 1, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloProto, true},
        NameCase{"module_0001.jit_f.before_optimizations.txt", "", 1, "jit_f", "before_optimizations", "", kBefore, FileKind::kHloText, false},
        // GPU: the compute capability holds a dot.
        NameCase{"module_0042.jit_train_step.sm_9.0_gpu_after_optimizations.txt", "", 42, "jit_train_step", "sm_9.0_gpu_after_optimizations", "sm_9.0", kAfter, FileKind::kHloText, false},
        NameCase{"module_0042.jit_train_step.sm_12.0_gpu_after_optimizations-buffer-assignment.txt", "", 42, "jit_train_step", "sm_12.0_gpu_after_optimizations", "sm_12.0", kAfter, FileKind::kBufferAssignment, false},
        NameCase{"module_0052.jit_apply_fn.gfx942_gpu_after_optimizations.txt", "", 52, "jit_apply_fn", "gfx942_gpu_after_optimizations", "gfx942", kAfter, FileKind::kHloText, false},
        // A feature letter after the minor version: sm_90a (H100), sm_100a (B200).
        NameCase{"module_0001.jit_f.sm_9.0a_gpu_after_optimizations.txt", "", 1, "jit_f", "sm_9.0a_gpu_after_optimizations", "sm_9.0a", kAfter, FileKind::kHloText, false},
        NameCase{"module_0001.jit_f.sm_10.0a_gpu_after_optimizations-buffer-assignment.txt", "", 1, "jit_f", "sm_10.0a_gpu_after_optimizations", "sm_10.0a", kAfter, FileKind::kBufferAssignment, false},
        NameCase{"module_0001.jit_f.sm_10.0f_gpu_after_optimizations-memory-usage-report.txt", "", 1, "jit_f", "sm_10.0f_gpu_after_optimizations", "sm_10.0f", kAfter, FileKind::kMemoryUsageReport, false},
        // ROCm: the gfx architecture, no dot.
        NameCase{"module_0001.jit_f.gfx942_gpu_after_optimizations.txt", "", 1, "jit_f", "gfx942_gpu_after_optimizations", "gfx942", kAfter, FileKind::kHloText, false},
        NameCase{"module_0001.jit_f.gfx90a_gpu_after_optimizations-buffer-assignment.txt", "", 1, "jit_f", "gfx90a_gpu_after_optimizations", "gfx90a", kAfter, FileKind::kBufferAssignment, false},
        // XLA:TPU (deviceless compile): the backend is a token of its own,
        // "cl_" and the compiler's changelist number, before the stage.
        NameCase{"module_0000.jit_f.cl_1004524046.after_optimizations.txt", "", 0, "jit_f", "cl_1004524046.after_optimizations", "cl_1004524046", kAfter, FileKind::kHloText, false},
        NameCase{"module_0000.jit_sort_widened.cl_1004524046.after_optimizations-buffer-assignment.txt", "", 0, "jit_sort_widened", "cl_1004524046.after_optimizations", "cl_1004524046", kAfter, FileKind::kBufferAssignment, false},
        NameCase{"module_0000.jit_f.cl_1004524046.after_optimizations-memory-usage-report.txt", "", 0, "jit_f", "cl_1004524046.after_optimizations", "cl_1004524046", kAfter, FileKind::kMemoryUsageReport, false},
        NameCase{"module_0000.cl_1004524046.after_optimizations.txt", "", 0, "", "cl_1004524046.after_optimizations", "cl_1004524046", kAfter, FileKind::kHloText, false},
        // Every stage of a TPU module carries the token, so the stages pair.
        NameCase{"module_0000.jit_f.cl_1004524046.before_optimizations.txt", "", 0, "jit_f", "cl_1004524046.before_optimizations", "cl_1004524046", kBefore, FileKind::kHloText, false},
        NameCase{"module_0000.jit_f.cl_1004524046.after_optimizations_after_buffer_assignment.txt", "", 0, "jit_f", "cl_1004524046.after_optimizations_after_buffer_assignment", "cl_1004524046", kAfter, FileKind::kHloText, false},
        NameCase{"module_0002.jit_f.cl_1004524046.0011.tpu-pipeline.after_dce.before_cse.txt", "", 2, "jit_f", "cl_1004524046.0011.tpu-pipeline.after_dce.before_cse", "cl_1004524046", kPass, FileKind::kHloText, false},
        // Only cl_ and digits make a TPU token: anything else stays in the name.
        NameCase{"module_0000.jit_f.cl_x1.before_optimizations.txt", "", 0, "jit_f.cl_x1", "before_optimizations", "", kBefore, FileKind::kHloText, false},
        NameCase{"module_0000.jit_f.cl_x1.after_optimizations.txt", "", 0, "jit_f.cl_x1", "after_optimizations", "", kAfter, FileKind::kHloText, false},
        // Module names with dots and digits.
        NameCase{"module_0007.SyncTensorsGraph.1760.sm_8.0_gpu_after_optimizations.txt", "", 7, "SyncTensorsGraph.1760", "sm_8.0_gpu_after_optimizations", "sm_8.0", kAfter, FileKind::kHloText, false},
        NameCase{"module_0007.SyncTensorsGraph.1760.before_optimizations.txt", "", 7, "SyncTensorsGraph.1760", "before_optimizations", "", kBefore, FileKind::kHloText, false},
        NameCase{"module_0123.cluster_4__XlaCompiledKernel_true__XlaNumConstantArgs_723__XlaNumResourceArgs_0_.4154.sm_7.0_gpu_after_optimizations.txt", "", 123, "cluster_4__XlaCompiledKernel_true__XlaNumConstantArgs_723__XlaNumResourceArgs_0_.4154", "sm_7.0_gpu_after_optimizations", "sm_7.0", kAfter, FileKind::kHloText, false},
        // A module name that itself mentions the marker words.
        NameCase{"module_0003.jit_after_optimizations_demo.cpu_after_optimizations.txt", "", 3, "jit_after_optimizations_demo", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloText, false},
        // Pre-2021 TensorFlow: no module name, no backend.
        NameCase{"module_0123.after_optimizations.txt", "", 123, "", "after_optimizations", "", kAfter, FileKind::kHloText, false},
        NameCase{"module_0123.after_optimizations-buffer-assignment.txt", "", 123, "", "after_optimizations", "", kAfter, FileKind::kBufferAssignment, false},
        // Name dropped because the file name would exceed 255 characters.
        NameCase{"module_0009.cpu_after_optimizations.txt", "", 9, "", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloText, false},
        // TPU-style variants.
        NameCase{"module_0005.jit_f.tpu_after_optimizations.txt", "", 5, "jit_f", "tpu_after_optimizations", "tpu", kAfter, FileKind::kHloText, false},
        NameCase{"module_0005.jit_f.after_optimizations_after_buffer_assignment.txt", "", 5, "jit_f", "after_optimizations_after_buffer_assignment", "", kAfter, FileKind::kHloText, false},
        // Timestamp prefix, and ids beyond four digits.
        NameCase{"1700000000123456.module_12345.jit_f.cpu_after_optimizations.txt", "1700000000123456", 12345, "jit_f", "cpu_after_optimizations", "cpu", kAfter, FileKind::kHloText, false},
        // Renamed copies (as in the ROCm corpus) keep their tag as prefix.
        NameCase{"resnet50__module_1654.jit_train_step.before_optimizations.txt", "resnet50__", 1654, "jit_train_step", "before_optimizations", "", kBefore, FileKind::kHloText, false},
        // Pass dumps and auto-sharding dumps.
        NameCase{"module_0001.jit_f.0003.cpu-pipeline.after_simplify.before_dce.txt", "", 1, "jit_f", "0003.cpu-pipeline.after_simplify.before_dce", "", kPass, FileKind::kHloText, false},
        NameCase{"module_0001.SyncTensorsGraph.17.0012.spmd.after_sharding-propagation.before_spmd-partitioning.txt", "", 1, "SyncTensorsGraph.17", "0012.spmd.after_sharding-propagation.before_spmd-partitioning", "", kPass, FileKind::kHloText, false},
        NameCase{"module_0001.jit_f.after_auto_spmd_sharding.txt", "", 1, "jit_f", "after_auto_spmd_sharding", "", kPass, FileKind::kHloText, false},
        // Known other files: ignored quietly.
        NameCase{"module_0001.jit_f.cpu_after_optimizations.thunk_sequence.txt", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations.ir-no-opt.ll", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.obj-file.part_00.o", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.sm_9.0_gpu_after_optimizations.ptx", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.before_optimizations.dot", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.cpu_after_optimizations.html", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.debug_options", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.metadata.textproto", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.autotune_results.pbtxt", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false},
        NameCase{"module_0001.jit_f.buffer_assignment", "", 1, "", "", "", kUnknown, FileKind::kIgnored, false}));
// clang-format on

TEST(ParseDumpFileNameTest, RejectsNamesWithoutModuleId) {
  for (const char* basename :
       {"model.hlo", "foo.hlo.txt", "x.pb", "execution_options.txt",
        "execution_options.pb", "module_.txt", "module_12", "module_12txt", "",
        "module_", "my_module_x.txt",
        "module_9999999999999999999999.jit_f.cpu_after_optimizations.txt"}) {
    EXPECT_FALSE(ParseDumpFileName(basename).has_value()) << basename;
  }
}

TEST(ParseDumpFileNameTest, ModuleStemRebuildsTheCommonPart) {
  const std::optional<DumpFileName> name = ParseDumpFileName(
      "17.module_0042.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->ModuleStem(), "17.module_0042.jit_train_step");
  const std::optional<DumpFileName> old =
      ParseDumpFileName("module_0003.after_optimizations.txt");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->ModuleStem(), "module_0003");
}

TEST(ParseDumpFileNameTest, OddBytesDoNotCrash) {
  // Names on Linux are arbitrary bytes.
  const std::string name(
      "module_0001.\xff\xfe\x80.cpu_after_optimizations.txt");
  const std::optional<DumpFileName> parsed = ParseDumpFileName(name);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->module_name, "\xff\xfe\x80");
  EXPECT_FALSE(ParseDumpFileName(std::string("\0\0module_1", 10)).has_value());
}

TEST(GuessStandaloneFileKindTest, UsesTheEnding) {
  EXPECT_EQ(GuessStandaloneFileKind("model.hlo"), FileKind::kHloText);
  EXPECT_EQ(GuessStandaloneFileKind("foo.hlo.txt"), FileKind::kHloText);
  EXPECT_EQ(GuessStandaloneFileKind("x.pb"), FileKind::kHloProto);
  EXPECT_EQ(GuessStandaloneFileKind("x.pb.gz"), FileKind::kHloProto);
  EXPECT_EQ(GuessStandaloneFileKind("x-buffer-assignment.txt"),
            FileKind::kBufferAssignment);
  EXPECT_EQ(GuessStandaloneFileKind("x-memory-usage-report.txt"),
            FileKind::kMemoryUsageReport);
}

}  // namespace
}  // namespace hlomem::dump
