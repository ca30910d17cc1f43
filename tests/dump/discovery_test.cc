#include "lib/dump/discovery.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlomem::dump {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fresh directory under the test temp dir, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "hlomem_discovery_XXXXXX";
    const char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code error;
    // Restore permissions a test may have removed, so cleanup succeeds.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, error);
         !error && it != std::filesystem::recursive_directory_iterator();
         it.increment(error)) {
      if (!it->is_symlink()) chmod(it->path().c_str(), 0755);
    }
    std::filesystem::remove_all(path_, error);
  }

  const std::string& path() const { return path_; }
  std::string operator/(absl::string_view name) const {
    return absl::StrCat(path_, "/", name);
  }

  // Creates `name` (with parent directories) holding `contents`.
  std::string Write(absl::string_view name, absl::string_view contents = "x") {
    const std::string file = *this / name;
    std::error_code error;
    std::filesystem::create_directories(
        std::filesystem::path(file).parent_path(), error);
    std::ofstream out(file, std::ios::binary);
    out << contents;
    return file;
  }

 private:
  std::string path_;
};

// XLA:TPU writes a module's target arguments when its compile starts, under
// the id it has then; the FFT expansion clones the module, whose optimized
// files then carry a later id (testdata/accel/tpu_v6e/dtype_complex64_fft).
TEST(DiscoverDumpsTest, TargetFilesOfTheIdTheCompileStartedWith) {
  ScratchDir dir;
  const std::string started =
      dir.Write("module_0000.jit_fft.cl_100.target_arguments.txt");
  const std::string after = dir.Write("module_0003.jit_fft.cl_100.after_optimizations.txt");
  // Another program's and a later id's files are not the module's.
  dir.Write("module_0001.jit_other.cl_100.target_arguments.txt");
  dir.Write("module_0005.jit_fft.cl_100.target_arguments.txt");
  // A module with a file of its own keeps it.
  const std::string own = dir.Write("module_0007.jit_g.cl_100.target_arguments.txt");
  dir.Write("module_0002.jit_g.cl_100.target_arguments.txt");
  dir.Write("module_0007.jit_g.cl_100.after_optimizations.txt");
  for (const std::vector<std::string>& given :
       {std::vector<std::string>{dir.path()}, std::vector<std::string>{after}}) {
    absl::StatusOr<DiscoveryResult> result = DiscoverDumps(given, {});
    ASSERT_TRUE(result.ok()) << result.status();
    const DumpModuleFiles& fft = result->modules[0];
    EXPECT_EQ(fft.hlo_text, after);
    EXPECT_EQ(fft.tpu_target_arguments, started);
    EXPECT_EQ(fft.gpu_target_config, "");
    EXPECT_THAT(result->used_files, Contains(started));
    EXPECT_THAT(result->ignored_files, ::testing::Not(Contains(started)));
    if (given[0] == dir.path()) EXPECT_EQ(result->modules[1].tpu_target_arguments, own);
  }
}

TEST(DiscoverDumpsTest, TypicalJaxCpuDirectory) {
  ScratchDir dir;
  const std::string before =
      dir.Write("module_0001.jit_f.before_optimizations.txt");
  const std::string after =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  const std::string proto =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.hlo.pb");
  const std::string ba = dir.Write(
      "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt");
  const std::string report = dir.Write(
      "module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt");
  const std::string ir =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.ir-no-opt.ll");
  const std::string only_before =
      dir.Write("module_0002.jit_g.before_optimizations.txt");
  const std::string only_ba = dir.Write(
      "module_0003.jit_h.cpu_after_optimizations-buffer-assignment.txt");
  const std::string options = dir.Write("execution_options.txt");

  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->warnings, IsEmpty());
  ASSERT_EQ(result->modules.size(), 3u);

  const DumpModuleFiles& f = result->modules[0];
  EXPECT_EQ(f.key, dir / "module_0001.jit_f");
  EXPECT_EQ(f.module_id, 1);
  EXPECT_EQ(f.module_name, "jit_f");
  EXPECT_EQ(f.backend, "cpu");
  EXPECT_EQ(f.suffix, "cpu_after_optimizations");
  EXPECT_EQ(f.stage, Stage::kAfterOptimizations);
  EXPECT_FALSE(f.stage_fallback);
  EXPECT_FALSE(f.standalone);
  EXPECT_EQ(f.hlo_text, after);
  EXPECT_EQ(f.hlo_proto, proto);
  EXPECT_EQ(f.buffer_assignment, ba);
  EXPECT_EQ(f.memory_usage_report, report);
  EXPECT_EQ(f.live_range, "");

  const DumpModuleFiles& g = result->modules[1];
  EXPECT_EQ(g.module_id, 2);
  EXPECT_EQ(g.stage, Stage::kBeforeOptimizations);
  EXPECT_TRUE(g.stage_fallback);
  EXPECT_EQ(g.hlo_text, only_before);

  const DumpModuleFiles& h = result->modules[2];
  EXPECT_EQ(h.module_id, 3);
  EXPECT_FALSE(h.has_hlo());
  EXPECT_EQ(h.buffer_assignment, only_ba);

  EXPECT_THAT(result->ignored_files, ElementsAre(options, before, ir));
  EXPECT_THAT(result->used_files, Contains(ba));
  EXPECT_EQ(result->used_files.size(), 6u);
}

