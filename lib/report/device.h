// Device fit: does a module's device memory (GPU memory, TPU HBM) fit in
// what the device offers XLA? JAX's GPU allocator may use a fraction (0.75
// by default; XLA_CLIENT_MEM_FRACTION, formerly
// XLA_PYTHON_CLIENT_MEM_FRACTION, changes it) of the total memory CUDA
// reports for the card (cudaMemGetInfo), which is less than the card's
// nominal size and than nvidia-smi's total; XLA:TPU states what a TPU
// offers a program. A log that states the allocator's limit decides over
// both. The target layer knows the defaults; this file applies them.
#ifndef HLOMEM_LIB_REPORT_DEVICE_H_
#define HLOMEM_LIB_REPORT_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/report/report.h"

namespace hlomem::report {

struct DevicePreset {
  absl::string_view name;  // "h100-80gb"
  // GPU: the total memory CUDA reports for the card (cudaMemGetInfo's
  // total, what JAX's allocator takes its fraction of). TPU: the HBM, which
  // the generation's (lib/target/tpu.cc) replaces.
  int64_t bytes;
  bool is_gpu;  // the memory fraction applies (GPU allocators)
  // Where `bytes` comes from; estimated: no run of this project measured it.
  bool estimated;
  absl::string_view source;
};
absl::Span<const DevicePreset> DevicePresets();


struct DeviceRequest {
  std::string preset;                  // --device
  std::string memory;                  // --device-memory SIZE
  std::optional<double> mem_fraction;  // --mem-fraction
  // The environment's XLA_CLIENT_MEM_FRACTION / XLA_PYTHON_CLIENT_MEM_FRACTION
  // (the first wins); callers pass getenv's values.
  const char* env_fraction = nullptr;
  const char* env_fraction_legacy = nullptr;
};

struct DeviceBudget {
  std::string name;  // the preset, or "" for --device-memory
  int64_t capacity = 0;
  // --mem-fraction or the environment's; unset: each module's target
  // decides (JAX preallocates 0.75 of a GPU; a TPU offers what it offers).
  std::optional<double> fraction;
  // What a TPU preset's chip offers a program (XLA:TPU's available HBM).
  std::optional<int64_t> program_limit;
  bool is_gpu = true;
  // The preset's DevicePreset::source and estimated; "" for --device-memory.
  std::string capacity_source;
  bool capacity_estimated = false;
};

// nullopt when neither --device nor --device-memory is given.
absl::StatusOr<std::optional<DeviceBudget>> ResolveDevice(const DeviceRequest& request);

// Fills ModuleReport::device_fit of every module: its device-memory
// allocations (XLA's when the dump has its buffer assignment, else
// hlomem's) against the usable memory. A disagreement between the two is
// added to the module's warnings.
void ApplyDeviceFit(const DeviceBudget& budget, Report* report);

// Applies the allocator limit the user's log states (--error FILE) to every
// GPU module: it replaces a preset's usable memory (the fit records the
// preset's figure and says which line decided), or gives a verdict where no
// --device did. A limit the log rounds ("pool limit 59.38GiB") confirms a
// preset's exact figure within its rounding rather than replacing it.
void ApplyAllocatorLimit(const dump::AllocatorLimit& limit, Report* report);

// Ties each out-of-memory error to its module (by the module name XLA's
// message gives, or the one module of the report) and explains it: the
// module's device memory beside the error's figures. A compile-time HBM
// OOM also sets the device fit, against the memory the error says was
// available, when no --device did. Returns the errors no module matched.
std::vector<dump::XlaOomError> ApplyOomErrors(std::vector<dump::XlaOomError> errors,
                                              Report* report);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_DEVICE_H_
