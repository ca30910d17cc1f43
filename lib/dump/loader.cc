#include "lib/dump/loader.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"
#include "lib/base/file_contents.h"
#include "lib/base/metrics.h"
#include "lib/base/parallel.h"
#include "lib/dump/xla_buffer_assignment_proto.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/verifier.h"

namespace hlomem::dump {
namespace {

// What a file holds, judged by its first bytes rather than its name.
enum class Content { kHloText, kBinaryProto, kTextProto, kBufferAssignment, kEmpty };

Content SniffContent(absl::string_view path, absl::string_view data) {
  size_t k = 0;
  while (k < data.size() && (data[k] == ' ' || data[k] == '\n' || data[k] == '\t' ||
                             data[k] == '\r')) {
    ++k;
  }
  if (k == data.size()) return Content::kEmpty;
  const absl::string_view head = data.substr(k, 64);
  if (absl::StartsWith(head, "BufferAssignment")) return Content::kBufferAssignment;
  if (absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".textproto") ||
      absl::StartsWith(head, "hlo_module {") || absl::StartsWith(head, "hlo {")) {
    return Content::kTextProto;
  }
  // HLO text is printable ASCII; protos start with a field tag byte.
  for (size_t i = k; i < data.size() && i < k + 256; ++i) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (c < 0x09 || (c > 0x0d && c < 0x20)) return Content::kBinaryProto;
  }
  return Content::kHloText;
}

struct ParsedHlo {
  std::vector<hlo::Module> modules;
  std::optional<XlaBufferAssignment> xla;  // from an HloProto's field 3
};

absl::StatusOr<ParsedHlo> ParseHloFile(const std::string& path, const LoadOptions& options,
                                       bool* was_buffer_assignment) {
  *was_buffer_assignment = false;
  absl::StatusOr<std::shared_ptr<const FileContents>> file;
  {
    ScopedPhase phase("read");
    file = FileContents::Open(path);
  }
  if (!file.ok()) return file.status();
  ScopedPhase phase("parse");
  ParsedHlo parsed;
  switch (SniffContent(path, (*file)->data())) {
    case Content::kEmpty:
      return FileError(path, "file is empty");
    case Content::kBufferAssignment:
      *was_buffer_assignment = true;
      return parsed;
    case Content::kHloText: {
      absl::StatusOr<std::vector<hlo::Module>> modules = hlo::ParseHloText(*file, options.parse);
      if (!modules.ok()) return modules.status();
      parsed.modules = std::move(*modules);
      break;
    }
    case Content::kBinaryProto:
    case Content::kTextProto: {
      const bool text = SniffContent(path, (*file)->data()) == Content::kTextProto;
      absl::StatusOr<hlo::ProtoReadResult> read =
          text ? hlo::ReadHloProtoText(*file) : hlo::ReadHloProto(*file);
      if (!read.ok()) return read.status();
      if (options.read_xla_assignment && read->has_buffer_assignment()) {
        absl::StatusOr<XlaBufferAssignment> xla = XlaBufferAssignmentFromProto(*read);
        if (xla.ok()) parsed.xla = std::move(*xla);
      }
      parsed.modules.push_back(std::move(read->module));
      break;
    }
  }
  ScopedPhase verify_phase("parse: verify");
  for (const hlo::Module& m : parsed.modules) {
    // Smaller modules are checked faster than threads start.
    constexpr size_t kInstructionsPerThread = size_t{1} << 18;
    absl::Status verified = hlo::VerifyModule(
        m, m.instructions.size() >= kInstructionsPerThread ? options.parse.threads : 1);
    if (!verified.ok()) return verified;
    verified = hlo::VerifyElementCount(m, options.max_elements);
    if (!verified.ok()) return verified;
  }
  return parsed;
}