TEST(DiscoverDumpsTest, BeforeStageOnRequest) {
  ScratchDir dir;
  const std::string before =
      dir.Write("module_0001.jit_f.before_optimizations.txt");
  dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  DiscoveryOptions options;
  options.stage = Stage::kBeforeOptimizations;
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, before);
  EXPECT_EQ(result->modules[0].stage, Stage::kBeforeOptimizations);
  EXPECT_FALSE(result->modules[0].stage_fallback);
}

TEST(DiscoverDumpsTest, StageOnlyLeavesOutModulesWithoutIt) {
  ScratchDir dir;
  const std::string after = dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  dir.Write("module_0001.jit_f.before_optimizations.txt");
  const std::string only_before = dir.Write("module_0002.jit_g.before_optimizations.txt");
  DiscoveryOptions options;
  options.stage_only = true;
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, after);
  EXPECT_THAT(result->other_stage_modules, ElementsAre(dir / "module_0002.jit_g"));
  EXPECT_THAT(result->ignored_files, Contains(only_before));
  // The other way round, the module with only after-optimizations HLO goes.
  options.stage = Stage::kBeforeOptimizations;
  result = DiscoverDumps({dir.path()}, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 2u);
  for (const DumpModuleFiles& module : result->modules) {
    EXPECT_EQ(module.stage, Stage::kBeforeOptimizations);
  }
}

// XLA:TPU's token between the module name and every stage, and a tag the
// name parser does not know: either way the stages of one compile (same
// directory, prefix and id) are one module.
TEST(DiscoverDumpsTest, TaggedStagesOfOneCompilePair) {
  ScratchDir dir;
  dir.Write("module_0000.jit_f.cl_1004524046.before_optimizations.txt");
  const std::string after = dir.Write("module_0000.jit_f.cl_1004524046.after_optimizations.txt");
  dir.Write("module_0000.jit_f.cl_1004524046.after_optimizations_after_buffer_assignment.txt");
  const std::string ba =
      dir.Write("module_0000.jit_f.cl_1004524046.after_optimizations-buffer-assignment.txt");
  dir.Write("module_0000.jit_f.cl_1004524046.after_codegen.txt");
  dir.Write("module_0004.jit_g.gen_7.before_optimizations.txt");
  const std::string tagged_after = dir.Write("module_0004.jit_g.gen_7_after_optimizations.txt");
  // Another compile's (id 5) before-optimizations HLO stays its own module.
  const std::string other = dir.Write("module_0005.jit_g.gen_7.before_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 3u);
  EXPECT_EQ(result->modules[0].module_name, "jit_f");
  EXPECT_EQ(result->modules[0].hlo_text, after);
  EXPECT_EQ(result->modules[0].buffer_assignment, ba);
  EXPECT_EQ(result->modules[0].backend, "cl_1004524046");
  EXPECT_EQ(result->modules[1].module_name, "jit_g");
  EXPECT_EQ(result->modules[1].hlo_text, tagged_after);
  EXPECT_EQ(result->modules[2].hlo_text, other);
  EXPECT_TRUE(result->modules[2].stage_fallback);
  // On request, the before-optimizations file of each compile.
  DiscoveryOptions before;
  before.stage = Stage::kBeforeOptimizations;
  before.stage_only = true;
  result = DiscoverDumps({dir.path()}, before);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 3u);
  EXPECT_EQ(result->modules[0].hlo_text,
            dir / "module_0000.jit_f.cl_1004524046.before_optimizations.txt");
  EXPECT_EQ(result->modules[1].hlo_text, dir / "module_0004.jit_g.gen_7.before_optimizations.txt");
}

