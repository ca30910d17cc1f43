#include "lib/base/diagnostic.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hlomem {
namespace {

// Source lines longer than this are shown as a window around the column.
constexpr size_t kMaxShownLine = 120;
constexpr size_t kContextBeforeColumn = 60;

}  // namespace

LineColumn LocateOffset(absl::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  LineColumn result;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++result.line;
      line_start = i + 1;
    }
  }
  result.column = static_cast<int64_t>(offset - line_start) + 1;
  return result;
}

std::string FormatDiagnostic(absl::string_view path, absl::string_view text,
                             size_t offset, absl::string_view severity,
                             absl::string_view message) {
  offset = std::min(offset, text.size());
  const LineColumn where = LocateOffset(text, offset);
  std::string out = absl::StrCat(path, ":", where.line, ":", where.column, ": ",
                                 severity, ": ", message);

  const size_t line_start = offset - static_cast<size_t>(where.column - 1);
  size_t line_end = text.find('\n', line_start);
  if (line_end == absl::string_view::npos) line_end = text.size();
  absl::string_view line = text.substr(line_start, line_end - line_start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

  size_t caret = offset - line_start;
  std::string prefix;
  if (line.size() > kMaxShownLine) {
    const size_t window_start =
        caret > kContextBeforeColumn ? caret - kContextBeforeColumn : 0;
    if (window_start > 0) prefix = "...";
    line = line.substr(window_start, kMaxShownLine);
    caret = caret - window_start + prefix.size();
  }
  // Non-printable bytes would misalign the caret or garble the terminal.
  std::string shown = prefix;
  shown.reserve(prefix.size() + line.size());
  for (char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    shown.push_back((u < 0x20 && c != '\t') || u == 0x7f ? '?' : c);
  }
  std::string caret_line;
  for (size_t i = 0; i < caret && i < shown.size(); ++i) {
    caret_line.push_back(shown[i] == '\t' ? '\t' : ' ');
  }
  absl::StrAppend(&out, "\n", shown, "\n", caret_line, "^");
  return out;
}

absl::Status ErrorAt(absl::string_view path, absl::string_view text,
                     size_t offset, absl::string_view message) {
  return absl::InvalidArgumentError(
      FormatDiagnostic(path, text, offset, "error", message));
}

absl::Status FileError(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": error: ", message));
}

}  // namespace hlomem
