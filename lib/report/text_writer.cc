#include "lib/report/text_writer.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/bytes.h"

namespace hlomem::report {
namespace {

std::string Truncate(absl::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  // Keep the end: op_names and paths say the most in their last parts.
  return absl::StrCat("...", s.substr(s.size() - (width - 3)));
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// One block character per column, scaled to the timeline's maximum.
std::string Sparkline(const std::vector<int64_t>& values, int width) {
  static const char* kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width <= 0) return "";
  const size_t columns = std::min(values.size(), static_cast<size_t>(width));
  int64_t max = 1;
  for (int64_t v : values) max = std::max(max, v);
  std::string out;
  for (size_t c = 0; c < columns; ++c) {
    const size_t begin = c * values.size() / columns;
    const size_t end = std::max(begin + 1, (c + 1) * values.size() / columns);
    int64_t peak = 0;
    for (size_t k = begin; k < end; ++k) peak = std::max(peak, values[k]);
    const int level = static_cast<int>((peak * 8 + max - 1) / max);
    out += kBlocks[std::clamp(level, 0, 8)];
  }
  return out;
}

void AppendSummary(const ModuleReport& m, const TextOptions& options, std::string* out) {
  const MemoryNumbers& c = *m.computed;
  const bool has_xla = m.xla.has_value();
  auto row = [&](absl::string_view label, int64_t computed, const int64_t* xla) {
    absl::StrAppend(out, absl::StrFormat("  %-15s %12s", label, HumanBytes(computed)));
    if (has_xla && xla) {
      const bool same = *xla == computed;
      absl::StrAppend(out, absl::StrFormat("  %12s  %s", HumanBytes(*xla),
                                           same ? "matches" : absl::StrCat("MISMATCH (", computed - *xla, " B)")));
    }
    out->append("\n");
  };
  absl::StrAppend(out, absl::StrFormat("  %-15s %12s%s\n", "", "hlomem", has_xla ? "           XLA" : ""));
  row("total", c.total_bytes, has_xla ? &m.xla->total_bytes : nullptr);
  row("arguments", c.argument_bytes, has_xla ? &m.xla->argument_bytes : nullptr);
  row("outputs", c.output_bytes, has_xla ? &m.xla->output_bytes : nullptr);
  row("aliased", c.alias_bytes, has_xla ? &m.xla->alias_bytes : nullptr);
  row("temp", c.temp_bytes, has_xla ? &m.xla->temp_bytes : nullptr);
  if (c.constant_bytes) row("constants", c.constant_bytes, has_xla ? &m.xla->constant_bytes : nullptr);
  absl::StrAppend(out, absl::StrFormat("  %-15s %12s  at step %d of %d\n", "peak live",
                                       HumanBytes(c.peak_live_bytes.value_or(0)),
                                       m.profile.peak_step, m.assignment->schedule().end_time()));
  absl::StrAppend(out, absl::StrFormat("  %-15s %12s  (%s of the temp heap)\n", "fragmentation",
                                       HumanBytes(c.fragmentation_bytes.value_or(0)),
                                       Percent(c.fragmentation_bytes.value_or(0), c.temp_bytes)));
  (void)options;
}

void AppendPeakTable(const ModuleReport& m, const TextOptions& options, std::string* out) {
  const hlo::Module& module = *m.module;
  const int64_t peak = m.profile.peak_live_bytes;
  absl::StrAppend(out, "\n  Buffers live at the peak (step ", m.profile.peak_step, "):\n");
  absl::StrAppend(out, absl::StrFormat("  %12s %7s  %-10s %-28s %-34s %s\n", "bytes", "% peak",
                                       "kind", "shape", "op_name", "source"));
  int shown = 0;
  for (size_t k : m.profile.live_at_peak) {
    if (shown++ == options.top) break;
    const analysis::BufferRecord& r = m.profile.buffers[k];
    const hlo::OpMetadata& meta = module.metadata_of(r.instruction);
    const std::string name = meta.op_name.empty() ? std::string(module.instr(r.instruction).name)
                                                  : std::string(meta.op_name);
    absl::StrAppend(out, absl::StrFormat("  %12s %7s  %-10s %-28s %-34s %s\n", HumanBytes(r.bytes),
                                         Percent(r.bytes, peak), analysis::BufferKindName(r.kind),
                                         Truncate(module.shapes.ToString(r.shape, false), 28),
                                         Truncate(name, 34), SourceLine(module, r.instruction)));
  }
  if (m.profile.live_at_peak.size() > static_cast<size_t>(options.top)) {
    absl::StrAppend(out, "  ... ", m.profile.live_at_peak.size() - static_cast<size_t>(options.top),
                    " more (--top N shows more)\n");
  }
}

// Bytes of the buffers live at the peak, grouped by a key.
template <typename KeyFn>
void AppendRollup(const ModuleReport& m, const TextOptions& options, absl::string_view title,
                  KeyFn key_of, std::string* out) {
  std::map<std::string, int64_t> bytes;
  for (size_t k : m.profile.live_at_peak) {
    const analysis::BufferRecord& r = m.profile.buffers[k];
    bytes[key_of(r)] += r.bytes;
  }
  std::vector<std::pair<std::string, int64_t>> rows(bytes.begin(), bytes.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  absl::StrAppend(out, "\n  ", title, ":\n");
  int shown = 0;
  for (const auto& [key, total] : rows) {
    if (shown++ == options.top) break;
    absl::StrAppend(out, absl::StrFormat("  %12s %7s  %s\n", HumanBytes(total),
                                         Percent(total, m.profile.peak_live_bytes),
                                         key.empty() ? "(unknown)" : Truncate(key, 90)));
  }
}

void AppendFindings(const ModuleReport& m, std::string* out) {
  if (m.findings.empty()) return;
  absl::StrAppend(out, "\n  Findings (", m.findings.size(), "):\n");
  for (const detect::Finding& f : m.findings) {
    absl::StrAppend(out, "  [", f.detector, "] ", HumanBytes(f.bytes), " at stake");
    if (!f.source_file.empty()) absl::StrAppend(out, ", ", f.source_file, ":", f.source_line);
    absl::StrAppend(out, "\n    ", f.message, "\n    fix: ", f.suggestion, "\n");
  }
}

}  // namespace

std::string WriteText(const Report& report, const TextOptions& options) {
  std::string out;
  for (const std::string& w : report.warnings) absl::StrAppend(&out, w, "\n");
  bool first = true;
  for (const ModuleReport& m : report.modules) {
    if (!first) out.append("\n");
    first = false;
    absl::StrAppend(&out, "module ", m.name, " (", m.backend.empty() ? "backend unknown" : m.backend,
                    ", ", m.stage, m.scheduled ? ", scheduled" : ", not scheduled", ")\n");
    if (!m.files.empty()) {
      absl::StrAppend(&out, "  from ", m.files.front());
      if (m.files.size() > 1) absl::StrAppend(&out, " (+", m.files.size() - 1, " more)");
      out.append("\n");
    }
    for (const std::string& w : m.warnings) absl::StrAppend(&out, "  ", w, "\n");
    if (!m.computed) {
      if (m.xla) {
        absl::StrAppend(&out, "  XLA's buffer assignment only (no HLO in the dump): total ",
                        HumanBytes(m.xla->total_bytes), " (", m.xla->total_bytes, " B), temp ",
                        HumanBytes(m.xla->temp_bytes), "\n");
      }
      continue;
    }
    if (!m.exact) absl::StrAppend(&out, "  estimate: ", m.estimate_reason, "\n");
    AppendSummary(m, options, &out);
    AppendPeakTable(m, options, &out);
    const hlo::Module& module = *m.module;
    AppendRollup(m, options, "At the peak, by source line",
                 [&](const analysis::BufferRecord& r) { return SourceLine(module, r.instruction); },
                 &out);
    AppendRollup(m, options, "At the peak, by op_name",
                 [&](const analysis::BufferRecord& r) {
                   return std::string(module.metadata_of(r.instruction).op_name);
                 },
                 &out);
    AppendFindings(m, &out);
    absl::StrAppend(&out, "\n  Live bytes over the schedule (peak ",
                    HumanBytes(m.profile.peak_live_bytes), "):\n  |",
                    Sparkline(m.profile.timeline, options.width - 4), "|\n");
  }
  return out;
}

}  // namespace hlomem::report
