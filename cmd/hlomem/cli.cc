// The hlomem command line. CLI11 lives here and nowhere else: each
// subcommand fills an options struct and calls into lib/.
#include "cmd/hlomem/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/base/allocator.h"
#include "lib/base/atomic_file.h"
#include "lib/base/bytes.h"
#include "lib/base/file_contents.h"
#include "lib/base/metrics.h"
#include "lib/detect/detectors.h"
#include "lib/dump/loader.h"
#include "lib/dump/xla_error.h"
#include "lib/pipeline/capture.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/check.h"
#include "lib/report/device.h"
#include "lib/target/gpu.h"
#include "lib/report/diff.h"
#include "lib/report/fit_result.h"
#include "lib/report/report.h"
#include "lib/target/resolve.h"
#include "lib/report/writers.h"
#include "version.h"

namespace {

// Exit codes, the diff/grep convention CI systems expect: 1 is reserved for
// a failed gate (`hlomem check`).
constexpr int kExitOk = 0;
constexpr int kExitGateFailed = 1;
constexpr int kExitBadInput = 2;

void PrintError(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "%s\n", w.c_str());
}

// Writes `text` to `path` atomically, or to stdout when `path` is empty.
int Emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  absl::Status status = hlomem::WriteFileAtomically(path, text);
  if (!status.ok()) {
    PrintError(status);
    return kExitBadInput;
  }
  return kExitOk;
}

// Writes the JSON report to `path` (atomically) or to stdout as it is
// made: a large report is never held whole.
int EmitJson(const hlomem::report::Report& report, const hlomem::report::WriteOptions& options,
             const std::string& path) {
  absl::Status status;
  if (path.empty() || path == "-") {
    status = hlomem::report::WriteJsonTo(report, options, [](absl::string_view piece) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      return absl::OkStatus();
    });
  } else {
    absl::StatusOr<std::unique_ptr<hlomem::AtomicFileWriter>> file =
        hlomem::AtomicFileWriter::Open(path);
    status = file.status();
    if (file.ok()) {
      status = hlomem::report::WriteJsonTo(
          report, options, [&](absl::string_view piece) { return (*file)->Append(piece); });
      if (status.ok()) status = (*file)->Commit();
    }
  }
  if (!status.ok()) {
    PrintError(status);
    return kExitBadInput;
  }
  return kExitOk;
}

// --stage: "" reads each module after optimizations, or before them as an
// estimate where that is all there is; "after" or "before" reads only the
// modules dumped at that stage.
void ApplyStage(const std::string& stage, hlomem::dump::LoadOptions* options) {
  options->stage = stage == "before" ? hlomem::dump::Stage::kBeforeOptimizations
                                     : hlomem::dump::Stage::kAfterOptimizations;
  options->stage_only = !stage.empty();
}

constexpr const char* kStageHelp =
    "Only the modules dumped at this stage: after or before optimizations (default: after, or "
    "before as an estimate for a module that has nothing else)";

// Resource guards against hostile or runaway input, raisable per run, and
// the threads that reading may use.
struct LimitFlags {
  int max_nesting_depth = hlomem::hlo::ParseOptions{}.max_nesting_depth;
  int64_t max_elements = hlomem::hlo::kDefaultMaxElements;
  int threads = 0;

  void ApplyTo(hlomem::dump::LoadOptions* options) const {
    options->parse.max_nesting_depth = max_nesting_depth;
    options->max_elements = max_elements;
    options->threads = threads;
  }
};

// A lower bound stated plainly ("--top: must be at least 1, not -1"); CLI11's
// own PositiveNumber prints the largest double as the upper bound.
CLI::Validator AtLeast(double min) {
  return CLI::Validator(
      [min](std::string& input) -> std::string {
        double value = 0;
        if (!absl::SimpleAtod(input, &value)) return absl::StrCat("expected a number, not '", input, "'");
        if (value < min) return absl::StrCat("must be at least ", min, ", not ", input);
        return "";
      },
      absl::StrCat(">= ", min));
}

void AddLimitFlags(CLI::App* command, LimitFlags* limits) {
  command->add_option("--max-nesting-depth", limits->max_nesting_depth,
                      absl::StrCat("Refuse HLO nested deeper than N tuple/bracket levels (default: ",
                                   limits->max_nesting_depth, ")"))
      ->check(CLI::Range(1, hlomem::hlo::kMaxNestingDepthLimit));
  command->add_option("--max-elements", limits->max_elements,
                      absl::StrCat("Refuse modules with more than N instructions plus tuple "
                                   "elements (default: ", limits->max_elements, ")"))
      ->check(AtLeast(1));
  command->add_option("--threads", limits->threads,
                      "Parse on N threads: modules side by side, a large one in parts "
                      "(default: one per core)")
      ->check(AtLeast(1));
}

// The line `parse` prints for a loaded module.
std::string ParseSummary(const hlomem::dump::LoadedModule& m) {
  const std::string& file = m.files_read.empty() ? m.files.key : m.files_read.front();
  if (!m.module) {
    return absl::StrFormat(
        "%s: XLA buffer assignment only: %zu allocations, total %lld bytes", file,
        m.xla->allocations.size(),
        static_cast<long long>(m.xla->total_bytes.value_or(m.xla->SumOfAllocationSizes())));
  }
  const hlomem::hlo::Module& module = *m.module;
  return absl::StrFormat("%s: module %s: %d computations, %d instructions%s%s", file,
                         module.name.empty() ? "<unnamed>" : module.name,
                         module.computations.size(), module.instructions.size(),
                         module.is_scheduled ? ", scheduled" : "",
                         m.xla ? ", with XLA's buffer assignment" : "");
}