TEST(DiscoverDumpsTest, GpuNamesOrderAndRecursion) {
  ScratchDir dir;
  dir.Write("run/module_0010.jit_b.sm_9.0_gpu_after_optimizations.txt");
  dir.Write("run/module_0002.jit_a.sm_9.0_gpu_after_optimizations.txt");
  dir.Write(
      "run/module_0002.jit_a.sm_9.0_gpu_after_optimizations-live-range.txt");
  dir.Write(
      "run/module_0002.jit_a.sm_9.0_gpu_after_optimizations-buffer-assignment-"
      "values.txt");
  dir.Write("run/module_0002.jit_a.sm_9.0_gpu_after_optimizations.ptx");
  dir.Write("run/module_0002.jit_a.0004.gpu.after_a.before_b.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 2u);
  EXPECT_EQ(result->modules[0].module_id, 2);
  EXPECT_EQ(result->modules[1].module_id, 10);
  EXPECT_EQ(result->modules[0].backend, "sm_9.0");
  EXPECT_FALSE(result->modules[0].live_range.empty());
  EXPECT_FALSE(result->modules[0].buffer_assignment_values.empty());
  EXPECT_EQ(result->ignored_files.size(), 2u);
}

TEST(DiscoverDumpsTest, PrefersTheVariantWithBufferAssignment) {
  ScratchDir dir;
  dir.Write("module_0005.jit_f.after_optimizations.txt");
  const std::string tpu = dir.Write(
      "module_0005.jit_f.after_optimizations_after_buffer_assignment.txt");
  dir.Write(
      "module_0005.jit_f.after_optimizations_after_buffer_assignment-buffer-"
      "assignment.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, tpu);
  EXPECT_EQ(result->ignored_files.size(), 1u);
}

TEST(DiscoverDumpsTest, TimestampsAndDirectoriesSeparateModules) {
  ScratchDir dir;
  dir.Write("a/module_0001.jit_f.cpu_after_optimizations.txt");
  dir.Write("b/module_0001.jit_f.cpu_after_optimizations.txt");
  dir.Write("b/17.module_0001.jit_f.cpu_after_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result =
      DiscoverDumps({dir / "a", dir / "b"}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 3u);
  EXPECT_EQ(result->modules[0].key, dir / "a/module_0001.jit_f");
  EXPECT_EQ(result->modules[1].key, dir / "b/module_0001.jit_f");
  EXPECT_EQ(result->modules[2].key, dir / "b/17.module_0001.jit_f");
  EXPECT_EQ(result->modules[2].prefix, "17");
}

TEST(DiscoverDumpsTest, EmptyDirectoryIsAnError) {
  ScratchDir dir;
  dir.Write("notes.md");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir.path()}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            absl::StrCat(dir.path(),
                         ": error: no XLA dump files found (expected "
                         "module_NNNN.*.txt or *.hlo.pb)"));
}

TEST(DiscoverDumpsTest, MissingPathIsAnError) {
  ScratchDir dir;
  absl::StatusOr<DiscoveryResult> result =
      DiscoverDumps({dir / "does-not-exist"}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            absl::StrCat(dir.path(),
                         "/does-not-exist: error: No such file or directory"));
}

TEST(DiscoverDumpsTest, SymlinkLoopsAndBrokenLinks) {
  ScratchDir dir;
  dir.Write("dump/module_0001.jit_f.cpu_after_optimizations.txt");
  ASSERT_EQ(symlink("..", (dir / "dump/up").c_str()), 0);
  ASSERT_EQ(symlink(".", (dir / "dump/self").c_str()), 0);
  ASSERT_EQ(symlink("nowhere", (dir / "dump/dangling").c_str()), 0);
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir / "dump"}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  // The loop through "up" reaches dump/ again, which is skipped.
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_THAT(
      result->warnings,
      Contains(absl::StrCat(dir.path(),
                            "/dump/dangling: warning: ignoring broken "
                            "symbolic link: No such file or directory")));
  EXPECT_THAT(result->warnings,
              Contains(absl::StrCat(dir.path(),
                                    "/dump/self: warning: skipping directory "
                                    "already searched (symbolic link loop or "
                                    "duplicate link)")));
}

TEST(DiscoverDumpsTest, DepthLimit) {
  ScratchDir dir;
  dir.Write("d/module_0001.jit_f.cpu_after_optimizations.txt");
  dir.Write("d/1/2/3/module_0002.jit_g.cpu_after_optimizations.txt");
  DiscoveryOptions options;
  options.max_depth = 2;
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir / "d"}, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_THAT(
      result->warnings,
      ElementsAre(absl::StrCat(dir.path(),
                               "/d/1/2/3: warning: not searched: more than 2 "
                               "directory levels deep")));
}

