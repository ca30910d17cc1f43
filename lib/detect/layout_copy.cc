// layout-copy: a materialized copy or transpose that only changes the
// physical order of another buffer's elements (x.T fed to a sort or a custom
// call, `wrapped_transpose` of a weight), while the original is still in
// memory: a full-size twin.
//
// Bytes: the copy's size (what it occupies next to the original). When its
// consumer updates it in place (sort), the consumer needs a buffer of that
// size anyway, so the saving then needs the original donated too; the
// message says so.
#include "absl/strings/str_cat.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "layout-copy";

std::string Suggestion(const Context& ctx, const std::vector<InstrId>& consumers) {
  for (InstrId user : consumers) {
    if (IsYnnFusion(ctx.module(), user)) return std::string(kYnnSuggestion);
    switch (EffectiveOpcode(ctx.module(), user)) {
      case Opcode::kCustomCall:
        return "The custom call (pure_callback, FFI) takes its operand in the default layout, so "
               "the transpose is materialized for it: pass the array untransposed and transpose "
               "inside the callback (numpy's .T is a view), or transpose the callback's result.";
      case Opcode::kSort:
        return "Sort along the axis the data is laid out in: jnp.sort(x, axis=0) instead of "
               "jnp.sort(x.T, axis=-1), and transpose the sorted result only if it is needed "
               "that way (donate x with donate_argnums so the sort can reuse it).";
      case Opcode::kDot:
      case Opcode::kConvolution:
        return "Express the transpose in the contraction (jnp.einsum or lax.dot_general with "
               "the contracting dimensions of the original) so XLA reads it in place instead of "
               "a transposed copy; openxla/xla#26987 tracks transposed parameter twins.";
      default:
        break;
    }
  }
  return "Keep the array in the layout its consumer wants (transpose it once, outside the step, "
         "and pass that), or give the consumer the original with an axis/dimension argument; "
         "openxla/xla#26987 tracks transposed parameter twins.";
}

}  // namespace

void DetectLayoutCopies(const DetectorInput& input, int64_t min_bytes,
                        std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  ctx.ForEachRecipeAtPeak(min_bytes, [&](ValueId v, const Recipe& recipe) {
    if (!recipe.IsPureRelayout() || !ctx.CoexistsWithSource(v, recipe.source)) return;
    const analysis::HloValue& value = ctx.dataflow().value(v);
    const std::vector<InstrId> consumers = ctx.Consumers(v);
    Finding f = ctx.MakeFinding(kName, value.size, recipe.producer);
    f.message = absl::StrCat(ctx.Describe(v), " is ", ctx.DescribeSource(recipe.source),
                             " in another layout (", OpSummary(m, recipe),
                             "), held next to the original");
    if (!consumers.empty()) absl::StrAppend(&f.message, " for ", ctx.ConsumerList(v));
    absl::StrAppend(&f.message, ctx.ConsumedInPlace(v)
                                    ? "; the consumer then reuses the copy in place, so avoiding "
                                      "it also needs the original donated."
                                    : ".");
    f.suggestion = Suggestion(ctx, consumers);
    f.instructions = ctx.Chain(v, recipe);
    findings->push_back(std::move(f));
  });
}

}  // namespace hlomem::detect
