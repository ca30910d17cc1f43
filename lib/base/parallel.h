// Runs independent jobs on all cores. Each job writes only its own result
// slot, so callers keep a deterministic order by collecting results by index.
#ifndef HLOMEM_LIB_BASE_PARALLEL_H_
#define HLOMEM_LIB_BASE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace hlomem {

// Calls fn(0) ... fn(count - 1), each exactly once, on up to
// std::thread::hardware_concurrency() threads (the caller's among them);
// returns when all calls have returned. `fn` must not throw.
void ParallelFor(size_t count, const std::function<void(size_t)>& fn);

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_PARALLEL_H_
