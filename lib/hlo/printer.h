// Prints a module as HLO text in XLA's short style (no '%', no operand
// shapes). Attributes are printed as they were read, so for text input
// Parse(Print(m)) rebuilds the same model as m.
#ifndef HLOMEM_LIB_HLO_PRINTER_H_
#define HLOMEM_LIB_HLO_PRINTER_H_

#include <string>

#include "lib/hlo/module.h"

namespace hlomem::hlo {

std::string PrintModule(const Module& module);
// One instruction line, without indentation or newline.
std::string PrintInstruction(const Module& module, InstrId id);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_PRINTER_H_
