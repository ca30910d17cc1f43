// The wholeness verdict on XLA's buffer assignment (issue 30 item 5): a
// -buffer-assignment.txt cut at a line boundary still parses, as a smaller
// assignment, and must be found not whole; every committed file must be
// found whole. The verdict comes from the text's own end, the values
// file's total and list, the memory-usage report's totals and the module's
// buffers (here: the instruction names of the whole file's values, which
// cover what hlomem assigns; the pipeline passes hlomem's own).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/dump/xla_buffer_assignment.h"

namespace hlomem::dump {
namespace {

using ::testing::HasSubstr;

constexpr absl::string_view kBufferAssignmentSuffix = "-buffer-assignment.txt";

std::optional<std::string> ReadIfExists(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  absl::StatusOr<std::shared_ptr<const FileContents>> contents = FileContents::Open(path);
  if (!contents.ok()) return std::nullopt;
  return std::string((*contents)->data());
}

// A committed dump module's XLA files: the buffer assignment, and its
// values file and memory-usage report where the dump has them.
struct XlaFiles {
  std::string path;  // of the -buffer-assignment.txt
  std::string text;
  std::optional<std::string> values;
  std::optional<std::string> report;
  std::string values_path() const { return Stem() + "-buffer-assignment-values.txt"; }
  std::string report_path() const { return Stem() + "-memory-usage-report.txt"; }
  std::string Stem() const { return path.substr(0, path.size() - kBufferAssignmentSuffix.size()); }
};

XlaFiles ReadXlaFiles(const std::string& path) {
  XlaFiles files;
  files.path = path;
  files.text = ReadIfExists(path).value_or("");
  files.values = ReadIfExists(files.values_path());
  files.report = ReadIfExists(files.report_path());
  return files;
}

// The -buffer-assignment.txt of a case directory under testdata/.
XlaFiles CaseFiles(const std::string& case_dir) {
  const std::string dir = std::string(HLOMEM_TESTDATA_DIR) + "/" + case_dir;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string path = entry.path().string();
    if (absl::EndsWith(path, kBufferAssignmentSuffix)) return ReadXlaFiles(path);
  }
  ADD_FAILURE() << "no *" << kBufferAssignmentSuffix << " in " << dir;
  return {};
}

// The names of every value in the whole file: its instruction and index.
using Names = std::vector<std::pair<std::string, std::vector<int64_t>>>;
Names ValueNames(const XlaFiles& files) {
  absl::StatusOr<XlaBufferAssignment> whole = ParseXlaBufferAssignment(files.path, files.text);
  EXPECT_TRUE(whole.ok()) << whole.status();
  Names names;
  if (!whole.ok()) return names;
  for (const XlaAllocation& allocation : whole->allocations) {
    for (const XlaValue& value : allocation.values) {
      names.emplace_back(value.instruction, value.shape_index);
    }
  }
  return names;
}

std::vector<XlaBufferName> Views(const Names& names) {
  std::vector<XlaBufferName> views;
  for (const auto& [instruction, index] : names) views.push_back({instruction, index});
  return views;
}

struct Witnesses {
  bool values = true;    // read the values file, where there is one
  bool report = true;    // compare with the memory-usage report
  bool coverage = true;  // compare with the module's buffers
};

// The verdict on `text` (the buffer assignment as cut) read with the
// witnesses the dump has; nullopt when it does not parse at all (then the
// loader ignores it with a warning).
std::optional<XlaBufferAssignment> Judge(const XlaFiles& files, absl::string_view text,
                                         const Names& names,
                                         const Witnesses& witnesses = {}) {
  absl::StatusOr<XlaBufferAssignment> parsed = ParseXlaBufferAssignment(files.path, text);
  if (!parsed.ok()) return std::nullopt;
  if (witnesses.values && files.values) {
    EXPECT_TRUE(
        ParseXlaBufferAssignmentValues(files.values_path(), *files.values, &*parsed).ok());
  }
  if (witnesses.report && files.report) {
    absl::StatusOr<XlaMemoryUsageReport> report =
        ParseXlaMemoryUsageReport(files.report_path(), *files.report);
    EXPECT_TRUE(report.ok()) << report.status();
    if (report.ok()) CheckAgainstMemoryUsageReport(*report, files.report_path(), &*parsed);
  }
  if (witnesses.coverage) CheckXlaCoverage(Views(names), &*parsed);
  return std::move(*parsed);
}

// Byte offsets just after each of the first N-1 lines of `text` (a cut at
// every line boundary but the end).
std::vector<size_t> LineEnds(absl::string_view text) {
  std::vector<size_t> ends;
  for (size_t pos = text.find('\n'); pos != absl::string_view::npos && pos + 1 < text.size();
       pos = text.find('\n', pos + 1)) {
    ends.push_back(pos + 1);
  }
  return ends;
}

// The offset just after the line that `prefix` starts (the first one).
size_t EndOfLineStarting(absl::string_view text, absl::string_view prefix) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == absl::string_view::npos) end = text.size();
    if (absl::StartsWith(text.substr(pos), prefix)) return end + 1;
    pos = end + 1;
  }
  ADD_FAILURE() << "no line starts with '" << prefix << "'";
  return text.size();
}

