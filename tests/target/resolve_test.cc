#include "lib/target/resolve.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hlo/text_parser.h"

namespace hlomem::target {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

hlo::Module Parse(absl::string_view text) {
  auto modules = hlo::ParseHloString(text, "m.hlo");
  EXPECT_TRUE(modules.ok()) << modules.status().message();
  if (!modules.ok() || modules->size() != 1) return hlo::Module();
  return std::move(modules->front());
}

std::unique_ptr<Target> Resolve(const TargetInputs& inputs, const hlo::Module* module = nullptr) {
  absl::StatusOr<std::unique_ptr<Target>> target = ResolveTarget(inputs, module);
  EXPECT_TRUE(target.ok()) << target.status().message();
  return target.ok() ? std::move(*target) : nullptr;
}

// The resolved target's name and backend, or the error it gave instead:
// a failed resolution fails the expectation that reads it, naming why,
// rather than crashing the test on a null target.
std::string NameOf(const TargetInputs& inputs, const hlo::Module* module = nullptr) {
  absl::StatusOr<std::unique_ptr<Target>> target = ResolveTarget(inputs, module);
  if (!target.ok()) return "error: " + std::string(target.status().message());
  return (*target)->name();
}
std::string BackendOf(const TargetInputs& inputs, const hlo::Module* module = nullptr) {
  absl::StatusOr<std::unique_ptr<Target>> target = ResolveTarget(inputs, module);
  if (!target.ok()) return "error: " + std::string(target.status().message());
  return std::string(BackendName((*target)->backend()));
}

TargetInputs FromFile(absl::string_view token) {
  TargetInputs in;
  in.file_backend = std::string(token);
  return in;
}

TEST(ResolveTargetTest, FileBackendToken) {
  const auto cpu = Resolve(FromFile("cpu"));
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->backend(), Backend::kCpu);
  EXPECT_EQ(cpu->name(), "cpu");

  const auto h100 = Resolve(FromFile("sm_9.0a"));
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->backend(), Backend::kGpu);
  EXPECT_EQ(h100->name(), "gpu sm_9.0a");

  const auto rocm = Resolve(FromFile("gfx942"));
  ASSERT_NE(rocm, nullptr);
  EXPECT_EQ(rocm->backend(), Backend::kGpu);
  EXPECT_EQ(rocm->name(), "gpu gfx942");

  const auto tpu = Resolve(FromFile("cl_123"));
  ASSERT_NE(tpu, nullptr);
  EXPECT_EQ(tpu->backend(), Backend::kTpu);
  EXPECT_EQ(tpu->name(), "tpu");
  EXPECT_FALSE(tpu->device().has_value());

  const auto unknown = Resolve(FromFile(""));
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->backend(), Backend::kUnknown);
}

TEST(ResolveTargetTest, BackendOfFileToken) {
  EXPECT_EQ(BackendOfFileToken("cpu"), Backend::kCpu);
  EXPECT_EQ(BackendOfFileToken("sm_10.0f"), Backend::kGpu);
  EXPECT_EQ(BackendOfFileToken("gfx90a"), Backend::kGpu);
  EXPECT_EQ(BackendOfFileToken("cl_1004524046"), Backend::kTpu);
  EXPECT_EQ(BackendOfFileToken("tpu"), Backend::kTpu);
  EXPECT_EQ(BackendOfFileToken("interpreter"), Backend::kUnknown);
  EXPECT_EQ(BackendOfFileToken(""), Backend::kUnknown);
}

TEST(ResolveTargetTest, TpuTargetArgumentsNameTheGeneration) {
  TargetInputs in = FromFile("cl_1004524046");
  in.tpu_target_arguments_path = "a.target_arguments.txt";
  in.tpu_target_arguments =
      "tpu_topology_args {\n  version: TPU_VERSION_VIPERFISH\n  variant: \"lite\"\n}\n";
  const auto v5e = Resolve(in);
  ASSERT_NE(v5e, nullptr);
  EXPECT_EQ(v5e->name(), "tpu v5e");
  ASSERT_TRUE(v5e->device().has_value());
  EXPECT_EQ(v5e->device()->capacity, int64_t{16} << 30);

  // The arguments alone tell TPU when the file name does not.
  in.file_backend.clear();
  const auto alone = Resolve(in);
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->name(), "tpu v5e");

  in.tpu_target_arguments = "tpu_topology_args {\n  version: \"unterminated\n}\n";
  const absl::StatusOr<std::unique_ptr<Target>> bad = ResolveTarget(in, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              StartsWith("a.target_arguments.txt:2:12: error: unterminated string"));
}

