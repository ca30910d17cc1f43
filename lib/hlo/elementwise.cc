#include "lib/hlo/elementwise.h"

#include <vector>

#include "absl/container/flat_hash_set.h"

namespace hlomem::hlo {

bool AllTransitiveUsersElementwise(const Module& m, InstrId start, bool allow_tuple) {
  std::vector<InstrId> stack = {start};
  absl::flat_hash_set<InstrId> visited = {start};
  while (!stack.empty()) {
    const InstrId current = stack.back();
    stack.pop_back();
    for (InstrId user : m.users(current)) {
      const auto ops = m.operands(user);
      for (size_t k = 0; k < ops.size(); ++k) {
        if (ops[k] != current) continue;
        const bool tuple_ok = allow_tuple && m.instr(user).opcode == Opcode::kTuple;
        if (!tuple_ok && !IsElementwiseOnOperand(m, user, k)) return false;
      }
      if (visited.insert(user).second) stack.push_back(user);
    }
  }
  return true;
}

bool IsElementwiseOnOperand(const Module& m, InstrId user, size_t operand) {
  const Instruction& instr = m.instr(user);
  if (IsElementwiseOpcode(instr.opcode)) return true;
  switch (instr.opcode) {
    case Opcode::kDynamicUpdateSlice:
      return operand == 0;
    case Opcode::kBitcastConvert: {
      const auto ops = m.operands(user);
      if (ops.empty()) return false;
      return PrimitiveTypeBitWidth(m.shape_of(ops[0]).type) ==
             PrimitiveTypeBitWidth(m.shape_of(user).type);
    }
    case Opcode::kFusion: {
      const CompId body = m.callee(user, CallRole::kCalls);
      if (body == kNoId) return false;
      const auto params = m.parameters(body);
      if (operand >= params.size() || params[operand] == kNoId) return false;
      return AllTransitiveUsersElementwise(m, params[operand], /*allow_tuple=*/false);
    }
    default:
      return false;
  }
}

}  // namespace hlomem::hlo
