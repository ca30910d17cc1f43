#include "lib/analysis/heap_simulator.h"

#include <algorithm>
#include <limits>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lib/base/bytes.h"
#include "lib/base/csr.h"

namespace hlomem::analysis {
namespace {

constexpr uint32_t kNoBuffer = 0xffffffffu;

// One buffer's lifetime in event-counter time (not schedule steps): XLA's
// best-fit heap ticks a counter on every alloc, share-with and free.
struct Interval {
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = -1;
  bool needs_allocation = false;
  bool present = false;
  bool first = false;
};

using Run = std::pair<int64_t, int64_t>;  // [offset, end) of the heap

// Byte runs per node of a segment tree, each node's kept sorted, apart and
// not touching: the union of the chunks put there. The best fit depends only
// on the union of the chunks live with a buffer, and chunks live at nearby
// times union into far fewer runs (about 300 chunks into 14 on a training
// step), so the trees below hand out merged runs instead of chunks.
class NodeRuns {
 public:
  explicit NodeRuns(size_t nodes) : slot_(nodes, 0) {}

  void Merge(size_t node, Run run) {
    if (slot_[node] == 0) {
      runs_.emplace_back();
      slot_[node] = static_cast<uint32_t>(runs_.size());
    }
    std::vector<Run>& runs = runs_[slot_[node] - 1];
    // The first run ending at or after the new one's offset (ends are sorted
    // as the offsets are), then every run the new one overlaps or touches.
    auto first = std::lower_bound(runs.begin(), runs.end(), run.first,
                                  [](const Run& r, int64_t offset) { return r.second < offset; });
    auto last = first;
    while (last != runs.end() && last->first <= run.second) ++last;
    if (first == last) {
      runs.insert(first, run);
      return;
    }
    first->first = std::min(first->first, run.first);
    first->second = std::max(std::prev(last)->second, run.second);
    runs.erase(first + 1, last);
  }

  void AppendTo(size_t node, std::vector<Run>* out) const {
    if (slot_[node] == 0) return;
    const std::vector<Run>& runs = runs_[slot_[node] - 1];
    out->insert(out->end(), runs.begin(), runs.end());
  }

 private:
  std::vector<uint32_t> slot_;  // node -> 1 + its index in runs_, 0 while it has none
  std::vector<std::vector<Run>> runs_;
};

// The runs of the placed chunks live at each placement's start time: a
// segment tree over those times, a chunk's run merged into the nodes that
// make up its lifetime; the runs live at a time are those on its
// leaf-to-root path.
class LiveRuns {
 public:
  // `times`: every time a query may ask about, sorted, unique.
  explicit LiveRuns(std::vector<int64_t> times)
      : times_(std::move(times)), nodes_(2 * times_.size()) {}

  // Notes `run` as taken from `start` to `end`, both included.
  void Add(int64_t start, int64_t end, Run run) {
    size_t lo = Leaf(std::lower_bound(times_.begin(), times_.end(), start));
    size_t hi = Leaf(std::upper_bound(times_.begin(), times_.end(), end));
    for (; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) nodes_.Merge(lo++, run);
      if (hi & 1) nodes_.Merge(--hi, run);
    }
  }

  // Appends the runs taken at `time`, one of the constructor's times.
  void AppendAt(int64_t time, std::vector<Run>* out) const {
    for (size_t node = Leaf(std::lower_bound(times_.begin(), times_.end(), time)); node >= 1;
         node /= 2) {
      nodes_.AppendTo(node, out);
    }
  }

 private:
  size_t Leaf(std::vector<int64_t>::const_iterator at) const {
    return static_cast<size_t>(at - times_.begin()) + times_.size();
  }

  std::vector<int64_t> times_;
  NodeRuns nodes_;
};

// The chunks placed so far, searchable by lifetime: a segment tree over
// every buffer that will ever be placed, ordered by start time, holding in
// each subtree the latest end among its placed buffers. Finding the k
// placed chunks live during [start, end] then costs O((k + 1) log n), not a
// scan of every placed chunk (XLA keeps an interval tree for the same
// reason). `End` holds a lifetime's end: int32_t when every event time fits
// (every real module: fewer than 2^31 heap events), else int64_t.
template <typename End>
class PlacedChunks {
 public:
  using Chunk = std::pair<int64_t, int64_t>;  // [offset, end rounded up to the alignment)