// The offset where the line that `prefix` starts begins.
size_t StartOfLine(absl::string_view text, absl::string_view prefix) {
  const size_t at = text.find(absl::StrCat("\n", prefix));
  EXPECT_NE(at, absl::string_view::npos) << "no line starts with '" << prefix << "'";
  return at == absl::string_view::npos ? text.size() : at + 1;
}

// Every committed buffer assignment is whole, with every witness its dump
// has. (tests/hostile/truncation_test.cc checks the same through the
// pipeline, with hlomem's own buffers.)
TEST(XlaWholenessTest, EveryCommittedFileIsWhole) {
  std::vector<std::string> paths;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(HLOMEM_TESTDATA_DIR, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::string path = it->path().string();
    if (absl::EndsWith(path, kBufferAssignmentSuffix)) paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end());
  // 98 CPU cases and 86 cases on each of 6 accelerators are committed.
  ASSERT_GE(paths.size(), 600u);
  int with_values = 0, with_report = 0;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const XlaFiles files = ReadXlaFiles(path);
    const std::optional<XlaBufferAssignment> judged = Judge(files, files.text, ValueNames(files));
    ASSERT_TRUE(judged.has_value());
    EXPECT_TRUE(judged->whole()) << judged->IncompleteReason();
    EXPECT_NE(judged->text_end, XlaTextEnd::kNotText);
    with_values += files.values.has_value();
    with_report += files.report.has_value();
  }
  RecordProperty("whole_files", static_cast<int>(paths.size()));
  EXPECT_GT(with_values, 90);
  EXPECT_EQ(with_report, static_cast<int>(paths.size()));
}

// The case: the CPU cnn_train_step cut after 40 of its 96 lines
// reads as 8.29 MiB; the values file says 464.57 MiB.
TEST(XlaWholenessTest, CnnTrainStepCutAfter40Lines) {
  const XlaFiles files = CaseFiles("jax/cnn_train_step");
  ASSERT_TRUE(files.values.has_value());
  const std::vector<size_t> ends = LineEnds(files.text);
  ASSERT_EQ(ends.size() + 1, 96u);
  const std::string cut = files.text.substr(0, ends[39]);
  const std::optional<XlaBufferAssignment> judged = Judge(files, cut, ValueNames(files));
  ASSERT_TRUE(judged.has_value());
  EXPECT_EQ(judged->SumOfAllocationSizes(), 8693068);
  EXPECT_FALSE(judged->whole());
  const std::string reason = judged->IncompleteReason();
  EXPECT_THAT(reason, HasSubstr("it ends after allocation 16 (line 40)"));
  EXPECT_THAT(reason, HasSubstr("its allocations sum to 8.29MiB (8693068 B), not the 464.57MiB "
                                "(487138692 B) of 'Total bytes used' in "
                                "*-buffer-assignment-values.txt"));
  // The whole file is whole.
  const std::optional<XlaBufferAssignment> whole = Judge(files, files.text, ValueNames(files));
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->whole()) << whole->IncompleteReason();
}

// Cut at every line boundary, the 2026 layout (allocations only, the total
// in the values file) is never whole: with all its witnesses, and with the
// values file or the module alone. The memory-usage report alone sees the
// allocation sizes only: it misses a cut inside the last allocation's
// values, which leaves the figures whole.
TEST(XlaWholenessTest, Layout2026CutAtEveryLineIsNeverWhole) {
  for (const char* case_dir : {"jax/cnn_train_step", "jax/transformer_block_train_step",
                               "accel/gpu_h100/cnn_train_step", "accel/tpu_v5e/cnn_train_step"}) {
    const XlaFiles files = CaseFiles(case_dir);
    const Names names = ValueNames(files);
    const std::vector<size_t> ends = LineEnds(files.text);
    ASSERT_GT(ends.size(), 20u) << case_dir;
    const std::optional<XlaBufferAssignment> whole = Judge(files, files.text, names);
    ASSERT_TRUE(whole.has_value());
    ASSERT_TRUE(whole->whole()) << whole->IncompleteReason();
    std::vector<std::pair<std::string, Witnesses>> variants = {
        {"all", Witnesses{}},
        {"report", Witnesses{false, true, false}},
        {"module", Witnesses{false, false, true}}};
    if (files.values) variants.push_back({"values", Witnesses{true, false, false}});
    for (const auto& [label, witnesses] : variants) {
      for (size_t cut : ends) {
        SCOPED_TRACE(absl::StrCat(case_dir, " with ", label, ", cut at byte ", cut));
        const std::optional<XlaBufferAssignment> judged =
            Judge(files, absl::string_view(files.text).substr(0, cut), names, witnesses);
        ASSERT_TRUE(judged.has_value());
        if (label == "report" && judged->whole()) {
          EXPECT_EQ(judged->allocations.size(), whole->allocations.size());
          EXPECT_EQ(judged->SumOfAllocationSizes(), whole->SumOfAllocationSizes());
        } else {
          EXPECT_FALSE(judged->whole());
        }
      }
    }
  }
}

