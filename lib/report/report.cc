#include "lib/report/report.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"

namespace hlomem::report {
namespace {

// Indexed by Metric: how the text reports and the JSON name each one.
struct MetricSpelling {
  absl::string_view name;
  absl::string_view json_key;
};
constexpr MetricSpelling kMetricSpellings[] = {
    {"total", "total_bytes"},     {"arguments", "argument_bytes"}, {"outputs", "output_bytes"},
    {"aliased", "alias_bytes"},   {"temp", "temp_bytes"},          {"peak live", "peak_live_bytes"},
};
static_assert(std::size(kMetricSpellings) == std::size(kMetrics), "a metric without spellings");

}  // namespace

absl::string_view MetricName(Metric metric) {
  return kMetricSpellings[static_cast<size_t>(metric)].name;
}

absl::string_view MetricJsonKey(Metric metric) {
  return kMetricSpellings[static_cast<size_t>(metric)].json_key;
}

int64_t MetricValue(const MemoryNumbers& numbers, Metric metric) {
  switch (metric) {
    case Metric::kTotal: return numbers.total_bytes;
    case Metric::kArguments: return numbers.argument_bytes;
    case Metric::kOutputs: return numbers.output_bytes;
    case Metric::kAliased: return numbers.alias_bytes;
    case Metric::kTemp: return numbers.temp_bytes;
    case Metric::kPeakLive: return numbers.peak_live_bytes.value_or(0);
  }
  return 0;
}

namespace {

std::string FileLine(absl::string_view file, int64_t line) {
  if (file.empty()) return "";
  return line > 0 ? absl::StrCat(file, ":", line) : std::string(file);
}

}  // namespace

absl::string_view StringPool::Intern(absl::string_view text) {
  if (const auto it = interned_.find(text); it != interned_.end()) return *it;
  const absl::string_view kept = strings_.emplace_back(text);
  interned_.insert(kept);
  return kept;
}

std::string BufferRow::Source() const { return FileLine(source_file, source_line); }

std::string PeakInstruction::Source() const { return FileLine(source_file, source_line); }

std::string PeakInstruction::Describe() const {
  std::vector<std::string> parts = {opcode};
  if (!op_name.empty()) parts.push_back(op_name);
  if (!source_file.empty()) parts.push_back(Source());
  return absl::StrCat(instruction, " (", absl::StrJoin(parts, ", "), ")");
}

std::string HumanAndExact(int64_t bytes) {
  return absl::StrCat(HumanBytes(bytes), " (", bytes, " B)");
}

std::string PercentOf(int64_t part, int64_t whole) {
  if (whole <= 0) return "";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string SignedBytes(int64_t bytes) {
  return bytes > 0 ? absl::StrCat("+", HumanBytes(bytes)) : HumanBytes(bytes);
}

std::string PercentChange(int64_t a, int64_t b) {
  if (a <= 0) return "";
  const double percent = 100.0 * static_cast<double>(b - a) / static_cast<double>(a);
  if (percent > 999.9) return ">+999%";
  return absl::StrFormat("%+.1f%%", percent);
}

std::string StripLayout(absl::string_view shape) {
  // A layout is the {...} right after a ']'; tuple braces '(' ')' stay.
  std::string out;
  out.reserve(shape.size());
  int skip_depth = 0;
  char previous = 0;
  for (char c : shape) {
    if (skip_depth > 0) {
      if (c == '{') ++skip_depth;
      if (c == '}') --skip_depth;
      continue;
    }
    if (c == '{' && previous == ']') {
      skip_depth = 1;
      continue;
    }
    out.push_back(c);
    previous = c;
  }
  return out;
}

std::vector<RollupRow> RollupAtPeak(const ModuleReport& module, RollupKey key) {
  // A report read from a bounded JSON has part of the live set in its rows,
  // and the rollups of all of it.
  const std::vector<RollupRow>& read = key == RollupKey::kSourceLine ? module.peak_by_line : module.peak_by_op;
  if (!read.empty()) return read;
  std::vector<const BufferRow*> live;
  live.reserve(module.profile.live_at_peak.size());
  for (size_t k : module.profile.live_at_peak) {
    if (k < module.rows.size()) live.push_back(&module.rows[k]);
  }
  return Rollup(live, key);
}

std::vector<RollupRow> Rollup(const std::vector<const BufferRow*>& rows, RollupKey key) {
  std::map<std::string, RollupRow> groups;
  for (const BufferRow* row : rows) {
    const std::string name =
        key == RollupKey::kSourceLine ? row->Source() : std::string(row->op_name);
    RollupRow& group = groups[name];
    group.key = name;
    group.bytes += row->bytes;
    ++group.buffers;
  }
  std::vector<RollupRow> out;
  out.reserve(groups.size());
  for (auto& [name, group] : groups) out.push_back(std::move(group));
  std::stable_sort(out.begin(), out.end(),
                   [](const RollupRow& a, const RollupRow& b) { return a.bytes > b.bytes; });
  return out;
}

std::vector<size_t> KeptRows(size_t count, const std::vector<size_t>& live_at_peak, size_t limit,
                             absl::FunctionRef<int64_t(size_t)> bytes_of) {
  std::vector<size_t> kept;
  if (limit == 0 || count <= limit) {
    kept.resize(count);
    for (size_t k = 0; k < count; ++k) kept[k] = k;
    return kept;
  }
  std::vector<bool> keep(count, false);
  auto keep_largest = [&](std::vector<size_t> candidates) {
    const size_t n = std::min(limit, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + n, candidates.end(), [&](size_t a, size_t b) {
      const int64_t x = bytes_of(a), y = bytes_of(b);
      return x != y ? x > y : a < b;
    });
    for (size_t k = 0; k < n; ++k) keep[candidates[k]] = true;
  };
  std::vector<size_t> live;
  for (size_t k : live_at_peak) {
    if (k < count) live.push_back(k);
  }
  keep_largest(std::move(live));
  std::vector<size_t> all(count);
  for (size_t k = 0; k < count; ++k) all[k] = k;
  keep_largest(std::move(all));
  for (size_t k = 0; k < count; ++k) {
    if (keep[k]) kept.push_back(k);
  }
  return kept;
}

std::vector<int64_t> DownsampleMax(const std::vector<int64_t>& values, size_t columns) {
  if (columns == 0 || values.size() <= columns) return values;
  std::vector<int64_t> out(columns, 0);
  for (size_t c = 0; c < columns; ++c) {
    const size_t begin = c * values.size() / columns;
    const size_t end = std::max(begin + 1, (c + 1) * values.size() / columns);
    out[c] = *std::max_element(values.begin() + begin, values.begin() + end);
  }
  return out;
}

std::vector<size_t> DownsampleArgMax(const std::vector<int64_t>& values, size_t columns) {
  std::vector<size_t> out;
  if (columns == 0 || values.size() <= columns) {
    out.resize(values.size());
    for (size_t k = 0; k < values.size(); ++k) out[k] = k;
    return out;
  }
  out.resize(columns);
  for (size_t c = 0; c < columns; ++c) {
    const size_t begin = c * values.size() / columns;
    const size_t end = std::max(begin + 1, (c + 1) * values.size() / columns);
    out[c] = static_cast<size_t>(std::max_element(values.begin() + begin, values.begin() + end) -
                                 values.begin());
  }
  return out;
}

std::vector<LineBand> TimelineByLine(const ModuleReport& module, size_t top) {
  std::vector<LineBand> bands;
  const size_t steps = module.profile.timeline.size();
  for (const RollupRow& row : RollupAtPeak(module, RollupKey::kSourceLine)) {
    if (bands.size() == top) break;
    bands.push_back({row.key, row.bytes, {}});
  }
  std::map<std::string, size_t> band_of;
  for (size_t b = 0; b < bands.size(); ++b) band_of[bands[b].key] = b;
  // The timeline counts device and host memory, not TPU's on-chip spaces.
  std::set<std::string, std::less<>> counted;
  for (const MemorySpaceTotals& space : module.memory_spaces) {
    if (space.is_device || space.is_host) counted.insert(space.name);
  }
  // Difference arrays: each buffer adds its bytes over [start, end].
  std::vector<std::vector<int64_t>> delta(bands.size(), std::vector<int64_t>(steps + 1, 0));
  for (const BufferRow& r : module.rows) {
    if (r.start < 0 || r.kind == "thread-local") continue;
    if (!r.memory_space.empty() && !counted.empty() && counted.count(r.memory_space) == 0) continue;
    auto it = band_of.find(r.Source());
    if (it == band_of.end()) continue;
    const size_t start = std::min(static_cast<size_t>(r.start), steps);
    const size_t end = std::min(static_cast<size_t>(r.end) + 1, steps);
    delta[it->second][start] += r.bytes;
    delta[it->second][end] -= r.bytes;
  }
  for (size_t b = 0; b < bands.size(); ++b) {
    bands[b].live.resize(steps);
    int64_t running = 0;
    for (size_t s = 0; s < steps; ++s) bands[b].live[s] = running += delta[b][s];
  }
  return bands;
}

std::vector<bool> AtPeakMask(const ModuleReport& module) {
  std::vector<bool> at_peak(module.rows.size(), false);
  for (size_t k : module.profile.live_at_peak) {
    if (k < at_peak.size()) at_peak[k] = true;
  }
  return at_peak;
}

std::vector<const StackFrameRow*> StackOf(const ModuleReport& module, int64_t stack_frame) {
  std::vector<const StackFrameRow*> stack;
  const int64_t count = static_cast<int64_t>(module.stack_frames.size());
  for (int64_t id = stack_frame; id > 0 && id <= count;) {
    const StackFrameRow& frame = module.stack_frames[static_cast<size_t>(id - 1)];
    stack.push_back(&frame);
    if (frame.parent >= id) break;  // parents come first: no cycles
    id = frame.parent;
  }
  return stack;
}

std::vector<const BufferRow*> TopAtPeak(const ModuleReport& module, int top) {
  std::vector<const BufferRow*> rows;
  for (size_t k : module.profile.live_at_peak) {
    if (static_cast<int>(rows.size()) == top) break;
    if (k < module.rows.size()) rows.push_back(&module.rows[k]);
  }
  return rows;
}

std::vector<PeakGroup> GroupedAtPeak(const ModuleReport& module, int top) {
  using Key = std::tuple<std::string, std::string, int64_t, std::string, std::string>;
  std::map<Key, size_t> group_of;
  std::vector<PeakGroup> groups;
  for (const BufferRow* row : TopAtPeak(module, std::numeric_limits<int>::max())) {
    Key key{row->kind, StripLayout(row->shape), row->bytes, row->Label(), row->Source()};
    auto [it, added] = group_of.emplace(std::move(key), groups.size());
    if (added) groups.push_back({row, 0});
    ++groups[it->second].count;
  }
  // Largest first by the group's bytes; the rows' order among equals.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const PeakGroup& a, const PeakGroup& b) { return a.bytes() > b.bytes(); });
  if (static_cast<int>(groups.size()) > top) groups.resize(static_cast<size_t>(std::max(top, 0)));
  return groups;
}

size_t RowsIn(const std::vector<PeakGroup>& groups) {
  size_t rows = 0;
  for (const PeakGroup& g : groups) rows += static_cast<size_t>(g.count);
  return rows;
}

bool HasSeveralMemorySpaces(const ModuleReport& module) {
  return module.memory_spaces.size() > 1 ||
         (module.memory_spaces.size() == 1 && module.memory_spaces[0].name != "device");
}

std::string MemorySpaceRole(const MemorySpaceTotals& space) {
  return space.is_device ? "device memory" : space.is_host ? "host" : "on chip";
}

std::string MemorySpaceVerdict(const MemorySpaceTotals& space) {
  if (!space.computed_bytes || !space.xla_bytes) return "";
  const int64_t delta = *space.computed_bytes - *space.xla_bytes;
  return delta == 0 ? "matches" : absl::StrCat("differs by ", SignedBytes(delta));
}

std::string OomTitle(const OomExplanation& oom) {
  const dump::XlaOomError& e = oom.error;
  return absl::StrCat(e.code.empty() ? "" : absl::StrCat(e.code, " "), dump::XlaOomKindName(e.kind),
                      e.memory.empty() ? "" : absl::StrCat(" on ", e.memory));
}

std::vector<std::string> OomLines(const OomExplanation& oom) {
  const dump::XlaOomError& e = oom.error;
  std::vector<std::string> lines;
  const std::string whose = oom.device_bytes_source == "xla" ? "XLA's buffer assignment" : "hlomem";
  if (e.kind == dump::XlaOomError::Kind::kCompileTimeAllocation) {
    if (e.needed_bytes && e.available_bytes) {
      lines.push_back(absl::StrCat("one allocation of ", HumanAndExact(*e.needed_bytes), " is larger than the ",
                                   HumanBytes(*e.available_bytes), " of ", e.memory.empty() ? "its memory" : e.memory,
                                   ": XLA:TPU refused to compile"));
    }
    if (absl::StrContains(e.message, "scoped memory")) {
      lines.push_back("it is a kernel's scoped memory: give the kernel (Pallas, Mosaic) smaller blocks");
    }
    return lines;
  }
  if (e.kind == dump::XlaOomError::Kind::kCompileTimeHbmOom) {
    if (e.needed_bytes && e.available_bytes) {
      lines.push_back(absl::StrCat(
          "needed ", HumanBytes(*e.needed_bytes), ", available ", HumanBytes(*e.available_bytes),
          ": over by about ", HumanBytes(std::max<int64_t>(0, *e.needed_bytes - *e.available_bytes)),
          " (the message rounds to ", HumanBytes(e.rounding_bytes), ")"));
    }
    if (oom.device_bytes) {
      lines.push_back(absl::StrCat("the program's HBM allocations: ", HumanAndExact(*oom.device_bytes),
                                   " by ", whose, "; ",
                                   oom.agrees ? "this is the error's figure" : "not the error's figure"));
    }
    if (oom.device_bytes) lines.push_back("what makes it: the buffers live at the peak and the findings");
    return lines;
  }
  if (e.needed_bytes) {
    lines.push_back(absl::StrCat(
        "one allocation of ", HumanAndExact(*e.needed_bytes), " failed",
        e.available_bytes ? absl::StrCat(" with ", HumanBytes(*e.available_bytes), " free") : ""));
  }
  if (oom.device_bytes) {
    lines.push_back(absl::StrCat("the program's device memory: ", HumanAndExact(*oom.device_bytes),
                                 " by ", whose));
  }
  if (!oom.matched_by.empty()) {
    lines.push_back(absl::StrCat("the error names no module: this one is taken because its ",
                                 oom.matched_by == "temp" ? "temp allocation" : "total",
                                 " is the error's size"));
  }
  if (!oom.also_matching.empty()) {
    lines.push_back(absl::StrCat(
        "the size matches ", oom.also_matching.size(), " other module",
        oom.also_matching.size() == 1 ? "" : "s", " too, so the error may be ",
        oom.also_matching.size() == 1 ? "it" : "any of them", ": ", absl::StrJoin(oom.also_matching, ", ")));
  }
  if (e.allocator_limit) {
    const dump::AllocatorLimit& limit = *e.allocator_limit;
    lines.push_back(absl::StrCat("the allocator's limit: ", HumanAndExact(limit.bytes), " from ",
                                 dump::DescribeAllocatorLimit(limit),
                                 limit.rounding_bytes > 0
                                     ? absl::StrCat(", rounded to ", HumanBytes(limit.rounding_bytes))
                                     : ""));
    // XLA allocates the whole program at once: its total against the limit.
    std::optional<int64_t> program = oom.device_bytes;
    std::string what = "the program's device memory";
    int64_t rounding = limit.rounding_bytes;
    if (!program && e.listing) {
      program = e.listing->Stat("total");
      what = "the listing's total allocation";
      // The listing prints two decimals of its unit ("59.39GiB").
      int64_t unit = 1;
      while (program && unit <= *program / 1024) unit *= 1024;
      rounding += (unit + 199) / 200;
    }
    if (program) {
      const int64_t over = *program - limit.bytes;
      if (std::abs(over) <= rounding) {
        lines.push_back(absl::StrCat(what, " and the limit agree within their rounding (",
                                     HumanBytes(rounding), "): the exact figures decide, XLA's "
                                     "buffer assignment and the log's \"XLA backend allocating ... "
                                     "bytes\" line"));
      } else if (over > 0) {
        lines.push_back(absl::StrCat(what, " is over it by ", HumanAndExact(over),
                                     ": the program cannot run with this limit"));
      } else {
        lines.push_back(absl::StrCat(what, " is within it (", HumanBytes(-over),
                                     " to spare): other buffers held at the time, or fragmentation, "
                                     "left too little"));
      }
    } else if (e.needed_bytes && *e.needed_bytes > limit.bytes + limit.rounding_bytes + e.rounding_bytes) {
      lines.push_back(absl::StrCat("the failed allocation alone is over the limit by ",
                                   HumanAndExact(*e.needed_bytes - limit.bytes)));
    }
  }
  return lines;
}

int64_t ModuleSize(const ModuleReport& module) {
  if (module.computed && module.computed->peak_live_bytes) return *module.computed->peak_live_bytes;
  if (module.xla) return module.xla->total_bytes;
  return module.computed ? module.computed->total_bytes : 0;
}

void SortModulesLargestFirst(Report* report) {
  std::stable_sort(report->modules.begin(), report->modules.end(),
                   [](const ModuleReport& a, const ModuleReport& b) { return ModuleSize(a) > ModuleSize(b); });
}

std::vector<bool> HelperModules(const Report& report) {
  std::vector<bool> helper(report.modules.size(), false);
  if (report.modules.size() < 2) return helper;
  bool any_other = false;
  for (size_t k = 0; k < report.modules.size(); ++k) {
    const ModuleReport& m = report.modules[k];
    const bool small = m.instruction_count > 0 && m.instruction_count < kHelperMaxInstructions;
    const bool must_show = m.oom.has_value() || (m.device_fit && !m.device_fit->fits);
    helper[k] = !must_show && (absl::StartsWith(m.name, "jit__") || small);
    any_other = any_other || !helper[k];
  }
  if (!any_other) helper.assign(helper.size(), false);
  return helper;
}

std::string CountedNames(const std::vector<std::string>& names, size_t shown) {
  std::map<std::string, int> counts;
  for (const std::string& name : names) ++counts[name];
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [name, count] : sorted) {
    if (parts.size() == shown) {
      parts.push_back("...");
      break;
    }
    parts.push_back(count > 1 ? absl::StrCat(name, " x", count) : name);
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<RankedFix> RankFixes(const ModuleReport& module) {
  std::set<std::string> live_at_peak;
  for (const BufferRow* row : TopAtPeak(module, std::numeric_limits<int>::max())) {
    live_at_peak.insert(row->instruction);
  }
  std::vector<RankedFix> fixes;
  for (const detect::Finding& f : module.findings) {
    RankedFix fix;
    fix.finding = &f;
    fix.at_peak = std::any_of(f.instructions.begin(), f.instructions.end(),
                              [&](const std::string& name) { return live_at_peak.count(name) > 0; });
    fixes.push_back(fix);
  }
  std::stable_sort(fixes.begin(), fixes.end(), [](const RankedFix& a, const RankedFix& b) {
    if (a.at_peak != b.at_peak) return a.at_peak;
    return a.finding->bytes > b.finding->bytes;
  });
  int64_t sum = 0;
  for (RankedFix& fix : fixes) {
    if (fix.at_peak) sum += fix.finding->bytes;
    fix.cumulative_bytes = sum;
  }
  return fixes;
}

std::vector<AllocationCandidate> FailedAllocationCandidates(const ModuleReport& module,
                                                            const dump::XlaOomError& error) {
  std::vector<AllocationCandidate> out;
  if (!error.needed_bytes || dump::IsCompileTime(error.kind)) return out;
  const int64_t needed = *error.needed_bytes;
  auto near = [&](int64_t bytes) { return std::abs(bytes - needed) <= error.rounding_bytes; };
  const std::optional<MemoryNumbers>& numbers = module.xla ? module.xla : module.computed;
  if (numbers && numbers->temp_bytes > 0 && near(numbers->temp_bytes)) {
    out.push_back({"the temp allocation (every temp buffer of the program, allocated at once)",
                   numbers->temp_bytes, nullptr});
  } else if (numbers && numbers->total_bytes > 0 && near(numbers->total_bytes)) {
    out.push_back({"the program's whole device memory (its arguments, outputs and temp together)",
                   numbers->total_bytes, nullptr});
  }
  for (const BufferRow& row : module.rows) {
    if (row.kind == "temp" || row.kind == "thread-local" || !near(row.bytes)) continue;
    out.push_back({absl::StrCat(row.kind, " ", row.Label()), row.bytes, &row});
  }
  return out;
}

std::string DeviceFitName(const DeviceFit& fit) {
  return fit.device.empty() ? absl::StrCat("a ", HumanBytes(fit.capacity), " device") : fit.device;
}

std::string DeviceFitBudget(const DeviceFit& fit) {
  std::string usable;
  if (!fit.usable_from_log.empty()) {
    // The log's limit decided, or (rounded) confirmed the preset's figure.
    const bool confirmed = fit.preset_usable && *fit.preset_usable == fit.usable;
    const std::string preset =
        fit.device.empty() ? "--device-memory" : absl::StrCat("the ", fit.device, " preset");
    usable = confirmed ? absl::StrCat(" from ", preset, ", which ", fit.usable_from_log, " confirms")
                       : absl::StrCat(" from ", fit.usable_from_log);
    if (fit.preset_usable && !confirmed) {
      absl::StrAppend(&usable, ", not ", preset, "'s ", HumanAndExact(*fit.preset_usable));
    }
  } else if (!fit.usable_source.empty()) {
    usable = absl::StrCat(" (", fit.usable_source, " of the ", HumanBytes(fit.capacity), " device)");
  } else if (!fit.device.empty()) {
    usable = absl::StrFormat(" from the %s preset (%.0f%% of %s, %s)", fit.device, fit.fraction * 100,
                             HumanBytes(fit.capacity), fit.capacity_estimated ? "estimated" : "measured");
  } else {
    usable = absl::StrFormat(" (%.0f%% of %s)", fit.fraction * 100, HumanBytes(fit.capacity));
  }
  return absl::StrCat("needs ", HumanAndExact(fit.needed),
                      fit.needed_source == "xla" ? " by XLA's buffer assignment" : "", ", usable ",
                      HumanAndExact(fit.usable), usable);
}

std::string DeviceFitSource(const DeviceFit& fit) {
  if (fit.capacity_source.empty()) return "";
  return absl::StrCat(fit.device, ": ", HumanAndExact(fit.capacity), ", ", fit.capacity_source);
}

std::string UnreadableError(const Report& report, absl::string_view skip_hint) {
  if (report.unreadable.empty()) return "";
  std::string out;
  for (const dump::UnreadableModule& u : report.unreadable) absl::StrAppend(&out, u.error, "\n");
  const size_t n = report.unreadable.size();
  absl::StrAppend(&out, "error: ", n, n == 1 ? " module" : " modules",
                  " of the dump could not be read (above); no result without ", n == 1 ? "it" : "them",
                  ". Fix or remove ", n == 1 ? report.unreadable[0].path : std::string("them"),
                  ", or pass ", skip_hint, " to go on with the other ", report.modules.size());
  return out;
}

void WarnOfUnreadable(Report* report, absl::string_view skip_hint) {
  for (const dump::UnreadableModule& u : report->unreadable) {
    report->warnings.push_back(absl::StrCat(u.path, ": warning: module skipped (", skip_hint, "): ",
                                            u.error.substr(0, u.error.find('\n'))));
  }
}

}  // namespace hlomem::report
