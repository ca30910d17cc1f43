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

}  // namespace
}  // namespace hlomem::dump
