// The allocation sums in the sense of jax's Compiled.memory_analysis()
// (xla/pjrt's PopulateBufferStatsFromAllocations), shared by hlomem's own
// buffer assignment, XLA's as read from a dump, and the reports: host
// memory-space allocations count in the host_ fields only (the target layer
// says which colours are host memory).
#ifndef HLOMEM_LIB_BASE_MEMORY_STATS_H_
#define HLOMEM_LIB_BASE_MEMORY_STATS_H_

#include <cstdint>

namespace hlomem {

struct MemoryStats {
  int64_t argument_bytes = 0;  // entry-parameter allocations
  int64_t output_bytes = 0;    // maybe-live-out allocations
  int64_t alias_bytes = 0;     // parameter allocations donated to an output
  int64_t temp_bytes = 0;      // preallocated-temp allocations
  int64_t constant_bytes = 0;
  int64_t thread_local_bytes = 0;
  int64_t host_argument_bytes = 0;
  int64_t host_output_bytes = 0;
  int64_t host_alias_bytes = 0;
  int64_t host_temp_bytes = 0;
};

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_MEMORY_STATS_H_
