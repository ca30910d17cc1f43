// Runs the whole pipeline on the after-optimizations HLO alone (XLA's
// buffer assignment is not read) for every case of testdata/accel, real
// XLA:GPU and XLA:TPU compiles made without accelerators, and compares
// each memory space with the sum of XLA's allocations of that colour, and
// the device-fit verdict with XLA:TPU's own compile verdict.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/report/device.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/report.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

// How many TPU modules' HBM totals must match XLA byte for byte, and be
// within 0.5%, over the committed dumps. Raise them as the rules improve;
// the test fails if a change makes fewer cases exact.
constexpr int kTpuHbmExactFloor = 343;
constexpr int kTpuHbmCloseFloor = 343;
// The same for every memory space at once, for VMEM (colour 1) and v4's
// colour 3 (both placed by XLA:TPU's memory-space assignment), and for the
// memory_analysis() fields the dump determines (argument, output, alias,
// total allocation, peak) of the cases that have XLA's memory_analysis.json.
constexpr int kTpuEverySpaceExactFloor = 333;
constexpr int kTpuVmemExactFloor = 254;
constexpr int kTpuColor3ExactFloor = 79;
constexpr int kTpuMemoryAnalysisExactFloor = 310;

// The --device preset of each TPU target directory.
const std::map<std::string, std::string>& TpuPresets() {
  static const auto* presets = new std::map<std::string, std::string>{
      {"tpu_v4", "v4-32gb"}, {"tpu_v5e", "v5e-16gb"}, {"tpu_v5p", "v5p-95gb"}, {"tpu_v6e", "v6e-32gb"}};
  return *presets;
}

struct Case {
  std::string name;  // "tpu_v5e/argmax"
  std::string target;
  std::string hlo;
  std::string verdict;  // "fits" or "CompileTimeHbmOom"
  std::string directory;
  std::map<int64_t, int64_t> xla_by_color;
};

std::vector<Case> ReadCases() {
  const std::string root = HLOMEM_TESTDATA_DIR;
  std::ifstream in(root + "/accel/MANIFEST.json");
  EXPECT_TRUE(in) << "missing " << root << "/accel/MANIFEST.json";
  std::vector<Case> cases;
  if (!in) return cases;
  const nlohmann::json manifest = nlohmann::json::parse(in);
  for (const auto& c : manifest["cases"]) {
    if (!c["role_files"].contains("after_optimizations")) continue;
    Case one;
    one.target = c["target"];
    one.name = one.target + "/" + c["name"].get<std::string>();
    one.hlo = root + "/" + c["directory"].get<std::string>() + "/" +
              c["role_files"]["after_optimizations"].get<std::string>();
    one.verdict = c.value("verdict", "");
    one.directory = root + "/" + c["directory"].get<std::string>();
    for (const auto& [color, bytes] : c["xla_totals_by_color"].items()) {
      one.xla_by_color[std::stoll(color)] = bytes.get<int64_t>();
    }
    cases.push_back(std::move(one));
  }
  return cases;
}

// The report of one case from its HLO alone.
ModuleReport Analyze(const Case& c) {
  pipeline::ReportOptions options;
  options.load.read_xla_assignment = false;
  absl::StatusOr<Report> report = pipeline::BuildReport({c.hlo}, options);
  EXPECT_TRUE(report.ok()) << c.name << ": " << report.status().message();
  if (!report.ok() || report->modules.size() != 1) return ModuleReport();
  return std::move(report->modules[0]);
}

std::map<int64_t, int64_t> ComputedByColor(const ModuleReport& m) {
  std::map<int64_t, int64_t> out;
  for (const MemorySpaceTotals& s : m.memory_spaces) {
    if (s.computed_bytes && *s.computed_bytes != 0) out[s.color] = *s.computed_bytes;
  }
  return out;
}

std::map<int64_t, int64_t> NonZero(std::map<int64_t, int64_t> bytes) {
  for (auto it = bytes.begin(); it != bytes.end();) {
    it = it->second == 0 ? bytes.erase(it) : std::next(it);
  }
  return bytes;
}

class AccelGroundTruthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cases_ = new std::vector<Case>(ReadCases());
    reports_ = new std::vector<ModuleReport>();
    for (const Case& c : *cases_) reports_->push_back(Analyze(c));
  }
  static std::vector<Case>* cases_;
  static std::vector<ModuleReport>* reports_;
};
std::vector<Case>* AccelGroundTruthTest::cases_ = nullptr;
std::vector<ModuleReport>* AccelGroundTruthTest::reports_ = nullptr;

TEST_F(AccelGroundTruthTest, GpuEveryMemorySpaceMatchesXlaExactly) {
  int gpu = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    if (c.target.rfind("gpu_", 0) != 0) continue;
    ++gpu;
    const ModuleReport& m = (*reports_)[k];
    EXPECT_EQ(m.backend, "gpu") << c.name;
    EXPECT_EQ(ComputedByColor(m), NonZero(c.xla_by_color)) << c.name;
  }
  EXPECT_GE(gpu, 160);  // H100 and A100, the whole suite
}

