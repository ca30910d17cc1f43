#include "lib/base/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace hlomem {

size_t ThreadCount() { return std::max(1u, std::thread::hardware_concurrency()); }

void ParallelFor(size_t count, const std::function<void(size_t)>& fn, size_t max_threads) {
  const size_t threads = std::min(count, max_threads > 0 ? max_threads : ThreadCount());
  if (threads <= 1) {
    for (size_t k = 0; k < count; ++k) fn(k);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next++; k < count; k = next++) fn(k);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace hlomem
