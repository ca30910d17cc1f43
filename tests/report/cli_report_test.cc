// The report, diff, check and capture commands as CI runs them: exit codes,
// stdout/stderr separation, files written.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/common/run_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using ::hlomem::report::testing::ChdirToRepoRoot;
using ::hlomem::report::testing::ReadFileOrDie;
using ::hlomem::report::testing::TempPath;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

struct CommandRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `[env] hlomem ARGS` from the repository root.
CommandRun Hlomem(const std::string& args, const std::string& env = "") {
  ChdirToRepoRoot();
  const std::string err_path = TempPath("stderr.txt");
  const std::string command = env + " " + HLOMEM_BINARY + " " + args + " 2>" + err_path;
  const hlomem::testing::CommandOutput output = hlomem::testing::RunCommand(command);
  CommandRun run;
  run.exit_code = output.exit_code;
  run.out = output.out;
  run.err = ReadFileOrDie(err_path);
  return run;
}

const std::string kGrads = "testdata/jax/seed_gather_grad_int32_grads";
const std::string kNoGrads = "testdata/jax/seed_gather_grad_int32_nograds";

std::string WriteBaseline(const std::string& dump, const std::string& name) {
  const std::string path = TempPath(name + ".json");
  const CommandRun run = Hlomem("report --format json -o " + path + " " + dump);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return path;
}

TEST(CheckCliTest, OverBudgetFailsWithModuleNumberLimitAndContributors) {
  const CommandRun run = Hlomem("check --max-temp 80GiB " + kGrads);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("FAIL  jit_function_using_idx: temp 128.00GiB (137438953472 B) (XLA's) exceeds "
                                 "--max-temp 80.00GiB (85899345920 B) by 48.00GiB"));
  EXPECT_THAT(run.out, HasSubstr("96.00GiB  jit(function_using_idx)/jvp()/concatenate  s32[8589934592,3]  "
                                 "tools/programs/seed.py:15"));
  EXPECT_THAT(run.out, HasSubstr("check FAILED: 1 violation"));
}

TEST(CheckCliTest, WithinBudgetPasses) {
  const CommandRun run = Hlomem("check --max-total 250GiB --max-temp 1.5e11 --max-peak 240526557204 " + kGrads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("check passed"));
}

TEST(CheckCliTest, BaselineGrowthBeyondToleranceFails) {
  const std::string baseline = WriteBaseline(kNoGrads, "nograds");
  const CommandRun run = Hlomem("check --baseline " + baseline + " --tolerance 5 " + kGrads);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("temp grew 95.00GiB over the baseline"));
  // The growth is attributed to the new index copy.
  EXPECT_THAT(run.out, HasSubstr("96.00GiB  jit(function_using_idx)/jvp()/concatenate"));
}

TEST(CheckCliTest, BaselineOfItselfPasses) {
  const std::string baseline = WriteBaseline(kGrads, "grads");
  const CommandRun run = Hlomem("check --baseline " + baseline + " " + kGrads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST(CheckCliTest, BadFlagsAndInputsAreUsageErrors) {
  EXPECT_EQ(Hlomem("check --max-temp 80XB " + kGrads).exit_code, 2);
  EXPECT_EQ(Hlomem("check --frobnicate " + kGrads).exit_code, 2);
  EXPECT_EQ(Hlomem("check " + kGrads).exit_code, 2);  // no gate
  EXPECT_EQ(Hlomem("check --fail-on no-such-detector " + kGrads).exit_code, 2);
  EXPECT_EQ(Hlomem("check --baseline /nonexistent.json --max-temp 1 " + kGrads).exit_code, 2);
  EXPECT_EQ(Hlomem("check --max-temp 80GiB /nonexistent/dump").exit_code, 2);
  EXPECT_EQ(Hlomem("check --device h900 " + kGrads).exit_code, 2);
}

TEST(CheckCliTest, FailOnADetectorFails) {
  const CommandRun run = Hlomem("check --fail-on duplicate-buffer " + kGrads);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("[duplicate-buffer]"));
}

TEST(CheckCliTest, DeviceFitVerdicts) {
  // 129.01GiB on a 141 GiB H200: fits with all of it, not with JAX's 75%.
  EXPECT_EQ(Hlomem("check --device h200-141gb --mem-fraction 1 " + kNoGrads).exit_code, 0);
  const CommandRun tight = Hlomem("check --device h200-141gb " + kNoGrads);
  EXPECT_EQ(tight.exit_code, 1);
  // 0.75 of the 139.93 GiB CUDA reports for an H200 (an estimate).
  EXPECT_THAT(tight.out, HasSubstr("does not fit on h200-141gb by 24.06GiB"));
  EXPECT_THAT(tight.out, HasSubstr("usable 104.95GiB (112689414144 B) from the h200-141gb preset (75% of "
                                   "139.93GiB, estimated)"));
  const CommandRun env = Hlomem("check --device h200-141gb " + kNoGrads, "XLA_PYTHON_CLIENT_MEM_FRACTION=.95");
  EXPECT_EQ(env.exit_code, 0) << env.out;
  const CommandRun report = Hlomem("report --no-color --device h100-80gb " + kGrads);
  EXPECT_THAT(report.out, HasSubstr("does not fit by 164.62GiB"));
  EXPECT_THAT(report.out, HasSubstr("device memory: h100-80gb: 79.18GiB (85018542080 B), measured: "));
  EXPECT_THAT(report.out, HasSubstr("fix: "));
}

TEST(CheckCliTest, GithubAnnotationsGoToStderrAndTheSummaryToTheStepSummary) {
  const std::string summary = TempPath("step_summary.md");
  std::remove(summary.c_str());
  const CommandRun run = Hlomem("check --github --max-temp 80GiB --fail-on all " + kGrads,
                         "GITHUB_STEP_SUMMARY=" + summary + " GITHUB_WORKSPACE=/nowhere");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("::error file=tools/programs/seed.py,line=15,title=hlomem max-temp::"));
  EXPECT_THAT(run.out, Not(HasSubstr("::error")));
  const std::string markdown = ReadFileOrDie(summary);
  EXPECT_THAT(markdown, StartsWith("## hlomem check: ❌ failed"));
  EXPECT_LT(markdown.size(), 1u << 20);
}

