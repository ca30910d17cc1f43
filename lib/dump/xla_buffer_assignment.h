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
#include "absl/types/span.h"

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
  // Which section headers were there, for the wholeness verdict: XLA
  // prints the buffer live ranges after the sequence, then the values live
  // at the peak (one per buffer live range that spans it), or in 2021 the
  // live ranges at every moment, then (2025-07+) a stack trace breakdown.
  bool has_buffer_ranges = false;  // `  BufferLiveRange:`
  bool has_other_section = false;  // a section after it that is not the peak
};

// Why a live range is not whole, "" when nothing says it is cut: its
// sequence stops before `max`, a section is missing, or the peak lists
// fewer values than the buffer live ranges that span the peak.
std::string LiveRangeGap(const XlaLiveRange& live_range);

// How far -buffer-assignment.txt went: BufferAssignment::ToString writes
// the allocations, then (until 2026-03) "Total bytes used", "Used values:"
// and, from 2021-04, HloLiveRange.
enum class XlaTextEnd : uint8_t {
  kNotText,      // read from a proto
  kAllocations,  // the 2026-04 layout ends here; an older file was cut
  kTotal,        // "Total bytes used" and nothing after it
  kUsedValues,   // "Used values:" (a 2019-10..2021-03 file ends here)
  kLiveRange,    // HloLiveRange, or the line saying it was not available
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

  // Wholeness (issue 30 item 5). A file cut at a line boundary still
  // parses, as a smaller assignment; its figures must not decide anything.
  // The readers and the checks below record each sign that the assignment
  // is not whole: the text ends before its format does, it disagrees with
  // the totals of XLA's other files, or it lacks buffers the module has.
  std::string path;  // the file it was read from, for the warning
  // False for the pre-2019 layout, whose allocations list no values.
  bool lists_values = true;
  XlaTextEnd text_end = XlaTextEnd::kNotText;
  // Where the text ends, e.g. "it ends after allocation 22 (line 40)".
  std::string end_description;
  std::vector<std::string> gaps;  // why it is not whole; empty when it is
  bool whole() const { return gaps.empty(); }
  // end_description and the gaps in one line; "" when whole.
  std::string IncompleteReason() const;
};

// Reads -buffer-assignment.txt (either layout, plus the 2019-era header with
// a pointer, `allocation 0: 0x..., size N`). `path` is used in diagnostics.
absl::StatusOr<XlaBufferAssignment> ParseXlaBufferAssignment(
    absl::string_view path, absl::string_view text);

// Reads -buffer-assignment-values.txt into `assignment`: its total_bytes,
// and its "Used values" list, only to check that the allocations hold
// every value it names and the sum it gives (records gaps otherwise); the
// per-value details are skipped: the allocation blocks already hold
// offsets and sizes.
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

// Compares the assignment with the totals of the dump's memory-usage report
// (the sum of all allocation sizes, or each memory space's): XLA derives
// both from the same allocations, so any difference means one file is not
// whole. A report in the allocation-list layout (2024-10..2026-03) also
// says the text must end with HloLiveRange. Records gaps in `assignment`.
void CheckAgainstMemoryUsageReport(const XlaMemoryUsageReport& report,
                                   absl::string_view report_path,
                                   XlaBufferAssignment* assignment);

// A buffer as XLA names its values: the defining instruction and the shape
// index (`p0`, `tuple.2{}`, `fusion.3{1}`; empty for an array).
struct XlaBufferName {
  absl::string_view instruction;
  absl::Span<const int64_t> shape_index;
};

// Records a gap when buffers that hlomem's own assignment of the same
// module places are in none of XLA's allocations: in every committed dump
// XLA's values name each of them, so a missing one means the file lost
// its tail. Nothing to compare when the file lists no values (the pre-2019
// layout: lists_values).
void CheckXlaCoverage(const std::vector<XlaBufferName>& assigned,
                      XlaBufferAssignment* assignment);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_H_
