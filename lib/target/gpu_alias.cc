#include "lib/target/gpu_alias.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "lib/hlo/elementwise.h"

namespace hlomem::target {
namespace {

using hlo::InstrId;
using hlo::Module;
using hlo::Opcode;

size_t FirstOperandSlot(const Module& m, InstrId user, InstrId operand) {
  const auto ops = m.operands(user);
  return static_cast<size_t>(std::find(ops.begin(), ops.end(), operand) - ops.begin());
}

size_t CountOperand(const Module& m, InstrId user, InstrId operand) {
  const auto ops = m.operands(user);
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), operand));
}

// The roots of a fusion body: the tuple's operands, or the root itself.
std::vector<InstrId> FusionRoots(const Module& m, InstrId root) {
  if (m.instr(root).opcode != Opcode::kTuple) return {root};
  const auto ops = m.operands(root);
  return std::vector<InstrId>(ops.begin(), ops.end());
}

// The op that decides how a fusion root is emitted (HloFusionAnalysis's
// hero): found by walking up from the root through unary elementwise ops
// and bitcasts, which the emitters apply on the way out.
InstrId HeroOf(const Module& m, InstrId root) {
  InstrId current = root;
  for (;;) {
    const hlo::Instruction& instr = m.instr(current);
    const auto ops = m.operands(current);
    const bool passes = instr.opcode == Opcode::kBitcast ||
                        (hlo::IsElementwiseOpcode(instr.opcode) && ops.size() == 1);
    if (!passes || ops.empty() || m.instr(ops[0]).opcode == Opcode::kParameter) return current;
    current = ops[0];
  }
}

// The reduction the reduction emitter computes first, or kNoId when the
// fusion is not a reduction (HloFusionAnalysis::FindHeroReduction).
InstrId HeroReduction(const Module& m, const std::vector<InstrId>& roots) {
  for (InstrId root : roots) {
    const InstrId hero = HeroOf(m, root);
    if (m.instr(hero).opcode == Opcode::kReduce) return hero;
  }
  return hlo::kNoId;
}

bool IsEffectiveScalar(const hlo::Shape& shape) {
  if (!shape.is_array()) return false;
  for (int64_t d : shape.dims) {
    if (d != 1) return false;
  }
  return true;
}

