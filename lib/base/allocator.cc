#include "lib/base/allocator.h"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hlomem {

void RetainFreedMemoryForReuse() {
#if defined(__GLIBC__)
  constexpr int kMiB = 1 << 20;
  // Setting either turns off glibc's adaptive thresholds, so both are set.
  ::mallopt(M_MMAP_THRESHOLD, 32 * kMiB);
  ::mallopt(M_TRIM_THRESHOLD, 128 * kMiB);
#endif
}

void ReleaseFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace hlomem