int RunParse(const std::vector<std::string>& paths, const std::string& stage,
             const LimitFlags& limits) {
  hlomem::dump::LoadOptions options;
  ApplyStage(stage, &options);
  limits.ApplyTo(&options);
  // Each module's line is made as soon as it is loaded and its model freed.
  absl::StatusOr<hlomem::dump::ConsumedLoad<std::string>> loaded =
      hlomem::dump::LoadDumpsConsuming<std::string>(
          paths, options, [](hlomem::dump::LoadedModule& m, size_t) { return ParseSummary(m); });
  if (!loaded.ok()) {
    PrintError(loaded.status());
    return kExitBadInput;
  }
  PrintWarnings(loaded->load.warnings);
  for (size_t k = 0; k < loaded->results.size(); ++k) {
    PrintWarnings(loaded->load.modules[k].warnings);
    std::printf("%s\n", loaded->results[k].c_str());
  }
  return loaded->load.warnings.empty() ? kExitOk : kExitBadInput;
}

struct ReportFlags {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  std::string stage;  // "", "after" or "before": see ApplyStage
  std::string module_regex;
  int top = 10;
  bool no_color = false;
  int64_t alignment = 0;
  std::string target;
  std::string error_path;  // --error: an out-of-memory message to explain
  std::string min_bytes;
  std::string frames = "user";
  std::vector<std::string> skip_frames;
  std::string sort = "size";
  std::string device;
  std::string device_memory;
  std::optional<double> mem_fraction;
  bool stats = false;  // report --stats: time and memory per phase on stderr
  bool skip_unreadable = false;
  bool all = false;  // --all: every module in full, as today's dump holds them
  bool full = false;  // --full: every buffer and timeline step in the JSON
  LimitFlags limits;
};

// --all, for the commands whose text summarizes a dump's helper modules.
void AddAllFlag(CLI::App* command, ReportFlags* flags) {
  command->add_flag("--all", flags->all,
                    "Show every module in full (default: the small helper modules JAX compiles "
                    "around a step, such as jit__normal or jit_true_divide, and further compiles of "
                    "a module already shown are summarized on one line each)");
}

// The flags every command that builds a report takes (report, diff, check,
// capture).
void AddReportFlags(CLI::App* command, ReportFlags* flags) {
  command->add_option("-o,--output", flags->output, "Write to FILE (atomically) instead of stdout");
  command->add_option("--top", flags->top, "Rows per table")->check(AtLeast(1));
  command->add_flag("--full", flags->full,
                    "JSON: every buffer and every timeline step (default: the 1000 largest buffers "
                    "live at the peak and the 1000 largest of all, and the timeline in at most "
                    "10,000 steps, each span's highest; \"truncated\" says what was cut)");
  command->add_option("--module", flags->module_regex, "Only modules whose name matches REGEX");
  command->add_option("--stage", flags->stage, kStageHelp)
      ->check(CLI::IsMember({"after", "before"}));
  command->add_flag("--no-color", flags->no_color, "No ANSI colors (also: NO_COLOR set, or not a terminal)");
  command->add_option("--alignment", flags->alignment,
                      "Temp heap alignment in bytes (default: the target's: 64 on CPU, 256 on GPU, "
                      "512 on TPU)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  command->add_option("--error", flags->error_path,
                      "A file holding XLA's out-of-memory error (E1000 CompileTimeHbmOom, TPU runtime, "
                      "GPU): explain it against the dump. A GPU log's allocator limit (\"XLA backend "
                      "allocating ... for BFCAllocator\", \"pool limit\", \"Limit:\") decides the device fit");
  command->add_option("--target", flags->target,
                      "The backend rules to apply (default: read from the dump): " +
                          hlomem::target::KnownTargetNames());
  command->add_option("--sort", flags->sort,
                      "Module order: size (largest peak first, after an index of all modules) or dump "
                      "(as found)")
      ->check(CLI::IsMember({"size", "dump"}));
  command->add_option("--frames", flags->frames,
                      "Which frame of each Python stack is a buffer's source line: user (the innermost "
                      "outside the frameworks (jax, flax, optax, orbax, numpy, ...) and Python's own "
                      "files; installed model code counts as yours) or all (the innermost)")
      ->check(CLI::IsMember({"user", "all"}));
  command->add_option("--skip-frames", flags->skip_frames,
                      "PKG: skip this package's frames too, like a framework's (repeatable; "
                      "comma-separated; e.g. --skip-frames my_trainer.utils)")
      ->delimiter(',');
  command->add_option("--min-bytes", flags->min_bytes,
                      "Report findings saving at least SIZE (e.g. 1MiB; default: each detector's)");
  command->add_option("--device", flags->device,
                      "Check the fit on a device preset: h100-80gb, a100-40gb, a100-80gb, h200-141gb, "
                      "v5e-16gb, ... (`hlomem devices` lists them)");
  command->add_option("--device-memory", flags->device_memory, "Check the fit on a device with SIZE of memory");
  command->add_option("--mem-fraction", flags->mem_fraction,
                      "Share of device memory XLA may use (default: XLA_CLIENT_MEM_FRACTION or "
                      "XLA_PYTHON_CLIENT_MEM_FRACTION, else 0.75 on GPUs, 1.0 on TPUs)");
  command->add_flag("--skip-unreadable", flags->skip_unreadable,
                    "Go on without the modules of a dump that cannot be read (default: name them "
                    "and exit 2, since a verdict without them could pass wrongly)");
  AddLimitFlags(command, &flags->limits);
}

// The --format choices, as ParseFormat knows them.
std::vector<std::string> FormatNames() {
  return {std::begin(hlomem::report::kFormatNames), std::end(hlomem::report::kFormatNames)};
}

// Reads a report back from `report --format json` output (mapped, not
// copied: a big module's report is tens of megabytes).
absl::StatusOr<hlomem::report::Report> ReadReportJson(const std::string& path) {
  absl::StatusOr<std::shared_ptr<const hlomem::FileContents>> file = hlomem::FileContents::Open(path);
  if (!file.ok()) return file.status();
  return hlomem::report::ReadJsonReport((*file)->data(), path);
}

// A progress line on stderr while modules are read and analysed, on a
// terminal only: the module, then the step it is in (the steps of a 1 GB
// module take seconds each).
struct ProgressLine {
  std::mutex mutex;
  std::string module;  // "analysing module 2/3: name"; empty while the first loads
  bool ended = false;
};
ProgressLine& Progress() {
  static auto* line = new ProgressLine();
  return *line;
}

