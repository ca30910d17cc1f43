#include "lib/dump/discovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"

namespace hlomem::dump {
namespace {

// The kinds a module can use, in the order of DumpModuleFiles' fields.
constexpr std::array<FileKind, 7> kUsableKinds = {
    FileKind::kHloText,
    FileKind::kHloProto,
    FileKind::kBufferAssignment,
    FileKind::kBufferAssignmentValues,
    FileKind::kLiveRange,
    FileKind::kMemoryUsageReport,
    FileKind::kMemoryUsageReportProto,
};

// The file endings of each usable kind, for probing the side files of an
// explicitly named HLO file (uncompressed first).
struct SideFileEnding {
  FileKind kind;
  absl::string_view ending;
};
constexpr SideFileEnding kSideFileEndings[] = {
    {FileKind::kHloText, ".txt"},
    {FileKind::kHloProto, ".hlo.pb"},
    {FileKind::kHloProto, ".hlo.pb.gz"},
    {FileKind::kBufferAssignment, "-buffer-assignment.txt"},
    {FileKind::kBufferAssignmentValues, "-buffer-assignment-values.txt"},
    {FileKind::kLiveRange, "-live-range.txt"},
    {FileKind::kMemoryUsageReport, "-memory-usage-report.txt"},
    {FileKind::kMemoryUsageReportProto, "-memory-usage-report.pb"},
    {FileKind::kMemoryUsageReportProto, "-memory-usage-report.pb.gz"},
};

// Index of `kind` in kUsableKinds. Callers filter out kIgnored first.
size_t KindSlot(FileKind kind) {
  for (size_t i = 0; i < kUsableKinds.size(); ++i) {
    if (kUsableKinds[i] == kind) return i;
  }
  return 0;
}

std::string& FieldForKind(DumpModuleFiles& module, FileKind kind) {
  switch (kind) {
    case FileKind::kHloText:
      return module.hlo_text;
    case FileKind::kHloProto:
      return module.hlo_proto;
    case FileKind::kBufferAssignment:
      return module.buffer_assignment;
    case FileKind::kBufferAssignmentValues:
      return module.buffer_assignment_values;
    case FileKind::kLiveRange:
      return module.live_range;
    case FileKind::kMemoryUsageReport:
      return module.memory_usage_report;
    case FileKind::kMemoryUsageReportProto:
    case FileKind::kIgnored:
      break;
  }
  return module.memory_usage_report_proto;
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (absl::EndsWith(dir, "/")) return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

// Splits "a/b/c" into ("a/b", "c"); a bare name has directory ".".
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string Warning(absl::string_view path, absl::string_view message) {
  return absl::StrCat(path, ": warning: ", message);
}

bool IsReadable(const std::string& path, int* error) {
  // open() rather than access(): it answers for the effective user, and
  // root passes access() checks on files it may still fail to read (NFS).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = errno;
    return false;
  }
  close(fd);
  return true;
}

// A file found on disk, before grouping.
struct FoundFile {
  std::string path;
  std::string directory;
  std::string basename;
  size_t input_index = 0;
  bool named_explicitly = false;
};

// Files of one module with one suffix (one compile stage).
struct SuffixGroup {
  Stage stage = Stage::kUnknown;
  std::string backend;
  bool has_explicit_file = false;
  std::array<std::string, kUsableKinds.size()> paths;
  std::vector<std::string> duplicates;  // a second file of a filled kind
};

struct ModuleGroup {
  size_t input_index = 0;
  std::string directory;
  std::string prefix;
  int64_t module_id = -1;
  std::string module_name;
  std::map<std::string, SuffixGroup> by_suffix;
};

class Walker {
 public:
  Walker(const DiscoveryOptions& options, DiscoveryResult* result)
      : options_(options), result_(result) {}

  // Records the directory as visited; false if it already was (a symlink
  // loop or a second link to the same directory).
  bool MarkVisited(const struct stat& st) {
    return visited_.insert({st.st_dev, st.st_ino}).second;
  }

