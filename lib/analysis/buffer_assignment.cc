#include "lib/analysis/buffer_assignment.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/analysis/heap_simulator.h"
#include "lib/analysis/reuse_index.h"
#include "lib/base/allocator.h"
#include "lib/base/bytes.h"
#include "lib/base/metrics.h"
#include "lib/base/sort_by_key.h"
#include "lib/hlo/elementwise.h"

namespace hlomem::analysis {

using hlo::AllTransitiveUsersElementwise;
using hlo::CallRole;
using hlo::IsElementwiseOnOperand;
using hlo::Module;
using hlo::Opcode;

namespace {

size_t CountOperand(const Module& m, InstrId user, InstrId operand) {
  size_t count = 0;
  for (InstrId op : m.operands(user)) count += op == operand;
  return count;
}

}  // namespace

bool CanShareOperandBufferWithUser(const Dataflow& df, NodeId operand_node, InstrId user,
                                   NodeId user_node, const target::Target& target) {
  const Module& m = df.module();
  const InstrId operand = df.node_instruction(operand_node);
  const hlo::Instruction& user_instr = m.instr(user);
  if (m.instr(operand).opcode == Opcode::kConstant) return false;

  const ShapeId operand_shape = df.NodeShape(operand_node);
  const ShapeId user_shape = df.NodeShape(user_node);
  const ShapeIndex operand_index = df.IndexOf(operand_node);
  const ShapeIndex user_index = df.IndexOf(user_node);
  const auto ops = m.operands(user);

  if (operand_shape == user_shape) {
    for (const Dataflow::InPlacePair& pair : df.InPlacePairs(user)) {
      if (pair.operand < ops.size() && ops[pair.operand] == operand &&
          pair.operand_index == operand_index && pair.output_index == user_index) {
        const ValueId v = df.value_at(operand_node);
        size_t uses_by_user = 0;
        for (const HloUse& use : df.uses(v)) uses_by_user += use.user == user;
        return uses_by_user == 1;
      }
    }
  }
  // The backend's AliasInfo::MayAlias may allow sharing across shapes.
  if (std::optional<bool> hint = target.MayAlias(m, operand, operand_index, user, user_index)) {
    return *hint;
  }
  if (operand_shape != user_shape) return false;

  if (user_instr.opcode == Opcode::kFusion) {
    const CompId body = m.callee(user, CallRole::kCalls);
    if (body != hlo::kNoId &&
        (user_instr.fusion_kind == hlo::FusionKind::kLoop ||
         user_instr.fusion_kind == hlo::FusionKind::kInput)) {
      const auto params = m.parameters(body);
      for (size_t k = 0; k < ops.size(); ++k) {
        if (ops[k] != operand) continue;
        if (k >= params.size() || params[k] == hlo::kNoId) return false;
        if (!AllTransitiveUsersElementwise(m, params[k], /*allow_tuple=*/true)) return false;
      }
      return true;
    }
    // Output fusions other than add(dot|conv, x) fall through to the
    // generic tests below, as in XLA.
    if (body != hlo::kNoId && user_instr.fusion_kind == hlo::FusionKind::kOutput &&
        m.instr(m.comp(body).root).opcode == Opcode::kAdd) {
      const InstrId root = m.comp(body).root;
      const auto add_ops = m.operands(root);
      if (add_ops.size() != 2) return false;
      for (size_t slot = 0; slot < 2; ++slot) {
        const Opcode other = m.instr(add_ops[1 - slot]).opcode;
        if (other != Opcode::kDot && other != Opcode::kConvolution) continue;
        const InstrId param = add_ops[slot];
        if (m.instr(param).opcode != Opcode::kParameter) continue;
        const int64_t number = m.instr(param).parameter_number();
        if (number < 0 || static_cast<size_t>(number) >= ops.size() ||
            ops[static_cast<size_t>(number)] != operand) {
          continue;
        }
        return m.users(param).size() == 1;
      }
      return false;
    }
  }
  switch (user_instr.opcode) {
    case Opcode::kWhile:
    case Opcode::kConditional:
      return true;
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kScatter:
    case Opcode::kSetDimensionSize:
      return CountOperand(m, user, operand) == 1 && ops[0] == operand;
    case Opcode::kTriangularSolve:
      return CountOperand(m, user, operand) == 1 && ops.size() > 1 && ops[1] == operand;
    case Opcode::kSort: {
      if (m.users(operand).size() != 1) return false;
      if (ops.size() == 1) return true;
      for (size_t k = 0; k < ops.size(); ++k) {
        if (ops[k] == operand) {
          return CountOperand(m, user, operand) == 1 && !user_index.empty() &&
                 user_index[0] == static_cast<int64_t>(k);
        }
      }
      return false;
    }
    case Opcode::kCall: {
      const ValueId v = df.value_at(operand_node);
      const auto uses = df.uses(v);
      if (uses.size() != 2) return false;
      CompId callee = m.callee(user, CallRole::kToApply);
      if (callee == hlo::kNoId) return false;
      const InstrId root = m.comp(callee).root;
      bool has_call = false, has_root = false;
      for (const HloUse& use : uses) {
        if (use.user == user) has_call = true;
        if (use.user == root && IsElementwiseOnOperand(m, root, use.operand_number)) {
          has_root = true;
        }
      }
      return has_call && has_root;
    }
    default:
      break;
  }
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k] == operand) return IsElementwiseOnOperand(m, user, k);
  }
  return false;
}

class BufferAssigner {
 public:
  explicit BufferAssigner(BufferAssignment* out)
      : out_(out), m_(*out->module_), target_(*out->target_) {}