TEST(DiscoverDumpsTest, UnreadableFilesAndDirectories) {
  ScratchDir dir;
  const std::string text =
      dir.Write("d/module_0001.jit_f.cpu_after_optimizations.txt");
  const std::string ba = dir.Write(
      "d/module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt");
  dir.Write("d/locked/module_0002.jit_g.cpu_after_optimizations.txt");
  ASSERT_EQ(chmod(ba.c_str(), 0), 0);
  ASSERT_EQ(chmod((dir / "d/locked").c_str(), 0), 0);
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({dir / "d"}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  if (geteuid() == 0) {
    // Root reads mode-0 files and directories: nothing to warn about.
    EXPECT_THAT(result->warnings, IsEmpty());
    ASSERT_EQ(result->modules.size(), 2u);
    EXPECT_EQ(result->modules[0].buffer_assignment, ba);
    return;
  }
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, text);
  EXPECT_EQ(result->modules[0].buffer_assignment, "");
  EXPECT_THAT(
      result->warnings,
      ElementsAre(absl::StrCat(dir.path(),
                               "/d/locked: warning: ignoring unreadable "
                               "directory: Permission denied"),
                  absl::StrCat(ba,
                               ": warning: ignoring unreadable file: "
                               "Permission denied")));
}

TEST(DiscoverDumpsTest, ExplicitStandaloneFilesAreAlwaysUsed) {
  ScratchDir dir;
  const std::string hlo = dir.Write("model.hlo");
  const std::string ba = dir.Write("model-buffer-assignment.txt");
  const std::string proto = dir.Write("other.pb");
  const std::string pass =
      dir.Write("module_0001.jit_f.0003.pipe.after_a.before_b.txt");
  absl::StatusOr<DiscoveryResult> result =
      DiscoverDumps({hlo, ba, proto, pass}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 3u);
  EXPECT_TRUE(result->modules[0].standalone);
  EXPECT_EQ(result->modules[0].hlo_text, hlo);
  EXPECT_EQ(result->modules[0].buffer_assignment, ba);
  EXPECT_EQ(result->modules[1].hlo_proto, proto);
  EXPECT_EQ(result->modules[2].hlo_text, pass);
  EXPECT_EQ(result->modules[2].module_id, 1);
  EXPECT_EQ(result->modules[2].stage, Stage::kIntermediate);
}

TEST(DiscoverDumpsTest, ExplicitDumpFileBringsItsSideFiles) {
  ScratchDir dir;
  const std::string text =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  const std::string ba = dir.Write(
      "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt");
  dir.Write("module_0001.jit_f.cpu_after_optimizations.ir-no-opt.ll");
  dir.Write("module_0002.jit_g.cpu_after_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({text}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, text);
  EXPECT_EQ(result->modules[0].buffer_assignment, ba);
}

TEST(DiscoverDumpsTest, ExplicitBufferAssignmentBringsItsHlo) {
  ScratchDir dir;
  const std::string text =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  const std::string ba = dir.Write(
      "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt");
  const std::string proto =
      dir.Write("module_0001.jit_f.cpu_after_optimizations.hlo.pb.gz");
  dir.Write("module_0001.jit_f.before_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({ba}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, text);
  EXPECT_EQ(result->modules[0].hlo_proto, proto);
  EXPECT_EQ(result->modules[0].buffer_assignment, ba);
  EXPECT_THAT(result->ignored_files, IsEmpty());
}

TEST(DiscoverDumpsTest, ExplicitBeforeFileWinsOverRequestedStage) {
  ScratchDir dir;
  const std::string before =
      dir.Write("module_0001.jit_f.before_optimizations.txt");
  dir.Write("module_0001.jit_f.cpu_after_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result = DiscoverDumps({before}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].hlo_text, before);
  EXPECT_TRUE(result->modules[0].stage_fallback);
}

TEST(DiscoverDumpsTest, NonUtf8NamesAndDuplicateInputs) {
  ScratchDir dir;
  const std::string odd =
      dir.Write("module_0004.\xff\xfe.cpu_after_optimizations.txt");
  absl::StatusOr<DiscoveryResult> result =
      DiscoverDumps({dir.path(), dir.path(), odd}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->modules.size(), 1u);
  EXPECT_EQ(result->modules[0].module_name, "\xff\xfe");
  EXPECT_EQ(result->modules[0].hlo_text, odd);
  EXPECT_THAT(result->ignored_files, IsEmpty());
}

}  // namespace
}  // namespace hlomem::dump