// For each load (diff loads two): the line starts over.
void StartProgress() {
  ProgressLine& line = Progress();
  std::lock_guard<std::mutex> lock(line.mutex);
  line.module.clear();
  line.ended = false;
}

void ShowProgress(size_t done, size_t total, const std::string& name) {
  ProgressLine& line = Progress();
  std::lock_guard<std::mutex> lock(line.mutex);
  if (line.ended) return;
  if (done == total) {
    line.ended = true;
    std::fprintf(stderr, "\r\x1b[K");
  } else {
    line.module = absl::StrFormat("analysing module %zu/%zu: %s", done + 1, total, name);
    std::fprintf(stderr, "\r\x1b[K%s", line.module.c_str());
  }
  std::fflush(stderr);
}

// Metrics::PhaseObserver for the progress line. With modules side by side,
// the step shown is the latest to start, whichever module it is in.
void ShowPhase(const char* phase) {
  ProgressLine& line = Progress();
  std::lock_guard<std::mutex> lock(line.mutex);
  if (line.ended) return;
  std::fprintf(stderr, "\r\x1b[K%s [%s]", line.module.empty() ? "reading" : line.module.c_str(),
               phase);
  std::fflush(stderr);
}

// What an error log (--error FILE, "-": stdin) holds: its out-of-memory
// errors and the allocator limit it states.
struct ErrorLog {
  std::vector<hlomem::dump::XlaOomError> errors;
  std::optional<hlomem::dump::AllocatorLimit> limit;
};

// Reads an error log; printed errors and nullopt when it cannot be read or
// holds no out-of-memory error (nor, unless `need_error`, an allocator
// limit: a run's log without an error still gives the limit to fit against).
std::optional<ErrorLog> ReadErrorLog(const std::string& path, bool need_error) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    absl::StatusOr<std::shared_ptr<const hlomem::FileContents>> file = hlomem::FileContents::Open(path);
    if (!file.ok()) {
      PrintError(file.status());
      return std::nullopt;
    }
    text = std::string((*file)->data());
  }
  ErrorLog log;
  log.limit = hlomem::dump::ChooseAllocatorLimit(hlomem::dump::ParseAllocatorLimits(text));
  absl::StatusOr<std::vector<hlomem::dump::XlaOomError>> errors =
      hlomem::dump::ParseXlaOomErrors(path == "-" ? "<stdin>" : path, text);
  if (errors.ok()) {
    log.errors = std::move(*errors);
  } else if (need_error || !log.limit) {
    PrintError(errors.status());
    return std::nullopt;
  }
  return log;
}

std::string UnmatchedErrorWarning(const std::string& path, const hlomem::dump::XlaOomError& e) {
  return absl::StrCat(path, ":", e.line, ": warning: no module of the dump matches this error",
                      e.module_name.empty() ? "" : absl::StrCat(" (module ", e.module_name, ")"));
}

// Builds the report of dump paths, or reads it when the one path is a
// report's JSON; then applies the device fit. Errors are printed.
// `rows` and `max_rows`: pipeline::ReportOptions's, for a report that only
// the writers that need fewer rows read.
std::optional<hlomem::report::Report> LoadReport(
    const std::vector<std::string>& paths, const ReportFlags& flags,
    hlomem::pipeline::ReportOptions::Rows rows = hlomem::pipeline::ReportOptions::Rows::kAll,
    size_t max_rows = 0) {
  absl::StatusOr<hlomem::report::Report> report;
  if (paths.size() == 1 && absl::EndsWith(paths[0], ".json")) {
    report = ReadReportJson(paths[0]);
  } else {
    hlomem::pipeline::ReportOptions options;
    ApplyStage(flags.stage, &options.load);
    flags.limits.ApplyTo(&options.load);
    options.module_regex = flags.module_regex;
    options.alignment = flags.alignment;
    options.target = flags.target;
    options.rows = rows;
    options.max_rows = max_rows;
    options.frames.innermost_only = flags.frames == "all";
    options.frames.skip_packages = flags.skip_frames;
    const bool show_progress = ::isatty(STDERR_FILENO) != 0;
    if (show_progress) {
      StartProgress();
      options.progress = ShowProgress;
      hlomem::Metrics::ObservePhases(ShowPhase);
    }
    if (!flags.min_bytes.empty()) {
      absl::StatusOr<int64_t> min_bytes = hlomem::ParseByteSize(flags.min_bytes);
      if (!min_bytes.ok()) {
        std::fprintf(stderr, "error: --min-bytes: %s\n", std::string(min_bytes.status().message()).c_str());
        return std::nullopt;
      }
      options.detect.min_bytes = *min_bytes;
    }
    report = hlomem::pipeline::BuildReport(paths, options);
    if (show_progress) {
      // Cleared on an error too, before it is printed.
      hlomem::Metrics::ObservePhases(nullptr);
      ShowProgress(0, 0, "");
    }
  }
  if (!report.ok()) {
    PrintError(report.status());
    return std::nullopt;
  }
  if (!report->unreadable.empty()) {
    if (!flags.skip_unreadable) {
      std::fprintf(stderr, "%s\n", hlomem::report::UnreadableError(*report, "--skip-unreadable").c_str());
      return std::nullopt;
    }
    hlomem::report::WarnOfUnreadable(&*report, "--skip-unreadable");
  }
  if (flags.sort == "size") hlomem::report::SortModulesLargestFirst(&*report);
  hlomem::report::DeviceRequest request;
  request.preset = flags.device;
  request.memory = flags.device_memory;
  request.mem_fraction = flags.mem_fraction;
  request.env_fraction = std::getenv("XLA_CLIENT_MEM_FRACTION");
  request.env_fraction_legacy = std::getenv("XLA_PYTHON_CLIENT_MEM_FRACTION");
  absl::StatusOr<std::optional<hlomem::report::DeviceBudget>> budget =
      hlomem::report::ResolveDevice(request);
  if (!budget.ok()) {
    PrintError(budget.status());
    return std::nullopt;
  }
  if (*budget) hlomem::report::ApplyDeviceFit(**budget, &*report);
  if (!flags.error_path.empty()) {
    std::optional<ErrorLog> log = ReadErrorLog(flags.error_path, /*need_error=*/false);
    if (!log) return std::nullopt;
    // The allocator's limit in the log decides over a preset's figure.
    if (log->limit) hlomem::report::ApplyAllocatorLimit(*log->limit, &*report);
    for (const hlomem::dump::XlaOomError& e :
         hlomem::report::ApplyOomErrors(std::move(log->errors), &*report)) {
      report->warnings.push_back(UnmatchedErrorWarning(flags.error_path, e));
    }
  }
  return std::move(*report);
}

