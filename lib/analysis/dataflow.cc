#include "lib/analysis/dataflow.h"

#include <algorithm>
#include <deque>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/allocator.h"

namespace hlomem::analysis {

using hlo::CallRole;
using hlo::Module;
using hlo::Opcode;

bool IsEmbeddedCaller(Opcode opcode) {
  switch (opcode) {
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return false;
    default:
      return true;
  }
}

CallGraph BuildCallGraph(const Module& m) {
  CallGraph graph;
  const size_t n = m.computations.size();
  graph.context.assign(n, CallContext::kUncalled);
  graph.is_global.assign(n, false);
  graph.is_reachable.assign(n, false);
  for (CompId c = 0; c < n; ++c) {
    for (InstrId caller : m.callers(c)) {
      graph.context[c] = IsEmbeddedCaller(m.instr(caller).opcode)
                             ? CallContext::kEmbedded
                             : CallContext::kControlFlow;
      if (graph.context[c] == CallContext::kEmbedded) break;
    }
  }
  // Breadth-first from the entry: control flow keeps the caller's class,
  // embedded calls make the callee thread-local.
  std::vector<CompId> queue = {m.entry};
  graph.is_global[m.entry] = true;
  graph.is_reachable[m.entry] = true;
  // The calls each computation makes, from the callers table: walking every
  // instruction of every reached computation would read millions of fused
  // instructions that call nothing.
  struct Call {
    CompId target;
    bool embedded;
  };
  const Csr<Call> calls = Csr<Call>::Build(n, [&](auto emit) {
    for (CompId target = 0; target < n; ++target) {
      for (InstrId caller : m.callers(target)) {
        const hlo::Instruction& instr = m.instr(caller);
        emit(instr.parent, Call{target, IsEmbeddedCaller(instr.opcode)});
      }
    }
  });
  for (size_t head = 0; head < queue.size(); ++head) {
    const CompId c = queue[head];
    for (const Call& call : calls.row(c)) {
      const bool global = graph.is_global[c] && !call.embedded;
      if (!graph.is_reachable[call.target] || (global && !graph.is_global[call.target])) {
        graph.is_reachable[call.target] = true;
        graph.is_global[call.target] = graph.is_global[call.target] || global;
        queue.push_back(call.target);
      }
    }
  }
  return graph;
}

UnfusedIndex::UnfusedIndex(const Module& module)
    : module_(&module), delta_(module.computations.size(), kFusedDelta) {
  for (CompId c = 0; c < module.computations.size(); ++c) {
    if (!module.comp(c).is_fusion) computations_.push_back(c);
  }
  std::sort(computations_.begin(), computations_.end(), [&](CompId a, CompId b) {
    return module.comp(a).first_instruction < module.comp(b).first_instruction;
  });
  int64_t next = 0;
  for (CompId c : computations_) {
    delta_[c] = next - static_cast<int64_t>(module.comp(c).first_instruction);
    next += module.comp(c).instruction_count;
  }
  size_ = static_cast<uint32_t>(next);
}

FlatSchedule FlattenSchedule(const Module& m) {
  FlatSchedule s;
  s.unfused = UnfusedIndex(m);
  s.unfused_time.assign(s.unfused.size(), -1);
  s.span_start.assign(m.computations.size(), -1);
  s.span_end.assign(m.computations.size(), -1);
  // Explicit stack of (computation, next instruction, whether the callees of
  // that instruction were already flattened): control-flow nesting in
  // hostile input must not exhaust the native stack.
  struct Frame {
    CompId comp;
    uint32_t next;  // position in the computation's sequence
    bool callees_done;
  };
  // A scheduled module's text order is its schedule; an unscheduled one
  // (before optimizations) gets XLA's default, the instruction post order.
  std::vector<std::vector<InstrId>> sequences(m.computations.size());
  auto sequence_of = [&](CompId c) -> const std::vector<InstrId>& {
    std::vector<InstrId>& seq = sequences[c];
    if (seq.empty()) {
      if (m.is_scheduled) {
        for (InstrId i : m.instructions_of(c)) seq.push_back(i);
      } else {
        seq = InstructionPostOrder(m, c);
      }
    }
    return seq;
  };
  // The async-start whose wrapped computation each computation runs in
  // (kNoId: none): its own for the wrapped one, its caller's for a callee.
  std::vector<InstrId> async_start(m.computations.size(), hlo::kNoId);
  std::vector<Frame> stack;
  constexpr int64_t kClaimed = -2;  // pushed, not yet started
  s.span_start[m.entry] = kClaimed;
  stack.push_back({m.entry, 0, false});
  while (!stack.empty()) {
    const size_t top = stack.size() - 1;
    const CompId c = stack[top].comp;
    if (s.span_start[c] == kClaimed) s.span_start[c] = s.end_time();
    const std::vector<InstrId>& sequence = sequence_of(c);
    if (stack[top].next == sequence.size()) {
      s.span_end[c] = s.end_time();
      stack.pop_back();
      continue;
    }
    const InstrId i = sequence[stack[top].next];
    if (!stack[top].callees_done) {
      stack[top].callees_done = true;
      const Opcode op = m.instr(i).opcode;
      std::vector<CompId> to_flatten;
      InstrId context = async_start[c];
      if (op == Opcode::kWhile) {
        to_flatten = {m.callee(i, CallRole::kCondition), m.callee(i, CallRole::kBody)};
      } else if (op == Opcode::kAsyncStart && m.operands(i).empty() &&
                 m.callee(i, CallRole::kCalls) != hlo::kNoId &&
                 !m.parameters(m.callee(i, CallRole::kCalls)).empty()) {
        // XLA:TPU's SparseCore offload: the operands arrive at an
        // async-update, where the wrapped computation runs.
      } else if (op == Opcode::kAsyncUpdate && m.operands(i).size() > 1) {
        InstrId start = m.operands(i)[0];
        while (m.instr(start).opcode == Opcode::kAsyncUpdate && !m.operands(start).empty()) {
          start = m.operands(start)[0];
        }
        if (m.instr(start).opcode == Opcode::kAsyncStart) {
          to_flatten.push_back(m.callee(start, CallRole::kCalls));
          context = start;
        }
      } else if (op == Opcode::kCall || op == Opcode::kConditional ||
                 op == Opcode::kAsyncStart) {
        for (const hlo::Callee& callee : m.callees(i)) to_flatten.push_back(callee.computation);
        if (op == Opcode::kAsyncStart) context = i;
      }
      // Pushed in reverse so the first callee is flattened first.
      for (auto it = to_flatten.rbegin(); it != to_flatten.rend(); ++it) {
        if (*it != hlo::kNoId && s.span_start[*it] == -1) {
          s.span_start[*it] = kClaimed;
          async_start[*it] = context;
          stack.push_back({*it, 0, false});
        }
      }
      if (stack.size() - 1 != top) continue;
    }
    const uint32_t k = s.unfused.of(i);
    if (k != UnfusedIndex::kFused) s.unfused_time[k] = s.end_time();
    s.sequence.push_back(i);
    ++stack[top].next;
    stack[top].callees_done = false;
  }
  // The async-done that ends each start's chain of async-updates (a chain
  // no longer than the module, whatever hostile input links).
  s.async_done_time.assign(m.computations.size(), -1);
  for (CompId c = 0; c < m.computations.size(); ++c) {
    InstrId step = async_start[c];
    for (size_t hops = 0; step != hlo::kNoId && m.instr(step).opcode != Opcode::kAsyncDone;
         ++hops) {
      if (hops == m.instructions.size()) {
        step = hlo::kNoId;
        break;
      }
      InstrId next = hlo::kNoId;
      for (InstrId user : m.users(step)) {
        const Opcode op = m.instr(user).opcode;
        if (op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone) next = user;
      }
      step = next;
    }
    if (step != hlo::kNoId) s.async_done_time[c] = s.time_of(step);
  }
  return s;
}

namespace {

// Per-shape pre-order layout: where each child subtree starts.
class NodeLayout {
 public:
  explicit NodeLayout(const hlo::ShapeTable& shapes) : shapes_(shapes) {}
  uint32_t count(ShapeId s) const { return static_cast<uint32_t>(shapes_.SubshapeCount(s)); }
  // Offset of child k's subtree within shape s's nodes.
  uint32_t child_offset(ShapeId s, int64_t k) const {
    const hlo::Shape& shape = shapes_.get(s);
    uint32_t offset = 1;
    for (int64_t j = 0; j < k; ++j) offset += count(shape.tuple_elements[static_cast<size_t>(j)]);
    return offset;
  }
  // Offset of `index` within s's nodes, or kNone.
  uint32_t offset_of(ShapeId s, const ShapeIndex& index, size_t from = 0) const {
    uint32_t offset = 0;
    for (size_t d = from; d < index.size(); ++d) {
      const hlo::Shape& shape = shapes_.get(s);
      const int64_t k = index[d];
      if (!shape.is_tuple() || k < 0 || k >= static_cast<int64_t>(shape.tuple_elements.size())) {
        return kNone;
      }
      offset += child_offset(s, k);
      s = shape.tuple_elements[static_cast<size_t>(k)];
    }
    return offset;
  }

