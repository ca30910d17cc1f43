// Runs the whole pipeline on the after-optimizations HLO alone (XLA's
// buffer assignment is not read) for every case of testdata/accel, real
// XLA:GPU and XLA:TPU compiles made without accelerators, and compares
// each memory space with the sum of XLA's allocations of that colour, the
// memory_analysis() fields with XLA's memory_analysis.json, and the
// device-fit verdict with XLA:TPU's own compile verdict. Where hlomem is
// claimed exact every case must match; the figures that differ are listed
// in accel_known_diffs.txt, and any change to that list fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/report/device.h"
#include "lib/hlo/module.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/report.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

// The committed suite: a case added to or lost from testdata/accel changes
// these, and the tests say so.
constexpr int kGpuModules = 175;  // H100 and A100
constexpr int kTpuModules = 343;  // v4, v5e, v5p and v6e
constexpr int kTpuMemoryAnalyses = 310;
constexpr int kTpuOutOfMemory = 33;

// The memory_analysis() fields the dump determines, per backend, and
// hlomem's figure for each. XLA:TPU's temp_size_in_bytes is not its buffer
// assignment's temp, so it is not compared (as tools/accel_accuracy.py).
struct AnalysisField {
  const char* xla;
  int64_t (*computed)(const MemoryNumbers&);
};
std::vector<AnalysisField> AnalysisFields(absl::string_view backend) {
  std::vector<AnalysisField> fields = {
      {"argument_size_in_bytes", [](const MemoryNumbers& n) { return n.argument_bytes; }},
      {"output_size_in_bytes", [](const MemoryNumbers& n) { return n.output_bytes; }},
      {"alias_size_in_bytes", [](const MemoryNumbers& n) { return n.alias_bytes; }},
      {"peak_memory_in_bytes", [](const MemoryNumbers& n) { return n.peak_memory_bytes.value_or(-1); }}};
  if (backend == "gpu") {
    fields.push_back({"temp_size_in_bytes", [](const MemoryNumbers& n) { return n.temp_bytes; }});
  } else {
    fields.push_back({"total_allocation_bytes", [](const MemoryNumbers& n) { return n.total_bytes; }});
  }
  return fields;
}

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
  std::optional<nlohmann::json> memory_analysis;  // XLA's memory_analysis.json, where committed
};

// The cases of testdata/<suite>/MANIFEST.json: "accel", or "trainers" (real
// trainers' steps at the HBM edge, tools/gen_trainer_testdata.sh).
std::vector<Case> ReadCases(const std::string& suite) {
  const std::string root = HLOMEM_TESTDATA_DIR;
  std::ifstream in(root + "/" + suite + "/MANIFEST.json");
  EXPECT_TRUE(in) << "missing " << root << "/" << suite << "/MANIFEST.json";
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
    std::ifstream analysis(one.directory + "/memory_analysis.json");
    if (analysis) one.memory_analysis = nlohmann::json::parse(analysis);
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

// The cases of one suite and their reports from the HLO alone, made once
// for all of the suite's tests.
template <const char* kSuite>
class GroundTruthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cases_ = new std::vector<Case>(ReadCases(kSuite));
    reports_ = new std::vector<ModuleReport>();
    for (const Case& c : *cases_) reports_->push_back(Analyze(c));
  }
  static std::vector<Case>* cases_;
  static std::vector<ModuleReport>* reports_;
};
template <const char* kSuite>
std::vector<Case>* GroundTruthTest<kSuite>::cases_ = nullptr;
template <const char* kSuite>
std::vector<ModuleReport>* GroundTruthTest<kSuite>::reports_ = nullptr;

constexpr char kAccel[] = "accel";
using AccelGroundTruthTest = GroundTruthTest<kAccel>;

// The device fit of a TPU case on its generation's preset, from hlomem's
// figures; nullopt for a case without a preset or verdict.
std::optional<bool> FitsOnPreset(const Case& c, const ModuleReport& m) {
  const auto preset = TpuPresets().find(c.target);
  if (preset == TpuPresets().end() || c.verdict.empty()) return std::nullopt;
  DeviceRequest request;
  request.preset = preset->second;
  absl::StatusOr<std::optional<DeviceBudget>> budget = ResolveDevice(request);
  EXPECT_TRUE(budget.ok() && budget->has_value()) << c.name;
  if (!budget.ok() || !budget->has_value()) return std::nullopt;
  Report report;
  report.modules.push_back(m);
  ApplyDeviceFit(**budget, &report);
  EXPECT_TRUE(report.modules[0].device_fit.has_value()) << c.name;
  if (!report.modules[0].device_fit) return std::nullopt;
  return report.modules[0].device_fit->fits;
}

