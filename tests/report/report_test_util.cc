#include "tests/report/report_test_util.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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
