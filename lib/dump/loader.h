// Turns paths (dump directories, files) into parsed modules with XLA's own
// buffer assignment where the dump has it. A file that fails to parse inside
// a directory is listed as unreadable, with its located error, beside the
// modules that loaded: the caller decides whether the rest may be judged.
// A bad file named explicitly is an error.
#ifndef HLOMEM_LIB_DUMP_LOADER_H_
#define HLOMEM_LIB_DUMP_LOADER_H_

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/dump/discovery.h"
#include "lib/dump/xla_buffer_assignment.h"
#include "lib/hlo/module.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"

namespace hlomem::dump {

// The target description files XLA wrote beside a module's HLO, read
// whole; empty when the dump has none.
struct TargetFileTexts {
  std::string gpu_target_config_path;  // *.gpu_target_config.pbtxt
  std::string gpu_target_config;
  std::string tpu_target_arguments_path;  // XLA:TPU's *.target_arguments.txt
  std::string tpu_target_arguments;
};

struct LoadedModule {
  DumpModuleFiles files;
  TargetFileTexts target_files;
  // The files actually read for this module, in the order read.
  std::vector<std::string> files_read;
  // Absent when the dump had only XLA's report files for this module.
  std::optional<hlo::Module> module;
  std::optional<XlaBufferAssignment> xla;
  std::vector<std::string> warnings;
  // Where it came from: its index among the dump modules discovered (the
  // files of one module: HLO, buffer assignment, ...), and its index among
  // the modules of that HLO file (a file may hold several).
  size_t dump_index = 0;
  size_t module_index = 0;
  // Unique among the modules of one load, and the same in on_loaded.
  std::pair<size_t, size_t> key() const { return {dump_index, module_index}; }
};

struct LoadOptions {
  Stage stage = Stage::kAfterOptimizations;
  bool stage_only = false;  // see DiscoveryOptions
  hlo::ParseOptions parse;
  // Modules with more elements are refused (hlo::VerifyElementCount).
  int64_t max_elements = hlo::kDefaultMaxElements;
  // Read XLA's buffer-assignment files (and the proto's field 3) too.
  bool read_xla_assignment = true;
  // Threads for parsing, 0 for one per core. Modules are parsed in
  // parallel; the threads left over per module parse large ones in parts
  // (parse.threads is set from this).
  int threads = 0;
  // Called on a loading thread for each module as soon as it is read,
  // parsed and verified, before that thread reads anything else. It may
  // consume the module (reset `module`), so that a directory's models need
  // not all stand in memory at once; the LoadedModule itself still goes
  // into LoadResult in order. A load that fails may have handed some
  // modules to it first. `dump_count` is the number of dump modules found.
  std::function<void(LoadedModule& loaded, size_t dump_count)> on_loaded;
};

// A module of a directory that could not be read (a truncated or corrupt
// file): the file and its located error ("path:line:col: error: ...").
struct UnreadableModule {
  std::string path;
  std::string error;
};

struct LoadResult {
  std::vector<LoadedModule> modules;
  std::vector<UnreadableModule> unreadable;
  std::vector<std::string> warnings;  // "path: warning: ..." lines
};

absl::StatusOr<LoadResult> LoadDumps(const std::vector<std::string>& paths,
                                     const LoadOptions& options);

// A load whose modules were consumed as they loaded: results[k] is what the
// consumer made of modules[k], whose model is gone.
template <typename T>
struct ConsumedLoad {
  LoadResult load;
  std::vector<T> results;
};

// LoadDumps with `consume` as the on_loaded hook: each module is handed to
// it on the thread that loaded it, then its model is freed, so a
// directory's models never all stand in memory. Its results come back in
// the load's order. Replaces options.on_loaded.
template <typename T>
absl::StatusOr<ConsumedLoad<T>> LoadDumpsConsuming(
    const std::vector<std::string>& paths, LoadOptions options,
    const std::function<T(LoadedModule& loaded, size_t dump_count)>& consume) {
  std::mutex mutex;
  std::map<std::pair<size_t, size_t>, T> by_key;
  options.on_loaded = [&](LoadedModule& loaded, size_t dump_count) {
    T result = consume(loaded, dump_count);
    loaded.module.reset();
    std::lock_guard<std::mutex> lock(mutex);
    by_key.emplace(loaded.key(), std::move(result));
  };
  absl::StatusOr<LoadResult> load = LoadDumps(paths, options);
  if (!load.ok()) return load.status();
  ConsumedLoad<T> out;
  out.results.reserve(load->modules.size());
  for (const LoadedModule& loaded : load->modules) {
    out.results.push_back(std::move(by_key.at(loaded.key())));
  }
  out.load = std::move(*load);
  return out;
}

}  // namespace hlomem::dump

#endif  // HLOMEM_LIB_DUMP_LOADER_H_
