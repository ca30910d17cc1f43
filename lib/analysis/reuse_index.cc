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

void ReuseIndex::AddLiveRange(size_t position, int64_t start, int64_t end) {
  const size_t leaf = leaves_ + position;
  bool changed = false;
  if (start < end) {
    // The interior (start, end): merged with every open run it overlaps by
    // a positive length, not with runs it merely meets.
    std::map<int64_t, int64_t>& interior = interiors_[position];
    int64_t x = start, y = end;
    auto it = interior.upper_bound(x);
    if (it != interior.begin() && std::prev(it)->second > x) --it;
    while (it != interior.end() && it->first < y) {
      x = std::min(x, it->first);
      y = std::max(y, it->second);
      it = interior.erase(it);
    }
    interior.emplace(x, y);
    // As for the runs below: the kept run stays true, a longer one replaces it.
    if (max_interior_x_[leaf] == kMax || y - x > min_interior_y_[leaf] - max_interior_x_[leaf]) {
      max_interior_x_[leaf] = x;
      min_interior_y_[leaf] = y;
      changed = true;
    }
  }
  // Merge with every run it overlaps or touches.
  std::map<int64_t, int64_t>& runs = runs_[position];
  auto it = runs.upper_bound(start);
  if (it != runs.begin() && std::prev(it)->second >= start) --it;
  while (it != runs.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = runs.erase(it);
  }
  runs.emplace(start, end);
  // The run kept for the tree stays true (merging only grows runs); the
  // new one replaces it when longer.
  if (max_x_[leaf] == kMax || end - start > min_y_[leaf] - max_x_[leaf]) {
    max_x_[leaf] = start;
    min_y_[leaf] = end;
    changed = true;
  }
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
