// `hlomem check` and `diff` on whole dump folders as a training script
// leaves them (testdata/dumps: helper modules, a step compiled twice): a
// gate must never pass because it compared the wrong modules or skipped
// one it could not read.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/run_command.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

hlomem::testing::CommandOutput Hlomem(const std::string& args) {
  return hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " " + args + " 2>&1");
}

const std::string kDumps = std::string(HLOMEM_TESTDATA_DIR) + "/dumps";
const std::string kLast40 = kDumps + "/mlp_b64_last40";    // 296 examples: batches of 64, then 40
const std::string kLast48 = kDumps + "/mlp_b64_last48";    // 304 examples: batches of 64, then 48
const std::string kBatch128 = kDumps + "/mlp_b128_last40";  // 552 examples: batches of 128, then 40

// A baseline report of `dump` in the test's temp dir.
std::string RecordBaseline(const std::string& dump, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  const auto run = Hlomem("report --format json -o " + path + " " + dump);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  return path;
}

// The lines of `text` matching `pattern`.
std::vector<std::string> LinesMatching(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, re)) out.push_back(line);
  }
  return out;
}

TEST(GateTest, TheDumpRepeatsModuleNames) {
  // What the tests below rely on: JAX compiled the step twice and its
  // helpers several times each.
  const auto run = Hlomem("report --format json " + kLast40);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  std::map<std::string, int> count;
  for (const auto& m : report["modules"]) ++count[m["name"].get<std::string>()];
  EXPECT_EQ(count["jit_train_step"], 2);
  EXPECT_GE(count["jit__normal"], 3);
  EXPECT_GE(count["jit_dynamic_slice"], 3);
}

TEST(GateTest, ASelfCheckOfADumpWithRepeatsIsZeroEverywhere) {
  const std::string baseline = RecordBaseline(kLast40, "self");
  // --all: each helper module's pass on its own line, to be read here.
  const auto run = Hlomem("check " + kLast40 + " --baseline " + baseline + " --all");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  const std::vector<std::string> compared = LinesMatching(run.out, "vs baseline");
  EXPECT_EQ(compared.size(), 3u * 23u) << run.out;  // total, temp and peak of each of the 23 modules
  for (const std::string& line : compared) EXPECT_THAT(line, HasSubstr("(+0.00%)"));
  EXPECT_THAT(run.out, Not(HasSubstr("not in the baseline")));
}

TEST(GateTest, GrowthInTheSecondCompileOfAStepFails) {
  // The short last batch grew from 40 to 48 rows: the second jit_train_step
  // grew; the first is the same program. Compared with the first baseline
  // entry of its name, the second would read as a shrink and pass.
  const std::string baseline = RecordBaseline(kLast40, "last40");
  const auto run = Hlomem("check " + kLast48 + " --baseline " + baseline +
                          " --tolerance 0.1 --module jit_train_step");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("FAIL  jit_train_step: temp grew 48.0KiB over the baseline, "
                                 "240.0KiB (245760 B) -> 288.0KiB (294912 B) (+20.00%"));
  EXPECT_THAT(run.out, HasSubstr("parameter 6 f32[40,784] -> f32[48,784]"));
  // The full-batch step is paired with its own program and unchanged.
  EXPECT_EQ(LinesMatching(run.out, "ok    jit_train_step: .* \\(\\+0\\.00%\\)").size(), 3u) << run.out;
  EXPECT_THAT(run.out, Not(HasSubstr("(-")));
}

TEST(GateTest, AModuleWithoutACounterpartIsAnErrorUnlessAllowed) {
  const auto record = Hlomem("report --format json --module jit_train_step -o " + ::testing::TempDir() +
                             "/steps.json " + kLast40);
  ASSERT_EQ(record.exit_code, 0) << record.out;
  const std::string args = "check " + kLast40 + " --baseline " + ::testing::TempDir() +
                           "/steps.json --module 'jit_(train_step|sqrt)'";
  const auto strict = Hlomem(args);
  EXPECT_EQ(strict.exit_code, 2) << strict.out;
  EXPECT_THAT(strict.out, HasSubstr("only in the dump:     jit_sqrt (s32[])->f32[]"));
  EXPECT_THAT(strict.out, HasSubstr("--allow-new"));
  const auto allowed = Hlomem(args + " --allow-new");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_THAT(allowed.out, HasSubstr("note  jit_sqrt: not in the baseline; nothing to compare"));
}

TEST(GateTest, DiffPairsEveryModuleOfTwoBatchSizes) {
  const auto run = Hlomem("diff --format json " + kLast40 + " " + kBatch128);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json diff = nlohmann::json::parse(run.out);
  ASSERT_EQ(diff["modules"].size(), 23u);
  std::multiset<std::string> steps;
  for (const auto& m : diff["modules"]) {
    EXPECT_TRUE(m["in_a"].get<bool>() && m["in_b"].get<bool>()) << m["name"];
    if (m["name"] == "jit_train_step") steps.insert(m["paired_by"].get<std::string>());
  }
  // The 40-row step is the same program in both; the 64-row one became 128.
  EXPECT_EQ(steps, (std::multiset<std::string>{"program", "name"}));
}

// A copy of `dump` whose train step's HLO is cut in half.
std::string DumpWithATruncatedModule(const std::string& dump, std::string* cut_file) {
  const fs::path dir = fs::path(::testing::TempDir()) / "truncated_dump";
  fs::remove_all(dir);
  fs::copy(dump, dir);
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find("jit_train_step.cpu_after_optimizations.txt") == std::string::npos) continue;
    fs::resize_file(entry.path(), fs::file_size(entry.path()) / 2);
    *cut_file = entry.path().string();
    break;
  }
  return dir.string();
}

TEST(GateTest, ATruncatedModuleStopsCheckAndReport) {
  std::string cut_file;
  const std::string dir = DumpWithATruncatedModule(kLast40, &cut_file);
  ASSERT_FALSE(cut_file.empty());
  const std::string baseline = RecordBaseline(kLast40, "whole");
  for (const std::string& command :
       {"check --max-total 50MiB " + dir, "check --baseline " + baseline + " " + dir, "report " + dir,
        "report --format json " + dir}) {
    const auto run = Hlomem(command);
    EXPECT_EQ(run.exit_code, 2) << command << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr(cut_file + ":")) << command;  // its located error
    EXPECT_THAT(run.out, HasSubstr("1 module of the dump could not be read")) << command;
    EXPECT_THAT(run.out, Not(HasSubstr("check passed"))) << command;
  }
  const auto skipped = Hlomem("check --max-total 50MiB --skip-unreadable " + dir);
  EXPECT_EQ(skipped.exit_code, 0) << skipped.out;
  EXPECT_THAT(skipped.out, HasSubstr(cut_file + ": warning: module skipped (--skip-unreadable)"));
}

TEST(GateTest, ABaselineDumpFolderSaysHowToRecordTheJson) {
  const auto run = Hlomem("check --baseline " + kLast40 + " " + kLast40);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("--baseline takes a report's JSON, not a dump folder; record one with "
                                 "`hlomem report --format json -o baseline.json " + kLast40 + "`"));
}

}  // namespace