  // `by_start`: every buffer that will be placed; sorted here into leaf order.
  PlacedChunks(const std::vector<Interval>& intervals, std::vector<uint32_t> by_start,
               int64_t alignment)
      : intervals_(intervals),
        alignment_(alignment),
        group_count_((by_start.size() + kGroup - 1) / kGroup),
        started_(2 * group_count_) {
    std::sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(intervals[a].start, a) < std::make_pair(intervals[b].start, b);
    });
    const size_t blocks = (by_start.size() + kBlock - 1) / kBlock;
    while (tree_leaves_ < blocks) tree_leaves_ *= 2;
    max_end_.assign(2 * tree_leaves_, kEmpty);
    leaf_of_.assign(intervals.size(), 0);
    starts_.reserve(by_start.size());
    for (size_t k = 0; k < by_start.size(); ++k) {
      leaf_of_[by_start[k]] = static_cast<uint32_t>(k);
      starts_.push_back(intervals[by_start[k]].start);
    }
    // Whole blocks, so a block's ends load as one run.
    ends_.assign(blocks * kBlock, std::numeric_limits<End>::min());
    chunk_.assign(by_start.size(), Chunk{0, 0});
    stamp_.assign(by_start.size(), 0);
  }

  void Place(uint32_t id, int64_t offset) {
    const uint32_t leaf = leaf_of_[id];
    const int64_t end = intervals_[id].end;
    // What queries report, worked out once here rather than per report.
    chunk_[leaf] = {offset, RoundUpTo(offset + intervals_[id].size, alignment_)};
    ends_[leaf] = static_cast<End>(end);
    for (size_t node = group_count_ + leaf / kGroup; node >= 1; node /= 2) {
      started_.Merge(node, chunk_[leaf]);
    }
    // Ends are only ever added, so a subtree's latest end only grows.
    for (size_t node = tree_leaves_ + leaf / kBlock; node >= 1 && max_end_[node] < end; node /= 2) {
      max_end_[node] = end;
    }
  }

  // Appends the chunk of every placed buffer live at some time in
  // [start, end]. With `dedupe`, a chunk already reported under the same
  // `query` (> 0, new per placement) is not reported again: a group's
  // members can overlap the same chunk.
  void AppendLive(int64_t start, int64_t end, uint32_t query, bool dedupe,
                  std::vector<Chunk>* out) {
    const size_t limit = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), end) - starts_.begin());
    if (limit == 0 || max_end_[1] < start) return;
    const size_t block_limit = (limit + kBlock - 1) / kBlock;
    // Depth-first over the subtrees that may hold a live chunk, iteratively:
    // this loop is most of a large module's heap time.
    struct Pending {
      size_t node, lo, width;
    };
    Pending stack[64];
    size_t depth = 0;
    stack[depth++] = {1, 0, tree_leaves_};
    while (depth > 0) {
      const Pending p = stack[--depth];
      if (p.width == 1) {
        const size_t first = p.lo * kBlock, last = std::min(first + kBlock, limit);
        // The block's live leaves as a bit mask, then only those visited: a
        // branch per leaf was mispredicted on most live ones.
        for (uint32_t live = LiveMask(first, last - first, start); live != 0; live &= live - 1) {
          const size_t leaf = first + static_cast<size_t>(__builtin_ctz(live));
          if (dedupe) {
            if (stamp_[leaf] == query) continue;
            stamp_[leaf] = query;
          }
          out->push_back(chunk_[leaf]);
        }
        continue;
      }
      const size_t half = p.width / 2;
      const size_t left = 2 * p.node, right = left + 1;
      // Right pushed first so the left subtree comes out first.
      if (p.lo + half < block_limit && max_end_[right] >= start) {
        stack[depth++] = {right, p.lo + half, half};
      }
      if (max_end_[left] >= start) stack[depth++] = {left, p.lo, half};
    }
  }

  // Appends the chunk of every placed buffer that starts in [start, end],
  // as AppendLive does (all of them are live then).
  void AppendStartingIn(int64_t start, int64_t end, uint32_t query, bool dedupe,
                        std::vector<Chunk>* out) {
    const size_t first = static_cast<size_t>(
        std::lower_bound(starts_.begin(), starts_.end(), start) - starts_.begin());
    const size_t limit = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), end) - starts_.begin());
    // Whole groups inside the range give their merged runs; the leaves
    // before the first and after the last are read one by one.
    size_t group = (first + kGroup - 1) / kGroup, group_end = limit / kGroup;
    if (group >= group_end) {
      AppendPlaced(first, limit, query, dedupe, out);
      return;
    }
    AppendPlaced(first, group * kGroup, query, dedupe, out);
    AppendPlaced(group_end * kGroup, limit, query, dedupe, out);
    for (group += group_count_, group_end += group_count_; group < group_end;
         group /= 2, group_end /= 2) {
      if (group & 1) started_.AppendTo(group++, out);
      if (group_end & 1) started_.AppendTo(--group_end, out);
    }
  }

 private:
  void AppendPlaced(size_t first, size_t limit, uint32_t query, bool dedupe,
                    std::vector<Chunk>* out) {
    for (size_t leaf = first; leaf < limit; ++leaf) {
      if (ends_[leaf] == std::numeric_limits<End>::min()) continue;  // not placed yet
      if (dedupe) {
        if (stamp_[leaf] == query) continue;
        stamp_[leaf] = query;
      }
      out->push_back(chunk_[leaf]);
    }
  }

  static constexpr int64_t kEmpty = std::numeric_limits<int64_t>::min();
  // Leaves per group of the started_ tree: a range of starts shorter than
  // two groups is read leaf by leaf.
  static constexpr size_t kGroup = 64;
  // Leaves per tree leaf: scanning a few neighbours is cheaper than
  // descending to each one. 32, one bit each in a mask.
  static constexpr size_t kBlock = 32;

  // Bit k set when leaf first + k (k < count) is placed and ends at or
  // after `start`. 32-bit ends are compared four at a time.
  uint32_t LiveMask(size_t first, size_t count, int64_t start) const {
    const End* ends = ends_.data() + first;
#ifdef __SSE2__
    if constexpr (std::is_same_v<End, int32_t>) {
      uint32_t mask = 0;
      const __m128i after = _mm_set1_epi32(static_cast<int32_t>(start - 1));
      for (size_t k = 0; k < kBlock; k += 4) {
        const __m128i four = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ends + k));
        const int bits = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(four, after)));
        mask |= static_cast<uint32_t>(bits) << k;
      }
      return count < kBlock ? mask & ((uint32_t{1} << count) - 1) : mask;
    }
