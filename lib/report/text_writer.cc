// The terminal formats of `report` and `diff`: aligned tables in the manner
// of bloaty, sizes like XLA's ("129.01GiB"), a block-character timeline.
#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/base/bytes.h"
#include "lib/report/writers.h"

namespace hlomem::report {
namespace {

// ANSI styles, empty unless the output is a terminal.
struct Style {
  bool on = false;
  std::string Wrap(absl::string_view code, absl::string_view text) const {
    if (!on) return std::string(text);
    return absl::StrCat("\x1b[", code, "m", text, "\x1b[0m");
  }
  std::string Bold(absl::string_view t) const { return Wrap("1", t); }
  std::string Dim(absl::string_view t) const { return Wrap("2", t); }
  std::string Red(absl::string_view t) const { return Wrap("31", t); }
  std::string Green(absl::string_view t) const { return Wrap("32", t); }
  std::string Yellow(absl::string_view t) const { return Wrap("33", t); }
  std::string Cyan(absl::string_view t) const { return Wrap("36", t); }
};

std::string Truncate(absl::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  if (width <= 3) return std::string(s.substr(0, width));
  // Keep the end: op_names and paths say the most in their last parts.
  return absl::StrCat("...", s.substr(s.size() - (width - 3)));
}

// PercentOf, with "-" in the empty cell of a text table.
std::string Percent(int64_t part, int64_t whole) {
  return whole <= 0 ? "-" : PercentOf(part, whole);
}

// Columns sized to their widest cell; numeric columns right-aligned; the
// last column is not padded (no trailing blanks in goldens).
class Table {
 public:
  Table(std::vector<std::string> header, std::vector<bool> right_aligned,
        std::vector<size_t> max_width)
      : right_(std::move(right_aligned)), max_(std::move(max_width)) {
    rows_.push_back(std::move(header));
  }
  void Add(std::vector<std::string> cells) {
    for (size_t c = 0; c < cells.size() && c < max_.size(); ++c) {
      if (max_[c] > 0) cells[c] = Truncate(cells[c], max_[c]);
    }
    rows_.push_back(std::move(cells));
  }
  size_t size() const { return rows_.size() - 1; }
  void Render(const Style& style, std::string* out) const {
    std::vector<size_t> width(right_.size(), 0);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = "  ";
      for (size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(width[c] - cell.size(), ' ');
        const bool last = c + 1 == rows_[r].size();
        if (right_[c]) {
          absl::StrAppend(&line, pad, cell);
        } else {
          absl::StrAppend(&line, cell, last ? "" : pad);
        }
        if (!last) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(out, r == 0 ? style.Dim(line) : line, "\n");
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
  std::vector<size_t> max_;
};

// Below this much temp, fragmentation is not stated as a share of it.
constexpr int64_t kMinTempForShare = 4096;
// On CPU, a temp under 1/100 (1%) of the peak gets a note: the program's
// intermediates are elsewhere (AppendSummary). A step whose activations do
// sit in temp (the MLP of testdata/dumps/mlp_b64_last40: 4-7%) gets none.
constexpr int64_t kCpuTempShareDivisor = 100;

constexpr size_t kShapeWidth = 30;
constexpr size_t kLabelWidth = 56;

void AppendHeading(const Style& style, absl::string_view text, std::string* out) {
  absl::StrAppend(out, "\n  ", style.Bold(text), "\n");
}

void AppendModuleTitle(const ModuleReport& m, const Style& style, std::string* out) {
  const std::string& backend = m.target.empty() ? m.backend : m.target;
  std::string facts = absl::StrCat(backend.empty() ? "backend unknown" : backend, ", ", m.stage,
                                   m.scheduled ? ", scheduled" : ", not scheduled");
  if (m.computed) absl::StrAppend(&facts, m.exact ? ", exact" : ", estimate");
  absl::StrAppend(out, style.Bold(absl::StrCat("module ", m.name)), "  (", facts, ")\n");
  if (!m.files.empty()) {
    absl::StrAppend(out, "  ", style.Dim(m.files.front()));
    if (m.files.size() > 1) absl::StrAppend(out, style.Dim(absl::StrCat(" (+", m.files.size() - 1, " more)")));
    out->append("\n");
  }
  for (const std::string& w : m.warnings) absl::StrAppend(out, "  ", style.Yellow(w), "\n");
  if (m.computed && !m.exact) {
    absl::StrAppend(out, "  ", style.Yellow(absl::StrCat("estimate: ", m.estimate_reason)), "\n");
  }
}

void AppendSummary(const ModuleReport& m, const Style& style, std::string* out) {
  const MemoryNumbers& c = *m.computed;
  const bool has_xla = m.xla.has_value();
  std::vector<std::string> header = {"", "hlomem"};
  if (has_xla) header.insert(header.end(), {"XLA", ""});
  std::string table_text;
  Table table(header, {false, true, true, false}, {});
  auto add_row = [&](absl::string_view name, int64_t value, int64_t xla) {
    std::vector<std::string> cells = {std::string(name), HumanBytes(value)};
    if (has_xla) {
      cells.push_back(HumanBytes(xla));
      cells.push_back(xla == value ? "matches"
                                   : absl::StrCat("MISMATCH by ", SignedBytes(value - xla), " (",
                                                  value - xla, " B)"));
    }
    table.Add(std::move(cells));
  };
  for (Metric metric : kMetrics) {
    if (metric == Metric::kPeakLive) continue;
    add_row(MetricName(metric), MetricValue(c, metric), has_xla ? MetricValue(*m.xla, metric) : 0);
  }
  if (c.constant_bytes > 0) add_row("constants", c.constant_bytes, has_xla ? m.xla->constant_bytes : 0);
  std::vector<std::string> peak = {"peak live", HumanBytes(c.peak_live_bytes.value_or(0))};
  std::vector<std::string> frag = {"fragmentation", HumanBytes(c.fragmentation_bytes.value_or(0))};
  const std::string peak_note = absl::StrCat("at step ", m.profile.peak_step, " of ", m.schedule_length);
  // A share of a few bytes of temp ("60B, 88.2% of temp") alarms for nothing.
  const std::string frag_note =
      c.temp_bytes < kMinTempForShare
          ? ""
          : absl::StrCat(Percent(c.fragmentation_bytes.value_or(0), c.temp_bytes), " of temp");
  if (has_xla) {
    peak.insert(peak.end(), {"", peak_note});
    frag.insert(frag.end(), {"", frag_note});
  } else {
    peak.push_back(peak_note);
    frag.push_back(frag_note);
  }
  table.Add(std::move(peak));
  table.Add(std::move(frag));
  table.Render(style, &table_text);
  // Color the verdict words after alignment (escapes have no width).
  size_t at = 0;
  while ((at = table_text.find("MISMATCH", at)) != std::string::npos) {
    const size_t end = table_text.find('\n', at);
    const std::string words = table_text.substr(at, end - at);
    table_text.replace(at, end - at, style.Red(words));
    at += style.Red(words).size();
  }
  out->append("\n");
  out->append(table_text);
  // XLA:CPU puts a program's intermediate values in its output allocations
  // (they are listed as `output`), so its temp is a sliver of what the
  // program holds, and a temp budget gates little there.
  const int64_t peak_live = c.peak_live_bytes.value_or(0);
  // A program of one operation has no intermediates to misplace.
  const bool has_intermediates = m.instruction_count == 0 || m.instruction_count >= kHelperMaxInstructions;
  if (m.backend == "cpu" && has_intermediates && peak_live > 0 &&
      c.temp_bytes * kCpuTempShareDivisor < peak_live) {
    absl::StrAppend(out, "  ",
                    style.Dim(absl::StrCat("note: temp is ", Percent(c.temp_bytes, peak_live),
                                           " of the peak: XLA:CPU places temporaries in output "
                                           "allocations; gate with peak or total (--max-peak, "
                                           "--max-total), not temp")),
                    "\n");
  }
}

// Each memory space on its own: TPU's HBM, VMEM and SMEM have separate
// heaps and limits. Shown when there is more than the one device memory.
void AppendMemorySpaces(const ModuleReport& m, const Style& style, std::string* out) {
  if (!HasSeveralMemorySpaces(m)) return;
  AppendHeading(style, "Memory spaces (sum of allocations)", out);
  Table table({"space", "color", "hlomem", "XLA", ""}, {false, true, true, true, false}, {});
  for (const MemorySpaceTotals& space : m.memory_spaces) {
    table.Add({absl::StrCat(space.name, " (", MemorySpaceRole(space), ")"), absl::StrCat(space.color),
               space.computed_bytes ? HumanBytes(*space.computed_bytes) : "-",
               space.xla_bytes ? HumanBytes(*space.xla_bytes) : "-", MemorySpaceVerdict(space)});
  }
  std::string text;
  table.Render(style, &text);
  out->append(text);
}

// The summary XLA:GPU prints under its error: the allocations' totals and
// the peak buffers with their lines, the error's own account of itself.
void AppendListing(const dump::XlaOomError& e, const Style& style, std::string* out) {
  if (!e.listing) return;
  const dump::XlaOomListing& listing = *e.listing;
  std::vector<std::string> stats;
  for (const auto& [name, bytes] : listing.stats) stats.push_back(absl::StrCat(name, " ", HumanBytes(bytes)));
  if (!stats.empty()) {
    absl::StrAppend(out, "  XLA's buffer assignment, printed with the error: ", absl::StrJoin(stats, ", "),
                    "\n");
  }
  if (listing.peak_buffers.empty()) return;
  absl::StrAppend(out, "  its peak buffers:\n");
  Table table({"bytes", "label", "shape", "op_name", "source"}, {true, false, false, false, false},
              {0, 0, kShapeWidth, kLabelWidth, 0});
  for (const dump::XlaOomListing::PeakBuffer& b : listing.peak_buffers) {
    table.Add({HumanBytes(b.bytes), b.entry_parameter ? "parameter" : b.label, b.shape, b.op_name,
               b.source_file.empty() ? "" : absl::StrCat(b.source_file, ":", b.source_line)});
  }
  table.Render(style, out);
}

// The error the user brought, with XLA's figures beside the module's own.
void AppendOom(const ModuleReport& m, const Style& style, std::string* out) {
  if (!m.oom) return;
  AppendHeading(style, absl::StrCat("Out of memory: ", OomTitle(*m.oom)), out);
  absl::StrAppend(out, "  ", style.Dim(m.oom->error.message), "\n");
  for (const std::string& line : OomLines(*m.oom)) absl::StrAppend(out, "  ", line, "\n");
  AppendListing(m.oom->error, style, out);
}

void AppendWrapped(absl::string_view text, absl::string_view indent, int width, std::string* out);

void AppendDeviceFit(const ModuleReport& m, const Style& style, std::string* out) {
  if (!m.device_fit) return;
  const DeviceFit& fit = *m.device_fit;
  const std::string budget = DeviceFitBudget(fit);
  AppendHeading(style, absl::StrCat("Device fit on ", DeviceFitName(fit)), out);
  const std::string source = DeviceFitSource(fit);
  if (fit.fits) {
    absl::StrAppend(out, "  ", style.Green("fits"), ": ", budget, "; ",
                    HumanBytes(fit.usable - fit.needed), " to spare\n");
    if (!source.empty()) AppendWrapped(absl::StrCat("device memory: ", source), "  ", 100, out);
    if (!fit.caveat.empty()) AppendWrapped(absl::StrCat("note: ", fit.caveat), "  ", 100, out);
    return;
  }
  absl::StrAppend(out, "  ", style.Red(absl::StrCat("does not fit by ", HumanBytes(fit.shortfall))),
                  " (", fit.shortfall, " B): ", budget, "\n");
  if (!source.empty()) AppendWrapped(absl::StrCat("device memory: ", source), "  ", 100, out);
  if (!fit.caveat.empty()) AppendWrapped(absl::StrCat("note: ", fit.caveat), "  ", 100, out);
  if (m.findings.empty()) {
    absl::StrAppend(out, "  no finding explains the gap; see the buffers at the peak below\n");
    return;
  }
  absl::StrAppend(out, "  top fixes (details under Findings):\n");
  int64_t saved = 0;
  int shown = 0;
  for (const detect::Finding& f : m.findings) {
    if (shown++ == 3) break;
    saved += f.bytes;
    absl::StrAppend(out, absl::StrFormat("  %12s  [%s]", HumanBytes(f.bytes), f.detector));
    if (!f.source_file.empty()) absl::StrAppend(out, "  ", f.source_file, ":", f.source_line);
    out->append("\n");
  }
  absl::StrAppend(out, "  together up to ", HumanBytes(saved),
                  saved >= fit.shortfall
                      ? ": enough to close the gap\n"
                      : absl::StrCat(": not enough, ", HumanBytes(fit.shortfall - saved), " still missing\n"));
}

void AppendPeakTable(const ModuleReport& m, const WriteOptions& options, const Style& style,
                     std::string* out) {
  const int64_t peak = m.profile.peak_live_bytes;
  AppendHeading(style,
                absl::StrCat("Buffers live at the peak (step ", m.profile.peak_step, " of ",
                             m.schedule_length, "): ", LiveAtPeakCount(m), " buffers, ",
                             HumanBytes(peak)),
                out);
  if (m.peak_instruction) {
    absl::StrAppend(out, "  while ", m.peak_instruction->Describe(), " runs\n");
  }
  Table table({"bytes", "%peak", "kind", "shape", "op_name", "source"},
              {true, true, false, false, false, false}, {0, 0, 0, kShapeWidth, kLabelWidth, 0});
  const std::vector<PeakGroup> groups = GroupedAtPeak(m, options.top);
  for (const PeakGroup& g : groups) {
    const BufferRow& r = *g.row;
    table.Add({HumanBytes(g.bytes()), Percent(g.bytes(), peak), std::string(r.kind),
               g.count > 1 ? absl::StrCat(g.count, " x ", StripLayout(r.shape)) : StripLayout(r.shape),
               std::string(r.Label()), r.Source()});
  }
  table.Render(style, out);
  if (LiveAtPeakCount(m) > RowsIn(groups)) {
    absl::StrAppend(out, style.Dim(absl::StrCat("  ... ", LiveAtPeakCount(m) - RowsIn(groups),
                                                " more (", TopHint(options), " shows more)")),
                    "\n");
  }
}

void AppendRollup(const ModuleReport& m, RollupKey key, const WriteOptions& options,
                  const Style& style, std::string* out) {
  const std::vector<RollupRow> rows = RollupAtPeak(m, key);
  AppendHeading(style,
                key == RollupKey::kSourceLine ? "At the peak, by source line" : "At the peak, by op_name",
                out);
  Table table({"bytes", "%peak", "buffers", key == RollupKey::kSourceLine ? "source" : "op_name"},
              {true, true, true, false}, {0, 0, 0, 90});
  for (const RollupRow& row : rows) {
    if (static_cast<int>(table.size()) == options.top) break;
    table.Add({HumanBytes(row.bytes), Percent(row.bytes, m.profile.peak_live_bytes),
               absl::StrCat(row.buffers), row.key.empty() ? "(none in the HLO metadata)" : row.key});
  }
  table.Render(style, out);
}

// Words of `text` in lines of at most `width` columns, each line indented.
void AppendWrapped(absl::string_view text, absl::string_view indent, int width, std::string* out) {
  const size_t limit = static_cast<size_t>(std::max(40, width)) - indent.size();
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > limit) {
      absl::StrAppend(out, indent, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(out, indent, line, "\n");
}

void AppendFindings(const std::vector<detect::Finding>& findings, absl::string_view title,
                    int width, const Style& style, std::string* out) {
  AppendHeading(style, absl::StrCat(title, " (", findings.size(), ")"), out);
  if (findings.empty()) {
    absl::StrAppend(out, "  ", style.Dim("none"), "\n");
    return;
  }
  int n = 0;
  for (const detect::Finding& f : findings) {
    const std::string tag = absl::StrCat("[", f.detector, "]");
    absl::StrAppend(out, absl::StrFormat("  %2d. ", ++n),
                    f.severity == detect::Severity::kError ? style.Red(tag) : style.Yellow(tag), " ",
                    f.summary.empty() ? HumanBytes(f.bytes) : f.summary);
    if (!f.source_file.empty()) absl::StrAppend(out, " at ", f.source_file, ":", f.source_line);
    out->append("\n");
    AppendWrapped(f.message, "      ", width, out);
    if (!f.suggestion.empty()) AppendWrapped(absl::StrCat("fix: ", f.suggestion), "      ", width, out);
  }
}

// A block chart of live bytes: `height` rows of eighth-blocks, the maximum
// labelled at the top, the peak marked under the axis.
void AppendTimeline(const ModuleReport& m, const WriteOptions& options, const Style& style,
                    std::string* out) {
  static const char* kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const std::vector<int64_t>& timeline = m.profile.timeline;
  if (timeline.empty()) return;
  const int64_t max = std::max<int64_t>(1, *std::max_element(timeline.begin(), timeline.end()));
  const std::string top_label = HumanBytes(max);
  const size_t label_width = std::max<size_t>(top_label.size(), 2);
  const size_t columns =
      static_cast<size_t>(std::max(10, options.width - static_cast<int>(label_width) - 6));
  // Long schedules: one column per bucket of steps; short ones: each step
  // drawn `stretch` columns wide.
  const size_t stretch = std::max<size_t>(1, columns / timeline.size());
  std::vector<int64_t> values;
  for (int64_t v : DownsampleMax(timeline, columns)) values.insert(values.end(), stretch, v);
  constexpr int kHeight = 4;
  AppendHeading(style,
                absl::StrCat("Live bytes over program order (", timeline.size(), " steps, peak ",
                             HumanBytes(m.profile.peak_live_bytes), " at step ", m.profile.peak_step,
                             ")"),
                out);
  for (int r = 0; r < kHeight; ++r) {
    std::string line;
    for (int64_t v : values) {
      const int level = static_cast<int>((static_cast<double>(v) * kHeight * 8 + max - 1) / max);
      line += kBlocks[std::clamp(level - (kHeight - 1 - r) * 8, 0, 8)];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    const std::string label = r == 0 ? top_label : r == kHeight - 1 ? "0B" : "";
    absl::StrAppend(out, "  ", std::string(label_width - label.size(), ' '), label, " ",
                    r == 0 ? "┤" : "│", style.Cyan(line), "\n");
  }
  absl::StrAppend(out, "  ", std::string(label_width + 1, ' '), "└");
  for (size_t c = 0; c < values.size(); ++c) out->append("─");
  out->append("\n");
  // The peak's column, and the step range under the axis.
  const size_t peak_step = static_cast<size_t>(std::max<int64_t>(0, m.profile.peak_step));
  const size_t peak_column = stretch > 1 ? peak_step * stretch + stretch / 2
                                         : peak_step * values.size() / timeline.size();
  std::string marks(values.size() + 1, ' ');
  marks.replace(std::min(peak_column, values.size() - 1), 1, "^");
  const std::string end_label = absl::StrCat("step ", timeline.size() - 1);
  std::string axis = absl::StrCat("step 0", std::string(values.size() > 6 + end_label.size()
                                                            ? values.size() - 6 - end_label.size()
                                                            : 1,
                                                        ' '),
                                  end_label);
  while (!marks.empty() && marks.back() == ' ') marks.pop_back();
  absl::StrAppend(out, "  ", std::string(label_width + 2, ' '), marks, " peak\n");
  absl::StrAppend(out, "  ", std::string(label_width + 2, ' '), style.Dim(axis), "\n");
}

void AppendNumbersDiff(const ModuleDiff& d, const Style& style, std::string* out) {
  Table table({"", "A", "B", "change", ""}, {false, true, true, true, true}, {});
  for (Metric metric : kMetrics) {
    const int64_t a = SideMetric(d.a, metric);
    const int64_t b = SideMetric(d.b, metric);
    table.Add({std::string(MetricName(metric)), HumanBytes(a), HumanBytes(b), SignedBytes(b - a),
               PercentChange(a, b)});
  }
  out->append("\n");
  table.Render(style, out);
}

void AppendChanges(const ModuleDiff& d, const WriteOptions& options, const Style& style,
                   std::string* out) {
  AppendHeading(style, absl::StrCat("Buffers by change in bytes (", d.changes.size(), " changed)"), out);
  Table table({"change", "A", "B", "status", "kind", "shape", "op_name", "source"},
              {true, true, true, false, false, false, false, false},
              {0, 0, 0, 0, 0, 2 * kShapeWidth + 7, kLabelWidth, 0});  // room for "(was ...)"
  for (const BufferChange& c : d.changes) {
    if (static_cast<int>(table.size()) == options.top) break;
    std::string status(ChangeKindName(c.change));
    if (c.at_peak_b) status += "*";
    table.Add({SignedBytes(c.delta()), HumanBytes(c.bytes_a), HumanBytes(c.bytes_b), status, c.kind,
               c.ShapeShown(), c.op_name, c.SourceShown()});
  }
  table.Render(style, out);
  if (d.changes.size() > table.size()) {
    absl::StrAppend(out, style.Dim(absl::StrCat("  ... ", d.changes.size() - table.size(),
                                                " more (", TopHint(options), " shows more)")),
                    "\n");
  }
  absl::StrAppend(out, style.Dim("  * live at B's peak"), "\n");
  if (!d.moved.empty()) {
    absl::StrAppend(out, "  ", d.moved.size(), " more moved to other lines with their bytes unchanged",
                    " (", d.moved.front().op_name, " at ", d.moved.front().SourceShown(),
                    d.moved.size() > 1 ? ", ..." : "", ")\n");
  }
}

}  // namespace

namespace {

// Which modules the text shows in full, in what order; the others are
// summarized. A dump's helper modules (HelperModules) become one line; of a
// program compiled more than once under one name (the last, smaller batch
// of an epoch), the largest is shown and the others named on one line.
struct Focus {
  std::vector<size_t> order;  // indices into report.modules
  std::vector<bool> helper;
  std::vector<bool> full;
};

Focus FocusOn(const Report& report, const WriteOptions& options) {
  Focus focus;
  const size_t n = report.modules.size();
  for (size_t k = 0; k < n; ++k) focus.order.push_back(k);
  if (options.largest_first) {
    std::stable_sort(focus.order.begin(), focus.order.end(), [&](size_t a, size_t b) {
      return ModuleSize(report.modules[a]) > ModuleSize(report.modules[b]);
    });
  }
  focus.helper = options.all_modules ? std::vector<bool>(n, false) : HelperModules(report);
  focus.full.assign(n, true);
  if (options.all_modules) return focus;
  std::set<std::string> shown;
  for (size_t k : focus.order) {
    const ModuleReport& m = report.modules[k];
    if (focus.helper[k]) {
      focus.full[k] = false;
    } else if (!shown.insert(m.name).second && !m.oom && !(m.device_fit && !m.device_fit->fits)) {
      focus.full[k] = false;
    }
  }
  return focus;
}

// One line per module before the modules themselves, when there are
// several: where to look first. The helper modules share one line.
void AppendModuleIndex(const Report& report, const Focus& focus, const WriteOptions& options,
                       const Style& style, std::string* out) {
  if (report.modules.size() < 2) return;
  absl::StrAppend(out, style.Bold(absl::StrCat(report.modules.size(), " modules")), "\n");
  Table table({"peak live", "total", "temp", "findings", "module", "target"},
              {true, true, true, true, false, false}, {0, 0, 0, 0, kLabelWidth, 0});
  std::vector<std::string> helper_names;
  int64_t helper_bytes = 0;
  size_t helper_findings = 0;
  for (size_t k : focus.order) {
    const ModuleReport& m = report.modules[k];
    if (focus.helper[k]) {
      helper_names.push_back(m.name);
      helper_bytes += ModuleSize(m);
      helper_findings += m.findings.size();
      continue;
    }
    const std::optional<MemoryNumbers>& n = m.computed ? m.computed : m.xla;
    table.Add({m.computed && m.computed->peak_live_bytes ? HumanBytes(*m.computed->peak_live_bytes) : "-",
               n ? HumanBytes(n->total_bytes) : "-", n ? HumanBytes(n->temp_bytes) : "-",
               absl::StrCat(m.findings.size()), m.name, m.target.empty() ? m.backend : m.target});
  }
  table.Render(style, out);
  if (!helper_names.empty()) {
    absl::StrAppend(out, "  + ", helper_names.size(), " small helper module",
                    helper_names.size() == 1 ? "" : "s", " (", CountedNames(helper_names, 4), "; ",
                    HumanBytes(helper_bytes), " peak in all",
                    helper_findings > 0 ? absl::StrCat(", ", helper_findings, " findings") : "",
                    "); ", AllHint(options), " shows them\n");
  }
  out->append("\n");
}

// The modules of one name not shown in full: "jit_train_step: 1 more
// compile (peak 5.31MiB); --all shows it".
void AppendRepeats(const Report& report, const Focus& focus, const std::string& name,
                   const WriteOptions& options, const Style& style, std::string* out) {
  std::vector<std::string> peaks;
  for (size_t k : focus.order) {
    const ModuleReport& m = report.modules[k];
    if (m.name != name || focus.full[k] || focus.helper[k]) continue;
    peaks.push_back(HumanBytes(ModuleSize(m)));
  }
  if (peaks.empty()) return;
  absl::StrAppend(out, "\n", style.Dim(absl::StrCat("module ", name, ": ", peaks.size(), " more compile",
                                                     peaks.size() == 1 ? "" : "s", " of this name (peak ",
                                                     absl::StrJoin(peaks, ", "), "); ", AllHint(options), " shows ",
                                                     peaks.size() == 1 ? "it" : "them")),
                  "\n");
}

}  // namespace

std::string WriteText(const Report& report, const WriteOptions& options) {
  const Style style{options.color};
  std::string out;
  for (const std::string& w : report.warnings) absl::StrAppend(&out, style.Yellow(w), "\n");
  const Focus focus = FocusOn(report, options);
  AppendModuleIndex(report, focus, options, style, &out);
  bool first = true;
  for (size_t k : focus.order) {
    const ModuleReport& m = report.modules[k];
    if (!focus.full[k]) continue;
    if (!first) out.append("\n");
    first = false;
    AppendModuleTitle(m, style, &out);
    if (!m.computed) {
      if (m.xla) {
        absl::StrAppend(&out, "  XLA's buffer assignment only (no HLO in the dump): total ",
                        HumanAndExact(m.xla->total_bytes), ", temp ", HumanBytes(m.xla->temp_bytes),
                        "\n");
      }
    } else {
      AppendSummary(m, style, &out);
      AppendMemorySpaces(m, style, &out);
      AppendOom(m, style, &out);
      AppendDeviceFit(m, style, &out);
      AppendPeakTable(m, options, style, &out);
      AppendRollup(m, RollupKey::kSourceLine, options, style, &out);
      AppendRollup(m, RollupKey::kOpName, options, style, &out);
      AppendTimeline(m, options, style, &out);
      AppendFindings(m.findings, "Findings", options.width, style, &out);
    }
    AppendRepeats(report, focus, m.name, options, style, &out);
  }
  return out;
}

namespace {

// A runtime error names one allocation that failed: which of the program's
// allocations has its size.
void AppendFailedAllocation(const ModuleReport& m, const Style& style, std::string* out) {
  const dump::XlaOomError& e = m.oom->error;
  if (dump::IsCompileTime(e.kind) || !e.needed_bytes) return;
  const std::vector<AllocationCandidate> candidates = FailedAllocationCandidates(m, e);
  AppendHeading(style, absl::StrCat("The allocation that failed (", HumanBytes(*e.needed_bytes), ")"), out);
  if (candidates.empty()) {
    absl::StrAppend(out, "  no allocation of the program has this size: the memory was taken by other "
                         "programs or arrays alive at the time (jax.live_arrays() lists them)\n");
    return;
  }
  for (const AllocationCandidate& c : candidates) {
    absl::StrAppend(out, "  ", HumanBytes(c.bytes), "  ", c.what);
    if (c.row != nullptr && !c.row->Source().empty()) absl::StrAppend(out, "  ", c.row->Source());
    out->append("\n");
  }
}

// What the peak is made of, by buffer kind, and the remedy for the kind
// that dominates: inputs are sharded or made smaller, temps are
// rematerialized or microbatched.
void AppendPeakAdvice(const ModuleReport& m, int width, std::string* out) {
  std::map<std::string, std::pair<int64_t, int>> by_kind;
  for (const BufferRow* row : TopAtPeak(m, std::numeric_limits<int>::max())) {
    std::pair<int64_t, int>& kind = by_kind[std::string(row->kind)];
    kind.first += row->bytes;
    ++kind.second;
  }
  if (by_kind.empty()) return;
  std::vector<std::pair<std::string, std::pair<int64_t, int>>> kinds(by_kind.begin(), by_kind.end());
  std::sort(kinds.begin(), kinds.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::vector<std::string> parts;
  for (const auto& [kind, sum] : kinds) {
    parts.push_back(absl::StrCat(kind, "s ", HumanBytes(sum.first), " (", sum.second, ")"));
  }
  absl::StrAppend(out, "  the peak holds ", absl::StrJoin(parts, ", "), "\n");
  const std::string& top = kinds.front().first;
  std::string advice;
  if (top == "parameter") {
    advice = "the program's inputs are most of the peak: shard them over more devices "
             "(NamedSharding on a Mesh, FSDP for parameters and optimizer state), keep them in a "
             "smaller dtype (bf16 parameters, bf16 or 8-bit optimizer state)";
  } else if (top == "temp") {
    advice = "intermediate values are most of the peak: rematerialize the lines above "
             "(jax.checkpoint with a checkpoint_policies policy), scan over layers instead of "
             "unrolling them, split the batch into microbatches, or shard the activations";
  } else if (top == "output") {
    advice = "the program's results are most of the peak: donate the inputs they replace "
             "(donate_argnums) so XLA writes the results over them, or return less";
  }
  if (!advice.empty()) AppendWrapped(absl::StrCat("try: ", advice), "  ", width, out);
}

// The findings as fixes: those that lower the peak first, with how much of
// the shortfall they cover together.
void AppendRankedFixes(const ModuleReport& m, int width, const Style& style, std::string* out) {
  const std::vector<RankedFix> fixes = RankFixes(m);
  const int64_t shortfall = m.device_fit && !m.device_fit->fits ? m.device_fit->shortfall : 0;
  AppendHeading(style, absl::StrCat("Fixes, ranked by what they free at the peak (", fixes.size(), ")"),
                out);
  if (shortfall > 0) {
    absl::StrAppend(out, "  the program needs ", HumanAndExact(shortfall), " less to fit\n");
  }
  if (fixes.empty()) {
    absl::StrAppend(out, "  no detector found waste: the peak itself must come down\n");
    AppendPeakAdvice(m, width, out);
    return;
  }
  int n = 0;
  bool covered_said = false;
  for (const RankedFix& fix : fixes) {
    const detect::Finding& f = *fix.finding;
    absl::StrAppend(out, absl::StrFormat("  %2d. ", ++n), style.Yellow(absl::StrCat("[", f.detector, "]")),
                    " ", f.summary.empty() ? HumanBytes(f.bytes) : f.summary,
                    fix.at_peak ? " at the peak" : " (not live at the peak)");
    if (!f.source_file.empty()) absl::StrAppend(out, " at ", f.source_file, ":", f.source_line);
    out->append("\n");
    AppendWrapped(f.message, "      ", width, out);
    if (!f.suggestion.empty()) AppendWrapped(absl::StrCat("fix: ", f.suggestion), "      ", width, out);
    if (shortfall > 0 && fix.at_peak && !covered_said && fix.cumulative_bytes >= shortfall) {
      absl::StrAppend(out, "      ", style.Green(absl::StrCat("fixes 1-", n, " free up to ",
                                                            HumanBytes(fix.cumulative_bytes),
                                                            ", enough to fit")),
                      "\n");
      covered_said = true;
    }
  }
  if (shortfall > 0 && !covered_said) {
    const int64_t total = fixes.empty() ? 0 : fixes.back().cumulative_bytes;
    absl::StrAppend(out, "  ", style.Red(absl::StrCat("together they free at most ", HumanBytes(total),
                                                      " at the peak, short of the ",
                                                      HumanBytes(shortfall), " needed")),
                    "\n");
    AppendPeakAdvice(m, width, out);
  }
}

// An error with no module to tie it to: its own figures, and what to do.
void AppendUnmatched(const dump::XlaOomError& e, bool have_dump, const Report& report,
                     const Style& style, std::string* out) {
  OomExplanation alone;
  alone.error = e;
  AppendHeading(style, absl::StrCat("Out of memory: ", OomTitle(alone)), out);
  absl::StrAppend(out, "  ", style.Dim(e.message), "\n");
  for (const std::string& line : OomLines(alone)) absl::StrAppend(out, "  ", line, "\n");
  AppendListing(e, style, out);
  if (have_dump && e.module_name.empty() && e.needed_bytes && !dump::IsCompileTime(e.kind)) {
    absl::StrAppend(out, "  no module of the dump (", report.modules.size(),
                    ") has a temp allocation or a total of ", HumanAndExact(*e.needed_bytes),
                    ": the allocation is one buffer of a program, or the dump is not of the run that "
                    "failed (`hlomem report` lists the modules' buffers)\n");
    return;
  }
  if (have_dump) {
    std::vector<std::string> names;
    for (const ModuleReport& m : report.modules) names.push_back(m.name);
    absl::StrAppend(out, "  no module of the dump ",
                    e.module_name.empty() ? "is the one the error names"
                                          : absl::StrCat("is named ", e.module_name),
                    "; it has: ", absl::StrJoin(names, ", "), "\n");
    return;
  }
  absl::StrAppend(
      out,
      "  to see the buffers and lines behind it, give the dump of the program that failed:\n"
      "    hlomem capture -- python train.py      (adds XLA's dump flags, explains the error)\n"
      "    XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" python train.py; hlomem explain ",
      "ERROR DIR\n",
      dump::IsCompileTime(e.kind)
          ? "  a TPU program compiles without a TPU: jax.experimental.topologies.get_topology_desc(...)"
            " gives the devices, and the same error and dump\n"
          : "");
}

}  // namespace

std::string WriteExplainText(const Report& report, const std::vector<dump::XlaOomError>& unmatched,
                             bool have_dump, const WriteOptions& options) {
  const Style style{options.color};
  std::string out;
  bool first = true;
  auto separate = [&] {
    if (!first) out.append("\n");
    first = false;
  };
  for (const ModuleReport& m : report.modules) {
    if (!m.oom) continue;
    separate();
    AppendModuleTitle(m, style, &out);
    AppendOom(m, style, &out);
    AppendFailedAllocation(m, style, &out);
    if (m.computed) {
      AppendPeakTable(m, options, style, &out);
      AppendRollup(m, RollupKey::kSourceLine, options, style, &out);
    }
    AppendRankedFixes(m, options.width, style, &out);
  }
  for (const dump::XlaOomError& e : unmatched) {
    separate();
    AppendUnmatched(e, have_dump, report, style, &out);
  }
  return out;
}

std::string WriteDiffText(const DiffReport& diff, const WriteOptions& options) {
  const Style style{options.color};
  std::string out;
  bool first = true;
  for (const ModuleDiff& d : diff.modules) {
    if (!first) out.append("\n");
    first = false;
    std::string title = absl::StrCat("module ", d.name);
    if (d.a && d.b && d.a->name != d.b->name) title = absl::StrCat("module ", d.a->name, " -> ", d.b->name);
    absl::StrAppend(&out, style.Bold(title),
                    d.a == nullptr   ? "  (only in B)"
                    : d.b == nullptr ? "  (only in A)"
                                     : "",
                    "\n");
    if (d.paired_by == PairBasis::kName && !d.a->signature.empty() && !d.b->signature.empty()) {
      absl::StrAppend(&out, "  paired by name: ", SignatureChange(d.a->signature, d.b->signature), "\n");
    }
    if (d.a && (!diff.a_label.empty() || !d.a->files.empty())) {
      absl::StrAppend(&out, "  A: ", style.Dim(diff.a_label.empty() ? d.a->files.front() : diff.a_label), "\n");
    }
    if (d.b && (!diff.b_label.empty() || !d.b->files.empty())) {
      absl::StrAppend(&out, "  B: ", style.Dim(diff.b_label.empty() ? d.b->files.front() : diff.b_label), "\n");
    }
    AppendNumbersDiff(d, style, &out);
    AppendChanges(d, options, style, &out);
    AppendFindings(d.new_findings, "New findings", options.width, style, &out);
    AppendFindings(d.resolved_findings, "Resolved findings", options.width, style, &out);
  }
  return out;
}

}  // namespace hlomem::report
