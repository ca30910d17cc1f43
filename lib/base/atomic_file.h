// Writes a whole file so that readers see either the old contents or the
// new, never a partial file: write a temporary beside it, fsync, rename.
// An existing device or pipe (/dev/null, a FIFO) is written in place.
#ifndef HLOMEM_LIB_BASE_ATOMIC_FILE_H_
#define HLOMEM_LIB_BASE_ATOMIC_FILE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// The same guarantee for a file written piece by piece, so that a large
// output never has to be held whole: Append as the text is made, Commit at
// the end. Destroyed without Commit (an error half way), the temporary is
// removed and the old file is left as it was.
class AtomicFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view text);
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string temp, int fd)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}
  absl::Status Fail(absl::string_view what);

  std::string path_;
  std::string temp_;  // "" when written in place (a device or a pipe)
  int fd_ = -1;
};

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_ATOMIC_FILE_H_
