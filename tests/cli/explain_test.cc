// `hlomem explain` on real out-of-memory errors: XLA:TPU's E1000 from a
// deviceless v5e compile, with the dump XLA wrote beside it.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/run_command.h"
#include "tests/common/temp_path.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

hlomem::testing::CommandOutput Hlomem(const std::string& args) {
  return hlomem::testing::RunCommand(std::string(HLOMEM_BINARY) + " " + args + " 2>&1");
}

const std::string kTestdata = HLOMEM_TESTDATA_DIR;
const std::string kOverCase = kTestdata + "/accel/tpu_v5e/oom_mlp_adam_over";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// XLA's HBM (colour 0) allocations summed, read from its own file.
int64_t XlaHbmBytes(const std::string& dir) {
  const std::string command = "ls " + dir + "/*after_optimizations-buffer-assignment.txt";
  const auto listed = hlomem::testing::RunCommand(command);
  const std::string path = listed.out.substr(0, listed.out.find('\n'));
  const std::string text = ReadFile(path);
  const std::regex allocation(R"(allocation \d+: size (\d+)(, color (\d+))?)");
  int64_t sum = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), allocation), end; it != end; ++it) {
    if (!(*it)[3].matched || (*it)[3].str() == "0") sum += std::stoll((*it)[1].str());
  }
  return sum;
}

TEST(ExplainTest, CompileTimeHbmOomGivesXlasFiguresThePeakAndTheShortfall) {
  const auto run = Hlomem("explain " + kOverCase + "/error.txt " + kOverCase);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const int64_t hbm = XlaHbmBytes(kOverCase);
  ASSERT_GT(hbm, 0);
  // The error's figures, and the program's HBM by XLA's own assignment.
  EXPECT_THAT(run.out, HasSubstr("needed 20.75GiB, available 15.75GiB"));
  EXPECT_THAT(run.out, HasSubstr("(" + std::to_string(hbm) + " B) by XLA's buffer assignment; this is "
                                 "the error's figure"));
  // v5e offers a program 15.75 GiB: the shortfall is the rest, to the byte.
  const int64_t v5e_limit = 15.75 * (int64_t{1} << 30);
  EXPECT_THAT(run.out, HasSubstr("(" + std::to_string(hbm - v5e_limit) + " B) less to fit")) << run.out;
  // What is live at the peak, on the user's lines.
  EXPECT_THAT(run.out, HasSubstr("Buffers live at the peak"));
  EXPECT_THAT(run.out, HasSubstr("tools/programs/oom.py:36"));
  EXPECT_THAT(run.out, HasSubstr("the peak holds parameters"));
  EXPECT_THAT(run.out, HasSubstr("try: the program's inputs are most of the peak"));
}

TEST(ExplainTest, ReadsStdinAndWritesJson) {
  const auto run = Hlomem("explain --format json - " + kOverCase + " < " + kOverCase + "/error.txt");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  const auto& oom = j["modules"][0]["oom_error"];
  ASSERT_FALSE(oom.is_null());
  EXPECT_EQ(oom["code"], "E1000");
  EXPECT_EQ(oom["device_bytes"], XlaHbmBytes(kOverCase));
}

TEST(ExplainTest, WithoutADumpSaysHowToGetOne) {
  const auto run = Hlomem("explain " + kOverCase + "/error.txt");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("needed 20.75GiB, available 15.75GiB"));
  EXPECT_THAT(run.out, HasSubstr("hlomem capture -- python train.py"));
  EXPECT_THAT(run.out, HasSubstr("get_topology_desc"));
  EXPECT_THAT(run.out, Not(HasSubstr("what makes it")));
}

TEST(ExplainTest, AnErrorForAnotherModuleIsNamed) {
  const auto run = Hlomem("explain " + kOverCase + "/error.txt " + kTestdata +
                          "/jax/seed_gather_grad_int32_grads");
  // Nothing explained: exit 1.
  ASSERT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("no module of the dump is named jit_mlp_adam_train_step; it has: "
                                 "jit_function_using_idx"));
}

TEST(ExplainTest, TextWithoutAnOutOfMemoryErrorIsBadInput) {
  const auto run = Hlomem("explain " + kTestdata + "/jax/MANIFEST.json");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("no out-of-memory message found"));
  EXPECT_EQ(Hlomem("explain /nonexistent/error.txt").exit_code, 2);
}