hlomem::report::WriteOptions MakeWriteOptions(const ReportFlags& flags) {
  hlomem::report::WriteOptions options;
  options.top = flags.top;
  options.all_modules = flags.all;
  if (flags.full) options.json_max_buffers = options.json_max_timeline = 0;
  const bool to_terminal = (flags.output.empty() || flags.output == "-") && ::isatty(STDOUT_FILENO);
  options.color = to_terminal && !flags.no_color && std::getenv("NO_COLOR") == nullptr;
  return options;
}

int RunReport(const ReportFlags& flags) {
  const auto start = std::chrono::steady_clock::now();
  if (flags.stats) hlomem::Metrics::Enable();
  absl::StatusOr<hlomem::report::Format> format = hlomem::report::ParseFormat(flags.format);
  if (!format.ok()) {
    PrintError(format.status());
    return kExitBadInput;
  }
  const hlomem::report::WriteOptions write_options = MakeWriteOptions(flags);
  // Rows are built only for the buffers the format shows: a bounded JSON
  // its largest, text and Markdown those live at the peak. An error log's
  // explanation reads every row.
  using Rows = hlomem::pipeline::ReportOptions::Rows;
  Rows rows = Rows::kAll;
  if (flags.error_path.empty()) {
    if (*format == hlomem::report::Format::kJson) rows = Rows::kLargest;
    if (*format == hlomem::report::Format::kText || *format == hlomem::report::Format::kMarkdown) {
      rows = Rows::kLiveAtPeak;
    }
  }
  std::optional<hlomem::report::Report> report =
      LoadReport(flags.paths, flags, rows, write_options.json_max_buffers);
  if (!report) return kExitBadInput;
  if (*format != hlomem::report::Format::kJson) {
    // Warnings go to stderr; the report itself stays clean.
    PrintWarnings(report->warnings);
    report->warnings.clear();
  }
  int exit_code;
  {
    hlomem::ScopedPhase phase("write");
    exit_code = *format == hlomem::report::Format::kJson
                    ? EmitJson(*report, write_options, flags.output)
                    : Emit(hlomem::report::WriteReport(*report, *format, write_options),
                           flags.output);
  }
  if (flags.stats) {
    const std::chrono::duration<double> total = std::chrono::steady_clock::now() - start;
    std::fprintf(stderr, "%s", hlomem::Metrics::Report(total.count()).c_str());
  }
  return exit_code;
}

int RunDiff(const std::string& path_a, const std::string& path_b, const ReportFlags& flags) {
  absl::StatusOr<hlomem::report::Format> format = hlomem::report::ParseFormat(flags.format);
  if (!format.ok()) {
    PrintError(format.status());
    return kExitBadInput;
  }
  std::optional<hlomem::report::Report> a = LoadReport({path_a}, flags);
  if (!a) return kExitBadInput;
  std::optional<hlomem::report::Report> b = LoadReport({path_b}, flags);
  if (!b) return kExitBadInput;
  PrintWarnings(a->warnings);
  PrintWarnings(b->warnings);
  const hlomem::report::DiffReport diff = hlomem::report::DiffReports(*a, *b);
  return Emit(hlomem::report::WriteDiff(diff, *format, MakeWriteOptions(flags)), flags.output);
}

struct CheckFlags {
  std::string max_total;
  std::string max_temp;
  std::string max_peak;
  std::string baseline;
  std::optional<std::string> tolerance;  // a percentage: "5", "5%"
  std::vector<std::string> fail_on;
  bool allow_new = false;
  bool github = false;
  std::string sarif;
  std::string source_root;
  std::optional<int64_t> at_least;  // a fit result's largest value
};

// Parses a budget flag into `limit`; false (printed) when malformed.
bool ParseBudget(const std::string& text, const char* flag, std::optional<int64_t>* limit) {
  if (text.empty()) return true;
  absl::StatusOr<int64_t> bytes = hlomem::ParseByteSize(text);
  if (!bytes.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", flag, std::string(bytes.status().message()).c_str());
    return false;
  }
  *limit = *bytes;
  return true;
}

// Appends `text` to the file GitHub shows as the job summary, if any.
void AppendToStepSummary(const std::string& text) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (path == nullptr || *path == '\0') return;
  std::ofstream out(path, std::ios::app);
  out << text;
}

// The contents of `path` when it is a `hlomem fit --format json` result.
std::optional<std::string> FitResultText(const std::string& path) {
  if (!absl::EndsWith(path, ".json")) return std::nullopt;
  absl::StatusOr<std::shared_ptr<const hlomem::FileContents>> file = hlomem::FileContents::Open(path);
  if (!file.ok()) return std::nullopt;
  std::string text((*file)->data());
  if (!hlomem::report::LooksLikeFitResult(text)) return std::nullopt;
  return text;
}

