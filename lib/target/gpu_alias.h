// XLA:GPU's AliasInfo::MayAlias (xla/service/gpu/alias_info.cc and its
// NVPTX subclass): which fusions, collectives and library calls may write
// their output into an operand's buffer, even when the two shapes differ.
#ifndef HLOMEM_LIB_TARGET_GPU_ALIAS_H_
#define HLOMEM_LIB_TARGET_GPU_ALIAS_H_

#include <optional>

#include "lib/hlo/module.h"

namespace hlomem::target {

// nullopt: the generic rules decide. `nvidia` adds the CUDA-only rules
// (in-place all-reduce, cuBLASLt bias, cuSOLVER Cholesky).
std::optional<bool> GpuMayAlias(const hlo::Module& module, hlo::InstrId operand,
                                const hlo::ShapeIndex& operand_index, hlo::InstrId user,
                                const hlo::ShapeIndex& user_index, bool nvidia);

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_GPU_ALIAS_H_
