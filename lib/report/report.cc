#include "lib/report/report.h"

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hlomem::report {
namespace {

std::string BackendFamily(absl::string_view backend) {
  if (backend == "cpu") return "cpu";
  if (absl::StartsWith(backend, "sm_") || absl::StartsWith(backend, "gfx")) return "gpu";
  if (absl::StrContains(backend, "tpu")) return "tpu";
  return std::string(backend);
}

MemoryNumbers FromAssignment(const analysis::BufferAssignment& a,
                             const analysis::MemoryProfile& profile) {
  const analysis::AssignmentStats& st = a.stats();
  MemoryNumbers n;
  n.total_bytes = st.total_bytes;
  n.argument_bytes = st.argument_bytes;
  n.output_bytes = st.output_bytes;
  n.alias_bytes = st.alias_bytes;
  n.temp_bytes = st.temp_bytes;
  n.constant_bytes = st.constant_bytes;
  n.thread_local_bytes = st.thread_local_bytes;
  n.host_argument_bytes = st.host_argument_bytes;
  n.host_output_bytes = st.host_output_bytes;
  n.host_alias_bytes = st.host_alias_bytes;
  n.host_temp_bytes = st.host_temp_bytes;
  n.peak_live_bytes = profile.peak_live_bytes;
  n.fragmentation_bytes = profile.fragmentation_bytes;
  n.peak_memory_bytes = st.peak_memory_bytes;
  return n;
}

MemoryNumbers FromXla(const dump::XlaBufferAssignment& xla) {
  const dump::XlaMemoryStats st = xla.Stats();
  MemoryNumbers n;
  n.total_bytes = xla.total_bytes.value_or(xla.SumOfAllocationSizes());
  n.argument_bytes = st.argument_bytes;
  n.output_bytes = st.output_bytes;
  n.alias_bytes = st.alias_bytes;
  n.temp_bytes = st.temp_bytes;
  n.constant_bytes = st.constant_bytes;
  n.thread_local_bytes = st.thread_local_bytes;
  n.host_argument_bytes = st.host_argument_bytes;
  n.host_output_bytes = st.host_output_bytes;
  n.host_alias_bytes = st.host_alias_bytes;
  n.host_temp_bytes = st.host_temp_bytes;
  return n;
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

}  // namespace

std::string SourceLine(const hlo::Module& module, hlo::InstrId instruction) {
  const hlo::SourceLocation loc = module.SourceOf(instruction);
  if (!loc.valid()) return "";
  return loc.line > 0 ? absl::StrCat(loc.file, ":", loc.line) : std::string(loc.file);
}

absl::StatusOr<Report> BuildReport(const std::vector<std::string>& paths,
                                   const ReportOptions& options) {
  absl::StatusOr<dump::LoadResult> loaded = dump::LoadDumps(paths, options.load);
  if (!loaded.ok()) return loaded.status();
  std::optional<std::regex> filter;
  if (!options.module_regex.empty()) {
    try {
      filter.emplace(options.module_regex);
    } catch (const std::regex_error&) {
      return absl::InvalidArgumentError(
          absl::StrCat("error: invalid --module regular expression '", options.module_regex, "'"));
    }
  }
  Report report;
  report.warnings = std::move(loaded->warnings);
  for (dump::LoadedModule& in : loaded->modules) {
    ModuleReport out;
    out.name = in.files.module_name;
    if (in.module && !in.module->name.empty()) out.name = std::string(in.module->name);
    if (filter && !std::regex_search(out.name, *filter)) continue;
    out.files = in.files_read;
    out.backend = BackendFamily(in.files.backend);
    out.stage = std::string(dump::StageName(in.files.stage));
    out.warnings = std::move(in.warnings);
    if (in.xla) out.xla = FromXla(*in.xla);
    if (in.module) {
      out.module = std::make_unique<hlo::Module>(std::move(*in.module));
      out.scheduled = out.module->is_scheduled;
      // Tiled layouts are TPU's: their buffers occupy the padded size.
      bool tiled = false;
      for (hlo::ShapeId id = 0; id < out.module->shapes.size() && !tiled; ++id) {
        const hlo::Shape& shape = out.module->shapes.get(id);
        tiled = shape.layout && !shape.layout->tiles.empty();
      }
      if (tiled && out.backend.empty()) out.backend = "tpu";
      analysis::AssignmentOptions assign;
      assign.padded_sizes = tiled;
      assign.alignment = options.alignment > 0 ? options.alignment
                         : out.backend == "gpu"  ? 256
                                                 : 64;
      absl::StatusOr<std::unique_ptr<analysis::BufferAssignment>> assignment =
          analysis::BufferAssignment::Run(*out.module, assign);
      if (!assignment.ok()) return assignment.status();
      out.assignment = std::move(*assignment);
      out.profile = analysis::ComputeMemoryProfile(*out.assignment);
      out.computed = FromAssignment(*out.assignment, out.profile);
      if (!out.scheduled) {
        out.estimate_reason = "the module is not scheduled; text order stands in for the schedule";
      } else if (in.files.stage_fallback || in.files.stage == dump::Stage::kBeforeOptimizations) {
        out.estimate_reason = "before-optimizations HLO: XLA's passes will change it";
      } else if (!out.backend.empty() && out.backend != "cpu") {
        out.estimate_reason = absl::StrCat(
            "the ", out.backend, " backend's buffer assignment is reproduced approximately");
      }
      out.exact = out.estimate_reason.empty();
      if (out.xla) out.mismatches = Compare(*out.computed, *out.xla);
      out.findings = detect::RunDetectors(
          detect::DetectorInput{*out.module, *out.assignment, out.profile}, options.detect);
    }
    report.modules.push_back(std::move(out));
  }
  if (report.modules.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("error: no module matches --module '", options.module_regex, "'"));
  }
  return report;
}

}  // namespace hlomem::report
