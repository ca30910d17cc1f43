#include "lib/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"

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

// Devices and pipes (`-o /dev/null`, `-o /dev/stdout`) are written where
// they are: renaming a temporary over one would replace the device itself
// with a regular file.
absl::Status WriteInPlace(const std::string& path, absl::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return FileError(path, absl::StrCat("cannot open: ", std::strerror(errno)));
  if (!WriteAll(fd, contents)) {
    const std::string message = absl::StrCat("cannot write: ", std::strerror(errno));
    ::close(fd);
    return FileError(path, message);
  }
  if (::close(fd) != 0) return FileError(path, absl::StrCat("cannot close: ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode) &&
      !S_ISDIR(existing.st_mode)) {
    return WriteInPlace(path, contents);
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
  const std::string temp(name.data());
  auto fail = [&](absl::string_view what) {
    const std::string message = absl::StrCat(what, ": ", std::strerror(errno));
    ::close(fd);
    ::unlink(temp.c_str());
    return FileError(path, message);
  };
  if (!WriteAll(fd, contents)) return fail("cannot write");
  if (::fchmod(fd, 0644) != 0) return fail("cannot set permissions");
  if (::fsync(fd) != 0) return fail("cannot flush to disk");
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    return FileError(path, absl::StrCat("cannot close: ", std::strerror(errno)));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string message = absl::StrCat("cannot replace the file: ", std::strerror(errno));
    ::unlink(temp.c_str());
    return FileError(path, message);
  }
  return absl::OkStatus();
}

}  // namespace hlomem
