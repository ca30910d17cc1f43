// Runs independent jobs on all cores. Each job writes only its own result
// slot, so callers keep a deterministic order by collecting results by index.
#ifndef HLOMEM_LIB_BASE_PARALLEL_H_
#define HLOMEM_LIB_BASE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace hlomem {

// Calls fn(0) ... fn(count - 1), each exactly once, on up to `max_threads`
// threads (0: ThreadCount()), the caller's among them; returns when all
// calls have returned. `fn` must not throw.
void ParallelFor(size_t count, const std::function<void(size_t)>& fn, size_t max_threads = 0);

// std::thread::hardware_concurrency(), at least 1.
size_t ThreadCount();

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_PARALLEL_H_