// Reads XLA's buffer assignment with the files that say whether it is whole
// (the values file's total and list, the memory-usage report's totals).
absl::StatusOr<XlaBufferAssignment> ReadXlaAssignment(const DumpModuleFiles& files,
                                                      std::vector<std::string>* read,
                                                      std::vector<std::string>* warnings) {
  auto open = [&](const std::string& path) -> absl::StatusOr<std::shared_ptr<const FileContents>> {
    read->push_back(path);
    return FileContents::Open(path);
  };
  absl::StatusOr<std::shared_ptr<const FileContents>> text = open(files.buffer_assignment);
  if (!text.ok()) return text.status();
  absl::StatusOr<XlaBufferAssignment> assignment =
      ParseXlaBufferAssignment(files.buffer_assignment, (*text)->data());
  if (!assignment.ok()) return assignment.status();
  if (!files.buffer_assignment_values.empty()) {
    absl::StatusOr<std::shared_ptr<const FileContents>> values = open(files.buffer_assignment_values);
    if (!values.ok()) return values.status();
    absl::Status status = ParseXlaBufferAssignmentValues(files.buffer_assignment_values,
                                                         (*values)->data(), &*assignment);
    if (!status.ok()) return status;
  }
  if (!files.live_range.empty() && !assignment->live_range) {
    absl::StatusOr<std::shared_ptr<const FileContents>> live = open(files.live_range);
    if (!live.ok()) return live.status();
    absl::StatusOr<std::optional<XlaLiveRange>> range =
        ParseXlaLiveRange(files.live_range, (*live)->data());
    if (!range.ok()) return range.status();
    assignment->live_range = std::move(*range);
  }
  // The report only witnesses: one that does not parse (cut, too) is left
  // out, and the assignment is judged without it.
  if (!files.memory_usage_report.empty()) {
    absl::StatusOr<std::shared_ptr<const FileContents>> report_file =
        open(files.memory_usage_report);
    absl::StatusOr<XlaMemoryUsageReport> report =
        report_file.ok() ? ParseXlaMemoryUsageReport(files.memory_usage_report,
                                                     (*report_file)->data())
                         : absl::StatusOr<XlaMemoryUsageReport>(report_file.status());
    if (report.ok()) {
      CheckAgainstMemoryUsageReport(*report, files.memory_usage_report, &*assignment);
    } else {
      warnings->push_back(absl::StrCat(report.status().message(),
                                       "\n(XLA's memory-usage report is ignored)"));
    }
  }
  return assignment;
}

// The HLO file of a dump module: its text when it has one, else its proto
// ("" when the dump has only XLA's report files for it).
const std::string& HloPathOf(const DumpModuleFiles& files) {
  return !files.hlo_text.empty() ? files.hlo_text : files.hlo_proto;
}

// What loading one discovered dump module gave: its modules, or an error
// that is fatal (a file the user named) or becomes a warning.
struct DumpLoad {
  std::vector<LoadedModule> modules;
  absl::Status error;
  bool fatal = false;
  std::string path;  // the file that failed
};

// Reads the target files XLA writes per module beside its HLO, where the
// dump has them: GPU's target config and TPU's target arguments (its file
// names carry the backend token, "cl_<changelist>").
TargetFileTexts ReadTargetFiles(const DumpModuleFiles& files, std::vector<std::string>* read) {
  TargetFileTexts out;
  if (files.standalone || files.module_id < 0) return out;
  auto read_if_present = [&](std::string path, std::string* path_out, std::string* text_out) {
    absl::StatusOr<std::shared_ptr<const FileContents>> file = FileContents::Open(path);
    if (!file.ok()) return;
    read->push_back(path);
    *text_out = std::string((*file)->data());
    *path_out = std::move(path);
  };
  if (!files.gpu_target_config.empty()) {
    read_if_present(files.gpu_target_config, &out.gpu_target_config_path, &out.gpu_target_config);
  }
  if (!files.tpu_target_arguments.empty()) {
    read_if_present(files.tpu_target_arguments, &out.tpu_target_arguments_path,
                    &out.tpu_target_arguments);
  }
  return out;
}