  void WalkDirectory(const std::string& dir, int depth, size_t input_index,
                     std::vector<FoundFile>* files) {
    DIR* handle = opendir(dir.c_str());
    if (handle == nullptr) {
      result_->warnings.push_back(Warning(
          dir,
          absl::StrCat("ignoring unreadable directory: ", strerror(errno))));
      return;
    }
    std::vector<std::string> names;
    while (struct dirent* entry = readdir(handle)) {
      const absl::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      names.emplace_back(name);
    }
    closedir(handle);
    // readdir order depends on the filesystem; reports must not.
    std::sort(names.begin(), names.end());

    for (const std::string& name : names) {
      const std::string path = JoinPath(dir, name);
      struct stat st;
      if (stat(path.c_str(), &st) != 0) {
        const int stat_errno = errno;
        struct stat link_st;
        if (lstat(path.c_str(), &link_st) == 0 && S_ISLNK(link_st.st_mode)) {
          result_->warnings.push_back(
              Warning(path, absl::StrCat("ignoring broken symbolic link: ",
                                         strerror(stat_errno))));
        } else {
          result_->warnings.push_back(
              Warning(path, absl::StrCat("ignoring unreadable entry: ",
                                         strerror(stat_errno))));
        }
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        // Hidden directories (.git, virtualenvs) are never dump output.
        if (absl::StartsWith(name, ".")) continue;
        if (depth + 1 > options_.max_depth) {
          result_->warnings.push_back(Warning(
              path, absl::StrCat("not searched: more than ", options_.max_depth,
                                 " directory levels deep")));
          continue;
        }
        if (!MarkVisited(st)) {
          result_->warnings.push_back(
              Warning(path,
                      "skipping directory already searched (symbolic link "
                      "loop or duplicate link)"));
          continue;
        }
        WalkDirectory(path, depth + 1, input_index, files);
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        result_->ignored_files.push_back(path);
        continue;
      }
      files->push_back(FoundFile{path, dir, name, input_index, false});
    }
  }

 private:
  const DiscoveryOptions& options_;
  DiscoveryResult* result_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

// XLA writes a module's target files (`<stem>.gpu_target_config.pbtxt`,
// `<stem>.<backend>.target_arguments.txt`, stem `[<prefix>.]module_<id>.<name>`)
// when its compile starts, under the module's id then; a compile that clones
// the module (XLA:TPU's FFT expansion) dumps the optimized module under a
// later id. So the files are kept by directory, prefix and the name past the
// id, each with its id, to be matched to a module afterwards.
constexpr absl::string_view kGpuTargetConfig = "gpu_target_config.pbtxt";
constexpr absl::string_view kTpuTargetArguments = ".target_arguments.txt";

class TargetFiles {
 public:
  void Add(const std::string& directory, absl::string_view basename) {
    if (!absl::EndsWith(basename, kGpuTargetConfig) &&
        !absl::EndsWith(basename, kTpuTargetArguments)) {
      return;
    }
    constexpr absl::string_view kMarker = "module_";
    const size_t marker = basename.find(kMarker);
    if (marker == absl::string_view::npos) return;
    if (marker > 0 && basename[marker - 1] != '.') return;
    size_t digits_end = marker + kMarker.size();
    int64_t id = 0;
    while (digits_end < basename.size() && absl::ascii_isdigit(basename[digits_end]) &&
           id < (int64_t{1} << 40)) {
      id = id * 10 + (basename[digits_end++] - '0');
    }
    if (digits_end == marker + kMarker.size() || digits_end >= basename.size() ||
        basename[digits_end] != '.') {
      return;
    }
    by_name_[{directory, std::string(basename.substr(0, marker == 0 ? 0 : marker - 1)),
              std::string(basename.substr(digits_end + 1))}]
        .emplace(id, JoinPath(directory, basename));
  }

  // The module's own file ending in `ending`, else that of the latest
  // earlier id of the same name; "" when there is none.
  std::string Find(const std::string& directory, const DumpModuleFiles& module,
                   absl::string_view ending) const {
    if (module.module_name.empty()) return "";
    const auto it =
        by_name_.find({directory, module.prefix, absl::StrCat(module.module_name, ".", ending)});
    if (it == by_name_.end()) return "";
    auto at_or_before = it->second.upper_bound(module.module_id);
    if (at_or_before == it->second.begin()) return "";
    return std::prev(at_or_before)->second;
  }

