#include "lib/base/file_contents.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"

namespace hlomem {
namespace {

// A decompressed proto larger than this is treated as hostile input.
constexpr size_t kMaxInflatedBytes = size_t{16} << 30;

absl::Status ErrnoError(const std::string& path, absl::string_view what) {
  return FileError(path, absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::StatusOr<std::string> ReadAll(int fd, const std::string& path) {
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(path, "cannot read");
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

bool IsGzip(absl::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

absl::StatusOr<std::string> Gunzip(absl::string_view path,
                                   absl::string_view bytes,
                                   size_t max_output_bytes) {
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  // 16 + MAX_WBITS: expect a gzip header, not a raw zlib one.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return FileError(path, "cannot initialise zlib");
  }
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&stream);
      return FileError(path, rc == Z_BUF_ERROR
                                 ? "truncated gzip stream"
                                 : "corrupt gzip stream");
    }
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (out.size() > max_output_bytes) {
      inflateEnd(&stream);
      return FileError(path, "gzip stream inflates past the size limit");
    }
    if (rc == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      return FileError(path, "truncated gzip stream");
    }
  }
  inflateEnd(&stream);
  return out;
}

absl::StatusOr<std::shared_ptr<const FileContents>> FileContents::Open(
    const std::string& path, bool decompress_gzip) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "cannot open");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const absl::Status status = ErrnoError(path, "cannot stat");
    ::close(fd);
    return status;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return FileError(path, "is a directory");
  }
  std::shared_ptr<FileContents> contents(new FileContents());
  contents->path_ = path;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping != MAP_FAILED) {
      contents->mapping_ = mapping;
      contents->mapping_size_ = size;
      contents->data_ = absl::string_view(static_cast<const char*>(mapping), size);
    }
  }
  if (contents->mapping_ == nullptr) {
    absl::StatusOr<std::string> bytes = ReadAll(fd, path);
    if (!bytes.ok()) {
      ::close(fd);
      return bytes.status();
    }
    contents->owned_ = std::move(*bytes);
    contents->data_ = contents->owned_;
  }
  ::close(fd);
  if (decompress_gzip && IsGzip(contents->data_)) {
    absl::StatusOr<std::string> inflated =
        Gunzip(path, contents->data_, kMaxInflatedBytes);
    if (!inflated.ok()) return inflated.status();
    return FromString(path, std::move(*inflated));
  }
  return std::shared_ptr<const FileContents>(std::move(contents));
}

std::shared_ptr<const FileContents> FileContents::FromString(std::string path,
                                                             std::string bytes) {
  std::shared_ptr<FileContents> contents(new FileContents());
  contents->path_ = std::move(path);
  contents->owned_ = std::move(bytes);
  contents->data_ = contents->owned_;
  return contents;
}

void FileContents::ReleasePages(size_t begin, size_t end) const {
  if (mapping_ == nullptr) return;
  end = std::min(end, mapping_size_);
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  begin = (begin + page - 1) / page * page;  // whole pages only
  end = end / page * page;
  if (begin >= end) return;
  // A private, never-written file mapping: dropped pages read back from the
  // file unchanged.
  ::madvise(static_cast<char*>(mapping_) + begin, end - begin, MADV_DONTNEED);
}

FileContents::~FileContents() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

}  // namespace hlomem
