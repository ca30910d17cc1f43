// Writes a whole file so that readers see either the old contents or the
// new, never a partial file: write a temporary beside it, fsync, rename.
// An existing device or pipe (/dev/null, a FIFO) is written in place.
#ifndef HLOMEM_LIB_BASE_ATOMIC_FILE_H_
#define HLOMEM_LIB_BASE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hlomem {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_ATOMIC_FILE_H_
