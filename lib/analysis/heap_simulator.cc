#include "lib/analysis/heap_simulator.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "lib/base/allocator.h"
#include "lib/base/bytes.h"
#include "lib/base/csr.h"
#include "lib/base/parallel.h"
#include "lib/base/sort_by_key.h"

namespace hlomem::analysis {
namespace {

constexpr uint32_t kNoBuffer = 0xffffffffu;
// Events are most of a big module's heap input; the schedule step rode in
// padding (see HeapEvent::step).
static_assert(sizeof(HeapEvent) <= 40);

// One buffer's lifetime in event-counter time (not schedule steps): XLA's
// best-fit heap ticks a counter on every alloc, share-with and free.
// 24 bytes: ticks fit 32 bits (two per buffer at most, and a module that
// fits in memory has far fewer than 2^30 buffers).
struct Interval {
  int64_t size = 0;
  int32_t start = 0;
  int32_t end = -1;
  bool needs_allocation = false;
  bool present = false;
  bool first = false;
};
static_assert(sizeof(Interval) == 24);

using Run = std::pair<int64_t, int64_t>;  // [offset, end) of the heap

// Among runs sorted by offset, apart and not touching, [begin, end): the
// ones `run` overlaps or touches, as [first, last) (empty where it would
// go). Ends sort as the offsets do.
template <typename It>
std::pair<It, It> RunsTouching(It begin, It end, Run run) {
  It first = std::lower_bound(begin, end, run.first,
                              [](const Run& r, int64_t offset) { return r.second < offset; });
  It last = first;
  while (last != end && last->first <= run.second) ++last;
  return {first, last};
}

// Widens *first, of the non-empty [first, last) RunsTouching found, to
// cover all of them and `run`; the caller drops (first, last).
template <typename It>
void CoverWithFirst(It first, It last, Run run) {
  first->first = std::min(first->first, run.first);
  first->second = std::max(std::prev(last)->second, run.second);
}

// The union of runs added as sorted lists (a tree node's) and one at a
// time, kept sorted and coalesced as it grows: the lists a placement reads
// hold about 75 runs whose union is about 14, so merging each list into
// the union costs less than sorting them all.
class RunUnion {
 public:
  void Clear() { runs_.clear(); }
  // [first, last): sorted by offset, overlapping or not; two runs or more
  // (a tree node holding one keeps it inline and adds it with AddOne).
  void AddSorted(const Run* first, const Run* last) {
    merged_.clear();
    auto from_runs = runs_.cbegin();
    while (from_runs != runs_.cend() || first != last) {
      const bool take_list =
          from_runs == runs_.cend() || (first != last && first->first < from_runs->first);
      const Run next = take_list ? *first++ : *from_runs++;
      if (!merged_.empty() && next.first <= merged_.back().second) {
        merged_.back().second = std::max(merged_.back().second, next.second);
      } else {
        merged_.push_back(next);
      }
    }
    runs_.swap(merged_);
  }
  void AddOne(Run run) { Insert(run); }
  // The union, sorted by offset, runs apart and not touching.
  const std::vector<Run>& runs() const { return runs_; }

 private:
  // Merges one run in place: with the runs it overlaps or touches, else
  // inserted where its offset sorts.
  void Insert(Run run) {
    const auto [first, last] = RunsTouching(runs_.begin(), runs_.end(), run);
    if (first == last) {
      runs_.insert(first, run);
      return;
    }
    CoverWithFirst(first, last, run);
    runs_.erase(first + 1, last);
  }

  std::vector<Run> runs_, merged_;
};

// Blocks of 2^k runs carved from 1 MiB pages, each named by a 32-bit
// handle (page << 16 | index), freed blocks kept per size for reuse. The
// trees below hold a block per node: one allocation each from the C
// library cost a million calls and a pointer chase per node read.
class RunPool {
 public:
  // A block of 2^`size_class` runs.
  uint32_t Allocate(int size_class) {
    std::vector<uint32_t>& reusable = free_[size_class];
    if (!reusable.empty()) {
      const uint32_t handle = reusable.back();
      reusable.pop_back();
      return handle;
    }
    const size_t runs = size_t{1} << size_class;
    if (runs > kPageRuns - used_in_last_) {
      pages_.push_back(std::make_unique<Run[]>(std::max(runs, kPageRuns)));
      used_in_last_ = 0;
    }
    const uint32_t handle = static_cast<uint32_t>((pages_.size() - 1) << kPageBits | used_in_last_);
    used_in_last_ += runs;  // a block larger than a page has its own
    return handle;
  }
  void Free(uint32_t handle, int size_class) { free_[size_class].push_back(handle); }
  Run* at(uint32_t handle) const {
    return pages_[handle >> kPageBits].get() + (handle & (kPageRuns - 1));
  }