 private:
  // (directory, prefix, "<name>.<ending>") -> module id -> path
  std::map<std::tuple<std::string, std::string, std::string>, std::map<int64_t, std::string>>
      by_name_;
};

// Higher is better. An explicitly named file's stage always wins; then the
// requested stage; then the group that can say the most (XLA's buffer
// assignment, then HLO); then XLA's canonical suffix over TPU-style variants.
auto SuffixScore(const std::string& suffix, const SuffixGroup& group,
                 Stage requested) {
  const bool has_buffer_assignment =
      !group.paths[KindSlot(FileKind::kBufferAssignment)].empty();
  const bool has_hlo = !group.paths[KindSlot(FileKind::kHloText)].empty() ||
                       !group.paths[KindSlot(FileKind::kHloProto)].empty();
  const bool canonical = absl::EndsWith(suffix, "_optimizations");
  return std::make_tuple(group.has_explicit_file, group.stage == requested,
                         group.stage == Stage::kAfterOptimizations,
                         has_buffer_assignment, has_hlo, canonical);
}

// Standalone files pair up by stem: "foo.hlo" with
// "foo-buffer-assignment.txt".
std::string StandaloneStem(absl::string_view basename) {
  for (absl::string_view ending :
       {"-buffer-assignment-values.txt", "-buffer-assignment.txt",
        "-live-range.txt", "-memory-usage-report.txt",
        "-memory-usage-report.pb.gz", "-memory-usage-report.pb", ".hlo.pb.gz",
        ".hlo.pb", ".hlo.txt", ".pb.gz"}) {
    if (basename.size() > ending.size() && absl::EndsWith(basename, ending)) {
      return std::string(basename.substr(0, basename.size() - ending.size()));
    }
  }
  const size_t dot = basename.rfind('.');
  if (dot == absl::string_view::npos || dot == 0) return std::string(basename);
  return std::string(basename.substr(0, dot));
}

// A tag that XLA puts between the module name and the stage, and that the
// name parser does not know (it knows XLA:TPU's `cl_<changelist>`), would
// split one module in two: `jit_f` after optimizations and `jit_f.<tag>`
// before them. The stages of one compile share directory, prefix and id, so
// a group without after-optimizations files joins the group whose name it
// extends by one token, if that one has them; its suffixes keep the tag.
void PairTaggedStages(std::map<std::string, ModuleGroup>* groups) {
  auto has_after = [](const ModuleGroup& group) {
    for (const auto& [suffix, files] : group.by_suffix) {
      if (files.stage == Stage::kAfterOptimizations) return true;
    }
    return false;
  };
  for (auto it = groups->begin(); it != groups->end();) {
    ModuleGroup& tagged = it->second;
    const size_t dot = tagged.module_name.rfind('.');
    if (dot == std::string::npos || dot == 0 || has_after(tagged)) {
      ++it;
      continue;
    }
    const std::string tag = tagged.module_name.substr(dot + 1);
    const auto untagged = groups->find(it->first.substr(0, it->first.size() - tag.size() - 1));
    if (untagged == groups->end() || untagged->second.module_id != tagged.module_id ||
        untagged->second.prefix != tagged.prefix || !has_after(untagged->second)) {
      ++it;
      continue;
    }
    for (auto& [suffix, files] : tagged.by_suffix) {
      untagged->second.by_suffix.emplace(absl::StrCat(tag, ".", suffix), std::move(files));
    }
    untagged->second.input_index = std::min(untagged->second.input_index, tagged.input_index);
    it = groups->erase(it);
  }
}

}  // namespace

absl::StatusOr<DiscoveryResult> DiscoverDumps(
    const std::vector<std::string>& paths, const DiscoveryOptions& options) {
  DiscoveryResult result;
  Walker walker(options, &result);
  std::vector<FoundFile> files;
  std::vector<size_t> directory_inputs;

  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      return FileError(path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
      // A directory given twice, or inside one given earlier, was searched
      // already; its files are credited to the first path.
      if (!walker.MarkVisited(st)) continue;
      directory_inputs.push_back(i);
      walker.WalkDirectory(path, 0, i, &files);
    } else if (S_ISREG(st.st_mode)) {
      int error = 0;
      if (!IsReadable(path, &error)) {
        return FileError(path, absl::StrCat("cannot read: ", strerror(error)));
      }
      auto [directory, basename] = SplitPath(path);
      files.push_back(FoundFile{path, directory, basename, i, true});
    } else {
      return FileError(path, "not a regular file or directory");
    }
  }

