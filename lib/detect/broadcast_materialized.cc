// broadcast-materialized: a large buffer whose elements all come from a
// scalar or an operand at least 8x smaller, stored in memory because its
// consumer (a scatter, a sort, a custom call, a while loop) cannot compute
// it on the fly. The seed case: the cotangent 2.5 broadcast to
// f32[8589934592,1,1,1] (32 GiB) as the updates of the gradient's scatter.
//
// Bytes: the broadcast buffer's size. Broadcasts a consumer then updates in
// place (the zeros a scatter-add accumulates into) are the consumer's
// output, not waste, and are not reported.
#include "absl/strings/str_cat.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "broadcast-materialized";

// "the constant 2.5", "the scalar foo.1", or the small operand's description.
std::string BroadcastOperand(const Context& ctx, const Recipe& recipe) {
  if (recipe.source != analysis::kNone) return ctx.Describe(recipe.source);
  const hlo::Module& m = ctx.module();
  for (InstrId operand : m.operands(recipe.producer)) {
    const ValueId v = ctx.dataflow().top_value(operand);
    if (v == analysis::kNone) continue;
    const InstrId def = ctx.dataflow().value(v).instruction;
    if (m.shapes.ElementCount(m.instr(def).shape) > 1) continue;
    if (m.instr(def).opcode == Opcode::kConstant) {
      return absl::StrCat("the constant ", m.literal(def));
    }
    return absl::StrCat("the scalar ", m.instr(def).name);
  }
  return "constants";
}

std::string Suggestion(const Context& ctx, const std::vector<InstrId>& consumers) {
  for (InstrId user : consumers) {
    if (IsYnnFusion(ctx.module(), user)) return std::string(kYnnSuggestion);
    if (EffectiveOpcode(ctx.module(), user) != Opcode::kScatter) continue;
    return "The scatter's updates are a broadcast scalar: XLA's scatter does not fuse its update "
           "operand, so the scalar is written out once per index. For x.at[idx].add(c) with a "
           "constant c (counting, histograms) scatter idx in chunks (lax.fori_loop or lax.scan "
           "over slices of idx, accumulating into x) so only one chunk of updates exists at once; "
           "in the gradient of a gather the updates are the broadcast cotangent and there is no "
           "fix on the JAX side yet (jax-ml/jax#30015).";
  }
  return "XLA did not fuse this broadcast into its consumer, so the full-size array is stored. "
         "Broadcast at the point of use (let jnp broadcasting rules do it inside the "
         "elementwise op) instead of jnp.broadcast_to/jnp.full ahead of a non-fusible op, or "
         "pass the small operand to the consumer.";
}

}  // namespace

void DetectMaterializedBroadcasts(const DetectorInput& input, int64_t min_bytes,
                                  std::vector<Finding>* findings) {
  const Context ctx(input);
  ctx.ForEachRecipeAtPeak(min_bytes, [&](ValueId v, const Recipe& recipe) {
    if (recipe.kind != Recipe::Kind::kBroadcast || ctx.ConsumedInPlace(v)) return;
    const analysis::HloValue& value = ctx.dataflow().value(v);
    const std::vector<InstrId> consumers = ctx.Consumers(v);
    Finding f = ctx.MakeFinding(kName, value.size, recipe.producer);
    f.message = absl::StrCat(ctx.Describe(v), " is a broadcast of ", BroadcastOperand(ctx, recipe),
                             " stored in memory", consumers.empty() ? "" : " for ",
                             ctx.ConsumerList(v), ".");
    f.suggestion = Suggestion(ctx, consumers);
    f.instructions = ctx.Chain(v, recipe);
    findings->push_back(std::move(f));
  });
}

}  // namespace hlomem::detect
