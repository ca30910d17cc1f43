// Shared by the report tests: build reports of committed test cases with
// repository-relative paths (so outputs do not depend on the checkout's
// location), and compare outputs with goldens under testdata/golden/.
#ifndef HLOMEM_TESTS_REPORT_REPORT_TEST_UTIL_H_
#define HLOMEM_TESTS_REPORT_REPORT_TEST_UTIL_H_

#include <string>
#include <vector>

#include "lib/report/report.h"
#include "tests/common/temp_path.h"

namespace hlomem::report::testing {

// The repository root; tests chdir there so paths print as "testdata/...".
std::string RepoRoot();
void ChdirToRepoRoot();

// BuildReport of testdata/jax/<case>; fails the test on error.
Report BuildCase(const std::string& case_name);

std::string ReadFileOrDie(const std::string& path);

using ::hlomem::testing::TempPath;  // tests/common/temp_path.h

// Compares `actual` with testdata/golden/<name>; with HLOMEM_UPDATE_GOLDENS=1
// in the environment, (re)writes the golden instead and passes.
void ExpectGolden(const std::string& name, const std::string& actual);

}  // namespace hlomem::report::testing

#endif  // HLOMEM_TESTS_REPORT_REPORT_TEST_UTIL_H_