 private:
  const hlo::ShapeTable& shapes_;
};

}  // namespace

NodeId Dataflow::NodeAt(InstrId i, const ShapeIndex& index) const {
  if (node_count(i) == 0) return kNone;
  NodeLayout layout(module_->shapes);
  const uint32_t offset = layout.offset_of(module_->instr(i).shape, index);
  return offset == kNone ? kNone : node_begin(i) + offset;
}

ShapeIndex Dataflow::IndexOf(NodeId n) const {
  const InstrId i = node_instruction_[n];
  uint32_t target = n - node_begin(i);
  ShapeIndex index;
  ShapeId s = module_->instr(i).shape;
  NodeLayout layout(module_->shapes);
  while (target != 0) {
    const hlo::Shape& shape = module_->shapes.get(s);
    uint32_t offset = 1;
    for (size_t k = 0; k < shape.tuple_elements.size(); ++k) {
      const uint32_t size = layout.count(shape.tuple_elements[k]);
      if (target < offset + size) {
        index.push_back(static_cast<int64_t>(k));
        target -= offset;
        s = shape.tuple_elements[k];
        break;
      }
      offset += size;
    }
  }
  return index;
}

bool Dataflow::IsTupleNode(NodeId n) const {
  return module_->shapes.get(node_shape_[n]).is_tuple();
}

std::vector<Dataflow::InPlacePair> Dataflow::ComputeInPlacePairs(
    InstrId i, const std::function<absl::Span<const InPlacePair>(InstrId)>& nested) const {
  const Module& m = *module_;
  const hlo::Instruction& instr = m.instr(i);
  std::vector<InPlacePair> pairs;
  const auto operands = m.operands(i);
  switch (instr.opcode) {
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kSetDimensionSize:
      pairs.push_back({0, {}, {}});
      break;
    case Opcode::kScatter: {
      const uint32_t n = static_cast<uint32_t>(operands.size() / 2);
      for (uint32_t k = 0; k < n; ++k) {
        pairs.push_back({k, {}, n == 1 ? ShapeIndex{} : ShapeIndex{static_cast<int64_t>(k)}});
      }
      break;
    }
    case Opcode::kAllReduceStart: {
      if (absl::StrContains(m.attribute(i, "backend_config").value_or(""), "nvshmem")) break;
      const uint32_t n = static_cast<uint32_t>(operands.size());
      for (uint32_t k = 0; k < n; ++k) {
        pairs.push_back({k, {}, n == 1 ? ShapeIndex{} : ShapeIndex{static_cast<int64_t>(k)}});
      }
      break;
    }
    case Opcode::kCollectivePermute:
      if (operands.size() == 4) pairs.push_back({1, {}, {}});
      break;
    case Opcode::kCollectivePermuteStart:
      if (operands.size() == 4) pairs.push_back({1, {}, {1}});
      break;
    case Opcode::kRaggedAllToAll:
      pairs.push_back({1, {}, {}});
      break;
    case Opcode::kCustomCall:
    case Opcode::kAsyncStart:
      // XLA:GPU wraps an in-place all-reduce as an async-start whose
      // output_to_operand_aliasing ties its result {1} to the operand.
      for (const hlo::OutputOperandAlias& a : m.output_operand_aliases(i)) {
        pairs.push_back({static_cast<uint32_t>(a.operand), a.operand_index, a.output_index});
      }
      break;
    case Opcode::kFusion: {
      for (const hlo::OutputOperandAlias& a : m.output_operand_aliases(i)) {
        pairs.push_back({static_cast<uint32_t>(a.operand), a.operand_index, a.output_index});
      }
      const CompId body = m.callee(i, CallRole::kCalls);
      if (body == hlo::kNoId) break;
      // For each output leaf, find the fused instruction producing it and
      // trace its in-place operand back to a fusion parameter.
      m.shapes.ForEachSubshape(instr.shape, [&](const ShapeIndex& leaf, ShapeId s) {
        if (m.shapes.get(s).is_tuple()) return;
        InstrId source = m.comp(body).root;
        ShapeIndex idx = leaf;
        while (true) {
          const hlo::Instruction& si = m.instr(source);
          if (si.opcode == Opcode::kTuple && !idx.empty()) {
            source = m.operands(source)[static_cast<size_t>(idx[0])];
            idx.erase(idx.begin());
          } else if (si.opcode == Opcode::kGetTupleElement) {
            idx.insert(idx.begin(), si.tuple_index());
            source = m.operands(source)[0];
          } else {
            break;
          }
        }
        for (const InPlacePair& inner : nested(source)) {
          if (inner.output_index != idx) continue;
          InstrId from = m.operands(source)[inner.operand];
          ShapeIndex from_index = inner.operand_index;
          bool passed_bitcast = false;
          while (true) {
            const hlo::Instruction& fi = m.instr(from);
            if (fi.opcode == Opcode::kTuple && !from_index.empty()) {
              from = m.operands(from)[static_cast<size_t>(from_index[0])];
              from_index.erase(from_index.begin());
            } else if (fi.opcode == Opcode::kGetTupleElement) {
              from_index.insert(from_index.begin(), fi.tuple_index());
              from = m.operands(from)[0];
            } else if (fi.opcode == Opcode::kFusion) {
              bool found = false;
              for (const InPlacePair& inner_pair : nested(from)) {
                if (inner_pair.output_index == from_index) {
                  from_index = inner_pair.operand_index;
                  from = m.operands(from)[inner_pair.operand];
                  found = true;
                  break;
                }
              }
              if (!found) break;
            } else if (fi.opcode == Opcode::kBitcast && !passed_bitcast) {
              passed_bitcast = true;
              from = m.operands(from)[0];
            } else {
              break;
            }
          }
          const hlo::Instruction& param = m.instr(from);
          if (param.opcode == Opcode::kParameter && param.parent == body) {
            pairs.push_back({static_cast<uint32_t>(param.parameter_number()), from_index, leaf});
          }
        }
      });
      break;
    }
    default:
      break;
  }
  return pairs;
}

// Instruction post order of one computation, as XLA's
// MakeInstructionPostOrder: a DFS from each user-less instruction in list
// order; operands pushed in reverse, then control predecessors on top.
std::vector<InstrId> InstructionPostOrder(const Module& m, CompId c) {
  std::vector<InstrId> order;
  const hlo::Computation& comp = m.comp(c);
  order.reserve(comp.instruction_count);
  std::vector<uint8_t> state(comp.instruction_count, 0);  // 0 new, 1 visiting, 2 done
  std::vector<InstrId> stack;
  auto local = [&](InstrId i) { return i - comp.first_instruction; };
  auto in_comp = [&](InstrId i) {
    return i >= comp.first_instruction && i < comp.first_instruction + comp.instruction_count;
  };
  for (InstrId root : m.instructions_of(c)) {
    bool has_user = false;
    for (InstrId u : m.users(root)) {
      if (in_comp(u)) {
        has_user = true;
        break;
      }
    }
    if (has_user) continue;
    stack.push_back(root);
    while (!stack.empty()) {
      const InstrId cur = stack.back();
      uint8_t& st = state[local(cur)];
      if (st == 2) {
        stack.pop_back();
        continue;
      }
      if (st == 1) {
        st = 2;
        order.push_back(cur);
        stack.pop_back();
        continue;
      }
      st = 1;
      const auto ops = m.operands(cur);
      for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
        if (in_comp(*it) && state[local(*it)] == 0) stack.push_back(*it);
      }
      for (InstrId pred : m.control_predecessors(cur)) {
        if (in_comp(pred) && state[local(pred)] == 0) stack.push_back(pred);
      }
    }
  }
  // Instructions only reachable through cycles (rejected by the verifier)
  // still get a slot so every instruction has an id.
  for (InstrId i : m.instructions_of(c)) {
    if (state[local(i)] != 2) order.push_back(i);
  }
  return order;
}

