#include "lib/hlo/provenance.h"

#include <deque>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_replace.h"

namespace hlomem::hlo {
namespace {

// Neighbours to search for a source line, closest first.
void PushNeighbours(const Module& m, InstrId i, std::deque<InstrId>* queue) {
  const Instruction& in = m.instr(i);
  for (const Callee& callee : m.callees(i)) {
    if (callee.role != CallRole::kCalls && callee.role != CallRole::kToApply) continue;
    const CompId c = callee.computation;
    queue->push_back(m.comp(c).root);
    if (in.opcode == Opcode::kFusion) {
      const auto body = m.instructions_of(c);
      for (InstrId k = body.end_id; k > body.begin_id; --k) queue->push_back(k - 1);
    }
  }
  if (in.is_root) {
    for (InstrId caller : m.callers(in.parent)) {
      if (m.instr(caller).opcode == Opcode::kCall) queue->push_back(caller);
    }
  }
  for (InstrId user : m.users(i)) queue->push_back(user);
  for (InstrId operand : m.operands(i)) queue->push_back(operand);
}

}  // namespace

std::string OpName(const Module& module, InstrId instruction) {
  // The text keeps the printer's escapes: params[\'w1\'].
  return absl::StrReplaceAll(module.metadata_of(instruction).op_name,
                             {{"\\'", "'"}, {"\\\"", "\""}});
}

Provenance ProvenanceOf(const Module& module, InstrId instruction) {
  // A breadth-first search, bounded: metadata is usually one step away.
  constexpr size_t kMaxVisited = 64;
  Provenance out;
  // Without any metadata (compiled SPMD modules are often printed so) no
  // neighbour has a line or an op_name either: skip the search.
  if (module.metadata.size() <= 1) return out;
  // The instruction's own op_name wins (a parameter's "idx"); else the one
  // of the instruction whose line is reported; else the first seen.
  const std::string own = OpName(module, instruction);
  // Most instructions carry their own line: answer without the search.
  const SourceLocation direct = module.SourceOf(instruction);
  if (direct.valid()) {
    out.file = std::string(direct.file);
    out.line = direct.line;
    out.stack_frame = direct.stack_frame;
    out.op_name = own;
    return out;
  }
  std::string first_seen;
  absl::flat_hash_set<InstrId> visited;
  std::deque<InstrId> queue = {instruction};
  while (!queue.empty() && visited.size() < kMaxVisited) {
    const InstrId i = queue.front();
    queue.pop_front();
    if (!visited.insert(i).second) continue;
    if (first_seen.empty()) first_seen = OpName(module, i);
    const SourceLocation loc = module.SourceOf(i);
    if (loc.valid()) {
      out.file = std::string(loc.file);
      out.line = loc.line;
      out.stack_frame = loc.stack_frame;
      out.op_name = own.empty() ? OpName(module, i) : own;
      break;
    }
    PushNeighbours(module, i, &queue);
  }
  if (out.op_name.empty()) out.op_name = first_seen;
  return out;
}

}  // namespace hlomem::hlo
