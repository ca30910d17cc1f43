// duplicate-buffer: a materialized buffer that holds the elements of another
// buffer again (sliced and re-concatenated, index-normalized, converted)
// while that buffer is still in memory. The seed case: the gradient of
// x[tuple(split(idx))] scatters with `concatenate_bitcast_fusion.clone`, a
// 96 GiB copy of the 96 GiB index parameter, rebuilt from its columns with
// the negative-index wrap applied.
//
// Bytes: the copy's size, less the part dtype-widening reports when the copy
// is also wider than its source (so the two findings add up to the copy).
// Not reported: plain copies (copy insertion; missed-donation and
// loop-carried-copy explain those), pure relayouts (layout-copy), and copies
// a consumer then updates in place (the consumer needs that buffer anyway).
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "duplicate-buffer";

bool FeedsIndexedOp(const Context& ctx, ValueId v) {
  for (InstrId user : ctx.Consumers(v)) {
    const Opcode op = EffectiveOpcode(ctx.module(), user);
    if (op == Opcode::kScatter || op == Opcode::kGather) return true;
  }
  return false;
}

std::string Suggestion(const Context& ctx, ValueId v, const Recipe& recipe) {
  if (FeedsIndexedOp(ctx, v) && (recipe.slices || recipe.computes)) {
    return "This is the index array rebuilt for a gather/scatter: jnp indexing with a tuple of "
           "index columns (x[tuple(jnp.split(idx, n, -1))]) splits idx, wraps negative indices "
           "and concatenates the columns again, and the gradient's scatter keeps that copy. Pass "
           "the index array whole with lax.gather(..., mode=lax.GatherScatterMode."
           "PROMISE_IN_BOUNDS), or use x.at[...].get(wrap_negative_indices=False) when indices "
           "are known non-negative, so the scatter reads idx itself. XLA does not reuse the "
           "parameter on its own (jax-ml/jax#30015).";
  }
  if (recipe.converts) {
    return "Keep one dtype for this array: do the conversion where the values are consumed "
           "(inside the fused op) or convert once and drop the original (donate it with "
           "donate_argnums if it is an argument).";
  }
  return "Compute from the original array instead of a rearranged copy (index it where it is "
         "used), or let the original die first (donate_argnums for an argument); if the copy is "
         "needed, jax.checkpoint around its producer and consumer recomputes it on the fly.";
}

// Base name of an XLA clone: "fusion.3.clone" and "fusion.3.clone.1" -> "fusion.3".
absl::string_view CloneBase(absl::string_view name) {
  const size_t at = name.rfind(".clone");
  if (at == absl::string_view::npos) return {};
  const absl::string_view rest = name.substr(at + 6);
  if (!rest.empty() && rest[0] != '.') return {};
  return name.substr(0, at);
}

// `X` and `X.clone` both materialized and live at once: XLA duplicated a
// producer (fusion or multi-output fusion duplication) and kept both.
void DetectLiveClones(const Context& ctx, int64_t min_bytes, std::vector<Finding>* findings) {
  const hlo::Module& m = ctx.module();
  // Only the instructions that clones name are looked up, and only those
  // with values (outside fused computations) can be the original.
  const std::vector<ValueId> materialized = ctx.MaterializedAtPeak(min_bytes);
  absl::flat_hash_map<absl::string_view, InstrId> by_name;
  for (ValueId v : materialized) {
    const absl::string_view base = CloneBase(m.instr(ctx.dataflow().value(v).instruction).name);
    if (!base.empty()) by_name.emplace(base, hlo::kNoId);
  }
  if (by_name.empty()) return;
  for (InstrId i : ctx.dataflow().unfused().instructions()) {
    if (ctx.dataflow().node_count(i) == 0) continue;
    auto it = by_name.find(m.instr(i).name);
    if (it != by_name.end() && it->second == hlo::kNoId) it->second = i;
  }
  for (ValueId v : materialized) {
    const analysis::HloValue& clone = ctx.dataflow().value(v);
    const absl::string_view base = CloneBase(m.instr(clone.instruction).name);
    auto it = base.empty() ? by_name.end() : by_name.find(base);
    if (it == by_name.end() || it->second == hlo::kNoId) continue;
    const analysis::NodeId node = ctx.dataflow().NodeAt(it->second, clone.index);
    if (node == analysis::kNone) continue;
    const ValueId original = ctx.dataflow().value_at(node);
    if (original == analysis::kNone || original == v || !ctx.IsMaterialized(original) ||
        ctx.dataflow().value(original).shape != clone.shape) {
      continue;
    }
    const analysis::LiveRange& a = ctx.assignment().live_range(original);
    const analysis::LiveRange& b = ctx.assignment().live_range(v);
    if (!a.valid() || !b.valid() || a.end < b.start || b.end < a.start) continue;
    Finding f = ctx.MakeFinding(kName, clone.size, clone.instruction);
    f.message = absl::StrCat(ctx.Describe(v), " is XLA's clone of ", ctx.Describe(original),
                             " and both are live at once: the same data is held twice.");
    f.suggestion =
        "XLA duplicated the producer for fusion and kept both results. Try "
        "jax.checkpoint/lax.optimization_barrier around the producer, or report it to XLA "
        "(openxla/xla) with this dump.";
    f.instructions = InstructionNames(m, {it->second, clone.instruction});
    findings->push_back(std::move(f));
  }
}

}  // namespace

void DetectDuplicateBuffers(const DetectorInput& input, int64_t min_bytes,
                            std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  ctx.ForEachRecipeAtPeak(min_bytes, [&](ValueId v, const Recipe& recipe) {
    if (recipe.kind != Recipe::Kind::kRematerialization || recipe.IsPureRelayout()) return;
    if (!recipe.slices && !recipe.computes && !recipe.converts) return;
    if (!ctx.CoexistsWithSource(v, recipe.source) || ctx.ConsumedInPlace(v)) return;
    const analysis::HloValue& value = ctx.dataflow().value(v);
    const int64_t widening = WideningBytes(m.shapes, recipe, value.shape);
    Finding f = ctx.MakeFinding(kName, value.size - widening, recipe.producer);
    f.message = absl::StrCat(ctx.Describe(v), " holds the elements of ",
                             ctx.DescribeSource(recipe.source), " again (", OpSummary(m, recipe),
                             ") and both are in memory at once");
    if (widening > 0) {
      absl::StrAppend(&f.message, "; ", HumanBytes(widening),
                      " of it is the wider dtype, reported by dtype-widening");
    }
    absl::StrAppend(&f.message, ".");
    f.suggestion = Suggestion(ctx, v, recipe);
    f.instructions = ctx.Chain(v, recipe);
    findings->push_back(std::move(f));
  });
  DetectLiveClones(ctx, min_bytes, findings);
}

}  // namespace hlomem::detect
