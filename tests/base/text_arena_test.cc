// TextArena: copies equal their source and stay put while more are made;
// a large text does not close the chunk being filled; adopted copies
// outlive the arena that made them (ASan checks the last in its build).
#include "lib/base/text_arena.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hlomem {
namespace {

TEST(TextArenaTest, CopiesStayValidAcrossManyChunks) {
  TextArena arena;
  std::vector<std::string> sources;
  std::vector<absl::string_view> copies;
  // About 2 MB of 1-300 byte texts: dozens of chunks.
  for (int k = 0; k < 20000; ++k) {
    sources.push_back(std::string(1 + (k * 37) % 300, static_cast<char>('a' + k % 26)) +
                      std::to_string(k));
    copies.push_back(arena.Copy(sources.back()));
  }
  for (size_t k = 0; k < sources.size(); ++k) {
    ASSERT_EQ(copies[k], sources[k]) << k;
    EXPECT_NE(copies[k].data(), sources[k].data());
  }
}

TEST(TextArenaTest, EmptyTextNeedsNoStorage) {
  TextArena arena;
  EXPECT_TRUE(arena.Copy("").empty());
  EXPECT_EQ(arena.Copy("x"), "x");
}

TEST(TextArenaTest, LargeTextLeavesTheOpenChunkOpen) {
  TextArena arena;
  const absl::string_view first = arena.Copy("ab");
  const std::string large(1 << 20, 'L');
  const absl::string_view large_copy = arena.Copy(large);
  const absl::string_view next = arena.Copy("cd");
  EXPECT_EQ(large_copy, large);
  // Packed right after the first copy: the large one went elsewhere.
  EXPECT_EQ(next.data(), first.data() + first.size());
}

TEST(TextArenaTest, AdoptedCopiesOutliveTheirArena) {
  TextArena keeper;
  std::vector<absl::string_view> copies;
  {
    TextArena maker;
    for (int k = 0; k < 5000; ++k) copies.push_back(maker.Copy("name." + std::to_string(k)));
    copies.push_back(maker.Copy(std::string(100000, 'z')));
    keeper.Adopt(std::move(maker));
    // The emptied arena is still usable.
    EXPECT_EQ(maker.Copy("again"), "again");
  }
  for (int k = 0; k < 5000; ++k) EXPECT_EQ(copies[k], "name." + std::to_string(k));
  EXPECT_EQ(copies.back(), std::string(100000, 'z'));
  EXPECT_EQ(keeper.Copy("own"), "own");
}

TEST(TextArenaTest, MovedFromArenaLeavesTheMovedChunkAlone) {
  TextArena first;
  const absl::string_view kept = first.Copy("kept");
  TextArena second(std::move(first));
  // Had `first` kept its place, this would land right after "kept", in
  // the chunk `second` now owns, and be overwritten by `second`'s next copy.
  const absl::string_view fresh = first.Copy("new!");
  const absl::string_view next = second.Copy("more");
  EXPECT_EQ(fresh, "new!");
  EXPECT_EQ(kept, "kept");
  EXPECT_EQ(next.data(), kept.data() + kept.size());
  TextArena third;
  third = std::move(second);
  EXPECT_EQ(second.Copy("again"), "again");
  EXPECT_EQ(third.Copy("x").data(), next.data() + next.size());
}

TEST(TextArenaTest, AllocateGivesWritableDisjointBlocks) {
  TextArena arena;
  char* a = arena.Allocate(10);
  char* b = arena.Allocate(70000);
  char* c = arena.Allocate(10);
  std::memset(a, 'a', 10);
  std::memset(b, 'b', 70000);
  std::memset(c, 'c', 10);
  EXPECT_EQ(absl::string_view(a, 10), std::string(10, 'a'));
  EXPECT_EQ(absl::string_view(c, 10), std::string(10, 'c'));
  EXPECT_EQ(absl::string_view(b, 70000), std::string(70000, 'b'));
}

}  // namespace
}  // namespace hlomem
