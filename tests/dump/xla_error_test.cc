// The out-of-memory messages of XLA:TPU (compile time and runtime) and
// XLA:GPU, read from real error texts (testdata/accel) and from the
// formats users paste.
#include "lib/dump/xla_error.h"

#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem::dump {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

std::string ReadTestdata(const std::string& relative) {
  std::ifstream in(std::string(HLOMEM_TESTDATA_DIR) + "/" + relative);
  EXPECT_TRUE(in) << relative;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(XlaOomErrorTest, CompileTimeHbmOomFromARealCompile) {
  const std::string text = ReadTestdata("accel/tpu_v5e/oom_mlp_adam_over/error.txt");
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("error.txt", text);
  ASSERT_TRUE(errors.ok()) << errors.status().message();
  ASSERT_EQ(errors->size(), 1u);
  const XlaOomError& e = errors->front();
  EXPECT_EQ(e.kind, XlaOomError::Kind::kCompileTimeHbmOom);
  EXPECT_EQ(e.code, "E1000");
  EXPECT_EQ(e.memory, "HBM");
  EXPECT_EQ(e.module_name, "jit_mlp_adam_train_step");
  EXPECT_EQ(e.line, 1);
  // "(20.75G) exceeds available HBM (15.75G)", binary gigabytes.
  EXPECT_EQ(e.needed_bytes, 20 * kGiB + 3 * kGiB / 4);
  EXPECT_EQ(e.available_bytes, 15 * kGiB + 3 * kGiB / 4);
  // Two decimals of a GiB: within 0.005 GiB either way.
  EXPECT_EQ(e.rounding_bytes, (kGiB + 199) / 200);
}

TEST(XlaOomErrorTest, TpuRuntimeAllocationAndMemoryName) {
  const std::string log =
      "Traceback (most recent call last):\n"
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: "
      "Attempting to allocate 8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)\n";
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("log", log);
  ASSERT_TRUE(errors.ok());
  ASSERT_EQ(errors->size(), 1u);
  const XlaOomError& e = errors->front();
  EXPECT_EQ(e.kind, XlaOomError::Kind::kTpuRuntime);
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.needed_bytes, 8 * (int64_t{1} << 20));
  EXPECT_EQ(e.available_bytes, static_cast<int64_t>(6.43 * (1 << 20) + 0.5));
  EXPECT_EQ(e.memory, "0x0x1_HBM0");
}

TEST(XlaOomErrorTest, GpuAndBfcAllocationFailures) {
  const std::string log =
      "E external/xla/xla/pjrt/gpu/se_gpu_pjrt_client.cc] Out of memory while trying to allocate "
      "34359738368 bytes.\n"
      "W bfc_allocator.cc] Allocator (GPU_0_bfc) ran out of memory trying to allocate 8.00GiB "
      "(rounded to 8589934592)requested by op\n";
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("log", log);
  ASSERT_TRUE(errors.ok());
  ASSERT_EQ(errors->size(), 2u);
  EXPECT_EQ((*errors)[0].kind, XlaOomError::Kind::kGpuAllocation);
  EXPECT_EQ((*errors)[0].needed_bytes, 32 * kGiB);
  EXPECT_EQ((*errors)[1].needed_bytes, 8 * kGiB);  // the exact "rounded to" figure
  EXPECT_EQ((*errors)[1].rounding_bytes, 0);
}

