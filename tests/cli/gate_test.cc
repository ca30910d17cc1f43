// `hlomem check` and `diff` on whole dump folders as a training script
// leaves them (testdata/dumps: helper modules, a step compiled twice): a
// gate must never pass because it compared the wrong modules or skipped
// one it could not read.
#include <algorithm>
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
#include "tests/common/temp_path.h"

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
  const std::string path = hlomem::testing::TempPath(name + ".json");
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
  // Both figures are XLA's own, from the buffer assignments in the dumps.
  for (const auto& [dump, temp] : {std::pair{kLast40, 245760}, std::pair{kLast48, 294912}}) {
    const auto json = Hlomem("report --format json --module jit_train_step " + dump);
    const nlohmann::json report = nlohmann::json::parse(json.out);
    std::vector<int64_t> xla_temps;
    for (const auto& m : report["modules"]) xla_temps.push_back(m["xla"]["temp_bytes"].get<int64_t>());
    EXPECT_THAT(xla_temps, ::testing::Contains(temp)) << dump;
  }
  EXPECT_THAT(run.out, HasSubstr("parameter 6 f32[40,784] -> f32[48,784]"));
  // The full-batch step is paired with its own program and unchanged.
  EXPECT_EQ(LinesMatching(run.out, "ok    jit_train_step: .* \\(\\+0\\.00%\\)").size(), 3u) << run.out;
  EXPECT_THAT(run.out, Not(HasSubstr("(-")));
}

TEST(GateTest, AModuleWithoutACounterpartIsAnErrorUnlessAllowed) {
  const std::string steps = hlomem::testing::TempPath("steps.json");
  const auto record = Hlomem("report --format json --module jit_train_step -o " + steps + " " + kLast40);
  ASSERT_EQ(record.exit_code, 0) << record.out;
  const std::string args = "check " + kLast40 + " --baseline " + steps + " --module 'jit_(train_step|sqrt)'";
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
  const fs::path dir = fs::path(hlomem::testing::TempPath("truncated_dump"));
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

// The text focuses on the step: a training script's dump is mostly the
// helper modules JAX compiles around it (jax.random.normal -> jit__normal,
// `w / n` -> jit_true_divide), and a report of each drowned the step
// (1,156 lines, the step at line 88 after a random init).
size_t CountLines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

TEST(FocusTest, TheReportShowsTheStepFirstAndTheHelpersOnOneLine) {
  const auto run = Hlomem("report " + kLast40);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_LE(CountLines(run.out), 85u) << run.out;
  EXPECT_THAT(run.out, HasSubstr("23 modules\n"));
  const std::vector<std::string> titles = LinesMatching(run.out, "^module ");
  ASSERT_FALSE(titles.empty()) << run.out;
  EXPECT_THAT(titles.front(), HasSubstr("module jit_train_step  ("));
  // The step in full once; its second compile (the last batch of 40) named.
  EXPECT_EQ(LinesMatching(run.out, "^module jit_train_step  \\(").size(), 1u) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^module jit_train_step: 1 more compile of this name \\(peak 5.31MiB\\)")
                .size(),
            1u)
      << run.out;
  const std::vector<std::string> helpers = LinesMatching(run.out, "small helper module");
  ASSERT_EQ(helpers.size(), 1u) << run.out;
  EXPECT_THAT(helpers[0], HasSubstr("+ 21 small helper modules (jit__normal x4, jit_dynamic_slice x4"));
  EXPECT_THAT(helpers[0], HasSubstr("--all shows them"));
  EXPECT_THAT(run.out, Not(HasSubstr("module jit__normal")));
  // The index lists the step's compiles before the helpers' line.
  EXPECT_LT(run.out.find("jit_train_step  cpu"), run.out.find("small helper"));
}

