// What the reports show about one module, derived from its buffer
// assignment: one record per buffer, the bytes live at each step of the
// flattened schedule, and the peak with the buffers live there.
#ifndef HLOMEM_LIB_ANALYSIS_MEMORY_PROFILE_H_
#define HLOMEM_LIB_ANALYSIS_MEMORY_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/analysis/buffer_assignment.h"

namespace hlomem::analysis {

enum class BufferKind : uint8_t {
  kParameter,    // an entry parameter (read-only unless donated)
  kOutput,       // in a maybe-live-out allocation
  kTemp,         // in the combined temp allocation (the heap)
  kConstant,
  kThreadLocal,  // stack storage of reducers, comparators, ...
};
absl::string_view BufferKindName(BufferKind kind);  // "parameter", "output", ...

// 48 bytes, fields ordered largest first (no padding): a million of these
// make a large module's profile. Steps are LiveRange's 32 bits, and
// allocation indices are fewer than buffers.
struct BufferRecord {
  int64_t bytes = 0;
  int64_t offset = -1;
  int32_t allocation = -1;
  int32_t start = -1;  // first step live (inclusive), -1 when never scheduled
  int32_t end = -1;    // last step live (inclusive)
  // The buffer's largest value (its shape index: Dataflow::value_index).
  ValueId value = 0;
  BufferId buffer = 0;
  InstrId instruction = hlo::kNoId;  // defining instruction of its largest value
  ShapeId shape = 0;
  BufferKind kind = BufferKind::kTemp;
  bool is_tuple_table = false;
};
static_assert(sizeof(BufferRecord) == 48);

struct MemoryProfile {
  std::vector<BufferRecord> buffers;  // every buffer with an allocation
  // Bytes live at each step 0..end_time of the flattened schedule: buffers
  // of every allocation in device or host memory (not TPU's on-chip VMEM
  // and SMEM) but thread-local ones, each counted once; entry
  // parameters and constants for the whole program.
  std::vector<int64_t> timeline;
  int64_t peak_live_bytes = 0;
  int64_t peak_step = -1;
  // Indices into `buffers` live at the peak step, largest first.
  std::vector<size_t> live_at_peak;
  // Temp heap size minus the most temp bytes live at once.
  int64_t fragmentation_bytes = 0;
};

MemoryProfile ComputeMemoryProfile(const BufferAssignment& assignment);

}  // namespace hlomem::analysis

#endif  // HLOMEM_LIB_ANALYSIS_MEMORY_PROFILE_H_
