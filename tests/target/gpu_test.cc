#include "lib/target/gpu.h"

#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem::target {
namespace {

using ::testing::StartsWith;

// The text of a shared GPU spec, or nullopt when the shared directory is
// not beside the repository.
std::optional<std::string> ReadSharedSpec(const std::string& name) {
  std::ifstream in(std::string(HLOMEM_SHARED_TARGETS_DIR) + "/gpu/" + name, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct SpecCase {
  const char* file;
  const char* arch;
  int64_t memory_bytes;
  const char* description;
};

// The test's listing shows the spec's file, not the struct's raw bytes.
void PrintTo(const SpecCase& c, std::ostream* os) { *os << c.file; }

class SharedGpuSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(SharedGpuSpecTest, ReadsArchMemoryAndDescription) {
  const SpecCase& expected = GetParam();
  const std::optional<std::string> text = ReadSharedSpec(expected.file);
  if (!text) {
    GTEST_SKIP() << "XLA's GPU spec " << HLOMEM_SHARED_TARGETS_DIR << "/gpu/" << expected.file
                 << " is absent: the shared targets directory lives beside the repository, not in it";
  }
  const absl::StatusOr<GpuDevice> device = ParseGpuTargetConfig(expected.file, *text);
  ASSERT_TRUE(device.ok()) << device.status().message();
  EXPECT_EQ(device->arch, expected.arch);
  EXPECT_EQ(device->memory_bytes, expected.memory_bytes);
  EXPECT_EQ(device->description, expected.description);
}

// XLA's xla/tools/hlo_opt/gpu_specs. The shared h100 spec gives no
// feature_extension (sm_9.0, not the sm_9.0a a compile on the device dumps);
// dnn_version_info's major/minor must not be taken for the capability's.
INSTANTIATE_TEST_SUITE_P(
    Specs, SharedGpuSpecTest,
    ::testing::Values(SpecCase{"h100_sxm.txtpb", "sm_9.0", 84978434048, "NVIDIA H100 80GB HBM3"},
                      SpecCase{"a100_sxm_80.txtpb", "sm_8.0", 85100068864, "NVIDIA A100-SXM4-80GB"},
                      SpecCase{"b200.txtpb", "sm_10.0", 191514673152, "NVIDIA B200"},
                      SpecCase{"mi200.txtpb", "gfx90a", 67628957696, "MI250"}),
    [](const ::testing::TestParamInfo<SpecCase>& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(GpuTargetConfigTest, FeatureExtensionLetters) {
  // What a compile on an H100 writes into a dump (testdata/accel/gpu_h100).
  const absl::StatusOr<GpuDevice> h100 = ParseGpuTargetConfig(
      "h100.pbtxt",
      "gpu_device_info {\n"
      "  device_memory_size: 84978434048\n"
      "  cuda_compute_capability {\n"
      "    major: 9\n"
      "    feature_extension: ACCELERATED_FEATURES\n"
      "  }\n"
      "}\n"
      "device_description_str: \"NVIDIA H100 80GB HBM3\"\n");
  ASSERT_TRUE(h100.ok()) << h100.status().message();
  EXPECT_EQ(h100->arch, "sm_9.0a");
  const absl::StatusOr<GpuDevice> family = ParseGpuTargetConfig(
      "b.pbtxt",
      "gpu_device_info { cuda_compute_capability { major: 10 minor: 3 "
      "feature_extension: FAMILY_COMPATIBLE_FEATURES } }");
  ASSERT_TRUE(family.ok());
  EXPECT_EQ(family->arch, "sm_10.3f");
  EXPECT_EQ(family->memory_bytes, 0);
  const absl::StatusOr<GpuDevice> none = ParseGpuTargetConfig(
      "c.pbtxt", "gpu_device_info { cuda_compute_capability { major: 8 minor: 6 "
                 "feature_extension: NONE } }");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->arch, "sm_8.6");
}

TEST(GpuTargetConfigTest, NameStandsInForAMissingDescription) {
  const absl::StatusOr<GpuDevice> device = ParseGpuTargetConfig(
      "r.pbtxt", "gpu_device_info { name: \"AMD Instinct MI300X\" "
                 "rocm_compute_capability { gcn_arch_name: \"gfx942:sramecc+:xnack-\" } }");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->arch, "gfx942");
  EXPECT_EQ(device->description, "AMD Instinct MI300X");
}

TEST(GpuTargetConfigTest, UnknownFieldsAndEmptyText) {
  const absl::StatusOr<GpuDevice> device =
      ParseGpuTargetConfig("u.pbtxt", "future_field { x: [1, 2] } platform_name: \"CUDA\"");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->arch, "");
  EXPECT_EQ(device->memory_bytes, 0);
  EXPECT_EQ(device->description, "");
  // A memory size that is not a positive number is left unknown.
  const absl::StatusOr<GpuDevice> bad_size =
      ParseGpuTargetConfig("s.pbtxt", "gpu_device_info { device_memory_size: -5 }");
  ASSERT_TRUE(bad_size.ok());
  EXPECT_EQ(bad_size->memory_bytes, 0);
}

TEST(GpuTargetConfigTest, MalformedTextNamesTheSpot) {
  const absl::StatusOr<GpuDevice> device =
      ParseGpuTargetConfig("x.pbtxt", "gpu_device_info {\n  core_count 132\n}\n");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(device.status().message()),
              StartsWith("x.pbtxt:2:14: error: expected ':' or '{' after the field name"));
}

}  // namespace
}  // namespace hlomem::target
