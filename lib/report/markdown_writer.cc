// GitHub-flavoured Markdown for `report`, `diff` and `check`, small enough for
// $GITHUB_STEP_SUMMARY (GitHub takes up to 1 MiB per step): tables are cut
// at --top rows and long cells are shortened.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/base/bytes.h"
#include "lib/report/writers.h"

namespace hlomem::report {
namespace {

constexpr size_t kMaxCell = 120;
// GitHub rejects a step summary over 1 MiB; stay clear of it.
constexpr size_t kMaxSummaryBytes = 1000 * 1000;
constexpr int kMaxViolationRows = 200;

// A table cell: pipes escaped, no line breaks, long text shortened from the
// front (op_names and paths say the most at their ends).
std::string Cell(absl::string_view text) {
  std::string s = absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}, {"\r", " "}});
  if (s.size() > kMaxCell) s = absl::StrCat("…", s.substr(s.size() - (kMaxCell - 1)));
  return s;
}

// A cell of prose (a finding's message and fix): escaped like Cell, never
// shortened, so the fix reaches the reader whole.
std::string ProseCell(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}, {"\r", " "}});
}

std::string Code(absl::string_view text) {
  if (text.empty()) return "";
  return absl::StrCat("`", Cell(absl::StrReplaceAll(text, {{"`", "'"}})), "`");
}

std::string Row(const std::vector<std::string>& cells) {
  return absl::StrCat("| ", absl::StrJoin(cells, " | "), " |\n");
}

std::string Header(const std::vector<std::string>& cells, const std::vector<bool>& right) {
  std::string out = Row(cells);
  out += "|";
  for (size_t c = 0; c < cells.size(); ++c) out += right[c] ? " ---: |" : " --- |";
  out += "\n";
  return out;
}

std::string Sparkline(const std::vector<int64_t>& timeline, size_t width) {
  static const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const std::vector<int64_t> values = DownsampleMax(timeline, width);
  if (values.empty()) return "";
  const int64_t max = std::max<int64_t>(1, *std::max_element(values.begin(), values.end()));
  std::string out;
  for (int64_t v : values) {
    out += kBlocks[std::clamp(static_cast<int>(static_cast<double>(v) * 7 / max + 0.5), 0, 7)];
  }
  return out;
}

void AppendFindings(const std::vector<detect::Finding>& findings, absl::string_view title,
                    std::string* out) {
  absl::StrAppend(out, "\n**", title, "** (", findings.size(), ")\n\n");
  if (findings.empty()) return;
  *out += Header({"detector", "bytes", "source", "what", "fix"}, {false, true, false, false, false});
  for (const detect::Finding& f : findings) {
    const std::string source =
        f.source_file.empty() ? "" : absl::StrCat(f.source_file, ":", f.source_line);
    *out += Row({Code(f.detector), HumanBytes(f.bytes), Code(source), ProseCell(f.message),
                 ProseCell(f.suggestion)});
  }
}

