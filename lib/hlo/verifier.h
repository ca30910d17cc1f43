// Structural checks a module must pass before analysis: the invariants the
// engine relies on, reported as located errors rather than crashes later.
#ifndef HLOMEM_LIB_HLO_VERIFIER_H_
#define HLOMEM_LIB_HLO_VERIFIER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "lib/hlo/module.h"

namespace hlomem::hlo {

// Checks: an entry computation exists; instruction names are unique within
// each computation and parameter numbers are unique and dense; operands and
// control predecessors form no cycle; the call graph has no cycle (a
// computation never calls itself, directly or not); get-tuple-element
// indexes exist; while, conditional, fusion and call have the computations
// their opcode needs; input_output_alias entries name real parameters; the
// buffers of all instructions add up to at most 2^62 bytes. Computations
// are checked in up to `threads` ranges side by side; the error reported is
// the first in computation order either way.
absl::Status VerifyModule(const Module& module, int threads = 1);

// The analysis keeps a few records per instruction and per tuple element of
// its shape, each with a shape index as long as its nesting depth; more
// than `max_elements` of those (a subshape counted once per level) in one
// module is refused before analysis starts, so memory stays bounded.
inline constexpr int64_t kDefaultMaxElements = 20'000'000;
absl::Status VerifyElementCount(const Module& module, int64_t max_elements);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_VERIFIER_H_