TEST(FocusTest, AllShowsEveryModuleInFull) {
  const auto run = Hlomem("report --all " + kLast40);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^module .*  \\(cpu").size(), 23u) << run.out;
  EXPECT_THAT(run.out, Not(HasSubstr("small helper")));
  // Largest first, as before: the random init of the first layer leads.
  EXPECT_EQ(LinesMatching(run.out, "^module ").front().rfind("module jit__normal  (", 0), 0u);
  EXPECT_GT(CountLines(run.out), 1000u);
}

TEST(FocusTest, InDumpOrderTheHelpersAreStillOneLine) {
  const auto run = Hlomem("report --sort dump " + kLast40);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^module jit_train_step  \\(").size(), 1u) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "small helper module").size(), 1u) << run.out;
}

TEST(FocusTest, CheckSummarizesPassingHelpersOnOneLine) {
  const auto run = Hlomem("check --max-peak 100MiB " + kLast40);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^ok    jit_train_step: peak live").size(), 2u) << run.out;
  const std::vector<std::string> helpers = LinesMatching(run.out, "^ok    21 small helper modules");
  ASSERT_EQ(helpers.size(), 1u) << run.out;
  EXPECT_THAT(helpers[0], HasSubstr("21 checks pass; --all lists them"));
  EXPECT_LE(CountLines(run.out), 5u) << run.out;
  const auto all = Hlomem("check --max-peak 100MiB --all " + kLast40);
  EXPECT_EQ(LinesMatching(all.out, "^ok    .*within --max-peak").size(), 23u) << all.out;
}

TEST(FocusTest, CheckFailsOnEveryModuleHelpersIncluded) {
  // Each of the 23 modules is over 4 bytes: each violation is listed.
  const auto run = Hlomem("check --max-total 4B " + kLast40);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^FAIL  ").size(), 23u) << run.out;
  EXPECT_EQ(LinesMatching(run.out, "^FAIL  jit__normal: total").size(), 4u) << run.out;
  EXPECT_THAT(run.out, HasSubstr("check FAILED: 23 violations"));
  EXPECT_THAT(run.out, Not(HasSubstr("small helper")));  // the step fails too: no note either
  // 1KiB: the helpers over it fail, each listed; those within it pass on
  // one line.
  const auto kib = Hlomem("check --max-total 1KiB " + kLast40);
  EXPECT_EQ(kib.exit_code, 1) << kib.out;
  EXPECT_EQ(LinesMatching(kib.out, "^FAIL  ").size(), 17u) << kib.out;
  EXPECT_EQ(LinesMatching(kib.out, "^FAIL  jit_train_step: total").size(), 2u) << kib.out;
  EXPECT_EQ(LinesMatching(kib.out, "^ok    6 small helper modules").size(), 1u) << kib.out;
  EXPECT_EQ(LinesMatching(kib.out, "^ok    ").size(), 1u) << kib.out;
}

TEST(FocusTest, GithubAnnotatesNoFindingOfAHelperButEveryViolation) {
  const auto run = Hlomem("check --max-temp 1MiB --github " + kLast40);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  // The random inits over the temp budget fail, annotated as errors.
  EXPECT_EQ(LinesMatching(run.out, "^::error .*jit__normal: temp").size(), 3u) << run.out;
  // Findings: the step's only; the helpers' counted in a notice.
  const std::vector<std::string> warnings = LinesMatching(run.out, "^::warning ");
  ASSERT_EQ(warnings.size(), 2u) << run.out;
  for (const std::string& w : warnings) EXPECT_THAT(w, HasSubstr("::jit_train_step: "));
  EXPECT_THAT(run.out, HasSubstr("4 findings on small helper modules"));
  // Only the random inits fail: the text says how to gate the step alone.
  EXPECT_THAT(run.out, HasSubstr("note  every violation is on a small helper module"));
  const auto all = Hlomem("check --max-temp 1MiB --github --all " + kLast40);
  EXPECT_EQ(LinesMatching(all.out, "^::warning ").size(), 6u) << all.out;
}

TEST(FocusTest, ACpuModuleWithATinyTempSaysWhy) {
  // An SGD update on CPU: its temp is 0B of a 768MiB peak.
  const auto run = Hlomem("report " + std::string(HLOMEM_TESTDATA_DIR) + "/jax/det_missed_donation_pos");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("note: temp is 0.0% of the peak: XLA:CPU places temporaries in output "
                                 "allocations; gate with peak or total (--max-peak, --max-total)"));
  // The MLP step keeps its activations in temp (7% of its peak): no note.
  const auto step = Hlomem("report " + kLast40);
  EXPECT_THAT(step.out, Not(HasSubstr("XLA:CPU places temporaries")));
  // No share of fragmentation for a temp of a few bytes: jit__threefry_split
  // has 816B of fragmentation in 964B of temp.
  const auto all = Hlomem("report --all --module threefry_split " + kLast40);
  const std::vector<std::string> frag = LinesMatching(all.out, "^  fragmentation");
  ASSERT_EQ(frag.size(), 1u) << all.out;
  EXPECT_THAT(frag[0], HasSubstr("816B"));
  EXPECT_THAT(frag[0], Not(HasSubstr("of temp")));
}

TEST(FocusTest, CaptureOfATrainingScriptFitsOnAScreen) {
  // The command "runs" by copying the script's dump where XLA would write it.
  const std::string dir = hlomem::testing::TempPath("focus_capture");
  fs::remove_all(dir);
  const auto run = hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " capture --dir " + dir +
                                               " -- cp -r " + kLast40 + "/. " + dir);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_LE(CountLines(run.out), 85u) << run.out;
  EXPECT_THAT(LinesMatching(run.out, "^module ").front(), HasSubstr("module jit_train_step  ("));
  EXPECT_EQ(LinesMatching(run.out, "small helper module").size(), 1u) << run.out;
  fs::remove_all(dir);
}

}  // namespace

