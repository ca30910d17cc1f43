// Recognizes the names XLA gives the files it writes under --xla_dump_to
// (formats.md §1): `[<prefix>.]module_<NNNN>[.<module_name>].<suffix><end>`.
//
// The hard part is splitting the module name from the suffix: both may
// contain dots (`SyncTensorsGraph.1760`, `sm_9.0_gpu_after_optimizations`),
// so the parser strips the file ending first and then matches the known
// suffixes from the right.
#ifndef HLOMEM_LIB_DUMP_DUMP_FILE_NAME_H_
#define HLOMEM_LIB_DUMP_DUMP_FILE_NAME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace hlomem::dump {

// What a file holds, decided by its ending.
enum class FileKind {
  kHloText,                 // F.txt
  kHloProto,                // F.hlo.pb, F.hlo.pb.gz (xla.HloProto)
  kBufferAssignment,        // F-buffer-assignment.txt
  kBufferAssignmentValues,  // F-buffer-assignment-values.txt (2026)
  kLiveRange,               // F-live-range.txt (2026)
  kMemoryUsageReport,       // F-memory-usage-report.txt
  kMemoryUsageReportProto,  // F-memory-usage-report.pb[.gz] (2026)
  kIgnored,                 // LLVM IR, PTX, graphs, debug options, ...
};

// Where in the compile pipeline the module was dumped.
enum class Stage {
  kBeforeOptimizations,
  kAfterOptimizations,
  kIntermediate,  // pass dumps, auto-sharding dumps
  kUnknown,
};

absl::string_view FileKindName(FileKind kind);
absl::string_view StageName(Stage stage);

struct DumpFileName {
  // Text before `module_`, without the separating dot. XLA writes a
  // microsecond timestamp there (--xla_dump_include_timestamp); renamed
  // copies sometimes carry a tag such as `resnet50__`.
  std::string prefix;
  int64_t module_id = -1;
  // Empty for pre-2021 dumps and when XLA dropped it to keep the file name
  // under 255 characters.
  std::string module_name;
  // The whole suffix, e.g. "sm_9.0_gpu_after_optimizations",
  // "0003.spmd.after_foo.before_bar". Empty when the suffix is not known
  // (then module_name is empty too, since the split point is unknown).
  std::string suffix;
  // "cpu", "sm_9.0", "gfx942", "tpu"...; empty when the suffix names none.
  std::string backend;
  Stage stage = Stage::kUnknown;
  FileKind kind = FileKind::kIgnored;
  // The file is gzip-compressed (`.pb.gz`).
  bool compressed = false;

  // `[<prefix>.]module_<NNNN>[.<module_name>]`: the part every file of one
  // module shares; used to group files.
  std::string ModuleStem() const;
};

// Parses a base name (no directory). Returns nullopt when the name does not
// contain `module_<digits>.`, i.e. it is not a per-module XLA dump file
// (`execution_options.txt`, `model.hlo`). A dump file whose suffix or ending
// is not understood is returned with kind kIgnored or stage kUnknown.
std::optional<DumpFileName> ParseDumpFileName(absl::string_view basename);

// For files that do not follow the dump naming convention and were named
// explicitly by the user: a best guess from the ending (`.pb`, `.pb.gz` are
// protos; `-buffer-assignment.txt` etc. keep their meaning; anything else is
// taken as HLO text, which the loader verifies by content).
FileKind GuessStandaloneFileKind(absl::string_view basename);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_DUMP_FILE_NAME_H_