namespace {

using ReachSet = absl::InlinedVector<ValueId, 1>;

void UnionInto(const ReachSet& from, ReachSet* into, bool* changed) {
  for (ValueId v : from) {
    auto it = std::lower_bound(into->begin(), into->end(), v);
    if (it == into->end() || *it != v) {
      into->insert(it, v);
      *changed = true;
    }
  }
}

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  uint32_t Find(uint32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  void Union(uint32_t a, uint32_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (a < b) std::swap(a, b);
    parent[a] = b;  // the smaller id represents the set
  }
};

}  // namespace

absl::StatusOr<Dataflow> Dataflow::Run(const Module& m, const CallGraph& graph,
                                       const target::Target& target) {
  Dataflow df;
  df.module_ = &m;
  NodeLayout layout(m.shapes);
  // Nodes. Instructions inside fused computations get none: XLA never
  // assigns their outputs a buffer (a fusion is one kernel), and they are
  // most of a large module's instructions.
  df.unfused_ = UnfusedIndex(m);
  const UnfusedIndex& unfused = df.unfused_;
  const uint32_t unfused_count = unfused.size();
  df.node_begin_.resize(unfused_count + 1);
  uint64_t total_nodes = 0;
  uint32_t number = 0;
  for (InstrId i : unfused.instructions()) {
    df.node_begin_[number++] = static_cast<NodeId>(total_nodes);
    total_nodes += layout.count(m.instr(i).shape);
    if (total_nodes >= kNone) {
      return absl::ResourceExhaustedError(
          absl::StrCat(m.path, ": error: module has more than 2^32 tuple elements"));
    }
  }
  df.node_begin_[unfused_count] = static_cast<NodeId>(total_nodes);
  df.node_instruction_.resize(total_nodes);
  df.node_shape_.resize(total_nodes);
  for (InstrId i : unfused.instructions()) {
    NodeId n = df.node_begin(i);
    m.shapes.ForEachSubshape(m.instr(i).shape, [&](const ShapeIndex&, ShapeId s) {
      df.node_instruction_[n] = i;
      df.node_shape_[n] = s;
      ++n;
    });
  }
  auto node = [&](InstrId i, uint32_t offset) { return df.node_begin(i) + offset; };
  auto is_tuple_node = [&](NodeId n) { return m.shapes.get(df.node_shape_[n]).is_tuple(); };

  // Which nodes define a value.
  std::vector<bool> defines(total_nodes, false);
  for (InstrId i : unfused.instructions()) {
    const hlo::Instruction& instr = m.instr(i);
    const NodeId begin = df.node_begin(i);
    const uint32_t count = df.node_count(i);
    if (count == 0) continue;
    auto define_all = [&] {
      for (uint32_t k = 0; k < count; ++k) defines[begin + k] = true;
    };
    auto define_tuples = [&] {
      for (uint32_t k = 0; k < count; ++k) defines[begin + k] = is_tuple_node(begin + k);
    };
    const hlo::Shape& shape = m.shapes.get(instr.shape);
    const int64_t arity = shape.is_tuple() ? static_cast<int64_t>(shape.tuple_elements.size()) : 0;
    // Defines every node of the subtree at tuple index {k}, if there is one.
    auto define_subtree = [&](int64_t k) {
      if (k >= arity) return;
      const uint32_t off = layout.child_offset(instr.shape, k);
      const uint32_t size = layout.count(shape.tuple_elements[static_cast<size_t>(k)]);
      for (uint32_t j = 0; j < size; ++j) defines[begin + off + j] = true;
    };
    auto define_subtrees_from = [&](int64_t first) {
      for (int64_t k = first; k < arity; ++k) define_subtree(k);
    };
    switch (instr.opcode) {
      case Opcode::kBitcast:
      case Opcode::kAddDependency:
      case Opcode::kWhile:
      case Opcode::kCall:
      case Opcode::kConditional:
      case Opcode::kGetTupleElement:
      case Opcode::kDomain:
      case Opcode::kOptimizationBarrier:
      case Opcode::kCopyDone:
      case Opcode::kAllReduceDone:
        break;
      case Opcode::kParameter:
        if (graph.context[instr.parent] != CallContext::kControlFlow) define_all();
        break;
      case Opcode::kCopy:
      case Opcode::kTuple:
        defines[begin] = true;
        break;
      case Opcode::kAsyncStart:
        define_tuples();
        define_subtrees_from(2);
        break;
      case Opcode::kAsyncUpdate:
      case Opcode::kAsyncDone:
        define_tuples();
        break;
      case Opcode::kCopyStart:
        defines[begin] = true;
        if (arity > 0) defines[begin + layout.child_offset(instr.shape, 0)] = true;
        if (arity > 2) defines[begin + layout.child_offset(instr.shape, 2)] = true;
        break;
      case Opcode::kAllGatherStart:
        define_tuples();
        defines[begin] = true;
        define_subtree(1);
        break;
      case Opcode::kAllGatherDone:
      case Opcode::kCollectivePermuteDone:
        if (shape.is_tuple()) defines[begin] = true;
        break;
      case Opcode::kCollectivePermuteStart:
        defines[begin] = true;
        define_subtrees_from(1);
        break;
      case Opcode::kRecvDone:
        defines[begin] = true;
        if (arity > 1) defines[begin + layout.child_offset(instr.shape, 1)] = true;
        break;
      case Opcode::kSend:
        defines[begin] = true;
        for (int64_t k = 1; k <= 2 && k < arity; ++k) {
          defines[begin + layout.child_offset(instr.shape, k)] = true;
        }
        break;
      default:
        define_all();
        break;
    }
  }

  // Value ids in XLA's order: computations callee-first (text order), then
  // instruction post order, then shape pre-order.
  df.value_at_.assign(total_nodes, kNone);
  df.post_order_index_.assign(unfused_count, 0);
  // Reserved for every node, defining or a phi to be: pages never written
  // cost no memory, where growing by doubling held two copies at once (at
  // the peak of a module of a million values).
  df.values_.reserve(total_nodes);
  for (CompId c = 0; c < m.computations.size(); ++c) {
    if (m.comp(c).is_fusion) continue;
    const std::vector<InstrId> post_order = InstructionPostOrder(m, c);
    for (uint32_t rank = 0; rank < post_order.size(); ++rank) {
      const InstrId i = post_order[rank];
      df.post_order_index_[unfused.of(i)] = rank;
      for (uint32_t k = 0; k < df.node_count(i); ++k) {
        const NodeId n = node(i, k);
        if (!defines[n]) continue;
        HloValue v;
        v.instruction = i;
        v.node = n;
        v.shape = df.node_shape_[n];
        df.value_at_[n] = static_cast<ValueId>(df.values_.size());
        df.values_.push_back(std::move(v));
      }
    }
  }

  // Sources of every forwarding node; nodes with two or more sources are
  // the phi points (while and conditional outputs, loop parameters).
  // Links (to, from) in the order made; grouped by target below into CSR
  // rows, since most nodes have no source or one.
  std::vector<std::pair<NodeId, NodeId>> links;
  auto forward_range = [&](NodeId to, NodeId from, uint32_t count, bool skip_defined) {
    for (uint32_t k = 0; k < count; ++k) {
      if (skip_defined && defines[to + k]) continue;
      links.emplace_back(to + k, from + k);
    }
  };
  auto subtree = [&](InstrId i, int64_t k) -> std::pair<NodeId, uint32_t> {
    const hlo::Shape& shape = m.shape_of(i);
    if (!shape.is_tuple() || k < 0 || k >= static_cast<int64_t>(shape.tuple_elements.size())) {
      return {kNone, 0};
    }
    return {node(i, layout.child_offset(m.instr(i).shape, k)),
            layout.count(shape.tuple_elements[static_cast<size_t>(k)])};
  };
  auto whole = [&](InstrId i) -> std::pair<NodeId, uint32_t> {
    return df.node_range(i);
  };
  auto link = [&](std::pair<NodeId, uint32_t> to, std::pair<NodeId, uint32_t> from,
                  bool skip_defined = true) {
    if (to.first == kNone || from.first == kNone) return;
    forward_range(to.first, from.first, std::min(to.second, from.second), skip_defined);
  };
  for (InstrId i : unfused.instructions()) {
    if (df.node_count(i) == 0) continue;
    const hlo::Instruction& instr = m.instr(i);
    const auto ops = m.operands(i);
    switch (instr.opcode) {
      case Opcode::kBitcast:
      case Opcode::kDomain:
      case Opcode::kOptimizationBarrier:
      case Opcode::kAddDependency:
      case Opcode::kCopy:
      case Opcode::kAllReduceDone:
        if (!ops.empty()) link(whole(i), whole(ops[0]));
        break;
      case Opcode::kAsyncUpdate: {
        if (ops.size() <= 1) {
          if (!ops.empty()) link(whole(i), whole(ops[0]));
          break;
        }
        // XLA:TPU's SparseCore offload starts with no operands,
        // async-start(), and hands them over at an update:
        // ((operands...), output) = async-update(start, operands...). The
        // update's {0, k} and the wrapped computation's parameter k are
        // operand k + 1; its {1} is the wrapped root.
        InstrId start = ops[0];
        while (m.instr(start).opcode == Opcode::kAsyncUpdate && !m.operands(start).empty()) {
          start = m.operands(start)[0];
        }
        const auto arguments = subtree(i, 0);
        const hlo::Shape& update = m.shape_of(i);
        const CompId wrapped = m.instr(start).opcode == Opcode::kAsyncStart
                                   ? m.callee(start, CallRole::kCalls)
                                   : hlo::kNoId;
        const auto params =
            wrapped == hlo::kNoId ? absl::Span<const InstrId>() : m.parameters(wrapped);
        for (size_t k = 1; k < ops.size(); ++k) {
          if (arguments.first != kNone && update.tuple_elements.size() > 0) {
            const hlo::Shape& args = m.shapes.get(update.tuple_elements[0]);
            if (args.is_tuple() && k - 1 < args.tuple_elements.size()) {
              const uint32_t off = layout.child_offset(update.tuple_elements[0],
                                                       static_cast<int64_t>(k - 1));
              link({arguments.first + off, layout.count(args.tuple_elements[k - 1])},
                   whole(ops[k]));
            }
          }
          if (k - 1 < params.size() && params[k - 1] != hlo::kNoId) {
            link(whole(params[k - 1]), whole(ops[k]));
          }
        }
        if (wrapped != hlo::kNoId) link(subtree(i, 1), whole(m.comp(wrapped).root));
        break;
      }
      case Opcode::kTuple:
        for (size_t k = 0; k < ops.size(); ++k) link(subtree(i, static_cast<int64_t>(k)), whole(ops[k]));
        break;
      case Opcode::kGetTupleElement:
        if (!ops.empty()) link(whole(i), subtree(ops[0], instr.tuple_index()));
        break;
      case Opcode::kCall: {
        CompId callee = m.callee(i, CallRole::kToApply);
        if (callee == hlo::kNoId) callee = m.callee(i, CallRole::kCalls);
        if (callee == hlo::kNoId) break;
        link(whole(i), whole(m.comp(callee).root));
        const auto params = m.parameters(callee);
        for (size_t k = 0; k < ops.size() && k < params.size(); ++k) {
          if (params[k] != hlo::kNoId) link(whole(params[k]), whole(ops[k]));
        }
        break;
      }
      case Opcode::kWhile: {
        const CompId body = m.callee(i, CallRole::kBody);
        const CompId cond = m.callee(i, CallRole::kCondition);
        if (body == hlo::kNoId || cond == hlo::kNoId || ops.empty()) break;
        const InstrId body_root = m.comp(body).root;
        const auto body_params = m.parameters(body);
        const auto cond_params = m.parameters(cond);
        link(whole(i), whole(body_root));
        link(whole(i), whole(ops[0]));
        if (!body_params.empty() && body_params[0] != hlo::kNoId) {
          link(whole(body_params[0]), whole(ops[0]));
          if (body_params[0] != body_root) link(whole(body_params[0]), whole(body_root));
        }
        if (!cond_params.empty() && cond_params[0] != hlo::kNoId) {
          link(whole(cond_params[0]), whole(ops[0]));
          link(whole(cond_params[0]), whole(body_root));
        }
        break;
      }
      case Opcode::kConditional: {
        size_t branch = 0;
        for (const hlo::Callee& callee : m.callees(i)) {
          if (callee.role != CallRole::kBranch) continue;
          link(whole(i), whole(m.comp(callee.computation).root));
          const auto params = m.parameters(callee.computation);
          if (!params.empty() && params[0] != hlo::kNoId && branch + 1 < ops.size()) {
            link(whole(params[0]), whole(ops[branch + 1]));
          }
          ++branch;
        }
        break;
      }
      case Opcode::kAsyncStart: {
        for (size_t k = 0; k < ops.size(); ++k) {
          const auto element = subtree(i, 0);
          if (element.first == kNone) break;
          // {0, k} <- operand k
          const hlo::Shape& first = m.shapes.get(df.node_shape_[element.first]);
          if (first.is_tuple() && k < first.tuple_elements.size()) {
            const uint32_t off = layout.child_offset(df.node_shape_[element.first],
                                                     static_cast<int64_t>(k));
            link({element.first + off, layout.count(first.tuple_elements[k])}, whole(ops[k]));
          }
        }
        const CompId wrapped = m.callee(i, CallRole::kCalls);
        if (wrapped != hlo::kNoId) {
          link(subtree(i, 1), whole(m.comp(wrapped).root));
          const auto params = m.parameters(wrapped);
          for (size_t k = 0; k < ops.size() && k < params.size(); ++k) {
            if (params[k] != hlo::kNoId) link(whole(params[k]), whole(ops[k]));
          }
        }
        break;
      }
      case Opcode::kAsyncDone:
      case Opcode::kAllGatherDone:
      case Opcode::kCollectivePermuteDone:
        if (!ops.empty()) link(whole(i), subtree(ops[0], 1));
        break;
      case Opcode::kCopyStart:
      case Opcode::kSend:
        if (!ops.empty()) link(subtree(i, instr.opcode == Opcode::kCopyStart ? 1 : 0), whole(ops[0]));
        break;
      case Opcode::kCopyDone:
        if (!ops.empty()) link(whole(i), subtree(ops[0], 0));
        break;
      case Opcode::kRecvDone:
        if (!ops.empty()) link(subtree(i, 0), subtree(ops[0], 0));
        break;
      case Opcode::kAllGatherStart:
      case Opcode::kCollectivePermuteStart: {
        const auto dest = subtree(i, 0);
        if (dest.first == kNone) break;
        if (ops.size() == 1 || instr.opcode == Opcode::kCollectivePermuteStart) {
          link(dest, whole(ops[0]));
        } else {
          for (size_t k = 0; k < ops.size(); ++k) {
            const hlo::Shape& d = m.shapes.get(df.node_shape_[dest.first]);
            if (!d.is_tuple() || k >= d.tuple_elements.size()) break;
            const uint32_t off = layout.child_offset(df.node_shape_[dest.first], static_cast<int64_t>(k));
            link({dest.first + off, layout.count(d.tuple_elements[k])}, whole(ops[k]));
          }
        }
        break;
      }
      default:
        break;
    }
  }

  const Csr<NodeId> source_table = Csr<NodeId>::Build(total_nodes, [&](auto emit) {
    for (const auto& [to, from] : links) emit(to, from);
  });
  FreeStorage(links);
  auto sources = [&](NodeId n) { return source_table.row(n); };

  // Phase A: the set of defining values reaching each node (union at phis).
  std::vector<ReachSet> reach(total_nodes);
  for (NodeId n = 0; n < total_nodes; ++n) {
    if (defines[n]) reach[n].push_back(df.value_at_[n]);
  }
  // Dependents: the nodes each node is a source of, in node order.
  const Csr<NodeId> dependent_table = Csr<NodeId>::Build(total_nodes, [&](auto emit) {
    for (NodeId n = 0; n < total_nodes; ++n) {
      for (NodeId s : sources(n)) emit(s, n);
    }
  });
  auto dependents = [&](NodeId n) { return dependent_table.row(n); };
  {
    std::vector<NodeId> worklist;
    std::vector<bool> queued(total_nodes, false);
    for (NodeId n = 0; n < total_nodes; ++n) {
      if (!sources(n).empty()) {
        worklist.push_back(n);
        queued[n] = true;
      }
    }
    std::reverse(worklist.begin(), worklist.end());  // pop in node order
    while (!worklist.empty()) {
      const NodeId n = worklist.back();
      worklist.pop_back();
      queued[n] = false;
      bool changed = false;
      for (NodeId s : sources(n)) UnionInto(reach[s], &reach[n], &changed);
      if (!changed) continue;
      for (NodeId d : dependents(n)) {
        if (!queued[d]) {
          queued[d] = true;
          worklist.push_back(d);
        }
      }
    }
  }

  // Phase B: a phi point reached by two or more values defines a phi value.
  for (NodeId n = 0; n < total_nodes; ++n) {
    if (defines[n] || sources(n).size() < 2 || reach[n].size() < 2) continue;
    HloValue v;
    v.instruction = df.node_instruction_[n];
    v.node = n;
    v.shape = df.node_shape_[n];
    v.is_phi = true;
    df.value_at_[n] = static_cast<ValueId>(df.values_.size());
    df.values_.push_back(std::move(v));
  }

  // Phase C: every other node holds its unique reaching value, or the value
  // of its single source (which leads to a phi).
  {
    std::vector<NodeId> stack;
    for (NodeId start = 0; start < total_nodes; ++start) {
      if (df.value_at_[start] != kNone) continue;
      stack.push_back(start);
      while (!stack.empty()) {
        const NodeId n = stack.back();
        if (df.value_at_[n] != kNone) {
          stack.pop_back();
          continue;
        }
        if (reach[n].size() == 1) {
          df.value_at_[n] = reach[n][0];
          stack.pop_back();
          continue;
        }
        if (reach[n].empty() || sources(n).empty()) {
          stack.pop_back();  // nothing reaches it
          continue;
        }
        const NodeId s = sources(n)[0];
        if (df.value_at_[s] != kNone) {
          df.value_at_[n] = df.value_at_[s];
          stack.pop_back();
        } else if (std::find(stack.begin(), stack.end(), s) != stack.end()) {
          stack.pop_back();  // a cycle without a phi: cannot happen in valid HLO
        } else {
          stack.push_back(s);
        }
      }
    }
  }
  for (HloValue& v : df.values_) {
    int64_t color = 0;
    if (const auto placed = target.PlaceValue(m, v.instruction, v.shape)) {
      v.size = placed->size;
      color = placed->color;
    } else {
      v.size = target.BufferBytes(m.shapes, v.shape);
      color = target.ColorOf(m.shapes.get(v.shape));
    }
    if (color < 0 || color > HloValue::kMaxColor) {
      return absl::InvalidArgumentError(absl::StrCat(
          m.path, ": error: instruction '", m.instr(v.instruction).name, "' has memory space ",
          color, "; hlomem handles 0 to ", HloValue::kMaxColor));
    }
    v.color = static_cast<int32_t>(color);
  }

  // Positions: the defining one first, then the others in node order.
  const size_t value_count = df.values_.size();
  df.positions_ = Csr<NodeId>::Build(value_count, [&](auto emit) {
    for (ValueId v = 0; v < value_count; ++v) emit(v, df.values_[v].node);
    for (NodeId n = 0; n < total_nodes; ++n) {
      const ValueId v = df.value_at_[n];
      if (v != kNone && df.values_[v].node != n) emit(v, n);
    }
  });

  // Uses (XLA's MayUseOperandValue: get-tuple-element and copy use only the
  // top-level value of their operand; tuple and domain use nothing).
  df.uses_ = Csr<HloUse>::Build(value_count, [&](auto emit) {
    for (InstrId i : unfused.instructions()) {
      const Opcode op = m.instr(i).opcode;
      if (op == Opcode::kTuple || op == Opcode::kDomain || df.node_count(i) == 0) continue;
      const bool top_only = op == Opcode::kGetTupleElement || op == Opcode::kCopy;
      const auto ops = m.operands(i);
      for (uint32_t k = 0; k < ops.size(); ++k) {
        const auto [first, all] = df.node_range(ops[k]);
        const uint32_t count = top_only ? std::min(all, 1u) : all;
        for (NodeId n = first; n < first + count; ++n) {
          const ValueId v = df.value_at_[n];
          if (v != kNone) emit(v, HloUse{i, k, n});
        }
      }
    }
  });

  // Live-out: values appearing at any node of the entry root.
  const InstrId entry_root = m.comp(m.entry).root;
  for (uint32_t k = 0; k < df.node_count(entry_root); ++k) {
    const ValueId v = df.value_at_[node(entry_root, k)];
    if (v != kNone) df.values_[v].live_out = true;
  }

  // In-place pairs, once per tracked instruction: a fusion's come from its
  // fused body's, worked out on demand and memoized per fused instruction
  // (the call graph is acyclic; an entry is made before recursing, so a
  // cycle in hostile input sees an empty list instead of recursing forever).
  {
    // A deque keeps the lists in place as it grows, so spans stay valid;
    // the map holds only indexes (most lists are empty and allocate nothing).
    std::deque<std::vector<InPlacePair>> lists;
    absl::flat_hash_map<InstrId, size_t> list_of;
    std::function<absl::Span<const InPlacePair>(InstrId)> pairs_of =
        [&](InstrId i) -> absl::Span<const InPlacePair> {
      auto [it, inserted] = list_of.try_emplace(i, lists.size());
      if (!inserted) return lists[it->second];
      const size_t k = it->second;
      lists.emplace_back();
      std::vector<InPlacePair> computed = df.ComputeInPlacePairs(i, pairs_of);
      lists[k] = std::move(computed);
      return lists[k];
    };
    // Tracked instructions are never inside a fused body, so only the
    // nested lookups need the memo; each of theirs is worked out once here.
    std::vector<std::pair<uint32_t, InPlacePair>> tracked_pairs;
    uint32_t tracked = 0;
    for (InstrId i : unfused.instructions()) {
      for (InPlacePair& p : df.ComputeInPlacePairs(i, pairs_of)) {
        tracked_pairs.emplace_back(tracked, std::move(p));
      }
      for (target::InPlaceAlias& a : target.InPlaceAliases(m, i)) {
        tracked_pairs.emplace_back(
            tracked, InPlacePair{a.operand, std::move(a.operand_index), std::move(a.output_index)});
      }
      ++tracked;
    }
    df.in_place_ = Csr<InPlacePair>::Build(unfused_count, [&](auto emit) {
      for (const auto& [key, pair] : tracked_pairs) emit(key, pair);
    });
  }

  // Alias analysis: union values that must share memory.
  UnionFind sets(value_count);
  auto unite_nodes = [&](NodeId a, NodeId b) {
    if (a == kNone || b == kNone) return;
    const ValueId va = df.value_at_[a], vb = df.value_at_[b];
    if (va != kNone && vb != kNone) sets.Union(va, vb);
  };
  const auto entry_params = m.parameters(m.entry);
  for (const hlo::InputOutputAlias& alias : m.input_output_aliases) {
    if (alias.parameter < 0 || alias.parameter >= static_cast<int64_t>(entry_params.size())) continue;
    const InstrId p = entry_params[static_cast<size_t>(alias.parameter)];
    if (p == hlo::kNoId) continue;
    unite_nodes(df.NodeAt(entry_root, alias.output_index), df.NodeAt(p, alias.parameter_index));
  }
  for (InstrId i : unfused.instructions()) {
    if (df.node_count(i) == 0) continue;
    const hlo::Instruction& instr = m.instr(i);
    const auto ops = m.operands(i);
    if (instr.opcode == Opcode::kWhile && !ops.empty()) {
      const CompId body = m.callee(i, CallRole::kBody);
      const CompId cond = m.callee(i, CallRole::kCondition);
      if (body == hlo::kNoId || cond == hlo::kNoId) continue;
      const InstrId body_root = m.comp(body).root;
      const auto bp = m.parameters(body);
      const auto cp = m.parameters(cond);
      for (uint32_t k = 0; k < df.node_count(i); ++k) {
        const NodeId out = node(i, k);
        if (k < df.node_count(ops[0])) unite_nodes(out, node(ops[0], k));
        if (k < df.node_count(body_root)) unite_nodes(out, node(body_root, k));
        if (!bp.empty() && bp[0] != hlo::kNoId && k < df.node_count(bp[0])) unite_nodes(out, node(bp[0], k));
        if (!cp.empty() && cp[0] != hlo::kNoId && k < df.node_count(cp[0])) unite_nodes(out, node(cp[0], k));
      }
    } else if (instr.opcode == Opcode::kConditional) {
      for (const hlo::Callee& callee : m.callees(i)) {
        if (callee.role != CallRole::kBranch) continue;
        const InstrId root = m.comp(callee.computation).root;
        for (uint32_t k = 0; k < df.node_count(i) && k < df.node_count(root); ++k) {
          unite_nodes(node(i, k), node(root, k));
        }
      }
    }
    for (const InPlacePair& pair : df.InPlacePairs(i)) {
      if (pair.operand >= ops.size()) continue;
      unite_nodes(df.NodeAt(ops[pair.operand], pair.operand_index), df.NodeAt(i, pair.output_index));
    }
  }

  // Buffers numbered by their smallest value id.
  df.buffer_of_.assign(value_count, kNone);
  std::vector<BufferId> buffer_of_root(value_count, kNone);
  BufferId next_buffer = 0;
  for (ValueId v = 0; v < value_count; ++v) {
    const uint32_t root = sets.Find(v);
    if (buffer_of_root[root] == kNone) buffer_of_root[root] = next_buffer++;
    df.buffer_of_[v] = buffer_of_root[root];
  }
  df.buffer_values_ = Csr<ValueId>::Build(next_buffer, [&](auto emit) {
    for (ValueId v = 0; v < value_count; ++v) emit(df.buffer_of_[v], v);
  });
  df.buffer_live_out_.assign(next_buffer, false);
  for (ValueId v = 0; v < value_count; ++v) {
    if (df.values_[v].live_out) df.buffer_live_out_[df.buffer_of_[v]] = true;
  }
  return df;
}

}  // namespace hlomem::analysis
