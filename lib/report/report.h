// The report model: for each module of the input, the numbers hlomem
// computed, XLA's own numbers where the dump has them, the buffers and the
// timeline. The writers (writers.h) only format this model; diff.h and
// check.h compare and judge it.
#ifndef HLOMEM_LIB_REPORT_REPORT_H_
#define HLOMEM_LIB_REPORT_REPORT_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/base/memory_stats.h"
#include "lib/detect/detectors.h"
#include "lib/dump/loader.h"
#include "lib/dump/xla_error.h"
#include "lib/target/target.h"

namespace hlomem::report {

// The version of the JSON output's schema (cmd/hlomem/version.h.in repeats
// it for --version). Bump on incompatible changes only; adding fields is
// compatible.
// 2: a report's buffers and timeline are bounded unless --full, and say
// what they cut ("truncated"); every key of version 1 stays.
inline constexpr int kSchemaVersion = 2;

struct MemoryNumbers : MemoryStats {
  int64_t total_bytes = 0;
  std::optional<int64_t> peak_live_bytes;
  std::optional<int64_t> fragmentation_bytes;
  std::optional<int64_t> peak_memory_bytes;  // memory_analysis()'s peak
};

// The headline numbers every format shows, in this order.
enum class Metric : uint8_t { kTotal, kArguments, kOutputs, kAliased, kTemp, kPeakLive };
inline constexpr Metric kMetrics[] = {Metric::kTotal, Metric::kArguments, Metric::kOutputs,
                                      Metric::kAliased, Metric::kTemp, Metric::kPeakLive};
absl::string_view MetricName(Metric metric);     // "total", "arguments", ..., "peak live"
absl::string_view MetricJsonKey(Metric metric);  // "total_bytes", ..., "peak_live_bytes"
int64_t MetricValue(const MemoryNumbers& numbers, Metric metric);

struct Mismatch {
  std::string field;  // "total_bytes", ...
  int64_t computed = 0;
  int64_t xla = 0;
};

// Strings that many rows repeat (shapes, op names, source files, opcodes),
// each kept once: a million rows held them a million times. Rows view
// them; the reports whose rows do keep the pool alive.
class StringPool {
 public:
  // A view of a copy of `text` that lives as long as the pool.
  absl::string_view Intern(absl::string_view text);

 private:
  absl::flat_hash_set<absl::string_view> interned_;  // views into strings_
  std::deque<std::string> strings_;                  // never move once added
};

// One buffer as the writers show it: the same whether computed from a dump
// or read back from a report's JSON (a baseline). The views point into a
// StringPool of the report that holds the row (ModuleReport::string_pools),
// or at static text (a kind's name).
struct BufferRow {
  std::string instruction;
  std::vector<int64_t> shape_index;
  absl::string_view opcode;
  absl::string_view shape;  // with layout, as XLA prints it
  int64_t bytes = 0;
  absl::string_view kind;  // analysis::BufferKindName: "parameter", "temp", ...
  int64_t allocation = -1;
  absl::string_view memory_space;  // the target's name for its allocation's colour
  int64_t offset = -1;
  int64_t start = -1;  // live range in schedule steps, -1 when never live
  int64_t end = -1;
  absl::string_view op_name;
  absl::string_view op_type;
  absl::string_view source_file;  // "" when the HLO has no source location
  int64_t source_line = 0;
  // Its Python stack: an id into ModuleReport::stack_frames (1-based), 0
  // when the HLO has none. source_file/line is the user's frame of it.
  int64_t stack_frame = 0;

