#include "lib/detect/context.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"

namespace hlomem::detect {

using analysis::Allocation;
using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

namespace {

// Outlined-call wrappers and tuple plumbing move no data.
bool IsPlumbing(Opcode opcode) {
  return opcode == Opcode::kCall || opcode == Opcode::kTuple ||
         opcode == Opcode::kGetTupleElement || opcode == Opcode::kBitcast;
}

}  // namespace

Context::Context(const DetectorInput& input) : input_(input) {
  const std::vector<int64_t>& timeline = input.profile.timeline;
  peak_steps_before_.assign(timeline.size() + 1, 0);
  for (size_t t = 0; t < timeline.size(); ++t) {
    peak_steps_before_[t + 1] =
        peak_steps_before_[t] + (timeline[t] == input.profile.peak_live_bytes ? 1 : 0);
  }
}

bool Context::LiveAtPeak(ValueId v) const {
  const analysis::LiveRange& r = assignment().live_range(v);
  if (!r.valid() || peak_steps_before_.size() < 2) return false;
  const size_t last = peak_steps_before_.size() - 1;
  const size_t start = std::min(static_cast<size_t>(r.start), last);
  const size_t end = std::min(static_cast<size_t>(r.end) + 1, last);
  return peak_steps_before_[end] > peak_steps_before_[start];
}

const Allocation* Context::AllocationOf(ValueId v) const {
  const int64_t a = assignment().allocation_of_buffer(dataflow().buffer_of(v));
  return a < 0 ? nullptr : &assignment().allocations()[static_cast<size_t>(a)];
}

bool Context::LiveThroughout(ValueId v) const {
  const Allocation* a = AllocationOf(v);
  return a != nullptr && ((a->is_parameter && !a->aliased_with_output) || a->is_constant);
}

bool Context::IsMaterialized(ValueId v) const {
  const Allocation* a = AllocationOf(v);
  return a != nullptr && !a->is_parameter && !a->is_constant && !a->is_thread_local;
}

bool Context::ConsumedInPlace(ValueId v) const {
  const Allocation* mine = AllocationOf(v);
  if (mine == nullptr) return false;
  const int64_t offset = assignment().offset_of(v);
  for (const analysis::HloUse& use : dataflow().uses(v)) {
    if (IsPlumbing(module().instr(use.user).opcode)) continue;
    const analysis::NodeId begin = dataflow().node_begin(use.user);
    for (analysis::NodeId n = begin; n < begin + dataflow().node_count(use.user); ++n) {
      const ValueId w = dataflow().value_at(n);
      if (w == analysis::kNone || w == v || dataflow().value(w).instruction != use.user) continue;
      if (AllocationOf(w) == mine && assignment().offset_of(w) == offset) return true;
    }
  }
  return false;
}

std::vector<InstrId> Context::Consumers(ValueId v) const {
  std::vector<InstrId> out;
  for (const analysis::HloUse& use : dataflow().uses(v)) {
    const Opcode opcode = module().instr(use.user).opcode;
    if (opcode == Opcode::kCall || opcode == Opcode::kTuple) continue;
    if (std::find(out.begin(), out.end(), use.user) == out.end()) out.push_back(use.user);
  }
  return out;
}

bool Context::CoexistsWithSource(ValueId copy, ValueId source) const {
  if (LiveThroughout(source)) return true;
  const analysis::LiveRange& s = assignment().live_range(source);
  const analysis::LiveRange& c = assignment().live_range(copy);
  return s.valid() && c.valid() && s.end > c.start;
}

std::vector<ValueId> Context::MaterializedAtPeak(int64_t min_bytes) const {
  std::vector<ValueId> out;
  for (ValueId v = 0; v < dataflow().values().size(); ++v) {
    const analysis::HloValue& value = dataflow().value(v);
    if (value.size < min_bytes || value.is_phi || !module().shapes.get(value.shape).is_array()) {
      continue;
    }
    if (IsMaterialized(v) && LiveAtPeak(v)) out.push_back(v);
  }
  return out;
}

std::vector<std::string> Context::Chain(ValueId v, const Recipe& recipe) const {
  std::vector<InstrId> chain;
  if (recipe.source != analysis::kNone) chain.push_back(dataflow().value(recipe.source).instruction);
  chain.push_back(recipe.producer);
  const std::vector<InstrId> consumers = Consumers(v);
  chain.insert(chain.end(), consumers.begin(),
               consumers.begin() + static_cast<std::ptrdiff_t>(std::min(consumers.size(), kListed)));
  return InstructionNames(module(), chain);
}

std::string Context::ConsumerList(ValueId v) const {
  const std::vector<InstrId> consumers = Consumers(v);
  std::vector<std::string> names;
  for (size_t k = 0; k < consumers.size() && k < kListed; ++k) {
    names.emplace_back(module().instr(consumers[k]).name);
  }
  if (consumers.size() > kListed) names.push_back(absl::StrCat(consumers.size() - kListed, " more"));
  return absl::StrJoin(names, ", ");
}

std::string Context::Describe(ValueId v) const {
  const analysis::HloValue& value = dataflow().value(v);
  return absl::StrCat(module().instr(value.instruction).name, " ",
                      module().shapes.ToString(value.shape, /*with_layout=*/false), " (",
                      HumanBytes(value.size), ")");
}

std::string Context::DescribeSource(ValueId v) const {
  const InstrId i = dataflow().value(v).instruction;
  const hlo::Instruction& in = module().instr(i);
  if (in.opcode != Opcode::kParameter || in.parent != module().entry) return Describe(v);
  const std::string name = OpName(module(), i);
  return absl::StrCat("parameter ", in.parameter_number(),
                      name.empty() ? "" : absl::StrCat(" `", name, "`"), " (", Describe(v), ")");
}

Finding Context::MakeFinding(absl::string_view detector, int64_t bytes, InstrId anchor) const {
  Finding f;
  f.detector = std::string(detector);
  f.bytes = bytes;
  // Share of the peak: a fifth or more is the main problem of the module.
  const int64_t peak = std::max<int64_t>(profile().peak_live_bytes, 1);
  f.severity = bytes * 5 >= peak ? Severity::kError
               : bytes * 50 >= peak ? Severity::kWarning
                                    : Severity::kInfo;
  if (anchor != hlo::kNoId) {
    Provenance p = ProvenanceOf(module(), anchor);
    f.source_file = std::move(p.file);
    f.source_line = p.line;
    f.op_name = std::move(p.op_name);
  }
  return f;
}

Opcode EffectiveOpcode(const hlo::Module& module, InstrId instruction) {
  if (module.instr(instruction).opcode == Opcode::kFusion) {
    const hlo::CompId fused = module.callee(instruction, hlo::CallRole::kCalls);
    if (fused != hlo::kNoId) return EffectiveOpcode(module, module.comp(fused).root);
  }
  return module.instr(instruction).opcode;
}

bool IsYnnFusion(const hlo::Module& module, InstrId instruction) {
  if (module.instr(instruction).opcode != Opcode::kFusion) return false;
  const std::optional<absl::string_view> config = module.attribute(instruction, "backend_config");
  return config.has_value() && absl::StrContains(*config, "__ynn_fusion");
}

std::vector<std::string> InstructionNames(const hlo::Module& module,
                                          const std::vector<InstrId>& ids) {
  // First occurrences in order; a finding can name tens of thousands (a
  // search of the list for each was quadratic).
  std::vector<std::string> names;
  absl::flat_hash_set<absl::string_view> seen;
  for (InstrId i : ids) {
    const absl::string_view name = module.instr(i).name;
    if (seen.insert(name).second) names.emplace_back(name);
  }
  return names;
}

std::string OpSummary(const hlo::Module& module, const Recipe& recipe) {
  std::vector<absl::string_view> opcodes;
  for (auto it = recipe.ops.rbegin(); it != recipe.ops.rend(); ++it) {
    const absl::string_view name = hlo::OpcodeName(module.instr(*it).opcode);
    if (std::find(opcodes.begin(), opcodes.end(), name) == opcodes.end()) opcodes.push_back(name);
  }
  return absl::StrJoin(opcodes, ", ");
}

}  // namespace hlomem::detect
