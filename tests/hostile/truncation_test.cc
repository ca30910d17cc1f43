// Dumps cut short by a full disk or a killed job: a real module cut at
// every line (computation and instruction boundaries, header sections) and
// in the middle of every line, its binary proto cut throughout, and XLA's
// buffer-assignment files cut at every line. Each cut either loads (a
// prefix can be a complete module) or fails with an error naming the file,
// located for text; never a crash. A cut XLA file never decides: its
// figures are left out with a warning, and hlomem's decide (issue 30 item
// 5). The whole pipeline runs in-process here (fast enough for hundreds of
// cuts); a few cuts also go through the binary.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/check.h"
#include "lib/report/report.h"
#include "lib/report/writers.h"
#include "tests/hostile/run_hlomem.h"
#include "tests/hostile/scratch_dir.h"

namespace hlomem::testing {
namespace {

using ::testing::HasSubstr;

const std::string kCaseDir = std::string(HLOMEM_TESTDATA_DIR) + "/jax/argmax";
const std::string kStem = "module_0000.jit_argmax_both.cpu_after_optimizations";

// Offsets where `text` is cut: the start and the middle of every line.
std::vector<size_t> LineCuts(const std::string& text) {
  std::vector<size_t> cuts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    cuts.push_back(start);
    if (end > start + 1) cuts.push_back(start + (end - start) / 2);
    start = end + 1;
  }
  return cuts;
}

// The offset just after the first `lines` lines of `text`.
size_t OffsetAfterLines(const std::string& text, int lines) {
  size_t pos = 0;
  for (int k = 0; k < lines && pos < text.size(); ++k) {
    const size_t end = text.find('\n', pos);
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return pos;
}

// Builds the report of `path` and checks what came back; true if it was
// an error.
bool ExpectReportOrError(const std::string& path, bool text, size_t cut) {
  absl::StatusOr<report::Report> report = pipeline::BuildReport({path}, pipeline::ReportOptions{});
  if (report.ok()) {
    EXPECT_FALSE(report->modules.empty()) << "cut at " << cut;
    return false;
  }
  const std::string message(report.status().message());
  if (text && cut > 0) {
    EXPECT_TRUE(HasLocatedError(message, path)) << "cut at " << cut << ": " << message;
  } else {
    EXPECT_TRUE(HasErrorFor(message, path)) << "cut at " << cut << ": " << message;
  }
  return true;
}

TEST(TruncationTest, HloTextCutAtEveryLineAndMidLine) {
  const std::string text = ReadFileOrDie(kCaseDir + "/" + kStem + ".txt");
  ScratchDir dir;
  const std::vector<size_t> cuts = LineCuts(text);
  ASSERT_GT(cuts.size(), 150u);
  int errors = 0;
  for (size_t cut : cuts) {
    const std::string path = dir.Write("cut.hlo", text.substr(0, cut));
    errors += ExpectReportOrError(path, /*text=*/true, cut);
  }
  // Almost every cut leaves a computation open.
  EXPECT_GT(errors, static_cast<int>(cuts.size()) * 9 / 10);
}

TEST(TruncationTest, BinaryProtoCutThroughout) {
  const std::string proto = ReadFileOrDie(kCaseDir + "/" + kStem + ".hlo.pb");
  ScratchDir dir;
  const size_t step = std::max<size_t>(1, proto.size() / 300);
  for (size_t cut = 1; cut < proto.size(); cut += step) {
    const std::string path = dir.Write("cut.hlo.pb", proto.substr(0, cut));
    ExpectReportOrError(path, /*text=*/false, cut);
  }
}

// Whether a warning of `m` (or of the load) names `stem`'s files and says
// XLA's assignment was left out.
bool WarnsXlaLeftOut(const report::Report& report, const report::ModuleReport& m,
                     const std::string& stem) {
  std::vector<std::string> warnings = m.warnings;
  warnings.insert(warnings.end(), report.warnings.begin(), report.warnings.end());
  for (const std::string& w : warnings) {
    if (absl::StrContains(w, stem) &&
        (absl::StrContains(w, "XLA's buffer assignment is incomplete") ||
         absl::StrContains(w, "XLA's buffer assignment is ignored"))) {
      return true;
    }
  }
  return false;
}

bool SameFigures(const report::MemoryNumbers& a, const report::MemoryNumbers& b) {
  return a.total_bytes == b.total_bytes && a.argument_bytes == b.argument_bytes &&
         a.output_bytes == b.output_bytes && a.alias_bytes == b.alias_bytes &&
         a.temp_bytes == b.temp_bytes;
}

// XLA's own files cut short must not take the module down with them: the
// report still has the module, and XLA's numbers come with a warning or not
// at all. A cut buffer-assignment or values file never yields numbers; a cut
// live range or memory-usage report (which only witness) leaves them whole
// or out.
TEST(TruncationTest, BufferAssignmentFilesCutAtEveryLine) {
  const std::string module = ReadFileOrDie(kCaseDir + "/" + kStem + ".txt");
  const std::vector<std::string> xla_files = {"-buffer-assignment.txt",
                                              "-buffer-assignment-values.txt", "-live-range.txt",
                                              "-memory-usage-report.txt"};
  std::optional<report::MemoryNumbers> whole;
  {
    ScratchDir dir;
    dir.Write(kStem + ".txt", module);
    for (const std::string& file : xla_files) {
      dir.Write(kStem + file, ReadFileOrDie(kCaseDir + "/" + kStem + file));
    }
    absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_EQ(report->modules.size(), 1u);
    whole = report->modules[0].xla;
    ASSERT_TRUE(whole.has_value());
    EXPECT_TRUE(report->modules[0].xla_incomplete.empty()) << report->modules[0].xla_incomplete;
  }
  for (const std::string& suffix : xla_files) {
    const std::string original = ReadFileOrDie(kCaseDir + "/" + kStem + suffix);
    const bool decides = suffix == "-buffer-assignment.txt" ||
                         suffix == "-buffer-assignment-values.txt";
    ScratchDir dir;
    dir.Write(kStem + ".txt", module);
    for (const std::string& other : xla_files) {
      dir.Write(kStem + other, ReadFileOrDie(kCaseDir + "/" + kStem + other));
    }
    int left_out = 0;
    for (size_t cut : LineCuts(original)) {
      SCOPED_TRACE(absl::StrCat(suffix, " cut at ", cut));
      dir.Write(kStem + suffix, original.substr(0, cut));
      absl::StatusOr<report::Report> report =
          pipeline::BuildReport({dir.path()}, pipeline::ReportOptions{});
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_EQ(report->modules.size(), 1u);
      const report::ModuleReport& m = report->modules[0];
      EXPECT_TRUE(m.computed.has_value());
      if (m.xla) {
        EXPECT_FALSE(decides) << "XLA's figures of a cut file: total " << m.xla->total_bytes;
        EXPECT_TRUE(SameFigures(*m.xla, *whole));
        EXPECT_TRUE(m.xla_incomplete.empty());
      } else {
        EXPECT_TRUE(WarnsXlaLeftOut(*report, m, kStem));
        ++left_out;
      }
    }
    if (decides) {
      EXPECT_EQ(left_out, static_cast<int>(LineCuts(original).size()));
    }
  }
}

// The case (issue 30 item 5): the committed cnn_train_step CPU dump
// with its -buffer-assignment.txt cut after 40 of its 96 lines read as
// 8.29 MiB "XLA's", and `check --max-total 400MiB` passed. Cut at every
// line, with XLA's other files beside it or without them, XLA's figures
// must have no say: the check fails on hlomem's 464.57 MiB.
TEST(TruncationTest, CutBufferAssignmentNeverDecidesACheck) {
  const std::string case_dir = std::string(HLOMEM_TESTDATA_DIR) + "/jax/cnn_train_step";
  const std::string stem = "module_0000.jit_cnn_train_step.cpu_after_optimizations";
  const std::string ba_name = stem + "-buffer-assignment.txt";
  const std::string original = ReadFileOrDie(case_dir + "/" + ba_name);
  constexpr int64_t kComputedTotal = 487138692;  // 464.57 MiB
  report::CheckOptions options;
  options.max_total = int64_t{400} << 20;

  for (const bool with_siblings : {true, false}) {
    SCOPED_TRACE(with_siblings ? "with XLA's other files"
                               : "the HLO and the buffer assignment only");
    ScratchDir dir;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(case_dir, error)) {
      const std::string name = entry.path().filename().string();
      if (!absl::StartsWith(name, stem + ".txt") && !absl::StartsWith(name, stem + "-")) continue;
      if (!with_siblings && name != stem + ".txt" && name != ba_name) continue;
      dir.Write(name, ReadFileOrDie(entry.path().string()));
    }
    // The whole file decides (the test can tell who decided).
    {
      absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_TRUE(report->modules[0].xla.has_value());
      const report::CheckResult check = report::RunCheck(*report, options);
      ASSERT_EQ(check.violations.size(), 1u);
      EXPECT_THAT(check.violations[0].message, ::testing::HasSubstr("(XLA's)"));
    }
    std::vector<size_t> cuts;
    for (size_t pos = original.find('\n'); pos + 1 < original.size();
         pos = original.find('\n', pos + 1)) {
      cuts.push_back(pos + 1);
    }
    ASSERT_EQ(cuts.size(), 95u);
    for (size_t cut : cuts) {
      SCOPED_TRACE(absl::StrCat(
          "cut after ", std::count(original.begin(), original.begin() + cut, '\n'), " lines"));
      dir.Write(ba_name, original.substr(0, cut));
      absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
      ASSERT_TRUE(report.ok()) << report.status();
      ASSERT_EQ(report->modules.size(), 1u);
      const report::ModuleReport& m = report->modules[0];
      EXPECT_FALSE(m.xla.has_value());
      EXPECT_FALSE(m.xla_incomplete.empty());
      EXPECT_TRUE(m.mismatches.empty());
      EXPECT_TRUE(WarnsXlaLeftOut(*report, m, dir.path() + "/" + ba_name));
      const report::CheckResult check = report::RunCheck(*report, options);
      EXPECT_FALSE(check.passed());
      ASSERT_EQ(check.violations.size(), 1u);
      EXPECT_EQ(check.violations[0].value, kComputedTotal);
      EXPECT_THAT(check.violations[0].message, ::testing::Not(::testing::HasSubstr("XLA")));
      for (const std::string& note : check.notes) {
        EXPECT_THAT(note, ::testing::Not(::testing::HasSubstr("XLA's decides")));
      }
    }
  }

  // Through the binary, as the issue ran it: 40 of the 96 lines.
  ScratchDir dir;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(case_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "module_")) dir.Write(name, ReadFileOrDie(entry.path().string()));
  }
  const std::string cut_path =
      dir.Write(ba_name, original.substr(0, OffsetAfterLines(original, 40)));
  const RunResult run = RunHlomem({"check", dir.path(), "--max-total", "400MiB"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, ::testing::HasSubstr(
                              cut_path + ": warning: XLA's buffer assignment is incomplete (it "
                                         "ends after allocation 16 (line 40); "));
  EXPECT_THAT(run.output, ::testing::HasSubstr("hlomem's computed figures decide"));
  EXPECT_THAT(run.output, ::testing::HasSubstr("total 464.57MiB (487138692 B) exceeds"));
  EXPECT_THAT(run.output, ::testing::Not(::testing::HasSubstr("XLA's decides")));
  EXPECT_THAT(run.output, ::testing::HasSubstr("check FAILED"));
}

