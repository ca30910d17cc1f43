#include "lib/analysis/memory_profile.h"

#include <algorithm>

namespace hlomem::analysis {

absl::string_view BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kParameter: return "parameter";
    case BufferKind::kOutput: return "output";
    case BufferKind::kTemp: return "temp";
    case BufferKind::kConstant: return "constant";
    case BufferKind::kThreadLocal: return "thread-local";
  }
  return "";
}

MemoryProfile ComputeMemoryProfile(const BufferAssignment& assignment) {
  const Dataflow& df = assignment.dataflow();
  const hlo::Module& m = assignment.module();
  const int64_t end_time = assignment.schedule().end_time();
  MemoryProfile profile;
  // Reserved: growing by doubling held two copies at once, 200 MB on a
  // module of a million buffers.
  profile.buffers.reserve(df.buffer_count());
  for (BufferId b = 0; b < df.buffer_count(); ++b) {
    const int64_t a = assignment.allocation_of_buffer(b);
    if (a < 0) continue;
    const Allocation& alloc = assignment.allocations()[static_cast<size_t>(a)];
    BufferRecord r;
    r.buffer = b;
    r.bytes = assignment.buffer_size(b);
    r.allocation = static_cast<int32_t>(a);
    ValueId largest = df.buffer_values(b)[0];
    for (ValueId v : df.buffer_values(b)) {
      if (df.value(v).size > df.value(largest).size) largest = v;
      const LiveRange& range = assignment.live_range(v);
      if (!range.valid()) continue;
      r.start = r.start < 0 ? range.start : std::min(r.start, range.start);
      r.end = std::max(r.end, range.end);
    }
    const HloValue& value = df.value(largest);
    r.instruction = value.instruction;
    r.value = largest;
    r.shape = value.shape;
    r.offset = assignment.offset_of(largest);
    r.is_tuple_table = m.shapes.get(value.shape).is_tuple();
    if (alloc.is_thread_local) {
      r.kind = BufferKind::kThreadLocal;
    } else if (alloc.is_constant) {
      r.kind = BufferKind::kConstant;
    } else if (alloc.is_parameter) {
      r.kind = BufferKind::kParameter;
    } else if (alloc.maybe_live_out) {
      r.kind = BufferKind::kOutput;
    } else {
      r.kind = BufferKind::kTemp;
    }
    // Parameters and constants occupy memory for the whole execution.
    if (r.kind == BufferKind::kParameter || r.kind == BufferKind::kConstant) {
      r.start = 0;
      if (r.kind == BufferKind::kConstant || !alloc.aliased_with_output) {
        r.end = static_cast<int32_t>(end_time);
      }
    }
    profile.buffers.push_back(r);
  }

  // Timeline by difference array over occupancies: each value's own live
  // range (a buffer's values can leave gaps that other buffers reuse, as a
  // temp placed in a donated parameter's allocation does), except entry
  // parameters and constants, which hold their memory all along. Where two
  // occupancies of one place in one allocation touch (in-place reuse), the
  // memory counts once at that step.
  struct Occupancy {  // 32 bytes: there is one per value
    int64_t offset, bytes;
    int32_t allocation, start, end;
    uint32_t record;
  };
  // On-chip memories (TPU VMEM, SMEM) have heaps and limits of their own:
  // the timeline and its peak are device (and host) memory. Asked once per
  // allocation, not per buffer.
  std::vector<bool> in_timeline(assignment.allocations().size());
  for (size_t a = 0; a < in_timeline.size(); ++a) {
    const target::MemorySpace space = assignment.target().Space(assignment.allocations()[a].color);
    in_timeline[a] = space.is_main || space.is_host;
  }
  std::vector<Occupancy> occupancies;
  occupancies.reserve(df.values().size());  // at most one per value; doubling held two copies
  for (size_t k = 0; k < profile.buffers.size(); ++k) {
    const BufferRecord& r = profile.buffers[k];
    if (r.kind == BufferKind::kThreadLocal || r.start < 0) continue;
    if (!in_timeline[static_cast<size_t>(r.allocation)]) continue;
    const Allocation& alloc = assignment.allocations()[static_cast<size_t>(r.allocation)];
    if (r.kind == BufferKind::kConstant ||
        (r.kind == BufferKind::kParameter && !alloc.aliased_with_output)) {
      occupancies.push_back({r.offset, r.bytes, r.allocation, r.start, r.end,
                             static_cast<uint32_t>(k)});
      continue;
    }
    for (ValueId v : df.buffer_values(r.buffer)) {
      const LiveRange& range = assignment.live_range(v);
      if (!range.valid()) continue;
      occupancies.push_back({assignment.offset_of(v), r.bytes, r.allocation, range.start,
                             range.end, static_cast<uint32_t>(k)});
    }
  }
  std::sort(occupancies.begin(), occupancies.end(), [](const Occupancy& a, const Occupancy& b) {
    return std::tie(a.allocation, a.offset, a.start, a.end) <
           std::tie(b.allocation, b.offset, b.start, b.end);
  });
  std::vector<int64_t> delta(static_cast<size_t>(end_time) + 2, 0);
  for (size_t k = 0; k < occupancies.size(); ++k) {
    const Occupancy& o = occupancies[k];
    delta[static_cast<size_t>(o.start)] += o.bytes;
    delta[static_cast<size_t>(o.end) + 1] -= o.bytes;
    if (k == 0) continue;
    const Occupancy& prev = occupancies[k - 1];
    if (prev.allocation != o.allocation || prev.offset != o.offset || o.start > prev.end) continue;
    const int64_t overlap_end = std::min(prev.end, o.end);
    const int64_t shared = std::min(prev.bytes, o.bytes);
    delta[static_cast<size_t>(o.start)] -= shared;
    delta[static_cast<size_t>(overlap_end) + 1] += shared;
  }
  // The differences summed in place become the timeline: a second array of
  // a step each is 42 MB on a module of 5 million instructions.
  delta.resize(static_cast<size_t>(end_time) + 1);
  profile.timeline = std::move(delta);
  int64_t live = 0;
  for (size_t t = 0; t < profile.timeline.size(); ++t) {
    live += profile.timeline[t];
    profile.timeline[t] = live;
    if (live > profile.peak_live_bytes) {
      profile.peak_live_bytes = live;
      profile.peak_step = static_cast<int64_t>(t);
    }
  }
  std::vector<bool> at_peak(profile.buffers.size(), false);
  for (const Occupancy& o : occupancies) {
    if (o.start <= profile.peak_step && profile.peak_step <= o.end) at_peak[o.record] = true;
  }
  for (size_t k = 0; k < profile.buffers.size(); ++k) {
    if (at_peak[k]) profile.live_at_peak.push_back(k);
  }
  std::stable_sort(profile.live_at_peak.begin(), profile.live_at_peak.end(),
                   [&](size_t x, size_t y) { return profile.buffers[x].bytes > profile.buffers[y].bytes; });
  const AssignmentStats& st = assignment.stats();
  profile.fragmentation_bytes = std::max<int64_t>(0, st.heap_bytes - st.heap_lower_bound);
  return profile;
}

}  // namespace hlomem::analysis