// check FIT.json [--baseline COMMITTED.json] [--at-least N].
int RunFitCheck(const std::string& path, const std::string& text, const ReportFlags& flags,
                const CheckFlags& check) {
  if (!check.max_total.empty() || !check.max_temp.empty() || !check.max_peak.empty() ||
      check.tolerance || !check.fail_on.empty() || !flags.device.empty()) {
    std::fprintf(stderr, "%s: error: a fit result is checked with --baseline FIT.json and --at-least N; "
                         "the memory budgets apply to dumps and reports\n", path.c_str());
    return kExitBadInput;
  }
  if (check.baseline.empty() && !check.at_least) {
    std::fprintf(stderr, "error: check needs a gate for a fit result: --baseline FIT.json or --at-least N\n");
    return kExitBadInput;
  }
  absl::StatusOr<hlomem::report::FitResultFile> now = hlomem::report::ParseFitResult(path, text);
  if (!now.ok()) {
    PrintError(now.status());
    return kExitBadInput;
  }
  std::optional<hlomem::report::FitResultFile> baseline;
  hlomem::report::FitGateOptions options;
  options.at_least = check.at_least;
  if (!check.baseline.empty()) {
    absl::StatusOr<std::shared_ptr<const hlomem::FileContents>> file =
        hlomem::FileContents::Open(check.baseline);
    if (!file.ok()) {
      PrintError(file.status());
      return kExitBadInput;
    }
    absl::StatusOr<hlomem::report::FitResultFile> read =
        hlomem::report::ParseFitResult(check.baseline, std::string((*file)->data()));
    if (!read.ok()) {
      PrintError(read.status());
      return kExitBadInput;
    }
    baseline = std::move(*read);
    options.baseline = &*baseline;
  }
  absl::StatusOr<hlomem::report::FitGateResult> result = hlomem::report::CheckFitResult(*now, options);
  if (!result.ok()) {
    PrintError(result.status());
    return kExitBadInput;
  }
  const int emitted = Emit(hlomem::report::FormatFitGate(*now, *result), flags.output);
  if (emitted != kExitOk) return emitted;
  return result->passed() ? kExitOk : kExitGateFailed;
}