 private:
  static constexpr int kPageBits = 16;
  static constexpr size_t kPageRuns = size_t{1} << kPageBits;
  std::vector<std::unique_ptr<Run[]>> pages_;
  size_t used_in_last_ = kPageRuns;
  std::vector<uint32_t> free_[64];
};

// Byte runs per node of a segment tree, each node's kept sorted, apart and
// not touching: the union of the chunks put there. The best fit depends only
// on the union of the chunks live with a buffer, and chunks live at nearby
// times union into far fewer runs (about 300 chunks into 14 on a training
// step), so the trees below hand out merged runs instead of chunks.
//
// Most nodes a query reads hold nothing (60% on a training step): a bit per
// node, small enough to stay in cache, answers those without reading the
// node. Of the nodes that hold runs, most hold one (59% of the 64x gemma3
// step's), which the node keeps itself: reading it is then one cache miss,
// not two.
class NodeRuns {
 public:
  explicit NodeRuns(size_t nodes) : nodes_(nodes), held_((nodes + 63) / 64, 0) {}

  void Merge(size_t node, Run run) {
    Node& n = nodes_[node];
    if (!Held(node)) {
      n = {run.first, run.second};
      MarkHeld(node);
      return;
    }
    if (n.first != kInBlock) {
      if (run.first <= n.second && n.first <= run.second) {
        n.first = std::min(n.first, run.first);
        n.second = std::max(n.second, run.second);
        return;
      }
      const uint32_t block = pool_.Allocate(1);
      Run* runs = pool_.at(block);
      const Run only{n.first, n.second};
      runs[0] = run.first < only.first ? run : only;
      runs[1] = run.first < only.first ? only : run;
      n = {kInBlock, InBlock(2, block)};
      return;
    }
    uint32_t count = Count(n), block = Block(n);
    Run* runs = pool_.at(block);
    Run* const end = runs + count;
    const auto [first, last] = RunsTouching(runs, end, run);
    if (first == last) {
      const size_t at = static_cast<size_t>(first - runs);
      const int size_class = BlockClass(count);
      if (count == (uint32_t{1} << size_class)) {
        const uint32_t grown = pool_.Allocate(size_class + 1);
        Run* moved = pool_.at(grown);
        std::copy(runs, end, moved);
        pool_.Free(block, size_class);
        block = grown;
        runs = moved;
      }
      std::copy_backward(runs + at, runs + count, runs + count + 1);
      runs[at] = run;
      n.second = InBlock(count + 1, block);
      return;
    }
    CoverWithFirst(first, last, run);
    std::copy(last, end, first + 1);
    const uint32_t left = count - static_cast<uint32_t>(last - first - 1);
    if (left == 1) {
      // One run again: kept inline. Every block held 2 runs or more once,
      // so it goes back as a block of 2.
      n = {runs[0].first, runs[0].second};
      pool_.Free(block, 1);
      return;
    }
    n.second = InBlock(left, block);
  }

  // Replaces the runs of `node` with the union of those of nodes `a` and
  // `b`.
  void SetToUnion(size_t node, size_t a, size_t b) {
    union_.Clear();
    AddTo(a, &union_);
    AddTo(b, &union_);
    const std::vector<Run>& runs = union_.runs();
    if (runs.empty()) return;  // nor did the node have any: children only gain runs
    Node& n = nodes_[node];
    const bool had_block = Held(node) && n.first == kInBlock;
    MarkHeld(node);
    if (runs.size() == 1) {
      if (had_block) pool_.Free(Block(n), BlockClass(Count(n)));
      n = {runs[0].first, runs[0].second};
      return;
    }
    uint32_t block = had_block ? Block(n) : 0;
    const size_t capacity = had_block ? size_t{1} << BlockClass(Count(n)) : 0;
    if (runs.size() > capacity) {
      if (had_block) pool_.Free(block, BlockClass(Count(n)));
      block = pool_.Allocate(BlockClass(static_cast<uint32_t>(runs.size())));
    }
    std::copy(runs.begin(), runs.end(), pool_.at(block));
    n = {kInBlock, InBlock(static_cast<uint32_t>(runs.size()), block)};
  }

