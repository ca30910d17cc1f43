// loop-carried-copy: while loops whose body copies its carried state instead
// of updating it in place. When the body permutes the carry ((a, b) ->
// (b, a + b)) XLA's copy insertion must copy the carried buffers every
// iteration, and at least one copy needs a buffer of its own next to the
// loop's buffers.
//
// Bytes: the most memory the body's copies of carried state occupy at once
// outside the loop's own buffers (copies written back into a loop buffer
// cost time, not memory): what updating the carry in place saves in the
// module's peak.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;

struct Slot {
  const analysis::Allocation* allocation;
  int64_t offset;
  bool operator==(const Slot& o) const {
    return allocation == o.allocation && offset == o.offset;
  }
};

// The most bytes of `values` live at one step.
int64_t PeakTogether(const Context& ctx, const std::vector<ValueId>& values) {
  int64_t peak = 0;
  for (ValueId a : values) {
    const analysis::LiveRange& at = ctx.assignment().live_range(a);
    int64_t live = 0;
    for (ValueId b : values) {
      const analysis::LiveRange& rb = ctx.assignment().live_range(b);
      if (rb.start <= at.start && at.start <= rb.end) live += ctx.dataflow().value(b).size;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

void DetectLoopCarriedCopies(const DetectorInput& input, int64_t min_bytes,
                             std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  const analysis::Dataflow& df = ctx.dataflow();
  // Fused computations hold no control flow.
  for (InstrId w : df.unfused().instructions()) {
    if (m.instr(w).opcode != hlo::Opcode::kWhile) continue;
    const hlo::CompId body = m.callee(w, hlo::CallRole::kBody);
    if (body == hlo::kNoId) continue;
    // Where the loop keeps its carried state.
    std::vector<Slot> loop_slots;
    for (analysis::NodeId n = df.node_begin(w); n < df.node_begin(w) + df.node_count(w); ++n) {
      const ValueId v = df.value_at(n);
      if (v == analysis::kNone || df.IsTupleNode(n) || ctx.AllocationOf(v) == nullptr) continue;
      loop_slots.push_back({ctx.AllocationOf(v), ctx.assignment().offset_of(v)});
    }
    auto in_loop_slot = [&](ValueId v) {
      const Slot slot{ctx.AllocationOf(v), ctx.assignment().offset_of(v)};
      return std::find(loop_slots.begin(), loop_slots.end(), slot) != loop_slots.end();
    };

    std::vector<InstrId> copies;
    std::vector<ValueId> copy_values;
    std::vector<ValueId> extra;  // copies with a buffer of their own
    int64_t copied = 0;
    for (InstrId i : m.instructions_of(body)) {
      const ValueId v = df.top_value(i);
      if (v == analysis::kNone || df.value(v).instruction != i || ctx.AllocationOf(v) == nullptr) {
        continue;
      }
      const Recipe recipe = RecipeOf(df, v);
      const bool is_copy = recipe.kind == Recipe::Kind::kRematerialization && !recipe.slices &&
                           !recipe.computes && !recipe.converts;
      // A copy of the carry, or of such a copy (copy.7 = copy(copy.5)).
      const bool of_carry = is_copy && (in_loop_slot(recipe.source) ||
                                        std::find(copy_values.begin(), copy_values.end(),
                                                  recipe.source) != copy_values.end());
      if (!of_carry) continue;
      copies.push_back(i);
      copy_values.push_back(v);
      copied += df.value(v).size;
      if (!in_loop_slot(v)) extra.push_back(v);
    }
    const int64_t bytes = PeakTogether(ctx, extra);
    if (bytes <= 0) continue;
    // Name the large ones; copies of scalar counters do not matter.
    std::stable_sort(extra.begin(), extra.end(), [&](ValueId a, ValueId b) {
      return df.value(a).size > df.value(b).size;
    });
    std::vector<std::string> extra_names;
    size_t small = 0;
    for (ValueId v : extra) {
      if (df.value(v).size >= min_bytes) {
        extra_names.push_back(ctx.Describe(v));
      } else {
        ++small;
      }
    }
    if (extra_names.empty()) continue;
    if (small > 0) extra_names.push_back(absl::StrCat(small, " smaller"));
    Finding f = ctx.MakeFinding("loop-carried-copy", bytes, w);
    f.message = absl::StrCat(
        "The body of ", m.instr(w).name, " (", m.comp(body).name, ") copies its carried state ",
        copies.size(), copies.size() == 1 ? " time" : " times", " per iteration (",
        HumanBytes(copied), " copied each iteration); ", absl::StrJoin(extra_names, ", "),
        extra.size() == 1 ? " needs a buffer of its own" : " need buffers of their own",
        " next to the loop's (", HumanBytes(bytes), " at once).");
    f.suggestion =
        "The loop permutes its carry (e.g. (a, b) -> (b, a + b)), so XLA copies the carried "
        "arrays to keep each in its slot. Return each carried array in the position it came "
        "from (update it in place, keep an index of which slot is current), or unroll the loop "
        "(lax.fori_loop(..., unroll=2)) so the swap cancels; donate the initial carry with "
        "donate_argnums to drop the copies before the loop too.";
    std::vector<InstrId> chain = {w};
    chain.insert(chain.end(), copies.begin(), copies.end());
    f.instructions = InstructionNames(m, chain);
    findings->push_back(std::move(f));
  }
}

}  // namespace hlomem::detect
