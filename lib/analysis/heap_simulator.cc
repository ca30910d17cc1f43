#include "lib/analysis/heap_simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "lib/base/bytes.h"

namespace hlomem::analysis {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

// One buffer's lifetime in event-counter time (not schedule steps): XLA's
// best-fit heap ticks a counter on every alloc, share-with and free.
struct Interval {
  uint32_t id = 0;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = -1;
  bool needs_allocation = false;
  bool present = false;
  std::vector<uint32_t> colocations;  // buffers sharing this one's chunk
};

struct Committed {
  int64_t start, end, offset, size;
};

}  // namespace

HeapResult GlobalDecreasingSizeBestFit(const std::vector<HeapEvent>& events,
                                       uint32_t id_count, int64_t alignment,
                                       HeapOrder order) {
  HeapResult result;
  result.offsets.assign(id_count, -1);
  std::vector<Interval> intervals(id_count);
  int64_t counter = 0;
  for (const HeapEvent& e : events) {
    Interval& in = intervals[e.buffer];
    switch (e.kind) {
      case HeapEvent::kAlloc:
      case HeapEvent::kShareWith:
        in.id = e.buffer;
        in.size = e.size;
        in.present = true;
        if (e.size == 0) {
          result.offsets[e.buffer] = 0;  // nothing to place, no tick
          break;
        }
        in.start = counter++;
        in.needs_allocation = e.kind == HeapEvent::kAlloc;
        if (e.kind == HeapEvent::kShareWith) intervals[e.share_with].colocations.push_back(e.buffer);
        break;
      case HeapEvent::kFree:
        if (in.size == 0) break;
        in.end = counter++;
        break;
    }
  }
  for (Interval& in : intervals) {
    if (in.present && in.size > 0 && in.end < 0) in.end = counter;
  }

  // Transitive colocations of a root interval.
  auto group_of = [&](uint32_t root) {
    std::vector<uint32_t> group = {root};
    for (size_t k = 0; k < group.size(); ++k) {
      for (uint32_t c : intervals[group[k]].colocations) group.push_back(c);
    }
    return group;
  };

  std::vector<uint32_t> roots;
  for (const Interval& in : intervals) {
    if (in.present && in.size > 0 && in.needs_allocation) roots.push_back(in.id);
  }
  std::vector<int64_t> max_end(id_count, 0);
  if (order == HeapOrder::kTemporal) {
    for (uint32_t r : roots) {
      int64_t end = intervals[r].end;
      for (uint32_t c : group_of(r)) end = std::max(end, intervals[c].end);
      max_end[r] = end;
    }
  }
  std::sort(roots.begin(), roots.end(), [&](uint32_t a, uint32_t b) {
    const Interval& x = intervals[a];
    const Interval& y = intervals[b];
    if (order == HeapOrder::kSpatial) {
      return std::make_tuple(-x.size, x.start - x.end, x.id) <
             std::make_tuple(-y.size, y.start - y.end, y.id);
    }
    return std::make_tuple(x.start - max_end[a], -x.size, x.id) <
           std::make_tuple(y.start - max_end[b], -y.size, y.id);
  });

  std::vector<Committed> committed;
  for (uint32_t root : roots) {
    const std::vector<uint32_t> group = group_of(root);
    const int64_t own_size = intervals[root].size;
    int64_t max_size = 0;
    for (uint32_t g : group) max_size = std::max(max_size, intervals[g].size);

    // Free chunks: start -> end. Subtract every committed chunk that is
    // live at any time this group is live.
    std::map<int64_t, int64_t> free = {{0, kInfinity}};
    for (const Committed& used : committed) {
      bool overlaps = false;
      for (uint32_t g : group) {
        if (used.start <= intervals[g].end && intervals[g].start <= used.end) {
          overlaps = true;
          break;
        }
      }
      if (!overlaps) continue;
      const int64_t used_end = used.offset + used.size;
      auto it = free.upper_bound(used.offset);
      if (it != free.begin()) --it;
      std::vector<std::pair<int64_t, int64_t>> keep;
      while (it != free.end() && it->first < used_end) {
        const int64_t chunk_start = it->first, chunk_end = it->second;
        if (chunk_end <= used.offset) {
          ++it;
          continue;
        }
        // The piece before the used chunk survives only if the buffer fits.
        if (chunk_start < used.offset && used.offset - chunk_start >= own_size) {
          keep.emplace_back(chunk_start, used.offset);
        }
        // The piece after starts aligned and must hold the largest colocation.
        const int64_t after = RoundUpTo(used_end, alignment);
        if (chunk_end > used_end && chunk_end - after >= max_size) {
          keep.emplace_back(after, chunk_end);
        }
        it = free.erase(it);
      }
      for (const auto& piece : keep) free[piece.first] = piece.second;
    }

    // Best fit: the smallest free chunk that holds the largest colocation.
    int64_t best_offset = -1, best_size = std::numeric_limits<int64_t>::max();
    for (const auto& [chunk_start, chunk_end] : free) {
      const int64_t offset = RoundUpTo(chunk_start, alignment);
      if (offset + max_size > chunk_end) continue;
      const int64_t size = chunk_end - chunk_start;
      if (size < best_size) {
        best_size = size;
        best_offset = offset;
      }
    }
    for (uint32_t g : group) {
      const Interval& in = intervals[g];
      committed.push_back({in.start, in.end, best_offset, in.size});
      result.offsets[g] = best_offset;
      result.heap_size = std::max(result.heap_size, best_offset + in.size);
    }
  }
  return result;
}

HeapResult BestHeap(const std::vector<HeapEvent>& events, uint32_t id_count,
                    int64_t alignment) {
  HeapResult spatial =
      GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kSpatial);
  HeapResult temporal =
      GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kTemporal);
  return temporal.heap_size < spatial.heap_size ? std::move(temporal) : std::move(spatial);
}

int64_t LiveBytesPeak(const std::vector<HeapEvent>& events, uint32_t id_count) {
  std::vector<uint32_t> root(id_count);
  std::vector<int64_t> references(id_count, 0);
  int64_t current = 0, peak = 0;
  for (const HeapEvent& e : events) {
    switch (e.kind) {
      case HeapEvent::kAlloc:
        root[e.buffer] = e.buffer;
        references[e.buffer] = 1;
        current += e.size;
        break;
      case HeapEvent::kShareWith: {
        const uint32_t r = root[e.share_with];
        root[e.buffer] = r;
        if (references[r]++ == 0) current += e.size;
        break;
      }
      case HeapEvent::kFree:
        if (--references[root[e.buffer]] == 0) current -= e.size;
        break;
    }
    peak = std::max(peak, current);
  }
  return peak;
}

}  // namespace hlomem::analysis
