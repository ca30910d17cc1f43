// Structural checks a module must pass before analysis: the invariants the
// engine relies on, reported as located errors rather than crashes later.
#ifndef HLOMEM_LIB_HLO_VERIFIER_H_
#define HLOMEM_LIB_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "lib/hlo/module.h"

namespace hlomem::hlo {

// Checks: an entry computation exists; instruction names are unique within
// each computation and parameter numbers are unique and dense; operands and
// control predecessors form no cycle; the call graph has no cycle (a
// computation never calls itself, directly or not); get-tuple-element
// indexes exist; while, conditional, fusion and call have the computations
// their opcode needs; input_output_alias entries name real parameters.
absl::Status VerifyModule(const Module& module);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_VERIFIER_H_
