#include "lib/analysis/reuse_index.h"

#include <algorithm>
#include <limits>

namespace hlomem::analysis {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

}  // namespace

ReuseIndex::ReuseIndex(size_t capacity) {
  while (leaves_ < capacity) leaves_ *= 2;
  // Empty leaves can never be returned (size -1); allocations with no live
  // range yet are never busy (x = max, y = min).
  max_size_.assign(2 * leaves_, -1);
  max_x_.assign(2 * leaves_, kMax);
  min_y_.assign(2 * leaves_, kMin);
  max_interior_x_.assign(2 * leaves_, kMax);
  min_interior_y_.assign(2 * leaves_, kMin);
  runs_.reserve(capacity);
  interiors_.reserve(capacity);
}

size_t ReuseIndex::Add(int64_t size) {
  const size_t position = count_++;
  runs_.emplace_back();
  interiors_.emplace_back();
  max_size_[leaves_ + position] = size;
  Update(position);
  return position;
}

namespace {

// Merges [x, y] into `runs` (start -> end, disjoint): with every run it
// overlaps by a positive length, and with those it only meets when
// `merge_touching`. `kept` is the one run a tree leaf keeps ([kept_x,
// kept_y], kMax when none): it stays true, as merging only grows runs, and
// the merged run replaces it when longer. True when `kept` changed.
bool MergeRun(std::map<int64_t, int64_t>* runs, int64_t x, int64_t y, bool merge_touching,
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
  const size_t leaf = leaves_ + position;
  bool changed = false;
  // The interior (start, end) rules out one-point ranges strictly inside it.
  if (start < end) {
    changed |= MergeRun(&interiors_[position], start, end, /*merge_touching=*/false,
                        &max_interior_x_[leaf], &min_interior_y_[leaf]);
  }
  changed |= MergeRun(&runs_[position], start, end, /*merge_touching=*/true, &max_x_[leaf],
                      &min_y_[leaf]);
  if (changed) Update(position);
}

void ReuseIndex::Update(size_t position) {
  for (size_t node = (leaves_ + position) / 2; node >= 1; node /= 2) {
    max_size_[node] = std::max(max_size_[2 * node], max_size_[2 * node + 1]);
    max_x_[node] = std::max(max_x_[2 * node], max_x_[2 * node + 1]);
    min_y_[node] = std::min(min_y_[2 * node], min_y_[2 * node + 1]);
    max_interior_x_[node] = std::max(max_interior_x_[2 * node], max_interior_x_[2 * node + 1]);
    min_interior_y_[node] = std::min(min_interior_y_[2 * node], min_interior_y_[2 * node + 1]);
  }
}

int64_t ReuseIndex::FindLast(size_t before, int64_t size, int64_t start, int64_t end) {
  return Find(1, 0, leaves_, std::min(before, count_), size, start, end);
}

int64_t ReuseIndex::Find(size_t node, size_t lo, size_t hi, size_t before, int64_t size,
                         int64_t start, int64_t end) {
  if (lo >= before || max_size_[node] < size) return -1;
  // Every allocation below is busy when each longest run [x, y] overlaps
  // [start, end] by a positive length: x < end and start < y.
  if (start < end && max_x_[node] < end && min_y_[node] > start) return -1;
  // A one-point range [s, s]: busy when each interior run holds s.
  if (start == end && max_interior_x_[node] < start && min_interior_y_[node] > start) return -1;
  if (hi - lo == 1) {
    // At a leaf, check every merged run, not only the longest.
    if (start < end) {
      const std::map<int64_t, int64_t>& runs = runs_[lo];
      auto it = runs.lower_bound(end);  // runs starting before `end` precede it
      if (it != runs.begin() && std::prev(it)->second > start) {
        // This run will likely rule the allocation out for the next
        // queries too; subtrees of such allocations then get skipped whole.
        const size_t leaf = leaves_ + lo;
        max_x_[leaf] = std::prev(it)->first;
        min_y_[leaf] = std::prev(it)->second;
        Update(lo);
        return -1;
      }
    } else if (start == end) {
      const std::map<int64_t, int64_t>& interior = interiors_[lo];
      auto it = interior.lower_bound(start);  // open runs starting before `start` precede it
      if (it != interior.begin() && std::prev(it)->second > start) {
        const size_t leaf = leaves_ + lo;
        max_interior_x_[leaf] = std::prev(it)->first;
        min_interior_y_[leaf] = std::prev(it)->second;
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
