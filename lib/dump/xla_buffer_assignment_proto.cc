#include "lib/dump/xla_buffer_assignment_proto.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/diagnostic.h"
#include "proto/xla.pb.h"

namespace hlomem::dump {
namespace {

// Logical buffer id -> its proto.
absl::flat_hash_map<int64_t, const xla::LogicalBufferProto*> IndexLogicalBuffers(
    const xla::BufferAssignmentProto& proto) {
  absl::flat_hash_map<int64_t, const xla::LogicalBufferProto*> index;
  index.reserve(static_cast<size_t>(proto.logical_buffers_size()));
  for (const xla::LogicalBufferProto& buffer : proto.logical_buffers()) {
    index.emplace(buffer.id(), &buffer);
  }
  return index;
}

// ShapeUtil::HumanString[WithLayout]: like ShapeTable::ToString, plus the
// /*index=N*/ comment XLA puts before every fifth tuple element.
void AppendShape(const hlo::ShapeTable& shapes, hlo::ShapeId id, bool with_layout,
                 std::string* out) {
  const hlo::Shape& shape = shapes.get(id);
  if (!shape.is_tuple()) {
    out->append(shapes.ToString(id, with_layout));
    return;
  }
  out->push_back('(');
  for (size_t i = 0; i < shape.tuple_elements.size(); ++i) {
    if (i) out->append(", ");
    if (i > 0 && i % 5 == 0) absl::StrAppend(out, "/*index=", i, "*/");
    AppendShape(shapes, shape.tuple_elements[i], with_layout, out);
  }
  out->push_back(')');
}

std::string ShapeText(const hlo::ShapeTable& shapes, hlo::ShapeId id, bool with_layout) {
  std::string out;
  AppendShape(shapes, id, with_layout, &out);
  return out;
}

}  // namespace

absl::StatusOr<XlaBufferAssignment> XlaBufferAssignmentFromProto(
    const xla::BufferAssignmentProto& proto, const hlo::Module& module,
    const absl::flat_hash_map<int64_t, hlo::InstrId>& instruction_ids,
    absl::string_view path) {
  const auto buffers = IndexLogicalBuffers(proto);
  const hlo::CompId entry = module.entry;
  const hlo::InstrId entry_root =
      entry < module.computations.size() ? module.computations[entry].root : hlo::kNoId;

  // Logical buffers that appear at the entry root's top-level position,
  // directly or through an alias (a get-tuple-element or bitcast root):
  // BufferAllocation::ToString calls their allocation the output.
  absl::flat_hash_set<int64_t> at_output;
  std::string output_shape;
  if (entry_root != hlo::kNoId) {
    output_shape = ShapeText(module.shapes, module.instr(entry_root).shape,
                             /*with_layout=*/false);
    // The proto lists no get-tuple-element, bitcast, tuple or call
    // positions, so follow a forwarding root to a position it does list.
    hlo::InstrId target = entry_root;
    hlo::ShapeIndex target_index;
    for (int guard = 0; guard < 256; ++guard) {
      const hlo::Instruction& i = module.instr(target);
      const auto operands = module.operands(target);
      if (i.opcode == hlo::Opcode::kGetTupleElement && i.tuple_index() >= 0 &&
          operands.size() == 1) {
        target_index.insert(target_index.begin(), i.tuple_index());
        target = operands[0];
      } else if (i.opcode == hlo::Opcode::kBitcast && operands.size() == 1) {
        target = operands[0];
      } else if (i.opcode == hlo::Opcode::kTuple && !target_index.empty() &&
                 target_index[0] >= 0 &&
                 target_index[0] < static_cast<int64_t>(operands.size())) {
        target = operands[static_cast<size_t>(target_index[0])];
        target_index.erase(target_index.begin());
      } else if (i.opcode == hlo::Opcode::kCall && module.callees(target).size() == 1 &&
                 module.callees(target)[0].computation < module.computations.size() &&
                 module.comp(module.callees(target)[0].computation).root != hlo::kNoId) {
        target = module.comp(module.callees(target)[0].computation).root;
      } else {
        break;
      }
    }
    auto is_output_position = [&](int64_t instruction_id, const auto& shape_index) {
      auto instr = instruction_ids.find(instruction_id);
      if (instr == instruction_ids.end()) return false;
      if (instr->second == entry_root && shape_index.empty()) return true;
      return instr->second == target &&
             hlo::ShapeIndex(shape_index.begin(), shape_index.end()) == target_index;
    };
    for (const auto& alias : proto.buffer_aliases()) {
      if (is_output_position(alias.location().instruction_id(),
                             alias.location().shape_index())) {
        at_output.insert(alias.source_buffer_id());
      }
    }
    for (const xla::LogicalBufferProto& b : proto.logical_buffers()) {
      if (is_output_position(b.defined_at().instruction_id(), b.defined_at().shape_index())) {
        at_output.insert(b.id());
      }
    }
  }

  XlaBufferAssignment out;
  out.allocations.reserve(static_cast<size_t>(proto.buffer_allocations_size()));
  int64_t total = 0;
  for (const xla::BufferAllocationProto& a : proto.buffer_allocations()) {
    XlaAllocation allocation;
    allocation.index = a.index();
    allocation.size = a.size();
    if (a.size() < 0) {
      return FileError(path, absl::StrCat("buffer allocation ", a.index(),
                                          " has negative size ", a.size()));
    }
    allocation.color = a.color();
    allocation.is_parameter = a.is_entry_computation_parameter();
    if (allocation.is_parameter) {
      allocation.parameter_number = a.parameter_number();
      allocation.parameter_index.assign(a.parameter_shape_index().begin(),
                                        a.parameter_shape_index().end());
      allocation.parameter_shape = "<unknown shape>";
      if (entry != hlo::kNoId) {
        auto parameters = module.parameters(entry);
        if (a.parameter_number() >= 0 &&
            a.parameter_number() < static_cast<int64_t>(parameters.size()) &&
            parameters[static_cast<size_t>(a.parameter_number())] != hlo::kNoId) {
          allocation.parameter_shape = ShapeText(
              module.shapes,
              module.instr(parameters[static_cast<size_t>(a.parameter_number())]).shape,
              /*with_layout=*/false);
        }
      }
    }
    allocation.is_constant = a.is_constant();
    allocation.is_thread_local = a.is_thread_local();
    allocation.maybe_live_out = a.maybe_live_out();
    // BufferAllocation::IsPreallocatedTempBuffer.
    allocation.is_preallocated_temp = !a.is_entry_computation_parameter() &&
                                      !a.maybe_live_out() && !a.is_thread_local() &&
                                      !a.is_constant();

    allocation.values.reserve(static_cast<size_t>(a.assigned_size()));
    for (const auto& assigned : a.assigned()) {
      XlaValue value;
      value.id = assigned.logical_buffer_id();
      value.size = assigned.size();
      value.offset = assigned.offset();
      value.instruction = "<unknown>";
      auto buffer = buffers.find(assigned.logical_buffer_id());
      if (buffer != buffers.end()) {
        const xla::LogicalBufferProto& b = *buffer->second;
        value.color = b.color();
        hlo::ShapeIndex index(b.defined_at().shape_index().begin(),
                              b.defined_at().shape_index().end());
        auto instr = instruction_ids.find(b.defined_at().instruction_id());
        if (instr != instruction_ids.end() && instr->second < module.instructions.size()) {
          const hlo::Instruction& i = module.instr(instr->second);
          value.instruction = std::string(i.name);
          const hlo::Shape& shape = module.shapes.get(i.shape);
          // The text prints the index only for tuple-shaped producers.
          if (shape.is_tuple()) value.shape_index.assign(index.begin(), index.end());
          if (auto sub = module.shapes.Subshape(i.shape, index)) {
            value.shape = ShapeText(module.shapes, *sub, /*with_layout=*/true);
          }
          if (at_output.contains(value.id)) allocation.is_output = true;
        } else {
          if (!b.defined_at().instruction_name().empty()) {
            value.instruction = b.defined_at().instruction_name();
          }
          value.shape_index.assign(index.begin(), index.end());
        }
      }
      allocation.values.push_back(std::move(value));
    }
    if (allocation.is_output) allocation.output_shape = output_shape;
    std::sort(allocation.values.begin(), allocation.values.end(),
              [](const XlaValue& x, const XlaValue& y) { return x.id < y.id; });
    total = SaturatingAdd(total, allocation.size);
    out.allocations.push_back(std::move(allocation));
  }
  std::sort(out.allocations.begin(), out.allocations.end(),
            [](const XlaAllocation& x, const XlaAllocation& y) { return x.index < y.index; });
  out.total_bytes = total;
  out.path = std::string(path);
  return out;
}

absl::StatusOr<XlaBufferAssignment> XlaBufferAssignmentFromProto(
    const hlo::ProtoReadResult& result) {
  if (!result.has_buffer_assignment()) {
    return FileError(result.module.path, "the proto has no buffer assignment");
  }
  return XlaBufferAssignmentFromProto(*result.buffer_assignment, result.module,
                                      result.instruction_ids, result.module.path);
}

std::vector<HeapTraceReplay> ReplayHeapSimulatorTraces(
    const xla::BufferAssignmentProto& proto) {
  const auto buffers = IndexLogicalBuffers(proto);
  std::vector<HeapTraceReplay> replays;
  replays.reserve(static_cast<size_t>(proto.heap_simulator_traces_size()));
  for (const xla::HeapSimulatorTrace& trace : proto.heap_simulator_traces()) {
    HeapTraceReplay replay;
    replay.buffer_allocation_index = trace.buffer_allocation_index();
    replay.whole_module_simulation = trace.whole_module_simulation();
    replay.event_count = trace.events_size();

    absl::flat_hash_map<int64_t, int64_t> outstanding;  // canonical id -> live instances
    absl::flat_hash_map<int64_t, int64_t> canonical;    // sharer -> canonical id
    absl::flat_hash_map<int64_t, int64_t> added;        // buffer -> bytes it added
    auto delta = [&](const xla::HeapSimulatorTrace::Event& event, bool* known) -> int64_t {
      auto buffer = buffers.find(event.buffer_id());
      *known = buffer != buffers.end();
      if (!*known) return 0;
      const int64_t size = buffer->second->size();
      switch (event.kind()) {
        case xla::HeapSimulatorTrace::Event::ALLOC:
          outstanding[event.buffer_id()] = 1;
          return added[event.buffer_id()] = size;
        case xla::HeapSimulatorTrace::Event::SHARE_WITH:
          canonical[event.buffer_id()] = event.share_with_canonical_id();
          if (++outstanding[event.share_with_canonical_id()] == 1) {
            return added[event.buffer_id()] = size;
          }
          return added[event.buffer_id()] = 0;
        case xla::HeapSimulatorTrace::Event::FREE: {
          auto c = canonical.find(event.buffer_id());
          --outstanding[c == canonical.end() ? event.buffer_id() : c->second];
          auto a = added.find(event.buffer_id());
          return a == added.end() ? 0 : -a->second;
        }
        default:
          return 0;
      }
    };

    // First pass: the peak. Second pass: who is live when it is first hit.
    int64_t live = 0;
    for (const auto& event : trace.events()) {
      bool known = false;
      live = SaturatingAdd(live, delta(event, &known));
      if (!known) ++replay.unknown_buffer_events;
      replay.peak_bytes = std::max(replay.peak_bytes, live);
    }
    if (replay.peak_bytes > 0) {
      outstanding.clear();
      canonical.clear();
      added.clear();
      absl::flat_hash_set<int64_t> live_ids;
      live = 0;
      for (int k = 0; k < trace.events_size(); ++k) {
        const auto& event = trace.events(k);
        bool known = false;
        const int64_t d = delta(event, &known);
        if (d > 0) live_ids.insert(event.buffer_id());
        if (d < 0) live_ids.erase(event.buffer_id());
        live = SaturatingAdd(live, d);
        if (live == replay.peak_bytes) {
          replay.peak_event = k;
          break;
        }
      }
      replay.live_at_peak.assign(live_ids.begin(), live_ids.end());
      std::sort(replay.live_at_peak.begin(), replay.live_at_peak.end());
    }
    replays.push_back(std::move(replay));
  }
  return replays;
}

int64_t StaticPeakBytes(const xla::BufferAssignmentProto& proto) {
  const auto buffers = IndexLogicalBuffers(proto);
  int64_t total = 0;
  for (const xla::BufferAllocationProto& a : proto.buffer_allocations()) {
    if (a.is_thread_local()) continue;
    if (!a.is_entry_computation_parameter() && !a.is_constant() && !a.maybe_live_out()) {
      continue;
    }
    int64_t largest = 0;
    for (const auto& assigned : a.assigned()) {
      auto b = buffers.find(assigned.logical_buffer_id());
      largest = std::max(largest, b != buffers.end() ? b->second->size() : assigned.size());
    }
    total = SaturatingAdd(total, largest);
  }
  return total;
}

int64_t ComputePeakMemory(const xla::BufferAssignmentProto& proto) {
  const int64_t total = StaticPeakBytes(proto);
  int64_t heap_peak = 0;
  for (const HeapTraceReplay& replay : ReplayHeapSimulatorTraces(proto)) {
    heap_peak = std::max(heap_peak, replay.peak_bytes);
  }
  return SaturatingAdd(total, heap_peak);
}

}  // namespace hlomem::dump