// The other E1000 texts and E1001 as XLA's own error pages print them
// (openxla/xla docs/errors/error_1000.md and error_1001.md).
TEST(XlaOomErrorTest, DocumentedCompileTimeForms) {
  const std::string text =
      "RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. "
      "Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.\n"
      "RESOURCE_EXHAUSTED: Compilation failure: Aborting compilation early because it's unlikely to "
      "have enough memory. Requires 3.84T, has 90.96G available. If more detailed logging is desired, "
      "set --xla_tpu_impure_oom_fast_exit_threshold=-1\n"
      "XlaRuntimeError: RESOURCE_EXHAUSTED: Allocation (size=134217728) would exceed memory "
      "(size=67108864) :: #allocation25 [shape = 'u8[134217728]{0}', space=vmem, size = 0x8000000, "
      "tag = 'scoped memory for ragged_kernel.2'] :: ragged_kernel.2\n";
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("log.txt", text);
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 3u);
  const XlaOomError& used = (*errors)[0];
  EXPECT_EQ(used.kind, XlaOomError::Kind::kCompileTimeHbmOom);
  EXPECT_EQ(used.code, "E1000");
  EXPECT_EQ(used.memory, "HBM");
  EXPECT_EQ(*used.needed_bytes, static_cast<int64_t>(49.34 * (int64_t{1} << 30) + 0.5));
  EXPECT_EQ(*used.available_bytes, int64_t{32} << 30);
  const XlaOomError& early = (*errors)[1];
  EXPECT_EQ(early.kind, XlaOomError::Kind::kCompileTimeHbmOom);
  EXPECT_NEAR(static_cast<double>(*early.needed_bytes), 3.84 * 1099511627776.0, 1.0);
  EXPECT_NEAR(static_cast<double>(*early.available_bytes), 90.96 * 1073741824.0, 1.0);
  const XlaOomError& vmem = (*errors)[2];
  EXPECT_EQ(vmem.kind, XlaOomError::Kind::kCompileTimeAllocation);
  EXPECT_EQ(vmem.code, "E1001");
  EXPECT_EQ(vmem.memory, "VMEM");
  EXPECT_EQ(*vmem.needed_bytes, 134217728);
  EXPECT_EQ(*vmem.available_bytes, 67108864);
}

// XLA:GPU prints its buffer assignment's summary under the error; the
// layout as reported in jax-ml/jax#13428 (paths shortened).
TEST(XlaOomErrorTest, GpuErrorWithItsBufferAssignmentListing) {
  const std::string text =
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
      "allocate 6291456 bytes.\n"
      "BufferAssignment OOM Debugging.\n"
      "BufferAssignment stats:\n"
      "             parameter allocation:    6.00MiB\n"
      "              constant allocation:         0B\n"
      "        maybe_live_out allocation:    6.00MiB\n"
      "     preallocated temp allocation:         0B\n"
      "                 total allocation:   12.00MiB\n"
      "              total fragmentation:         0B (0.00%)\n"
      "Peak buffers:\n"
      "        Buffer 1:\n"
      "                Size: 6.00MiB\n"
      "                Operator: op_name=\"jit(concatenate)/jit(main)/concatenate[dimension=0]\" "
      "source_file=\"/work/models.py\" source_line=689\n"
      "                XLA Label: concatenate\n"
      "                Shape: f32[4096,128,3]\n"
      "                ==========================\n"
      "\n"
      "        Buffer 2:\n"
      "                Size: 384.0KiB\n"
      "                Entry Parameter Subshape: f32[256,128,3]\n"
      "                ==========================\n"
      "\n"
      "The above exception was the direct cause of the following exception:\n";
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("log.txt", text);
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 1u);
  const XlaOomError& e = (*errors)[0];
  EXPECT_EQ(e.kind, XlaOomError::Kind::kGpuAllocation);
  EXPECT_EQ(*e.needed_bytes, 6291456);
  ASSERT_TRUE(e.listing.has_value());
  EXPECT_EQ(*e.listing->Stat("total"), 12 << 20);
  EXPECT_EQ(*e.listing->Stat("parameter"), 6 << 20);
  EXPECT_EQ(*e.listing->Stat("preallocated temp"), 0);
  ASSERT_EQ(e.listing->peak_buffers.size(), 2u);
  const XlaOomListing::PeakBuffer& first = e.listing->peak_buffers[0];
  EXPECT_EQ(first.bytes, 6 << 20);
  EXPECT_EQ(first.label, "concatenate");
  EXPECT_EQ(first.shape, "f32[4096,128,3]");
  EXPECT_EQ(first.op_name, "jit(concatenate)/jit(main)/concatenate[dimension=0]");
  EXPECT_EQ(first.source_file, "/work/models.py");
  EXPECT_EQ(first.source_line, 689);
  EXPECT_TRUE(e.listing->peak_buffers[1].entry_parameter);
  EXPECT_EQ(e.listing->peak_buffers[1].bytes, 384 << 10);
}