TEST_F(AccelGroundTruthTest, GpuEveryMemorySpaceAndMemoryAnalysisMatchXlaExactly) {
  int gpu = 0, analyses = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    if (c.target.rfind("gpu_", 0) != 0) continue;
    ++gpu;
    const ModuleReport& m = (*reports_)[k];
    EXPECT_EQ(m.backend, "gpu") << c.name;
    EXPECT_EQ(ComputedByColor(m), NonZero(c.xla_by_color)) << c.name;
    if (!c.memory_analysis) continue;
    ++analyses;
    ASSERT_TRUE(m.computed.has_value()) << c.name;
    for (const AnalysisField& f : AnalysisFields("gpu")) {
      EXPECT_EQ(f.computed(*m.computed), (*c.memory_analysis)[f.xla].get<int64_t>())
          << c.name << ": memory_analysis()." << f.xla;
    }
  }
  EXPECT_EQ(gpu, kGpuModules);
  EXPECT_EQ(analyses, kGpuModules);  // every GPU case has XLA's memory_analysis.json
}

// HBM, SMEM (2), the host flags (4) and the flag and semaphore colours (6 to
// 8) are exact on every TPU module, and so are the memory_analysis() fields
// the dump determines; VMEM and v4's colour 3 differ on a few, listed below.
TEST_F(AccelGroundTruthTest, TpuHbmScalarMemoriesAndMemoryAnalysisMatchXlaExactly) {
  int tpu = 0, analyses = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    if (c.target.rfind("tpu_", 0) != 0) continue;
    ++tpu;
    const ModuleReport& m = (*reports_)[k];
    EXPECT_EQ(m.backend, "tpu") << c.name;
    const std::map<int64_t, int64_t> computed = ComputedByColor(m);
    const std::map<int64_t, int64_t> xla = NonZero(c.xla_by_color);
    for (int64_t color : {0, 2, 4, 6, 7, 8}) {
      EXPECT_EQ(computed.count(color) ? computed.at(color) : 0, xla.count(color) ? xla.at(color) : 0)
          << c.name << " colour " << color;
    }
    if (!c.memory_analysis) continue;
    ++analyses;
    ASSERT_TRUE(m.computed.has_value()) << c.name;
    for (const AnalysisField& f : AnalysisFields("tpu")) {
      EXPECT_EQ(f.computed(*m.computed), (*c.memory_analysis)[f.xla].get<int64_t>())
          << c.name << ": memory_analysis()." << f.xla;
    }
  }
  EXPECT_EQ(tpu, kTpuModules);
  EXPECT_EQ(analyses, kTpuMemoryAnalyses);
}

// One line per figure where hlomem and XLA differ: every memory space of
// every case, and the memory_analysis() fields.
std::string DifferenceLine(const std::string& name, const std::string& what, std::optional<int64_t> hlomem,
                           int64_t xla) {
  if (!hlomem) return absl::StrCat(name, " ", what, " none ", xla);
  const double percent = xla == 0 ? 0 : 100.0 * static_cast<double>(*hlomem - xla) / static_cast<double>(xla);
  return absl::StrCat(name, " ", what, " ", *hlomem, " ", xla, " ", *hlomem - xla >= 0 ? "+" : "",
                      *hlomem - xla, " ", absl::StrFormat("%+.2f%%", percent));
}

