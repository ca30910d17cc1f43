#include "lib/analysis/reuse_index.h"

#include <algorithm>
#include <limits>

namespace hlomem::analysis {

ReuseIndex::ReuseIndex(size_t expected) {
  runs_.reserve(expected);
  interiors_.reserve(expected);
  while (leaves_ < expected) Grow();
}

size_t ReuseIndex::Add(int64_t size) {
  if (count_ == leaves_) Grow();
  const size_t position = count_++;
  runs_.emplace_back();
  interiors_.emplace_back();
  nodes_[leaves_ + position].max_size = size;
  Update(position);
  return position;
}

void ReuseIndex::Grow() {
  const size_t old_leaves = leaves_;
  leaves_ = std::max<size_t>(64, 2 * leaves_);
  std::vector<Node> nodes(2 * leaves_);
  for (size_t k = 0; k < count_; ++k) nodes[leaves_ + k] = nodes_[old_leaves + k];
  nodes_ = std::move(nodes);
  for (size_t node = leaves_; node-- > 1;) Combine(node);
}

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Merges [x, y] into `runs` (start -> end, disjoint): with every run it
// overlaps by a positive length, and with those it only meets when
// `merge_touching`. `kept` is the one run a tree leaf keeps ([kept_x,
// kept_y], kMax when none): it stays true, as merging only grows runs, and
// the merged run replaces it when longer. True when `kept` changed.
bool MergeRun(absl::btree_map<int64_t, int64_t>* runs, int64_t x, int64_t y, bool merge_touching,
              int64_t* kept_x, int64_t* kept_y) {
  auto it = runs->upper_bound(x);
  if (it != runs->begin()) {
    const int64_t before_end = std::prev(it)->second;
    if (merge_touching ? before_end >= x : before_end > x) --it;
  }
  while (it != runs->end() && (merge_touching ? it->first <= y : it->first < y)) {
    x = std::min(x, it->first);
    y = std::max(y, it->second);
    it = runs->erase(it);
  }
  runs->emplace(x, y);
  if (*kept_x != kMax && y - x <= *kept_y - *kept_x) return false;
  *kept_x = x;
  *kept_y = y;
  return true;
}

}  // namespace

void ReuseIndex::AddLiveRange(size_t position, int64_t start, int64_t end) {
  Node& leaf = nodes_[leaves_ + position];
  bool changed = false;
  // The interior (start, end) rules out one-point ranges strictly inside it.
  if (start < end) {
    changed |= MergeRun(&interiors_[position], start, end, /*merge_touching=*/false,
                        &leaf.max_interior_x, &leaf.min_interior_y);
  }
  changed |= MergeRun(&runs_[position], start, end, /*merge_touching=*/true, &leaf.max_x,
                      &leaf.min_y);
  if (changed) Update(position);
}

bool ReuseIndex::Combine(size_t node) {
  const Node& l = nodes_[2 * node];
  const Node& r = nodes_[2 * node + 1];
  const Node combined{std::max(l.max_size, r.max_size), std::max(l.max_x, r.max_x),
                      std::min(l.min_y, r.min_y),
                      std::max(l.max_interior_x, r.max_interior_x),
                      std::min(l.min_interior_y, r.min_interior_y)};
  Node& n = nodes_[node];
  if (n == combined) return false;
  n = combined;
  return true;
}

void ReuseIndex::Update(size_t position) {
  // A node that comes out the same leaves its ancestors as they are.
  size_t node = (leaves_ + position) / 2;
  while (node >= 1 && Combine(node)) node /= 2;
}

int64_t ReuseIndex::FindLast(size_t before, int64_t size, int64_t start, int64_t end) {
  if (count_ == 0) return -1;
  return Find(1, 0, leaves_, std::min(before, count_), size, start, end);
}

int64_t ReuseIndex::Find(size_t node, size_t lo, size_t hi, size_t before, int64_t size,
                         int64_t start, int64_t end) {
  Node& n = nodes_[node];
  if (lo >= before || n.max_size < size) return -1;
  // Every allocation below is busy when each longest run [x, y] overlaps
  // [start, end] by a positive length: x < end and start < y.
  if (start < end && n.max_x < end && n.min_y > start) return -1;
  // A one-point range [s, s]: busy when each interior run holds s.
  if (start == end && n.max_interior_x < start && n.min_interior_y > start) return -1;
  if (hi - lo == 1) {
    // At a leaf, check every merged run, not only the longest.
    if (start < end) {
      const absl::btree_map<int64_t, int64_t>& runs = runs_[lo];
      auto it = runs.lower_bound(end);  // runs starting before `end` precede it
      if (it != runs.begin() && std::prev(it)->second > start) {
        // This run will likely rule the allocation out for the next
        // queries too; subtrees of such allocations then get skipped whole.
        n.max_x = std::prev(it)->first;
        n.min_y = std::prev(it)->second;
        Update(lo);
        return -1;
      }
    } else if (start == end) {
      const absl::btree_map<int64_t, int64_t>& interior = interiors_[lo];
      auto it = interior.lower_bound(start);  // open runs starting before `start` precede it
      if (it != interior.begin() && std::prev(it)->second > start) {
        n.max_interior_x = std::prev(it)->first;
        n.min_interior_y = std::prev(it)->second;
        Update(lo);
        return -1;
      }
    }
    return static_cast<int64_t>(lo);
  }
  const size_t mid = (lo + hi) / 2;
  const int64_t right = Find(2 * node + 1, mid, hi, before, size, start, end);
  return right >= 0 ? right : Find(2 * node, lo, mid, before, size, start, end);
}

}  // namespace hlomem::analysis