  absl::Status Run() {
    for (const hlo::InputOutputAlias& a : m_.input_output_aliases) {
      out_->aliased_parameters_.emplace(a.parameter, a.parameter_index);
    }
    std::optional<ScopedPhase> phase(std::in_place, "analyze: dataflow");
    out_->call_graph_ = BuildCallGraph(m_);
    out_->schedule_ = FlattenSchedule(m_);
    if (out_->schedule_.end_time() > std::numeric_limits<int32_t>::max()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          m_.path, ": error: the schedule has ", out_->schedule_.end_time(),
          " steps; live ranges hold at most 2^31"));
    }
    absl::StatusOr<Dataflow> df = Dataflow::Run(m_, out_->call_graph_, target_);
    if (!df.ok()) return df.status();
    out_->dataflow_ = std::make_unique<Dataflow>(std::move(*df));
    df_ = out_->dataflow_.get();

    const size_t buffers = df_->buffer_count();
    out_->buffer_sizes_.assign(buffers, 0);
    for (BufferId b = 0; b < buffers; ++b) {
      for (ValueId v : df_->buffer_values(b)) {
        out_->buffer_sizes_[b] = std::max(out_->buffer_sizes_[b], df_->value(v).size);
      }
    }
    phase.emplace("analyze: live ranges");
    ComputeLiveRanges();
    phase.reset();
    Assign();
    // A target that tries harder for a program that would not fit, or
    // would fit only just, assigns again.
    const std::optional<int64_t> limit = target_.TightAssignmentAbove();
    if (limit && MainMemoryBytes() > *limit) {
      tight_ = true;
      Assign();
    }
    return absl::OkStatus();
  }

 private:
  // Everything after the live ranges, from a blank assignment.
  void Assign() {
    out_->allocations_.clear();
    out_->stats_ = AssignmentStats{};
    out_->allocation_of_buffer_.assign(df_->buffer_count(), -1);
    out_->offset_of_value_.assign(df_->values().size(), -1);
    slice_ranges_.clear();
    deferred_.clear();
    heap_peak_ = 0;
    std::optional<ScopedPhase> phase(std::in_place, "analyze: global buffers");
    AssignGlobalBuffers();
    phase.emplace("analyze: heap");
    AssignHeap();
    phase.emplace("analyze: temps, stats");
    AssignThreadLocalBuffers();
    MarkLiveOut();
    CombineTemps();
    ComputeStats();
  }

  int64_t MainMemoryBytes() const {
    int64_t bytes = 0;
    for (const auto& [color, size] : out_->stats_.color_bytes) {
      if (target_.Space(color).is_main) bytes += size;
    }
    return bytes;
  }

  const HloValue& value(ValueId v) const { return df_->value(v); }
  const LiveRange& range(ValueId v) const { return out_->ranges_[v]; }
  int64_t buffer_size(BufferId b) const { return out_->buffer_sizes_[b]; }
  int64_t buffer_color(BufferId b) const { return value(df_->buffer_values(b)[0]).color; }
  CompId parent_of(ValueId v) const { return m_.instr(value(v).instruction).parent; }

  bool IsEntryParameter(InstrId i) const {
    return m_.instr(i).opcode == Opcode::kParameter && m_.instr(i).parent == m_.entry;
  }

  // ---- live ranges (HloLiveRange, module scoped) ------------------------------
  void ComputeLiveRanges() {
    const FlatSchedule& s = out_->schedule_;
    const size_t n = df_->values().size();
    out_->ranges_.assign(n, LiveRange{});
    auto position_time = [&](NodeId node) -> int64_t {
      const InstrId i = df_->node_instruction(node);
      const hlo::Instruction& instr = m_.instr(i);
      if (s.time_of(i) < 0) return -1;
      const hlo::Computation& c = m_.comp(instr.parent);
      return c.root == i ? s.span_end[instr.parent] : s.time_of(i);
    };
    for (ValueId v = 0; v < n; ++v) {
      const HloValue& val = value(v);
      const InstrId i = val.instruction;
      const int64_t t = s.time_of(i);
      if (t < 0) continue;  // fusion bodies and thread-local computations
      const hlo::Instruction& instr = m_.instr(i);
      const CompId c = instr.parent;
      // Worked out in 64 bits, stored in LiveRange's 32.
      const int64_t start = instr.opcode == Opcode::kParameter ? s.span_start[c] : t;
      int64_t end = m_.comp(c).root == i ? s.span_end[c] : t;
      NodeId end_position = val.node;
      // A value of a computation that an asynchronous operation runs lives
      // until that operation is done.
      end = std::max(end, s.async_done_time[c]);
      for (NodeId p : df_->positions(v)) {
        if (p == val.node) continue;
        const int64_t pt = position_time(p);
        if (pt > end) {
          end = pt;
          end_position = p;
        }
      }
      for (const HloUse& use : df_->uses(v)) {
        InstrId used = use.user;
        const Opcode op = m_.instr(used).opcode;
        if (op == Opcode::kCall) continue;
        if (op == Opcode::kWhile) {
          const CompId body = m_.callee(used, CallRole::kBody);
          const auto params = body == hlo::kNoId ? absl::Span<const InstrId>() : m_.parameters(body);
          if (params.empty() || params[0] == hlo::kNoId) continue;
          used = params[0];
        }
        if (s.time_of(used) >= 0) end = std::max(end, s.time_of(used));
      }
      if (IsEntryParameter(i) &&
          !out_->parameter_aliased(instr.parameter_number(), df_->value_index(v))) {
        end = s.end_time();
      }
      out_->ranges_[v] = {static_cast<int32_t>(start), static_cast<int32_t>(end), end_position};
    }
    // Values of one buffer occupy disjoint ranges (NormalizeAliasedBuffers).
    for (BufferId b = 0; b < df_->buffer_count(); ++b) {
      std::vector<ValueId> vs;
      for (ValueId v : df_->buffer_values(b)) {
        if (range(v).valid()) vs.push_back(v);
      }
      if (vs.size() < 2) continue;
      std::sort(vs.begin(), vs.end(), [&](ValueId a, ValueId b2) {
        return std::make_tuple(range(a).start, range(a).end, a) <
               std::make_tuple(range(b2).start, range(b2).end, b2);
      });
      for (size_t k = 0; k + 1 < vs.size(); ++k) {
        LiveRange& earlier = out_->ranges_[vs[k]];
        LiveRange& later = out_->ranges_[vs[k + 1]];
        later.end = std::max(later.end, earlier.end);
        earlier.end = std::min(earlier.end, later.start);
      }
    }
  }

  // ---- per-buffer assignment of global computations ----------------------------
  int64_t NewAllocation(int64_t size, int64_t color) {
    Allocation a;
    a.index = static_cast<int64_t>(out_->allocations_.size());
    a.size = size;
    a.color = color;
    out_->allocations_.push_back(std::move(a));
    return out_->allocations_.back().index;
  }

  void AddBuffer(int64_t allocation, BufferId b, int64_t offset) {
    Allocation& a = out_->allocations_[static_cast<size_t>(allocation)];
    out_->allocation_of_buffer_[b] = allocation;
    for (ValueId v : df_->buffer_values(b)) {
      a.slices.push_back({v, offset, buffer_size(b)});
      out_->offset_of_value_[v] = offset;
    }
    IndexSliceRanges(allocation, a.slices.size() - df_->buffer_values(b).size());
  }

  // An allocation's slices by the start of their live ranges, once it holds
  // many: the interference check then looks only at slices whose range can
  // meet the buffer's. One allocation of a training step replicated 64 times
  // holds 35k slices, and checking each against every buffer tried there was
  // quadratic.
  struct SliceRanges {
    absl::btree_multimap<int64_t, ValueId> by_start;  // valid ranges only
    int64_t longest = 0;                              // the largest end - start
  };
  static constexpr size_t kIndexSlicesFrom = 64;

  // Adds the allocation's slices from `first` on to its index, building the
  // index when the allocation has just grown past kIndexSlicesFrom slices.
  void IndexSliceRanges(int64_t allocation, size_t first) {
    const auto& slices = out_->allocations_[static_cast<size_t>(allocation)].slices;
    if (slices.size() < kIndexSlicesFrom) return;
    if (slice_ranges_.size() <= static_cast<size_t>(allocation)) {
      slice_ranges_.resize(out_->allocations_.size());
    }
    std::unique_ptr<SliceRanges>& index = slice_ranges_[static_cast<size_t>(allocation)];
    if (index == nullptr) {
      index = std::make_unique<SliceRanges>();
      first = 0;
    }
    for (size_t k = first; k < slices.size(); ++k) {
      const LiveRange& r = range(slices[k].value);
      if (!r.valid()) continue;  // interferes with nothing
      index->by_start.emplace(r.start, slices[k].value);
      index->longest = std::max<int64_t>(index->longest, r.end - r.start);
    }
  }

  // Whether any value of `b` interferes with a slice of allocation `a`.
  bool InterferesWithSlices(const Allocation& a, BufferId b) const {
    const SliceRanges* index = static_cast<size_t>(a.index) < slice_ranges_.size()
                                   ? slice_ranges_[static_cast<size_t>(a.index)].get()
                                   : nullptr;
    for (ValueId v : df_->buffer_values(b)) {
      if (index == nullptr) {
        for (const Allocation::Slice& slice : a.slices) {
          if (LiveRangeInterferes(slice.value, v)) return true;
        }
        continue;
      }
      const LiveRange& r = range(v);
      if (!r.valid()) continue;
      // Only a slice starting by r.end and ending from r.start on can
      // interfere, and none that starts before r.start - longest ends in time.
      for (auto it = index->by_start.lower_bound(r.start - index->longest);
           it != index->by_start.end() && it->first <= r.end; ++it) {
        if (LiveRangeInterferes(it->second, v)) return true;
      }
    }
    return false;
  }

  bool CanTakeOver(ValueId earlier, ValueId later) const {
    const InstrId later_instr = value(later).instruction;
    if (m_.instr(later_instr).opcode == Opcode::kCopy) return false;
    const NodeId end_node = range(earlier).end_position;
    if (end_node == kNone) return false;
    const InstrId end_instr = df_->node_instruction(end_node);
    bool is_user = false;
    for (InstrId op : m_.operands(later_instr)) is_user |= op == end_instr;
    if (!is_user) return false;
    return CanShareOperandBufferWithUser(*df_, end_node, later_instr, value(later).node, target_);
  }

  bool LiveRangeInterferes(ValueId a, ValueId b) const {
    const LiveRange& ra = range(a);
    const LiveRange& rb = range(b);
    if (!ra.valid() || !rb.valid()) return false;
    if (ra.end < rb.start || rb.end < ra.start) return false;
    if (ra.end == rb.start) return !CanTakeOver(a, b);
    if (rb.end == ra.start) return !CanTakeOver(b, a);
    return true;
  }

  // An output's allocation, or a donated parameter's (aliased with an
  // output): where a tight assignment lets temps in while it is free.
  static bool IsOutputOrDonated(const Allocation& a) {
    return !a.is_parameter || a.aliased_with_output;
  }

  // Whether `user` reads the instruction that defines `v` as an operand of
  // its own (not through a tuple it was put in).
  bool ReadsDefinerOf(InstrId user, ValueId v) const {
    const auto operands = m_.operands(user);
    return std::find(operands.begin(), operands.end(), value(v).instruction) != operands.end();
  }

  bool TightTempMayTakeInputOutput(BufferId b) const {
    for (ValueId v : df_->buffer_values(b)) {
      if (!target_.TightTempMayTakeInputOutput(m_, value(v).instruction)) return false;
    }
    return true;
  }

  bool MaybeAssignBuffer(int64_t allocation, BufferId b) {
    const Allocation& a = out_->allocations_[static_cast<size_t>(allocation)];
    if (a.color != buffer_color(b)) return false;
    if (buffer_size(b) > a.size) return false;
    if (a.is_readonly()) return false;
    if (a.is_thread_local || a.is_tuple) return false;
    if (!target_.TempsShareOutputAllocations() && !df_->buffer_live_out(b) &&
        !(tight_ && IsOutputOrDonated(a) && TightTempMayTakeInputOutput(b))) {
      for (const Allocation::Slice& slice : a.slices) {
        if (df_->buffer_live_out(df_->buffer_of(slice.value))) return false;
      }
    }
    if (InterferesWithSlices(a, b)) return false;
    for (ValueId v : df_->buffer_values(b)) {
      const InstrId i = value(v).instruction;
      if (m_.instr(i).opcode != Opcode::kCopy) continue;
      for (const Allocation::Slice& slice : a.slices) {
        for (NodeId p : df_->positions(slice.value)) {
          const InstrId pi = df_->node_instruction(p);
          for (InstrId op : m_.operands(i)) {
            if (op == pi) return false;
          }
        }
      }
    }
    if (df_->buffer_live_out(b) && a.size != buffer_size(b)) return false;
    AddBuffer(allocation, b, 0);
    return true;
  }

  void AssignGlobalBuffers() {
    // Post-order positions: callers before callees, each computation in
    // instruction post order.
    std::vector<int64_t> first_of_computation(m_.computations.size(), 0);
    int64_t next = 0;
    for (CompId c = static_cast<CompId>(m_.computations.size()); c-- > 0;) {
      first_of_computation[c] = next;
      next += m_.comp(c).instruction_count;
    }
    auto position = [&](InstrId i) {
      return first_of_computation[m_.instr(i).parent] + df_->post_order_index(i);
    };
    // What the loop below asks of each candidate is gathered here, in
    // buffer order: the loop takes them by size, and following value ->
    // instruction -> operand -> value there missed the cache at every step
    // on a million buffers. First, each one's earliest position and its
    // constant or entry-parameter value, if any.
    std::vector<BufferId> candidates;
    std::vector<int64_t> first_position(df_->buffer_count(), 0);
    std::vector<ValueId> fixed_value(df_->buffer_count(), kNone);
    for (BufferId b = 0; b < df_->buffer_count(); ++b) {
      const ValueId first = df_->buffer_values(b)[0];
      if (!out_->call_graph_.is_global[parent_of(first)]) continue;
      int64_t earliest = std::numeric_limits<int64_t>::max();
      for (ValueId v : df_->buffer_values(b)) {
        const InstrId i = value(v).instruction;
        earliest = std::min(earliest, position(i));
        const bool fixed = m_.instr(i).opcode == Opcode::kConstant || IsEntryParameter(i);
        if (fixed && fixed_value[b] == kNone) fixed_value[b] = v;
      }
      first_position[b] = earliest;
      candidates.push_back(b);
    }
    // Tuple tables (a buffer holding a tuple, which gets an allocation of
    // its own below): a target may assign them in the order the schedule
    // defines them rather than by size (XLA:TPU's first assignment), and
    // some after every other buffer (XLA:TPU: a loop's carried tuple).
    const bool tables_in_schedule_order = target_.TupleTablesInScheduleOrder(tight_);
    std::vector<bool> table(df_->buffer_count(), false), last(df_->buffer_count(), false);
    for (BufferId b : candidates) {
      const auto values = df_->buffer_values(b);
      table[b] = std::any_of(values.begin(), values.end(),
                             [&](ValueId v) { return m_.shapes.get(value(v).shape).is_tuple(); });
      last[b] = table[b] && target_.TupleTableAssignedLast(values.size());
      if (!table[b] || !tables_in_schedule_order) continue;
      int64_t earliest = std::numeric_limits<int64_t>::max();
      for (ValueId v : values) {
        const int64_t t = out_->schedule_.time_of(value(v).instruction);
        if (t >= 0) earliest = std::min(earliest, t);
      }
      if (earliest != std::numeric_limits<int64_t>::max()) first_position[b] = earliest;
    }
    // The buffers of the operands of each value the buffer defines at its
    // top level, in the order XLA tries their allocations.
    const Csr<BufferId> operand_buffers = Csr<BufferId>::Build(df_->buffer_count(), [&](auto emit) {
      for (BufferId b : candidates) {
        if (fixed_value[b] != kNone || table[b]) continue;
        for (ValueId v : df_->buffer_values(b)) {
          if (!df_->defined_at_top(v)) continue;
          for (InstrId op : m_.operands(value(v).instruction)) {
            const ValueId ov = df_->top_value(op);
            if (ov != kNone) emit(b, df_->buffer_of(ov));
          }
        }
      }
    });
    // Tables in schedule order sort as one size, below the arrays (a TPU
    // scalar takes 512 B) and above the tables assigned last.
    auto sort_size = [&](BufferId b) -> int64_t {
      if (last[b]) return 0;
      return table[b] && tables_in_schedule_order ? 1 : buffer_size(b);
    };
    SortByKey(candidates.begin(), candidates.end(), [&](BufferId b) {
      return std::make_tuple(-sort_size(b), !df_->buffer_live_out(b), first_position[b]);
    });

    std::vector<int64_t> reusable;  // XLA's allocation_indices
    // Allocations become reusable when they hold an output or a donated
    // parameter.
    const size_t outputs = static_cast<size_t>(std::count_if(
        candidates.begin(), candidates.end(), [&](BufferId b) { return df_->buffer_live_out(b); }));
    ReuseIndex reuse(outputs + m_.input_output_aliases.size());
    std::vector<int64_t> reuse_position(out_->allocations_.size(), -1);
    auto make_reusable = [&](int64_t a) {
      const size_t slot = reuse.Add(out_->allocations_[static_cast<size_t>(a)].size);
      reusable.push_back(a);
      if (reuse_position.size() <= static_cast<size_t>(a)) {
        reuse_position.resize(static_cast<size_t>(a) + 1, -1);
      }
      reuse_position[static_cast<size_t>(a)] = static_cast<int64_t>(slot);
    };
    // Keeps the index's view of a reusable allocation current after `b`
    // moved into it.
    auto note_buffer = [&](int64_t a, BufferId b) {
      if (static_cast<size_t>(a) >= reuse_position.size() || reuse_position[static_cast<size_t>(a)] < 0) {
        return;
      }
      for (ValueId v : df_->buffer_values(b)) {
        if (range(v).valid()) {
          reuse.AddLiveRange(static_cast<size_t>(reuse_position[static_cast<size_t>(a)]),
                             range(v).start, range(v).end);
        }
      }
    };
    for (BufferId b : candidates) {
      if (const ValueId v = fixed_value[b]; v != kNone) {
        const InstrId i = value(v).instruction;
        const int64_t a = NewAllocation(buffer_size(b), buffer_color(b));
        Allocation& alloc = out_->allocations_[static_cast<size_t>(a)];
        if (m_.instr(i).opcode == Opcode::kConstant) {
          alloc.is_constant = true;
          AddBuffer(a, b, 0);
          continue;
        }
        alloc.is_parameter = true;
        alloc.parameter_number = m_.instr(i).parameter_number();
        alloc.parameter_index = df_->value_index(v);
        alloc.aliased_with_output =
            out_->parameter_aliased(alloc.parameter_number, alloc.parameter_index);
        AddBuffer(a, b, 0);
        if (alloc.aliased_with_output) {
          make_reusable(a);
          note_buffer(a, b);
        }
        continue;
      }

      if (table[b]) {
        const int64_t a = NewAllocation(buffer_size(b), buffer_color(b));
        out_->allocations_[static_cast<size_t>(a)].is_tuple = true;
        AddBuffer(a, b, 0);
        continue;
      }

      bool done = false;
      for (BufferId operand : operand_buffers.row(b)) {
        const int64_t a = out_->allocation_of_buffer_[operand];
        if (a >= 0 && MaybeAssignBuffer(a, b)) {
          note_buffer(a, b);
          done = true;
          break;
        }
      }
      if (done) continue;

      // Newest first, skipping allocations that certainly cannot take it;
      // the buffer's longest value range tells busy allocations apart.
      LiveRange probe;
      for (ValueId v : df_->buffer_values(b)) {
        if (range(v).valid() && (!probe.valid() || range(v).end - range(v).start >
                                                       probe.end - probe.start)) {
          probe = range(v);
        }
      }
      for (int64_t k = static_cast<int64_t>(reusable.size());;) {
        k = reuse.FindLast(static_cast<size_t>(k), buffer_size(b), probe.start, probe.end);
        if (k < 0) break;
        if (MaybeAssignBuffer(reusable[static_cast<size_t>(k)], b)) {
          note_buffer(reusable[static_cast<size_t>(k)], b);
          done = true;
          break;
        }
      }
      if (done) continue;

      if (!df_->buffer_live_out(b)) {
        deferred_.push_back(b);
        continue;
      }
      const int64_t a = NewAllocation(buffer_size(b), buffer_color(b));
      AddBuffer(a, b, 0);
      make_reusable(a);
      note_buffer(a, b);
    }
  }

  // ---- sliced prefetches ---------------------------------------------------------
  struct Placement {
    ValueId with = kNone;  // placed at `offset` bytes from this value's chunk
    int64_t offset = 0;
  };

  // The slice's start indices ("slice={[2048:3072], [0:4096]}" gives
  // {2048, 0}); empty for anything else.
  std::vector<int64_t> SliceStarts(InstrId i) const {
    std::vector<int64_t> starts;
    if (m_.instr(i).opcode != Opcode::kSlice) return starts;
    const absl::string_view text = m_.attribute(i, "slice").value_or("");
    for (size_t at = text.find('['); at != absl::string_view::npos; at = text.find('[', at + 1)) {
      int64_t start = 0;
      const size_t colon = text.find(':', at);
      if (colon == absl::string_view::npos ||
          !absl::SimpleAtoi(text.substr(at + 1, colon - at - 1), &start)) {
        return {};
      }
      starts.push_back(start);
    }
    return starts;
  }

  // XLA's memory-space assignment prefetches an array in slices (async
  // slices into the alternate memory) and joins them with a ConcatBitcast
  // custom call, which only reinterprets: each slice is written where it
  // sits in the whole array's chunk, so the slices and the array are placed
  // together, the slices in the order of their start indices. The first
  // slice to be live is placed as usual; the others and the array at their
  // distance from it. The slices must be alone in their buffers; the array
  // may share its buffer with later values (a loop carrying it), which then
  // sit where it does.
  std::vector<Placement> SlicedPrefetchPlacements(const std::vector<ValueId>& values,
                                                  const std::vector<bool>& in_heap) const {
    std::vector<Placement> out(df_->values().size());
    auto alone = [&](ValueId v) {
      return v != kNone && in_heap[v] && df_->buffer_values(df_->buffer_of(v)).size() == 1;
    };
    // `values` is in order of definition: the first of each buffer's.
    std::vector<ValueId> first_of_buffer(df_->buffer_count(), kNone);
    for (ValueId v : values) {
      ValueId& first = first_of_buffer[df_->buffer_of(v)];
      if (first == kNone) first = v;
    }
    for (ValueId v : values) {
      const InstrId i = value(v).instruction;
      if (!IsConcatBitcast(v) || !df_->defined_at_top(v) || !in_heap[v] ||
          first_of_buffer[df_->buffer_of(v)] != v) {
        continue;
      }
      std::vector<std::pair<std::vector<int64_t>, ValueId>> slices;
      for (InstrId op : m_.operands(i)) {
        const ValueId ov = df_->top_value(op);
        if (!alone(ov) || out[ov].with != kNone) {
          slices.clear();
          break;
        }
        slices.push_back({SliceStarts(value(ov).instruction), ov});
      }
      if (slices.size() < 2) continue;
      std::stable_sort(slices.begin(), slices.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<int64_t> at(slices.size());
      int64_t offset = 0;
      ValueId first = slices[0].second;
      size_t first_k = 0;
      for (size_t k = 0; k < slices.size(); ++k) {
        at[k] = offset;
        offset += size_of_value(slices[k].second);
        const ValueId s = slices[k].second;
        if (std::make_tuple(range(s).start, s) < std::make_tuple(range(first).start, first)) {
          first = s;
          first_k = k;
        }
      }
      for (size_t k = 0; k < slices.size(); ++k) {
        if (k != first_k) out[slices[k].second] = {first, at[k] - at[first_k]};
      }
      out[v] = {first, -at[first_k]};
    }
    return out;
  }
  // XLA:TPU's memory-space assignment allocates a cross-program prefetch
  // (a copy-start marked cross_program_prefetch_index) before any other
  // buffer, and its end-of-program prefetch of the same array (a later
  // copy-start of that operand) into the same chunk: the copies' alternate
  // memory values.
  bool CrossProgramPrefetch(ValueId v) const {
    const InstrId i = value(v).instruction;
    if (m_.instr(i).opcode != Opcode::kCopyStart || df_->value_index(v) != ShapeIndex{0} ||
        m_.operands(i).size() != 1) {
      return false;
    }
    const InstrId source = m_.operands(i)[0];
    for (InstrId user : m_.users(source)) {
      if (m_.instr(user).opcode == Opcode::kCopyStart &&
          m_.attribute(user, "cross_program_prefetch_index").has_value()) {
        return true;
      }
    }
    return false;
  }
  // A cross-program prefetch (the copy-start marked so) with no
  // end-of-program prefetch of its array after it: XLA frees the chunk
  // between the two only when it adds the second.
  bool CrossProgramPrefetchKept(ValueId v) const {
    const InstrId i = value(v).instruction;
    if (!CrossProgramPrefetch(v) || !m_.attribute(i, "cross_program_prefetch_index")) return false;
    for (InstrId user : m_.users(m_.operands(i)[0])) {
      if (user != i && m_.instr(user).opcode == Opcode::kCopyStart) return false;
    }
    return true;
  }
  bool IsConcatBitcast(ValueId v) const {
    const InstrId i = value(v).instruction;
    return m_.instr(i).opcode == Opcode::kCustomCall && m_.custom_call_target(i) == "ConcatBitcast";
  }
  int64_t size_of_value(ValueId v) const { return buffer_size(df_->buffer_of(v)); }

  // ---- the temp heap -------------------------------------------------------------
  static constexpr size_t kReleaseAfterValues = size_t{1} << 20;

  void AssignHeap() {
    // In buffer order, the order of their tables: what follows reads each
    // one's values, ranges and instructions (the heap sorts its values
    // itself).
    std::sort(deferred_.begin(), deferred_.end());
    std::vector<int64_t> colors;
    for (BufferId b : deferred_) colors.push_back(buffer_color(b));
    std::sort(colors.begin(), colors.end());
    colors.erase(std::unique(colors.begin(), colors.end()), colors.end());
    for (int64_t color : colors) AssignHeapForColor(color);
    // The layouts freed hundreds of MB on a module of a million values,
    // kept by the C library for reuse in the heaps that freed them (a
    // worker's among them), while the profile's large tables are mapped
    // afresh: given back, the peak is lower.
    if (df_->values().size() >= kReleaseAfterValues) ReleaseFreedMemory();
  }

  // The heap simulator's events for `values` of `color`, sorted by live
  // range: each value's alloc, share-with or place-with at its start, and
  // its free at `end[v]`. The tables built here, `end` among them, die on
  // return, before the layout's own.
  std::vector<HeapEvent> HeapEvents(int64_t color, const std::vector<ValueId>& values,
                                    const std::vector<bool>& in_heap,
                                    std::vector<int64_t> end) const {
    const FlatSchedule& s = out_->schedule_;
    auto size_of = [&](ValueId v) { return buffer_size(df_->buffer_of(v)); };
    // Values defined and freed at each step, in the sorted order.
    const size_t steps = static_cast<size_t>(s.end_time() + 1);
    const Csr<ValueId> starting = Csr<ValueId>::Build(steps, [&](auto emit) {
      for (ValueId v : values) emit(static_cast<size_t>(range(v).start), v);
    });
    const Csr<ValueId> ending = Csr<ValueId>::Build(steps, [&](auto emit) {
      for (ValueId v : values) emit(static_cast<size_t>(end[v]), v);
    });
    std::vector<bool> freed(df_->values().size(), false);
    std::vector<ValueId> first_of_buffer(df_->buffer_count(), kNone);
    std::vector<HeapEvent> events;
    events.reserve(2 * values.size());  // a value starts and ends once
    const std::vector<Placement> placements = SlicedPrefetchPlacements(values, in_heap);

    for (int64_t t = 0; t <= s.end_time(); ++t) {
      const size_t events_before_step = events.size();
      for (ValueId v : starting.row(static_cast<size_t>(t))) {
        const BufferId b = df_->buffer_of(v);
        if (placements[v].with != kNone) {
          events.push_back({HeapEvent::kPlaceWith, v, size_of(v), placements[v].with,
                            placements[v].offset});
          first_of_buffer[b] = v;
          continue;
        }
        if (first_of_buffer[b] != kNone) {
          // A value of the buffer that this instruction reads for the last
          // time (an all-reduce's result, then the fusion written in place
          // over it) is freed before the new value joins, as an operand
          // whose buffer a user takes over is. Counted after the step's
          // other frees, it ended an event tick late, and that tick changed
          // the order of a v6e train step's tight heap (+5.19 MB).
          for (ValueId w : ending.row(static_cast<size_t>(t))) {
            if (freed[w] || w == v || df_->buffer_of(w) != b) continue;
            if (!ReadsDefinerOf(value(v).instruction, w)) continue;
            events.push_back({HeapEvent::kFree, w, size_of(w), 0});
            freed[w] = true;
          }
          events.push_back({HeapEvent::kShareWith, v, size_of(v), first_of_buffer[b]});
          continue;
        }
        bool shared = false;
        const InstrId i = value(v).instruction;
        if (df_->buffer_values(b).size() == 1 && m_.instr(i).opcode != Opcode::kCopy &&
            target_.HeapReusesOperandBuffers(color)) {
          const auto operands = m_.operands(i);
          for (InstrId op : operands) {
            // Only the operand's top-level value is a candidate (for a tuple,
            // its pointer table), and only if `i` uses its definer directly.
            const ValueId ov = df_->top_value(op);
            if (ov == kNone || !in_heap[ov] || freed[ov] || end[ov] != t) continue;
            if (df_->buffer_values(df_->buffer_of(ov)).size() != 1) continue;
            if (!ReadsDefinerOf(i, ov)) continue;
            if (!CanShareOperandBufferWithUser(*df_, value(ov).node, i, value(v).node, target_)) continue;
            events.push_back({HeapEvent::kFree, ov, size_of(ov), 0});
            freed[ov] = true;
            events.push_back({HeapEvent::kShareWith, v, size_of(v), ov});
            end[ov] = end[v];
            shared = true;
            break;
          }
        }
        if (!shared) {
          events.push_back({HeapEvent::kAlloc, v, size_of(v), 0, 0, CrossProgramPrefetch(v)});
          first_of_buffer[b] = v;
        }
      }
      for (ValueId v : ending.row(static_cast<size_t>(t))) {
        if (freed[v]) continue;
        freed[v] = true;
        events.push_back({HeapEvent::kFree, v, size_of(v), 0});
      }
      for (size_t k = events_before_step; k < events.size(); ++k) {
        events[k].step = static_cast<int32_t>(t);
      }
    }
    return events;
  }

  void AssignHeapForColor(int64_t color) {
    const FlatSchedule& s = out_->schedule_;
    std::vector<bool> in_heap(df_->values().size(), false);
    std::vector<ValueId> values;
    for (BufferId b : deferred_) {
      if (buffer_color(b) != color) continue;
      for (ValueId v : df_->buffer_values(b)) {
        if (!range(v).valid() || m_.instr(value(v).instruction).opcode == Opcode::kConstant) continue;
        values.push_back(v);
        in_heap[v] = true;
      }
    }
    SortByKey(values.begin(), values.end(),
              [&](ValueId v) { return std::make_pair(range(v).start, range(v).end); });
    std::vector<int64_t> end(df_->values().size(), -1);
    for (ValueId v : values) end[v] = range(v).end;
    // The values a conditional's branches return hold their buffer until
    // the conditional's output dies.
    if (target_.BranchResultsLiveToTheConditionalsEnd(color)) {
      std::vector<int64_t> buffer_end(df_->buffer_count(), -1);
      std::vector<bool> conditional_output(df_->buffer_count(), false);
      for (ValueId v : values) {
        const BufferId b = df_->buffer_of(v);
        buffer_end[b] = std::max(buffer_end[b], end[v]);
        if (value(v).is_phi && m_.instr(value(v).instruction).opcode == Opcode::kConditional) {
          conditional_output[b] = true;
        }
      }
      for (ValueId v : values) {
        if (conditional_output[df_->buffer_of(v)]) end[v] = buffer_end[df_->buffer_of(v)];
      }
    }
    // A cross-program prefetch that memory-space assignment did not free
    // for an end-of-program prefetch holds its chunk to the program's end.
    for (ValueId v : values) {
      if (!CrossProgramPrefetchKept(v)) continue;
      for (ValueId w : df_->buffer_values(df_->buffer_of(v))) {
        if (in_heap[w]) end[w] = s.end_time();
      }
    }
    std::vector<HeapEvent> events = HeapEvents(color, values, in_heap, std::move(end));
    auto size_of = [&](ValueId v) { return buffer_size(df_->buffer_of(v)); };

    // The heap simulator works on dense ids: each value's rank by value id
    // (which keeps its tie-breaks), offset past the other colors' ranks in
    // heap_events_.
    std::vector<uint32_t> heap_id_of(df_->values().size(), 0);
    {
      uint32_t next_id = 0;
      for (ValueId v = 0; v < df_->values().size(); ++v) {
        if (in_heap[v]) heap_id_of[v] = next_id++;
      }
    }
    auto heap_id = [&](ValueId v) { return heap_id_of[v]; };
    for (HeapEvent& e : events) {
      e.buffer = heap_id(e.buffer);
      if (e.kind == HeapEvent::kShareWith || e.kind == HeapEvent::kPlaceWith) {
        e.share_with = heap_id(e.share_with);
      }
    }
    const uint32_t id_count = static_cast<uint32_t>(values.size());
    const std::optional<target::HeapBudget> budget = target_.heap_budget(color);
    const int64_t live_bytes_peak = LiveBytesPeak(events, id_count);
    HeapResult heap =
        BestHeap(std::move(events), id_count, target_.Alignment(color),
                 tight_ ? target_.tight_heap_orders(color) : target_.heap_orders(color), budget);
    const int64_t live_peak =
        target_.PeakCountsValues(color) ? ValuesPeak(values) : live_bytes_peak;
    heap_peak_ = std::max(heap_peak_, live_peak);
    // Memory-space assignment put every one of these buffers in the colour
    // under its budget (it leaves out what does not fit, and the HLO says
    // they are in): where no order of ours fits the budget, its own packing
    // did, and near the budget it packs to the buffers' live peak (real
    // train steps on v5e: XLA's VMEM heap 0 to 2.5 MB above that peak, our
    // orders' 23-34% above it). The offsets stay ours.
    if (budget && heap.heap_size > budget->bytes) {
      const int64_t floor = BuffersPeak(values);
      if (floor <= budget->bytes) heap.heap_size = floor;
    }
    out_->stats_.heap_bytes += heap.heap_size;
    out_->stats_.heap_lower_bound += live_bytes_peak;

    const int64_t a = NewAllocation(heap.heap_size, color);
    Allocation& alloc = out_->allocations_[static_cast<size_t>(a)];
    for (BufferId b : deferred_) {
      if (buffer_color(b) == color) out_->allocation_of_buffer_[b] = a;
    }
    for (ValueId v : values) {
      const int64_t offset = std::max<int64_t>(heap.offsets[heap_id(v)], 0);
      alloc.slices.push_back({v, offset, size_of(v)});
      out_->offset_of_value_[v] = offset;
    }
  }

  // The peak of `values` counted value by value (Target::PeakCountsValues):
  // each its own interval, but a phi value taking over its buffer from the
  // value before it extends that value's interval.
  int64_t ValuesPeak(const std::vector<ValueId>& values) const {
    std::vector<ValueId> by_buffer = values;
    std::sort(by_buffer.begin(), by_buffer.end(), [&](ValueId a, ValueId b) {
      return std::make_tuple(df_->buffer_of(a), range(a).start, range(a).end, a) <
             std::make_tuple(df_->buffer_of(b), range(b).start, range(b).end, b);
    });
    std::vector<LiveInterval> intervals;
    for (size_t k = 0; k < by_buffer.size(); ++k) {
      const ValueId v = by_buffer[k];
      const LiveRange& r = range(v);
      const int64_t size = buffer_size(df_->buffer_of(v));
      if (k > 0 && df_->buffer_of(by_buffer[k - 1]) == df_->buffer_of(v)) {
        const ValueId before = by_buffer[k - 1];
        // Two outputs of one instruction written over one operand (an
        // async collective's fusion aliasing two leaves to one input) are
        // the same bytes, counted once: a v5e all-gather's 64 MiB chunk
        // shows three 64 MiB values at that step and XLA counts two.
        const bool same_write = value(before).instruction == value(v).instruction &&
                                range(before).start == r.start;
        if ((value(v).is_phi && r.start <= intervals.back().end) || same_write) {
          intervals.back().end = std::max<int64_t>(intervals.back().end, r.end);
          continue;
        }
      }
      // A sliced prefetch's concatenation is its slices' bytes: it counts
      // from the step after it joins them.
      if (IsConcatBitcast(v)) {
        if (r.end > r.start) intervals.push_back({r.start + 1, r.end, size});
        continue;
      }
      intervals.push_back({r.start, r.end, size});
    }
    return IntervalsPeak(std::move(intervals));
  }

  // The peak of `values` counted buffer by buffer: each holds its chunk from
  // its first value's start to its last value's end, whatever it carries in
  // between; a sliced prefetch's concatenation (its slices' bytes) from the
  // step after it joins them. No layout of the heap can be smaller.
  int64_t BuffersPeak(const std::vector<ValueId>& values) const {
    std::map<BufferId, LiveInterval> spans;
    for (ValueId v : values) {
      const LiveRange& r = range(v);
      const BufferId b = df_->buffer_of(v);
      const int64_t start = IsConcatBitcast(v) ? r.start + 1 : r.start;
      auto [it, inserted] = spans.try_emplace(b, LiveInterval{start, r.end, buffer_size(b)});
      if (!inserted) {
        it->second.start = std::min(it->second.start, start);
        it->second.end = std::max<int64_t>(it->second.end, r.end);
      }
    }
    std::vector<LiveInterval> intervals;
    for (const auto& [b, span] : spans) {
      if (span.end >= span.start) intervals.push_back(span);
    }
    return IntervalsPeak(std::move(intervals));
  }

  // ---- thread-local computations (reducers, comparators, ...) --------------------
  void AssignThreadLocalBuffers() {
    for (BufferId b = 0; b < df_->buffer_count(); ++b) {
      const ValueId first = df_->buffer_values(b)[0];
      const CompId c = parent_of(first);
      if (out_->call_graph_.is_global[c] || !out_->call_graph_.is_reachable[c]) continue;
      if (m_.comp(c).is_fusion) continue;
      const int64_t a = NewAllocation(buffer_size(b), buffer_color(b));
      Allocation& alloc = out_->allocations_[static_cast<size_t>(a)];
      if (m_.instr(value(first).instruction).opcode == Opcode::kConstant) {
        alloc.is_constant = true;
      } else {
        alloc.is_thread_local = true;
      }
      AddBuffer(a, b, 0);
    }
  }

  void MarkLiveOut() {
    for (BufferId b = 0; b < df_->buffer_count(); ++b) {
      const int64_t a = out_->allocation_of_buffer_[b];
      if (a >= 0 && df_->buffer_live_out(b)) out_->allocations_[static_cast<size_t>(a)].maybe_live_out = true;
    }
  }

  // ---- CombineTempAllocations -------------------------------------------------------
  void CombineTemps() {
    std::vector<Allocation>& allocs = out_->allocations_;
    // std::partition as libstdc++ implements it (not stable), with the
    // predicate "not a preallocated temp": the order decides which temp is
    // appended last and so which one escapes the 64-byte padding.
    size_t first = 0, last = allocs.size();
    while (true) {
      while (first != last && !allocs[first].is_temp()) ++first;
      if (first == last) break;
      --last;
      while (first != last && allocs[last].is_temp()) --last;
      if (first == last) break;
      std::swap(allocs[first], allocs[last]);
      ++first;
    }
    const size_t temps_begin = first;
    std::vector<Allocation> combined;
    for (size_t k = temps_begin; k < allocs.size(); ++k) {
      Allocation& temp = allocs[k];
      Allocation* target = nullptr;
      for (Allocation& c : combined) {
        if (c.color == temp.color) target = &c;
      }
      if (target == nullptr) {
        combined.push_back(std::move(temp));
        combined.back().is_combined_temp = true;
        continue;
      }
      const int64_t base = RoundUpTo(target->size, target_.Alignment(temp.color));
      target->size = base + temp.size;
      for (Allocation::Slice& slice : temp.slices) {
        slice.offset += base;
        target->slices.push_back(slice);
      }
    }
    allocs.resize(temps_begin);
    for (Allocation& c : combined) allocs.push_back(std::move(c));
    for (size_t k = 0; k < allocs.size(); ++k) {
      allocs[k].index = static_cast<int64_t>(k);
      for (const Allocation::Slice& slice : allocs[k].slices) {
        out_->allocation_of_buffer_[df_->buffer_of(slice.value)] = static_cast<int64_t>(k);
        out_->offset_of_value_[slice.value] = slice.offset;
      }
    }
  }

  // ---- summary -----------------------------------------------------------------------
  void ComputeStats() {
    AssignmentStats& st = out_->stats_;
    for (const Allocation& a : out_->allocations_) {
      st.color_bytes[a.color] += a.size;
      target::AllocationRole role;
      role.parameter = a.is_parameter;
      role.aliased = a.is_parameter && a.aliased_with_output;
      role.live_out = a.maybe_live_out;
      role.temp = a.is_temp();
      role.constant = a.is_constant;
      role.thread_local_ = a.is_thread_local;
      if (target::AddToMemoryStats(target_, a.color, role, a.size, &st)) st.total_bytes += a.size;
    }
    // ComputePeakMemory: the largest value of every parameter, constant and
    // output allocation, plus the peak of the replayed heap.
    int64_t fixed = 0;
    for (const Allocation& a : out_->allocations_) {
      if (a.is_thread_local || !(a.is_parameter || a.is_constant || a.maybe_live_out)) continue;
      int64_t largest = 0;
      for (const Allocation::Slice& slice : a.slices) largest = std::max(largest, slice.size);
      fixed += largest;
    }
    // Each colour's heap on its own: the most any one holds at a time.
    st.peak_memory_bytes = fixed + heap_peak_;
  }

  BufferAssignment* out_;
  const Module& m_;
  const target::Target& target_;
  const Dataflow* df_ = nullptr;
  std::vector<BufferId> deferred_;
  std::vector<std::unique_ptr<SliceRanges>> slice_ranges_;  // per allocation; null below the threshold
  int64_t heap_peak_ = 0;  // the largest colour's peak of live heap bytes
  // The second, tighter assignment of a program above the target's
  // threshold (TightAssignmentAbove).
  bool tight_ = false;
};

