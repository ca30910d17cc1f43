// HLO opcodes. The table lives in opcode.def; unknown opcode names (from an
// XLA newer than hlomem) parse as kUnknown and are treated as opaque ops that
// define a fresh value at every output index.
#ifndef HLOMEM_LIB_HLO_OPCODE_H_
#define HLOMEM_LIB_HLO_OPCODE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace hlomem::hlo {

enum class Opcode : uint8_t {
#define HLO_OPCODE(enum_name, text, kind) enum_name,
#include "lib/hlo/opcode.def"
#undef HLO_OPCODE
  kUnknown,
};

// The text spelling ("dynamic-update-slice"); "unknown" for kUnknown.
absl::string_view OpcodeName(Opcode opcode);

// Looks up a text spelling; nullopt if it is not an opcode hlomem knows.
std::optional<Opcode> OpcodeFromName(absl::string_view name);

// True for the unary/binary/ternary ops XLA treats as elementwise on every
// operand. bitcast-convert and dynamic-update-slice need the operand and
// shapes, so callers handle them.
bool IsElementwiseOpcode(Opcode opcode);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_OPCODE_H_