#endif
    // One end at a time, without a branch per leaf.
    uint32_t mask = 0;
    for (size_t k = 0; k < count; ++k) mask |= static_cast<uint32_t>(ends[k] >= start) << k;
    return mask;
  }

  const std::vector<Interval>& intervals_;
  const int64_t alignment_;
  std::vector<int64_t> starts_;     // leaf -> start time
  std::vector<uint32_t> leaf_of_;   // buffer id -> leaf
  std::vector<End> ends_;           // leaf -> end once placed, else End's minimum
  std::vector<Chunk> chunk_;        // leaf -> its chunk once placed
  std::vector<uint32_t> stamp_;     // leaf -> last query that reported it
  std::vector<int64_t> max_end_;    // tree node -> latest end placed below
  size_t tree_leaves_ = 1;
  // Over groups of kGroup leaves: the runs of the chunks placed in a range
  // of groups, for the chunks that start inside a long lifetime.
  size_t group_count_;
  NodeRuns started_;
};

// Sorts (offset, end) chunks by offset (>= 0), equal offsets in any order.
void SortByOffset(std::vector<std::pair<int64_t, int64_t>>* chunks,
                  std::vector<std::pair<int64_t, int64_t>>* scratch) {
  constexpr size_t kRadixFrom = 64;  // below this, comparison sorting wins
  if (chunks->size() < kRadixFrom) {
    std::sort(chunks->begin(), chunks->end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return;
  }
  // Offsets share their alignment's low zero bits; skip them.
  uint64_t any_bits = 0, largest = 0;
  for (const auto& chunk : *chunks) {
    const auto offset = static_cast<uint64_t>(chunk.first);
    any_bits |= offset;
    largest = std::max(largest, offset);
  }
  const int shift = any_bits == 0 ? 0 : __builtin_ctzll(any_bits);
  scratch->resize(chunks->size());
  for (int bit = shift; bit < 64 && (largest >> bit) != 0; bit += 8) {
    size_t count[257] = {};
    for (const auto& chunk : *chunks) ++count[((static_cast<uint64_t>(chunk.first) >> bit) & 0xff) + 1];
    for (size_t d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (const auto& chunk : *chunks) {
      (*scratch)[count[(static_cast<uint64_t>(chunk.first) >> bit) & 0xff]++] = chunk;
    }
    chunks->swap(*scratch);
  }
}

// The best fit among the free space left by `used` chunks: the smallest
// gap that holds `size` bytes, the lowest such gap on ties, else the space
// above every chunk. Chunk ends are already aligned, so every gap starts
// aligned. This equals subtracting the chunks one by one from a free list
// and keeping only pieces that can still hold the buffer, in any order:
// a gap that fits survives every subtraction.
//
// Sorting the chunks is most of a big module's heap time; only the offsets
// need ordering (chunks at one offset can come in any order: after the
// first, their gaps are negative), so a few-pass radix sort on the offset
// does it.
int64_t BestFit(std::vector<std::pair<int64_t, int64_t>>* used, int64_t size,
                std::vector<std::pair<int64_t, int64_t>>* scratch) {
  SortByOffset(used, scratch);
  int64_t free_from = 0;
  int64_t best_offset = -1, best_size = std::numeric_limits<int64_t>::max();
  for (const auto& [offset, end] : *used) {
    const int64_t gap = offset - free_from;
    if (gap >= size && gap < best_size) {
      best_size = gap;
      best_offset = free_from;
    }
    free_from = std::max(free_from, end);
  }
  return best_offset >= 0 ? best_offset : free_from;
}

// Places each root's group, in `roots` order, at the best fit among the
// chunks already placed that are live while any member is.
//
// A group whose members sit at different distances from the root (kPlaceWith)
// is placed by the root's offset X instead: member g at X + d_g needs its
// chunk free of every chunk live with it, which rules out the X in
// [offset - d_g - size_g + alignment, end - d_g); the best fit is then the
// smallest gap of allowed X (with every d_g 0 and one size, the same
// choice as the smallest gap of memory).
template <typename End>
void PlaceGroups(const std::vector<Interval>& intervals, const std::vector<uint32_t>& roots,
                 const Csr<uint32_t>& groups, const std::vector<int64_t>& from_root,
                 int64_t alignment, HeapResult* result) {
  std::vector<uint32_t> members;
  for (uint32_t r : roots) {
    const auto group = groups.row(r);
    members.insert(members.end(), group.begin(), group.end());
  }
  std::vector<int64_t> starts;
  starts.reserve(members.size());
  for (uint32_t g : members) starts.push_back(intervals[g].start);
  std::sort(starts.begin(), starts.end());
  LiveRuns live_runs(std::move(starts));
  PlacedChunks<End> placed(intervals, std::move(members), alignment);
  auto place = [&](uint32_t g, int64_t offset) {
    placed.Place(g, offset);
    live_runs.Add(intervals[g].start, intervals[g].end,
                  {offset, RoundUpTo(offset + intervals[g].size, alignment)});
    result->offsets[g] = offset;
    result->heap_size = std::max(result->heap_size, offset + intervals[g].size);
  };
  std::vector<std::pair<int64_t, int64_t>> used, scratch, live;
  uint32_t query = 0;
  for (uint32_t root : roots) {
    const auto group = groups.row(root);
    int64_t lowest = 0;
    for (uint32_t g : group) lowest = std::min(lowest, from_root[g]);
    bool displaced = lowest < 0;
    for (uint32_t g : group) displaced |= from_root[g] != 0;
    if (displaced) {
      // X = Y - lowest, Y >= 0 keeps every member at or above 0.
      used.clear();
      for (uint32_t g : group) {
        live.clear();
        placed.AppendLive(intervals[g].start, intervals[g].end, 0, false, &live);
        const int64_t d = from_root[g] + (-lowest);
        const int64_t size = RoundUpTo(intervals[g].size, alignment);
        for (const auto& [offset, end] : live) {
          const int64_t from = std::max<int64_t>(0, offset - d - size + alignment);
          const int64_t to = end - d;
          if (to > from) used.push_back({from, to});
        }
      }
      const int64_t x = BestFit(&used, alignment, &scratch) - lowest;
      for (uint32_t g : group) place(g, x + from_root[g]);
      continue;
    }
    int64_t max_size = 0;
    used.clear();
    ++query;
    // A chunk live during [start, end] either was live at `start` or
    // started inside.
    for (uint32_t g : group) {
      max_size = std::max(max_size, intervals[g].size);
      live_runs.AppendAt(intervals[g].start, &used);
      placed.AppendStartingIn(intervals[g].start, intervals[g].end, query, group.size() > 1,
                              &used);
    }
    const int64_t offset = BestFit(&used, max_size, &scratch);
    for (uint32_t g : group) place(g, offset);
  }
}

// How lifetimes are kept while placing: in 32 bits when the event count
// allows (kFitting), or in 64 bits whatever it is (kWide, for tests).
enum class EventTimes { kFitting, kWide };

HeapResult LayOut(const std::vector<HeapEvent>& events, uint32_t id_count, int64_t alignment,
                  HeapOrder order, EventTimes event_times) {
  HeapResult result;
  result.offsets.assign(id_count, -1);
  std::vector<Interval> intervals(id_count);
  std::vector<uint32_t> share_with(id_count, kNoBuffer);
  std::vector<int64_t> place_offset(id_count, 0);
  int64_t counter = 0;
  for (const HeapEvent& e : events) {
    Interval& in = intervals[e.buffer];
    switch (e.kind) {
      case HeapEvent::kAlloc:
      case HeapEvent::kShareWith:
      case HeapEvent::kPlaceWith:
        in.size = e.size;
        in.present = true;
        if (e.size == 0) {
          result.offsets[e.buffer] = 0;  // nothing to place, no tick
          break;
        }
        in.start = counter++;
        in.needs_allocation = e.kind == HeapEvent::kAlloc;
        in.first = e.kind == HeapEvent::kAlloc && e.first;
        if (e.kind != HeapEvent::kAlloc) share_with[e.buffer] = e.share_with;
        if (e.kind == HeapEvent::kPlaceWith) place_offset[e.buffer] = e.offset;
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

  // Who shares whose chunk, in the order they joined.
  const Csr<uint32_t> colocations = Csr<uint32_t>::Build(id_count, [&](auto emit) {
    for (const HeapEvent& e : events) {
      if (e.kind != HeapEvent::kAlloc && e.kind != HeapEvent::kFree &&
          share_with[e.buffer] == e.share_with &&
          intervals[e.buffer].size > 0) {
        emit(e.share_with, e.buffer);
      }
    }
  });
  std::vector<uint32_t> roots;
  for (uint32_t id = 0; id < id_count; ++id) {
    const Interval& in = intervals[id];
    if (in.present && in.size > 0 && in.needs_allocation) roots.push_back(id);
  }
  // Each root's group, once: the root, then every buffer sharing its chunk,
  // transitively, breadth first; each member's distance from the root's
  // offset (0 but for kPlaceWith).
  std::vector<int64_t> from_root(id_count, 0);
  const Csr<uint32_t> groups = Csr<uint32_t>::Build(id_count, [&](auto emit) {
    std::vector<uint32_t> group;
    for (uint32_t root : roots) {
      group.assign(1, root);
      for (size_t k = 0; k < group.size(); ++k) {
        for (uint32_t c : colocations.row(group[k])) {
          from_root[c] = from_root[group[k]] + place_offset[c];
          group.push_back(c);
        }
      }
      for (uint32_t g : group) emit(root, g);
    }
  });

  std::vector<int64_t> max_end;
  if (order == HeapOrder::kTemporal) {
    max_end.assign(id_count, 0);
    for (uint32_t r : roots) {
      for (uint32_t g : groups.row(r)) max_end[r] = std::max(max_end[r], intervals[g].end);
    }
  }
  std::sort(roots.begin(), roots.end(), [&](uint32_t a, uint32_t b) {
    const Interval& x = intervals[a];
    const Interval& y = intervals[b];
    if (x.first != y.first) return x.first;
    if (order == HeapOrder::kSpatial) {
      return std::make_tuple(-x.size, x.start - x.end, a) <
             std::make_tuple(-y.size, y.start - y.end, b);
    }
    if (order == HeapOrder::kAllocation) return x.start < y.start;  // unique ticks
    return std::make_tuple(x.start - max_end[a], -x.size, a) <
           std::make_tuple(y.start - max_end[b], -y.size, b);
  });

  if (event_times == EventTimes::kFitting && counter <= std::numeric_limits<int32_t>::max()) {
    PlaceGroups<int32_t>(intervals, roots, groups, from_root, alignment, &result);
  } else {
    PlaceGroups<int64_t>(intervals, roots, groups, from_root, alignment, &result);
  }
  return result;
}

}  // namespace

HeapResult GlobalDecreasingSizeBestFit(const std::vector<HeapEvent>& events,
                                       uint32_t id_count, int64_t alignment,
                                       HeapOrder order) {
  return LayOut(events, id_count, alignment, order, EventTimes::kFitting);
}

namespace heap_internal {
HeapResult GlobalDecreasingSizeBestFitWide(const std::vector<HeapEvent>& events,
                                           uint32_t id_count, int64_t alignment,
                                           HeapOrder order) {
  return LayOut(events, id_count, alignment, order, EventTimes::kWide);
}
}  // namespace heap_internal

HeapResult BestHeap(const std::vector<HeapEvent>& events, uint32_t id_count, int64_t alignment,
                    target::HeapOrders orders) {
  if (orders == target::HeapOrders::kTemporalOnly) {
    return GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kTemporal);
  }
  if (orders == target::HeapOrders::kAllocationOnly) {
    return GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kAllocation);
  }
  if (orders == target::HeapOrders::kSmallestOfAll) {
    HeapResult best = BestHeap(events, id_count, alignment, target::HeapOrders::kSmallerOfBoth);
    HeapResult allocation =
        GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kAllocation);
    return allocation.heap_size <= best.heap_size ? std::move(allocation) : std::move(best);
  }
  // The two orders are independent; lay them out side by side.
  HeapResult temporal;
  std::thread worker([&] {
    temporal = GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kTemporal);
  });
  HeapResult spatial =
      GlobalDecreasingSizeBestFit(events, id_count, alignment, HeapOrder::kSpatial);
  worker.join();
  return temporal.heap_size < spatial.heap_size ? std::move(temporal) : std::move(spatial);
}

int64_t LiveBytesPeak(const std::vector<HeapEvent>& events, uint32_t id_count) {
  std::vector<uint32_t> root(id_count);
  std::vector<int64_t> references(id_count, 0);
  int64_t current = 0, peak = 0;
  for (const HeapEvent& e : events) {
    switch (e.kind) {
      case HeapEvent::kAlloc:
      case HeapEvent::kPlaceWith:  // bytes of its own, only placed by another's
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

int64_t IntervalsPeak(std::vector<LiveInterval> intervals) {
  // Starts sort before ends at the same step, so meeting intervals overlap.
  std::vector<std::pair<int64_t, int64_t>> steps;  // (2 * step + is_end, bytes)
  steps.reserve(2 * intervals.size());
  for (const LiveInterval& i : intervals) {
    steps.push_back({2 * i.start, i.size});
    steps.push_back({2 * i.end + 1, -i.size});
  }
  std::sort(steps.begin(), steps.end());
  int64_t current = 0, peak = 0;
  for (const auto& [at, bytes] : steps) {
    current += bytes;
    peak = std::max(peak, current);
  }
  return peak;
}

}  // namespace hlomem::analysis