std::string FormatAllocations(const BufferAssignment& assignment) {
  const Module& m = assignment.module();
  const Dataflow& df = assignment.dataflow();
  std::string out;
  for (const Allocation& a : assignment.allocations()) {
    absl::StrAppend(&out, "allocation ", a.index, ": size ", a.size);
    if (a.color != 0) absl::StrAppend(&out, ", color ", a.color);
    if (a.is_parameter) {
      absl::StrAppend(&out, ", parameter ", a.parameter_number, " at ShapeIndex ",
                      hlo::ShapeIndexToString(a.parameter_index));
    }
    if (a.is_constant) out.append(", constant");
    if (a.is_thread_local) out.append(", thread-local");
    if (a.maybe_live_out) out.append(", maybe-live-out");
    if (a.is_temp()) out.append(", preallocated-temp");
    out.append(":\n");
    std::vector<Allocation::Slice> slices = a.slices;
    std::sort(slices.begin(), slices.end(),
              [](const auto& x, const auto& y) { return x.value < y.value; });
    for (const Allocation::Slice& slice : slices) {
      const HloValue& v = df.value(slice.value);
      absl::StrAppend(&out, " value: <", slice.value, " ", m.instr(v.instruction).name);
      if (m.shape_of(v.instruction).is_tuple()) {
        out.append(hlo::ShapeIndexToString(df.value_index(slice.value)));
      }
      absl::StrAppend(&out, v.is_phi ? " (phi)" : "", "> (size=", slice.size,
                      ",offset=", slice.offset, "): ", m.shapes.ToString(v.shape), "\n");
    }
  }
  absl::StrAppend(&out, "\nTotal bytes used: ", assignment.stats().total_bytes, "\n");
  // Backends with more memory spaces (TPU's VMEM, SMEM): each colour's sum,
  // as XLA's memory-usage report gives it.
  const std::map<int64_t, int64_t>& by_color = assignment.stats().color_bytes;
  if (by_color.size() > 1) {
    for (const auto& [color, bytes] : by_color) {
      absl::StrAppend(&out, "Memory space ", assignment.target().Space(color).name, " (color=", color,
                      "): ", bytes, " bytes\n");
    }
  }
  return out;
}

