// Temporary directories and files for tests that build hostile inputs on
// disk: odd modes, links, thousands of entries, non-UTF-8 names.
#ifndef HLOMEM_TESTS_HOSTILE_SCRATCH_DIR_H_
#define HLOMEM_TESTS_HOSTILE_SCRATCH_DIR_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hlomem::testing {

// A fresh directory under the test's temp dir, removed (with everything in
// it, whatever the modes) when the object goes.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `contents` to path()/name and returns the full path.
  std::string Write(absl::string_view name, absl::string_view contents) const;

 private:
  std::string path_;
};

std::string ReadFileOrDie(const std::string& path);

// True when `output` holds "path:LINE:COL: error: " (a located text error).
bool HasLocatedError(absl::string_view output, absl::string_view path);
// True when `output` holds "path: error: " or a located error for path.
bool HasErrorFor(absl::string_view output, absl::string_view path);

}  // namespace hlomem::testing

#endif  // HLOMEM_TESTS_HOSTILE_SCRATCH_DIR_H_