void AppendModule(const ModuleReport& m, const WriteOptions& options, std::string* out) {
  absl::StrAppend(out, "\n### `", Cell(m.name), "`\n\n");
  const std::string& backend = m.target.empty() ? m.backend : m.target;
  absl::StrAppend(out, backend.empty() ? "backend unknown" : backend, ", ", m.stage,
                  m.scheduled ? ", scheduled" : ", not scheduled");
  if (m.computed) absl::StrAppend(out, m.exact ? ", exact" : absl::StrCat(", **estimate**: ", m.estimate_reason));
  out->append("\n\n");
  if (!m.computed) {
    if (m.xla) absl::StrAppend(out, "XLA's buffer assignment only: total ", HumanAndExact(m.xla->total_bytes), "\n");
    return;
  }
  const bool has_xla = m.xla.has_value();
  *out += has_xla ? Header({"", "hlomem", "bytes", "XLA", ""}, {false, true, true, true, false})
                  : Header({"", "hlomem", "bytes"}, {false, true, true});
  for (Metric metric : kMetrics) {
    const int64_t value = MetricValue(*m.computed, metric);
    std::vector<std::string> cells = {std::string(MetricName(metric)), HumanBytes(value),
                                      absl::StrCat(value)};
    if (has_xla) {
      if (metric == Metric::kPeakLive) {
        cells.insert(cells.end(), {"", absl::StrCat("step ", m.profile.peak_step, " of ", m.schedule_length)});
      } else {
        const int64_t xla = MetricValue(*m.xla, metric);
        cells.insert(cells.end(), {HumanBytes(xla), xla == value ? "matches" : "**mismatch**"});
      }
    }
    *out += Row(cells);
  }
  if (HasSeveralMemorySpaces(m)) {
    absl::StrAppend(out, "\n**Memory spaces** (sum of allocations)\n\n");
    *out += Header({"space", "color", "hlomem", "XLA", ""}, {false, true, true, true, false});
    for (const MemorySpaceTotals& space : m.memory_spaces) {
      *out += Row({absl::StrCat(space.name, " (", MemorySpaceRole(space), ")"), absl::StrCat(space.color),
                   space.computed_bytes ? HumanBytes(*space.computed_bytes) : "",
                   space.xla_bytes ? HumanBytes(*space.xla_bytes) : "", MemorySpaceVerdict(space)});
    }
  }
  if (m.oom) {
    absl::StrAppend(out, "\n**Out of memory: ", Cell(OomTitle(*m.oom)), "**\n\n> ",
                    m.oom->error.message, "\n\n");
    for (const std::string& line : OomLines(*m.oom)) absl::StrAppend(out, "- ", Cell(line), "\n");
  }
  if (m.device_fit) {
    const DeviceFit& fit = *m.device_fit;
    absl::StrAppend(out, "\n", fit.fits ? "✅ **fits** on " : "❌ **does not fit** on ",
                    DeviceFitName(fit), fit.fits ? "" : absl::StrCat(" by ", HumanBytes(fit.shortfall)),
                    ": ", DeviceFitBudget(fit), "\n");
    const std::string source = DeviceFitSource(fit);
    if (!source.empty()) absl::StrAppend(out, "\ndevice memory: ", Cell(source), "\n");
    if (!fit.caveat.empty()) absl::StrAppend(out, "\n> ⚠ ", Cell(fit.caveat), "\n");
  }
  absl::StrAppend(out, "\nLive bytes over program order (peak at step ", m.profile.peak_step,
                  "):\n\n```\n", Sparkline(m.profile.timeline, 80), "\n```\n");
  absl::StrAppend(out, "\n**Buffers live at the peak** (", LiveAtPeakCount(m), ")",
                  m.peak_instruction ? absl::StrCat(", while ", Code(m.peak_instruction->Describe()),
                                                    " runs")
                                     : "",
                  "\n\n");
  *out += Header({"bytes", "% peak", "kind", "shape", "op_name", "source"},
                 {true, true, false, false, false, false});
  const std::vector<PeakGroup> groups = GroupedAtPeak(m, options.top);
  for (const PeakGroup& g : groups) {
    const BufferRow& r = *g.row;
    *out += Row({HumanBytes(g.bytes()), PercentOf(g.bytes(), m.profile.peak_live_bytes), std::string(r.kind),
                 absl::StrCat(g.count > 1 ? absl::StrCat(g.count, " × ") : "", Code(StripLayout(r.shape))),
                 Code(r.Label()), Code(r.Source())});
  }
  if (LiveAtPeakCount(m) > RowsIn(groups)) {
    absl::StrAppend(out, "\n… and ", LiveAtPeakCount(m) - RowsIn(groups), " more\n");
  }
  absl::StrAppend(out, "\n**At the peak, by source line**\n\n");
  *out += Header({"bytes", "% peak", "buffers", "source"}, {true, true, true, false});
  int shown = 0;
  for (const RollupRow& row : RollupAtPeak(m, RollupKey::kSourceLine)) {
    if (shown++ == options.top) break;
    *out += Row({HumanBytes(row.bytes), PercentOf(row.bytes, m.profile.peak_live_bytes),
                 absl::StrCat(row.buffers), row.key.empty() ? "(no source)" : Code(row.key)});
  }
  AppendFindings(m.findings, "Findings", out);
}

// Cuts at a line boundary under kMaxSummaryBytes, saying so.
std::string FitStepSummary(std::string markdown) {
  if (markdown.size() <= kMaxSummaryBytes) return markdown;
  const size_t cut = markdown.rfind('\n', kMaxSummaryBytes - 200);
  markdown.resize(cut == std::string::npos ? 0 : cut + 1);
  markdown += "\n… cut to fit GitHub's step summary limit; use --top or --module for less\n";
  return markdown;
}

}  // namespace