TEST(CheckCliTest, SarifIsWrittenForCodeScanning) {
  const std::string path = TempPath("hlomem.sarif");
  std::remove(path.c_str());
  const CommandRun run = Hlomem("check --max-temp 80GiB --sarif " + path + " " + kGrads);
  EXPECT_EQ(run.exit_code, 1);
  const nlohmann::json sarif = nlohmann::json::parse(ReadFileOrDie(path));
  EXPECT_EQ(sarif["version"], "2.1.0");
  const auto& results = sarif["runs"][0]["results"];
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results[0]["ruleId"], "max-temp");
  EXPECT_EQ(results[0]["level"], "error");
  const auto& location = results[0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(location["artifactLocation"]["uri"], "tools/programs/seed.py");
  EXPECT_EQ(location["region"]["startLine"], 15);
  EXPECT_FALSE(results[0]["partialFingerprints"]["hlomem/v1"].get<std::string>().empty());
  EXPECT_EQ(sarif["runs"][0]["tool"]["driver"]["rules"][results[0]["ruleIndex"].get<int>()]["id"],
            "max-temp");
}

TEST(DiffCliTest, SeedPairJsonPutsTheIndexCopyFirst) {
  const CommandRun run = Hlomem("diff --format json " + kNoGrads + " " + kGrads);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  const auto& first = j["modules"][0]["changes"][0];
  EXPECT_EQ(first["change"], "new");
  EXPECT_EQ(first["delta_bytes"], 103079215104);
  EXPECT_EQ(first["source"], "tools/programs/seed.py:15");
  EXPECT_EQ(j["modules"][0]["delta"]["total_bytes"], 240526557204 - 138521083996);
}

TEST(DiffCliTest, ReportsJsonDiffLikeTheirDumps) {
  const std::string a = WriteBaseline(kNoGrads, "a");
  const std::string b = WriteBaseline(kGrads, "b");
  const CommandRun from_json = Hlomem("diff --no-color " + a + " " + b);
  const CommandRun from_dumps = Hlomem("diff --no-color " + kNoGrads + " " + kGrads);
  ASSERT_EQ(from_json.exit_code, 0) << from_json.err;
  EXPECT_EQ(from_json.out, from_dumps.out);
}

TEST(ReportCliTest, EveryFormatWritesAtomicallyToAFile) {
  for (const char* format : {"text", "json", "markdown", "csv", "html"}) {
    const std::string path = TempPath(std::string("report.") + format);
    std::remove(path.c_str());
    const CommandRun run = Hlomem(std::string("report --format ") + format + " -o " + path + " " + kGrads);
    EXPECT_EQ(run.exit_code, 0) << format << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_FALSE(ReadFileOrDie(path).empty()) << format;
  }
  EXPECT_EQ(Hlomem("report --format yaml " + kGrads).exit_code, 2);
}

TEST(ReportCliTest, NoColorWhenNotATerminal) {
  const CommandRun run = Hlomem("report " + kGrads);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, Not(HasSubstr("\x1b[")));
}