// Reads and parses the files of one dump module. Runs on a worker thread:
// it touches only its own files and result.
DumpLoad LoadDumpModule(DumpModuleFiles files, bool named_explicitly, const LoadOptions& options) {
  DumpLoad out;
  std::vector<std::string> read;
  std::optional<XlaBufferAssignment> xla;
  std::vector<std::string> warnings;
  if (options.read_xla_assignment && !files.buffer_assignment.empty()) {
    absl::StatusOr<XlaBufferAssignment> assignment = ReadXlaAssignment(files, &read, &warnings);
    if (assignment.ok()) {
      xla = std::move(*assignment);
    } else {
      warnings.push_back(absl::StrCat(assignment.status().message(),
                                      "\n(XLA's buffer assignment is ignored)"));
    }
  }
  TargetFileTexts target_files = ReadTargetFiles(files, &read);
  const std::string hlo_path = HloPathOf(files);
  if (hlo_path.empty()) {
    if (!xla) return out;
    LoadedModule& loaded = out.modules.emplace_back();
    loaded.files = std::move(files);
    loaded.target_files = std::move(target_files);
    loaded.files_read = std::move(read);
    loaded.xla = std::move(xla);
    loaded.warnings = std::move(warnings);
    return out;
  }
  read.insert(read.begin(), hlo_path);
  bool was_buffer_assignment = false;
  absl::StatusOr<ParsedHlo> parsed = ParseHloFile(hlo_path, options, &was_buffer_assignment);
  if (was_buffer_assignment) {
    // A standalone -buffer-assignment.txt: XLA's numbers without the HLO.
    files.buffer_assignment = hlo_path;
    files.hlo_text.clear();
    std::vector<std::string> assignment_read;
    absl::StatusOr<XlaBufferAssignment> assignment =
        ReadXlaAssignment(files, &assignment_read, &warnings);
    if (!assignment.ok()) {
      out.error = assignment.status();
      out.fatal = named_explicitly;
      out.path = hlo_path;
      return out;
    }
    LoadedModule& loaded = out.modules.emplace_back();
    loaded.files = std::move(files);
    loaded.target_files = std::move(target_files);
    loaded.files_read = std::move(assignment_read);
    loaded.xla = std::move(*assignment);
    loaded.warnings = std::move(warnings);
    return out;
  }
  if (!parsed.ok()) {
    out.error = parsed.status();
    out.fatal = named_explicitly;
    out.path = hlo_path;
    return out;
  }
  if (!xla && parsed->xla) xla = std::move(parsed->xla);
  const bool several = parsed->modules.size() > 1;
  for (hlo::Module& module : parsed->modules) {
    LoadedModule& loaded = out.modules.emplace_back();
    loaded.files = files;
    loaded.target_files = target_files;
    if (several || loaded.files.module_name.empty()) {
      loaded.files.module_name = std::string(module.name);
    }
    loaded.files_read = read;
    loaded.module = std::move(module);
    // XLA's assignment belongs to a single module per file.
    if (!several) loaded.xla = std::move(xla);
    loaded.warnings = warnings;
    loaded.module_index = out.modules.size() - 1;
  }
  return out;
}

}  // namespace

absl::StatusOr<LoadResult> LoadDumps(const std::vector<std::string>& paths,
                                     const LoadOptions& options) {
  DiscoveryOptions discovery_options;
  discovery_options.stage = options.stage;
  discovery_options.stage_only = options.stage_only;
  absl::StatusOr<DiscoveryResult> discovered = DiscoverDumps(paths, discovery_options);
  if (!discovered.ok()) return discovered.status();
  LoadResult result;
  result.warnings = discovered->warnings;

  // A file the user named is theirs to fix: its errors fail the run. Files
  // found by walking a directory only warn when something else loads.
  auto named_explicitly = [&](const DumpModuleFiles& files) {
    const std::string& hlo_path = HloPathOf(files);
    if (hlo_path.empty()) return false;
    for (const std::string& p : paths) {
      if (p == hlo_path) return true;
    }
    return false;
  };
  // Reading, parsing and the caller's on_loaded run for all modules on all
  // cores, each into its own slot; the merge below stays sequential, so the
  // output order is the discovery order.
  const size_t dump_count = discovered->modules.size();
  std::vector<DumpLoad> loads(dump_count);
  // One large module alone gets every thread for its parse.
  LoadOptions per_module = options;
  const size_t threads =
      options.threads > 0 ? static_cast<size_t>(options.threads) : ThreadCount();
  per_module.parse.threads =
      static_cast<int>(std::max<size_t>(1, threads / std::max<size_t>(1, dump_count)));
  ParallelFor(dump_count, [&](size_t k) {
    const DumpModuleFiles& files = discovered->modules[k];
    loads[k] = LoadDumpModule(files, named_explicitly(files), per_module);
    for (LoadedModule& loaded : loads[k].modules) {
      loaded.dump_index = k;
      if (options.on_loaded) options.on_loaded(loaded, dump_count);
    }
  }, threads);

  absl::Status first_error;
  for (DumpLoad& load : loads) {
    if (!load.error.ok()) {
      if (load.fatal) return load.error;
      if (first_error.ok()) first_error = load.error;
      result.unreadable.push_back({std::move(load.path), std::string(load.error.message())});
    }
    for (LoadedModule& loaded : load.modules) result.modules.push_back(std::move(loaded));
  }
  if (result.modules.empty()) {
    if (!first_error.ok()) return first_error;
    return absl::InvalidArgumentError(
        absl::StrCat(paths.empty() ? std::string("<no path>") : paths.front(),
                     ": error: no HLO module could be read"));
  }
  return result;
}

}  // namespace hlomem::dump
