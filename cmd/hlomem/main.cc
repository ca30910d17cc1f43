// The hlomem command line. CLI11 lives here and nowhere else: each
// subcommand fills an options struct and calls into lib/.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/base/atomic_file.h"
#include "lib/base/bytes.h"
#include "lib/detect/detectors.h"
#include "lib/dump/loader.h"
#include "lib/report/json_writer.h"
#include "lib/report/report.h"
#include "lib/report/text_writer.h"
#include "version.h"

namespace {

// Exit codes, the diff/grep convention CI systems expect: 1 is reserved for
// a failed gate (`hlomem check`).
constexpr int kExitOk = 0;
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

hlomem::dump::Stage ParseStage(const std::string& stage) {
  return stage == "before" ? hlomem::dump::Stage::kBeforeOptimizations
                           : hlomem::dump::Stage::kAfterOptimizations;
}

int RunParse(const std::vector<std::string>& paths, const std::string& stage) {
  hlomem::dump::LoadOptions options;
  options.stage = ParseStage(stage);
  absl::StatusOr<hlomem::dump::LoadResult> loaded = hlomem::dump::LoadDumps(paths, options);
  if (!loaded.ok()) {
    PrintError(loaded.status());
    return kExitBadInput;
  }
  PrintWarnings(loaded->warnings);
  for (const hlomem::dump::LoadedModule& m : loaded->modules) {
    const std::string& file = m.files_read.empty() ? m.files.key : m.files_read.front();
    PrintWarnings(m.warnings);
    if (!m.module) {
      std::printf("%s: XLA buffer assignment only: %zu allocations, total %lld bytes\n",
                  file.c_str(), m.xla->allocations.size(),
                  static_cast<long long>(m.xla->total_bytes.value_or(m.xla->SumOfAllocationSizes())));
      continue;
    }
    const hlomem::hlo::Module& module = *m.module;
    std::printf("%s\n", absl::StrFormat("%s: module %s: %d computations, %d instructions%s%s",
                                        file, module.name.empty() ? "<unnamed>" : module.name,
                                        module.computations.size(), module.instructions.size(),
                                        module.is_scheduled ? ", scheduled" : "",
                                        m.xla ? ", with XLA's buffer assignment" : "")
                            .c_str());
  }
  return loaded->warnings.empty() ? kExitOk : kExitBadInput;
}

struct ReportFlags {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  std::string stage = "after";
  std::string module_regex;
  int top = 10;
  bool no_color = false;
  int64_t alignment = 0;
  std::string min_bytes;
};

int RunReport(const ReportFlags& flags) {
  hlomem::report::ReportOptions options;
  options.load.stage = ParseStage(flags.stage);
  options.module_regex = flags.module_regex;
  options.alignment = flags.alignment;
  if (!flags.min_bytes.empty()) {
    absl::StatusOr<int64_t> min_bytes = hlomem::ParseByteSize(flags.min_bytes);
    if (!min_bytes.ok()) {
      std::fprintf(stderr, "error: --min-bytes: %s\n", std::string(min_bytes.status().message()).c_str());
      return kExitBadInput;
    }
    options.detect.min_bytes = *min_bytes;
  }
  absl::StatusOr<hlomem::report::Report> report = hlomem::report::BuildReport(flags.paths, options);
  if (!report.ok()) {
    PrintError(report.status());
    return kExitBadInput;
  }
  std::string text;
  if (flags.format == "json") {
    text = hlomem::report::WriteJson(*report);
  } else {
    hlomem::report::TextOptions text_options;
    text_options.top = flags.top;
    const bool to_terminal = flags.output.empty() && ::isatty(STDOUT_FILENO);
    text_options.color = to_terminal && !flags.no_color && std::getenv("NO_COLOR") == nullptr;
    // Warnings go to stderr; the report itself stays clean.
    PrintWarnings(report->warnings);
    report->warnings.clear();
    text = hlomem::report::WriteText(*report, text_options);
  }
  return Emit(text, flags.output);
}

int RunListDetectors() {
  std::printf("%-24s %10s  %s\n", "detector", "threshold", "what it finds");
  for (const hlomem::detect::DetectorInfo& d : hlomem::detect::Detectors()) {
    std::printf("%-24s %10s  %s\n", std::string(d.name).c_str(),
                hlomem::HumanBytes(d.default_min_bytes).c_str(), std::string(d.description).c_str());
  }
  return kExitOk;
}

int RunAssignment(const std::string& path) {
  hlomem::dump::LoadOptions options;
  options.read_xla_assignment = false;
  absl::StatusOr<hlomem::dump::LoadResult> loaded = hlomem::dump::LoadDumps({path}, options);
  if (!loaded.ok()) {
    PrintError(loaded.status());
    return kExitBadInput;
  }
  for (const hlomem::dump::LoadedModule& m : loaded->modules) {
    if (!m.module) continue;
    auto assignment = hlomem::analysis::BufferAssignment::Run(*m.module);
    if (!assignment.ok()) {
      PrintError(assignment.status());
      return kExitBadInput;
    }
    std::printf("%s", hlomem::analysis::FormatAllocations(**assignment).c_str());
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hlomem: where the memory of a compiled XLA program goes"};
  app.set_version_flag("--version", absl::StrCat("hlomem ", HLOMEM_VERSION, " (JSON schema version ",
                                                 HLOMEM_SCHEMA_VERSION, ")"));
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 a check failed, 2 bad input or usage.\n"
      "Get a dump: XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_as_proto\" "
      "python train.py");

  std::vector<std::string> parse_paths;
  std::string parse_stage = "after";
  CLI::App* parse = app.add_subcommand("parse", "Parse and verify HLO modules; one line per module");
  parse->add_option("paths", parse_paths, "Dump directories or files (.txt, .hlo, .hlo.pb, .pbtxt)")
      ->required();
  parse->add_option("--stage", parse_stage, "Which HLO of a dump: after or before optimizations")
      ->check(CLI::IsMember({"after", "before"}));

  ReportFlags report_flags;
  CLI::App* report = app.add_subcommand("report", "Where the memory goes, module by module");
  report->add_option("paths", report_flags.paths, "Dump directories or files")->required();
  report->add_option("--format,-f", report_flags.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  report->add_option("-o,--output", report_flags.output, "Write to FILE (atomically) instead of stdout");
  report->add_option("--top", report_flags.top, "Rows per table")->check(CLI::PositiveNumber);
  report->add_option("--module", report_flags.module_regex, "Only modules whose name matches REGEX");
  report->add_option("--stage", report_flags.stage, "after or before optimizations")
      ->check(CLI::IsMember({"after", "before"}));
  report->add_flag("--no-color", report_flags.no_color, "No ANSI colors");
  report->add_option("--alignment", report_flags.alignment,
                     "Temp heap alignment in bytes (default: 64 on CPU, 256 on GPU)")
      ->check(CLI::PositiveNumber);

  report->add_option("--min-bytes", report_flags.min_bytes,
                     "Report findings saving at least SIZE (e.g. 1MiB; default: each detector's)");

  CLI::App* detectors = app.add_subcommand("detectors", "List the waste detectors and their thresholds");

  std::string assignment_path;
  CLI::App* assignment = app.add_subcommand(
      "buffer-assignment", "Print the computed buffer assignment in XLA's -buffer-assignment.txt layout");
  assignment->add_option("path", assignment_path, "HLO file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  if (parse->parsed()) return RunParse(parse_paths, parse_stage);
  if (report->parsed()) return RunReport(report_flags);
  if (assignment->parsed()) return RunAssignment(assignment_path);
  if (detectors->parsed()) return RunListDetectors();
  return kExitBadInput;
}
