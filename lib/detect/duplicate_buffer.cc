// duplicate-buffer: a materialized buffer that holds the elements of another
// buffer again (sliced and re-concatenated, index-normalized, converted)
// while that buffer is still in memory. The seed case: the gradient of
// x[tuple(split(idx))] scatters with `concatenate_bitcast_fusion.clone`, a
// 96 GiB copy of the 96 GiB index parameter, rebuilt from its columns with
// the negative-index wrap applied.
//
// The advice reads the index chain: with the wrap (compare/select) it names
// the forms checked against XLA's buffer assignment to remove the copy
// (testdata/jax/seed_gather_grad_int32_grads_{promise_in_bounds,
// columns_nowrap}); without it, only slices and a concatenate, the wrap fix
// is already applied (seed_gather_grad_int32_grads_split_nowrap: the same
// 96 GiB copy) and the split-and-concatenate of columns is what remains.
// Indices widened on the way (s16 -> s32) leave only the whole-array
// lax.gather: jnp converts and concatenates the columns however they are
// indexed (seed_gather_grad_int16_grads_*).
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

// What an index array's copy does to it: the negative-index wrap
// (select(idx < 0, idx + n, idx), compare/select in the chain), a split into
// columns concatenated again (slices and a concatenate), a conversion to a
// wider index type, or several of these.
struct IndexChain {
  bool wraps = false;
  bool splits = false;
  bool widens = false;
  int64_t columns = 0;  // the concatenate's operands, 0 if none
  absl::string_view from;  // "s16" when widened
  absl::string_view to;    // "s32"
};

IndexChain IndexChainOf(const hlo::Module& m, ValueId v, const Recipe& recipe,
                        const analysis::Dataflow& dataflow) {
  IndexChain chain;
  // RecipeOf keeps integer arithmetic only with a select or clamp in it.
  chain.wraps = recipe.computes;
  chain.widens = recipe.converts;
  chain.from = hlo::PrimitiveTypeName(recipe.source_type);
  chain.to = hlo::PrimitiveTypeName(m.shapes.get(dataflow.value(v).shape).type);
  bool sliced = false;
  for (InstrId i : recipe.ops) {  // root first: the outermost concatenate
    const Opcode op = m.instr(i).opcode;
    sliced |= op == Opcode::kSlice;
    if (op == Opcode::kConcatenate && chain.columns == 0) {
      chain.columns = static_cast<int64_t>(m.operands(i).size());
    }
  }
  chain.splits = sliced && chain.columns > 1;
  return chain;
}

// "idx[:, 0], idx[:, 1], idx[:, 2]": one index per column.
std::string ColumnIndices(int64_t columns) {
  if (columns < 2) return "idx[:, 0], idx[:, 1], ...";
  if (columns > 4) return absl::StrCat("idx[:, 0], idx[:, 1], ..., idx[:, ", columns - 1, "]");
  std::string out;
  for (int64_t c = 0; c < columns; ++c) absl::StrAppend(&out, c ? ", " : "", "idx[:, ", c, "]");
  return out;
}

constexpr absl::string_view kGather =
    "lax.gather(x, idx, ..., mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)";

// Only forms checked against XLA's totals (jax 0.12, the seed's gradient,
// testdata/jax/seed_gather_grad_*_grads_*): int32 indices, the whole-array
// lax.gather and the per-column x.at[...] without the wrap each take the
// copy away (224.01 -> 128.01 GiB); int16 indices, only the lax.gather
// (176.01 -> 80.01 GiB): jnp indexing converts each column to int32 and
// concatenates them again, wrap or no wrap.
std::string IndexSuggestion(const IndexChain& chain) {
  const std::string n = chain.columns > 1 ? absl::StrCat(chain.columns) : "n";
  const std::string columns = ColumnIndices(chain.columns);
  if (chain.splits && chain.wraps) {
    std::string out = absl::StrCat(
        "This is the index array rebuilt for a gather/scatter: indexing with a tuple of index "
        "columns (x[tuple(jnp.split(idx, ", n, ", -1))]) slices idx into columns, ",
        chain.widens ? absl::StrCat("converts them from ", chain.from, " to ", chain.to, ", ") : "",
        "wraps negative indices and concatenates the columns again, and the gradient's scatter "
        "keeps that copy. When indices are known in range, ");
    if (chain.widens) {
      absl::StrAppend(&out, "pass the whole index array to ", kGather,
                      ": the scatter then reads idx itself, at its own width. One index per "
                      "column, x.at[", columns, "].get(wrap_negative_indices=False), is not "
                      "enough for ", chain.from, " indices: jnp converts each column to ",
                      chain.to, " and concatenates them again.");
    } else {
      absl::StrAppend(&out, "use ", kGather, " with the whole index array, or one index per column, x.at[", columns,
                      "].get(wrap_negative_indices=False): both let the scatter read idx "
                      "itself. wrap_negative_indices=False on the split tuple alone is not "
                      "enough (the columns are still concatenated again).");
    }
    absl::StrAppend(&out, " XLA does not reuse the parameter on its own (jax-ml/jax#30015).");
    return out;
  }
  if (chain.splits) {
    const std::string what =
        chain.widens ? absl::StrCat("converting idx's ", n, " columns from ", chain.from, " to ",
                                    chain.to, " and concatenating them again, which jnp "
                                    "indexing does for ", chain.from, " indices with or without "
                                    "the wrap (split or one index per column)")
                     : absl::StrCat("splitting idx into ", n, " columns (jnp.split(idx, ", n,
                                    ", -1)) and concatenating them again, which XLA does not "
                                    "fold back into idx");
    std::string out = absl::StrCat(
        "The negative-index wrap fix is already applied here (no compare/select on these "
        "indices, as with wrap_negative_indices=False): the copy comes from ", what, ". ");
    if (chain.widens) {
      absl::StrAppend(&out, "Pass the whole array to ", kGather,
                      ", which lets the scatter read idx itself, at its own width "
                      "(jax-ml/jax#30015).");
    } else {
      absl::StrAppend(&out, "Index with the columns themselves instead, x.at[", columns,
                      "].get(wrap_negative_indices=False), or pass the whole array to ",
                      kGather,
                      ": either lets the scatter read idx itself (jax-ml/jax#30015).");
    }
    return out;
  }
  return "This is the index array copied by the negative-index wrap (select(idx < 0, idx + n, "
         "idx)) for a gather/scatter while idx is also in memory. When indices are known "
         "non-negative, pass wrap_negative_indices=False to the .at[idx] call "
         "(x.at[idx].get(wrap_negative_indices=False), x.at[idx].add(upd, "
         "wrap_negative_indices=False)) so that the gather/scatter reads idx itself.";
}

std::string Suggestion(const Context& ctx, ValueId v, const Recipe& recipe) {
  if (FeedsIndexedOp(ctx, v)) {
    const IndexChain chain = IndexChainOf(ctx.module(), v, recipe, ctx.dataflow());
    if (chain.splits || chain.wraps) return IndexSuggestion(chain);
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
    const analysis::NodeId node = ctx.dataflow().NodeAt(it->second, ctx.dataflow().value_index(v));
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
