// Golden outputs of the human formats (text, markdown, csv) for report, diff
// and check. Regenerate with HLOMEM_UPDATE_GOLDENS=1 and review the diff.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/check.h"
#include "lib/report/device.h"
#include "lib/report/diff.h"
#include "lib/report/writers.h"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using ::hlomem::report::testing::BuildCase;
using ::hlomem::report::testing::ChdirToRepoRoot;
using ::hlomem::report::testing::ExpectGolden;
using ::testing::HasSubstr;

constexpr const char* kSeedGrads = "seed_gather_grad_int32_grads";
constexpr const char* kSeedNoGrads = "seed_gather_grad_int32_nograds";
constexpr const char* kTrainStep = "transformer_block_train_step";

WriteOptions Options() {
  WriteOptions options;
  options.top = 10;
  return options;
}

class GoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, TextMarkdownCsv) {
  const std::string name = GetParam();
  const Report report = BuildCase(name);
  ASSERT_FALSE(report.modules.empty());
  ExpectGolden(name + ".report.txt", WriteText(report, Options()));
  ExpectGolden(name + ".report.md", WriteMarkdown(report, Options()));
  ExpectGolden(name + ".report.csv", WriteCsv(report));
}

TEST_P(GoldenTest, EveryFormatIsStableAcrossRuns) {
  const Report first = BuildCase(GetParam());
  const Report second = BuildCase(GetParam());
  for (Format format : {Format::kText, Format::kJson, Format::kMarkdown, Format::kCsv, Format::kHtml}) {
    EXPECT_EQ(WriteReport(first, format, Options()), WriteReport(second, format, Options()))
        << kFormatNames[static_cast<int>(format)];
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenTest, ::testing::Values(kSeedGrads, kTrainStep),
                         [](const auto& info) { return std::string(info.param); });

// Several dumps in one run: each module is analysed as it loads, on
// whichever thread loaded it, and the report lists them in input order with
// exactly what a run of each alone reports.
TEST(GoldenSeveralDumpsTest, EachModuleAsWhenAloneInInputOrder) {
  const std::vector<std::string> cases = {kSeedGrads, kTrainStep, "argmax", kSeedNoGrads,
                                          "cumsum"};
  std::vector<std::string> paths;
  for (const std::string& c : cases) paths.push_back("testdata/jax/" + c);
  ChdirToRepoRoot();
  for (const int threads : {1, 2, 4}) {
    SCOPED_TRACE(threads);
    pipeline::ReportOptions options;
    options.load.threads = threads;
    absl::StatusOr<Report> together = pipeline::BuildReport(paths, options);
    ASSERT_TRUE(together.ok()) << together.status();
    ASSERT_EQ(together->modules.size(), cases.size());
    for (size_t k = 0; k < cases.size(); ++k) {
      Report alone = BuildCase(cases[k]);
      Report one_of_many;
      one_of_many.modules.push_back(together->modules[k]);
      EXPECT_EQ(WriteJson(one_of_many, Options()), WriteJson(alone, Options())) << cases[k];
    }
  }
}

TEST(GoldenDiffTest, SeedPairShowsTheIndexCopyFirst) {
  const Report nograds = BuildCase(kSeedNoGrads);
  const Report grads = BuildCase(kSeedGrads);
  const DiffReport diff = DiffReports(nograds, grads);
  ASSERT_EQ(diff.modules.size(), 1u);
  const ModuleDiff& d = diff.modules[0];
  ASSERT_FALSE(d.changes.empty());
  // jax-ml/jax#30015: the gradient re-materializes the 96 GiB index array.
  const BufferChange& first = d.changes.front();
  EXPECT_EQ(first.change, ChangeKind::kNew);
  EXPECT_EQ(first.delta(), int64_t{103079215104});
  EXPECT_EQ(first.shape, "s32[8589934592,3]");
  EXPECT_THAT(first.op_name, HasSubstr("concatenate"));
  EXPECT_EQ(first.source, "tools/programs/seed.py:15");
  EXPECT_TRUE(first.at_peak_b);
  EXPECT_EQ(MetricDelta(d, Metric::kTotal), int64_t{240526557204} - int64_t{138521083996});
  ExpectGolden("seed_int32.diff.txt", WriteDiffText(diff, Options()));
  ExpectGolden("seed_int32.diff.md", WriteDiffMarkdown(diff, Options()));
  ExpectGolden("seed_int32.diff.csv", WriteDiffCsv(diff));
}

TEST(GoldenCheckTest, OverBudgetNamesModuleNumberLimitAndContributors) {
  Report report = BuildCase(kSeedGrads);
  DeviceRequest h100;
  h100.preset = "h100-80gb";
  ApplyDeviceFit(**ResolveDevice(h100), &report);
  CheckOptions options;
  options.max_temp = int64_t{80} << 30;
  options.max_total = int64_t{250} << 30;
  const CheckResult result = RunCheck(report, options);
  ASSERT_EQ(result.violations.size(), 2u);  // temp, device fit
  const std::string text = FormatCheckText(result);
  EXPECT_THAT(text, HasSubstr("jit_function_using_idx: temp 128.00GiB (137438953472 B) (XLA's) "
                              "exceeds --max-temp 80.00GiB (85899345920 B)"));
  EXPECT_THAT(text, HasSubstr("tools/programs/seed.py:15"));
  ExpectGolden("seed_int32_grads.check.txt", text);
  ExpectGolden("seed_int32_grads.device.txt", WriteText(report, Options()));
}

}  // namespace
}  // namespace hlomem::report