// Cut inside a line, the text either fails to parse or is not whole (its
// last line has no newline).
TEST(XlaWholenessTest, CutMidLineIsNeverWhole) {
  const XlaFiles files = CaseFiles("jax/cnn_train_step");
  const Names names = ValueNames(files);
  const Witnesses none{false, false, false};
  size_t start = 0;
  for (size_t end : LineEnds(files.text)) {
    const size_t middle = start + (end - start) / 2;
    start = end;
    const std::optional<XlaBufferAssignment> judged =
        Judge(files, absl::string_view(files.text).substr(0, middle), names, none);
    if (!judged) continue;
    EXPECT_FALSE(judged->whole()) << "cut at byte " << middle;
    EXPECT_THAT(judged->IncompleteReason(), HasSubstr("no newline")) << "cut at byte " << middle;
  }
}

// The pre-2026 layout (jax 0.7.0) carries its own total, "Used values" and
// HloLiveRange; its memory-usage report (allocation-list layout) dates it.
// Cut at every line, and exactly at the end of each section, it is never
// whole.
TEST(XlaWholenessTest, LayoutPre2026CutAtEveryLineAndSectionEnd) {
  const XlaFiles files = CaseFiles("jax/seed_gather_grad_int32_grads");
  ASSERT_FALSE(files.values.has_value());
  ASSERT_TRUE(files.report.has_value());
  const Names names = ValueNames(files);
  const absl::string_view text = files.text;
  for (size_t cut : LineEnds(text)) {
    const std::optional<XlaBufferAssignment> judged = Judge(files, text.substr(0, cut), names);
    ASSERT_TRUE(judged.has_value()) << "cut at byte " << cut;
    EXPECT_FALSE(judged->whole()) << "cut at byte " << cut;
  }
  const std::optional<XlaBufferAssignment> whole = Judge(files, text, names);
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->whole()) << whole->IncompleteReason();
  EXPECT_EQ(whole->text_end, XlaTextEnd::kLiveRange);

  struct SectionEnd {
    const char* what;
    size_t cut;
    const char* reason;
  };
  const size_t used_values_end = StartOfLine(text, "HloLiveRange") - 2;  // before "\n\n"
  const std::vector<SectionEnd> section_ends = {
      {"the allocations", StartOfLine(text, "Total bytes used") - 1, "it has no HloLiveRange"},
      {"'Total bytes used'", EndOfLineStarting(text, "Total bytes used"),
       "no 'Used values:' follows its 'Total bytes used'"},
      {"'Used values'", used_values_end, "it has no HloLiveRange"},
      {"the instruction sequence", StartOfLine(text, "  BufferLiveRange:"),
       "its HloLiveRange has no BufferLiveRange section"},
      {"the buffer live ranges", StartOfLine(text, "  Live ranges at"),
       "its HloLiveRange stops before the live ranges at its peak"},
      {"all but one of the peak values", text.rfind('\n', text.size() - 2) + 1,
       "its HloLiveRange lists 4 of the 5 values live at its peak (time 15)"},
  };
  for (const SectionEnd& end : section_ends) {
    SCOPED_TRACE(absl::StrCat("cut after ", end.what, " at byte ", end.cut));
    const std::optional<XlaBufferAssignment> judged = Judge(files, text.substr(0, end.cut), names);
    ASSERT_TRUE(judged.has_value());
    EXPECT_FALSE(judged->whole());
    EXPECT_THAT(judged->IncompleteReason(), HasSubstr(end.reason));
  }
  // A cut inside the list says how far it got.
  const size_t inside_used_values = StartOfLine(text, "<28 ");
  const std::optional<XlaBufferAssignment> judged =
      Judge(files, text.substr(0, inside_used_values), names, Witnesses{false, false, false});
  ASSERT_TRUE(judged.has_value());
  EXPECT_THAT(judged->IncompleteReason(),
              HasSubstr("its 'Used values' lists 6 of the 10 values of its allocations"));
}