TEST(ExplainTest, ARuntimeAllocationIsMatchedToTheProgramsAllocation) {
  // XLA:GPU's allocator message (stream_executor's "Out of memory while
  // trying to allocate N bytes.") for the size of the seed case's temp
  // allocation: explain names that allocation. The dump is real; the
  // message is written here, as GPU runtime errors cannot be made without
  // a GPU.
  const std::string error = hlomem::testing::TempPath("explain-runtime.txt");
  std::ofstream(error) << "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 137438953472 bytes.\n";
  const auto run = Hlomem("explain " + error + " " + kTestdata + "/jax/seed_gather_grad_int32_grads");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("The allocation that failed (128.00GiB)"));
  EXPECT_THAT(run.out, HasSubstr("the temp allocation"));
}

// The figures of a module of a dump, by name and order, from its JSON report.
struct ModuleFigures {
  std::string name;
  int64_t total = 0;
  int64_t temp = 0;
};
std::vector<ModuleFigures> ReportedFigures(const std::string& dump) {
  const auto run = Hlomem("report --format json " + dump);
  const std::string json = run.out.substr(run.out.find('{'));
  std::vector<ModuleFigures> out;
  const nlohmann::json report = nlohmann::json::parse(json);
  for (const auto& m : report["modules"]) {
    const auto& n = m["xla"].is_null() ? m["computed"] : m["xla"];
    out.push_back({m["name"], n["total_bytes"], n["temp_bytes"]});
  }
  return out;
}

std::string WriteGpuError(const std::string& name, int64_t bytes) {
  const std::string error = hlomem::testing::TempPath("explain-" + name + ".txt");
  std::ofstream(error) << "Out of memory while trying to allocate " << bytes << " bytes.\n";
  return error;
}

TEST(ExplainTest, AOneLineGpuErrorIsTiedToTheModuleOfItsSize) {
  // XLA:GPU's one line names no module; of a 23-module dump, the one
  // module whose temp (or total) is the error's size is explained.
  const std::string dump = kTestdata + "/dumps/mlp_b64_last40";
  const std::vector<ModuleFigures> modules = ReportedFigures(dump);
  ASSERT_EQ(modules.size(), 23u);
  // The second jit_train_step: its temp, then its total, are each unique.
  const ModuleFigures& step = modules[2];
  ASSERT_EQ(step.name, "jit_train_step");
  for (const auto& [bytes, what] : {std::pair<int64_t, std::string>{step.temp, "temp allocation"},
                                    {step.total, "total"}}) {
    int same = 0;
    for (const ModuleFigures& m : modules) same += m.temp == bytes || m.total == bytes;
    ASSERT_EQ(same, 1) << bytes;
    const auto run = Hlomem("explain " + WriteGpuError("unique", bytes) + " " + dump);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_THAT(run.out, HasSubstr("module jit_train_step")) << run.out;
    EXPECT_THAT(run.out, HasSubstr("this one is taken because its " + what + " is the error's size"));
    EXPECT_THAT(run.out, HasSubstr("The allocation that failed"));
    EXPECT_THAT(run.out, Not(HasSubstr("no module of the dump")));
    EXPECT_THAT(run.out, Not(HasSubstr("other module")));
    const auto json = Hlomem("explain --format json " + WriteGpuError("unique", bytes) + " " + dump);
    ASSERT_EQ(json.exit_code, 0) << json.out;
    int explained = 0;
    const nlohmann::json report = nlohmann::json::parse(json.out);
    for (const auto& m : report["modules"]) {
      if (m["oom_error"].is_null()) continue;
      ++explained;
      EXPECT_EQ(m["oom_error"]["matched_by"], what == "total" ? "total" : "temp");
      EXPECT_EQ(m["name"], "jit_train_step");
    }
    EXPECT_EQ(explained, 1);
  }
}

TEST(ExplainTest, AGpuErrorMatchingSeveralModulesNamesThemAll) {
  // Three helper modules of the dump total 8 bytes.
  const std::string dump = kTestdata + "/dumps/mlp_b64_last40";
  const auto run = Hlomem("explain " + WriteGpuError("several", 8) + " " + dump);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("the size matches 2 other modules too, so the error may be any of them"));
}

TEST(ExplainTest, AGpuErrorMatchingNoModuleExplainsNothingAndExitsOne) {
  const std::string dump = kTestdata + "/dumps/mlp_b64_last40";
  const auto run = Hlomem("explain " + WriteGpuError("none", 70723216) + " " + dump);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("no module of the dump (23) has a temp allocation or a total of"));
  EXPECT_THAT(run.out, Not(HasSubstr("jit_broadcast_in_dim")));
  EXPECT_THAT(run.out, HasSubstr("nothing explained"));
}

