// dtype-widening: a materialized buffer that holds another buffer's elements
// converted to a wider type (s16 -> s32 indices, bf16 -> f32, s8 -> s32).
//
// Bytes: the extra bytes of the wider type, value size x (1 - narrow/wide):
// what keeping the narrow type would save. When the widened buffer also
// duplicates a live source, duplicate-buffer reports the rest of it.
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "dtype-widening";

std::string Suggestion(const Context& ctx, ValueId v, const Recipe& recipe) {
  if (hlo::IsIntegralType(recipe.source_type)) {
    for (InstrId user : ctx.Consumers(v)) {
      const Opcode op = EffectiveOpcode(ctx.module(), user);
      if (op != Opcode::kGather && op != Opcode::kScatter) continue;
      return "These are gather/scatter indices widened to a bigger integer type. XLA's gather "
             "and scatter accept narrow index types: drop .astype(jnp.int32) on the indices and "
             "pass them whole (jnp.take(x, idx, axis=...) or lax.gather/lax.scatter_add); jnp "
             "indexing with index columns (x[tuple(...)], x.at[idx[:, 0], ...]) converts each "
             "column itself, so pass the whole s16 array to lax.gather(..., "
             "mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS): on jax-ml/jax#30015's int16 case that "
             "takes XLA's total from 176.01 to 80.01 GiB (testdata/jax "
             "seed_gather_grad_int16_grads_promise_in_bounds).";
    }
    return "Keep the narrow integer type: drop the .astype() to the wider type, or convert "
           "inside the consuming op so the widened array is never stored.";
  }
  return "Keep the narrow type (drop .astype(jnp.float32)), or convert inside the consuming "
         "fused op; if the consumer (sort, scatter, a custom call) needs the wide type, convert "
         "in chunks with lax.map so the whole widened array never exists at once.";
}

}  // namespace

void DetectDtypeWidening(const DetectorInput& input, int64_t min_bytes,
                         std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  ctx.ForEachRecipeAtPeak(min_bytes, [&](ValueId v, const Recipe& recipe) {
    const analysis::HloValue& value = ctx.dataflow().value(v);
    const int64_t extra = WideningBytes(m.shapes, recipe, value.shape);
    if (extra <= 0) return;
    Finding f = ctx.MakeFinding(kName, extra, recipe.producer);
    f.message = absl::StrCat(
        ctx.Describe(v), " is ", ctx.DescribeSource(recipe.source), " converted from ",
        hlo::PrimitiveTypeName(recipe.source_type), " to ",
        hlo::PrimitiveTypeName(m.shapes.get(value.shape).type), " (", OpSummary(m, recipe),
        "): ", HumanBytes(extra), " more than the same elements in ",
        hlo::PrimitiveTypeName(recipe.source_type), ".");
    f.suggestion = Suggestion(ctx, v, recipe);
    f.instructions = ctx.Chain(v, recipe);
    findings->push_back(std::move(f));
  });
}

}  // namespace hlomem::detect
