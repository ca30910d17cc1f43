#include "lib/report/writers.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlomem::report {

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  for (size_t k = 0; k < sizeof(kFormatNames) / sizeof(kFormatNames[0]); ++k) {
    if (name == kFormatNames[k]) return static_cast<Format>(k);
  }
  return absl::InvalidArgumentError(absl::StrCat("error: unknown format '", name, "'; known: ",
                                                 absl::StrJoin(kFormatNames, ", ")));
}

std::string WriteReport(const Report& report, Format format, const WriteOptions& options) {
  switch (format) {
    case Format::kText: return WriteText(report, options);
    case Format::kJson: return WriteJson(report, options);
    case Format::kMarkdown: return WriteMarkdown(report, options);
    case Format::kCsv: return WriteCsv(report);
    case Format::kHtml: return WriteHtml(report, options);
  }
  return "";
}

std::string WriteDiff(const DiffReport& diff, Format format, const WriteOptions& options) {
  switch (format) {
    case Format::kText: return WriteDiffText(diff, options);
    case Format::kJson: return WriteDiffJson(diff, options);
    case Format::kMarkdown: return WriteDiffMarkdown(diff, options);
    case Format::kCsv: return WriteDiffCsv(diff);
    case Format::kHtml: return WriteDiffHtml(diff, options);
  }
  return "";
}

}  // namespace hlomem::report