TEST_F(AccelGroundTruthTest, TpuHbmMatchesXlaOnMostModulesAndScalarMemoriesOnAll) {
  int tpu = 0, hbm_exact = 0, hbm_close = 0;
  std::string misses;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    if (c.target.rfind("tpu_", 0) != 0) continue;
    ++tpu;
    const ModuleReport& m = (*reports_)[k];
    EXPECT_EQ(m.backend, "tpu") << c.name;
    std::map<int64_t, int64_t> computed = ComputedByColor(m);
    const std::map<int64_t, int64_t> xla = NonZero(c.xla_by_color);
    const int64_t hbm = computed[0];
    const int64_t xla_hbm = xla.count(0) ? xla.at(0) : 0;
    hbm_exact += hbm == xla_hbm;
    hbm_close += std::abs(static_cast<double>(hbm - xla_hbm)) <= 0.005 * static_cast<double>(xla_hbm);
    if (hbm != xla_hbm) absl::StrAppend(&misses, "  ", c.name, " ", hbm - xla_hbm, "\n");
    // SMEM (2) and the flag and semaphore colours (6, 8) are exact everywhere.
    for (int64_t color : {2, 6, 8}) {
      EXPECT_EQ(computed.count(color) ? computed[color] : 0,
                xla.count(color) ? xla.at(color) : 0)
          << c.name << " colour " << color;
    }
  }
  std::printf("TPU HBM: %d/%d exact, %d/%d within 0.5%%; misses:\n%s", hbm_exact, tpu, hbm_close,
              tpu, misses.c_str());
  EXPECT_GE(hbm_exact, kTpuHbmExactFloor);
  EXPECT_GE(hbm_close, kTpuHbmCloseFloor);
}

TEST_F(AccelGroundTruthTest, TpuMemorySpacesAndMemoryAnalysisMatchXlaOnMostModules) {
  int tpu = 0, every_space = 0, vmem = 0, vmem_exact = 0, color3 = 0, color3_exact = 0;
  int analyses = 0, analysis_exact = 0;
  std::string misses;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    if (c.target.rfind("tpu_", 0) != 0) continue;
    ++tpu;
    const ModuleReport& m = (*reports_)[k];
    std::map<int64_t, int64_t> computed = ComputedByColor(m);
    std::map<int64_t, int64_t> xla = NonZero(c.xla_by_color);
    every_space += computed == xla;
    // A space counts where either side has it, at 0 bytes too (as
    // tools/accel_accuracy.py counts).
    std::set<int64_t> present;
    for (const MemorySpaceTotals& s : m.memory_spaces) present.insert(s.color);
    for (const auto& [color, bytes] : c.xla_by_color) present.insert(color);
    for (auto [color, count, exact] : {std::tuple{1, &vmem, &vmem_exact},
                                       std::tuple{3, &color3, &color3_exact}}) {
      if (!present.count(color)) continue;
      ++*count;
      *exact += computed[color] == xla[color];
    }
    std::ifstream in(c.directory + "/memory_analysis.json");
    if (!in || !m.computed) continue;
    const nlohmann::json ma = nlohmann::json::parse(in);
    ++analyses;
    const MemoryNumbers& n = *m.computed;
    const bool exact = n.argument_bytes == ma["argument_size_in_bytes"].get<int64_t>() &&
                       n.output_bytes == ma["output_size_in_bytes"].get<int64_t>() &&
                       n.alias_bytes == ma["alias_size_in_bytes"].get<int64_t>() &&
                       n.total_bytes == ma["total_allocation_bytes"].get<int64_t>() &&
                       n.peak_memory_bytes == ma["peak_memory_in_bytes"].get<int64_t>();
    analysis_exact += exact;
    if (!exact) absl::StrAppend(&misses, "  ", c.name, "\n");
  }
  std::printf("TPU: every memory space %d/%d exact, VMEM %d/%d, colour 3 %d/%d, "
              "memory_analysis() %d/%d; memory_analysis() misses:\n%s",
              every_space, tpu, vmem_exact, vmem, color3_exact, color3, analysis_exact, analyses,
              misses.c_str());
  EXPECT_GE(analyses, 300);
  EXPECT_GE(every_space, kTpuEverySpaceExactFloor);
  EXPECT_GE(vmem_exact, kTpuVmemExactFloor);
  EXPECT_GE(color3_exact, kTpuColor3ExactFloor);
  EXPECT_GE(analysis_exact, kTpuMemoryAnalysisExactFloor);
}

TEST_F(AccelGroundTruthTest, TpuDeviceFitAgreesWithXlasCompileVerdict) {
  int checked = 0, out_of_memory = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    const auto preset = TpuPresets().find(c.target);
    if (preset == TpuPresets().end() || c.verdict.empty()) continue;
    DeviceRequest request;
    request.preset = preset->second;
    absl::StatusOr<std::optional<DeviceBudget>> budget = ResolveDevice(request);
    ASSERT_TRUE(budget.ok() && budget->has_value());
    Report report;
    report.modules.push_back((*reports_)[k]);
    ApplyDeviceFit(**budget, &report);
    ASSERT_TRUE(report.modules[0].device_fit.has_value()) << c.name;
    EXPECT_EQ(report.modules[0].device_fit->fits, c.verdict == "fits") << c.name;
    ++checked;
    out_of_memory += c.verdict != "fits";
  }
  EXPECT_GE(checked, 320);  // four TPU generations of the whole suite
  EXPECT_GE(out_of_memory, 5);  // the suite's OOM programs, both sides of the limit
}