// A fake "training program": copies a committed dump into the directory
// its XLA_FLAGS names, and records the flags it was given.
std::string WriteFakeProgram() {
  const std::string path = TempPath("fake_train.sh");
  std::ofstream(path) << "#!/bin/sh\n"
                         "dir=$(printf '%s\\n' $XLA_FLAGS | sed -n 's/^--xla_dump_to=//p' | tail -n 1)\n"
                         "printf '%s\\n' \"$XLA_FLAGS\" > \"$FAKE_FLAGS_OUT\"\n"
                         "src=${FAKE_DUMP:-testdata/jax/seed_gather_grad_int32_grads/*.cpu_after_optimizations.txt}\n"
                         "cp $src \"$dir\"/\n"
                         "if [ -n \"$FAKE_STDERR\" ]; then cat \"$FAKE_STDERR\" >&2; fi\n"
                         "exit \"${FAKE_EXIT:-0}\"\n";
  return path;
}

TEST(CaptureCliTest, RunsTheCommandWithDumpFlagsAndReports) {
  const std::string dir = TempPath("capture_dump");
  const std::string flags_out = TempPath("captured_flags.txt");
  std::system(("rm -rf " + dir).c_str());
  const CommandRun run = Hlomem("capture --dir " + dir + " --format json -- sh " + WriteFakeProgram(),
                         "FAKE_FLAGS_OUT=" + flags_out + " XLA_FLAGS='--xla_cpu_enable_fast_math=false'");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(ReadFileOrDie(flags_out), "--xla_cpu_enable_fast_math=false --xla_dump_to=" + dir +
                                          " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto\n");
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["modules"][0]["computed"]["total_bytes"], 240526557204);
  EXPECT_THAT(run.err, HasSubstr("dump in " + dir));
}

TEST(CaptureCliTest, AFailedCommandStillReportsAndAnEmptyDumpIsAnError) {
  const std::string dir = TempPath("capture_failed");
  std::system(("rm -rf " + dir).c_str());
  const std::string flags_out = TempPath("captured_flags2.txt");
  const CommandRun failed = Hlomem("capture --dir " + dir + " -- sh " + WriteFakeProgram(),
                            "FAKE_FLAGS_OUT=" + flags_out + " FAKE_EXIT=3");
  EXPECT_EQ(failed.exit_code, 3) << failed.err;  // the command's failure is the capture's
  EXPECT_THAT(failed.err, HasSubstr("exited with status 3"));
  EXPECT_THAT(failed.out, HasSubstr("224.01GiB"));
  const CommandRun nothing = Hlomem("capture --dir " + TempPath("capture_empty") + " -- true");
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(nothing.err, HasSubstr("the command wrote no XLA dump"));
  // Without --dir the dump goes to a folder of the temp dir, which is not
  // left behind empty.
  const std::string tmp = TempPath("capture_tmpdir");
  std::system(("rm -rf " + tmp + " && mkdir -p " + tmp).c_str());
  EXPECT_EQ(Hlomem("capture -- true", "TMPDIR=" + tmp).exit_code, 2);
  EXPECT_EQ(std::system(("test -z \"$(ls -A " + tmp + ")\"").c_str()), 0) << "left in " << tmp;
  EXPECT_EQ(Hlomem("capture --dir /tmp/x").exit_code, 2);  // no command
}

TEST(CaptureCliTest, AnOutOfMemoryErrorInTheOutputIsExplained) {
  // XLA:TPU's real E1000 and the dump it wrote with it (deviceless v5e).
  const std::string oom_case = "testdata/accel/tpu_v5e/oom_mlp_adam_over";
  const std::string dir = TempPath("capture_oom");
  std::system(("rm -rf " + dir).c_str());
  const CommandRun run = Hlomem("capture --dir " + dir + " -- sh " + WriteFakeProgram(),
                                "FAKE_FLAGS_OUT=" + TempPath("captured_flags3.txt") + " FAKE_DUMP='" +
                                    oom_case + "/module_*' FAKE_STDERR=" + oom_case +
                                    "/error.txt FAKE_EXIT=1");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  // The command's stderr still reaches the user, and the error is explained.
  EXPECT_THAT(run.err, HasSubstr("E1000: CompileTimeHbmOom"));
  EXPECT_THAT(run.err, HasSubstr("the command ran out of memory; explaining it"));
  EXPECT_THAT(run.out, HasSubstr("needed 20.75GiB, available 15.75GiB"));
  EXPECT_THAT(run.out, HasSubstr("by XLA's buffer assignment; this is the error's figure"));
  EXPECT_THAT(run.out, HasSubstr("Fixes, ranked by what they free at the peak"));
}

}  // namespace
}  // namespace hlomem::report
