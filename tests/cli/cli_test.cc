// Runs the hlomem binary as a user would and checks what it prints, its exit
// codes and the files it writes.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_path.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::testing::HasSubstr;

// Runs `hlomem ARGS` with stderr merged into stdout.
hlomem::testing::CommandOutput Hlomem(const std::string& args) {
  return hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " " + args + " 2>&1");
}

const std::string kTestdata = HLOMEM_TESTDATA_DIR;
const std::string kSeedGrads = kTestdata + "/jax/seed_gather_grad_int32_grads";

TEST(CliTest, VersionNamesTheSchema) {
  const auto run = Hlomem("--version");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("JSON schema version 2"));
}

// --stats: one table on stderr, the analysis split into its steps (in the
// order they run, before the analysis's own total), the seconds column
// aligned however long a step's name is.
TEST(CliTest, StatsSplitTheParseAndTheAnalysisIntoTheirStepsInOneAlignedTable) {
  const auto run = Hlomem("report --stats --format json -o /dev/null " + kSeedGrads);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::vector<std::string> lines;
  std::istringstream in(run.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  ASSERT_EQ(lines[0].rfind("phase ", 0), 0u) << run.out;
  const size_t seconds_end = lines[0].find("seconds") + std::string("seconds").size();
  const std::vector<std::string> phases = {
      "parse: derived tables", "parse: verify",         "parse ",
      "analyze: dataflow",     "analyze: live ranges",  "analyze: global buffers",
      "analyze: heap",         "analyze: temps, stats", "analyze: profile",
      "analyze ",              "detect",                "write",
      "total"};
  size_t next = 1;
  for (const std::string& phase : phases) {
    while (next < lines.size() && lines[next].rfind(phase, 0) != 0) ++next;
    ASSERT_LT(next, lines.size()) << "no '" << phase << "' line after the one before it:\n" << run.out;
    const std::string& line = lines[next];
    ASSERT_GT(line.size(), seconds_end) << line;
    // "0.012" ends where the header's "seconds" does.
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[seconds_end - 1]))) << line;
    EXPECT_EQ(line[seconds_end], ' ') << line;
  }
  // The faults column: the process has touched fresh pages by the end (its
  // own start-up at least), and a phase's count is a whole number.
  ASSERT_NE(lines[0].find("faults"), std::string::npos) << lines[0];
  ASSERT_LT(lines[0].find("calls"), lines[0].find("faults")) << lines[0];
  const size_t faults_end = lines[0].find("faults") + std::string("faults").size();
  const std::string& total = lines[next];
  ASSERT_GT(total.size(), faults_end) << total;
  const size_t faults_begin = total.find_last_of(' ', faults_end - 1) + 1;
  const std::string faults = total.substr(faults_begin, faults_end - faults_begin);
  ASSERT_FALSE(faults.empty()) << total;
  EXPECT_TRUE(std::all_of(faults.begin(), faults.end(), ::isdigit)) << total;
  EXPECT_GT(std::stoll(faults), 0) << total;
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  const auto run = Hlomem("report --frobnicate " + kSeedGrads);
  EXPECT_EQ(run.exit_code, 2);
}

TEST(CliTest, MissingPathIsBadInput) {
  const auto run = Hlomem("report /nonexistent/dump");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("/nonexistent/dump"));
}

TEST(CliTest, JsonReportOfTheSeedCaseMatchesXla) {
  const auto run = Hlomem("report --format json " + kSeedGrads);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 2);
  ASSERT_EQ(j["modules"].size(), 1u);
  const auto& m = j["modules"][0];
  EXPECT_EQ(m["name"], "jit_function_using_idx");
  EXPECT_EQ(m["backend"], "cpu");
  EXPECT_EQ(m["scheduled"], true);
  // jax-ml/jax#30015: "Total bytes used: 240526557204" with the jax of July 2025.
  EXPECT_EQ(m["computed"]["total_bytes"], 240526557204);
  EXPECT_EQ(m["xla"]["total_bytes"], 240526557204);
  EXPECT_EQ(m["computed"]["exact"], true);
  // idx: s32[2048^3, 3] = 96 GiB; temp: its 96 GiB copy + 32 GiB of 2.5s.
  EXPECT_EQ(m["computed"]["argument_bytes"], 103079215104);
  EXPECT_EQ(m["computed"]["temp_bytes"], 103079215104 + 34359738368);
  EXPECT_EQ(m["computed"]["output_bytes"], 8388608);
  EXPECT_EQ(m["computed"]["alias_bytes"], 0);
  EXPECT_TRUE(m["mismatches"].empty());
  EXPECT_TRUE(m["findings"].is_array());
  ASSERT_FALSE(m["timeline"].empty());
  EXPECT_EQ(m["timeline"][m["peak_step"].get<size_t>()], m["computed"]["peak_live_bytes"]);
  // The 96 GiB copy of the index array is a temp created at seed.py:15.
  bool found_copy = false;
  for (const auto& b : m["buffers"]) {
    if (b["bytes"] == 103079215104 && b["kind"] == "temp") {
      found_copy = true;
      EXPECT_EQ(b["source"]["line"], 15);
      EXPECT_THAT(b["op_name"].get<std::string>(), HasSubstr("concatenate"));
    }
  }
  EXPECT_TRUE(found_copy);
}

TEST(CliTest, OutputFileIsWrittenWhole) {
  const std::string path = hlomem::testing::TempPath("report.json");
  std::remove(path.c_str());
  const auto run = Hlomem("report --format json -o " + path + " " + kSeedGrads);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out, "");
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_NO_THROW(nlohmann::json::parse(contents.str()));
}

