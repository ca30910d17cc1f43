// Dumps cut short by a full disk or a killed job: a real module cut at
// every line (computation and instruction boundaries, header sections) and
// in the middle of every line, its binary proto cut throughout, and XLA's
// buffer-assignment files cut at every line. Each cut either loads (a
// prefix can be a complete module) or fails with an error naming the file,
// located for text; never a crash. The whole pipeline runs in-process here
// (fast enough for hundreds of cuts); a few cuts also go through the binary.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/report.h"
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

// XLA's own files cut short must not take the module down with them: the
// report still has the module, and XLA's numbers come with a warning or not
// at all when the file no longer parses.
TEST(TruncationTest, BufferAssignmentFilesCutAtEveryLine) {
  const std::string module = ReadFileOrDie(kCaseDir + "/" + kStem + ".txt");
  for (const char* suffix : {"-buffer-assignment.txt", "-buffer-assignment-values.txt",
                             "-live-range.txt"}) {
    const std::string original = ReadFileOrDie(kCaseDir + "/" + kStem + suffix);
    ScratchDir dir;
    dir.Write(kStem + ".txt", module);
    for (const char* other : {"-buffer-assignment.txt", "-buffer-assignment-values.txt",
                              "-live-range.txt"}) {
      dir.Write(kStem + other, ReadFileOrDie(kCaseDir + "/" + kStem + other));
    }
    for (size_t cut : LineCuts(original)) {
      dir.Write(kStem + suffix, original.substr(0, cut));
      absl::StatusOr<report::Report> report =
          pipeline::BuildReport({dir.path()}, pipeline::ReportOptions{});
      ASSERT_TRUE(report.ok()) << suffix << " cut at " << cut << ": " << report.status();
      ASSERT_EQ(report->modules.size(), 1u);
      EXPECT_TRUE(report->modules[0].computed.has_value());
    }
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