std::string WriteMarkdown(const Report& report, const WriteOptions& options) {
  std::string out = "## hlomem report\n";
  for (const std::string& w : report.warnings) absl::StrAppend(&out, "\n> ", Cell(w), "\n");
  if (report.modules.size() > 1) {
    absl::StrAppend(&out, "\n", report.modules.size(), " modules\n\n");
    out += Header({"peak live", "total", "temp", "findings", "module"}, {true, true, true, true, false});
    for (const ModuleReport& m : report.modules) {
      const std::optional<MemoryNumbers>& n = m.computed ? m.computed : m.xla;
      out += Row({m.computed && m.computed->peak_live_bytes ? HumanBytes(*m.computed->peak_live_bytes) : "",
                  n ? HumanBytes(n->total_bytes) : "", n ? HumanBytes(n->temp_bytes) : "",
                  absl::StrCat(m.findings.size()), Code(m.name)});
    }
  }
  for (const ModuleReport& m : report.modules) AppendModule(m, options, &out);
  return FitStepSummary(std::move(out));
}

std::string WriteDiffMarkdown(const DiffReport& diff, const WriteOptions& options) {
  std::string out = "## hlomem diff\n";
  for (const ModuleDiff& d : diff.modules) {
    absl::StrAppend(&out, "\n### `", Cell(d.name), "`",
                    d.a == nullptr ? " (only in B)" : d.b == nullptr ? " (only in A)" : "", "\n\n");
    out += Header({"", "A", "B", "change", ""}, {false, true, true, true, true});
    for (Metric metric : kMetrics) {
      const int64_t a = SideMetric(d.a, metric);
      const int64_t b = SideMetric(d.b, metric);
      out += Row({std::string(MetricName(metric)), HumanBytes(a), HumanBytes(b), SignedBytes(b - a), PercentChange(a, b)});
    }
    absl::StrAppend(&out, "\n**Buffers by change in bytes** (", d.changes.size(), ")\n\n");
    out += Header({"change", "A", "B", "status", "kind", "shape", "op_name", "source"},
                  {true, true, true, false, false, false, false, false});
    int shown = 0;
    for (const BufferChange& c : d.changes) {
      if (shown++ == options.top) break;
      out += Row({SignedBytes(c.delta()), HumanBytes(c.bytes_a), HumanBytes(c.bytes_b),
                  absl::StrCat(ChangeKindName(c.change), c.at_peak_b ? " (at peak)" : ""), c.kind,
                  Code(c.ShapeShown()), Code(c.op_name), Code(c.SourceShown())});
    }
    AppendFindings(d.new_findings, "New findings", &out);
    AppendFindings(d.resolved_findings, "Resolved findings", &out);
  }
  return FitStepSummary(std::move(out));
}

std::string WriteCheckMarkdown(const CheckResult& result, const Report& report,
                               const WriteOptions& options) {
  std::string out = absl::StrCat("## hlomem check: ", result.passed() ? "✅ passed" : "❌ failed", "\n\n");
  if (!result.violations.empty()) {
    out += Header({"module", "rule", "value", "limit", "top contributor", "source"},
                  {false, false, true, true, false, false});
    int shown = 0;
    for (const Violation& v : result.violations) {
      if (shown++ == kMaxViolationRows) break;
      std::string top, source;
      if (!v.contributors.empty()) {
        const Contributor& c = v.contributors.front();
        top = absl::StrCat(HumanBytes(c.bytes), " ", c.label);
        if (!c.source_file.empty()) source = absl::StrCat(c.source_file, ":", c.source_line);
      }
      out += Row({Code(v.module), Code(v.rule), HumanBytes(v.value),
                  v.limit > 0 ? HumanBytes(v.limit) : "", Cell(top), Code(source)});
    }
    if (result.violations.size() > kMaxViolationRows) {
      absl::StrAppend(&out, "\n… and ", result.violations.size() - kMaxViolationRows,
                      " more (see the log)\n");
    }
    out += "\n";
  }
  for (const std::string& line : result.passes) absl::StrAppend(&out, "- ✓ ", Cell(line), "\n");
  for (const std::string& line : result.notes) absl::StrAppend(&out, "- ", Cell(line), "\n");
  for (const ModuleReport& m : report.modules) AppendModule(m, options, &out);
  return FitStepSummary(std::move(out));
}

}  // namespace hlomem::report