TEST(DeviceFitTest, ACaveatOnlyWhenTheDumpIsForAnotherBackend) {
  // A TPU dump checked on its own chip: no caveat. A CPU dump on a GPU: one.
  const auto tpu = Hlomem("report --device v5e-16gb " + kOverCase);
  ASSERT_EQ(tpu.exit_code, 0) << tpu.out;
  EXPECT_THAT(tpu.out, HasSubstr("Device fit on v5e-16gb"));
  EXPECT_THAT(tpu.out, Not(HasSubstr("this dump was compiled for")));
  const auto cpu = Hlomem("report --device v5e-16gb " + kTestdata + "/jax/seed_gather_grad_int32_grads");
  EXPECT_THAT(cpu.out, HasSubstr("this dump was compiled for cpu, not for v5e-16gb"));
  EXPECT_THAT(cpu.out, HasSubstr("get_topology_desc(\"v5e:1x1\", platform=\"tpu\")"));
}

}  // namespace

namespace {

// The allocator's limit a GPU log states decides the device fit over the
// preset's, and explain measures the program against it. The dump is real
// (deviceless H100, XLA's total 60,792,342,936 B); the log is a run with
// XLA_PYTHON_CLIENT_MEM_FRACTION=.7 on the measured H100 (0.7 x
// 85,018,542,080 B), its lines in the form issue 27 recorded.
const std::string kGpuCase = kTestdata + "/accel/gpu_h100/oom_transformer_block_batch_over";

std::string WriteLog(const std::string& name, const std::string& text) {
  const std::string path = hlomem::testing::TempPath(name);
  std::ofstream(path) << text;
  return path;
}

const char kStartLine[] =
    "I0000 gpu_helpers.cc:136] XLA backend allocating 55.43GiB (59512979456 bytes) on device 0 for "
    "BFCAllocator\n";

TEST(AllocatorLimitCliTest, TheLogsLimitDecidesOverThePresetAndSaysSo) {
  // The preset alone: 56.62 GiB fits the H100's 59.38.
  EXPECT_EQ(Hlomem("check --device h100-80gb " + kGpuCase).exit_code, 0);
  const std::string log = WriteLog("hlomem-bfc-start.log", kStartLine);
  const auto check = Hlomem("check --device h100-80gb --error " + log + " " + kGpuCase);
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_THAT(check.out, HasSubstr("does not fit on h100-80gb by 1.19GiB (1279363480 B): needs 56.62GiB "
                                   "(60792342936 B) by XLA's buffer assignment, usable 55.43GiB (59512979456 B) "
                                   "from the log's BFCAllocator line (line 1), not the h100-80gb preset's "
                                   "59.38GiB (63763906560 B)"));
  // Without --device the log alone gives the verdict.
  const auto report = Hlomem("report --no-color --error " + log + " " + kGpuCase);
  ASSERT_EQ(report.exit_code, 0) << report.out;
  EXPECT_THAT(report.out, HasSubstr("Device fit on NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(report.out, HasSubstr("usable 55.43GiB (59512979456 B) from the log's BFCAllocator line (line 1)"));
  // The JSON says the same, in fields of its own.
  const auto json = Hlomem("report --format json --device h100-80gb --error " + log + " " + kGpuCase);
  ASSERT_EQ(json.exit_code, 0);
  const nlohmann::json fit = nlohmann::json::parse(json.out)["modules"][0]["device_fit"];
  EXPECT_EQ(fit["usable_bytes"], 59512979456);
  EXPECT_EQ(fit["usable_from_log"], "the log's BFCAllocator line (line 1)");
  EXPECT_EQ(fit["preset_usable_bytes"], 63763906560);
  EXPECT_EQ(fit["capacity_bytes"], 85018542080);
  EXPECT_EQ(fit["capacity_estimated"], false);
  EXPECT_FALSE(fit["fits"]);
}

TEST(AllocatorLimitCliTest, ExplainMeasuresTheProgramAgainstTheLogsLimit) {
  const std::string log = WriteLog(
      "hlomem-bfc-oom.log",
      std::string(kStartLine) +
          "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
          "60792342936 bytes.\n");
  const auto run = Hlomem("explain " + log + " " + kGpuCase);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("the allocator's limit: 55.43GiB (59512979456 B) from the log's BFCAllocator "
                                 "line (line 1)"));
  EXPECT_THAT(run.out, HasSubstr("the program's device memory is over it by 1.19GiB (1279363480 B)"));
  // A log with the limit but no error has nothing to explain.
  const auto none = Hlomem("explain " + WriteLog("hlomem-bfc-only.log", kStartLine));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.out, HasSubstr("no out-of-memory message found"));
}

TEST(ExplainTest, AGpuErrorWithoutADumpShowsXlasOwnPeakBuffers) {
  // XLA:GPU's error with the listing it prints (layout of jax-ml/jax#13428):
  // the lines behind the error come from the listing when there is no dump.
  const std::string error = hlomem::testing::TempPath("explain-gpu-listing.txt");
  std::ofstream(error)
      << "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.\n"
         "BufferAssignment OOM Debugging.\n"
         "BufferAssignment stats:\n"
         "                 total allocation:   12.00MiB\n"
         "Peak buffers:\n"
         "        Buffer 1:\n"
         "                Size: 6.00MiB\n"
         "                Operator: op_name=\"jit(f)/concatenate\" source_file=\"/work/models.py\" "
         "source_line=689\n"
         "                XLA Label: concatenate\n"
         "                Shape: f32[4096,128,3]\n";
  const auto run = Hlomem("explain " + error);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("printed with the error: total 12.00MiB"));
  EXPECT_THAT(run.out, HasSubstr("/work/models.py:689"));
  EXPECT_THAT(run.out, HasSubstr("f32[4096,128,3]"));
  const auto json = Hlomem("explain --format json " + error + " " + kTestdata +
                           "/jax/seed_gather_grad_int32_grads");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const auto& oom = j["modules"][0]["oom_error"];
  ASSERT_FALSE(oom.is_null());
  EXPECT_EQ(oom["listing"]["stats"]["total"], 12 << 20);
  EXPECT_EQ(oom["listing"]["peak_buffers"][0]["source"]["line"], 689);
}

}  // namespace