TEST(ResolveTargetTest, GpuTargetConfigNamesTheDevice) {
  TargetInputs in = FromFile("sm_9.0a");
  in.gpu_target_config_path = "gpu_target_config.pbtxt";
  in.gpu_target_config =
      "gpu_device_info {\n  device_memory_size: 84978434048\n"
      "  cuda_compute_capability {\n    major: 9\n"
      "    feature_extension: ACCELERATED_FEATURES\n  }\n}\n"
      "device_description_str: \"NVIDIA H100 80GB HBM3\"\n";
  const auto gpu = Resolve(in);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->backend(), Backend::kGpu);
  EXPECT_EQ(gpu->name(), "gpu sm_9.0a");
  ASSERT_TRUE(gpu->device().has_value());
  EXPECT_EQ(gpu->device()->device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu->device()->capacity, 84978434048);

  // A config without a capability takes the file name's.
  in.gpu_target_config = "gpu_device_info { device_memory_size: 1024 }";
  const auto from_token = Resolve(in);
  ASSERT_NE(from_token, nullptr);
  EXPECT_EQ(from_token->name(), "gpu sm_9.0a");

  in.gpu_target_config = "gpu_device_info {";
  const absl::StatusOr<std::unique_ptr<Target>> bad = ResolveTarget(in, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), StartsWith("gpu_target_config.pbtxt:1:18: error:"));
}

TEST(ResolveTargetTest, RequestedTargets) {
  TargetInputs in;
  in.requested = "tpu-v5e";
  const auto v5e = Resolve(in);
  ASSERT_NE(v5e, nullptr);
  EXPECT_EQ(v5e->backend(), Backend::kTpu);
  EXPECT_EQ(v5e->name(), "tpu v5e");

  in.requested = "TPU_v6e";
  EXPECT_EQ(NameOf(in), "tpu v6e");
  in.requested = "v5litepod";
  EXPECT_EQ(NameOf(in), "tpu v5e");
  in.requested = "tpu";
  EXPECT_EQ(NameOf(in), "tpu");
  in.requested = "CPU";
  EXPECT_EQ(BackendOf(in), BackendName(Backend::kCpu));
  in.requested = "gpu";
  EXPECT_EQ(NameOf(in), "gpu");

  in.requested = "h100";
  const auto h100 = Resolve(in);
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->name(), "gpu sm_9.0a");
  ASSERT_TRUE(h100->device().has_value());
  EXPECT_EQ(h100->device()->capacity, 84978434048);
  in.requested = "gpu-mi250";
  EXPECT_EQ(NameOf(in), "gpu gfx90a");

  // What the user asks for wins over the dump's own hints.
  TargetInputs both = FromFile("cpu");
  both.requested = "tpu-v4";
  EXPECT_EQ(NameOf(both), "tpu v4");
}

TEST(ResolveTargetTest, UnknownRequestListsKnownNames) {
  TargetInputs in;
  in.requested = "tpu-v9";
  const absl::StatusOr<std::unique_ptr<Target>> target = ResolveTarget(in, nullptr);
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(target.status().message()), HasSubstr("unknown --target 'tpu-v9'"));
  EXPECT_THAT(std::string(target.status().message()), HasSubstr(KnownTargetNames()));
  for (const char* name : {"cpu", "gpu", "tpu", "h100", "a100", "b200", "mi250", "tpu-v5e",
                           "tpu-v5p", "tpu-v6e"}) {
    EXPECT_THAT(KnownTargetNames(), HasSubstr(name));
  }
}

TEST(ResolveTargetTest, ModuleTellsWhenNothingElseDoes) {
  const hlo::Module tiled = Parse(
      "HloModule m\n\nENTRY e {\n"
      "  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
      "  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)\n}\n");
  const auto tpu = Resolve(TargetInputs{}, &tiled);
  ASSERT_NE(tpu, nullptr);
  EXPECT_EQ(tpu->backend(), Backend::kTpu);
  EXPECT_EQ(BackendOfModule(tiled), Backend::kTpu);

  const hlo::Module cublas = Parse(
      "HloModule m\n\nENTRY e {\n"
      "  p = f32[8,8]{1,0} parameter(0)\n"
      "  ROOT g = (f32[8,8]{1,0}, s8[0]{0}) custom-call(p, p), "
      "custom_call_target=\"__cublas$gemm\"\n}\n");
  EXPECT_EQ(BackendOf(TargetInputs{}, &cublas), BackendName(Backend::kGpu));
  // A custom call to a library of no GPU's does not tell.
  const hlo::Module onednn = Parse(
      "HloModule m\n\nENTRY e {\n"
      "  p = f32[8,8]{1,0} parameter(0)\n"
      "  ROOT g = f32[8,8]{1,0} custom-call(p, p), "
      "custom_call_target=\"__onednn$matmul\"\n}\n");
  EXPECT_EQ(BackendOfModule(onednn), Backend::kUnknown);

  const hlo::Module plain = Parse(
      "HloModule m\n\nENTRY e {\n  p = f32[8]{0} parameter(0)\n  ROOT n = f32[8]{0} negate(p)\n}\n");
  EXPECT_EQ(BackendOfModule(plain), Backend::kUnknown);
  EXPECT_EQ(BackendOf(TargetInputs{}, &plain), BackendName(Backend::kUnknown));
  // The file name's token outranks the module.
  EXPECT_EQ(BackendOf(FromFile("cpu"), &tiled), BackendName(Backend::kCpu));
}

}  // namespace
}  // namespace hlomem::target
