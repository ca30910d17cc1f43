#include "lib/report/json_writer.h"

#include "lib/base/bytes.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

using Json = nlohmann::ordered_json;

std::string Str(absl::string_view s) { return std::string(s.data(), s.size()); }

Json Numbers(const MemoryNumbers& n, const bool* exact) {
  Json j;
  j["total_bytes"] = n.total_bytes;
  j["argument_bytes"] = n.argument_bytes;
  j["output_bytes"] = n.output_bytes;
  j["alias_bytes"] = n.alias_bytes;
  j["temp_bytes"] = n.temp_bytes;
  if (n.peak_live_bytes) j["peak_live_bytes"] = *n.peak_live_bytes;
  if (n.fragmentation_bytes) j["fragmentation_bytes"] = *n.fragmentation_bytes;
  if (exact) j["exact"] = *exact;
  j["constant_bytes"] = n.constant_bytes;
  j["thread_local_bytes"] = n.thread_local_bytes;
  if (n.peak_memory_bytes) j["peak_memory_bytes"] = *n.peak_memory_bytes;
  j["host_argument_bytes"] = n.host_argument_bytes;
  j["host_output_bytes"] = n.host_output_bytes;
  j["host_alias_bytes"] = n.host_alias_bytes;
  j["host_temp_bytes"] = n.host_temp_bytes;
  return j;
}

Json Buffer(const ModuleReport& m, const analysis::BufferRecord& r) {
  const hlo::Module& module = *m.module;
  const hlo::Instruction& instr = module.instr(r.instruction);
  const hlo::OpMetadata& meta = module.metadata_of(r.instruction);
  Json j;
  j["instruction"] = Str(instr.name);
  j["shape_index"] = Json::array();
  for (int64_t i : r.index) j["shape_index"].push_back(i);
  j["opcode"] = Str(instr.opcode_text);
  j["shape"] = module.shapes.ToString(r.shape);
  j["bytes"] = r.bytes;
  j["kind"] = Str(analysis::BufferKindName(r.kind));
  j["allocation"] = r.allocation;
  j["offset"] = r.offset;
  if (r.start >= 0) {
    j["live_range"] = {{"start", r.start}, {"end", r.end}};
  } else {
    j["live_range"] = nullptr;
  }
  j["op_name"] = Str(meta.op_name);
  j["op_type"] = Str(meta.op_type);
  const hlo::SourceLocation loc = module.SourceOf(r.instruction);
  if (loc.valid()) {
    j["source"] = {{"file", Str(loc.file)}, {"line", loc.line}};
  } else {
    j["source"] = nullptr;
  }
  return j;
}

Json FindingJson(const detect::Finding& f) {
  Json j;
  j["detector"] = f.detector;
  j["severity"] = Str(detect::SeverityName(f.severity));
  j["bytes"] = f.bytes;
  j["message"] = f.message;
  j["suggestion"] = f.suggestion;
  j["instructions"] = f.instructions;
  if (f.source_file.empty()) {
    j["source"] = nullptr;
  } else {
    j["source"] = {{"file", f.source_file}, {"line", f.source_line}};
  }
  j["op_name"] = f.op_name;
  return j;
}

}  // namespace

std::string WriteJson(const Report& report, const JsonOptions& options) {
  Json root;
  root["schema_version"] = kSchemaVersion;
  root["tool"] = "hlomem";
  Json modules = Json::array();
  for (const ModuleReport& m : report.modules) {
    Json j;
    j["name"] = m.name;
    j["files"] = m.files;
    j["backend"] = m.backend;
    j["stage"] = m.stage;
    j["scheduled"] = m.scheduled;
    if (m.computed) {
      j["computed"] = Numbers(*m.computed, &m.exact);
      if (!m.exact) j["computed"]["estimate_reason"] = m.estimate_reason;
    } else {
      j["computed"] = nullptr;
    }
    j["xla"] = m.xla ? Numbers(*m.xla, nullptr) : Json(nullptr);
    Json mismatches = Json::array();
    for (const Mismatch& x : m.mismatches) {
      mismatches.push_back({{"field", x.field}, {"computed", x.computed}, {"xla", x.xla}});
    }
    j["mismatches"] = mismatches;
    j["peak_step"] = m.computed ? Json(m.profile.peak_step) : Json(nullptr);
    j["schedule_length"] =
        m.assignment ? Json(m.assignment->schedule().end_time()) : Json(nullptr);
    Json buffers = Json::array();
    Json live_at_peak = Json::array();
    if (m.module && options.include_buffers) {
      for (const analysis::BufferRecord& r : m.profile.buffers) buffers.push_back(Buffer(m, r));
      for (size_t k : m.profile.live_at_peak) live_at_peak.push_back(k);
    }
    j["buffers"] = buffers;
    j["live_at_peak"] = live_at_peak;
    j["timeline"] = options.include_timeline ? Json(m.profile.timeline) : Json::array();
    Json findings = Json::array();
    for (const detect::Finding& f : m.findings) findings.push_back(FindingJson(f));
    j["findings"] = findings;
    j["warnings"] = m.warnings;
    modules.push_back(std::move(j));
  }
  root["modules"] = std::move(modules);
  root["warnings"] = report.warnings;
  return root.dump(options.indent, ' ', /*ensure_ascii=*/false,
                   Json::error_handler_t::replace) +
         "\n";
}

}  // namespace hlomem::report
