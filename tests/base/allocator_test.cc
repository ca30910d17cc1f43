// RetainFreedMemoryForReuse: a model-sized block comes from the heap and
// stays there when freed, ready for the next module; a block as large as a
// big module's pools is still mapped on its own and given back when freed.
#include "lib/base/allocator.h"

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace hlomem {
namespace {

// Sanitizers bring their own allocator, which glibc's settings and counters
// do not describe.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HLOMEM_GLIBC_MALLOC 0
#elif defined(__GLIBC__)
#define HLOMEM_GLIBC_MALLOC 1
#else
#define HLOMEM_GLIBC_MALLOC 0
#endif

#if HLOMEM_GLIBC_MALLOC

constexpr size_t kMiB = size_t{1} << 20;

void* TouchedBlock(size_t bytes) {
  void* block = std::malloc(bytes);
  EXPECT_NE(block, nullptr);
  std::memset(block, 1, bytes);
  return block;
}

TEST(AllocatorTest, ModelSizedBlocksStayInTheHeapWhenFreed) {
  RetainFreedMemoryForReuse();
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = TouchedBlock(24 * kMiB);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before) << "24 MiB should come from the heap";
  std::free(block);
  // The heap's releasable top still holds the block: not given back.
  EXPECT_GE(mallinfo2().keepcost, 24 * kMiB);
}

TEST(AllocatorTest, BlocksOfBigModulesAreStillMappedOnTheirOwn) {
  RetainFreedMemoryForReuse();
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = TouchedBlock(48 * kMiB);
  EXPECT_GE(mallinfo2().hblkhd, mapped_before + 48 * kMiB);
  std::free(block);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before);
}

#else

TEST(AllocatorTest, GlibcMallocOnly) {
  RetainFreedMemoryForReuse();
  GTEST_SKIP() << "the allocator is not glibc's malloc here";
}

#endif

}  // namespace
}  // namespace hlomem