int RunCheck(const ReportFlags& flags, const CheckFlags& check) {
  if (flags.paths.size() == 1) {
    if (std::optional<std::string> fit = FitResultText(flags.paths[0])) {
      return RunFitCheck(flags.paths[0], *fit, flags, check);
    }
  }
  if (check.at_least) {
    std::fprintf(stderr, "error: --at-least applies to a fit result (hlomem fit --format json -o FIT.json)\n");
    return kExitBadInput;
  }
  hlomem::report::CheckOptions options;
  if (!ParseBudget(check.max_total, "--max-total", &options.max_total) ||
      !ParseBudget(check.max_temp, "--max-temp", &options.max_temp) ||
      !ParseBudget(check.max_peak, "--max-peak", &options.max_peak)) {
    return kExitBadInput;
  }
  for (const std::string& name : check.fail_on) {
    bool known = name == "all";
    for (const hlomem::detect::DetectorInfo& d : hlomem::detect::Detectors()) known = known || d.name == name;
    if (!known) {
      std::fprintf(stderr, "error: --fail-on: unknown detector '%s' (`hlomem detectors` lists them)\n",
                   name.c_str());
      return kExitBadInput;
    }
  }
  options.fail_on = check.fail_on;
  if (check.tolerance) {
    absl::StatusOr<double> tolerance = hlomem::ParsePercent(*check.tolerance);
    if (!tolerance.ok()) {
      std::fprintf(stderr, "error: --tolerance: %s\n", std::string(tolerance.status().message()).c_str());
      return kExitBadInput;
    }
    if (check.baseline.empty()) {
      std::fprintf(stderr, "error: --tolerance applies to growth over --baseline, and no --baseline is given\n");
      return kExitBadInput;
    }
    options.tolerance_percent = *tolerance;
  }
  std::optional<hlomem::report::Report> baseline;
  if (!check.baseline.empty()) {
    struct stat info;
    if (::stat(check.baseline.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      std::fprintf(stderr,
                   "%s: error: --baseline takes a report's JSON, not a dump folder; record one with "
                   "`hlomem report --format json -o baseline.json %s` and commit it\n",
                   check.baseline.c_str(), check.baseline.c_str());
      return kExitBadInput;
    }
    absl::StatusOr<hlomem::report::Report> read = ReadReportJson(check.baseline);
    if (!read.ok()) {
      PrintError(read.status());
      return kExitBadInput;
    }
    baseline = std::move(*read);
    options.baseline = &*baseline;
  }
  const bool has_gate = options.max_total || options.max_temp || options.max_peak || options.baseline ||
                        !options.fail_on.empty() || !flags.device.empty() || !flags.device_memory.empty();
  if (!has_gate) {
    std::fprintf(stderr,
                 "error: check needs a gate: --max-total, --max-temp, --max-peak, --baseline, "
                 "--fail-on, --device or --device-memory\n");
    return kExitBadInput;
  }
  std::optional<hlomem::report::Report> report = LoadReport(flags.paths, flags);
  if (!report) return kExitBadInput;
  PrintWarnings(report->warnings);
  if (options.baseline != nullptr) {
    // --module chooses the baseline's modules as it chose the dump's.
    if (!flags.module_regex.empty()) {
      const std::regex filter(flags.module_regex);
      std::vector<hlomem::report::ModuleReport>& modules = baseline->modules;
      modules.erase(std::remove_if(modules.begin(), modules.end(),
                                   [&](const hlomem::report::ModuleReport& m) {
                                     return !std::regex_search(m.name, filter);
                                   }),
                    modules.end());
    }
    const absl::Status matched =
        hlomem::report::ValidateBaseline(*report, *options.baseline, check.allow_new,
                                         "Record the baseline again from the same program (hlomem "
                                         "report --format json -o FILE), choose modules with --module "
                                         "REGEX, or pass --allow-new to check the paired modules and "
                                         "list the others");
    if (!matched.ok()) {
      PrintError(matched);
      return kExitBadInput;
    }
  }
  const hlomem::report::CheckResult result = hlomem::report::RunCheck(*report, options);
  std::string source_root = check.source_root;
  if (source_root.empty() && std::getenv("GITHUB_WORKSPACE") != nullptr) {
    source_root = std::getenv("GITHUB_WORKSPACE");
  }
  hlomem::report::WriteOptions write = MakeWriteOptions(flags);
  write.color = false;
  if (check.github) {
    // Annotations on stderr keep stdout for the report (abicheck does so).
    const std::string annotations = hlomem::report::GithubAnnotations(result, *report, source_root, 10, flags.all);
    std::fwrite(annotations.data(), 1, annotations.size(), stderr);
    AppendToStepSummary(hlomem::report::WriteCheckMarkdown(result, *report, write));
  }
  if (!check.sarif.empty()) {
    absl::Status written = hlomem::WriteFileAtomically(
        check.sarif, hlomem::report::WriteSarif(result, *report, source_root, HLOMEM_VERSION));
    if (!written.ok()) {
      PrintError(written);
      return kExitBadInput;
    }
  }
  const std::string text = flags.format == "markdown"
                               ? hlomem::report::WriteCheckMarkdown(result, *report, write)
                               : hlomem::report::FormatCheckText(result, flags.all);
  const int emitted = Emit(text, flags.output);
  if (emitted != kExitOk) return emitted;
  return result.passed() ? kExitOk : kExitGateFailed;
}

// The dump an error log points at when none is given: the --xla_dump_to of
// XLA_FLAGS, if that directory exists.
std::string DumpDirFromEnvironment() {
  const char* flags = std::getenv("XLA_FLAGS");
  if (flags == nullptr) return "";
  const std::string dir = hlomem::pipeline::DumpDirInFlags(flags);
  return !dir.empty() && ::access(dir.c_str(), R_OK) == 0 ? dir : "";
}

// 1 when a dump was given and no error of the log could be tied to one of
// its modules: nothing was explained.
int ExplainedStatus(const hlomem::report::Report& report, const ReportFlags& flags) {
  if (flags.paths.empty()) return kExitOk;
  for (const hlomem::report::ModuleReport& m : report.modules) {
    if (m.oom) return kExitOk;
  }
  std::fprintf(stderr, "hlomem explain: no module of the dump matches the error; nothing explained\n");
  return kExitGateFailed;
}

// `explain`'s work on errors already read; `origin` names them in warnings.
int ExplainErrors(std::vector<hlomem::dump::XlaOomError> errors, const std::string& origin,
                  ReportFlags flags) {
  if (flags.paths.empty()) {
    const std::string dir = DumpDirFromEnvironment();
    if (!dir.empty()) {
      std::fprintf(stderr, "explaining against the dump in XLA_FLAGS: %s\n", dir.c_str());
      flags.paths.push_back(dir);
    }
  }
  hlomem::report::Report report;
  std::vector<hlomem::dump::XlaOomError> unmatched = std::move(errors);
  if (!flags.paths.empty()) {
    std::optional<hlomem::report::Report> loaded = LoadReport(flags.paths, flags);
    if (!loaded) return kExitBadInput;
    report = std::move(*loaded);
    // The log's allocator limit (every error of it carries the same one).
    for (const hlomem::dump::XlaOomError& e : unmatched) {
      if (!e.allocator_limit) continue;
      hlomem::report::ApplyAllocatorLimit(*e.allocator_limit, &report);
      break;
    }
    unmatched = hlomem::report::ApplyOomErrors(std::move(unmatched), &report);
  }
  PrintWarnings(report.warnings);
  report.warnings.clear();
  if (flags.format == "json") {
    for (const hlomem::dump::XlaOomError& e : unmatched) {
      report.warnings.push_back(UnmatchedErrorWarning(origin, e));
    }
    const int emitted = Emit(hlomem::report::WriteJson(report, MakeWriteOptions(flags)), flags.output);
    return emitted != kExitOk ? emitted : ExplainedStatus(report, flags);
  }
  const int emitted = Emit(hlomem::report::WriteExplainText(report, unmatched, !flags.paths.empty(),
                                                            MakeWriteOptions(flags)),
                           flags.output);
  return emitted != kExitOk ? emitted : ExplainedStatus(report, flags);
}

int RunExplain(const std::string& error_path, const ReportFlags& flags) {
  std::optional<ErrorLog> log = ReadErrorLog(error_path, /*need_error=*/true);
  if (!log) return kExitBadInput;
  return ExplainErrors(std::move(log->errors), error_path, flags);
}

int RunCapture(const std::string& dir, const std::vector<std::string>& command, ReportFlags flags) {
  hlomem::pipeline::CaptureOptions options;
  options.dir = dir;
  options.command = command;
  const char* user_flags = std::getenv("XLA_FLAGS");
  options.user_xla_flags = user_flags != nullptr ? user_flags : "";
  absl::StatusOr<hlomem::pipeline::CaptureResult> run = hlomem::pipeline::RunCapture(options);
  if (!run.ok()) {
    PrintError(run.status());
    return kExitBadInput;
  }
  std::fprintf(stderr, "hlomem capture: XLA_FLAGS=\"%s\"\n", run->xla_flags.c_str());
  if (run->dir_had_files) {
    std::fprintf(stderr, "hlomem capture: warning: %s had files before the run; the report includes them\n",
                 run->dir.c_str());
  }
  if (run->exit_code != 0) {
    std::fprintf(stderr, "hlomem capture: warning: the command exited with status %d; reporting what it dumped\n",
                 run->exit_code);
  }
  if (run->nothing_dumped) {
    std::fprintf(stderr,
                 "hlomem capture: error: the command wrote no XLA dump: it compiled nothing with XLA "
                 "(or a persistent compilation cache served it)\n");
    return run->exit_code != 0 ? run->exit_code : kExitBadInput;
  }
  std::fprintf(stderr, "hlomem capture: dump in %s\n", run->dir.c_str());
  flags.paths = {run->dir};
  // An out-of-memory error in the command's output is explained against
  // the dump instead of a plain report.
  absl::StatusOr<std::vector<hlomem::dump::XlaOomError>> oom =
      hlomem::dump::ParseXlaOomErrors("<command output>", run->stderr_text);
  int status;
  if (oom.ok() && (flags.format == "text" || flags.format == "json")) {
    std::fprintf(stderr, "hlomem capture: the command ran out of memory; explaining it\n");
    status = ExplainErrors(std::move(*oom), "<command output>", flags);
  } else {
    status = RunReport(flags);
  }
  // The command's failure is the capture's: CI must not pass a crashed run.
  return run->exit_code != 0 ? run->exit_code : status;
}

int RunListDevices() {
  std::printf("%-13s %-28s %-30s %s\n", "device", "memory (GPU: what CUDA reports)", "usable by default",
              "where the memory figure comes from");
  for (const hlomem::report::DevicePreset& d : hlomem::report::DevicePresets()) {
    hlomem::report::DeviceRequest request;
    request.preset = std::string(d.name);
    absl::StatusOr<std::optional<hlomem::report::DeviceBudget>> budget =
        hlomem::report::ResolveDevice(request);
    int64_t bytes = d.bytes;
    std::string usable;
    if (budget.ok() && *budget && (*budget)->program_limit) {
      bytes = (*budget)->capacity;
      usable = absl::StrCat(hlomem::HumanBytes(*(*budget)->program_limit), " (XLA:TPU's available HBM)");
    } else if (d.is_gpu) {
      // JAX's allocator: the fraction of the total, truncated to bytes.
      const double fraction = hlomem::target::kJaxGpuMemFraction;
      usable = absl::StrFormat("%s (%.0f%%)",
                               hlomem::HumanBytes(static_cast<int64_t>(static_cast<double>(d.bytes) * fraction)),
                               fraction * 100);
    } else {
      usable = "100%";
    }
    std::printf("%-13s %-28s %-30s %s\n", std::string(d.name).c_str(),
                absl::StrCat(hlomem::HumanBytes(bytes), " (", bytes, " B)").c_str(), usable.c_str(),
                std::string(d.source).c_str());
  }
  std::printf("\nA log's allocator limit (--error FILE: \"XLA backend allocating ... bytes on device 0 for "
              "BFCAllocator\", the out-of-memory dump's \"pool limit\" or \"Limit:\") decides over these.\n");
  return kExitOk;
}

int RunListDetectors() {
  std::printf("%-24s %10s  %s\n", "detector", "threshold", "what it finds");
  for (const hlomem::detect::DetectorInfo& d : hlomem::detect::Detectors()) {
    std::printf("%-24s %10s  %s\n", std::string(d.name).c_str(),
                hlomem::HumanBytes(d.default_min_bytes).c_str(), std::string(d.description).c_str());
  }
  return kExitOk;
}

int RunAssignment(const std::string& path, const std::string& requested_target,
                  bool live_ranges) {
  hlomem::dump::LoadOptions options;
  options.read_xla_assignment = false;
  absl::StatusOr<hlomem::dump::LoadResult> loaded = hlomem::dump::LoadDumps({path}, options);
  if (!loaded.ok()) {
    PrintError(loaded.status());
    return kExitBadInput;
  }
  for (const hlomem::dump::LoadedModule& m : loaded->modules) {
    if (!m.module) continue;
    absl::StatusOr<std::unique_ptr<hlomem::target::Target>> target =
        hlomem::pipeline::ResolveModuleTarget(m, requested_target, /*alignment=*/0);
    if (!target.ok()) {
      PrintError(target.status());
      return kExitBadInput;
    }
    auto assignment = hlomem::analysis::BufferAssignment::Run(*m.module, **target);
    if (!assignment.ok()) {
      PrintError(assignment.status());
      return kExitBadInput;
    }
    std::printf("%s", hlomem::analysis::FormatAllocations(**assignment).c_str());
    if (live_ranges) std::printf("\n%s", hlomem::analysis::FormatLiveRanges(**assignment).c_str());
  }
  return kExitOk;
}

}  // namespace

