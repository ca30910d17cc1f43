// The pipeline: load a dump, resolve each module's target, assign its
// buffers, profile them and run the detectors, into the report model that
// lib/report's writers, diff and check take. The CLI and tests call it;
// nothing in lib/report does.
#ifndef HLOMEM_LIB_PIPELINE_PIPELINE_H_
#define HLOMEM_LIB_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/detect/detectors.h"
#include "lib/dump/loader.h"
#include "lib/report/report.h"
#include "lib/target/target.h"

namespace hlomem::pipeline {

struct ReportOptions {
  dump::LoadOptions load;
  std::string module_regex;  // empty: all modules
  // --target ("tpu-v5e", "h100", ...); "" resolves it from the dump.
  std::string target;
  // Heap alignment for every colour; 0 keeps the target's (CPU 64, GPU 256,
  // TPU 16 KiB in HBM).
  int64_t alignment = 0;
  detect::DetectOptions detect;
  // How each stack's source line is chosen: the user's innermost frame
  // (frameworks and Python's own frames skipped), or the innermost one
  // (`--frames all`); `--skip-frames` adds packages to skip.
  hlo::FramePolicy frames;
  // Which buffers get a row (report::BufferRow). A big module has a million
  // buffers and most formats write few of them; with a scope the others are
  // only counted, and the rollups at the peak are made from every buffer: the
  // report a bounded JSON reads back as.
  enum class Rows : uint8_t {
    kAll,         // --full, CSV, HTML, diff, check, explain: they read every row
    kLargest,     // those a JSON bounded to max_rows buffers writes (report::KeptRows)
    kLiveAtPeak,  // those live at the peak: all that text and Markdown show
  };
  Rows rows = Rows::kAll;
  size_t max_rows = 0;  // kLargest's bound; 0 is every row
  // Called before each module is analysed (done < total) and once at the
  // end (done == total); for a progress line on a terminal.
  std::function<void(size_t done, size_t total, const std::string& name)> progress;
};

// The target a loaded module was compiled for (target/resolve.h), from
// --target, the dump's target files, its file names, then the HLO: the one
// resolution every command uses.
absl::StatusOr<std::unique_ptr<target::Target>> ResolveModuleTarget(const dump::LoadedModule& in,
                                                                   const std::string& requested,
                                                                   int64_t alignment);

// The report of every module under `paths`, in input order.
absl::StatusOr<report::Report> BuildReport(const std::vector<std::string>& paths,
                                           const ReportOptions& options);

// The report of HLO text held in memory, such as a compiled JAX function's
// `as_text()`: every module in it, parsed and verified as a file would be,
// taken to be of `options.load.stage`. `origin` names the text in errors
// ("path:line:col") and stands for its file in the report.
absl::StatusOr<report::Report> BuildReportFromText(absl::string_view text,
                                                   const std::string& origin,
                                                   const ReportOptions& options);

}  // namespace hlomem::pipeline

#endif  // HLOMEM_LIB_PIPELINE_PIPELINE_H_
