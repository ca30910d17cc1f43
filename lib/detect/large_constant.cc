// large-constant: array constants embedded in the module (NumPy arrays a
// jitted function closes over). They are baked into the executable, held as
// a constant allocation for its lifetime, and compiled again into every
// executable that closes over them (jax-ml/jax#5071).
//
// Bytes: the constant's size, which passing it as an argument removes from
// the executable (the argument is then shared, not copied per executable).
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {

void DetectLargeConstants(const DetectorInput& input, int64_t min_bytes,
                          std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  for (hlo::InstrId i : m.constants()) {
    const hlo::Instruction& in = m.instr(i);
    if (!m.shape_of(i).is_array()) continue;
    const int64_t bytes = m.shapes.ByteSize(in.shape);
    if (bytes < min_bytes) continue;
    Finding f = ctx.MakeFinding("large-constant", bytes, i);
    f.message = absl::StrCat(in.name, " ", m.shapes.ToString(in.shape, /*with_layout=*/false),
                             " (", HumanBytes(bytes),
                             ") is a constant embedded in the module: it is part of the "
                             "executable and stays in memory as long as the executable does.");
    f.suggestion =
        "A NumPy (or concrete jnp) array closed over by the jitted function becomes a constant. "
        "Pass it as an argument instead (jax.jit(f)(x, table)), so it is transferred once and "
        "shared, not compiled into every executable (jax-ml/jax#5071); build it inside the "
        "function (jnp.arange, jnp.zeros) if it is cheap to compute.";
    std::vector<hlo::InstrId> chain = {i};
    for (hlo::InstrId user : m.users(i)) chain.push_back(user);
    f.instructions = InstructionNames(m, chain);
    findings->push_back(std::move(f));
  }
}

}  // namespace hlomem::detect