// FusionCanShareBufferHint: the fused parameter of `operand` reaches the
// output at `user_index` only through ops that read it in the output's
// iteration order, and reaches no other output in another order.
bool FusionMayAlias(const Module& m, InstrId operand, InstrId user,
                    const hlo::ShapeIndex& user_index) {
  const hlo::CompId body = m.callee(user, hlo::CallRole::kCalls);
  if (body == hlo::kNoId) return false;
  std::optional<hlo::ShapeId> output_shape_id =
      m.shapes.Subshape(m.instr(user).shape, user_index);
  if (!output_shape_id) return false;
  const hlo::ShapeId operand_shape_id = m.instr(operand).shape;
  if (operand_shape_id != *output_shape_id) {
    const hlo::Shape& a = m.shapes.get(operand_shape_id);
    const hlo::Shape& b = m.shapes.get(*output_shape_id);
    if (!a.is_array() || !b.is_array()) return false;
    if (m.shapes.ElementCount(operand_shape_id) != m.shapes.ElementCount(*output_shape_id)) {
      return false;
    }
    if (hlo::PrimitiveTypeBitWidth(a.type) != hlo::PrimitiveTypeBitWidth(b.type)) return false;
  }

  const InstrId body_root = m.comp(body).root;
  const std::vector<InstrId> roots = FusionRoots(m, body_root);
  const InstrId reduction_hero = HeroReduction(m, roots);

  const auto params = m.parameters(body);
  const size_t slot = FirstOperandSlot(m, user, operand);
  if (slot >= params.size() || params[slot] == hlo::kNoId) return false;
  InstrId output = body_root;
  for (int64_t k : user_index) {
    if (m.instr(output).opcode != Opcode::kTuple) break;
    const auto ops = m.operands(output);
    if (k < 0 || static_cast<size_t>(k) >= ops.size()) return false;
    output = ops[static_cast<size_t>(k)];
  }
  InstrId non_bitcast_root = output;
  if (m.instr(non_bitcast_root).opcode == Opcode::kBitcast && !m.operands(output).empty()) {
    non_bitcast_root = m.operands(output)[0];
  }
  const hlo::Instruction& nbr = m.instr(non_bitcast_root);
  const auto nbr_ops = m.operands(non_bitcast_root);

  std::deque<InstrId> queue = {params[slot]};
  absl::flat_hash_set<InstrId> visited = {params[slot]};
  bool found_path_to_output = false;
  while (!queue.empty()) {
    const InstrId current = queue.front();
    queue.pop_front();
    if (current == output) found_path_to_output = true;
    if (current == reduction_hero) continue;
    for (InstrId next : m.users(current)) {
      if (visited.insert(next).second) queue.push_back(next);
      const hlo::Instruction& ni = m.instr(next);
      const size_t next_slot = FirstOperandSlot(m, next, current);
      if (next == non_bitcast_root && ni.opcode == Opcode::kScatter) {
        const hlo::Shape& s = m.shape_of(next);
        const size_t inputs = s.is_tuple() ? s.tuple_elements.size() : 1;
        if (next_slot < inputs && CountOperand(m, next, current) == 1) continue;
      }
      if (next == non_bitcast_root && ni.opcode == Opcode::kSort &&
          CountOperand(m, next, current) == 1) {
        if (user_index != hlo::ShapeIndex{static_cast<int64_t>(next_slot)}) return false;
        continue;
      }
      const auto next_ops = m.operands(next);
      if (nbr.opcode == Opcode::kDynamicUpdateSlice && ni.opcode == Opcode::kDynamicSlice &&
          nbr_ops.size() >= 2 && !next_ops.empty() && nbr_ops[0] == next_ops[0] &&
          ni.shape == m.instr(nbr_ops[1]).shape) {
        // A dynamic-slice of the updated array reads the slice the update
        // writes only when both use the same start indices.
        if (!IsEffectiveScalar(m.shape_of(next)) || !IsEffectiveScalar(m.shape_of(nbr_ops[1]))) {
          for (size_t i = 1; i < next_ops.size(); ++i) {
            if (i + 1 >= nbr_ops.size() || next_ops[i] != nbr_ops[i + 1]) return false;
          }
        }
        continue;
      }
      const bool order_kept =
          (hlo::IsElementwiseOnOperand(m, next, next_slot) && ni.opcode != Opcode::kCopy) ||
          ni.opcode == Opcode::kBitcast || ni.opcode == Opcode::kTuple || next == reduction_hero;
      if (!order_kept && (next != non_bitcast_root || ni.opcode != Opcode::kDynamicUpdateSlice ||
                          next_slot != 1)) {
        return false;
      }
    }
  }
  if (roots.size() > 1 && m.instr(body_root).opcode == Opcode::kTuple) {
    bool other_root_reached = false;
    bool reached_transpose_hero = false;
    for (InstrId root : roots) {
      if (!visited.contains(root)) continue;
      if (root != output) other_root_reached = true;
      const Opcode hero = m.instr(HeroOf(m, root)).opcode;
      if (hero == Opcode::kTranspose || hero == Opcode::kCopy) reached_transpose_hero = true;
    }
    if (other_root_reached &&
        (!hlo::IsElementwiseOpcode(nbr.opcode) || reached_transpose_hero)) {
      return false;
    }
  }
  return found_path_to_output;
}

}  // namespace

std::optional<bool> GpuMayAlias(const Module& m, InstrId operand, const hlo::ShapeIndex&,
                                InstrId user, const hlo::ShapeIndex& user_index, bool nvidia) {
  const hlo::Instruction& instr = m.instr(user);
  if (instr.opcode == Opcode::kFusion) return FusionMayAlias(m, operand, user, user_index);
  if (!nvidia) return std::nullopt;
  switch (instr.opcode) {
    case Opcode::kAllReduce:
    case Opcode::kCollectiveBroadcast: {
      if (absl::StrContains(m.attribute(user, "backend_config").value_or(""), "nvshmem")) {
        return std::nullopt;
      }
      const auto ops = m.operands(user);
      return ops.size() == 1 ||
             (user_index.size() == 1 && user_index[0] >= 0 &&
              static_cast<size_t>(user_index[0]) < ops.size() &&
              ops[static_cast<size_t>(user_index[0])] == operand);
    }
    case Opcode::kCustomCall: {
      const absl::string_view target = m.custom_call_target(user);
      if (target == "__cublas$lt$matmul" || target == "__cublas$lt$matmul$f8") {
        const absl::string_view config = m.attribute(user, "backend_config").value_or("");
        const bool beta_zero = absl::StrContains(config, "\"beta\":0,") ||
                               absl::StrContains(config, "\"beta\":0}") ||
                               !absl::StrContains(config, "\"beta\"");
        const auto ops = m.operands(user);
        return !beta_zero && ops.size() > 2 && ops[2] == operand;
      }
      if (target == "__cusolver$cholesky") {
        return user_index.size() == 1 && user_index[0] == 0;
      }
      return false;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace hlomem::target
