#include "lib/report/check.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/base/bytes.h"
#include "lib/report/diff.h"
#include "lib/report/pairing.h"

namespace hlomem::report {
namespace {

Contributor FromRow(const BufferRow& row, int64_t bytes) {
  return {bytes, std::string(row.Label()), StripLayout(row.shape), std::string(row.source_file),
          row.source_line};
}

// The `count` largest rows among `indices`, largest first, ties in the
// order given (only the first few are sorted: a module has 10^5 rows).
std::vector<Contributor> LargestRows(const ModuleReport& m, std::vector<size_t> indices, int count) {
  std::vector<std::pair<size_t, size_t>> ranked;  // (position in indices, row)
  ranked.reserve(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) ranked.emplace_back(k, indices[k]);
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(std::max(count, 0)));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
                    [&](const auto& x, const auto& y) {
                      const int64_t bx = m.rows[x.second].bytes, by = m.rows[y.second].bytes;
                      return bx != by ? bx > by : x.first < y.first;
                    });
  std::vector<Contributor> out;
  for (size_t k = 0; k < keep; ++k) {
    const BufferRow& row = m.rows[ranked[k].second];
    out.push_back(FromRow(row, row.bytes));
  }
  return out;
}

std::vector<Contributor> ContributorsTo(const ModuleReport& m, Metric metric, int count) {
  std::vector<size_t> indices;
  if (metric == Metric::kPeakLive) {
    for (size_t k : m.profile.live_at_peak) {
      if (k < m.rows.size()) indices.push_back(k);
    }
  } else {
    for (size_t k = 0; k < m.rows.size(); ++k) {
      if (metric != Metric::kTemp || m.rows[k].kind == "temp") indices.push_back(k);
    }
  }
  return LargestRows(m, std::move(indices), count);
}

std::vector<Contributor> GrowthContributors(const ModuleDiff& diff, int count) {
  std::vector<Contributor> out;
  for (const BufferChange& c : diff.changes) {
    if (static_cast<int>(out.size()) == count) break;
    if (c.delta() <= 0) continue;
    Contributor x{c.delta(), c.op_name, c.ShapeShown(), "", 0};
    // c.source is "file:line"; split it back for annotations.
    const size_t colon = c.source.rfind(':');
    int64_t line = 0;
    if (colon != std::string::npos && absl::SimpleAtoi(c.source.substr(colon + 1), &line)) {
      x.source_file = c.source.substr(0, colon);
      x.source_line = line;
    } else {
      x.source_file = c.source;
    }
    out.push_back(std::move(x));
  }
  return out;
}

void PointAtTopContributor(Violation* v) {
  for (const Contributor& c : v->contributors) {
    if (!c.source_file.empty()) {
      v->source_file = c.source_file;
      v->source_line = c.source_line;
      return;
    }
  }
}

absl::string_view MetricRule(Metric metric) {
  switch (metric) {
    case Metric::kTotal: return "total";
    case Metric::kTemp: return "temp";
    case Metric::kPeakLive: return "peak";
    default: return "";
  }
}

void CheckBudget(const ModuleReport& m, Metric metric, const std::optional<int64_t>& limit,
                 const CheckOptions& options, CheckResult* result) {
  if (!limit) return;
  // XLA's own buffer assignment decides where the dump has it; the peak of
  // live bytes is hlomem's alone.
  const bool by_xla = m.xla.has_value() && metric != Metric::kPeakLive;
  const int64_t value = MetricValue(by_xla ? *m.xla : *m.computed, metric);
  const std::string flag = options.python_names ? absl::StrCat("max_", MetricRule(metric))
                                                : absl::StrCat("--max-", MetricRule(metric));
  const absl::string_view whose = by_xla ? " (XLA's)" : "";
  if (value <= *limit) {
    result->passes.push_back(absl::StrCat(m.name, ": ", MetricName(metric), " ", HumanBytes(value),
                                          whose, " within ", flag, " ", HumanBytes(*limit)));
    return;
  }
  Violation v;
  v.module = m.name;
  v.rule = absl::StrCat("max-", MetricRule(metric));
  v.value = value;
  v.limit = *limit;
  v.message = absl::StrCat(m.name, ": ", MetricName(metric), " ", HumanAndExact(value), whose,
                           " exceeds ", flag,
                           " ", HumanAndExact(*limit), " by ", HumanBytes(value - *limit));
  v.contributors = ContributorsTo(m, metric, options.contributors);
  PointAtTopContributor(&v);
  result->violations.push_back(std::move(v));
}

