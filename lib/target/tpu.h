// XLA:TPU targets. The backend is closed source (libtpu); its rules here are
// read off the buffer assignments it writes into dumps (testdata/accel).
#ifndef HLOMEM_LIB_TARGET_TPU_H_
#define HLOMEM_LIB_TARGET_TPU_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/target/target.h"

namespace hlomem::target {

// One TPU generation: its name as jax's topologies spell it, and the HBM
// of one chip (one TensorCore's share on megacore chips, as XLA sees it).
struct TpuGeneration {
  absl::string_view name;  // "v5e"
  int64_t hbm_bytes;       // physical HBM per XLA device
  // What XLA:TPU offers a program, from its own CompileTimeHbmOom messages
  // ("exceeds available HBM (15.75G)"); 0 when not known.
  int64_t program_hbm_bytes;
  // A tuple's table of 4-byte element addresses is rounded up to this
  // (XLA:TPU's assignments: 512 on v5e, 32 on v5p and v6e).
  int64_t tuple_table_granule;
  // The most of the on-chip memory laid out by memory-space assignment
  // (VMEM; on v4 also its colour 3) that XLA:TPU's heaps reach: it keeps the
  // rest for its kernels' scoped memory. 0 when not known.
  int64_t msa_vmem_bytes = 0;
  int64_t msa_color3_bytes = 0;
};

// The generation named by `name` ("v5e", "v5litepod", "TPU v5 lite", "v4"),
// or nullptr.
const TpuGeneration* FindTpuGeneration(absl::string_view name);

// The generation a dump's TPU files name: target_arguments.txt's
// tpu_topology_args { version: TPU_VERSION_... variant: "..." }. nullptr
// when the text names none; errors only for malformed text.
absl::StatusOr<const TpuGeneration*> ParseTpuTargetArguments(absl::string_view path,
                                                             absl::string_view text);

// `generation` may be nullptr: TPU rules without a device.
std::unique_ptr<Target> MakeTpuTarget(const TpuGeneration* generation, int64_t alignment = 0);

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_TPU_H_
