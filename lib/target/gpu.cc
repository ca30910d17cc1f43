// XLA:GPU (xla/service/gpu's RunBufferAssignment): 256-byte chunks
// (kXlaAllocatedBufferAlignBytes since 2025), the default colorer, and the
// GPU AliasInfo's in-place rules for fusions and collectives.
#include "lib/target/gpu.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/target/gpu_alias.h"
#include "lib/target/target_files.h"

namespace hlomem::target {
namespace {

constexpr int64_t kGpuAlignment = 256;

class GpuTarget final : public Target {
 public:
  GpuTarget(const GpuDevice& device, int64_t alignment)
      : Target(Backend::kGpu, GpuName(device)),
        alignment_(alignment > 0 ? alignment : kGpuAlignment),
        nvidia_(!absl::StartsWith(device.arch, "gfx")) {
    if (device.memory_bytes > 0) {
      DeviceMemory memory;
      memory.device = device.description.empty() ? name() : device.description;
      memory.capacity = device.memory_bytes;
      device_ = memory;
    }
  }

  int64_t Alignment(int64_t) const override { return alignment_; }

  std::optional<bool> MayAlias(const hlo::Module& module, hlo::InstrId operand,
                               const hlo::ShapeIndex& operand_index, hlo::InstrId user,
                               const hlo::ShapeIndex& user_index) const override {
    return GpuMayAlias(module, operand, operand_index, user, user_index, nvidia_);
  }

  std::string caveat() const override {
    return absl::StrCat("the ", name(),
                        " rules (256-byte chunks, XLA:GPU's AliasInfo) match XLA on every committed "
                        "GPU dump; fusion emitter choices are approximated");
  }

  // JAX's GPU client preallocates this share of the device for XLA.
  double DefaultMemFraction() const override { return kJaxGpuMemFraction; }

 private:
  static std::string GpuName(const GpuDevice& device) {
    return device.arch.empty() ? "gpu" : absl::StrCat("gpu ", device.arch);
  }

  int64_t alignment_;
  bool nvidia_;
};

}  // namespace

absl::StatusOr<GpuDevice> ParseGpuTargetConfig(absl::string_view path, absl::string_view text) {
  GpuDevice device;
  std::string major, minor = "0", extension, gcn_arch, name;
  absl::Status status = ForEachTextProtoField(
      path, text, [&](const std::string& field, const std::string& value) {
        if (field == "gpu_device_info.device_memory_size") {
          int64_t bytes = 0;
          if (absl::SimpleAtoi(value, &bytes) && bytes > 0) device.memory_bytes = bytes;
        } else if (field == "gpu_device_info.cuda_compute_capability.major") {
          major = value;
        } else if (field == "gpu_device_info.cuda_compute_capability.minor") {
          minor = value;
        } else if (field == "gpu_device_info.cuda_compute_capability.feature_extension") {
          extension = value;
        } else if (field == "gpu_device_info.rocm_compute_capability.gcn_arch_name") {
          gcn_arch = value;
        } else if (field == "device_description_str") {
          device.description = value;
        } else if (field == "gpu_device_info.name") {
          name = value;
        }
      });
  if (!status.ok()) return status;
  if (device.description.empty()) device.description = name;
  if (!major.empty()) {
    // XLA names sm_90a's files "sm_9.0a": the extension letter follows.
    const absl::string_view suffix = extension == "ACCELERATED_FEATURES"        ? "a"
                                     : extension == "FAMILY_COMPATIBLE_FEATURES" ? "f"
                                                                                 : "";
    device.arch = absl::StrCat("sm_", major, ".", minor, suffix);
  } else if (!gcn_arch.empty()) {
    device.arch = gcn_arch.substr(0, gcn_arch.find(':'));
  }
  return device;
}

std::unique_ptr<Target> MakeGpuTarget(const GpuDevice& device, int64_t alignment) {
  return std::make_unique<GpuTarget>(device, alignment);
}

}  // namespace hlomem::target