// XLA:TPU's E1000 names the HBM its program needs; hlomem's HBM total from
// the HLO alone rounds to the same figure, and the OOM is explained.
TEST(AccelOomTest, CompileTimeHbmOomIsExplainedWithXlasFigures) {
  const std::string dir = std::string(HLOMEM_TESTDATA_DIR) + "/accel/tpu_v5e/oom_mlp_adam_edge_v5e_oom";
  std::ifstream in(dir + "/error.txt");
  ASSERT_TRUE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::vector<dump::XlaOomError>> errors = dump::ParseXlaOomErrors("error.txt", text);
  ASSERT_TRUE(errors.ok()) << errors.status().message();
  ASSERT_EQ(errors->size(), 1u);
  absl::StatusOr<Report> report = pipeline::BuildReport({dir}, pipeline::ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(ApplyOomErrors(std::move(*errors), &*report).empty());
  const ModuleReport& m = report->modules.at(0);
  ASSERT_TRUE(m.oom.has_value());
  EXPECT_EQ(m.oom->error.module_name, "jit_mlp_adam_train_step");
  EXPECT_EQ(m.oom->device_bytes_source, "xla");
  EXPECT_TRUE(m.oom->agrees);  // 15.751 GiB of HBM: "(15.75G)"
  ASSERT_TRUE(m.device_fit.has_value());
  EXPECT_FALSE(m.device_fit->fits);
  EXPECT_EQ(m.device_fit->usable, (int64_t{63} << 30) / 4);  // v5e: 15.75 GiB
  // hlomem's own HBM total is XLA's: no warning of a disagreement.
  EXPECT_FALSE(m.device_fit->computed_needed.has_value());
}

// Where the dump has XLA's assignment and a memory space differs, the
// difference is a finding (XLA's figures decide); where all agree, none.
TEST(AccelXlaDisagreementTest, ADifferingSpaceIsAFindingAndAgreementIsNot) {
  const std::string root = std::string(HLOMEM_TESTDATA_DIR) + "/accel/";
  absl::StatusOr<Report> differs =
      pipeline::BuildReport({root + "tpu_v5e/det_saved_activations_transformer_neg"}, pipeline::ReportOptions());
  ASSERT_TRUE(differs.ok()) << differs.status().message();
  const ModuleReport& m = differs->modules.at(0);
  int64_t expected = 0;
  for (const MemorySpaceTotals& s : m.memory_spaces) {
    expected += std::abs(s.computed_bytes.value_or(0) - s.xla_bytes.value_or(0));
  }
  ASSERT_GT(expected, 0);
  const auto finding = std::find_if(m.findings.begin(), m.findings.end(), [](const detect::Finding& f) {
    return f.detector == "xla-disagreement";
  });
  ASSERT_NE(finding, m.findings.end());
  EXPECT_EQ(finding->bytes, expected);
  EXPECT_THAT(finding->message, ::testing::HasSubstr("VMEM: hlomem"));

  absl::StatusOr<Report> agrees =
      pipeline::BuildReport({root + "gpu_h100/argmax"}, pipeline::ReportOptions());
  ASSERT_TRUE(agrees.ok()) << agrees.status().message();
  for (const detect::Finding& f : agrees->modules.at(0).findings) {
    EXPECT_NE(f.detector, "xla-disagreement") << f.message;
  }
}

// Every format shows a TPU module's memory spaces: the text, Markdown and
// HTML a table of them, the CSV and JSON each buffer's space.
TEST(AccelOutputsTest, EveryFormatNamesTheMemorySpaces) {
  const std::string dir = std::string(HLOMEM_TESTDATA_DIR) + "/accel/tpu_v5e/attention_long_seq";
  absl::StatusOr<Report> report = pipeline::BuildReport({dir}, pipeline::ReportOptions());
  ASSERT_TRUE(report.ok()) << report.status().message();
  const WriteOptions options;
  EXPECT_THAT(WriteText(*report, options), ::testing::HasSubstr("VMEM (on chip)           1"));
  EXPECT_THAT(WriteMarkdown(*report, options), ::testing::HasSubstr("| VMEM (on chip) | 1 |"));
  EXPECT_THAT(WriteReport(*report, Format::kHtml, options),
              ::testing::HasSubstr("<h3>Memory spaces</h3>"));
  const std::string csv = WriteCsv(*report);
  EXPECT_THAT(csv, ::testing::HasSubstr(",source_line,memory_space\n"));
  EXPECT_THAT(csv, ::testing::HasSubstr(",VMEM\n"));
  EXPECT_THAT(csv, ::testing::HasSubstr(",HBM\n"));
  EXPECT_THAT(WriteJson(*report, options), ::testing::HasSubstr("\"memory_space\": \"VMEM\""));
}

}  // namespace
}  // namespace hlomem::report