  void PrefetchNode(size_t node) const { __builtin_prefetch(&nodes_[node]); }

  void AddTo(size_t node, RunUnion* out) const {
    if (!Held(node)) return;
    const Node& n = nodes_[node];
    if (n.first != kInBlock) {
      out->AddOne({n.first, n.second});
      return;
    }
    const Run* runs = pool_.at(Block(n));
    out->AddSorted(runs, runs + Count(n));
  }

 private:
  // 16 bytes: a node holding one run holds it here, [first, second); a
  // node holding more holds kInBlock, then its count and its block in
  // pool_ (InBlock). Whether it holds anything is its bit in held_.
  struct Node {
    int64_t first = 0;
    int64_t second = 0;
  };
  static constexpr int64_t kInBlock = -1;  // offsets are >= 0
  static int64_t InBlock(uint32_t count, uint32_t block) {
    return static_cast<int64_t>(uint64_t{count} << 32 | block);
  }
  static uint32_t Count(const Node& n) {
    return static_cast<uint32_t>(static_cast<uint64_t>(n.second) >> 32);
  }
  static uint32_t Block(const Node& n) { return static_cast<uint32_t>(n.second); }
  bool Held(size_t node) const { return (held_[node / 64] >> (node % 64) & 1) != 0; }
  void MarkHeld(size_t node) { held_[node / 64] |= uint64_t{1} << (node % 64); }

  // The size class of the block holding `count` (> 0) runs: the smallest k
  // with 2^k >= count. A node that coalesced runs may hold a larger block;
  // it uses, and gives back, that block as this class.
  static int BlockClass(uint32_t count) {
    return count <= 1 ? 0 : 32 - __builtin_clz(count - 1);
  }
  std::vector<Node> nodes_;
  std::vector<uint64_t> held_;  // a bit per node: it holds runs
  RunPool pool_;
  RunUnion union_;  // SetToUnion's scratch
};

// Every buffer a layout can place (each root's group), ordered by start: a
// leaf each in PlacedChunks' trees. The same for every order, so worked
// out once per heap. A layout of some of the roots uses it too: leaves
// never placed add nothing to what a placement reads.
struct LeafOrder {
  std::vector<uint32_t> leaf_of;          // buffer id -> leaf
  std::vector<uint32_t> starting_by_end;  // leaf -> how many leaves start by its end
};

// Each buffer that takes bytes starts at a tick of its own (Prepare), so the
// leaves come out of one pass over the ticks, without sorting.
LeafOrder OrderLeaves(const std::vector<Interval>& intervals, const std::vector<uint32_t>& roots,
                      const Csr<uint32_t>& groups) {
  size_t ticks = 0;
  for (uint32_t r : roots) {
    for (uint32_t g : groups.row(r)) {
      ticks = std::max(ticks, static_cast<size_t>(intervals[g].end) + 1);
    }
  }
  std::vector<uint32_t> at_tick(ticks, kNoBuffer);
  for (uint32_t r : roots) {
    for (uint32_t g : groups.row(r)) at_tick[static_cast<size_t>(intervals[g].start)] = g;
  }
  LeafOrder leaves;
  leaves.leaf_of.assign(intervals.size(), 0);
  std::vector<uint32_t> started_before(ticks + 1);  // tick -> leaves starting before it
  std::vector<uint32_t> by_start;
  for (size_t t = 0; t < ticks; ++t) {
    started_before[t] = static_cast<uint32_t>(by_start.size());
    if (at_tick[t] == kNoBuffer) continue;
    leaves.leaf_of[at_tick[t]] = static_cast<uint32_t>(by_start.size());
    by_start.push_back(at_tick[t]);
  }
  started_before[ticks] = static_cast<uint32_t>(by_start.size());
  leaves.starting_by_end.reserve(by_start.size());
  for (uint32_t id : by_start) {
    leaves.starting_by_end.push_back(started_before[static_cast<size_t>(intervals[id].end) + 1]);
  }
  return leaves;
}

// The chunks placed so far, for the question each placement asks: the
// union of those live at some time in a buffer's [start, end]. A chunk live
// then was either live at `start` or started inside, so two segment trees
// of merged runs answer it, over every buffer that will be placed ordered
// by start (its leaf):
//  - live_, over the leaves: a placed chunk's run is merged into the nodes
//    that make up the leaves whose start its lifetime holds, so the runs on
//    a leaf's path to the root are those live at its start;
//  - started_, over groups of kGroup leaves: each node holds the runs of
//    the chunks placed in its groups, so a range of starts costs O(log n)
//    nodes, plus the few leaves at its two ends read one by one. Nodes
//    above the groups are brought up to date only when read.
// A placement then reads O(log n) merged runs where scanning the chunks
// read every one that overlaps it in time (as XLA's interval tree does):
// quadratic when a training step keeps all of its activations live.
class PlacedChunks {
 public:
  PlacedChunks(const std::vector<Interval>& intervals, const LeafOrder& leaves, int64_t alignment)
      : intervals_(intervals),
        alignment_(alignment),
        leaf_of_(leaves.leaf_of),
        starting_by_end_(leaves.starting_by_end),
        live_(2 * leaves.starting_by_end.size()),
        group_count_((leaves.starting_by_end.size() + kGroup - 1) / kGroup),
        started_(2 * group_count_),
        stale_(group_count_, false) {
    chunk_.assign(starting_by_end_.size(), kUnplaced);
  }

