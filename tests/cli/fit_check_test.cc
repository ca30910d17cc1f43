// `hlomem check FIT.json`: a committed fit result gates later searches
// ("the largest batch on v5e-16gb may not fall below 24"). The results here
// have the shape python/hlomem/_fit.py writes (FitResult.to_dict); the
// Python suite runs the same gate on results of real compiles.
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_path.h"

namespace {

using ::testing::HasSubstr;

hlomem::testing::CommandOutput Hlomem(const std::string& args) {
  return hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " " + args + " 2>&1");
}

// A fit result over remat=none/full with these largest values ("null":
// nothing fits).
std::string WriteFit(const std::string& name, const std::string& none, const std::string& full,
                     const std::string& setting = "batch") {
  const std::string path = hlomem::testing::TempPath(name + ".json");
  std::ofstream(path) << R"({"tool": "hlomem", "kind": "fit", "setting": ")" << setting
                      << R"(", "range": [1, 256], "device": "v5e-16gb", "largest": 152,
  "frontier": [
    {"choices": {"remat": "none"}, "largest": )" << none << R"(, "non_monotone": false, "error": "",
     "compiles": 9, "probes": []},
    {"choices": {"remat": "full"}, "largest": )" << full << R"(, "non_monotone": false, "error": "",
     "compiles": 9, "probes": []}]})";
  return path;
}

TEST(FitCheckTest, TheSameResultPasses) {
  const std::string committed = WriteFit("committed", "68", "152");
  const auto run = Hlomem("check " + committed + " --baseline " + committed + " --at-least 64");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ok    remat=none: the largest batch that fits is 68 (baseline 68)"));
  EXPECT_THAT(run.out, HasSubstr("check passed"));
}

TEST(FitCheckTest, AFallBelowTheBaselineFails) {
  const std::string committed = WriteFit("committed", "68", "152");
  const std::string now = WriteFit("now", "68", "148");
  const auto run = Hlomem("check " + now + " --baseline " + committed);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("FAIL  remat=full: the largest batch that fits is 148 (baseline 152): "
                                 "fell from 152 (baseline) to 148"));
  EXPECT_THAT(run.out, HasSubstr("ok    remat=none"));
  EXPECT_THAT(run.out, HasSubstr("check FAILED: 1 violation"));
  // Nothing fitting any more is a fall too; growth is not.
  EXPECT_EQ(Hlomem("check " + WriteFit("gone", "null", "152") + " --baseline " + committed).exit_code, 1);
  EXPECT_EQ(Hlomem("check " + WriteFit("grew", "70", "160") + " --baseline " + committed).exit_code, 0);
}

TEST(FitCheckTest, AtLeast) {
  const std::string now = WriteFit("now", "68", "152");
  EXPECT_EQ(Hlomem("check " + now + " --at-least 68").exit_code, 0);
  const auto below = Hlomem("check " + now + " --at-least 100");
  EXPECT_EQ(below.exit_code, 1) << below.out;
  EXPECT_THAT(below.out, HasSubstr("FAIL  remat=none: the largest batch that fits is 68: 68 is below --at-least 100"));
}

TEST(FitCheckTest, BadInputExitsTwo) {
  const std::string now = WriteFit("now", "68", "152");
  // Another setting's search is not a baseline.
  const auto other = Hlomem("check " + now + " --baseline " + WriteFit("seq", "68", "152", "seq_len"));
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_THAT(other.out, HasSubstr("the baseline searched 'seq_len'"));
  // A report's JSON is not a fit result's baseline.
  const std::string report = hlomem::testing::TempPath("report.json");
  ASSERT_EQ(Hlomem("report --format json -o " + report + " " + HLOMEM_TESTDATA_DIR +
                   "/dumps/tpu_v5e_mlp_raw").exit_code, 0);
  const auto mixed = Hlomem("check " + now + " --baseline " + report);
  EXPECT_EQ(mixed.exit_code, 2) << mixed.out;
  EXPECT_THAT(mixed.out, HasSubstr("not a `hlomem fit --format json` result"));
  // No gate, a dump's gate, and --at-least on a report.
  EXPECT_EQ(Hlomem("check " + now).exit_code, 2);
  EXPECT_THAT(Hlomem("check " + now + " --max-total 1GiB").out, HasSubstr("memory budgets apply to dumps"));
  EXPECT_THAT(Hlomem("check " + report + " --at-least 4").out, HasSubstr("--at-least applies to a fit result"));
}

}  // namespace