  std::string Source() const;  // "file:line", "file" or ""
  // What to call the buffer: its op_name, else the instruction's name.
  absl::string_view Label() const {
    return op_name.empty() ? absl::string_view(instruction) : op_name;
  }
};

// "128.00GiB (137438953472 B)": readable, and exact for scripts and bug reports.
std::string HumanAndExact(int64_t bytes);

// `part` as a share of `whole`, "12.3%"; "" when `whole` is 0.
std::string PercentOf(int64_t part, int64_t whole);

// A size change with its sign: "+1.00GiB", "-512B".
std::string SignedBytes(int64_t bytes);

// B relative to A as "+73.6%"; "" when A is 0; ">+999%" past that.
std::string PercentChange(int64_t a, int64_t b);

// The shape without its layout: "s32[8,3]{1,0}" -> "s32[8,3]".
std::string StripLayout(absl::string_view shape);

// Whether a module fits on a device (`--device`, `--device-memory`).
// Device memory only: TPU VMEM/SMEM and host memory are not in it.
struct DeviceFit {
  std::string device;     // "h100-80gb", or "" for --device-memory
  // The device's memory: for a GPU preset the total CUDA reports for the
  // card, which JAX's allocator takes its fraction of.
  int64_t capacity = 0;
  double fraction = 1.0;  // of it the framework lets XLA use
  int64_t usable = 0;     // capacity * fraction, or what the chip offers programs
  // Where `usable` comes from when not a fraction: "XLA:TPU's available HBM".
  std::string usable_source;
  // Where `capacity` comes from: the preset's source ("measured: jax
  // memory_stats bytes_limit on H100 80GB HBM3, 2026-11", "estimated: ...");
  // "" for --device-memory and a fit made from an error alone.
  std::string capacity_source;
  bool capacity_estimated = false;
  // Set when the allocator limit the user's log states decided `usable`
  // (or confirmed the preset's): which line, "the log's BFCAllocator line
  // (line 3)". Then preset_usable is what the preset alone offered.
  std::string usable_from_log;
  std::optional<int64_t> preset_usable;
  int64_t needed = 0;     // the device-memory allocations of the executable
  // Whose allocations `needed` sums: "xla" (the dump's buffer assignment,
  // which decides when present) or "hlomem" (computed from the HLO).
  std::string needed_source = "hlomem";
  // hlomem's own figure when XLA's decided and the two differ.
  std::optional<int64_t> computed_needed;
  bool fits = true;
  int64_t shortfall = 0;  // needed - usable when it does not fit
  // Set when the dump was compiled for another backend than the device's.
  std::string caveat;
};

// One memory space (allocation colour) of a module: HBM, VMEM, SMEM,
// host... with the sum of its allocations, hlomem's and XLA's.
struct MemorySpaceTotals {
  int64_t color = 0;
  std::string name;        // the target's name for it: "HBM", "device", "VMEM"
  bool is_device = false;  // device memory (GPU memory, TPU HBM)
  bool is_host = false;
  std::optional<int64_t> computed_bytes;
  std::optional<int64_t> xla_bytes;
};

// An out-of-memory error the user gave (--error) tied to its module: XLA's
// figures beside the module's device-memory allocations.
struct OomExplanation {
  dump::XlaOomError error;
  std::optional<int64_t> device_bytes;  // XLA's allocations when the dump has them
  std::string device_bytes_source;      // "xla" or "hlomem"
  // The error's "needed" is the module's device memory, to its rounding.
  bool agrees = false;
  // An error that names no module, tied to this one by its size: "temp" or
  // "total" (the figure of the module the error's bytes equal); "" when the
  // error names the module or the dump has only this one.
  std::string matched_by;
  // Other modules of the dump whose temp or total equals the error's bytes
  // as well: the error may be any of them.
  std::vector<std::string> also_matching;
};

// The instruction the schedule runs at the peak step: what executes when
// memory is highest, and the line of the user's program it came from.
struct PeakInstruction {
  std::string instruction;
  std::string opcode;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;

  std::string Source() const;  // "file:line", "file" or ""
  // "wrapped_scatter.clone (scatter, jit(f)/scatter-add, seed.py:15)".
  std::string Describe() const;
};

// One frame of the Python stacks of a module's buffers, as XLA's
// StackFrames tables give them; parent is a frame id, 0 at the root.
struct StackFrameRow {
  std::string file;
  std::string function;
  int64_t line = 0;
  int64_t parent = 0;
  bool library = false;  // jax, flax, optax, ...: not the user's code
};

// Bytes live at the peak under one source line or op_name (RollupAtPeak).
struct RollupRow {
  std::string key;
  int64_t bytes = 0;
  int buffers = 0;
};

struct ModuleReport {
  std::string name;
  std::vector<std::string> files;
  std::string backend;  // "cpu", "gpu", "tpu", "" when unknown
  std::string target;   // "cpu", "gpu sm_9.0a", "tpu v5e": the rules applied
  // The device the dump was compiled for, when its files name one.
  std::optional<target::DeviceMemory> device;
  // The target's share of device memory the framework lets XLA use.
  double default_mem_fraction = 1.0;
  std::vector<MemorySpaceTotals> memory_spaces;  // by colour
  std::string stage;    // "after_optimizations", "before_optimizations", ...
  // The program's fingerprint, which pairs it with its counterpart in a
  // baseline or a diff where names repeat (pairing.h): the entry's parameter
  // and result shapes without layouts, "(f32[8,3], s32[8])->f32[]", and its
  // instruction count. "" and 0 when unknown: a dump with only XLA's files,
  // or a report written before they were recorded.
  std::string signature;
  int64_t instruction_count = 0;
  bool scheduled = false;
  // True when the computed numbers reproduce XLA's exactly (a scheduled CPU
  // module after optimizations); false marks them as estimates.
  bool exact = false;
  std::string estimate_reason;  // why not exact

