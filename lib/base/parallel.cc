#include "lib/base/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace hlomem {

void ParallelFor(size_t count, const std::function<void(size_t)>& fn) {
  const size_t threads =
      std::min<size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
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
