#include "tests/report/report_test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "lib/base/atomic_file.h"

namespace hlomem::report::testing {

std::string RepoRoot() {
  const std::string testdata = HLOMEM_TESTDATA_DIR;
  return testdata.substr(0, testdata.rfind('/'));
}

void ChdirToRepoRoot() { ASSERT_EQ(::chdir(RepoRoot().c_str()), 0) << RepoRoot(); }

Report BuildCase(const std::string& case_name) {
  ChdirToRepoRoot();
  absl::StatusOr<Report> report = pipeline::BuildReport({"testdata/jax/" + case_name}, pipeline::ReportOptions());
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? std::move(*report) : Report();
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string TempPath(const std::string& name) {
  // Removed when the test process exits (a directory with what is in it):
  // each run would otherwise leave its files behind in the temporary
  // directory.
  struct RemovedAtExit {
    std::mutex mutex;
    std::vector<std::string> paths;
    ~RemovedAtExit() {
      std::error_code ignored;
      for (const std::string& path : paths) std::filesystem::remove_all(path, ignored);
    }
  };
  static RemovedAtExit files;
  std::string path = ::testing::TempDir() + "/hlomem-report-test-" + std::to_string(::getpid()) + "-" + name;
  std::lock_guard<std::mutex> lock(files.mutex);
  files.paths.push_back(path);
  return path;
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = RepoRoot() + "/testdata/golden/" + name;
  const char* update = std::getenv("HLOMEM_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    ASSERT_TRUE(WriteFileAtomically(path, actual).ok()) << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing; run the test with HLOMEM_UPDATE_GOLDENS=1";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual)
      << "output differs from " << path
      << "; if the change is intended, rerun with HLOMEM_UPDATE_GOLDENS=1 and review the diff";
}

}  // namespace hlomem::report::testing
