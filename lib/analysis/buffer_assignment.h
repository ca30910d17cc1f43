// Reproduces XLA's buffer assignment for a scheduled module (the CPU
// backend's BufferAssigner::Run): live ranges over the flattened schedule,
// parameter / constant / output / thread-local allocations, in-place reuse,
// the temp heap laid out by the heap simulator, and temp combination.
// The result's totals are what XLA prints as "Total bytes used" and what
// jax's compiled.memory_analysis() reports.
#ifndef HLOMEM_LIB_ANALYSIS_BUFFER_ASSIGNMENT_H_
#define HLOMEM_LIB_ANALYSIS_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "lib/analysis/dataflow.h"
#include "lib/base/memory_stats.h"
#include "lib/hlo/module.h"
#include "lib/target/target.h"

namespace hlomem::analysis {

// Inclusive [start, end] in flattened-schedule steps. 12 bytes: a large
// module has millions, and its schedule has far fewer than 2^31 steps (a
// module holds at most --max-elements instructions).
struct LiveRange {
  int32_t start = -1;
  int32_t end = -1;
  NodeId end_position = kNone;  // the position that decided `end`
  bool valid() const { return start >= 0; }
};
static_assert(sizeof(LiveRange) == 12);

struct Allocation {
  int64_t index = 0;
  int64_t size = 0;
  int64_t color = 0;
  bool is_parameter = false;
  int64_t parameter_number = -1;
  ShapeIndex parameter_index;
  bool aliased_with_output = false;  // a donated parameter reused for an output
  bool is_constant = false;
  bool is_thread_local = false;
  bool is_tuple = false;
  bool maybe_live_out = false;
  // True for the one allocation per color that combines the heap and the
  // non-live-out tuple tables.
  bool is_combined_temp = false;

  struct Slice {
    ValueId value;
    int64_t offset;
    int64_t size;
  };
  std::vector<Slice> slices;

  // XLA's IsPreallocatedTempBuffer.
  bool is_temp() const {
    return !is_parameter && !maybe_live_out && !is_thread_local && !is_constant;
  }
  bool is_readonly() const { return (is_parameter && !aliased_with_output) || is_constant; }
};

struct AssignmentStats : MemoryStats {
  // "Total bytes used": the allocations in device and host memory (all of
  // them on CPU and GPU; on TPU, VMEM and SMEM are left to color_bytes).
  int64_t total_bytes = 0;
  // Sum of allocation sizes per colour (memory space), as XLA's
  // memory-usage report's "Total bytes" per memory space.
  std::map<int64_t, int64_t> color_bytes;
  int64_t peak_memory_bytes = 0;  // XLA's ComputePeakMemory equivalent
  int64_t heap_bytes = 0;          // temp heap before tuple tables are appended
  int64_t heap_lower_bound = 0;    // no-fragmentation peak of the heap's values
};

class BufferAssignment {
 public:
  // The target sizes, colours and aligns the buffers and adds its own
  // in-place rules; it must outlive the assignment.
  static absl::StatusOr<std::unique_ptr<BufferAssignment>> Run(
      const hlo::Module& module, const target::Target& target = target::DefaultTarget());

  const hlo::Module& module() const { return *module_; }
  const target::Target& target() const { return *target_; }
  const CallGraph& call_graph() const { return call_graph_; }
  const FlatSchedule& schedule() const { return schedule_; }
  const Dataflow& dataflow() const { return *dataflow_; }
  const std::vector<Allocation>& allocations() const { return allocations_; }
  const AssignmentStats& stats() const { return stats_; }
  // Normalized live range of each value (invalid for values with no time).
  const LiveRange& live_range(ValueId v) const { return ranges_[v]; }
  // Allocation holding a buffer, or -1 (fusion bodies have none).
  int64_t allocation_of_buffer(BufferId b) const { return allocation_of_buffer_[b]; }
  // Offset of a value within its allocation, or -1.
  int64_t offset_of(ValueId v) const { return offset_of_value_[v]; }
  int64_t buffer_size(BufferId b) const { return buffer_sizes_[b]; }
  // Whether input_output_alias ties entry parameter (number, index) to an
  // output. A set, since large training steps alias thousands of them.
  bool parameter_aliased(int64_t parameter, const ShapeIndex& index) const {
    return aliased_parameters_.contains(std::make_pair(parameter, index));
  }

 private:
  BufferAssignment() = default;

  const hlo::Module* module_ = nullptr;
  const target::Target* target_ = nullptr;
  CallGraph call_graph_;
  FlatSchedule schedule_;
  std::unique_ptr<Dataflow> dataflow_;
  std::vector<LiveRange> ranges_;
  std::vector<int64_t> buffer_sizes_;
  std::vector<Allocation> allocations_;
  std::vector<int64_t> allocation_of_buffer_;
  std::vector<int64_t> offset_of_value_;
  absl::flat_hash_set<std::pair<int64_t, ShapeIndex>> aliased_parameters_;
  AssignmentStats stats_;

  friend class BufferAssigner;
};

// The allocations in the layout of XLA's -buffer-assignment.txt, so the two
// can be compared line by line ("allocation 3: size 64, maybe-live-out:").
std::string FormatAllocations(const BufferAssignment& assignment);

// The schedule and each value's live range in the layout of XLA's
// -live-range.txt ("    copy.17{}:2-4"), to diff against XLA's own.
std::string FormatLiveRanges(const BufferAssignment& assignment);

// Exposed for tests: XLA's CanShareOperandBufferWithUser.
bool CanShareOperandBufferWithUser(const Dataflow& dataflow, NodeId operand_node,
                                   InstrId user, NodeId user_node,
                                   const target::Target& target = target::DefaultTarget());

}  // namespace hlomem::analysis

#endif  // HLOMEM_LIB_ANALYSIS_BUFFER_ASSIGNMENT_H_