TEST(XlaWholenessTest, MemoryUsageReportTotalsMustAgree) {
  // Allocations of 16 and 64 bytes in color 0, 128 in color 5.
  absl::StatusOr<XlaBufferAssignment> parsed = ParseXlaBufferAssignment(
      "m-buffer-assignment.txt",
      "BufferAssignment:\n"
      "allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
      " value: <0 p0 @0> (size=16,offset=0): f32[4]{0}\n"
      "allocation 1: size 64, preallocated-temp:\n"
      " value: <1 fusion.1 @0> (size=64,offset=0): f32[16]{0}\n"
      "allocation 2: size 128, color 5, parameter 1, shape |f32[32]| at ShapeIndex {}:\n"
      " value: <2 p1 @5> (size=128,offset=0): f32[32]{0:S(5)}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->whole()) << parsed->IncompleteReason();
  auto judge = [&](absl::string_view report_text) {
    absl::StatusOr<XlaMemoryUsageReport> report =
        ParseXlaMemoryUsageReport("m-memory-usage-report.txt", report_text);
    EXPECT_TRUE(report.ok()) << report.status();
    XlaBufferAssignment copy = *parsed;
    if (report.ok()) CheckAgainstMemoryUsageReport(*report, "m-memory-usage-report.txt", &copy);
    return copy;
  };
  EXPECT_TRUE(judge("Memory Space: default (color=0)\nTotal bytes: 80 (80B)\n"
                    "Memory Space: color_5 (color=5)\nTotal bytes: 128 (128B)\n")
                  .whole());
  EXPECT_THAT(judge("Memory Space: default (color=0)\nTotal bytes: 96 (96B)\n"
                    "Memory Space: color_5 (color=5)\nTotal bytes: 128 (128B)\n")
                  .IncompleteReason(),
              HasSubstr("its allocations in memory space default (color 0) sum to 80B (80 B), "
                        "not the 96B (96 B) of *-memory-usage-report.txt"));
  EXPECT_THAT(judge("Memory Space: default (color=0)\nTotal bytes: 80 (80B)\n").IncompleteReason(),
              HasSubstr("its allocations of color 5 (128B (128 B)) are in no memory space"));
  // The allocation-list layout: one total, and the text must end with
  // HloLiveRange, which this one lacks.
  const XlaBufferAssignment listed = judge("Total bytes used: 208 (208B)\n");
  EXPECT_THAT(listed.IncompleteReason(), HasSubstr("it has no HloLiveRange"));
  EXPECT_THAT(judge("Total bytes used: 209 (209B)\n").IncompleteReason(),
              HasSubstr("its allocations sum to 208B (208 B), not the 209B (209 B)"));
  // An empty report (XLA's for a module without allocations) says nothing.
  EXPECT_TRUE(judge("").whole());
}

TEST(XlaWholenessTest, ModuleBuffersMustBeInTheAllocations) {
  constexpr absl::string_view kText =
      "BufferAssignment:\n"
      "allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
      " value: <0 p0 @0> (size=16,offset=0): f32[4]{0}\n"
      "allocation 1: size 64, preallocated-temp:\n"
      " value: <1 fusion.1 @0> (size=64,offset=0): f32[16]{0}\n";
  auto judge = [](absl::string_view text, const Names& names) {
    absl::StatusOr<XlaBufferAssignment> parsed = ParseXlaBufferAssignment("m.txt", text);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return XlaBufferAssignment();
    CheckXlaCoverage(Views(names), &*parsed);
    return *parsed;
  };
  EXPECT_TRUE(judge(kText, {{"p0", {}}, {"fusion.1", {}}}).whole());
  EXPECT_EQ(judge(kText, {{"p0", {}}, {"fusion.1", {}}, {"copy.2", {}}, {"fusion.1", {1}}})
                .IncompleteReason(),
            "it ends after allocation 1 (line 5); none of its allocations holds 2 of the 4 "
            "buffers hlomem assigns (copy.2, fusion.1{1})");
  // Only the header: nothing holds the module's buffers.
  EXPECT_FALSE(judge("BufferAssignment:\n", {{"p0", {}}}).whole());
  // The pre-2019 layout lists no values: nothing to compare.
  EXPECT_TRUE(judge("BufferAssignment:\n"
                    "allocation 0: 0x55d0c8a0, size 16, parameter 0 at ShapeIndex {}:\n"
                    "  p0 [0,16]: f32[4]\n",
                    {{"p0", {}}, {"add", {}}})
                  .whole());
}

}  // namespace
}  // namespace hlomem::dump