void CheckBaseline(const Report& report, const ModuleReport& m, const ModulePair& pair,
                   const CheckOptions& options, CheckResult* result) {
  const ModuleReport* base = pair.a;
  if (base == nullptr || !base->computed) {
    result->notes.push_back(absl::StrCat(m.name, ": not in the baseline; nothing to compare"));
    return;
  }
  if (pair.basis == PairBasis::kName && !base->signature.empty() && !m.signature.empty()) {
    result->notes.push_back(absl::StrCat(m.name, ": compared with the baseline's module of that name; ",
                                         SignatureChange(base->signature, m.signature)));
  }
  std::optional<DiffReport> diff;  // computed on the first violation only
  for (Metric metric : {Metric::kTotal, Metric::kTemp, Metric::kPeakLive}) {
    const int64_t before = MetricValue(*base->computed, metric);
    const int64_t now = MetricValue(*m.computed, metric);
    const int64_t limit = before + static_cast<int64_t>(static_cast<double>(before) *
                                                        options.tolerance_percent / 100.0);
    const double growth =
        before > 0 ? 100.0 * static_cast<double>(now - before) / static_cast<double>(before) : 0;
    if (now <= limit) {
      result->passes.push_back(absl::StrFormat("%s: %s %s vs baseline %s (%+.2f%%)", m.name,
                                               MetricName(metric), HumanBytes(now),
                                               HumanBytes(before), growth));
      continue;
    }
    Violation v;
    v.module = m.name;
    v.rule = absl::StrCat("baseline-", MetricRule(metric));
    v.value = now;
    v.limit = limit;
    v.message = absl::StrFormat(
        "%s: %s grew %s over the baseline, %s -> %s (+%.2f%%, %s %g%%)", m.name, MetricName(metric),
        HumanBytes(now - before), HumanAndExact(before), HumanAndExact(now), growth,
        options.python_names ? "tolerance" : "--tolerance", options.tolerance_percent);
    if (!diff) diff = DiffReports(*options.baseline, report);
    for (const ModuleDiff& d : diff->modules) {
      if (d.b == &m) v.contributors = GrowthContributors(d, options.contributors);
    }
    PointAtTopContributor(&v);
    result->violations.push_back(std::move(v));
  }
}

bool FailsOn(const CheckOptions& options, const std::string& detector) {
  for (const std::string& name : options.fail_on) {
    if (name == "all" || name == detector) return true;
  }
  return false;
}

void CheckFindings(const ModuleReport& m, const CheckOptions& options, CheckResult* result) {
  for (const detect::Finding& f : m.findings) {
    if (!FailsOn(options, f.detector)) continue;
    Violation v;
    v.module = m.name;
    v.rule = f.detector;
    v.value = f.bytes;
    v.message = absl::StrCat(m.name, ": [", f.detector, "] ", detect::Summary(f),
                             options.python_names ? " (fail_on=\"" : " (--fail-on ", f.detector,
                             options.python_names ? "\")" : ")");
    v.details = f.message;
    // The finding's own buffers, each with its size (not the finding's).
    std::vector<size_t> indices;
    for (size_t k = 0; k < m.rows.size(); ++k) {
      if (std::find(f.instructions.begin(), f.instructions.end(), m.rows[k].instruction) !=
          f.instructions.end()) {
        indices.push_back(k);
      }
    }
    v.contributors = LargestRows(m, std::move(indices), options.contributors);
    if (v.contributors.empty()) {
      v.contributors.push_back({f.bytes, absl::StrCat("the finding's ", f.detector), "", f.source_file,
                                f.source_line});
    }
    v.source_file = f.source_file;
    v.source_line = f.source_line;
    result->violations.push_back(std::move(v));
  }
}

void CheckDeviceFit(const ModuleReport& m, const CheckOptions& options, CheckResult* result) {
  if (!m.device_fit) return;
  const DeviceFit& fit = *m.device_fit;
  const std::string device = DeviceFitName(fit);
  if (fit.fits) {
    result->passes.push_back(absl::StrCat(m.name, ": fits on ", device, ": ", DeviceFitBudget(fit)));
    return;
  }
  Violation v;
  v.module = m.name;
  v.rule = "device-fit";
  v.value = fit.needed;
  v.limit = fit.usable;
  v.message = absl::StrCat(m.name, ": does not fit on ", device, " by ", HumanAndExact(fit.shortfall),
                           ": ", DeviceFitBudget(fit));
  v.contributors = ContributorsTo(m, Metric::kTotal, options.contributors);
  PointAtTopContributor(&v);
  result->violations.push_back(std::move(v));
}

// GitHub workflow command escaping: data escapes %, CR, LF; properties
// also ':' and ','.
std::string EscapeData(absl::string_view s) {
  return absl::StrReplaceAll(s, {{"%", "%25"}, {"\r", "%0D"}, {"\n", "%0A"}});
}
std::string EscapeProperty(absl::string_view s) {
  return absl::StrReplaceAll(EscapeData(s), {{":", "%3A"}, {",", "%2C"}});
}

}  // namespace