// Why XLA's figures were left out is part of the JSON report, and a report
// read back from it (a baseline) keeps it.
TEST(TruncationTest, IncompleteReasonRoundTripsThroughJson) {
  const std::string case_dir = std::string(HLOMEM_TESTDATA_DIR) + "/jax/cnn_train_step";
  const std::string stem = "module_0000.jit_cnn_train_step.cpu_after_optimizations";
  ScratchDir dir;
  for (const char* suffix : {".txt", "-buffer-assignment-values.txt"}) {
    dir.Write(stem + suffix, ReadFileOrDie(case_dir + "/" + stem + suffix));
  }
  const std::string original = ReadFileOrDie(case_dir + "/" + stem + "-buffer-assignment.txt");
  dir.Write(stem + "-buffer-assignment.txt", original.substr(0, OffsetAfterLines(original, 40)));
  absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string reason = report->modules[0].xla_incomplete;
  EXPECT_THAT(reason, ::testing::StartsWith("it ends after allocation 16 (line 40); its "
                                            "allocations sum to 8.29MiB (8693068 B)"));
  const std::string json = report::WriteJson(*report, report::WriteOptions());
  EXPECT_THAT(json, ::testing::HasSubstr("\"xla_incomplete\""));
  absl::StatusOr<report::Report> read = report::ReadJsonReport(json, "report.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->modules[0].xla_incomplete, reason);
  EXPECT_FALSE(read->modules[0].xla.has_value());
  EXPECT_EQ(report::WriteJson(*read, report::WriteOptions()), json);
}

// The pre-2026 layout (jax 0.7.0: total, "Used values" and HloLiveRange in
// the file) cut at every line never decides either.
TEST(TruncationTest, CutPre2026BufferAssignmentNeverDecides) {
  const std::string case_dir =
      std::string(HLOMEM_TESTDATA_DIR) + "/jax/seed_gather_grad_int32_grads";
  const std::string stem = "module_0001.jit_function_using_idx.cpu_after_optimizations";
  const std::string ba_name = stem + "-buffer-assignment.txt";
  const std::string original = ReadFileOrDie(case_dir + "/" + ba_name);
  ScratchDir dir;
  for (const char* suffix : {".txt", "-memory-usage-report.txt"}) {
    dir.Write(stem + suffix, ReadFileOrDie(case_dir + "/" + stem + suffix));
  }
  int cuts = 0;
  for (size_t pos = original.find('\n'); pos + 1 < original.size();
       pos = original.find('\n', pos + 1), ++cuts) {
    SCOPED_TRACE(absl::StrCat("cut at ", pos + 1));
    dir.Write(ba_name, original.substr(0, pos + 1));
    absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_FALSE(report->modules[0].xla.has_value());
    EXPECT_TRUE(WarnsXlaLeftOut(*report, report->modules[0], ba_name));
  }
  EXPECT_GT(cuts, 100);
  dir.Write(ba_name, original);
  absl::StatusOr<report::Report> report = pipeline::BuildReport({dir.path()}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->modules[0].xla.has_value()) << report->modules[0].xla_incomplete;
}

// Every committed dump's XLA files read whole: no dump loses XLA's figures
// to the wholeness rules (with hlomem's own buffers as the module's).
TEST(TruncationTest, EveryCommittedBufferAssignmentIsWhole) {
  for (const char* tree : {"jax", "accel"}) {
    const std::string root = std::string(HLOMEM_TESTDATA_DIR) + "/" + tree;
    int files = 0;
    std::error_code error;
    for (auto it = std::filesystem::recursive_directory_iterator(root, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      files += absl::EndsWith(it->path().string(), "-buffer-assignment.txt");
    }
    ASSERT_GT(files, 90) << root;
    absl::StatusOr<report::Report> report = pipeline::BuildReport({root}, {});
    ASSERT_TRUE(report.ok()) << report.status();
    int whole = 0;
    for (const report::ModuleReport& m : report->modules) {
      EXPECT_TRUE(m.xla_incomplete.empty()) << m.name << ": " << m.xla_incomplete;
      whole += m.xla.has_value();
    }
    EXPECT_EQ(whole, files) << root;
    RecordProperty(absl::StrCat(tree, "_whole"), whole);
  }
}

// The same through the binary, for a few cuts: exit 2 and a located error.
TEST(TruncationTest, BinaryReportsCutTextAsLocatedError) {
  const std::string text = ReadFileOrDie(kCaseDir + "/" + kStem + ".txt");
  ScratchDir dir;
  for (size_t cut : {text.size() / 4, text.size() / 2, text.size() - 3}) {
    const std::string path = dir.Write(kStem + ".txt", text.substr(0, cut));
    const RunResult run = RunHlomem({"report", path});
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_TRUE(HasLocatedError(run.output, path)) << run.output;
  }
}

}  // namespace
}  // namespace hlomem::testing
