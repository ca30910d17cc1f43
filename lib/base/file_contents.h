// Read-only file contents: memory-mapped when possible (dumps are 100 MB+ and
// the model keeps views into them), read into memory otherwise (pipes, empty
// files), and inflated when the file is gzip-compressed (.pb.gz).
#ifndef HLOMEM_LIB_BASE_FILE_CONTENTS_H_
#define HLOMEM_LIB_BASE_FILE_CONTENTS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem {

class FileContents {
 public:
  // Opens `path`. Gzip data (magic 1f 8b) is decompressed when
  // `decompress_gzip` is true. Errors read "path: error: ...".
  static absl::StatusOr<std::shared_ptr<const FileContents>> Open(
      const std::string& path, bool decompress_gzip = true);

  // Wraps bytes already in memory (tests, fuzzers, stdin).
  static std::shared_ptr<const FileContents> FromString(std::string path,
                                                        std::string bytes);

  FileContents(const FileContents&) = delete;
  FileContents& operator=(const FileContents&) = delete;
  ~FileContents();

  const std::string& path() const { return path_; }
  absl::string_view data() const { return data_; }
  bool is_mapped() const { return mapping_ != nullptr; }

  // Lets the kernel drop the resident pages wholly inside data()[begin,
  // end) from this process. The bytes stay readable (a later read maps them
  // again from the page cache); only the memory they hold is given back.
  // Readers of 1 GB files call it on what they have parsed, so the input
  // does not stay resident beside the model. No-op unless mapped.
  void ReleasePages(size_t begin, size_t end) const;

 private:
  FileContents() = default;

  std::string path_;
  absl::string_view data_;
  void* mapping_ = nullptr;  // non-null when data_ points into an mmap
  size_t mapping_size_ = 0;
  std::string owned_;        // used when the file is not mapped
};

// True if `bytes` begins with the gzip magic number.
bool IsGzip(absl::string_view bytes);

// Inflates a gzip stream. Refuses output larger than `max_output_bytes`.
absl::StatusOr<std::string> Gunzip(absl::string_view path,
                                   absl::string_view bytes,
                                   size_t max_output_bytes);

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_FILE_CONTENTS_H_