namespace {

// A real H100 80GB HBM3 (jax 0.11.2, default allocator settings): the step of
// tools/fit/programs.py:wide_mlp_train at 114,176 rows ran and at 114,432 rows
// failed, each with its dump, its stderr and the allocator's memory_stats
// (tools/fit/gpu_check.py wrote gpu_check.json on that machine).
const std::string kRealGpu = kTestdata + "/dumps/gpu_h100_real";

nlohmann::json RealRun(int value) {
  const nlohmann::json check = nlohmann::json::parse(ReadFile(kRealGpu + "/gpu_check.json"));
  for (const auto& run : check["run"]) {
    if (run["value"] == value) return run;
  }
  return nullptr;
}

TEST(RealGpuRunTest, TheComputedTotalIsTheAllocatorsPeakAndThePresetsVerdictIsTheRuns) {
  for (const auto& [value, rows] : std::vector<std::pair<int, int>>{{446, 114176}, {447, 114432}}) {
    const nlohmann::json run = RealRun(value);
    ASSERT_FALSE(run.is_null()) << value;
    ASSERT_EQ(run["rows"], rows);
    const std::string dump = kRealGpu + "/run_" + std::to_string(value);
    const auto json = Hlomem("report --format json " + dump);
    ASSERT_EQ(json.exit_code, 0) << json.out;
    const nlohmann::json module = nlohmann::json::parse(json.out)["modules"][0];
    const int64_t computed = module["computed"]["total_bytes"];
    EXPECT_EQ(computed, module["xla"]["total_bytes"]) << value;
    EXPECT_EQ(computed, run["total_bytes"]) << value;  // memory_analysis() on the card
    const bool ran = run["ran"];
    if (ran) {
      // What the allocator held at its peak: the program plus a few hundred bytes.
      const int64_t peak = run["stats_after"]["peak_bytes_in_use"];
      EXPECT_GE(peak, computed);
      EXPECT_LT(peak - computed, 1024);
    }
    EXPECT_EQ(run["stats_after"]["bytes_limit"], 63763906560);
    EXPECT_EQ(Hlomem("check --device h100-80gb " + dump).exit_code, ran ? 0 : 1) << value;
  }
}

TEST(RealGpuRunTest, ExplainReadsTheRealLogsLimitAndNamesTheFailedAllocation) {
  const std::string dump = kRealGpu + "/run_447";
  const auto run = Hlomem("explain --no-color " + dump + "/stderr.txt " + dump);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("one allocation of 46.91GiB (50365202432 B) failed"));
  EXPECT_THAT(run.out, HasSubstr("the allocator's limit: 59.38GiB (63763906560 B) from the log's BFCAllocator line"));
  EXPECT_THAT(run.out, HasSubstr("over it by 518.00MiB (543162392 B)"));
  EXPECT_THAT(run.out, HasSubstr("46.91GiB  the temp allocation"));
}

}  // namespace