std::vector<std::string> Differences(const Case& c, const ModuleReport& m) {
  std::vector<std::string> lines;
  std::map<int64_t, std::string> names;
  std::map<int64_t, int64_t> computed;
  for (const MemorySpaceTotals& s : m.memory_spaces) {
    names[s.color] = s.name;
    computed[s.color] = s.computed_bytes.value_or(0);
  }
  std::set<int64_t> colors;
  for (const auto& [color, bytes] : computed) colors.insert(color);
  for (const auto& [color, bytes] : c.xla_by_color) colors.insert(color);
  for (int64_t color : colors) {
    const int64_t ours = computed.count(color) ? computed.at(color) : 0;
    const int64_t theirs = c.xla_by_color.count(color) ? c.xla_by_color.at(color) : 0;
    if (ours == theirs) continue;
    std::string space = absl::StrCat("colour", color);
    if (names.count(color) && !names[color].empty()) {
      absl::StrAppend(&space, ":", absl::StrReplaceAll(names[color], {{" ", "_"}}));
    }
    lines.push_back(DifferenceLine(c.name, space, ours, theirs));
  }
  if (c.memory_analysis) {
    for (const AnalysisField& f : AnalysisFields(m.backend)) {
      const int64_t theirs = (*c.memory_analysis)[f.xla].get<int64_t>();
      std::optional<int64_t> ours;
      if (m.computed) ours = f.computed(*m.computed);
      if (ours != theirs) lines.push_back(DifferenceLine(c.name, absl::StrCat("memory_analysis.", f.xla), ours, theirs));
    }
  }
  return lines;
}

// The case and figure a line is about: its first two fields.
std::string KeyOf(const std::string& line) {
  const std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  return fields.size() < 2 ? line : fields[0] + " " + fields[1];
}

// The header of a known-differences list of testdata/<suite>.
std::string KnownDiffsHeader(const std::string& suite, const std::string& test) {
  return absl::StrCat(
      "# The figures where hlomem, from the after-optimizations HLO alone, differs\n"
      "# from XLA on the committed dumps of testdata/", suite, ": one line per\n"
      "# case and memory space (colourN:NAME, the sum of that colour's allocations)\n"
      "# or memory_analysis() field. Fields: case, figure, hlomem's bytes, XLA's\n"
      "# bytes, the difference, as a percentage of XLA's.\n"
      "# ", test, " fails on any change\n"
      "# to this list. Regenerate it, and review the diff, with:\n"
      "#   HLOMEM_UPDATE_KNOWN_DIFFS=1 build/tests/report/report_test \\\n"
      "#     --gtest_filter=", test, "\n");
}

// Any change to where hlomem differs from XLA fails: a case newly
// differing, a listed case now matching, a listed difference that moved.
void ExpectKnownDifferences(const std::vector<Case>& cases, const std::vector<ModuleReport>& reports,
                            const std::string& suite, const std::string& path, const std::string& test) {
  std::vector<std::string> now;
  for (size_t k = 0; k < cases.size(); ++k) {
    for (std::string& line : Differences(cases[k], reports[k])) now.push_back(std::move(line));
  }
  const char* update = std::getenv("HLOMEM_UPDATE_KNOWN_DIFFS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::trunc);
    out << KnownDiffsHeader(suite, test);
    for (const std::string& line : now) out << line << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::printf("wrote %zu known differences to %s\n", now.size(), path.c_str());
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::vector<std::string> known;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') known.push_back(line);
  }
  std::map<std::string, std::string> known_by_key, now_by_key;
  for (const std::string& line : known) known_by_key[KeyOf(line)] = line;
  for (const std::string& line : now) now_by_key[KeyOf(line)] = line;
  std::string changes;
  for (const auto& [key, line] : now_by_key) {
    const auto listed = known_by_key.find(key);
    if (listed == known_by_key.end()) {
      absl::StrAppend(&changes, "  newly differs: ", line, "\n");
    } else if (listed->second != line) {
      absl::StrAppend(&changes, "  changed: ", listed->second, "\n        now: ", line, "\n");
    }
  }
  for (const auto& [key, line] : known_by_key) {
    if (!now_by_key.count(key)) absl::StrAppend(&changes, "  now matches XLA: ", line, "\n");
  }
  EXPECT_EQ(known.size(), known_by_key.size()) << path << " lists a case and figure twice";
  EXPECT_TRUE(changes.empty())
      << "hlomem's differences from XLA on testdata/" << suite << " are not the ones " << path
      << " lists:\n"
      << changes
      << "If the change is intended (a fix, or a known regression), rewrite the list and commit it:\n"
         "  HLOMEM_UPDATE_KNOWN_DIFFS=1 build/tests/report/report_test --gtest_filter="
      << test;
  std::printf("%zu differences from XLA; %s lists %zu\n", now.size(), path.c_str(), known.size());
}