TEST(XlaOomErrorTest, TextWithoutAnOomIsAnErrorNamingTheFile) {
  absl::StatusOr<std::vector<XlaOomError>> errors =
      ParseXlaOomErrors("train.log", "step 1 loss 2.3\nstep 2 loss 2.1\n");
  ASSERT_FALSE(errors.ok());
  EXPECT_THAT(std::string(errors.status().message()), HasSubstr("train.log: error: no out-of-memory"));
}

TEST(XlaOomErrorTest, MalformedSizesAreLeftUnset) {
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors(
      "e", "E1000: CompileTimeHbmOom: temporaries (lots) exceeds available HBM (99999999999999999999G)");
  ASSERT_TRUE(errors.ok());
  EXPECT_FALSE(errors->front().needed_bytes.has_value());
  EXPECT_FALSE(errors->front().available_bytes.has_value());
}

// The allocator's limit, as GPU logs state it. The lines are real ones:
// issue 27's measured run (H100 80GB HBM3, jax 0.11.2), and logs users
// pasted (each test names its thread).

// JAX's GPU client creating the allocator, today's form (issue 27).
TEST(AllocatorLimitTest, StartLineWithExactBytes) {
  const std::vector<AllocatorLimit> limits = ParseAllocatorLimits(
      "XLA backend allocating 59.38GiB (63763906560 bytes) on device 0 for BFCAllocator\n");
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].kind, AllocatorLimit::Kind::kBfcStart);
  EXPECT_EQ(limits[0].bytes, 63763906560);
  EXPECT_EQ(limits[0].rounding_bytes, 0);
  EXPECT_EQ(limits[0].device, 0);
  EXPECT_EQ(limits[0].line, 1);
  EXPECT_EQ(DescribeAllocatorLimit(limits[0]), "the log's BFCAllocator line (line 1)");
}

// The older form, bytes only, beside the collective allocator's own line,
// which is not the program's limit (EnzymeAD/Reactant.jl#891, A100-SXM-64GB);
// and another device's (pytorch/xla#5559, A100-SXM4-80GB).
TEST(AllocatorLimitTest, OlderStartLinesAndTheCollectiveAllocatorLeftOut) {
  const std::string log =
      "I0000 00:00:1741833238.893159 1652112 se_gpu_pjrt_client.cc:951] Using BFC allocator.\n"
      "I0000 00:00:1741833238.893459 1652112 gpu_helpers.cc:136] XLA backend allocating 51074678784 "
      "bytes on device 0 for BFCAllocator.\n"
      "I0000 00:00:1741833238.893764 1652112 gpu_helpers.cc:177] XLA backend will use up to "
      "17024892928 bytes on device 0 for CollectiveBFCAllocator.\n"
      "2023-09-15 02:15:52.443032: I external/xla/xla/pjrt/gpu/gpu_helpers.cc:105] XLA backend "
      "allocating 63898533888 bytes on device 1 for BFCAllocator.\n";
  const std::vector<AllocatorLimit> limits = ParseAllocatorLimits(log);
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits[0].bytes, 51074678784);
  EXPECT_EQ(limits[0].device, 0);
  EXPECT_EQ(limits[0].line, 2);
  EXPECT_EQ(limits[1].bytes, 63898533888);
  EXPECT_EQ(limits[1].device, 1);
  // Both exact: the smaller decides (that device cannot hold more).
  EXPECT_EQ(ChooseAllocatorLimit(limits)->bytes, 51074678784);
}

