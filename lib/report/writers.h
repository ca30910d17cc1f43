// Every output format of `hlomem report` and `hlomem diff`. Writers only
// format the model (report.h, diff.h, check.h); they compute nothing.
//   text      aligned tables for a terminal (color only when asked)
//   json      the contract: lib/report/report.schema.json; sizes exact
//   markdown  GitHub-flavoured, sized for $GITHUB_STEP_SUMMARY
//   csv       one row per buffer (RFC 4180)
//   html      one self-contained file: an interactive timeline, no network
#ifndef HLOMEM_LIB_REPORT_WRITERS_H_
#define HLOMEM_LIB_REPORT_WRITERS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/report/check.h"
#include "lib/report/diff.h"
#include "lib/report/report.h"

namespace hlomem::report {

enum class Format : uint8_t { kText, kJson, kMarkdown, kCsv, kHtml };
inline constexpr const char* kFormatNames[] = {"text", "json", "markdown", "csv", "html"};
absl::StatusOr<Format> ParseFormat(absl::string_view name);

struct WriteOptions {
  int top = 10;        // rows per table
  bool color = false;  // ANSI colors in text (only on a terminal)
  int width = 100;     // text columns available for the timeline
  bool json_buffers = true;
  bool json_timeline = true;
  // A JSON report is bounded by default, so that a 1 GB module's report
  // stays tens of megabytes: the buffers live at the peak and the largest
  // others, up to json_max_buffers rows, and the timeline reduced to
  // json_max_timeline steps (each span's maximum, so the peak and every
  // span's high point stay). 0: everything (--full).
  size_t json_max_buffers = 1000;
  size_t json_max_timeline = 10000;
  int json_indent = 2;  // -1 for one line
  // Name options as Python's keywords ("top=N"), not the CLI's flags
  // ("--top N"): the Python face's text.
  bool python_names = false;
  // Text: every module in full, as the dump has them. By default the
  // helper modules JAX compiles around a step (HelperModules) and repeated
  // compiles of a program already shown are summarized on one line each.
  bool all_modules = false;
  // Text: show the modules largest first (ModuleSize) whatever the report's
  // order (Python's reports keep the dump's order; the CLI sorts them).
  bool largest_first = false;
};

// How to ask for more rows: "--top N", or "top=N" for Python.
inline const char* TopHint(const WriteOptions& options) {
  return options.python_names ? "write(top=N)" : "--top N";
}
// How to see every module: "--all", or "write(all=True)" for Python.
inline const char* AllHint(const WriteOptions& options) {
  return options.python_names ? "write(all=True)" : "--all";
}

std::string WriteReport(const Report& report, Format format, const WriteOptions& options);
std::string WriteDiff(const DiffReport& diff, Format format, const WriteOptions& options);

std::string WriteText(const Report& report, const WriteOptions& options);
std::string WriteDiffText(const DiffReport& diff, const WriteOptions& options);
std::string WriteJson(const Report& report, const WriteOptions& options);
// The same bytes handed to `sink` a megabyte at a time, so a report of
// 10^6 buffers is never held whole; the first error `sink` returns.
absl::Status WriteJsonTo(const Report& report, const WriteOptions& options,
                         const std::function<absl::Status(absl::string_view)>& sink);
std::string WriteDiffJson(const DiffReport& diff, const WriteOptions& options);
std::string WriteMarkdown(const Report& report, const WriteOptions& options);
std::string WriteDiffMarkdown(const DiffReport& diff, const WriteOptions& options);
std::string WriteCsv(const Report& report);
std::string WriteDiffCsv(const DiffReport& diff);
std::string WriteHtml(const Report& report, const WriteOptions& options);
std::string WriteDiffHtml(const DiffReport& diff, const WriteOptions& options);

// `hlomem check` as a Markdown job summary (the violations, then the
// report's summary tables).
std::string WriteCheckMarkdown(const CheckResult& result, const Report& report,
                               const WriteOptions& options);
// SARIF 2.1.0 for GitHub code scanning: one result per violation (error)
// and per finding (warning), located at the user's Python file:line.
std::string WriteSarif(const CheckResult& result, const Report& report,
                       const std::string& source_root, const std::string& tool_version);

// `hlomem explain`: each out-of-memory error beside its module: XLA's
// figures and the program's, the allocation that failed (runtime errors),
// what is live at the peak and on which lines, and the findings ranked as
// fixes against the shortfall. `unmatched` are the errors no module took
// (ApplyOomErrors); `have_dump` says whether there were modules to take them.
std::string WriteExplainText(const Report& report, const std::vector<dump::XlaOomError>& unmatched,
                             bool have_dump, const WriteOptions& options);

// Reads a report back from its JSON (a `--baseline`, or a side of `diff`):
// the numbers, rows, timeline, live set and findings; no HLO. `origin`
// names the input in errors.
absl::StatusOr<Report> ReadJsonReport(absl::string_view json, const std::string& origin);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_WRITERS_H_
