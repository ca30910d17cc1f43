// Finds the XLA dump files to analyze under the paths a user gave, and
// groups them per module and compile stage.
//
// A dump directory holds many modules (every jit, every recompile) and many
// files per module; hlomem wants, per module, the one HLO of the requested
// stage and the buffer-assignment side files written with it (formats.md §1).
#ifndef HLOMEM_LIB_DUMP_DISCOVERY_H_
#define HLOMEM_LIB_DUMP_DISCOVERY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/dump/dump_file_name.h"

namespace hlomem::dump {

// The files chosen for one module. Paths are as found (the given path joined
// with the entry names); an empty string means "not present".
struct DumpModuleFiles {
  // Unique per module: "<directory>/[<prefix>.]module_<NNNN>[.<name>]", or
  // the file path for a standalone file.
  std::string key;
  std::string prefix;      // see DumpFileName::prefix
  int64_t module_id = -1;  // -1 for standalone files
  std::string module_name;
  std::string suffix;   // e.g. "cpu_after_optimizations"
  std::string backend;  // "cpu", "sm_9.0", "gfx942", "" ...
  Stage stage = Stage::kUnknown;
  // True when the requested stage was not there and another one was used
  // (typically before-optimizations HLO standing in for after): results
  // computed from it are estimates.
  bool stage_fallback = false;
  // A file named explicitly whose name does not follow XLA's convention
  // (model.hlo, foo.pb). Its kind is a guess from the name; the loader
  // should check the content.
  bool standalone = false;

  std::string hlo_text;
  std::string hlo_proto;  // .hlo.pb or .hlo.pb.gz
  std::string buffer_assignment;
  std::string buffer_assignment_values;
  std::string live_range;
  std::string memory_usage_report;
  std::string memory_usage_report_proto;
  // The target files XLA wrote for the module (GPU's target config, TPU's
  // target arguments), found under its own id or, when the compile cloned
  // the module, under the id it started with.
  std::string gpu_target_config;
  std::string tpu_target_arguments;

  bool has_hlo() const { return !hlo_text.empty() || !hlo_proto.empty(); }
};

struct DiscoveryOptions {
  Stage stage = Stage::kAfterOptimizations;  // or kBeforeOptimizations
  // Only modules dumped at `stage` (the user asked for that stage). When
  // false, a module that lacks it stands in with its other stage, marked
  // stage_fallback.
  bool stage_only = false;
  int max_depth = 8;  // directory levels below each given directory
};

struct DiscoveryResult {
  // Sorted by given path, then prefix, module id, module name.
  std::vector<DumpModuleFiles> modules;
  // "path: warning: ..." lines for the user (unreadable entries, loops).
  std::vector<std::string> warnings;
  // Files that belong to a chosen module and will be read.
  std::vector<std::string> used_files;
  // Files seen but not used: other stages, pass dumps, LLVM IR, graphs...
  std::vector<std::string> ignored_files;
  // With stage_only: the keys of modules left out for lacking the stage.
  std::vector<std::string> other_stage_modules;
};

// Walks `paths` (directories and files). Errors: a path that does not exist
// or cannot be read, or a directory holding no XLA dump file at all.
absl::StatusOr<DiscoveryResult> DiscoverDumps(
    const std::vector<std::string>& paths, const DiscoveryOptions& options);

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_DISCOVERY_H_
