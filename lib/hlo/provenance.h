// Where an instruction came from in the user's program. Many instructions
// carry no metadata of their own (the bodies XLA outlines into parallel_*
// calls, broadcasts it creates), so the search continues on the closest
// neighbours that do: fusion bodies and callees, callers, users, operands.
#ifndef HLOMEM_LIB_HLO_PROVENANCE_H_
#define HLOMEM_LIB_HLO_PROVENANCE_H_

#include <cstdint>
#include <string>

#include "lib/hlo/module.h"

namespace hlomem::hlo {

struct Provenance {
  std::string file;  // "" when nothing nearby has a source location
  int64_t line = 0;
  std::string op_name;
  int64_t stack_frame = 0;  // the StackFrames id the line came from, 0 if none
};

// The metadata op_name of an instruction with the printer's escapes undone
// ("params['w1']"), or "".
std::string OpName(const Module& module, InstrId instruction);

// The source location and op_name of `instruction`, or of the closest
// instruction that has them. The instruction's own op_name wins when it has
// one (an entry parameter's "idx").
Provenance ProvenanceOf(const Module& module, InstrId instruction);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_PROVENANCE_H_
