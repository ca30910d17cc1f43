// XLA:TPU's dump folders as XLA writes them (testdata/dumps/tpu_*_mlp_raw,
// made by tools/gen_dump_folders.sh): every stage of a module carries the
// compiler's `cl_<changelist>` token, beside side files, pass-free extras
// (after_codegen, flagfile, ...) and a per-module folder. hlomem must read
// one module per compile, the one XLA assigned, and --stage must filter.
#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/run_command.h"
#include "tests/common/temp_path.h"

namespace {

using ::testing::HasSubstr;

hlomem::testing::CommandOutput Hlomem(const std::string& args) {
  return hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " " + args + " 2>&1");
}

struct RawFolder {
  const char* folder;
  const char* target;
};
void PrintTo(const RawFolder& raw, std::ostream* os) { *os << raw.folder; }

class RawTpuFolderTest : public ::testing::TestWithParam<RawFolder> {
 protected:
  std::string Path() const {
    return std::string(HLOMEM_TESTDATA_DIR) + "/dumps/" + GetParam().folder;
  }
};

TEST_P(RawTpuFolderTest, OneModuleAfterOptimizationsWithXlasFigures) {
  const auto run = Hlomem("report --format json " + Path());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  ASSERT_EQ(report["modules"].size(), 1u) << run.out;
  const nlohmann::json& module = report["modules"][0];
  EXPECT_EQ(module["name"], "jit_train_step");
  EXPECT_EQ(module["stage"], "after_optimizations");
  EXPECT_EQ(module["target"], GetParam().target);
  EXPECT_TRUE(module["scheduled"].get<bool>());
  // The after-optimizations module is the one XLA assigned: its buffer
  // assignment was read, and hlomem's HBM is XLA's, byte for byte.
  ASSERT_TRUE(module.contains("xla") && module["xla"].is_object()) << run.out;
  const nlohmann::json& hbm = module["memory_spaces"][0];
  EXPECT_EQ(hbm["name"], "HBM");
  EXPECT_GT(hbm["computed_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(hbm["computed_bytes"], hbm["xla_bytes"]);
  EXPECT_EQ(module["computed"]["argument_bytes"], module["xla"]["argument_bytes"]);
}

TEST_P(RawTpuFolderTest, StageFiltersWhatItSays) {
  const auto after = Hlomem("report --stage after --format json " + Path());
  ASSERT_EQ(after.exit_code, 0) << after.out;
  const nlohmann::json after_report = nlohmann::json::parse(after.out);
  ASSERT_EQ(after_report["modules"].size(), 1u);
  for (const auto& module : after_report["modules"]) {
    EXPECT_EQ(module["stage"], "after_optimizations");
  }
  const auto before = Hlomem("report --stage before --format json " + Path());
  ASSERT_EQ(before.exit_code, 0) << before.out;
  const nlohmann::json modules = nlohmann::json::parse(before.out)["modules"];
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_EQ(modules[0]["stage"], "before_optimizations");
  EXPECT_EQ(modules[0]["target"], GetParam().target);  // from the same compile's files
  EXPECT_FALSE(modules[0]["computed"]["exact"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(Generations, RawTpuFolderTest,
                         ::testing::Values(RawFolder{"tpu_v4_mlp_raw", "tpu v4"},
                                           RawFolder{"tpu_v5e_mlp_raw", "tpu v5e"},
                                           RawFolder{"tpu_v5p_mlp_raw", "tpu v5p"},
                                           RawFolder{"tpu_v6e_mlp_raw", "tpu v6e"}),
                         [](const auto& info) { return std::string(info.param.folder); });

// A module whose compile left only before-optimizations HLO (XLA failed
// before it could optimize) stands in as an estimate by default; --stage
// after leaves it out, and says so when nothing else is left.
TEST(RawTpuFolderTest, StageAfterLeavesOutAModuleWithOnlyBefore) {
  const std::string raw = std::string(HLOMEM_TESTDATA_DIR) + "/dumps/tpu_v5e_mlp_raw";
  const std::string dir = hlomem::testing::TempPath("only_before");
  ASSERT_EQ(hlomem::testing::RunCommand("rm -rf " + dir + " && mkdir -p " + dir + " && cp " + raw +
                                        "/*.before_optimizations.txt " + dir + "/")
                .exit_code,
            0);
  const auto fallback = Hlomem("report --format json " + dir);
  ASSERT_EQ(fallback.exit_code, 0) << fallback.out;
  EXPECT_EQ(nlohmann::json::parse(fallback.out)["modules"][0]["stage"], "before_optimizations");
  const auto strict = Hlomem("report --stage after " + dir);
  EXPECT_EQ(strict.exit_code, 2) << strict.out;
  EXPECT_THAT(strict.out, HasSubstr("no module was dumped after optimizations here (only before"));
}

}  // namespace
