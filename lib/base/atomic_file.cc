#include "lib/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"
#include "lib/base/status_macros.h"

namespace hlomem {

namespace {

// Writes all of `contents` to `fd`; false with errno set on failure.
bool WriteAll(int fd, absl::string_view contents) {
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(const std::string& path) {
  // Devices and pipes (`-o /dev/null`, `-o /dev/stdout`) are written where
  // they are: renaming a temporary over one would replace the device itself
  // with a regular file.
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) &&
      !S_ISDIR(existing.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return FileError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
    return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, "", fd));
  }
  // The temporary lives in the target's directory so rename() stays on one
  // file system and is atomic.
  std::string pattern = path + ".tmp.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return FileError(path, absl::StrCat("cannot create a temporary file: ", std::strerror(errno)));
  }
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, name.data(), fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

absl::Status AtomicFileWriter::Fail(absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(errno));
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  return FileError(path_, message);
}

absl::Status AtomicFileWriter::Append(absl::string_view text) {
  if (fd_ < 0) return FileError(path_, "write after an error or the end");
  return WriteAll(fd_, text) ? absl::OkStatus() : Fail("cannot write");
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return FileError(path_, "write after an error or the end");
  if (!temp_.empty()) {
    if (::fchmod(fd_, 0644) != 0) return Fail("cannot set permissions");
    if (::fsync(fd_) != 0) return Fail("cannot flush to disk");
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Fail("cannot close");
  if (temp_.empty()) return absl::OkStatus();
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return Fail("cannot replace the file");
  temp_.clear();
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer = AtomicFileWriter::Open(path);
  if (!writer.ok()) return writer.status();
  HLOMEM_RETURN_IF_ERROR((*writer)->Append(contents));
  return (*writer)->Commit();
}

}  // namespace hlomem