  // The side files of an explicitly named dump file are used with it, as if
  // its directory had been given (only those of the same module and stage).
  std::set<std::string> known_paths;
  for (const FoundFile& file : files) known_paths.insert(file.path);
  const size_t explicit_count = files.size();
  for (size_t i = 0; i < explicit_count; ++i) {
    if (!files[i].named_explicitly) continue;
    const std::optional<DumpFileName> name =
        ParseDumpFileName(files[i].basename);
    if (!name.has_value() || name->kind == FileKind::kIgnored ||
        (name->stage != Stage::kAfterOptimizations &&
         name->stage != Stage::kBeforeOptimizations)) {
      continue;
    }
    // F is the given name without its own ending; siblings are F + ending.
    size_t own_ending_size = 0;
    for (const SideFileEnding& own : kSideFileEndings) {
      if (own.kind == name->kind &&
          absl::EndsWith(files[i].basename, own.ending)) {
        own_ending_size = std::max(own_ending_size, own.ending.size());
      }
    }
    const std::string base =
        files[i].basename.substr(0, files[i].basename.size() - own_ending_size);
    for (const SideFileEnding& side : kSideFileEndings) {
      const std::string sibling = absl::StrCat(base, side.ending);
      if (sibling == files[i].basename) continue;
      const std::string sibling_path = JoinPath(files[i].directory, sibling);
      if (known_paths.count(sibling_path) > 0) continue;
      struct stat st;
      if (stat(sibling_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      known_paths.insert(sibling_path);
      files.push_back(FoundFile{sibling_path, files[i].directory, sibling,
                                files[i].input_index, false});
    }
  }

  // Target files: those found, and those beside each explicitly named file.
  TargetFiles target_files;
  std::set<std::string> listed_directories;
  for (size_t i = 0; i < explicit_count; ++i) {
    if (!files[i].named_explicitly ||
        !listed_directories.insert(files[i].directory).second) {
      continue;
    }
    if (DIR* dir = opendir(files[i].directory.c_str())) {
      while (const dirent* entry = readdir(dir)) target_files.Add(files[i].directory, entry->d_name);
      closedir(dir);
    }
  }
  for (const FoundFile& file : files) target_files.Add(file.directory, file.basename);

  // Group by module, then by suffix.
  std::map<std::string, ModuleGroup> groups;
  std::map<std::string, DumpModuleFiles> standalone;
  std::map<std::string, size_t> standalone_input_index;
  for (const FoundFile& file : files) {
    const std::optional<DumpFileName> name = ParseDumpFileName(file.basename);
    const bool usable = name.has_value() && name->kind != FileKind::kIgnored &&
                        (name->stage == Stage::kAfterOptimizations ||
                         name->stage == Stage::kBeforeOptimizations);
    if (!usable) {
      if (!file.named_explicitly) {
        result.ignored_files.push_back(file.path);
        continue;
      }
      // Named explicitly: always used, kind guessed from the name.
      FileKind kind = name.has_value() && name->kind != FileKind::kIgnored
                          ? name->kind
                          : GuessStandaloneFileKind(file.basename);
      std::string key = JoinPath(file.directory, StandaloneStem(file.basename));
      if (standalone.count(key) > 0 &&
          !FieldForKind(standalone[key], kind).empty()) {
        key = file.path;  // two files of one kind: keep them apart
      }
      DumpModuleFiles& module = standalone[key];
      if (module.key.empty()) {
        module.key = key;
        module.standalone = true;
        standalone_input_index[key] = file.input_index;
        if (name.has_value()) {
          module.prefix = name->prefix;
          module.module_id = name->module_id;
          module.module_name = name->module_name;
          module.suffix = name->suffix;
          module.backend = name->backend;
          module.stage = name->stage;
        }
      }
      FieldForKind(module, kind) = file.path;
      continue;
    }
    const std::string key = JoinPath(file.directory, name->ModuleStem());
    ModuleGroup& group = groups[key];
    if (group.by_suffix.empty()) {
      group.input_index = file.input_index;
      group.directory = file.directory;
      group.prefix = name->prefix;
      group.module_id = name->module_id;
      group.module_name = name->module_name;
    }
    group.input_index = std::min(group.input_index, file.input_index);
    SuffixGroup& suffix_group = group.by_suffix[name->suffix];
    suffix_group.stage = name->stage;
    suffix_group.backend = name->backend;
    suffix_group.has_explicit_file |= file.named_explicitly;
    std::string& slot = suffix_group.paths[KindSlot(name->kind)];
    if (slot.empty()) {
      slot = file.path;
    } else if (slot == file.path) {
      // Given both explicitly and through its directory.
    } else if (file.named_explicitly) {
      suffix_group.duplicates.push_back(slot);
      slot = file.path;
    } else {
      suffix_group.duplicates.push_back(file.path);
    }
  }

  PairTaggedStages(&groups);

  // Choose one suffix per module; drop files that cannot be read.
  struct Ordered {
    std::tuple<size_t, std::string, std::string, int64_t, std::string> order;
    DumpModuleFiles module;
  };
  std::vector<Ordered> ordered;
  std::vector<bool> input_has_module(paths.size(), false);
  std::vector<bool> input_had_other_stage(paths.size(), false);
  for (auto& [key, group] : groups) {
    const std::string* best_suffix = nullptr;
    const SuffixGroup* best = nullptr;
    for (const auto& [suffix, suffix_group] : group.by_suffix) {
      if (best == nullptr ||
          SuffixScore(suffix, suffix_group, options.stage) >
              SuffixScore(*best_suffix, *best, options.stage)) {
        best_suffix = &suffix;
        best = &suffix_group;
      }
    }
    if (options.stage_only && best->stage != options.stage) {
      for (const auto& [suffix, suffix_group] : group.by_suffix) {
        for (const std::string& path : suffix_group.paths) {
          if (!path.empty()) result.ignored_files.push_back(path);
        }
        for (const std::string& path : suffix_group.duplicates) result.ignored_files.push_back(path);
      }
      result.other_stage_modules.push_back(key);
      input_had_other_stage[group.input_index] = true;
      continue;
    }
    DumpModuleFiles module;
    module.key = key;
    module.prefix = group.prefix;
    module.module_id = group.module_id;
    module.module_name = group.module_name;
    module.suffix = *best_suffix;
    module.backend = best->backend;
    module.stage = best->stage;
    module.stage_fallback = best->stage != options.stage;
    bool any = false;
    for (size_t slot = 0; slot < kUsableKinds.size(); ++slot) {
      const std::string& path = best->paths[slot];
      if (path.empty()) continue;
      int error = 0;
      if (!IsReadable(path, &error)) {
        result.warnings.push_back(Warning(
            path, absl::StrCat("ignoring unreadable file: ", strerror(error))));
        continue;
      }
      FieldForKind(module, kUsableKinds[slot]) = path;
      result.used_files.push_back(path);
      any = true;
    }
    for (const auto& [suffix, suffix_group] : group.by_suffix) {
      if (&suffix_group == best) {
        for (const std::string& path : suffix_group.duplicates) {
          result.ignored_files.push_back(path);
        }
        continue;
      }
      for (const std::string& path : suffix_group.paths) {
        if (!path.empty()) result.ignored_files.push_back(path);
      }
      for (const std::string& path : suffix_group.duplicates) {
        result.ignored_files.push_back(path);
      }
    }
    if (!any) continue;
    module.gpu_target_config = target_files.Find(group.directory, module, kGpuTargetConfig);
    if (!module.backend.empty()) {
      module.tpu_target_arguments =
          target_files.Find(group.directory, module, absl::StrCat(module.backend, kTpuTargetArguments));
    }
    input_has_module[group.input_index] = true;
    ordered.push_back(Ordered{{group.input_index, group.directory, group.prefix,
                               group.module_id, group.module_name},
                              std::move(module)});
  }
  for (auto& [key, module] : standalone) {
    const size_t input_index = standalone_input_index[key];
    for (FileKind kind : kUsableKinds) {
      const std::string& path = FieldForKind(module, kind);
      if (!path.empty()) result.used_files.push_back(path);
    }
    input_has_module[input_index] = true;
    ordered.push_back(
        Ordered{{input_index, key, "", module.module_id, module.module_name},
                std::move(module)});
  }
  std::stable_sort(
      ordered.begin(), ordered.end(),
      [](const Ordered& a, const Ordered& b) { return a.order < b.order; });
  for (Ordered& entry : ordered)
    result.modules.push_back(std::move(entry.module));

  for (size_t input : directory_inputs) {
    if (!input_has_module[input] && input_had_other_stage[input]) {
      const bool after = options.stage == Stage::kAfterOptimizations;
      return FileError(paths[input],
                       absl::StrCat("no module was dumped ", after ? "after" : "before",
                                    " optimizations here (only ", after ? "before" : "after",
                                    "; without --stage, such a module is read as an estimate)"));
    }
    if (!input_has_module[input]) {
      return FileError(paths[input],
                       "no XLA dump files found (expected module_NNNN.*.txt "
                       "or *.hlo.pb)");
    }
  }
  // Target files a module uses are used, not ignored.
  std::set<std::string> used_target_files;
  for (const DumpModuleFiles& module : result.modules) {
    for (const std::string* path : {&module.gpu_target_config, &module.tpu_target_arguments}) {
      if (!path->empty() && used_target_files.insert(*path).second) {
        result.used_files.push_back(*path);
      }
    }
  }
  result.ignored_files.erase(
      std::remove_if(result.ignored_files.begin(), result.ignored_files.end(),
                     [&](const std::string& path) { return used_target_files.count(path) > 0; }),
      result.ignored_files.end());
  std::sort(result.ignored_files.begin(), result.ignored_files.end());
  return result;
}

}  // namespace hlomem::dump
