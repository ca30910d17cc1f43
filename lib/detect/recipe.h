// What a materialized array holds in terms of one other array: the question
// behind most memory waste. A buffer filled by copying, slicing and
// re-concatenating, relayouting, converting or clamping another live buffer
// is a second copy of it; a buffer filled from a scalar is a broadcast that
// was not fused. The recipe looks through fusions (the fused computation is
// what the fusion writes) and through CPU's outlined `parallel_*` calls (the
// value is defined in the callee; its parameters forward the caller's
// operands).
#ifndef HLOMEM_LIB_DETECT_RECIPE_H_
#define HLOMEM_LIB_DETECT_RECIPE_H_

#include <cstdint>
#include <vector>

#include "lib/analysis/dataflow.h"
#include "lib/hlo/module.h"

namespace hlomem::detect {

struct Recipe {
  enum class Kind : uint8_t {
    kOpaque,            // real computation (dot, reduce, math on two inputs, ...)
    kBroadcast,         // every element comes from a scalar or a much smaller operand
    kRematerialization, // the same elements as `source`, rearranged or converted
  };
  Kind kind = Kind::kOpaque;
  // The instruction that writes the value: a fusion, copy, convert, ...
  hlo::InstrId producer = hlo::kNoId;
  // The value read (kNone for a broadcast of constants or scalars).
  analysis::ValueId source = analysis::kNone;
  // The producer's operand that carries `source`.
  hlo::InstrId source_operand = hlo::kNoId;
  int64_t source_elements = 0;
  hlo::PrimitiveType source_type = hlo::PrimitiveType::kInvalid;
  // What the chain does to the source's elements.
  bool converts = false;  // changes the element type
  bool relayouts = false; // transpose, or a copy to another layout
  bool slices = false;    // slice, concatenate, pad, reverse
  bool computes = false;  // index arithmetic: select, clamp, add of a constant
  // The non-trivial ops along the chain, in the producer's computation or
  // its fused computation, root first.
  std::vector<hlo::InstrId> ops;

  // Only moves elements to another physical order (copy/transpose).
  bool IsPureRelayout() const {
    return kind == Kind::kRematerialization && relayouts && !converts && !slices && !computes;
  }
};

// The recipe of an array value (its defining instruction's output). Opaque
// for tuples, multi-output fusions, and values defined by anything but a
// fusion or a single data-movement or index-arithmetic op.
Recipe RecipeOf(const analysis::Dataflow& dataflow, analysis::ValueId value);

// The bytes a value of `shape` takes beyond what the recipe's source type
// would need for the same elements (s16 -> s32: half the value); 0 unless
// the recipe converts to a wider type.
int64_t WideningBytes(const hlo::ShapeTable& shapes, const Recipe& recipe, hlo::ShapeId shape);

}  // namespace hlomem::detect

#endif  // HLOMEM_LIB_DETECT_RECIPE_H_
