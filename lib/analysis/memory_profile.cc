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

  for (BufferId b = 0; b < df.buffer_count(); ++b) {
    const int64_t a = assignment.allocation_of_buffer(b);
    if (a < 0) continue;
    const Allocation& alloc = assignment.allocations()[static_cast<size_t>(a)];
    BufferRecord r;
    r.buffer = b;
    r.bytes = assignment.buffer_size(b);
    r.allocation = a;
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
    r.index = value.index;
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
      if (r.kind == BufferKind::kConstant || !alloc.aliased_with_output) r.end = end_time;
    }
    profile.buffers.push_back(r);
  }

  // Timeline by difference array. Two buffers at the same place in one
  // allocation where one ends at the step the other starts (in-place reuse)
  // hold the memory once at that step.
  std::vector<int64_t> delta(static_cast<size_t>(end_time) + 2, 0);
  std::vector<std::vector<size_t>> by_allocation(assignment.allocations().size());
  for (size_t k = 0; k < profile.buffers.size(); ++k) {
    const BufferRecord& r = profile.buffers[k];
    if (r.kind == BufferKind::kThreadLocal || r.start < 0) continue;
    delta[static_cast<size_t>(r.start)] += r.bytes;
    delta[static_cast<size_t>(r.end) + 1] -= r.bytes;
    by_allocation[static_cast<size_t>(r.allocation)].push_back(k);
  }
  for (auto& members : by_allocation) {
    std::sort(members.begin(), members.end(), [&](size_t x, size_t y) {
      const BufferRecord& a = profile.buffers[x];
      const BufferRecord& b = profile.buffers[y];
      return std::tie(a.offset, a.start) < std::tie(b.offset, b.start);
    });
    for (size_t k = 0; k + 1 < members.size(); ++k) {
      const BufferRecord& earlier = profile.buffers[members[k]];
      const BufferRecord& later = profile.buffers[members[k + 1]];
      if (earlier.offset == later.offset && earlier.end == later.start) {
        const int64_t overlap = std::min(earlier.bytes, later.bytes);
        delta[static_cast<size_t>(later.start)] -= overlap;
        delta[static_cast<size_t>(later.start) + 1] += overlap;
      }
    }
  }
  profile.timeline.resize(static_cast<size_t>(end_time) + 1);
  int64_t live = 0;
  for (size_t t = 0; t < profile.timeline.size(); ++t) {
    live += delta[t];
    profile.timeline[t] = live;
    if (live > profile.peak_live_bytes) {
      profile.peak_live_bytes = live;
      profile.peak_step = static_cast<int64_t>(t);
    }
  }
  for (size_t k = 0; k < profile.buffers.size(); ++k) {
    const BufferRecord& r = profile.buffers[k];
    if (r.kind != BufferKind::kThreadLocal && r.start <= profile.peak_step &&
        profile.peak_step <= r.end && r.start >= 0) {
      profile.live_at_peak.push_back(k);
    }
  }
  std::stable_sort(profile.live_at_peak.begin(), profile.live_at_peak.end(),
                   [&](size_t x, size_t y) { return profile.buffers[x].bytes > profile.buffers[y].bytes; });
  const AssignmentStats& st = assignment.stats();
  profile.fragmentation_bytes = std::max<int64_t>(0, st.heap_bytes - st.heap_lower_bound);
  return profile;
}

}  // namespace hlomem::analysis