  // Ask the cache for what placing `id` reads first: its leaf number, then,
  // once that has arrived, the leaf's tables.
  void PrefetchLeafOf(uint32_t id) const { __builtin_prefetch(&leaf_of_[id]); }
  void PrefetchLeaf(uint32_t id) const {
    const size_t leaf = leaf_of_[id];
    __builtin_prefetch(&starting_by_end_[leaf]);
    __builtin_prefetch(&chunk_[leaf]);
    live_.PrefetchNode(leaf + chunk_.size());
  }

  void Place(uint32_t id, int64_t offset) {
    const size_t leaf = leaf_of_[id];
    const Run chunk{offset, RoundUpTo(offset + intervals_[id].size, alignment_)};
    chunk_[leaf] = chunk;
    const size_t n = chunk_.size();
    for (size_t lo = leaf + n, hi = starting_by_end_[leaf] + n; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) live_.Merge(lo++, chunk);
      if (hi & 1) live_.Merge(--hi, chunk);
    }
    // Only the group's own node takes the run now; its ancestors are
    // marked stale and rebuilt from their children when a query reads
    // them. Queries read a few hundred thousand nodes where the placements
    // would merge into 9 million (the 64x gemma3 step).
    const size_t group_node = group_count_ + leaf / kGroup;
    started_.Merge(group_node, chunk);
    for (size_t node = group_node / 2; node >= 1 && !stale_[node]; node /= 2) stale_[node] = true;
  }

  // Adds to `out` the chunks live at some time in the lifetime of `id`, a
  // buffer not placed yet. The members of a group can read the same chunk
  // twice; the union is the same.
  void AddLive(uint32_t id, RunUnion* out) {
    const size_t first = leaf_of_[id];
    for (size_t node = first + chunk_.size(); node >= 1; node /= 2) live_.AddTo(node, out);
    const size_t limit = starting_by_end_[first];
    size_t group = (first + kGroup - 1) / kGroup, group_end = limit / kGroup;
    if (group >= group_end) {
      AddPlaced(first, limit, out);
      return;
    }
    AddPlaced(first, group * kGroup, out);
    AddPlaced(group_end * kGroup, limit, out);
    for (group += group_count_, group_end += group_count_; group < group_end;
         group /= 2, group_end /= 2) {
      if (group & 1) AddStarted(group++, out);
      if (group_end & 1) AddStarted(--group_end, out);
    }
  }

 private:
  static constexpr Run kUnplaced{-1, -1};
  // Leaves per group of started_: a range of starts shorter than two groups
  // is read leaf by leaf.
  static constexpr size_t kGroup = 64;

  void AddStarted(size_t node, RunUnion* out) {
    Refresh(node);
    started_.AddTo(node, out);
  }

  // Brings a node of started_ up to date. A stale node's ancestors are all
  // stale too, so marking stops at the first one already marked.
  void Refresh(size_t node) {
    if (node >= group_count_ || !stale_[node]) return;
    Refresh(2 * node);
    Refresh(2 * node + 1);
    started_.SetToUnion(node, 2 * node, 2 * node + 1);
    stale_[node] = false;
  }

