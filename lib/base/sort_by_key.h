// Sorts dense ids by a key worked out once per id. A comparator that looks
// each id up in the engine's tables misses the cache on every comparison
// once a module has 10^5+ buffers (the ids come in random order); sorting
// (key, id) pairs reads only contiguous memory.
#ifndef HLOMEM_LIB_BASE_SORT_BY_KEY_H_
#define HLOMEM_LIB_BASE_SORT_BY_KEY_H_

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace hlomem {

// Orders the ids in [first, last) by (key(id), id): the id breaks ties, so
// the order is total. `key` returns something with operator< (a number, a
// tuple, a pair).
template <typename It, typename KeyFn>
void SortByKey(It first, It last, const KeyFn& key) {
  using Id = typename std::iterator_traits<It>::value_type;
  using Key = decltype(key(Id{}));
  std::vector<std::pair<Key, Id>> keyed;
  keyed.reserve(static_cast<size_t>(last - first));
  for (It it = first; it != last; ++it) keyed.emplace_back(key(*it), *it);
  std::sort(keyed.begin(), keyed.end());
  for (const auto& [unused, id] : keyed) *first++ = id;
}

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_SORT_BY_KEY_H_
