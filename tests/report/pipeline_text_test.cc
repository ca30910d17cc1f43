// pipeline::BuildReportFromText, what the Python package runs on a
// compiled function's as_text(): the same report as the file it came from.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using ::testing::HasSubstr;
using testing::ChdirToRepoRoot;
using testing::ReadFileOrDie;

// The HLO file and the whole case folder of a committed dump.
struct Case {
  std::string dir;
  std::string hlo;
};

Case FindCase(const std::string& dir, const std::string& suffix) {
  ChdirToRepoRoot();
  absl::StatusOr<Report> report = pipeline::BuildReport({dir}, pipeline::ReportOptions());
  EXPECT_TRUE(report.ok()) << report.status();
  for (const std::string& file : report->modules.at(0).files) {
    if (file.size() > suffix.size() && file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return {dir, file};
    }
  }
  ADD_FAILURE() << "no " << suffix << " file in " << dir;
  return {dir, ""};
}

TEST(PipelineTextTest, CpuTextGivesTheDumpsNumbers) {
  const Case c = FindCase("testdata/jax/seed_gather_grad_int32_grads", "cpu_after_optimizations.txt");
  absl::StatusOr<Report> from_dump = pipeline::BuildReport({c.dir}, pipeline::ReportOptions());
  ASSERT_TRUE(from_dump.ok()) << from_dump.status();
  absl::StatusOr<Report> from_text =
      pipeline::BuildReportFromText(ReadFileOrDie(c.hlo), "<compiled>", pipeline::ReportOptions());
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  const ModuleReport& text = from_text->modules.at(0);
  const ModuleReport& dump = from_dump->modules.at(0);
  EXPECT_EQ(text.name, "jit_function_using_idx");
  EXPECT_EQ(text.files, std::vector<std::string>{"<compiled>"});
  EXPECT_TRUE(text.exact) << text.estimate_reason;
  EXPECT_FALSE(text.xla.has_value());  // no buffer-assignment file beside a string
  ASSERT_TRUE(text.computed && dump.xla);
  EXPECT_EQ(text.computed->total_bytes, dump.xla->total_bytes);
  EXPECT_EQ(text.computed->temp_bytes, dump.xla->temp_bytes);
  EXPECT_EQ(text.rows.size(), dump.rows.size());
  EXPECT_EQ(text.findings.size(), dump.findings.size());
}

TEST(PipelineTextTest, TpuTextWithTheTargetMatchesTheDumpPerMemorySpace) {
  // A TPU module's as_text() carries no target file: --target supplies it.
  const Case c = FindCase("testdata/accel/tpu_v5e/mlp_train_step_donated", "after_optimizations.txt");
  absl::StatusOr<Report> from_dump = pipeline::BuildReport({c.dir}, pipeline::ReportOptions());
  ASSERT_TRUE(from_dump.ok()) << from_dump.status();
  pipeline::ReportOptions options;
  options.target = "tpu-v5e";
  absl::StatusOr<Report> from_text = pipeline::BuildReportFromText(ReadFileOrDie(c.hlo), "<compiled>", options);
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  const ModuleReport& text = from_text->modules.at(0);
  const ModuleReport& dump = from_dump->modules.at(0);
  EXPECT_EQ(text.target, dump.target);
  ASSERT_EQ(text.memory_spaces.size(), dump.memory_spaces.size());
  for (size_t i = 0; i < text.memory_spaces.size(); ++i) {
    EXPECT_EQ(text.memory_spaces[i].name, dump.memory_spaces[i].name);
    EXPECT_EQ(text.memory_spaces[i].computed_bytes, dump.memory_spaces[i].computed_bytes)
        << text.memory_spaces[i].name;
  }
}

TEST(PipelineTextTest, BadTextIsAnErrorNamingTheOrigin) {
  absl::StatusOr<Report> bad = pipeline::BuildReportFromText(
      "HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}\n", "<compiled>", pipeline::ReportOptions());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("<compiled>:3:"));
  pipeline::ReportOptions only;
  only.module_regex = "^nothing$";
  absl::StatusOr<Report> none = pipeline::BuildReportFromText(
      "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n", "<compiled>", only);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("no module matches --module"));
}

}  // namespace
}  // namespace hlomem::report