  void AddPlaced(size_t first, size_t limit, RunUnion* out) {
    for (size_t leaf = first; leaf < limit; ++leaf) {
      if (chunk_[leaf] != kUnplaced) out->AddOne(chunk_[leaf]);
    }
  }

  const std::vector<Interval>& intervals_;
  const int64_t alignment_;
  const std::vector<uint32_t>& leaf_of_;          // LeafOrder's
  const std::vector<uint32_t>& starting_by_end_;  // LeafOrder's
  std::vector<Run> chunk_;         // leaf -> its chunk once placed, else kUnplaced
  NodeRuns live_;
  size_t group_count_;
  NodeRuns started_;
  std::vector<bool> stale_;  // per node of started_ above the groups
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

// The best fit among the free space left by `used` chunks, sorted by
// offset: the smallest gap that holds `size` bytes, the lowest such gap on
// ties, else the space above every chunk. Chunk ends are already aligned,
// so every gap starts aligned. This equals subtracting the chunks one by
// one from a free list and keeping only pieces that can still hold the
// buffer, in any order: a gap that fits survives every subtraction. Chunks
// at one offset can come in any order (after the first, their gaps are
// negative), and a union of the chunks gives the same gaps.
int64_t BestFitSorted(const std::vector<Run>& used, int64_t size) {
  int64_t free_from = 0;
  int64_t best_offset = -1, best_size = std::numeric_limits<int64_t>::max();
  for (const auto& [offset, end] : used) {
    const int64_t gap = offset - free_from;
    if (gap >= size && gap < best_size) {
      best_size = gap;
      best_offset = free_from;
    }
    free_from = std::max(free_from, end);
  }
  return best_offset >= 0 ? best_offset : free_from;
}

// The same over chunks in any order, sorted first (a few-pass radix sort
// on the offset: only the offsets need ordering).
int64_t BestFit(std::vector<Run>* used, int64_t size, std::vector<Run>* scratch) {
  SortByOffset(used, scratch);
  return BestFitSorted(*used, size);
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
//
// With a `budget`, stops at the first root from `checked_from` on whose
// group ends above it and returns its index (the layout then partial);
// else returns roots.size().
size_t PlaceGroups(const std::vector<Interval>& intervals, const std::vector<uint32_t>& roots,
                   const Csr<uint32_t>& groups, const std::vector<int64_t>& from_root,
                   const LeafOrder& leaves, int64_t alignment, HeapResult* result,
                   int64_t budget = std::numeric_limits<int64_t>::max(),
                   size_t checked_from = 0) {
  PlacedChunks placed(intervals, leaves, alignment);
  auto place = [&](uint32_t g, int64_t offset) {
    placed.Place(g, offset);
    result->offsets[g] = offset;
    result->heap_size = std::max(result->heap_size, offset + intervals[g].size);
  };
  std::vector<Run> used, scratch;
  RunUnion live;
  // Whether the group placed at `x` (+ each member's distance) fits; only
  // asked under a budget.
  const bool budgeted = budget < std::numeric_limits<int64_t>::max();
  auto over_budget = [&](size_t k, const auto& group, int64_t x) {
    if (!budgeted || k < checked_from) return false;
    for (uint32_t g : group) {
      if (x + from_root[g] + intervals[g].size > budget) return true;
    }
    return false;
  };
  // Roots come by size or lifetime, not by id, so each one's tables were a
  // cache miss away: they are asked for some roots ahead (the spatial
  // order's layout of the 64x gemma3 step: 1.18 -> 1.08 s, medians of 7).
  constexpr size_t kAhead = 16;
  for (size_t k = 0; k < roots.size(); ++k) {
    if (k + kAhead < roots.size()) {
      const uint32_t ahead = roots[k + kAhead];
      groups.PrefetchRow(ahead);
      __builtin_prefetch(&from_root[ahead]);
      __builtin_prefetch(&intervals[ahead]);
      placed.PrefetchLeafOf(ahead);
    }
    if (k + kAhead / 2 < roots.size()) placed.PrefetchLeaf(roots[k + kAhead / 2]);
    const uint32_t root = roots[k];
    const auto group = groups.row(root);
    int64_t lowest = 0;
    for (uint32_t g : group) lowest = std::min(lowest, from_root[g]);
    bool displaced = lowest < 0;
    for (uint32_t g : group) displaced |= from_root[g] != 0;
    if (displaced) {
      // X = Y - lowest, Y >= 0 keeps every member at or above 0.
      used.clear();
      for (uint32_t g : group) {
        live.Clear();
        placed.AddLive(g, &live);
        const int64_t d = from_root[g] + (-lowest);
        const int64_t size = RoundUpTo(intervals[g].size, alignment);
        // Runs rather than chunks change nothing here: chunks that overlap
        // or touch still do after the shift (size >= alignment).
        for (const auto& [offset, end] : live.runs()) {
          const int64_t from = std::max<int64_t>(0, offset - d - size + alignment);
          const int64_t to = end - d;
          if (to > from) used.push_back({from, to});
        }
      }
      const int64_t x = BestFit(&used, alignment, &scratch) - lowest;
      if (over_budget(k, group, x)) return k;
      for (uint32_t g : group) place(g, x + from_root[g]);
      continue;
    }
    int64_t max_size = 0;
    live.Clear();
    for (uint32_t g : group) {
      max_size = std::max(max_size, intervals[g].size);
      placed.AddLive(g, &live);
    }
    const int64_t offset = BestFitSorted(live.runs(), max_size);
    if (over_budget(k, group, offset)) return k;
    for (uint32_t g : group) place(g, offset);
  }
  return roots.size();
}

// An event stream read into lifetimes and groups, for laying out in any
// order.
struct PreparedHeap {
  std::vector<Interval> intervals;
  // Per buffer, the schedule steps of its first and last event: kept only
  // for the orders that compare lifetimes in steps (ScheduleTimeOrder).
  std::vector<std::pair<int32_t, int32_t>> steps;
  std::vector<uint32_t> roots;  // the buffers that take a chunk of their own
  Csr<uint32_t> groups;         // per root: it and every buffer sharing its chunk
  std::vector<int64_t> from_root;
  LeafOrder leaves;  // of every root's group
};

bool ScheduleTimeOrder(HeapOrder order) {
  return order == HeapOrder::kScheduleSpatial || order == HeapOrder::kScheduleExtent ||
         order == HeapOrder::kRepack;
}

PreparedHeap Prepare(const std::vector<HeapEvent>& events, uint32_t id_count, bool with_steps) {
  PreparedHeap p;
  std::vector<Interval>& intervals = p.intervals;
  intervals.resize(id_count);
  if (with_steps) p.steps.assign(id_count, {-1, -1});
  int32_t last_step = -1;
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
        if (e.size == 0) break;  // nothing to place, no tick (EmptyLayout: offset 0)
        in.start = static_cast<int32_t>(counter++);
        if (with_steps) p.steps[e.buffer].first = e.step;
        in.needs_allocation = e.kind == HeapEvent::kAlloc;
        in.first = e.kind == HeapEvent::kAlloc && e.first;
        if (e.kind != HeapEvent::kAlloc) share_with[e.buffer] = e.share_with;
        if (e.kind == HeapEvent::kPlaceWith) place_offset[e.buffer] = e.offset;
        break;
      case HeapEvent::kFree:
        if (in.size == 0) break;
        in.end = static_cast<int32_t>(counter++);
        if (with_steps) p.steps[e.buffer].second = e.step;
        break;
    }
    last_step = std::max(last_step, e.step);
  }
  for (uint32_t id = 0; id < id_count; ++id) {
    Interval& in = intervals[id];
    if (in.present && in.size > 0 && in.end < 0) {
      in.end = static_cast<int32_t>(counter);
      if (with_steps) p.steps[id].second = last_step;
    }
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
  for (uint32_t id = 0; id < id_count; ++id) {
    const Interval& in = intervals[id];
    if (in.present && in.size > 0 && in.needs_allocation) p.roots.push_back(id);
  }
  // Each root's group, once: the root, then every buffer sharing its chunk,
  // transitively, breadth first; each member's distance from the root's
  // offset (0 but for kPlaceWith).
  p.from_root.assign(id_count, 0);
  p.groups = Csr<uint32_t>::Build(id_count, [&](auto emit) {
    std::vector<uint32_t> group;
    for (uint32_t root : p.roots) {
      group.assign(1, root);
      for (size_t k = 0; k < group.size(); ++k) {
        for (uint32_t c : colocations.row(group[k])) {
          p.from_root[c] = p.from_root[group[k]] + place_offset[c];
          group.push_back(c);
        }
      }
      for (uint32_t g : group) emit(root, g);
    }
  });
  p.leaves = OrderLeaves(p.intervals, p.roots, p.groups);
  return p;
}

// The roots of `p` in `order`.
std::vector<uint32_t> SortedRoots(const PreparedHeap& p, HeapOrder order) {
  const std::vector<Interval>& intervals = p.intervals;
  const Csr<uint32_t>& groups = p.groups;
  const size_t id_count = intervals.size();
  std::vector<uint32_t> roots = p.roots;
  std::vector<int64_t> max_end;
  if (order == HeapOrder::kTemporal) {
    max_end.assign(id_count, 0);
    for (uint32_t r : roots) {
      for (uint32_t g : groups.row(r)) max_end[r] = std::max<int64_t>(max_end[r], intervals[g].end);
    }
  }
  // Per root, for the schedule-time orders: the group's first and last
  // step, and its bytes: the root's own for kScheduleSpatial, else from its
  // lowest member's start to its highest member's end.
  struct GroupSpan {
    int64_t first_step = 0;
    int64_t last_step = 0;
    int64_t bytes = 0;
  };
  std::vector<GroupSpan> span;
  if (ScheduleTimeOrder(order)) {
    span.assign(id_count, {});
    for (uint32_t r : roots) {
      GroupSpan& g = span[r];
      g.first_step = p.steps[r].first;
      g.last_step = p.steps[r].second;
      int64_t low = 0, high = 0;
      for (uint32_t m : groups.row(r)) {
        g.first_step = std::min<int64_t>(g.first_step, p.steps[m].first);
        g.last_step = std::max<int64_t>(g.last_step, p.steps[m].second);
        low = std::min(low, p.from_root[m]);
        high = std::max(high, p.from_root[m] + intervals[m].size);
      }
      g.bytes = order == HeapOrder::kScheduleSpatial ? intervals[r].size : high - low;
    }
  }
  // Every order ends with the root's id. In all but kRepack (every block
  // alike there), the roots of the first group come before the others.
  auto rest = roots.begin();
  if (order != HeapOrder::kRepack) {
    rest = std::partition(roots.begin(), roots.end(),
                          [&](uint32_t r) { return intervals[r].first; });
  }
  auto key = [&](uint32_t r) -> std::tuple<int64_t, int64_t, int64_t> {
    const Interval& x = intervals[r];
    switch (order) {
      case HeapOrder::kRepack: {
        const GroupSpan& u = span[r];
        return {u.first_step - u.last_step, -u.bytes, u.first_step};
      }
      case HeapOrder::kSpatial:
        return {-x.size, x.start - x.end, 0};
      case HeapOrder::kAllocation:
        return {x.start, 0, 0};  // unique ticks
      case HeapOrder::kTemporal:
        return {x.start - max_end[r], -x.size, 0};
      case HeapOrder::kScheduleSpatial:
      case HeapOrder::kScheduleExtent: {
        const GroupSpan& u = span[r];
        return {-u.bytes, u.first_step - u.last_step, 0};
      }
    }
    return {0, 0, 0};
  };
  SortByKey(roots.begin(), rest, key);
  SortByKey(rest, roots.end(), key);
  return roots;
}

// No buffer placed yet: offset 0 for those of no bytes, -1 for the others.
HeapResult EmptyLayout(const PreparedHeap& p) {
  HeapResult result;
  result.offsets.resize(p.intervals.size());
  for (size_t id = 0; id < p.intervals.size(); ++id) {
    const Interval& in = p.intervals[id];
    result.offsets[id] = in.present && in.size == 0 ? 0 : -1;
  }
  return result;
}

HeapResult LayOut(const PreparedHeap& p, const std::vector<uint32_t>& roots, int64_t alignment) {
  HeapResult result = EmptyLayout(p);
  PlaceGroups(p.intervals, roots, p.groups, p.from_root, p.leaves, alignment, &result);
  return result;
}

// Memory-space assignment under a budget: roots placed in `roots` order
// until one does not fit under it; then everything placed so far is
// repacked, longest-lived first (its best-fit repacker), and kept if the
// repacked layout fits, and the root tries again. At most `max_repacks`
// times; a root that still does not fit is placed above the budget (XLA
// would have left it out of the memory space, but the HLO says it is in).
HeapResult LayOutWithinBudget(const PreparedHeap& p, std::vector<uint32_t> roots,
                              int64_t alignment, const target::HeapBudget& budget) {
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  size_t checked_from = 0, repacked_for = kNone;
  for (int repacks = 0;;) {
    HeapResult result = EmptyLayout(p);
    const size_t stop = PlaceGroups(p.intervals, roots, p.groups, p.from_root, p.leaves, alignment,
                                    &result, budget.bytes, checked_from);
    if (stop == roots.size()) return result;
    if (repacks == budget.max_repacks) return LayOut(p, roots, alignment);
    if (stop == repacked_for) {  // a repack made room, not enough
      checked_from = stop + 1;
      continue;
    }
    ++repacks;
    std::vector<bool> placed(p.intervals.size(), false);
    for (size_t k = 0; k < stop; ++k) placed[roots[k]] = true;
    std::vector<uint32_t> repacked;
    for (uint32_t r : SortedRoots(p, HeapOrder::kRepack)) {
      if (placed[r]) repacked.push_back(r);
    }
    HeapResult trial = EmptyLayout(p);
    if (PlaceGroups(p.intervals, repacked, p.groups, p.from_root, p.leaves, alignment, &trial,
                    budget.bytes) == repacked.size()) {
      std::copy(repacked.begin(), repacked.end(), roots.begin());
      repacked_for = stop;
      checked_from = stop;
    } else {
      checked_from = stop + 1;
    }
  }
}

}  // namespace

HeapResult GlobalDecreasingSizeBestFit(const std::vector<HeapEvent>& events,
                                       uint32_t id_count, int64_t alignment,
                                       HeapOrder order) {
  const PreparedHeap p = Prepare(events, id_count, ScheduleTimeOrder(order));
  return LayOut(p, SortedRoots(p, order), alignment);
}

HeapResult BestHeap(std::vector<HeapEvent> events, uint32_t id_count, int64_t alignment,
                    target::HeapOrders orders, std::optional<target::HeapBudget> budget) {
  const bool msa = orders == target::HeapOrders::kMemorySpaceAssignment;
  const PreparedHeap p = Prepare(events, id_count, /*with_steps=*/msa);
  // The layouts read only `p`; on a module of a million values the events
  // are 80 MB of the peak.
  FreeStorage(events);
  if (orders == target::HeapOrders::kTemporalOnly) {
    return LayOut(p, SortedRoots(p, HeapOrder::kTemporal), alignment);
  }
  if (orders == target::HeapOrders::kAllocationOnly) {
    return LayOut(p, SortedRoots(p, HeapOrder::kAllocation), alignment);
  }
  if (msa) {
    constexpr HeapOrder kOrders[] = {HeapOrder::kScheduleSpatial, HeapOrder::kScheduleExtent,
                                     HeapOrder::kTemporal, HeapOrder::kAllocation};
    // The orders are independent: laid out side by side, one per core; the
    // first smallest in kOrders wins, as it would one after another.
    auto smallest = [&](auto lay_out) {
      std::vector<HeapResult> candidates(std::size(kOrders));
      ParallelFor(candidates.size(), [&](size_t k) { candidates[k] = lay_out(SortedRoots(p, kOrders[k])); });
      size_t best = 0;
      for (size_t k = 1; k < candidates.size(); ++k) {
        if (candidates[k].heap_size < candidates[best].heap_size) best = k;
      }
      return std::move(candidates[best]);
    };
    HeapResult best = smallest([&](std::vector<uint32_t> roots) {
      return LayOut(p, roots, alignment);
    });
    // The orders stand in for memory-space assignment's own, which fits
    // its budget: past it under every order, it repacked on the way. (A
    // repack can leave the buffers after it worse off; the smaller wins.)
    if (budget && best.heap_size > budget->bytes) {
      HeapResult repacked = smallest([&](std::vector<uint32_t> roots) {
        return LayOutWithinBudget(p, std::move(roots), alignment, *budget);
      });
      if (repacked.heap_size < best.heap_size) best = std::move(repacked);
    }
    return best;
  }
  // The two orders are independent; lay them out side by side.
  HeapResult temporal;
  std::thread worker(
      [&] { temporal = LayOut(p, SortedRoots(p, HeapOrder::kTemporal), alignment); });
  HeapResult spatial = LayOut(p, SortedRoots(p, HeapOrder::kSpatial), alignment);
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
