// The C library allocator tuned for hlomem's pattern of work: a model of
// tens of MB is built, analysed and freed, then the next module's. glibc
// gives freed memory back to the kernel above a threshold that follows the
// largest block freed so far, so each module faulted its model in afresh;
// a parse of a few-MB module spent a quarter of its time in the kernel.
#ifndef HLOMEM_LIB_BASE_ALLOCATOR_H_
#define HLOMEM_LIB_BASE_ALLOCATOR_H_

#include <utility>

namespace hlomem {

// Empties `container` and gives its storage back to the allocator now.
// (`v = {}` on a std::vector assigns an empty initializer list: it keeps the
// capacity, so the bytes stay held until the vector dies.)
template <typename Container>
void FreeStorage(Container& container) {
  Container().swap(container);
}

// Serves blocks below 32 MiB (glibc's own upper bound for its adaptive
// threshold) from the heap and keeps up to 128 MiB free at the top of each
// heap for the next module, instead of unmapping it. Larger blocks (a big
// module's pools) are still mapped and unmapped on their own, so the peak
// resident size of one large module does not change. Call once, before any
// threads start; a no-op outside glibc.
void RetainFreedMemoryForReuse();

// Gives the free memory of every heap back to the kernel, the heaps of
// finished worker threads included: what a worker freed stays in its own
// heap, where other threads do not reuse it. For after a big parallel step.
void ReleaseFreedMemory();

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_ALLOCATOR_H_
