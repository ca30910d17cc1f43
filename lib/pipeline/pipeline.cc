#include "lib/pipeline/pipeline.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/base/allocator.h"
#include "lib/base/metrics.h"
#include "lib/hlo/provenance.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "lib/target/resolve.h"

namespace hlomem::pipeline {

using report::BufferRow;
using report::MemoryNumbers;
using report::MemorySpaceTotals;
using report::Mismatch;
using report::ModuleReport;
using report::Report;

namespace {

MemoryNumbers FromAssignment(const analysis::BufferAssignment& a,
                             const analysis::MemoryProfile& profile) {
  const analysis::AssignmentStats& st = a.stats();
  MemoryNumbers n;
  static_cast<MemoryStats&>(n) = st;
  n.total_bytes = st.total_bytes;
  n.peak_live_bytes = profile.peak_live_bytes;
  n.fragmentation_bytes = profile.fragmentation_bytes;
  n.peak_memory_bytes = st.peak_memory_bytes;
  return n;
}

MemoryNumbers FromXla(const dump::XlaMemoryStats& st) {
  MemoryNumbers n;
  static_cast<MemoryStats&>(n) = st;
  // The allocations in device and host memory: XLA's "Total bytes used" on
  // CPU and GPU (the sum of all allocations); on TPU, whose file has no
  // total, the HBM and host colours without the on-chip memories.
  n.total_bytes = st.total_bytes;
  return n;
}

// Per memory space: hlomem's bytes and XLA's, and whether the space is the
// device memory that device fit checks.
std::vector<MemorySpaceTotals> SpaceTotals(const target::Target& target,
                                           const std::map<int64_t, int64_t>* computed,
                                           const std::map<int64_t, int64_t>* xla) {
  std::map<int64_t, MemorySpaceTotals> by_color;
  auto add = [&](const std::map<int64_t, int64_t>& bytes, bool is_xla) {
    for (const auto& [color, size] : bytes) {
      MemorySpaceTotals& t = by_color[color];
      t.color = color;
      (is_xla ? t.xla_bytes : t.computed_bytes) = size;
    }
  };
  if (computed) add(*computed, false);
  if (xla) add(*xla, true);
  std::vector<MemorySpaceTotals> out;
  for (auto& [color, totals] : by_color) {
    const target::MemorySpace space = target.Space(color);
    totals.name = space.name;
    totals.is_device = space.is_main;
    totals.is_host = space.is_host;
    out.push_back(std::move(totals));
  }
  return out;
}

std::vector<Mismatch> Compare(const MemoryNumbers& computed, const MemoryNumbers& xla) {
  std::vector<Mismatch> out;
  auto check = [&](const char* field, int64_t c, int64_t x) {
    if (c != x) out.push_back({field, c, x});
  };
  check("total_bytes", computed.total_bytes, xla.total_bytes);
  check("argument_bytes", computed.argument_bytes, xla.argument_bytes);
  check("output_bytes", computed.output_bytes, xla.output_bytes);
  check("alias_bytes", computed.alias_bytes, xla.alias_bytes);
  check("temp_bytes", computed.temp_bytes, xla.temp_bytes);
  return out;
}

// The target's name for each allocation's memory space.
std::vector<std::string> SpaceOfAllocations(const analysis::BufferAssignment& assignment) {
  std::vector<std::string> names;
  names.reserve(assignment.allocations().size());
  for (const analysis::Allocation& a : assignment.allocations()) {
    names.push_back(assignment.target().Space(a.color).name);
  }
  return names;
}

// What one thread building rows keeps: the pool their strings go to, and
// each shape's text once (printing a shape per row was most of a row's cost).
struct RowStrings {
  std::shared_ptr<report::StringPool> pool = std::make_shared<report::StringPool>();
  absl::flat_hash_map<hlo::ShapeId, absl::string_view> shapes;
};

// The row of a computed buffer, its strings interned in `strings`.
BufferRow MakeBufferRow(const hlo::Module& module, const analysis::Dataflow& dataflow,
                        const std::vector<std::string>& space_names,
                        const analysis::BufferRecord& record, RowStrings* strings) {
  report::StringPool& pool = *strings->pool;
  const hlo::Instruction& instr = module.instr(record.instruction);
  const hlo::OpMetadata& meta = module.metadata_of(record.instruction);
  BufferRow row;
  row.instruction = std::string(instr.name);
  const hlo::ShapeIndex index = dataflow.value_index(record.value);
  row.shape_index.assign(index.begin(), index.end());
  row.opcode = pool.Intern(module.opcode_text(record.instruction));
  auto [shape, added] = strings->shapes.try_emplace(record.shape);
  if (added) shape->second = pool.Intern(module.shapes.ToString(record.shape));
  row.shape = shape->second;
  row.bytes = record.bytes;
  row.kind = analysis::BufferKindName(record.kind);  // static text
  row.allocation = record.allocation;
  if (record.allocation >= 0) {
    row.memory_space = pool.Intern(space_names[static_cast<size_t>(record.allocation)]);
  }
  row.offset = record.offset;
  row.start = record.start;
  row.end = record.end;
  row.op_type = pool.Intern(meta.op_type);
  // An entry parameter has no line of its own; anything else without
  // metadata (bodies outlined into parallel_* calls) takes its neighbours'.
  if (instr.opcode == hlo::Opcode::kParameter && instr.parent == module.entry) {
    row.op_name = pool.Intern(hlo::OpName(module, record.instruction));
  } else {
    const hlo::Provenance p = hlo::ProvenanceOf(module, record.instruction);
    row.op_name = pool.Intern(p.op_name);
    row.source_file = pool.Intern(p.file);
    row.source_line = p.line;
    row.stack_frame = p.stack_frame;
  }
  return row;
}

// From the rows of the `wanted` records (ascending), a bounded report as a
// bounded JSON reads back: the rows of the `kept` records (a subset), the
// live set at the peak as indices into them, the counts before the cut, and
// the rollups at the peak from every live row.
void KeepBoundedRows(const std::vector<size_t>& wanted, const std::vector<size_t>& kept,
                     std::vector<BufferRow> rows, ModuleReport* out) {
  auto row_of = [&](size_t record) {
    return static_cast<size_t>(std::lower_bound(wanted.begin(), wanted.end(), record) - wanted.begin());
  };
  std::vector<size_t>& live = out->profile.live_at_peak;
  std::vector<const BufferRow*> live_rows;
  live_rows.reserve(live.size());
  for (size_t k : live) live_rows.push_back(&rows[row_of(k)]);
  out->peak_by_line = report::Rollup(live_rows, report::RollupKey::kSourceLine);
  out->peak_by_op = report::Rollup(live_rows, report::RollupKey::kOpName);
  out->buffers_total = static_cast<int64_t>(out->profile.buffers.size());
  out->live_at_peak_total = static_cast<int64_t>(live.size());
  std::vector<size_t> kept_live;
  for (size_t k : live) {
    const auto at = std::lower_bound(kept.begin(), kept.end(), k);
    if (at != kept.end() && *at == k) kept_live.push_back(static_cast<size_t>(at - kept.begin()));
  }
  live = std::move(kept_live);
  out->rows.reserve(kept.size());
  for (size_t k : kept) out->rows.push_back(std::move(rows[row_of(k)]));
}

// The module's StackFrames tables resolved once; the rows keep frame ids.
std::vector<report::StackFrameRow> StackFrameRows(const hlo::Module& module) {
  std::vector<report::StackFrameRow> rows;
  const size_t count = module.stack_frames.frames.size();
  rows.reserve(count);
  for (size_t id = 1; id <= count; ++id) {
    report::StackFrameRow row;
    if (const std::optional<hlo::StackEntry> frame = module.FrameOf(static_cast<int64_t>(id))) {
      row.file = std::string(frame->file);
      row.function = std::string(frame->function);
      row.line = frame->line;
      row.library = frame->library;
    }
    row.parent = module.ParentFrame(static_cast<int64_t>(id));
    rows.push_back(std::move(row));
  }
  return rows;
}

// What runs at the peak step, with its provenance as the rows have it.
std::optional<report::PeakInstruction> PeakInstructionOf(const hlo::Module& module,
                                                         const analysis::FlatSchedule& schedule,
                                                         int64_t step) {
  if (step < 0 || step >= schedule.end_time()) return std::nullopt;
  const hlo::InstrId id = schedule.sequence[static_cast<size_t>(step)];
  report::PeakInstruction peak;
  peak.instruction = std::string(module.instr(id).name);
  peak.opcode = std::string(module.opcode_text(id));
  const hlo::Provenance p = hlo::ProvenanceOf(module, id);
  peak.op_name = p.op_name;
  peak.source_file = p.file;
  peak.source_line = p.line;
  return peak;
}

}  // namespace

absl::StatusOr<std::unique_ptr<target::Target>> ResolveModuleTarget(const dump::LoadedModule& in,
                                                                   const std::string& requested,
                                                                   int64_t alignment) {
  target::TargetInputs inputs;
  inputs.requested = requested;
  inputs.alignment = alignment;
  inputs.file_backend = in.files.backend;
  inputs.gpu_target_config_path = in.target_files.gpu_target_config_path;
  inputs.gpu_target_config = in.target_files.gpu_target_config;
  inputs.tpu_target_arguments_path = in.target_files.tpu_target_arguments_path;
  inputs.tpu_target_arguments = in.target_files.tpu_target_arguments;
  return target::ResolveTarget(inputs, in.module ? &*in.module : nullptr);
}

namespace {

// Analyses one loaded module into its report; no report (nullopt) for a
// module that --module filters out. Warnings about the dump's files that
// every command should print (on the report's own list, which `check`
// prints too) go to `file_warnings`.
absl::StatusOr<std::optional<ModuleReport>> AnalyzeLoaded(dump::LoadedModule& in,
                                                          const std::optional<std::regex>& filter,
                                                          const ReportOptions& options,
                                                          std::vector<std::string>* file_warnings) {
  ModuleReport out;
  out.name = in.files.module_name;
  if (in.module && !in.module->name.empty()) out.name = std::string(in.module->name);
  if (filter && !std::regex_search(out.name, *filter)) return std::nullopt;
  out.files = in.files_read;
  out.stage = std::string(dump::StageName(in.files.stage));
  out.warnings = std::move(in.warnings);
  absl::StatusOr<std::unique_ptr<target::Target>> resolved =
      ResolveModuleTarget(in, options.target, options.alignment);
  if (!resolved.ok()) return resolved.status();
  const target::Target& target = **resolved;
  out.backend = std::string(target::BackendName(target.backend()));
  out.target = target.name();
  if (target.device()) out.device = *target.device();
  out.default_mem_fraction = target.DefaultMemFraction();
  // XLA's figures decide only when its files are whole: a file cut short
  // parses as a smaller assignment (issue 30 item 5). Otherwise they are
  // left out, with a warning, and hlomem's own figures decide.
  std::optional<dump::XlaMemoryStats> xla_stats;
  auto attach_xla = [&] {
    if (!in.xla) return;
    if (!in.xla->whole()) {
      out.xla_incomplete = in.xla->IncompleteReason();
      file_warnings->push_back(absl::StrCat(
          in.xla->path, ": warning: XLA's buffer assignment is incomplete (", out.xla_incomplete,
          "); ",
          in.module ? "hlomem's computed figures decide" : "its figures are not used"));
      return;
    }
    xla_stats = in.xla->Stats(target);
    out.xla = FromXla(*xla_stats);
  };
  if (!in.module) {
    attach_xla();
    out.memory_spaces = SpaceTotals(target, nullptr, xla_stats ? &xla_stats->color_bytes : nullptr);
  }
  if (in.module) {
    in.module->SetFramePolicy(options.frames);
    const hlo::Module& module = *in.module;
    out.scheduled = module.is_scheduled;
    out.signature = module.EntrySignature();
    out.instruction_count = static_cast<int64_t>(module.instructions.size());
    std::optional<ScopedPhase> phase(std::in_place, "analyze");
    absl::StatusOr<std::unique_ptr<analysis::BufferAssignment>> assignment =
        analysis::BufferAssignment::Run(module, target);
    if (!assignment.ok()) return assignment.status();
    std::optional<ScopedPhase> profile_phase(std::in_place, "analyze: profile");
    out.profile = analysis::ComputeMemoryProfile(**assignment);
    profile_phase.reset();
    out.computed = FromAssignment(**assignment, out.profile);
    out.schedule_length = (*assignment)->schedule().end_time();
    out.peak_instruction = PeakInstructionOf(module, (*assignment)->schedule(), out.profile.peak_step);
    out.stack_frames = StackFrameRows(module);
    // The rows and the detectors only read the model and the analysis, so
    // the rows are built on another core while the detectors run, and this
    // thread joins in when the detectors are done: the rows of a module of a
    // million buffers take longer than its detectors (the detect phase
    // includes the wait for them).
    const std::vector<std::string> space_names = SpaceOfAllocations(**assignment);
    const std::vector<analysis::BufferRecord>& records = out.profile.buffers;
    // The records the rows are made of, ascending: all of them, or those
    // the scope keeps and those live at the peak (for the rollups).
    using Rows = ReportOptions::Rows;
    std::vector<size_t> wanted, kept;
    const bool bounded =
        options.rows == Rows::kLiveAtPeak ||
        (options.rows == Rows::kLargest && options.max_rows > 0 && records.size() > options.max_rows);
    if (bounded) {
      std::vector<size_t> live = out.profile.live_at_peak;
      std::sort(live.begin(), live.end());
      kept = options.rows == Rows::kLiveAtPeak
                 ? live
                 : report::KeptRows(records.size(), out.profile.live_at_peak, options.max_rows,
                                    [&](size_t k) { return records[k].bytes; });
      std::set_union(kept.begin(), kept.end(), live.begin(), live.end(), std::back_inserter(wanted));
    }
    const size_t row_count = bounded ? wanted.size() : records.size();
    std::vector<BufferRow> rows(row_count);
    std::atomic<size_t> next_rows{0};
    RowStrings builder_strings, own_strings;  // one per thread building rows
    auto build_rows = [&](RowStrings* strings) {
      constexpr size_t kRowsAtATime = 4096;
      for (size_t first; (first = next_rows.fetch_add(kRowsAtATime)) < rows.size();) {
        const size_t last = std::min(rows.size(), first + kRowsAtATime);
        for (size_t k = first; k < last; ++k) {
          rows[k] = MakeBufferRow(module, (*assignment)->dataflow(), space_names,
                                  records[bounded ? wanted[k] : k], strings);
        }
      }
    };
    std::thread row_builder(build_rows, &builder_strings);
    if (!out.scheduled) {
      out.estimate_reason = "the module is not scheduled; text order stands in for the schedule";
    } else if (in.files.stage_fallback || in.files.stage == dump::Stage::kBeforeOptimizations) {
      out.estimate_reason = "before-optimizations HLO: XLA's passes will change it";
    } else if (!target.exact()) {
      out.estimate_reason = target.caveat();
    }
    out.exact = out.estimate_reason.empty();
    // XLA assigns the after-optimizations module: every buffer hlomem
    // assigns in it is among XLA's values unless the file lost some.
    if (in.xla && in.files.stage != dump::Stage::kBeforeOptimizations) {
      // The names view the indexes: both filled first.
      std::vector<hlo::ShapeIndex> indexes;
      std::vector<absl::string_view> names;
      for (const analysis::BufferRecord& record : out.profile.buffers) {
        if (record.allocation < 0) continue;
        indexes.push_back((*assignment)->dataflow().value_index(record.value));
        names.push_back(module.instr(record.instruction).name);
      }
      std::vector<dump::XlaBufferName> assigned;
      assigned.reserve(names.size());
      for (size_t k = 0; k < names.size(); ++k) assigned.push_back({names[k], indexes[k]});
      dump::CheckXlaCoverage(assigned, &*in.xla);
    }
    attach_xla();
    if (out.xla) out.mismatches = Compare(*out.computed, *out.xla);
    out.memory_spaces = SpaceTotals(target, &(*assignment)->stats().color_bytes,
                                    xla_stats ? &xla_stats->color_bytes : nullptr);
    phase.emplace("detect");
    out.findings = detect::RunDetectors(
        detect::DetectorInput{module, **assignment, out.profile,
                              xla_stats ? &xla_stats->color_bytes : nullptr},
        options.detect);
    build_rows(&own_strings);
    row_builder.join();
    out.string_pools = {std::move(builder_strings.pool), std::move(own_strings.pool)};
    if (bounded) {
      KeepBoundedRows(wanted, kept, std::move(rows), &out);
    } else {
      out.rows = std::move(rows);
    }
    FreeStorage(out.profile.buffers);
    phase.reset();
  }
  return out;
}

absl::StatusOr<std::optional<std::regex>> ModuleFilter(const std::string& regex) {
  std::optional<std::regex> filter;
  if (regex.empty()) return filter;
  try {
    filter.emplace(regex);
  } catch (const std::regex_error&) {
    return absl::InvalidArgumentError(
        absl::StrCat("error: invalid --module regular expression '", regex, "'"));
  }
  return filter;
}

absl::Status NoModuleMatches(const std::string& regex) {
  return absl::InvalidArgumentError(absl::StrCat("error: no module matches --module '", regex, "'"));
}

}  // namespace

absl::StatusOr<Report> BuildReport(const std::vector<std::string>& paths,
                                   const ReportOptions& options) {
  absl::StatusOr<std::optional<std::regex>> filter = ModuleFilter(options.module_regex);
  if (!filter.ok()) return filter.status();
  // Each module is analysed on the thread that loaded it, as soon as it is
  // loaded, and its model freed: the next module's parse reuses the memory.
  std::mutex progress_mutex;
  size_t started = 0;
  struct Analyzed {
    absl::StatusOr<std::optional<ModuleReport>> module;
    std::vector<std::string> file_warnings;
  };
  absl::StatusOr<dump::ConsumedLoad<Analyzed>> loaded = dump::LoadDumpsConsuming<Analyzed>(
      paths, options.load, [&](dump::LoadedModule& in, size_t dump_count) {
        if (options.progress) {
          std::lock_guard<std::mutex> lock(progress_mutex);
          options.progress(started, std::max(dump_count, started + 1), in.files.module_name);
          ++started;
        }
        Analyzed out;
        out.module = AnalyzeLoaded(in, *filter, options, &out.file_warnings);
        return out;
      });
  if (!loaded.ok()) return loaded.status();
  Report report;
  report.warnings = std::move(loaded->load.warnings);
  report.unreadable = std::move(loaded->load.unreadable);
  for (Analyzed& out : loaded->results) {
    if (!out.module.ok()) return out.module.status();
    for (std::string& w : out.file_warnings) report.warnings.push_back(std::move(w));
    if (*out.module) report.modules.push_back(std::move(**out.module));
  }
  if (options.progress) options.progress(started, started, "");
  if (report.modules.empty()) return NoModuleMatches(options.module_regex);
  return report;
}

absl::StatusOr<Report> BuildReportFromText(absl::string_view text, const std::string& origin,
                                           const ReportOptions& options) {
  absl::StatusOr<std::optional<std::regex>> filter = ModuleFilter(options.module_regex);
  if (!filter.ok()) return filter.status();
  hlo::ParseOptions parse = options.load.parse;
  absl::StatusOr<std::vector<hlo::Module>> modules = hlo::ParseHloString(text, origin, parse);
  if (!modules.ok()) return modules.status();
  Report report;
  for (size_t i = 0; i < modules->size(); ++i) {
    hlo::Module& module = (*modules)[i];
    absl::Status verified = hlo::VerifyModule(module);
    if (verified.ok()) verified = hlo::VerifyElementCount(module, options.load.max_elements);
    if (!verified.ok()) return verified;
    dump::LoadedModule in;
    in.files.key = origin;
    in.files.module_name = std::string(module.name);
    in.files.stage = options.load.stage;
    in.files.standalone = true;
    in.files_read = {origin};
    in.module_index = i;
    in.module = std::move(module);
    absl::StatusOr<std::optional<ModuleReport>> out =
        AnalyzeLoaded(in, *filter, options, &report.warnings);
    if (!out.ok()) return out.status();
    if (*out) report.modules.push_back(std::move(**out));
  }
  if (report.modules.empty()) return NoModuleMatches(options.module_regex);
  return report;
}

}  // namespace hlomem::pipeline