TEST_F(AccelGroundTruthTest, DifferencesFromXlaAreTheKnownOnes) {
  ExpectKnownDifferences(*cases_, *reports_, "accel", HLOMEM_KNOWN_DIFFS_FILE,
                         "AccelGroundTruthTest.DifferencesFromXlaAreTheKnownOnes");
}

TEST_F(AccelGroundTruthTest, TpuDeviceFitAgreesWithXlasCompileVerdict) {
  int checked = 0, out_of_memory = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    const std::optional<bool> fits = FitsOnPreset(c, (*reports_)[k]);
    if (!fits) continue;
    EXPECT_EQ(*fits, c.verdict == "fits") << c.name;
    ++checked;
    out_of_memory += c.verdict != "fits";
  }
  EXPECT_EQ(checked, kTpuModules);  // four TPU generations of the whole suite
  EXPECT_EQ(out_of_memory, kTpuOutOfMemory);  // the suite's OOM programs, both sides of the limit
}

// Real trainers' train steps (testdata/trainers: public training code
// installed from PyPI, FSDP x tensor on deviceless TPU meshes, each just
// fitting or failing with XLA's E1000, and on 8-GPU H100 and A100
// topologies): from the HLO alone, the device verdict is XLA:TPU's compile
// verdict on every TPU step, and the differences from XLA's assignment are
// the listed ones.
constexpr char kTrainers[] = "trainers";
using TrainerGroundTruthTest = GroundTruthTest<kTrainers>;

TEST_F(TrainerGroundTruthTest, DeviceFitAgreesWithXlasCompileVerdict) {
  std::set<std::string> generations;
  int out_of_memory = 0;
  for (size_t k = 0; k < cases_->size(); ++k) {
    const Case& c = (*cases_)[k];
    // XLA:GPU compiles what does not fit: only XLA:TPU gives a verdict.
    if (TpuPresets().count(c.target) == 0) continue;
    const std::optional<bool> fits = FitsOnPreset(c, (*reports_)[k]);
    ASSERT_TRUE(fits.has_value()) << c.name;
    EXPECT_EQ(*fits, c.verdict == "fits") << c.name;
    // HBM within 2% of XLA's on every one, where the verdict turns.
    const int64_t xla_hbm = c.xla_by_color.at(0);
    const int64_t hbm = ComputedByColor((*reports_)[k])[0];
    EXPECT_LT(std::abs(static_cast<double>(hbm - xla_hbm)) / static_cast<double>(xla_hbm), 0.02) << c.name;
    generations.insert(c.target);
    out_of_memory += c.verdict != "fits";
  }
  EXPECT_GE(cases_->size(), 6u);
  EXPECT_GE(generations.size(), 3u);
  EXPECT_GE(out_of_memory, 3);
}

// Every buffer with a Python stack gets a line of the model's code (the
// trainer's script, or transformers' and keras-hub's modules installed in
// site-packages), never a framework's or Python's own.
TEST_F(TrainerGroundTruthTest, SourceLinesAreTheModelsCode) {
  for (size_t k = 0; k < cases_->size(); ++k) {
    int with_stack = 0, installed = 0;
    for (const BufferRow& row : (*reports_)[k].rows) {
      if (row.stack_frame == 0) continue;
      ++with_stack;
      EXPECT_EQ(hlo::OriginOfFrame(row.source_file), hlo::FrameOrigin::kUser)
          << (*cases_)[k].name << ": " << row.instruction << " at " << row.source_file;
      installed += absl::StrContains(row.source_file, "/site-packages/");
    }
    EXPECT_GT(with_stack, 500) << (*cases_)[k].name;
    EXPECT_GT(installed, with_stack / 2) << (*cases_)[k].name;  // most in the installed model code
  }
}

TEST_F(TrainerGroundTruthTest, DifferencesFromXlaAreTheKnownOnes) {
  ExpectKnownDifferences(*cases_, *reports_, "trainers", HLOMEM_TRAINER_KNOWN_DIFFS_FILE,
                         "TrainerGroundTruthTest.DifferencesFromXlaAreTheKnownOnes");
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