namespace hlomem::cli {

// `fit` drives JAX's compiles, so it lives in the Python package; this
// binary hands it over to `$HLOMEM_PYTHON -m hlomem fit` (python3 by default).
int RunFit(const std::vector<std::string>& args) {
  const char* env = std::getenv("HLOMEM_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "python3";
  const std::string probe = absl::StrCat(python, " -c 'import hlomem._fit' >/dev/null 2>&1");
  if (std::system(probe.c_str()) != 0) {
    std::fprintf(stderr,
                 "error: hlomem fit needs the hlomem Python package and JAX in %s (pip install the "
                 "wheel: tools/build_wheel.sh; or set HLOMEM_PYTHON to an interpreter that has them)\n",
                 python.c_str());
    return kExitBadInput;
  }
  std::vector<std::string> words = {python, "-m", "hlomem", "fit"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> exec_args;
  for (std::string& w : words) exec_args.push_back(w.data());
  exec_args.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(exec_args[0], exec_args.data());
  std::fprintf(stderr, "error: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
  return kExitBadInput;
}

int Main(int argc, const char* const* argv) {
  hlomem::RetainFreedMemoryForReuse();
  CLI::App app{"hlomem: where the memory of a compiled XLA program goes"};
  app.set_version_flag("--version", absl::StrCat("hlomem ", HLOMEM_VERSION, " (JSON schema version ",
                                                 HLOMEM_SCHEMA_VERSION, ")"));
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 a check failed, 2 bad input or usage.\n"
      "Get a dump: XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_as_proto\" "
      "python train.py");

  std::vector<std::string> parse_paths;
  std::string parse_stage;
  CLI::App* parse = app.add_subcommand("parse", "Parse and verify HLO modules; one line per module");
  parse->add_option("paths", parse_paths, "Dump directories or files (.txt, .hlo, .hlo.pb, .pbtxt)")
      ->required();
  parse->add_option("--stage", parse_stage, kStageHelp)
      ->check(CLI::IsMember({"after", "before"}));
  LimitFlags parse_limits;
  AddLimitFlags(parse, &parse_limits);

  ReportFlags report_flags;
  CLI::App* report = app.add_subcommand("report", "Where the memory goes, module by module");
  report->add_option("paths", report_flags.paths, "Dump directories or files, or a report's .json")
      ->required();
  report->add_option("--format,-f", report_flags.format, "text, json, markdown, csv or html")
      ->check(CLI::IsMember(FormatNames()));
  AddReportFlags(report, &report_flags);
  AddAllFlag(report, &report_flags);
  report->add_flag("--stats", report_flags.stats,
                   "Print time and memory per phase (read, parse, analyze and its steps, detect, "
                   "write) to stderr");

  ReportFlags diff_flags;
  std::string diff_a, diff_b;
  CLI::App* diff = app.add_subcommand(
      "diff", "What changed between two dumps (or reports' .json): totals, peak, buffers, findings");
  diff->add_option("A", diff_a, "The before: a dump directory, file, or report .json")->required();
  diff->add_option("B", diff_b, "The after")->required();
  diff->add_option("--format,-f", diff_flags.format, "text, json, markdown, csv or html")
      ->check(CLI::IsMember(FormatNames()));
  AddReportFlags(diff, &diff_flags);

  ReportFlags check_flags;
  CheckFlags check_gate;
  CLI::App* check = app.add_subcommand(
      "check", "CI gate: exit 1 when a budget, the baseline, a detector or the device fit fails");
  check->add_option("paths", check_flags.paths,
                    "Dump directories or files, a report's .json, or a fit result's .json")
      ->required();
  check->add_option("--max-total", check_gate.max_total, "Fail when a module's total exceeds SIZE (80GiB, 1.5e9)");
  check->add_option("--max-temp", check_gate.max_temp, "Fail when a module's temp bytes exceed SIZE");
  check->add_option("--max-peak", check_gate.max_peak, "Fail when a module's peak live bytes exceed SIZE");
  check->add_option("--baseline", check_gate.baseline,
                    "A previous `hlomem report --format json` (or, when checking a fit result, a "
                    "previous `hlomem fit --format json`)");
  check->add_option("--at-least", check_gate.at_least,
                    "For a fit result (hlomem fit --format json): fail when a combination's largest "
                    "fitting value is below N");
  check->add_option("--tolerance", check_gate.tolerance,
                    "Growth over --baseline allowed, in percent (5 or 5%)");
  check->add_option("--fail-on", check_gate.fail_on, "Fail on any finding of DETECTOR (repeatable; 'all')");
  check->add_flag("--allow-new", check_gate.allow_new,
                  "Check the modules that pair with the baseline and list the others (default: a "
                  "module without a counterpart is an error)");
  check->add_flag("--github", check_gate.github,
                  "GitHub annotations on stderr, and the summary appended to $GITHUB_STEP_SUMMARY");
  check->add_option("--sarif", check_gate.sarif, "Write SARIF 2.1.0 to FILE (for code scanning)");
  check->add_option("--source-root", check_gate.source_root,
                    "Strip DIR from source paths in annotations and SARIF (default: $GITHUB_WORKSPACE)");
  check->add_option("--format,-f", check_flags.format, "text or markdown")
      ->check(CLI::IsMember({"text", "markdown"}));
  AddReportFlags(check, &check_flags);
  AddAllFlag(check, &check_flags);

  ReportFlags capture_flags;
  std::string capture_dir;
  std::vector<std::string> capture_command;
  CLI::App* capture = app.add_subcommand(
      "capture", "Run COMMAND with XLA dump flags added to XLA_FLAGS, then report on the dump");
  capture->add_option("--dir", capture_dir,
                      "Dump directory (default: the --xla_dump_to in XLA_FLAGS, else a new temp dir)");
  capture->add_option("--format,-f", capture_flags.format, "text, json, markdown, csv or html")
      ->check(CLI::IsMember(FormatNames()));
  AddReportFlags(capture, &capture_flags);
  AddAllFlag(capture, &capture_flags);
  capture->add_option("command", capture_command, "-- COMMAND [ARGS...]")->required();
  capture->positionals_at_end();

  ReportFlags explain_flags;
  std::string explain_error;
  CLI::App* explain = app.add_subcommand(
      "explain", "Explain an out-of-memory error (XLA:TPU E1000, TPU runtime, XLA:GPU, BFC) against its dump");
  explain->add_option("error", explain_error, "A file holding the error or the whole log ('-': stdin)")
      ->required();
  explain->add_option("dump", explain_flags.paths,
                      "The dump of the program that failed (default: the --xla_dump_to of XLA_FLAGS)");
  explain->add_option("--format,-f", explain_flags.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  AddReportFlags(explain, &explain_flags);

  CLI::App* devices = app.add_subcommand("devices", "List the --device presets");

  CLI::App* detectors = app.add_subcommand("detectors", "List the waste detectors and their thresholds");

  std::string assignment_path;
  CLI::App* assignment = app.add_subcommand(
      "buffer-assignment", "Print the computed buffer assignment in XLA's -buffer-assignment.txt layout");
  assignment->add_option("path", assignment_path, "HLO file")->required();
  std::string assignment_target;
  assignment->add_option("--target", assignment_target,
                         "The backend rules to apply (default: read from the dump): " +
                             hlomem::target::KnownTargetNames());
  bool assignment_live_ranges = false;
  assignment->add_flag("--live-ranges", assignment_live_ranges,
                       "Also print the schedule and each value's live range, as XLA's -live-range.txt");

  CLI::App* fit = app.add_subcommand(
      "fit", "The largest batch (or other setting) that fits a chip, by XLA's own compiles: "
             "hlomem fit FILE.py:build --set batch=1:4096 --device v5e-16gb (runs the Python package)");
  fit->prefix_command();  // every argument, --help included, goes to `python -m hlomem fit`
  fit->set_help_flag();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (parse->parsed()) return RunParse(parse_paths, parse_stage, parse_limits);
  if (report->parsed()) return RunReport(report_flags);
  if (diff->parsed()) return RunDiff(diff_a, diff_b, diff_flags);
  if (check->parsed()) return RunCheck(check_flags, check_gate);
  if (capture->parsed()) return RunCapture(capture_dir, capture_command, capture_flags);
  if (explain->parsed()) return RunExplain(explain_error, explain_flags);
  if (devices->parsed()) return RunListDevices();
  if (assignment->parsed()) return RunAssignment(assignment_path, assignment_target, assignment_live_ranges);
  if (detectors->parsed()) return RunListDetectors();
  if (fit->parsed()) return RunFit(fit->remaining());
  return kExitBadInput;
}

}  // namespace hlomem::cli