namespace {

// issue 30, item 11: the missed donation points at the jitted step's call,
// says itself in one line with the bytes first, and the check's
// contributors are its buffers, each with its own size.
TEST(FindingsTest, MissedDonationPointsAtTheCallAndNamesItsBuffersSizes) {
  const auto json = Hlomem("report --format json --module '^jit_train_step$' " + kLast40);
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& f = j["modules"][0]["findings"][0];
  ASSERT_EQ(f["detector"], "missed-donation");
  // train_mlp.py:51 is `params = train_step(params, ...)`; the forward
  // lines (28-30) are inside the step.
  EXPECT_EQ(f["source"]["line"], 51) << f.dump();
  const std::string summary = f["summary"];
  EXPECT_EQ(summary.rfind("2.55MiB: 6 inputs of train_step not donated (params)", 0), 0u) << summary;
  EXPECT_LT(summary.size(), 120u);
  EXPECT_GT(f["message"].get<std::string>().size(), summary.size());

  const auto check = Hlomem("check --fail-on missed-donation --module '^jit_train_step$' " + kLast40);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  const std::vector<std::string> fail = LinesMatching(check.out, "^FAIL");
  ASSERT_FALSE(fail.empty()) << check.out;
  EXPECT_LT(fail[0].size(), 200u) << fail[0];
  EXPECT_THAT(fail[0], HasSubstr("[missed-donation] 2.55MiB: 6 inputs"));
  // The contributors: the largest buffers of the finding, at their sizes.
  EXPECT_THAT(check.out, Not(HasSubstr("2.55MiB  params[0]['b']")));
  EXPECT_THAT(check.out, HasSubstr("1.53MiB  params[0]['w']")) << check.out;
}

// issue 30, item 12: a buffer whose shape changed (a larger batch) is
// grown, with its old shape, not new and gone.
TEST(DiffShapesTest, AChangedShapeIsGrownNotNewAndGone) {
  const auto run = Hlomem("diff --format json --module '^jit_train_step$' " + kLast40 + " " + kBatch128);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  int reshaped = 0;
  for (const auto& m : j["modules"]) {
    for (const auto& c : m["changes"]) {
      if (c["shape_from"] == "") continue;
      ++reshaped;
      EXPECT_NE(c["shape_from"], c["shape"]);
      EXPECT_TRUE(c["change"] == "grown" || c["change"] == "shrunk") << c.dump();
    }
  }
  EXPECT_GT(reshaped, 0) << run.out;
  const auto text = Hlomem("diff --module '^jit_train_step$' " + kLast40 + " " + kBatch128);
  EXPECT_THAT(text.out, HasSubstr("(was f32[64,"));
}

}  // namespace
