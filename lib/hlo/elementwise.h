// Whether an instruction reads an operand element by element, as XLA's
// HloInstruction::IsElementwiseOnOperand decides it. Buffer sharing rests on
// it: an output may overwrite an operand read in the same iteration order.
#ifndef HLOMEM_LIB_HLO_ELEMENTWISE_H_
#define HLOMEM_LIB_HLO_ELEMENTWISE_H_

#include <cstddef>

#include "lib/hlo/module.h"

namespace hlomem::hlo {

// XLA's IsElementwiseOnOperand for operand slot `operand` of `user`.
bool IsElementwiseOnOperand(const Module& module, InstrId user, size_t operand);

// Every op reached from `start` through users inside its computation is
// elementwise on the path (HloFusionInstruction::IsElementwiseImpl); with
// `allow_tuple`, tuples pass too.
bool AllTransitiveUsersElementwise(const Module& module, InstrId start, bool allow_tuple);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_ELEMENTWISE_H_
