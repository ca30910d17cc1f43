// The detector registry and the entry point that runs them on a module.
// Every detector is listed once, in kDetectors (detectors.cc), with its name,
// what it looks for and its default threshold; `hlomem detectors` prints it.
#ifndef HLOMEM_LIB_DETECT_DETECTORS_H_
#define HLOMEM_LIB_DETECT_DETECTORS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/detect/finding.h"

namespace hlomem::detect {

// What a detector sees: one module's analysis, and the sums of XLA's own
// allocations per colour when the dump has its buffer assignment.
struct DetectorInput {
  const hlo::Module& module;
  const analysis::BufferAssignment& assignment;
  const analysis::MemoryProfile& profile;
  const std::map<int64_t, int64_t>* xla_color_bytes = nullptr;
};

using DetectorFn = void (*)(const DetectorInput& input, int64_t min_bytes,
                            std::vector<Finding>* findings);

struct DetectorInfo {
  absl::string_view name;
  absl::string_view description;
  int64_t default_min_bytes;  // findings below it are not reported
  DetectorFn run;
  // Judges what XLA's fusion, copy insertion or heap layout decided: skipped
  // on unscheduled (before-optimizations) modules, where nothing is fused yet.
  bool needs_optimized_module = true;
};

absl::Span<const DetectorInfo> Detectors();

struct DetectOptions {
  // Findings saving fewer bytes are dropped; -1 uses each detector's default.
  int64_t min_bytes = -1;
  // Names of the detectors to run; empty runs all.
  std::vector<std::string> only;
};

// Runs the detectors; findings come back sorted by bytes, largest first.
std::vector<Finding> RunDetectors(const DetectorInput& input, const DetectOptions& options);

}  // namespace hlomem::detect

#endif  // HLOMEM_LIB_DETECT_DETECTORS_H_
