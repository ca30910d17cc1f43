// A path under the test temp directory that no other test process uses.
// ctest runs every test case as its own process, in parallel, in one shared
// temp directory, so a fixed name ("now.json") races with another case's.
#ifndef HLOMEM_TESTS_COMMON_TEMP_PATH_H_
#define HLOMEM_TESTS_COMMON_TEMP_PATH_H_

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace hlomem::testing {

inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/hlomem-" + std::to_string(::getpid()) + "-" + name;
}

}  // namespace hlomem::testing

#endif  // HLOMEM_TESTS_COMMON_TEMP_PATH_H_
