// Compressed sparse rows: values grouped by a dense key, in one pool. The
// engine's tables (sources of each node, positions and uses of each value,
// values of each buffer, ...) are all of this shape, and a vector of vectors
// would cost an allocation per key on 10^5+ keys.
#ifndef HLOMEM_LIB_BASE_CSR_H_
#define HLOMEM_LIB_BASE_CSR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace hlomem {

template <typename T>
class Csr {
 public:
  Csr() = default;

  // Groups the (key, value) pairs that `for_each_pair(emit)` emits, calling
  // emit(key, value) for each, into rows by key (< key_count). Within a row
  // values keep their emission order. Two passes over the pairs, no sort.
  template <typename ForEachPair>
  static Csr Build(size_t key_count, const ForEachPair& for_each_pair) {
    Csr csr;
    csr.offsets_.assign(key_count + 1, 0);
    for_each_pair([&](size_t key, const T&) { ++csr.offsets_[key + 1]; });
    for (size_t k = 0; k < key_count; ++k) csr.offsets_[k + 1] += csr.offsets_[k];
    csr.pool_.resize(csr.offsets_.back());
    std::vector<uint32_t> cursor(csr.offsets_.begin(), csr.offsets_.end() - 1);
    for_each_pair([&](size_t key, const T& value) { csr.pool_[cursor[key]++] = value; });
    return csr;
  }

  absl::Span<const T> row(size_t key) const {
    return absl::MakeConstSpan(pool_.data() + offsets_[key], offsets_[key + 1] - offsets_[key]);
  }
  size_t rows() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  // Asks the cache for row `key`'s bounds, ahead of reading the row.
  void PrefetchRow(size_t key) const { __builtin_prefetch(offsets_.data() + key); }

 private:
  std::vector<uint32_t> offsets_;
  std::vector<T> pool_;
};

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_CSR_H_