absl::Status ValidateBaseline(const Report& report, const Report& baseline, bool allow_new,
                              absl::string_view remedy) {
  if (allow_new) return absl::OkStatus();
  std::vector<std::string> only_report, only_baseline;
  auto describe = [](const ModuleReport& m) {
    return m.signature.empty() ? m.name : absl::StrCat(m.name, " ", m.signature);
  };
  for (const ModulePair& pair : PairModules(baseline, report, /*pair_sole_modules=*/false)) {
    if (pair.a == nullptr) only_report.push_back(describe(*pair.b));
    if (pair.b == nullptr) only_baseline.push_back(describe(*pair.a));
  }
  if (only_report.empty() && only_baseline.empty()) return absl::OkStatus();
  std::string message = "error: the baseline: some modules have no counterpart on the other side:";
  for (const std::string& name : only_report) absl::StrAppend(&message, "\n  only in the dump:     ", name);
  for (const std::string& name : only_baseline) absl::StrAppend(&message, "\n  only in the baseline: ", name);
  absl::StrAppend(&message,
                  "\nModules pair by name and program (parameter and result shapes, instruction "
                  "count). ", remedy);
  return absl::InvalidArgumentError(message);
}

CheckResult RunCheck(const Report& report, const CheckOptions& options) {
  CheckResult result;
  std::map<const ModuleReport*, ModulePair> baseline_of;
  if (options.baseline != nullptr) {
    for (const ModulePair& pair : PairModules(*options.baseline, report, /*pair_sole_modules=*/false)) {
      if (pair.b != nullptr) {
        baseline_of[pair.b] = pair;
      } else {
        result.notes.push_back(absl::StrCat(pair.a->name, ": in the baseline, not in this dump"));
      }
    }
  }
  const std::vector<bool> helper = HelperModules(report);
  for (size_t k = 0; k < report.modules.size(); ++k) {
    const ModuleReport& m = report.modules[k];
    const size_t passes_before = result.passes.size();
    const size_t violations_before = result.violations.size();
    if (!m.computed) {
      result.notes.push_back(absl::StrCat(m.name, ": no HLO in the dump; not checked"));
      continue;
    }
    for (const Mismatch& x : m.mismatches) {
      result.notes.push_back(absl::StrCat(m.name, ": ", x.field, " by hlomem ", HumanAndExact(x.computed),
                                          " differs from XLA's ", HumanAndExact(x.xla),
                                          "; XLA's decides"));
    }
    CheckBudget(m, Metric::kTotal, options.max_total, options, &result);
    CheckBudget(m, Metric::kTemp, options.max_temp, options, &result);
    CheckBudget(m, Metric::kPeakLive, options.max_peak, options, &result);
    if (options.baseline != nullptr) CheckBaseline(report, m, baseline_of[&m], options, &result);
    CheckDeviceFit(m, options, &result);
    CheckFindings(m, options, &result);
    result.pass_helper.resize(passes_before);
    result.pass_helper.resize(result.passes.size(), helper[k] ? m.name : "");
    result.pass_module.resize(passes_before);
    result.pass_module.resize(result.passes.size(), k);
    for (size_t v = violations_before; v < result.violations.size(); ++v) {
      result.violations[v].on_helper = helper[k];
    }
  }
  return result;
}

std::string RelativeTo(const std::string& path, const std::string& root) {
  if (root.empty() || path.size() <= root.size() || path.compare(0, root.size(), root) != 0) {
    return path;
  }
  size_t start = root.size();
  if (root.back() != '/') {
    if (path[start] != '/') return path;
    ++start;
  }
  return path.substr(start);
}

