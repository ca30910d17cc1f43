// What the detectors share: a module's analysis with the lookups they all
// need (the allocation kind of a value, its live range), the names findings
// give buffers ("concatenate_bitcast_fusion.clone s32[8589934592,3] (96.00GiB)"),
// and the user's source line of an instruction, looked for on neighbours
// when the instruction itself carries none.
#ifndef HLOMEM_LIB_DETECT_CONTEXT_H_
#define HLOMEM_LIB_DETECT_CONTEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/detect/detectors.h"
#include "lib/detect/recipe.h"
#include "lib/hlo/provenance.h"

namespace hlomem::detect {

using hlo::OpName;
using hlo::Provenance;
using hlo::ProvenanceOf;

class Context {
 public:
  explicit Context(const DetectorInput& input);

  const hlo::Module& module() const { return input_.module; }
  const analysis::BufferAssignment& assignment() const { return input_.assignment; }
  const analysis::Dataflow& dataflow() const { return input_.assignment.dataflow(); }
  const analysis::MemoryProfile& profile() const { return input_.profile; }

  // The allocation holding a value, or nullptr (fusion-internal values).
  const analysis::Allocation* AllocationOf(analysis::ValueId v) const;
  // Entry parameters (not donated) and constants occupy memory throughout.
  bool LiveThroughout(analysis::ValueId v) const;
  // True when `v` is live at a step where the module reaches its peak: only
  // then does removing it lower the peak.
  bool LiveAtPeak(analysis::ValueId v) const;
  // A value in the temp heap or an output allocation: memory the program
  // itself fills, as opposed to parameters, constants and thread-local stack.
  bool IsMaterialized(analysis::ValueId v) const;
  // True when a user of `v` writes its own output over v's memory (sort,
  // scatter, an elementwise fusion updating in place): v is then the
  // consumer's working buffer, not an extra one.
  bool ConsumedInPlace(analysis::ValueId v) const;
  // The instructions that read `v`, outlined-call wrappers skipped.
  std::vector<hlo::InstrId> Consumers(analysis::ValueId v) const;
  // True when `source` is still in memory while `copy` exists: it lives
  // throughout, or is read after `copy` is written.
  bool CoexistsWithSource(analysis::ValueId copy, analysis::ValueId source) const;
  // Array values the program writes into its own memory (IsMaterialized),
  // of at least `min_bytes`, live at the peak (LiveAtPeak), in value order:
  // the buffers whose removal would lower the peak.
  std::vector<analysis::ValueId> MaterializedAtPeak(int64_t min_bytes) const;
  // Calls fn(value, recipe) for each of MaterializedAtPeak(min_bytes).
  template <typename Fn>
  void ForEachRecipeAtPeak(int64_t min_bytes, Fn&& fn) const {
    for (analysis::ValueId v : MaterializedAtPeak(min_bytes)) fn(v, RecipeOf(dataflow(), v));
  }

  // Instruction names along a recipe: its source's definition (if any), the
  // producer, then the first kListed consumers of `v`.
  std::vector<std::string> Chain(analysis::ValueId v, const Recipe& recipe) const;
  // "sort.0", "a, b, c, d and 7 more": the consumers of `v` for a message.
  std::string ConsumerList(analysis::ValueId v) const;
  // How many instructions a finding names before "N more".
  static constexpr size_t kListed = 4;

  // "name dtype[dims] (size)".
  std::string Describe(analysis::ValueId v) const;
  // "parameter 0 `idx` (Arg_0.1 s32[...] (96.00GiB))" for entry parameters,
  // Describe() otherwise.
  std::string DescribeSource(analysis::ValueId v) const;

  // A finding of `detector` about `anchor` saving `bytes`: severity from the
  // bytes' share of the module's peak, source and op_name from the anchor.
  Finding MakeFinding(absl::string_view detector, int64_t bytes, hlo::InstrId anchor) const;

 private:
  const DetectorInput& input_;
  // peak_steps_before_[t]: how many steps before t reach the peak.
  std::vector<int64_t> peak_steps_before_;
};

// What an instruction does, looking into fusions: the opcode of the fused
// root ("wrapped_scatter" is a scatter), else its own opcode.
hlo::Opcode EffectiveOpcode(const hlo::Module& module, hlo::InstrId instruction);

// XLA:CPU's YNNPACK library fusions ("ynn_fusion"): they read every operand
// from memory, so broadcasts and transposes feeding them are materialized.
bool IsYnnFusion(const hlo::Module& module, hlo::InstrId instruction);

// What to try when the consumer is a YNNPACK fusion.
inline constexpr absl::string_view kYnnSuggestion =
    "The consumer is an XLA:CPU YNNPACK fusion (ynn_fusion), which reads its operands from "
    "memory at full size: nothing in the JAX program avoids this copy. Compare with "
    "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type= (YNNPACK fusions off; may be slower); "
    "on GPU/TPU this operand would be fused.";

// The instruction names of `ids`, in order, each once.
std::vector<std::string> InstructionNames(const hlo::Module& module,
                                          const std::vector<hlo::InstrId>& ids);

// "slice, select, concatenate": the distinct opcodes of a recipe's ops.
std::string OpSummary(const hlo::Module& module, const Recipe& recipe);

}  // namespace hlomem::detect

#endif  // HLOMEM_LIB_DETECT_CONTEXT_H_
