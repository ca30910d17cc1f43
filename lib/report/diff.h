// `hlomem diff A B`: what changed in memory between two reports. Modules are
// paired by name and program (pairing.h); buffers by op_name, source line and shape (instruction
// names are renumbered by every compile, so they cannot be the key), and
// those left over on each side by op_name, source file and shape, so that a
// line added above the model shows its buffers as moved, not as new and
// gone. The model is rendered by the same writers as a report.
#ifndef HLOMEM_LIB_REPORT_DIFF_H_
#define HLOMEM_LIB_REPORT_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/detect/finding.h"
#include "lib/report/pairing.h"
#include "lib/report/report.h"

namespace hlomem::report {

enum class ChangeKind : uint8_t { kNew, kGone, kGrown, kShrunk };
absl::string_view ChangeKindName(ChangeKind kind);  // "new", "gone", "grown", "shrunk"

// The buffers of one key, summed on each side.
struct BufferChange {
  std::string op_name;  // the row's Label(): op_name, else instruction name
  std::string source;   // "file:line" or ""
  std::string shape;    // without layout
  std::string kind;     // the buffer kind on the side that has it (B first)
  int64_t bytes_a = 0;
  int64_t bytes_b = 0;
  int count_a = 0;
  int count_b = 0;
  bool at_peak_b = false;  // live at B's peak
  // Set when A's buffers were on another line of the same file (code was
  // added or removed above them): A's "file:line".
  std::string moved_from;
  // Set when A's buffers of the same label and line had another shape (a
  // dimension changed): A's shape, without layout.
  std::string shape_from;
  ChangeKind change = ChangeKind::kNew;
  int64_t delta() const { return bytes_b - bytes_a; }
  // B's source, with A's line when it moved: "model.py:45 (was :42)".
  std::string SourceShown() const;
  // B's shape, with A's when it changed: "f32[64,512] (was f32[32,512])".
  std::string ShapeShown() const;
};

struct ModuleDiff {
  std::string name;
  // Either side is null when the module exists on one side only.
  const ModuleReport* a = nullptr;
  const ModuleReport* b = nullptr;
  PairBasis paired_by = PairBasis::kNone;
  // Buffers whose bytes changed, by |delta|, largest first (ties: growth
  // first, then by key, so the order is stable).
  std::vector<BufferChange> changes;
  // Buffers whose line moved while their bytes stayed the same.
  std::vector<BufferChange> moved;
  std::vector<detect::Finding> new_findings;       // in B, not in A
  std::vector<detect::Finding> resolved_findings;  // in A, not in B
};

struct DiffReport {
  std::vector<ModuleDiff> modules;
  // What to call the sides instead of their files ("baseline", "current");
  // "" shows the files.
  std::string a_label;
  std::string b_label;
};

// `a` and `b` must outlive the result.
DiffReport DiffReports(const Report& a, const Report& b);

// A side's number; 0 for a missing side or one without computed numbers.
int64_t SideMetric(const ModuleReport* side, Metric metric);
// B's number minus A's.
int64_t MetricDelta(const ModuleDiff& diff, Metric metric);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_DIFF_H_