std::string FormatCheckText(const CheckResult& result, bool all) {
  std::string out;
  std::vector<std::string> helpers;  // a name per helper module's pass
  size_t helper_passes = 0;
  for (size_t k = 0; k < result.passes.size(); ++k) {
    const bool helper = !all && k < result.pass_helper.size() && !result.pass_helper[k].empty();
    if (!helper) {
      absl::StrAppend(&out, "ok    ", result.passes[k], "\n");
      continue;
    }
    ++helper_passes;
    // Passes of one module follow each other: count the module once.
    if (k == 0 || k >= result.pass_module.size() || result.pass_module[k - 1] != result.pass_module[k] ||
        helpers.empty()) {
      helpers.push_back(result.pass_helper[k]);
    }
  }
  if (!helpers.empty()) {
    absl::StrAppend(&out, "ok    ", helpers.size(), " small helper module", helpers.size() == 1 ? "" : "s",
                    " (", CountedNames(helpers, 4), "): ", helper_passes,
                    helper_passes == 1 ? " check passes" : " checks pass", "; --all lists them\n");
  }
  for (const std::string& line : result.notes) absl::StrAppend(&out, "note  ", line, "\n");
  for (const Violation& v : result.violations) {
    absl::StrAppend(&out, "FAIL  ", v.message, "\n");
    if (!v.contributors.empty()) absl::StrAppend(&out, "      top contributors:\n");
    for (const Contributor& c : v.contributors) {
      absl::StrAppend(&out, absl::StrFormat("      %12s  %s", HumanBytes(c.bytes), c.label));
      if (!c.shape.empty()) absl::StrAppend(&out, "  ", c.shape);
      if (!c.source_file.empty()) {
        absl::StrAppend(&out, "  ", c.source_file);
        if (c.source_line > 0) absl::StrAppend(&out, ":", c.source_line);
      }
      out.append("\n");
    }
  }
  const bool only_helpers =
      !all && !result.violations.empty() &&
      std::all_of(result.violations.begin(), result.violations.end(),
                  [](const Violation& v) { return v.on_helper; });
  if (only_helpers) {
    absl::StrAppend(&out,
                    "note  every violation is on a small helper module JAX compiled around the step "
                    "(random init, single operations); to gate the step alone, choose it with "
                    "--module REGEX\n");
  }
  absl::StrAppend(&out, result.passed() ? "check passed"
                                        : absl::StrCat("check FAILED: ", result.violations.size(),
                                                       result.violations.size() == 1 ? " violation"
                                                                                     : " violations"),
                  "\n");
  return out;
}

std::string GithubAnnotations(const CheckResult& result, const Report& report,
                              const std::string& source_root, int cap, bool all) {
  std::string out;
  auto emit = [&](absl::string_view command, const std::string& file, int64_t line,
                  const std::string& title, const std::string& message) {
    std::string properties = " ";
    if (!file.empty()) {
      properties = absl::StrCat(" file=", EscapeProperty(RelativeTo(file, source_root)));
      if (line > 0) absl::StrAppend(&properties, ",line=", line);
      properties.push_back(',');
    }
    absl::StrAppend(&out, "::", command, properties, "title=", EscapeProperty(title), "::",
                    EscapeData(message), "\n");
  };
  auto say_rest = [&](size_t rest, absl::string_view what) {
    if (rest == 0) return;
    emit("notice", "", 0, "hlomem",
         absl::StrCat(rest, " more ", what, rest == 1 ? "" : "s", " not annotated (GitHub shows ", cap,
                      " per type and step); all are in the job summary and the log"));
  };
  int errors = 0;
  std::set<std::pair<std::string, std::string>> failed;  // (module, rule)
  for (const Violation& v : result.violations) {
    failed.insert({v.module, v.rule});
    if (errors == cap) continue;
    ++errors;
    std::string message = v.message;
    if (!v.details.empty()) absl::StrAppend(&message, "\n", v.details);
    for (const Contributor& c : v.contributors) {
      absl::StrAppend(&message, "\n", HumanBytes(c.bytes), "  ", c.label);
      if (!c.source_file.empty()) absl::StrAppend(&message, "  ", c.source_file, ":", c.source_line);
    }
    emit("error", v.source_file, v.source_line, absl::StrCat("hlomem ", v.rule), message);
  }
  say_rest(result.violations.size() - static_cast<size_t>(errors), "violation");
  // Findings that did not fail the gate still deserve a look on the PR.
  size_t warnings = 0;
  size_t unshown = 0;
  size_t on_helpers = 0;
  const std::vector<bool> helper = all ? std::vector<bool>(report.modules.size(), false)
                                       : HelperModules(report);
  for (size_t k = 0; k < report.modules.size(); ++k) {
    const ModuleReport& m = report.modules[k];
    for (const detect::Finding& f : m.findings) {
      if (failed.count({m.name, f.detector}) != 0) continue;
      if (helper[k]) {
        ++on_helpers;
        continue;
      }
      if (static_cast<int>(warnings) == cap) {
        ++unshown;
        continue;
      }
      ++warnings;
      emit("warning", f.source_file, f.source_line, absl::StrCat("hlomem ", f.detector),
           absl::StrCat(m.name, ": ",
                        f.summary.empty() ? absl::StrCat(f.message, " (", HumanBytes(f.bytes), ")")
                                          : absl::StrCat(f.summary, "\n", f.message),
                        f.suggestion.empty() ? "" : absl::StrCat("\nfix: ", f.suggestion)));
    }
  }
  say_rest(unshown, "finding");
  if (on_helpers > 0) {
    emit("notice", "", 0, "hlomem",
         absl::StrCat(on_helpers, " finding", on_helpers == 1 ? "" : "s",
                      " on small helper modules (random init, optimizer init, single operations) not "
                      "annotated; the report lists them with --all"));
  }
  return out;
}

}  // namespace hlomem::report
