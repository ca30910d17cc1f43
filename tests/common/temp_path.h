// A path under the test temp directory that no other test process uses:
// ctest runs every test case as its own process, in parallel, in one
// shared temp directory, so a fixed name ("now.json") races with another
// case's. What it names is removed when the process exits (a directory
// with what is in it): each run would otherwise leave its files behind.
#ifndef HLOMEM_TESTS_COMMON_TEMP_PATH_H_
#define HLOMEM_TESTS_COMMON_TEMP_PATH_H_

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "gtest/gtest.h"

namespace hlomem::testing {

inline std::string TempPath(const std::string& name) {
  struct RemovedAtExit {
    std::mutex mutex;
    std::vector<std::string> paths;
    ~RemovedAtExit() {
      std::error_code ignored;
      for (const std::string& path : paths) std::filesystem::remove_all(path, ignored);
    }
  };
  static RemovedAtExit files;
  std::string path = ::testing::TempDir() + "/hlomem-" + std::to_string(::getpid()) + "-" + name;
  std::lock_guard<std::mutex> lock(files.mutex);
  files.paths.push_back(path);
  return path;
}

}  // namespace hlomem::testing

#endif  // HLOMEM_TESTS_COMMON_TEMP_PATH_H_
