// Dataflow and alias analysis over a whole module, reproducing what XLA's
// HloDataflowAnalysis (SSA form, bitcasts do not define values) and
// HloAliasAnalysis compute: which instruction outputs define new values,
// which merely forward existing ones, and which values must share one buffer.
//
// Every (instruction, shape index) is a "node"; the nodes of an instruction
// are numbered in shape pre-order, so the subtree at any tuple index is a
// contiguous run and forwarding a subtree is a range copy.
#ifndef HLOMEM_LIB_ANALYSIS_DATAFLOW_H_
#define HLOMEM_LIB_ANALYSIS_DATAFLOW_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/base/csr.h"
#include "lib/hlo/module.h"
#include "lib/target/target.h"

namespace hlomem::analysis {

using hlo::CompId;
using hlo::InstrId;
using hlo::ShapeId;
using hlo::ShapeIndex;
using NodeId = uint32_t;
using ValueId = uint32_t;
using BufferId = uint32_t;
inline constexpr uint32_t kNone = 0xffffffffu;

// How a computation is entered (XLA's CallContext).
enum class CallContext : uint8_t {
  kUncalled,     // not called (the entry, or unreachable)
  kControlFlow,  // call, while, conditional, async: runs in the caller's frame
  kEmbedded,     // fusion, reduce, sort, map, ...: a per-element function
};

struct CallGraph {
  std::vector<CallContext> context;  // per computation
  // Reachable from the entry through control flow only: these are the
  // computations whose buffers come from the module's allocations.
  std::vector<bool> is_global;
  // Reachable from the entry at all.
  std::vector<bool> is_reachable;
};

CallGraph BuildCallGraph(const hlo::Module& module);

// Dense numbers for the instructions outside fused computations, the only
// ones with nodes, values and schedule steps. Tables indexed by them stay
// small where fusion bodies hold most of a module's instructions (97% of a
// large training step's), and loops over them skip the bodies.
class UnfusedIndex {
 public:
  static constexpr uint32_t kFused = 0xffffffffu;

  UnfusedIndex() = default;
  explicit UnfusedIndex(const hlo::Module& module);

  uint32_t size() const { return size_; }
  // Instruction i's number, or kFused. Numbers follow instruction ids.
  uint32_t of(InstrId i) const {
    const CompId c = module_->instr(i).parent;
    if (c >= delta_.size() || delta_[c] == kFusedDelta) return kFused;
    return static_cast<uint32_t>(static_cast<int64_t>(i) + delta_[c]);
  }

  // The instructions outside fused computations, in id order:
  // `for (InstrId i : index.instructions())`.
  class Iterator {
   public:
    Iterator(const UnfusedIndex* index, size_t comp) : index_(index), comp_(comp) { Settle(); }
    InstrId operator*() const { return id_; }
    Iterator& operator++() {
      if (++id_ == end_) {
        ++comp_;
        Settle();
      }
      return *this;
    }
    bool operator!=(const Iterator& o) const { return comp_ != o.comp_ || id_ != o.id_; }

   private:
    // Moves to the first instruction of the first non-empty computation
    // from comp_ on.
    void Settle() {
      for (; comp_ < index_->computations_.size(); ++comp_) {
        const hlo::Computation& c = index_->module_->comp(index_->computations_[comp_]);
        if (c.instruction_count == 0) continue;
        id_ = c.first_instruction;
        end_ = c.first_instruction + c.instruction_count;
        return;
      }
      id_ = end_ = 0;
    }
    const UnfusedIndex* index_;
    size_t comp_;
    InstrId id_ = 0, end_ = 0;
  };
  struct Instructions {
    const UnfusedIndex* index;
    Iterator begin() const { return Iterator(index, 0); }
    Iterator end() const { return Iterator(index, index->computations_.size()); }
  };
  Instructions instructions() const { return {this}; }

 private:
  static constexpr int64_t kFusedDelta = INT64_MIN;
  const hlo::Module* module_ = nullptr;
  std::vector<int64_t> delta_;        // per computation: number - id
  std::vector<CompId> computations_;  // not fused, by first instruction
  uint32_t size_ = 0;
};

// XLA's "flattened" sequential schedule: the entry's sequence with called
// control-flow computations inlined before their callers.
struct FlatSchedule {
  std::vector<InstrId> sequence;       // time t -> instruction
  std::vector<int64_t> span_start;     // per computation, -1 if not flattened
  std::vector<int64_t> span_end;       // one past its last instruction
  UnfusedIndex unfused;
  std::vector<int64_t> unfused_time;   // UnfusedIndex number -> time, -1 if absent
  // Per computation run inside an asynchronous operation (the computation
  // an async-start wraps, and what it calls): the time of that operation's
  // async-done, until which every value defined there lives; -1 elsewhere.
  std::vector<int64_t> async_done_time;

  int64_t end_time() const { return static_cast<int64_t>(sequence.size()); }
  // Instruction i's time, -1 if absent (fused or never flattened).
  int64_t time_of(InstrId i) const {
    const uint32_t k = unfused.of(i);
    return k == UnfusedIndex::kFused ? -1 : unfused_time[k];
  }
};

FlatSchedule FlattenSchedule(const hlo::Module& module);

// 24 bytes: a large module has millions. The memory space shares a word
// with the two flags.
struct HloValue {
  // Memory spaces a value can have: the layouts' S(n) are small numbers.
  static constexpr int64_t kMaxColor = (int64_t{1} << 29) - 1;

  HloValue() : color(0), is_phi(false), live_out(false) {}

