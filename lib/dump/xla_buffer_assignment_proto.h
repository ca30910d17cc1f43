// XLA's buffer assignment as serialized into a dump's `*.hlo.pb` (HloProto
// field 3, BufferAssignmentProto), converted to the same model the text
// readers build from `*-buffer-assignment.txt` (xla_buffer_assignment.h),
// plus a replay of the heap-simulator traces the text files do not carry.
#ifndef HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_PROTO_H_
#define HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_PROTO_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/dump/xla_buffer_assignment.h"
#include "lib/hlo/module.h"
#include "lib/hlo/proto_reader.h"

namespace xla {
class BufferAssignmentProto;
}  // namespace xla

namespace hlomem::dump {

// Converts `proto` into the text model. `module` and `instruction_ids` (proto
// instruction id -> InstrId, from ProtoReadResult) resolve each logical
// buffer's defining instruction, its shape and the entry parameters' shapes.
// Values whose instruction cannot be resolved keep the proto's deprecated
// instruction_name (old dumps) or "<unknown>". Allocations come out in index
// order, values in id order, as XLA prints them. total_bytes is the sum of
// the allocation sizes (what "Total bytes used" reports); live_range and
// is_phi are not in the proto and stay empty/false.
absl::StatusOr<XlaBufferAssignment> XlaBufferAssignmentFromProto(
    const xla::BufferAssignmentProto& proto, const hlo::Module& module,
    const absl::flat_hash_map<int64_t, hlo::InstrId>& instruction_ids,
    absl::string_view path);

// The same for a file read by hlo::ReadHloProto; an error when the file had
// no buffer assignment.
absl::StatusOr<XlaBufferAssignment> XlaBufferAssignmentFromProto(
    const hlo::ProtoReadResult& result);

// One HeapSimulatorTrace replayed with XLA's accounting
// (ComputePeakMemoryLogicalBuffers): ALLOC adds the buffer's size;
// SHARE_WITH adds it only when it is the sole live instance of its
// canonical buffer; FREE subtracts what the buffer added.
struct HeapTraceReplay {
  int64_t buffer_allocation_index = -1;
  bool whole_module_simulation = false;
  int64_t event_count = 0;
  int64_t peak_bytes = 0;
  // Index of the first event at which the peak is reached; -1 if no event
  // adds bytes.
  int64_t peak_event = -1;
  // Logical buffer ids live at that event (those that added bytes), sorted.
  std::vector<int64_t> live_at_peak;
  // Events naming a buffer id the proto does not define (counted, skipped).
  int64_t unknown_buffer_events = 0;
};

std::vector<HeapTraceReplay> ReplayHeapSimulatorTraces(
    const xla::BufferAssignmentProto& proto);

// The static part of XLA's ComputePeakMemory (engine.md §6): for every
// parameter, constant or maybe-live-out allocation that is not thread-local,
// the size of the largest logical buffer assigned to it.
//
// jax's Compiled.memory_analysis().peak_memory_in_bytes is ComputePeakMemory
// of the executable's own BufferAssignmentProto. With jaxlib 0.12 that proto
// carries no heap-simulator traces, so the number is exactly this static
// part; with jaxlib 0.7 it kept them and equals ComputePeakMemory below
// (both verified on testdata/jax).
int64_t StaticPeakBytes(const xla::BufferAssignmentProto& proto);

// XLA's ComputePeakMemory applied to a proto that does carry traces (a
// dump's .hlo.pb): StaticPeakBytes plus the largest trace peak. This counts
// the temporaries jax's number leaves out.
int64_t ComputePeakMemory(const xla::BufferAssignmentProto& proto);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_XLA_BUFFER_ASSIGNMENT_PROTO_H_
