// Which module of one report is which module of another's, for a diff and
// for a check against a baseline. A dump repeats module names (JAX's
// helpers, a step compiled again for a short last batch), so a name alone
// pairs the wrong programs; the program's fingerprint (ModuleReport's
// signature and instruction count) tells them apart.
#ifndef HLOMEM_LIB_REPORT_PAIRING_H_
#define HLOMEM_LIB_REPORT_PAIRING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/report/report.h"

namespace hlomem::report {

// Why two modules were paired, from the surest to the loosest. Each rule
// pairs among the modules the rules before it left, in report order among
// equals.
enum class PairBasis : uint8_t {
  kProgram,    // same name, signature and instruction count
  kSignature,  // same name and signature; the code in between changed
  kName,       // same name, as many left of it on each side; shapes changed
  kOnly,       // the one module on each side, whatever their names (diff only)
  kNone,       // on one side only
};
// "program", "signature", "name", "only", "none" (the JSON's paired_by).
absl::string_view PairBasisName(PairBasis basis);

struct ModulePair {
  const ModuleReport* a = nullptr;  // null: only in b
  const ModuleReport* b = nullptr;  // null: only in a
  PairBasis basis = PairBasis::kNone;
};

// Every module of `b` in its order, each with its counterpart in `a` or
// none, then the modules only `a` has, in a's order. `a` and `b` must
// outlive the result. With `pair_sole_modules`, one module on each side
// pairs whatever its name (a diff of a renamed function); a gate pairs by
// name only.
std::vector<ModulePair> PairModules(const Report& a, const Report& b, bool pair_sole_modules);

// How two signatures differ, naming only what changed: "parameter 6
// f32[40,784] -> f32[48,784]; result f32[] -> f32[2]"; "was (..)->.., now
// (..)->.." when their parameter counts differ; "" when equal.
std::string SignatureChange(absl::string_view before, absl::string_view after);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_PAIRING_H_
