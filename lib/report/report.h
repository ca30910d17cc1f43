// The report model: for each module of the input, the numbers hlomem
// computed, XLA's own numbers where the dump has them, the buffers and the
// timeline. Writers (text, JSON) only format this model.
#ifndef HLOMEM_LIB_REPORT_REPORT_H_
#define HLOMEM_LIB_REPORT_REPORT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/detect/detectors.h"
#include "lib/dump/loader.h"

namespace hlomem::report {

// The version of the JSON output's schema (cmd/hlomem/version.h.in repeats
// it for --version). Bump on incompatible changes only; adding fields is
// compatible.
inline constexpr int kSchemaVersion = 1;

struct MemoryNumbers {
  int64_t total_bytes = 0;
  int64_t argument_bytes = 0;
  int64_t output_bytes = 0;
  int64_t alias_bytes = 0;
  int64_t temp_bytes = 0;
  int64_t constant_bytes = 0;
  int64_t thread_local_bytes = 0;
  int64_t host_argument_bytes = 0;
  int64_t host_output_bytes = 0;
  int64_t host_alias_bytes = 0;
  int64_t host_temp_bytes = 0;
  std::optional<int64_t> peak_live_bytes;
  std::optional<int64_t> fragmentation_bytes;
  std::optional<int64_t> peak_memory_bytes;  // memory_analysis()'s peak
};

struct Mismatch {
  std::string field;  // "total_bytes", ...
  int64_t computed = 0;
  int64_t xla = 0;
};

struct ModuleReport {
  std::string name;
  std::vector<std::string> files;
  std::string backend;  // "cpu", "gpu", "tpu", "" when unknown
  std::string stage;    // "after_optimizations", "before_optimizations", ...
  bool scheduled = false;
  // True when the computed numbers reproduce XLA's exactly (a scheduled CPU
  // module after optimizations); false marks them as estimates.
  bool exact = false;
  std::string estimate_reason;  // why not exact

  std::unique_ptr<hlo::Module> module;
  std::unique_ptr<analysis::BufferAssignment> assignment;
  analysis::MemoryProfile profile;
  std::optional<MemoryNumbers> computed;
  std::optional<MemoryNumbers> xla;
  std::vector<Mismatch> mismatches;
  std::vector<detect::Finding> findings;  // largest first
  std::vector<std::string> warnings;
};

struct Report {
  std::vector<ModuleReport> modules;
  std::vector<std::string> warnings;
};

struct ReportOptions {
  dump::LoadOptions load;
  std::string module_regex;  // empty: all modules
  // Heap alignment; 0 picks the backend's (CPU 64, GPU 256).
  int64_t alignment = 0;
  detect::DetectOptions detect;
};

absl::StatusOr<Report> BuildReport(const std::vector<std::string>& paths,
                                   const ReportOptions& options);

// The user's source location of an instruction, "file:line" or "".
std::string SourceLine(const hlo::Module& module, hlo::InstrId instruction);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_REPORT_H_
