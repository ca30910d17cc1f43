// The allocations a buffer may move into during buffer assignment (XLA's
// allocation_indices), searched newest first. XLA tries each in turn; with
// tens of thousands of donated parameters and outputs that is quadratic.
// This index skips, a subtree at a time, allocations that certainly cannot
// take the buffer: too small, or busy during part of its live range. Whatever
// it returns still gets the full check, so the result is the same as trying
// every allocation.
//
// "Busy" uses the allocation's live ranges merged where they overlap or
// touch. A merged run [x, y] overlapping a buffer's range [s, e] (s < e) by a
// positive length means some value in it overlaps the buffer by a positive
// length, which always interferes (only ranges that merely touch may share).
//
// A buffer whose range is one point [s, s] (a value defined and never read,
// common in training steps) cannot be ruled out by merged runs: it may share
// with two ranges that meet at s. For those the index keeps a second set of
// runs, the union of each range's interior (x, y): s inside one means some
// value's range holds s strictly inside, which always interferes. Without
// it every such buffer tried every allocation of its size, one by one.
#ifndef HLOMEM_LIB_ANALYSIS_REUSE_INDEX_H_
#define HLOMEM_LIB_ANALYSIS_REUSE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/btree_map.h"

namespace hlomem::analysis {

class ReuseIndex {
 public:
  // Room for `expected` allocations without growing.
  explicit ReuseIndex(size_t expected);

  // Appends an allocation of `size` bytes; returns its position.
  size_t Add(int64_t size);
  // Notes that the allocation at `position` holds a value live over the
  // inclusive range [start, end].
  void AddLiveRange(size_t position, int64_t start, int64_t end);

  // The last position before `before` whose allocation may hold `size`
  // bytes live over [start, end], or -1. A range with start == end is
  // checked against the interiors of the allocation's ranges.
  int64_t FindLast(size_t before, int64_t size, int64_t start, int64_t end);

 private:
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

  // One tree node, its fields side by side: a search reads all of them.
  // Empty leaves can never be returned (size -1); allocations with no live
  // range yet are never busy (x = max, y = min).
  struct Node {
    // The largest size below.
    int64_t max_size = -1;
    // Over one run [x, y] of each allocation below, the largest x and
    // smallest y. An allocation is certainly busy for [s, e] when x < e and
    // s < y. The run kept is the one that last proved the allocation busy
    // (buffers come by size, so queries near in time come together), or
    // else the longest.
    int64_t max_x = kMax;
    int64_t min_y = kMin;
    // The same over one interior run (x, y) of each allocation, for
    // one-point ranges: every allocation below is busy at s when x < s < y.
    int64_t max_interior_x = kMax;
    int64_t min_interior_y = kMin;
    bool operator==(const Node& o) const {
      return max_size == o.max_size && max_x == o.max_x && min_y == o.min_y &&
             max_interior_x == o.max_interior_x && min_interior_y == o.min_interior_y;
    }
  };

  void Grow();
  void Update(size_t position);
  // Recomputes a node from its children; false when it did not change.
  bool Combine(size_t node);
  int64_t Find(size_t node, size_t lo, size_t hi, size_t before, int64_t size, int64_t start,
               int64_t end);

  // Leaves: a power of two, doubled when the allocations fill them.
  size_t leaves_ = 0;
  size_t count_ = 0;
  // Per allocation: its merged live ranges, start -> end.
  std::vector<absl::btree_map<int64_t, int64_t>> runs_;
  // Per allocation: the union of its ranges' interiors, open runs (x, y)
  // kept as x -> y, merged only where they overlap by a positive length.
  std::vector<absl::btree_map<int64_t, int64_t>> interiors_;
  std::vector<Node> nodes_;  // 1-based heap order; leaves from leaves_ on
};

}  // namespace hlomem::analysis

#endif  // HLOMEM_LIB_ANALYSIS_REUSE_INDEX_H_