TEST(CliTest, TextReportShowsXlaBesideHlomem) {
  const auto run = Hlomem("report --no-color " + kSeedGrads);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("224.01GiB"));
  EXPECT_THAT(run.out, HasSubstr("matches"));
  EXPECT_THAT(run.out, HasSubstr("seed.py:15"));
}

TEST(CliTest, ParseErrorIsLocated) {
  const std::string path = hlomem::testing::TempPath("bad.hlo");
  std::ofstream(path) << "HloModule m\nENTRY e {\n  ROOT a = f32[] add(x, x)\n}\n";
  const auto run = Hlomem("parse " + path);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr(path + ":3:22: error: use of undefined instruction 'x'"));
}

}  // namespace

namespace {

TEST(CliTest, BaselineOfAnotherProgramIsBadInput) {
  const std::string baseline = hlomem::testing::TempPath("baseline-other.json");
  ASSERT_EQ(Hlomem("report --format json -o " + baseline + " " + kSeedGrads).exit_code, 0);
  // One module on each side with different names: never compared.
  const auto run = Hlomem("check --baseline " + baseline + " " + kTestdata + "/jax/argmax");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("no counterpart"));
  EXPECT_THAT(run.out, HasSubstr("only in the baseline: jit_function_using_idx"));
  // The same program passes against itself.
  EXPECT_EQ(Hlomem("check --baseline " + baseline + " " + kSeedGrads).exit_code, 0);
}

}  // namespace

namespace {

TEST(CliTest, OutOfRangeValuesStateTheRangePlainly) {
  const auto top = Hlomem("report --top -1 " + kSeedGrads);
  EXPECT_EQ(top.exit_code, 2);
  EXPECT_THAT(top.out, HasSubstr("--top: must be at least 1, not -1"));
  EXPECT_LT(top.out.size(), 200u) << top.out;  // no 300-digit bound
  const auto tolerance = Hlomem("check --max-total 1G --tolerance -3 " + kSeedGrads);
  EXPECT_EQ(tolerance.exit_code, 2);
  EXPECT_THAT(tolerance.out, HasSubstr("--tolerance: must be at least 0, not -3"));
}

}  // namespace

namespace {

TEST(CliTest, SeveralModulesGetAnIndexAndTheLargestComesFirst) {
  const std::string small = kTestdata + "/jax/argmax";
  const auto run = Hlomem("report " + small + " " + kSeedGrads);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("2 modules"));
  // The 224 GiB gradient first, though it was named second.
  const size_t big = run.out.find("module jit_function_using_idx");
  const size_t little = run.out.find("module jit_argmax_both");
  ASSERT_NE(big, std::string::npos);
  ASSERT_NE(little, std::string::npos);
  EXPECT_LT(big, little);
  const auto dump_order = Hlomem("report --sort dump " + small + " " + kSeedGrads);
  EXPECT_LT(dump_order.out.find("module jit_argmax_both"), dump_order.out.find("module jit_function_using_idx"));
  const auto html = Hlomem("report --format html " + small + " " + kSeedGrads);
  EXPECT_THAT(html.out, HasSubstr("<nav class=modules><b>2 modules</b>"));
  EXPECT_THAT(html.out, HasSubstr("<a href=\"#module-0\">jit_function_using_idx</a>"));
  EXPECT_THAT(html.out, HasSubstr("<h2 id=\"module-1\">jit_argmax_both</h2>"));
}

}  // namespace

namespace {

// A baseline of the seed case with its figures 3% smaller: the dump grew 3%.
std::string GrownBaseline() {
  const std::string path = hlomem::testing::TempPath("baseline-grown.json");
  EXPECT_EQ(Hlomem("report --format json -o " + path + " " + kSeedGrads).exit_code, 0);
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto& m : j["modules"]) {
    for (const char* key : {"total_bytes", "temp_bytes", "peak_live_bytes"}) {
      m["computed"][key] = m["computed"][key].get<int64_t>() * 100 / 103;
    }
  }
  std::ofstream(path) << j.dump();
  return path;
}

TEST(CliTest, ToleranceTakesThePercentSign) {
  const std::string baseline = GrownBaseline();
  const std::string check = "check --baseline " + baseline + " " + kSeedGrads;
  EXPECT_EQ(Hlomem(check).exit_code, 1);
  for (const char* tolerance : {"5", "5%", "'5 %'", "' 5% '", "5.5"}) {
    const auto run = Hlomem(check + " --tolerance " + tolerance);
    EXPECT_EQ(run.exit_code, 0) << tolerance << ": " << run.out;
  }
  // The value is the one given, sign or not: 2% is less than the growth.
  const auto tight = Hlomem(check + " --tolerance 2%");
  EXPECT_EQ(tight.exit_code, 1) << tight.out;
  EXPECT_THAT(tight.out, HasSubstr("grew"));
  for (const char* bad : {"5%%", "abc", "nan", "''"}) {
    const auto run = Hlomem(check + " --tolerance " + bad);
    EXPECT_EQ(run.exit_code, 2) << bad << ": " << run.out;
    EXPECT_THAT(run.out, HasSubstr("error: --tolerance: expected a percentage such as 5 or 5%, not '"));
  }
}

TEST(CliTest, ToleranceWithoutABaselineIsBadInput) {
  for (const char* tolerance : {"5%", "0"}) {
    const auto run = Hlomem(std::string("check --max-total 1T --tolerance ") + tolerance + " " + kSeedGrads);
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_THAT(run.out, HasSubstr("error: --tolerance applies to growth over --baseline"));
  }
}

}  // namespace
