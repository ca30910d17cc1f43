// LoadDumps with an on_loaded hook that consumes each module as it loads,
// as `report` and `parse` do: the hook sees every module exactly once under
// the key it has in the result, and the result keeps the order, warnings
// and errors of a load without the hook.
#include "lib/dump/loader.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hostile/scratch_dir.h"

namespace hlomem::dump {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using hlomem::testing::ReadFileOrDie;
using hlomem::testing::ScratchDir;

const std::string kJax = std::string(HLOMEM_TESTDATA_DIR) + "/jax/";

// What the hook or a plain load knows of one module.
struct Seen {
  std::string name;
  size_t instructions = 0;
  bool has_xla = false;
  bool operator==(const Seen& o) const {
    return name == o.name && instructions == o.instructions && has_xla == o.has_xla;
  }
};

Seen Describe(const LoadedModule& m) {
  return {m.module ? std::string(m.module->name) : m.files.module_name,
          m.module ? m.module->instructions.size() : 0, m.xla.has_value()};
}

// Loads `paths` with a hook that records and consumes every module.
struct HookedLoad {
  absl::StatusOr<LoadResult> result;
  std::map<std::pair<size_t, size_t>, std::vector<Seen>> seen;  // a vector to catch repeats
  std::vector<size_t> dump_counts;
};

HookedLoad LoadConsuming(const std::vector<std::string>& paths, int threads) {
  HookedLoad load;
  std::mutex mutex;
  LoadOptions options;
  options.threads = threads;
  options.on_loaded = [&](LoadedModule& m, size_t dump_count) {
    const Seen seen = Describe(m);
    m.module.reset();
    std::lock_guard<std::mutex> lock(mutex);
    load.seen[m.key()].push_back(seen);
    load.dump_counts.push_back(dump_count);
  };
  load.result = LoadDumps(paths, options);
  return load;
}

TEST(LoaderHookTest, SeesEveryModuleOnceUnderItsKeyInOrder) {
  ScratchDir scratch;
  // Two modules in one file, the second named differently.
  const std::string first = ReadFileOrDie(
      kJax + "argmax/module_0000.jit_argmax_both.cpu_after_optimizations.txt");
  const std::string second = ReadFileOrDie(
      kJax + "cumsum/module_0000.jit_cumulative_ops.cpu_after_optimizations.txt");
  const std::string two_modules = scratch.Write("two_modules.txt", first + "\n" + second);
  const std::vector<std::string> paths = {kJax + "argmax", kJax + "cond_branches", two_modules,
                                          kJax + "cumsum"};

  const absl::StatusOr<LoadResult> plain = LoadDumps(paths, LoadOptions{});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_THAT(plain->modules, SizeIs(5));
  for (const int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    const HookedLoad hooked = LoadConsuming(paths, threads);
    ASSERT_TRUE(hooked.result.ok()) << hooked.result.status();
    ASSERT_EQ(hooked.result->modules.size(), plain->modules.size());
    EXPECT_EQ(hooked.seen.size(), plain->modules.size());
    for (size_t k = 0; k < plain->modules.size(); ++k) {
      const LoadedModule& want = plain->modules[k];
      const LoadedModule& got = hooked.result->modules[k];
      EXPECT_EQ(got.key(), want.key()) << k;
      EXPECT_EQ(got.files.module_name, want.files.module_name) << k;
      EXPECT_FALSE(got.module.has_value()) << "the hook consumed module " << k;
      auto it = hooked.seen.find(got.key());
      ASSERT_NE(it, hooked.seen.end()) << k;
      ASSERT_THAT(it->second, SizeIs(1)) << "handed to the hook once: " << k;
      EXPECT_EQ(it->second[0], Describe(want)) << k;
      EXPECT_GT(it->second[0].instructions, 0u) << k;
    }
    for (const size_t count : hooked.dump_counts) EXPECT_EQ(count, 4u);
  }
  // The two modules of one file share a dump index and differ in module index.
  EXPECT_EQ(plain->modules[2].dump_index, plain->modules[3].dump_index);
  EXPECT_EQ(plain->modules[2].module_index, 0u);
  EXPECT_EQ(plain->modules[3].module_index, 1u);
  EXPECT_NE(plain->modules[1].dump_index, plain->modules[2].dump_index);
  EXPECT_TRUE(plain->modules[0].xla.has_value());  // XLA's assignment came with argmax
  EXPECT_FALSE(plain->modules[2].xla.has_value());
}

TEST(LoaderHookTest, BadFileInADirectoryIsListedAndTheOthersAreHanded) {
  ScratchDir scratch;
  scratch.Write("module_0000.jit_argmax_both.cpu_after_optimizations.txt",
                ReadFileOrDie(kJax + "argmax/module_0000.jit_argmax_both.cpu_after_optimizations.txt"));
  scratch.Write("module_0001.jit_broken.cpu_after_optimizations.txt",
                "HloModule jit_broken\n\nENTRY %main {\n  %p = f32[2]{0} parameter(0\n}\n");
  scratch.Write("module_0002.jit_cumulative_ops.cpu_after_optimizations.txt",
                ReadFileOrDie(kJax + "cumsum/module_0000.jit_cumulative_ops.cpu_after_optimizations.txt"));
  const HookedLoad hooked = LoadConsuming({scratch.path()}, 2);
  ASSERT_TRUE(hooked.result.ok()) << hooked.result.status();
  ASSERT_THAT(hooked.result->modules, SizeIs(2));
  EXPECT_EQ(hooked.result->modules[0].files.module_name, "jit_argmax_both");
  EXPECT_EQ(hooked.result->modules[1].files.module_name, "jit_cumulative_ops");
  EXPECT_EQ(hooked.seen.size(), 2u);
  EXPECT_THAT(hooked.result->warnings, SizeIs(0));
  ASSERT_THAT(hooked.result->unreadable, SizeIs(1));
  const UnreadableModule& bad = hooked.result->unreadable[0];
  EXPECT_EQ(bad.path, scratch.path() + "/module_0001.jit_broken.cpu_after_optimizations.txt");
  EXPECT_THAT(bad.error, HasSubstr(bad.path + ":5:1: error: expected ')'"));
}

TEST(LoaderHookTest, BadFileNamedExplicitlyFailsTheLoad) {
  ScratchDir scratch;
  const std::string broken = scratch.Write("broken.txt", "HloModule broken\n\nENTRY %main {\n");
  const HookedLoad hooked = LoadConsuming({kJax + "argmax", broken, kJax + "cumsum"}, 2);
  ASSERT_FALSE(hooked.result.ok());
  EXPECT_THAT(std::string(hooked.result.status().message()), HasSubstr(broken + ":"));
}

}  // namespace
}  // namespace hlomem::dump