  InstrId instruction = hlo::kNoId;  // defining instruction
  NodeId node = kNone;               // defining node (its index: Dataflow::value_index)
  ShapeId shape = 0;                 // the defining subshape
  int32_t color : 30;                // memory space of the layout, 0..kMaxColor
  bool is_phi : 1;
  bool live_out : 1;  // appears at a position of the entry root
  int64_t size = 0;   // bytes (CPU size function)
};
static_assert(sizeof(HloValue) == 24);

struct HloUse {
  InstrId user;
  uint32_t operand_number;
  NodeId operand_node;  // the node of the operand where the value appears
};

class Dataflow {
 public:
  // `target` sizes and colours the values and adds its backend's in-place
  // pairs to XLA's generic ones.
  static absl::StatusOr<Dataflow> Run(const hlo::Module& module, const CallGraph& graph,
                                      const target::Target& target = target::DefaultTarget());

  const hlo::Module& module() const { return *module_; }
  // The instructions that can have nodes: those outside fused computations.
  const UnfusedIndex& unfused() const { return unfused_; }

  // Nodes (none for the instructions of fused computations).
  // (first node, node count) of instruction i.
  std::pair<NodeId, uint32_t> node_range(InstrId i) const {
    const uint32_t k = unfused_.of(i);
    if (k == UnfusedIndex::kFused) return {node_begin_.back(), 0};
    return {node_begin_[k], node_begin_[k + 1] - node_begin_[k]};
  }
  NodeId node_begin(InstrId i) const { return node_range(i).first; }
  uint32_t node_count(InstrId i) const { return node_range(i).second; }
  InstrId node_instruction(NodeId n) const { return node_instruction_[n]; }
  // The node of `index` within instruction `i`'s shape, kNone if absent.
  NodeId NodeAt(InstrId i, const ShapeIndex& index) const;
  ShapeIndex IndexOf(NodeId n) const;
  ShapeId NodeShape(NodeId n) const { return node_shape_[n]; }
  bool IsTupleNode(NodeId n) const;

  // The value at a node (kNone for nodes nothing reaches).
  ValueId value_at(NodeId n) const { return value_at_[n]; }
  // The value at the top of instruction i's output; kNone inside fused
  // computations, whose instructions have no nodes.
  ValueId top_value(InstrId i) const {
    return node_count(i) == 0 ? kNone : value_at_[node_begin(i)];
  }
  const std::vector<HloValue>& values() const { return values_; }
  const HloValue& value(ValueId v) const { return values_[v]; }
  // The shape index a value is defined at, worked out from its node: kept
  // per value, it was 24 of a value's 56 bytes.
  ShapeIndex value_index(ValueId v) const { return IndexOf(values_[v].node); }
  // Whether a value is its defining instruction's whole output (index {}).
  bool defined_at_top(ValueId v) const {
    return values_[v].node == node_begin(values_[v].instruction);
  }
  absl::Span<const NodeId> positions(ValueId v) const { return positions_.row(v); }
  absl::Span<const HloUse> uses(ValueId v) const { return uses_.row(v); }

  // Buffers: values that must share memory.
  BufferId buffer_of(ValueId v) const { return buffer_of_[v]; }
  size_t buffer_count() const { return buffer_values_.rows(); }
  absl::Span<const ValueId> buffer_values(BufferId b) const { return buffer_values_.row(b); }
  bool buffer_live_out(BufferId b) const { return buffer_live_out_[b]; }

  // Pairs (operand number, operand index) -> output index that XLA updates
  // in place for this instruction (dynamic-update-slice, scatter, in-place
  // fusions, custom-call output_to_operand_aliasing, ...).
  struct InPlacePair {
    uint32_t operand;
    ShapeIndex operand_index;
    ShapeIndex output_index;
  };
  absl::Span<const InPlacePair> InPlacePairs(InstrId i) const {
    const uint32_t k = unfused_.of(i);
    return k == UnfusedIndex::kFused ? absl::Span<const InPlacePair>() : in_place_.row(k);
  }

  // The instruction's position in XLA's MakeInstructionPostOrder of its
  // computation (InstructionPostOrder below); instructions outside fused
  // computations only.
  uint32_t post_order_index(InstrId i) const { return post_order_index_[unfused_.of(i)]; }

 private:
  const hlo::Module* module_ = nullptr;
  // The per-instruction tables below are indexed by unfused_'s numbers.
  UnfusedIndex unfused_;
  std::vector<NodeId> node_begin_;
  std::vector<InstrId> node_instruction_;
  std::vector<ShapeId> node_shape_;
  std::vector<ValueId> value_at_;
  std::vector<HloValue> values_;
  // The in-place pairs of one instruction; `nested` gives those of the
  // instructions inside its fused body.
  std::vector<InPlacePair> ComputeInPlacePairs(
      InstrId i, const std::function<absl::Span<const InPlacePair>(InstrId)>& nested) const;

  std::vector<uint32_t> post_order_index_;
  Csr<InPlacePair> in_place_;
  Csr<NodeId> positions_;  // the defining position first
  Csr<HloUse> uses_;
  std::vector<BufferId> buffer_of_;
  Csr<ValueId> buffer_values_;  // in value id order
  std::vector<bool> buffer_live_out_;
};

// XLA's MakeInstructionPostOrder for one computation: a depth-first walk
// from each instruction without users, in text order.
std::vector<InstrId> InstructionPostOrder(const hlo::Module& module, CompId computation);

// Opcodes whose called computations run as per-element functions.
bool IsEmbeddedCaller(hlo::Opcode opcode);

}  // namespace hlomem::analysis

#endif  // HLOMEM_LIB_ANALYSIS_DATAFLOW_H_