  // The model and its buffer assignment are freed once the module is
  // analysed: what the writers need is copied out below, so a directory's
  // modules and a 1 GB module's report need not keep them.
  analysis::MemoryProfile profile;
  std::optional<MemoryNumbers> computed;
  std::optional<MemoryNumbers> xla;
  // Why XLA's buffer assignment was left out when the dump had one that is
  // not whole (cut short, or disagreeing with XLA's other files): then
  // `xla` is empty and hlomem's figures decide. Empty otherwise.
  std::string xla_incomplete;
  std::vector<Mismatch> mismatches;
  std::vector<detect::Finding> findings;  // largest first
  std::vector<std::string> warnings;

  // One per buffer record of the profile, in its order; the records are
  // dropped once the rows are built (the rows say all the writers need).
  // A report read from JSON has the same: rows, and the profile's
  // timeline, peak and live set.
  std::vector<BufferRow> rows;
  // What the rows' views point into.
  std::vector<std::shared_ptr<const StringPool>> string_pools;
  int64_t schedule_length = 0;
  std::optional<PeakInstruction> peak_instruction;
  // The frames the rows' stack_frame ids index (id k at k-1); empty when the
  // HLO has no StackFrames section.
  std::vector<StackFrameRow> stack_frames;
  std::optional<DeviceFit> device_fit;
  std::optional<OomExplanation> oom;
  // For a report read from a bounded JSON: how many buffers, buffers live
  // at the peak and timeline steps the module had before the writer cut
  // them (0: nothing was cut), and its rollups at the peak, made from every
  // buffer (RollupAtPeak returns them). The timeline read back holds each
  // kept step's bytes until the next.
  int64_t buffers_total = 0;
  int64_t live_at_peak_total = 0;
  int64_t timeline_total = 0;
  std::vector<RollupRow> peak_by_line, peak_by_op;
};

// How many buffers are live at the peak, of a report read back too.
inline size_t LiveAtPeakCount(const ModuleReport& m) {
  return std::max<size_t>(m.profile.live_at_peak.size(), static_cast<size_t>(m.live_at_peak_total));
}

struct Report {
  std::vector<ModuleReport> modules;
  // Modules of the dump that could not be read. A verdict on the others
  // would pass without them, so the commands refuse one unless told to
  // skip them (--skip-unreadable).
  std::vector<dump::UnreadableModule> unreadable;
  std::vector<std::string> warnings;
};


// Modules of the input that could not be read stop a command: its error
// names each (with its located error) and how to go on without them,
// `skip_hint` being the face's way ("--skip-unreadable",
// "skip_unreadable=True"). "" when every module was read.
std::string UnreadableError(const Report& report, absl::string_view skip_hint);
// Going on without them: one warning per module, naming it and `skip_hint`.
void WarnOfUnreadable(Report* report, absl::string_view skip_hint);

// The module's device-memory figure the index sorts by: its peak of live
// bytes when computed, else XLA's total (a dump with only XLA's files).
int64_t ModuleSize(const ModuleReport& module);

// Orders the modules largest first (ModuleSize; dump order among equals):
// a training script's dump holds dozens of small modules around the step.
void SortModulesLargestFirst(Report* report);

// The small programs JAX compiles around a training step for work done
// eagerly: jax.random.normal runs jit__normal, `w / n` jit_true_divide,
// `x[i:j]` jit_dynamic_slice, jnp.asarray(...) jit_convert_element_type.
// A script's dump holds dozens; the text formats summarize them on one line
// so the step is what the reader sees. A module is such a helper when
//   - its name starts with "jit__": a JAX-private function (_normal,
//     _randint, _threefry_split, _one_hot, _uniform) jitted and called
//     eagerly; no user function is named with a leading underscore by jit,
//     or
//   - it has fewer than kHelperMaxInstructions instructions: one operation
//     with its parameters, a constant and a fusion (jit_true_divide has 12).
// Size does not decide: initializing the first layer's weights
// (jit__normal, 6.1MiB) takes more than the step that trains them (5.4MiB).
// Never a helper: a module with an out-of-memory error or a failed device
// fit (the reader must see it), nor any module when fewer than two are
// given or when every module would be one (then nothing is drowned).
inline constexpr int64_t kHelperMaxInstructions = 16;
std::vector<bool> HelperModules(const Report& report);
// Names with their counts, most frequent first (ties by name), at most
// `shown` then "...": "jit__normal x4, jit_dynamic_slice x4, jit_sqrt, ...".
std::string CountedNames(const std::vector<std::string>& names, size_t shown);

// Bytes live at the peak grouped by the buffers' source line or op_name,
// largest first; the key is "" for buffers without one.
enum class RollupKey : uint8_t { kSourceLine, kOpName };
std::vector<RollupRow> RollupAtPeak(const ModuleReport& module, RollupKey key);
// The same over `rows`, the buffers live at the peak.
std::vector<RollupRow> Rollup(const std::vector<const BufferRow*>& rows, RollupKey key);

// The rows a bounded report keeps, ascending: the `limit` largest of those
// live at the peak (`live_at_peak`, indices below `count`) and the `limit`
// largest of all, equal sizes by position so the output is stable; every
// row when `limit` is 0 or `count` is at most `limit`.
std::vector<size_t> KeptRows(size_t count, const std::vector<size_t>& live_at_peak, size_t limit,
                             absl::FunctionRef<int64_t(size_t)> bytes_of);

// The timeline reduced to at most `columns` points, each the maximum of
// the steps it covers (so the peak survives).
std::vector<int64_t> DownsampleMax(const std::vector<int64_t>& values, size_t columns);

// The steps DownsampleMax takes its maxima from, one per column: sampling
// other series at them keeps a stack of series consistent with the total.
std::vector<size_t> DownsampleArgMax(const std::vector<int64_t>& values, size_t columns);

// The timeline split by source line, as memory_viz stacks allocations: the
// `top` lines holding the most at the peak, each with its bytes live at
// every step; the rest of the timeline is everything else.
struct LineBand {
  std::string key;  // "file:line", "" for buffers without one
  int64_t bytes_at_peak = 0;
  std::vector<int64_t> live;  // per step, the length of the timeline
};
std::vector<LineBand> TimelineByLine(const ModuleReport& module, size_t top);

// Per row: whether the buffer is live at the peak.
std::vector<bool> AtPeakMask(const ModuleReport& module);

// A row's stack, innermost frame first: "file:line function" per frame.
std::vector<const StackFrameRow*> StackOf(const ModuleReport& module, int64_t stack_frame);

// The rows live at the peak, largest first, at most `top`.
std::vector<const BufferRow*> TopAtPeak(const ModuleReport& module, int top);

// The rows live at the peak with identical buffers merged (same kind,
// shape, bytes, op_name and line: the same activation saved by each layer
// of an unrolled loop), largest first, at most `top` groups. `row` is the
// first of its group; `count` how many it stands for.
struct PeakGroup {
  const BufferRow* row = nullptr;
  int count = 0;
  int64_t bytes() const { return row->bytes * count; }
};
std::vector<PeakGroup> GroupedAtPeak(const ModuleReport& module, int top);
// How many rows the groups stand for (for "... N more").
size_t RowsIn(const std::vector<PeakGroup>& groups);

// Whether a module has more memory spaces than the one device memory (TPU's
// HBM, VMEM, SMEM; host memory): the writers then show a table of them.
bool HasSeveralMemorySpaces(const ModuleReport& module);
// A space's role ("device memory", "host", "on chip") and how hlomem's sum
// compares with XLA's ("matches", "differs by +16.00MiB", "" without XLA's).
std::string MemorySpaceRole(const MemorySpaceTotals& space);
std::string MemorySpaceVerdict(const MemorySpaceTotals& space);

// An out-of-memory explanation in sentences: the error's title ("E1000
// CompileTimeHbmOom on HBM") and its figures beside the module's.
std::string OomTitle(const OomExplanation& oom);
std::vector<std::string> OomLines(const OomExplanation& oom);

// A finding as a fix for an out-of-memory error, checked against the
// program: whether the buffers it names are live at the peak (only those
// lower it), and how much of the shortfall the fixes up to it would cover.
struct RankedFix {
  const detect::Finding* finding = nullptr;
  bool at_peak = false;
  int64_t cumulative_bytes = 0;  // this fix and the ones ranked above it, at the peak
};

// The findings ranked for `explain`: those live at the peak first, each
// group largest first.
std::vector<RankedFix> RankFixes(const ModuleReport& module);

// The allocations a runtime out-of-memory error could have been: the temp
// heap (one allocation) and each parameter, output and constant buffer,
// whose size is the failed allocation's to the message's rounding.
struct AllocationCandidate {
  std::string what;  // "the temp allocation (the heap of all temps)" or the buffer's label
  int64_t bytes = 0;
  const BufferRow* row = nullptr;  // null for the temp allocation
};
std::vector<AllocationCandidate> FailedAllocationCandidates(const ModuleReport& module,
                                                            const dump::XlaOomError& error);

// The device of a verdict ("h100-80gb", or "a 80.00GiB device") and its
// budget ("needs 224.01GiB, usable 60.00GiB (75% of 80.00GiB)").
std::string DeviceFitName(const DeviceFit& fit);
// "needs X by XLA's buffer assignment, usable Y from the h100-80gb preset
// (75% of the Z CUDA reports; measured)", or "from the log's BFCAllocator
// line (line 3)": the verdict's figures and which one decided.
std::string DeviceFitBudget(const DeviceFit& fit);
// Where the usable figure's device total comes from, for a line of its own:
// the preset's source; "" when there is none to say.
std::string DeviceFitSource(const DeviceFit& fit);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_REPORT_H_
