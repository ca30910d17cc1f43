// Compiler-style diagnostics: "path:line:col: error: message", then the
// source line and a caret under the column. Line and column are computed
// only when a diagnostic is produced, never on the parsing hot path.
#ifndef HLOMEM_LIB_BASE_DIAGNOSTIC_H_
#define HLOMEM_LIB_BASE_DIAGNOSTIC_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hlomem {

struct LineColumn {
  int64_t line = 1;    // 1-based
  int64_t column = 1;  // 1-based, in bytes
};

// Returns the 1-based line and column of byte `offset` in `text`.
// Offsets past the end are clamped to the end.
LineColumn LocateOffset(absl::string_view text, size_t offset);

// Formats a full diagnostic. `severity` is "error" or "warning". Long source
// lines (HLO module headers can be megabytes) are cut to a window around the
// column so the caret stays readable.
std::string FormatDiagnostic(absl::string_view path, absl::string_view text,
                             size_t offset, absl::string_view severity,
                             absl::string_view message);

// The same diagnostic, wrapped in an InvalidArgument status.
absl::Status ErrorAt(absl::string_view path, absl::string_view text,
                     size_t offset, absl::string_view message);

// "path: error: message" for problems that have no position in a text
// (unreadable file, binary proto with a bad field).
absl::Status FileError(absl::string_view path, absl::string_view message);

}  // namespace hlomem

#endif  // HLOMEM_LIB_BASE_DIAGNOSTIC_H_