std::string FormatLiveRanges(const BufferAssignment& assignment) {
  const Module& m = assignment.module();
  const Dataflow& df = assignment.dataflow();
  const FlatSchedule& schedule = assignment.schedule();
  std::string out = absl::StrCat("HloLiveRange (max ", schedule.end_time(), "):\n  InstructionSequence:\n");
  for (int64_t t = 0; t < schedule.end_time(); ++t) {
    absl::StrAppend(&out, "    ", t, ":", m.instr(schedule.sequence[static_cast<size_t>(t)]).name, "\n");
  }
  out.append("  BufferLiveRange:\n");
  for (ValueId v = 0; v < df.values().size(); ++v) {
    const LiveRange& range = assignment.live_range(v);
    if (!range.valid()) continue;
    const HloValue& value = df.value(v);
    absl::StrAppend(&out, "    ", m.instr(value.instruction).name,
                    hlo::ShapeIndexToString(df.value_index(v)), ":", range.start, "-", range.end,
                    "\n");
  }
  return out;
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> BufferAssignment::Run(
    const hlo::Module& module, const target::Target& target) {
  std::unique_ptr<BufferAssignment> out(new BufferAssignment());
  out->module_ = &module;
  out->target_ = &target;
  BufferAssigner assigner(out.get());
  absl::Status status = assigner.Run();
  if (!status.ok()) return status;
  return out;
}

}  // namespace hlomem::analysis
