// XLA's own buffer assignment, as read back from the text files a dump
// holds next to each after-optimizations module (formats.md §2, §3):
//   F-buffer-assignment.txt         allocations and their values; before
//                                   2026-04 also "Total bytes used", the
//                                   "Used values" section and HloLiveRange
//   F-buffer-assignment-values.txt  (2026-04+) Total bytes used + values
//   F-live-range.txt                (2026-04+) HloLiveRange
//   F-memory-usage-report.txt       (2024-10+) the report, two layouts
//
// These are XLA's numbers, so a report can show them next to (or instead
// of) hlomem's own estimate. The readers scan lines with string_view and no
// regular expressions: the files reach hundreds of MB for large modules.
#ifndef HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_H_
#define HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <map>

#include "lib/base/memory_stats.h"
#include "lib/target/target.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem::dump {

// One ` value: <ID NAME{INDEX} (phi) @COLOR> (size=S,offset=O): SHAPE` line.
struct XlaValue {
  int64_t id = -1;
  std::string instruction;           // defining instruction, no '%'
  std::vector<int64_t> shape_index;  // printed only for tuple-shaped producers
  bool is_phi = false;
  int64_t color = 0;  // the value's ` @C`; 0 when absent
  int64_t size = 0;
  int64_t offset = 0;  // relative to the start of the allocation
  std::string shape;   // with layout, e.g. "f32[768]{0}"
};

// One `allocation I: size N, ...:` block.
struct XlaAllocation {
  int64_t index = -1;
  int64_t size = 0;
  int64_t color = 0;
  // `, page N` (seen in jaxlib 0.12 dumps, 2026; not yet described in
  // formats.md); -1 when absent.
  int64_t page = -1;
  bool is_parameter = false;
  int64_t parameter_number = -1;
  std::string parameter_shape;  // between the bars; may be "<unknown shape>"
  std::vector<int64_t> parameter_index;
  bool is_output = false;    // holds the whole entry root
  std::string output_shape;  // set when is_output
  bool is_constant = false;
  bool is_thread_local = false;
  bool maybe_live_out = false;
  bool is_preallocated_temp = false;
  // Attributes this reader does not know (a newer XLA), kept verbatim.
  std::vector<std::string> other_attributes;
  std::vector<XlaValue> values;
  // Values of another color reusing this allocation (2026, cross-color
  // reuse); counted only.
  int64_t cross_color_values = 0;
};

// HloLiveRange::ToString: the flattened schedule and logical live ranges.
struct XlaLiveRange {
  struct Range {
    std::string instruction;
    std::vector<int64_t> shape_index;  // always printed here; {} for arrays
    int64_t start = 0;                 // inclusive logical times
    int64_t end = 0;
  };
  struct PeakValue {
    std::string instruction;
    std::optional<std::vector<int64_t>> shape_index;  // since 2025-04
    int64_t bytes = 0;
  };
  int64_t max_time = 0;               // `HloLiveRange (max T):`
  std::vector<std::string> sequence;  // index = logical time
  std::vector<Range> ranges;
  int64_t peak_time = -1;  // `Live ranges at T (peak):`; -1 when absent
  std::vector<PeakValue> peak_values;
};

// Sums in the sense of jax's Compiled.memory_analysis() (engine.md §6):
// device fields exclude host-color allocations, which go to host_*.
struct XlaMemoryStats : MemoryStats {
  int64_t total_allocation_bytes = 0;  // every allocation, host included
  // Device and host allocations only (on TPU, not VMEM or SMEM): what
  // hlomem's computed total_bytes stands beside.
  int64_t total_bytes = 0;
  std::map<int64_t, int64_t> color_bytes;  // Σ allocation sizes per colour
};

struct XlaBufferAssignment {
  std::vector<XlaAllocation> allocations;  // in file order (= index order)
  // `Total bytes used: N`: from -buffer-assignment.txt before 2026-04, from
  // -buffer-assignment-values.txt after. Absent in pre-2019-10 dumps.
  std::optional<int64_t> total_bytes;
  // Present when the file carried HloLiveRange (2021-04 to 2026-03) or it
  // was read from -live-range.txt.
  std::optional<XlaLiveRange> live_range;

  // `target` says which colours are device, host or on-chip memory.
  XlaMemoryStats Stats(const target::Target& target = target::DefaultTarget()) const;
  // Σ allocation sizes; equals total_bytes in every XLA version.
  int64_t SumOfAllocationSizes() const;
};

// Reads -buffer-assignment.txt (either layout, plus the 2019-era header with
// a pointer, `allocation 0: 0x..., size N`). `path` is used in diagnostics.
absl::StatusOr<XlaBufferAssignment> ParseXlaBufferAssignment(
    absl::string_view path, absl::string_view text);

// Reads -buffer-assignment-values.txt into `assignment` (its total_bytes;
// the per-value details are skipped: the allocation blocks already hold
// offsets and sizes).
absl::Status ParseXlaBufferAssignmentValues(absl::string_view path,
                                            absl::string_view text,
                                            XlaBufferAssignment* assignment);

// Reads -live-range.txt. nullopt for the single line XLA writes when the
// live range was not available.
absl::StatusOr<std::optional<XlaLiveRange>> ParseXlaLiveRange(
    absl::string_view path, absl::string_view text);

// -memory-usage-report.txt.
struct XlaMemoryUsageReport {
  enum class Layout {
    kAllocationList,  // 2024-10 .. 2026-03: "Total bytes used:" first
    kMemorySpaces,    // 2026-03+: "Memory Space: ... / Total bytes: ..."
  };
  struct MemorySpace {
    std::string name;  // "default", "hbm", "color_7", ...
    int64_t color = 0;
    int64_t total_bytes = 0;
    int64_t allocation_tables = 0;  // per-allocation tables that follow
  };
  Layout layout = Layout::kAllocationList;
  // kAllocationList: the first line. kMemorySpaces: Σ of the spaces.
  std::optional<int64_t> total_bytes;
  // kAllocationList: allocation indices in the order of the "sorted by
  // size" list (largest first), as far as XLA printed them.
  std::vector<int64_t> allocations_by_size;
  // kAllocationList: "The rest N allocations ... not shown".
  int64_t allocations_not_shown = 0;
  std::vector<MemorySpace> memory_spaces;  // kMemorySpaces only
};

absl::StatusOr<XlaMemoryUsageReport> ParseXlaMemoryUsageReport(
    absl::string_view path, absl::string_view text);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_H_
