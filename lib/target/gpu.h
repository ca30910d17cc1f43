// XLA:GPU targets and the device description they are resolved from.
#ifndef HLOMEM_LIB_TARGET_GPU_H_
#define HLOMEM_LIB_TARGET_GPU_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/target/target.h"

namespace hlomem::target {

// The share of a GPU's memory JAX's client preallocates for XLA when
// XLA_CLIENT_MEM_FRACTION does not say.
inline constexpr double kJaxGpuMemFraction = 0.75;

// What hlomem needs of XLA's GpuTargetConfigProto (gpu_target_config.pbtxt
// in a dump, or the device specs of xla/tools/hlo_opt/gpu_specs).
struct GpuDevice {
  std::string arch;         // "sm_9.0", "gfx90a"; "" when unknown
  std::string description;  // "NVIDIA H100 80GB HBM3"
  int64_t memory_bytes = 0;  // device_memory_size; 0 when unknown
};

// Reads the fields above from a GpuTargetConfigProto in text format. Errors
// name `path:line:col`. Fields hlomem does not need are skipped.
absl::StatusOr<GpuDevice> ParseGpuTargetConfig(absl::string_view path, absl::string_view text);

std::unique_ptr<Target> MakeGpuTarget(const GpuDevice& device, int64_t alignment = 0);

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_GPU_H_
