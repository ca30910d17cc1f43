// Reads the out-of-memory errors XLA and its runtimes print, so that a
// report can put XLA's own figures beside the buffers that make them. Where
// each form comes from: libtpu's compiler (E1000/E1001, documented with
// these texts in openxla/xla docs/errors/error_1000.md and error_1001.md;
// the first below is what jax[tpu] 0.12 prints, testdata/accel/*/oom_*),
// libtpu's runtime (docs/errors/error_0100.md), XLA:GPU's executable
// allocations (xla/service/gpu) and TSL's BFC allocator
// (tsl/framework/bfc_allocator.cc), which JAX's GPU client uses:
//   XLA:TPU compile time  "E1000: CompileTimeHbmOom: ... the total memory required
//                          for HLO temporaries (18.52G) exceeds available HBM (15.75G).
//                          HLO module: jit_train_step."
//                         "Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm."
//                         "Aborting compilation early ... Requires 3.84T, has 90.96G available."
//                         "Allocation (size=134217728) would exceed memory (size=67108864)
//                          :: #allocation25 [..., space=vmem, ...]"  (E1001)
//   TPU runtime           "Attempting to allocate 8.00M. That was not possible.
//                          There are 6.43M free.; (0x0x1_HBM0)"
//   XLA:GPU               "Out of memory while trying to allocate 1073741824 bytes."
//   BFC allocator         "... ran out of memory trying to allocate 8.00GiB
//                          (rounded to 8589934592)"
// A GPU log also states the allocator's limit, which decides whether a
// program fits (AllocatorLimit below): JAX's GPU client when it creates the
// allocator (xla/pjrt/gpu/gpu_helpers.cc), and the BFC allocator's dump on
// an out-of-memory error (tsl/framework/bfc_allocator.cc, allocator.cc):
//   start                 "XLA backend allocating 59.38GiB (63763906560 bytes) on
//                          device 0 for BFCAllocator"  (older: "allocating N bytes",
//                          without preallocation "will use up to N bytes")
//   out-of-memory dump    "... pool size 59.38GiB, pool limit 59.38GiB"
//                         "Total size in pool: 89.77GiB memory_limit_: 89.77GiB ..."
//                         "Stats: " then "Limit:   59.38GiB" (older: raw bytes)
#ifndef HLOMEM_LIB_DUMP_XLA_ERROR_H_
#define HLOMEM_LIB_DUMP_XLA_ERROR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem::dump {

// The listing XLA prints under a GPU out-of-memory error ("BufferAssignment
// OOM Debugging."): the executable's allocation totals and its peak buffers,
// each with its op_name and source line. With it an error explains itself
// even without a dump.
struct XlaOomListing {
  struct PeakBuffer {
    int64_t bytes = 0;
    std::string label;  // "XLA Label:": the instruction's opcode or fusion kind
    std::string shape;
    std::string op_name;
    std::string source_file;
    int64_t source_line = 0;
    bool entry_parameter = false;  // "Entry Parameter Subshape:"
  };
  // "parameter allocation: 6.00MiB" ... by name: parameter, constant,
  // maybe_live_out, preallocated temp, total, total fragmentation.
  std::vector<std::pair<std::string, int64_t>> stats;
  std::vector<PeakBuffer> peak_buffers;
  std::optional<int64_t> Stat(absl::string_view name) const;
};

// The memory limit of the allocator a GPU log states (the forms above): the
// bytes a run can allocate, which the device fit takes over a preset's.
struct AllocatorLimit {
  enum class Kind : uint8_t {
    kBfcStart,    // "XLA backend allocating ... for BFCAllocator": exact bytes
    kPoolLimit,   // the out-of-memory dump's "pool limit" or "memory_limit_:"
    kStatsLimit,  // the out-of-memory dump's "Stats:" block, "Limit:"
  };
  Kind kind = Kind::kBfcStart;
  int64_t bytes = 0;
  // Bytes the figure may be off by: 0 when the line gives exact bytes,
  // else half a unit of its last digit ("59.38GiB": 5.12MiB).
  int64_t rounding_bytes = 0;
  int device = -1;      // the device ordinal the line names; -1 when none
  int64_t line = 0;     // 1-based
  std::string message;  // the line, trimmed
};

struct XlaOomError {
  enum class Kind : uint8_t {
    kCompileTimeHbmOom,  // XLA:TPU refused to compile (E1000)
    kTpuRuntime,         // the TPU runtime could not allocate a buffer
    kGpuAllocation,      // XLA:GPU or the BFC allocator could not allocate
    // XLA:TPU refused to compile: one allocation (E1001, often a kernel's
    // scoped VMEM) is larger than its memory space.
    kCompileTimeAllocation,
  };
  Kind kind = Kind::kCompileTimeHbmOom;
  std::string code;         // "E1000", "" when the message has none
  std::string memory;       // "HBM", "0x0x1_HBM0", "" when unnamed
  std::string module_name;  // "jit_train_step" (E1000 names it), else ""
  // What the program needed (E1000: all HBM allocations; runtime: the one
  // allocation) and what was available; nullopt when not stated.
  std::optional<int64_t> needed_bytes;
  std::optional<int64_t> available_bytes;
  // Bytes either figure may be off by: messages round to two decimals.
  int64_t rounding_bytes = 0;
  int64_t line = 0;     // 1-based line of the message in the file
  std::string message;  // the line, trimmed
  std::optional<XlaOomListing> listing;  // the lines printed under it, if any
  // The allocator's limit the same log states (ChooseAllocatorLimit), if
  // any: what the failed allocation was measured against.
  std::optional<AllocatorLimit> allocator_limit;
};

// Every allocator limit `text` states, in order. The collective-memory
// allocator's lines ("for CollectiveBFCAllocator") are not the program's
// limit and are left out.
std::vector<AllocatorLimit> ParseAllocatorLimits(absl::string_view text);

// The limit to decide with: an exact figure over a rounded one (the start
// line over the dump's two decimals), and among those the smallest (one
// device that cannot hold the program fails the run). nullopt when none.
std::optional<AllocatorLimit> ChooseAllocatorLimit(const std::vector<AllocatorLimit>& limits);

// "the log's BFCAllocator line", "the log's pool limit line", "the log's
// Limit: line", with its line number: "(line 3)".
std::string DescribeAllocatorLimit(const AllocatorLimit& limit);

// Every out-of-memory message in `text` (a log, a traceback, a pasted
// error), in order, each with the allocator limit the text states. An
// error, `path: error: ...`, when there is none.
absl::StatusOr<std::vector<XlaOomError>> ParseXlaOomErrors(absl::string_view path,
                                                          absl::string_view text);

// Whether XLA refused to compile (no allocation failed at run time).
inline bool IsCompileTime(XlaOomError::Kind kind) {
  return kind == XlaOomError::Kind::kCompileTimeHbmOom || kind == XlaOomError::Kind::kCompileTimeAllocation;
}

// "CompileTimeHbmOom", "TPU runtime allocation", "GPU allocation".
absl::string_view XlaOomKindName(XlaOomError::Kind kind);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_XLA_ERROR_H_