// The BFC allocator's out-of-memory dump (EnzymeAD/Reactant.jl#2632, a
// GH200 at XLA_REACTANT_GPU_MEM_FRACTION=0.95): "memory_limit_:" and the
// "Stats:" block's "Limit:", both rounded to two decimals.
TEST(AllocatorLimitTest, TheOutOfMemoryDumpsRoundedLimits) {
  const std::string log =
      "I0000 00:00:1773083052.386475   70889 bfc_allocator.cc:1119] Total size in pool: 89.77GiB "
      "memory_limit_: 89.77GiB available size: 153B curr_region_allocation_bytes_: 179.55GiB\n"
      "I0000 00:00:1773083052.386479   70889 bfc_allocator.cc:1128] Stats: \n"
      "Limit:                        89.77GiB\n"
      "InUse:                        81.00GiB\n"
      "MaxInUse:                     81.00GiB\n";
  const std::vector<AllocatorLimit> limits = ParseAllocatorLimits(log);
  ASSERT_EQ(limits.size(), 2u);
  const int64_t rounded = static_cast<int64_t>(89.77 * kGiB + 0.5);
  EXPECT_EQ(limits[0].kind, AllocatorLimit::Kind::kPoolLimit);
  EXPECT_EQ(limits[0].bytes, rounded);
  EXPECT_EQ(limits[0].rounding_bytes, (kGiB + 199) / 200);
  EXPECT_EQ(DescribeAllocatorLimit(limits[0]), "the log's memory_limit_ line (line 1)");
  EXPECT_EQ(limits[1].kind, AllocatorLimit::Kind::kStatsLimit);
  EXPECT_EQ(limits[1].bytes, rounded);
  EXPECT_EQ(limits[1].line, 3);
  EXPECT_EQ(DescribeAllocatorLimit(limits[1]), "the log's Limit: line (line 3)");
  // "Limit:" anywhere else is not the allocator's.
  EXPECT_TRUE(ParseAllocatorLimits("Rate Limit: 100\nLimit: 5GiB\n").empty());
}

// Issue 27's run: the start line, then, when the 59.39 GiB program failed,
// the dump's summary line ("pool limit", in the form of
// tsl/framework/bfc_allocator.cc's DumpMemoryLog) and "Limit: 59.38GiB".
// Every error of the log carries the exact figure of the start line.
TEST(AllocatorLimitTest, AnErrorCarriesTheLogsExactLimit) {
  const std::string log =
      "XLA backend allocating 59.38GiB (63763906560 bytes) on device 0 for BFCAllocator\n"
      "W bfc_allocator.cc] Allocator (GPU_0_bfc) ran out of memory trying to allocate 59.39GiB from "
      "the lower end with freed_by_count=0.\n"
      "I bfc_allocator.cc] Allocator memory summary: rounded request 59.39GiB, total free in pool "
      "59.38GiB, largest free chunk usable by lower end 59.38GiB, unallocated bytes 0B, pool size "
      "59.38GiB, pool limit 59.38GiB\n"
      "I bfc_allocator.cc] Stats: \n"
      "Limit:                        59.38GiB\n"
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
      "allocate 63766003724 bytes.\n";
  const std::vector<AllocatorLimit> limits = ParseAllocatorLimits(log);
  ASSERT_EQ(limits.size(), 3u);
  EXPECT_EQ(limits[1].kind, AllocatorLimit::Kind::kPoolLimit);
  EXPECT_EQ(DescribeAllocatorLimit(limits[1]), "the log's pool limit line (line 3)");
  EXPECT_EQ(limits[2].kind, AllocatorLimit::Kind::kStatsLimit);
  absl::StatusOr<std::vector<XlaOomError>> errors = ParseXlaOomErrors("run.log", log);
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 2u);
  EXPECT_EQ((*errors)[0].needed_bytes, static_cast<int64_t>(59.39 * kGiB + 0.5));
  EXPECT_EQ((*errors)[1].needed_bytes, 63766003724);
  for (const XlaOomError& e : *errors) {
    ASSERT_TRUE(e.allocator_limit.has_value());
    EXPECT_EQ(e.allocator_limit->bytes, 63763906560);
    EXPECT_EQ(e.allocator_limit->rounding_bytes, 0);
  }
  // Without the start line, the rounded dump decides.
  const std::string dump_only = log.substr(log.find('\n') + 1);
  const std::optional<AllocatorLimit> chosen = ChooseAllocatorLimit(ParseAllocatorLimits(dump_only));
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->bytes, static_cast<int64_t>(59.38 * kGiB + 0.5));
  EXPECT_GT(chosen->rounding_bytes, 0);
}

// TensorFlow's older dumps print raw bytes after "Limit:".
TEST(AllocatorLimitTest, RawBytesAreExact) {
  const std::vector<AllocatorLimit> limits =
      ParseAllocatorLimits("I bfc_allocator.cc:1101] Stats: \nLimit:                 63763906560\n");
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits[0].bytes, 63763906560);
  EXPECT_EQ(limits[0].rounding_bytes, 0);
  EXPECT_FALSE(ChooseAllocatorLimit({}).has_value());
}

}  // namespace
}  // namespace hlomem::dump
