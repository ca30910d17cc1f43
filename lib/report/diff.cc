#include "lib/report/diff.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/report/pairing.h"

namespace hlomem::report {
namespace {

using BufferKey = std::tuple<std::string, std::string, std::string>;  // label, source, shape

BufferKey KeyOf(const BufferRow& row) {
  return {std::string(row.Label()), row.Source(), StripLayout(row.shape)};
}

void AddSide(const ModuleReport& m, bool is_b, std::map<BufferKey, BufferChange>* changes) {
  const std::vector<bool> at_peak = AtPeakMask(m);
  for (size_t k = 0; k < m.rows.size(); ++k) {
    const BufferRow& row = m.rows[k];
    BufferKey key = KeyOf(row);
    BufferChange& c = (*changes)[key];
    if (c.count_a == 0 && c.count_b == 0) {
      std::tie(c.op_name, c.source, c.shape) = key;
    }
    if (is_b) {
      c.bytes_b += row.bytes;
      ++c.count_b;
      c.at_peak_b = c.at_peak_b || at_peak[k];
      c.kind = std::string(row.kind);
    } else {
      c.bytes_a += row.bytes;
      ++c.count_a;
      if (c.kind.empty()) c.kind = std::string(row.kind);
    }
  }
}

// A finding is "the same" on both sides when the same detector flags the
// same source line and op_name; bytes may differ.
std::string FindingKey(const detect::Finding& f) {
  return absl::StrCat(f.detector, "|", f.source_file, ":", f.source_line, "|", f.op_name);
}

std::vector<detect::Finding> FindingsMissingFrom(const std::vector<detect::Finding>& from,
                                                 const std::vector<detect::Finding>& other) {
  std::set<std::string> keys;
  for (const detect::Finding& f : other) keys.insert(FindingKey(f));
  std::vector<detect::Finding> out;
  for (const detect::Finding& f : from) {
    if (keys.count(FindingKey(f)) == 0) out.push_back(f);
  }
  return out;
}

// "dir/model.py:42" -> ("dir/model.py", 42); no line: (source, 0).
std::pair<std::string, int64_t> SplitSource(const std::string& source) {
  const size_t colon = source.rfind(':');
  int64_t line = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(source.substr(colon + 1), &line)) return {source, 0};
  return {source.substr(0, colon), line};
}

// Makes the change only A has at `gone` and the one only B has at `added`
// one change (at `added`), and returns A's, for the caller to say what
// differed between them.
BufferChange MergeSides(const BufferKey& gone, const BufferKey& added,
                        std::map<BufferKey, BufferChange>* changes) {
  BufferChange a_side = std::move((*changes)[gone]);
  changes->erase(gone);
  BufferChange& c = (*changes)[added];
  c.bytes_a = a_side.bytes_a;
  c.count_a = a_side.count_a;
  return a_side;
}

// Pairs the buffers only A has with those only B has that differ in their
// line alone (same op_name, file and shape), in line order: code added or
// removed above them moved them. The pairs become one change each.
void MatchMovedLines(std::map<BufferKey, BufferChange>* changes) {
  using LooseKey = std::tuple<std::string, std::string, std::string>;  // label, file, shape
  std::map<LooseKey, std::vector<BufferKey>> only_a, only_b;
  for (const auto& [key, c] : *changes) {
    if (c.count_a > 0 && c.count_b > 0) continue;
    const auto [file, line] = SplitSource(c.source);
    if (line == 0) continue;
    LooseKey loose{c.op_name, file, c.shape};
    (c.count_b == 0 ? only_a : only_b)[loose].push_back(key);
  }
  auto by_line = [&](const BufferKey& x, const BufferKey& y) {
    return SplitSource(std::get<1>(x)).second < SplitSource(std::get<1>(y)).second;
  };
  for (auto& [loose, gone] : only_a) {
    auto it = only_b.find(loose);
    if (it == only_b.end()) continue;
    std::vector<BufferKey>& added = it->second;
    std::sort(gone.begin(), gone.end(), by_line);
    std::sort(added.begin(), added.end(), by_line);
    for (size_t k = 0; k < std::min(gone.size(), added.size()); ++k) {
      const BufferChange a_side = MergeSides(gone[k], added[k], changes);
      (*changes)[added[k]].moved_from = a_side.source;
    }
  }
}

// Pairs the buffers only A has with those only B has under the same label
// and line but another shape, in key order: a dimension changed (a bigger
// batch), so the buffer grew or shrank rather than being new and gone.
void MatchChangedShapes(std::map<BufferKey, BufferChange>* changes) {
  using LooseKey = std::pair<std::string, std::string>;  // label, source
  std::map<LooseKey, std::vector<BufferKey>> only_a, only_b;
  for (const auto& [key, c] : *changes) {
    if (c.count_a > 0 && c.count_b > 0) continue;
    (c.count_b == 0 ? only_a : only_b)[{c.op_name, c.source}].push_back(key);
  }
  for (auto& [loose, gone] : only_a) {
    auto it = only_b.find(loose);
    if (it == only_b.end()) continue;
    std::vector<BufferKey>& added = it->second;
    for (size_t k = 0; k < std::min(gone.size(), added.size()); ++k) {
      const BufferChange a_side = MergeSides(gone[k], added[k], changes);
      BufferChange& c = (*changes)[added[k]];
      c.shape_from = a_side.shape;
      if (c.moved_from.empty()) c.moved_from = a_side.moved_from;
    }
  }
}

ModuleDiff DiffModules(const ModuleReport* a, const ModuleReport* b) {
  ModuleDiff diff;
  diff.name = b != nullptr ? b->name : a->name;
  diff.a = a;
  diff.b = b;
  std::map<BufferKey, BufferChange> changes;
  if (a != nullptr) AddSide(*a, false, &changes);
  if (b != nullptr) AddSide(*b, true, &changes);
  MatchMovedLines(&changes);
  MatchChangedShapes(&changes);
  for (auto& [key, c] : changes) {
    if (c.delta() == 0) {
      if (!c.moved_from.empty()) diff.moved.push_back(std::move(c));
      continue;
    }
    c.change = c.count_a == 0   ? ChangeKind::kNew
               : c.count_b == 0 ? ChangeKind::kGone
               : c.delta() > 0  ? ChangeKind::kGrown
                                : ChangeKind::kShrunk;
    diff.changes.push_back(std::move(c));
  }
  // Stable: std::map iteration gave key order; sort keeps it among ties.
  std::stable_sort(diff.changes.begin(), diff.changes.end(),
                   [](const BufferChange& x, const BufferChange& y) {
                     const int64_t ax = x.delta() < 0 ? -x.delta() : x.delta();
                     const int64_t ay = y.delta() < 0 ? -y.delta() : y.delta();
                     if (ax != ay) return ax > ay;
                     return x.delta() > y.delta();
                   });
  static const std::vector<detect::Finding> kNone;
  const std::vector<detect::Finding>& findings_a = a != nullptr ? a->findings : kNone;
  const std::vector<detect::Finding>& findings_b = b != nullptr ? b->findings : kNone;
  diff.new_findings = FindingsMissingFrom(findings_b, findings_a);
  diff.resolved_findings = FindingsMissingFrom(findings_a, findings_b);
  return diff;
}

}  // namespace

std::string BufferChange::SourceShown() const {
  if (moved_from.empty()) return source;
  const auto [file, line] = SplitSource(moved_from);
  return SplitSource(source).first == file ? absl::StrCat(source, " (was :", line, ")")
                                           : absl::StrCat(source, " (was ", moved_from, ")");
}

std::string BufferChange::ShapeShown() const {
  return shape_from.empty() ? shape : absl::StrCat(shape, " (was ", shape_from, ")");
}

absl::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kNew: return "new";
    case ChangeKind::kGone: return "gone";
    case ChangeKind::kGrown: return "grown";
    case ChangeKind::kShrunk: return "shrunk";
  }
  return "";
}

DiffReport DiffReports(const Report& a, const Report& b) {
  DiffReport diff;
  for (const ModulePair& pair : PairModules(a, b, /*pair_sole_modules=*/true)) {
    diff.modules.push_back(DiffModules(pair.a, pair.b));
    diff.modules.back().paired_by = pair.basis;
  }
  return diff;
}

int64_t SideMetric(const ModuleReport* side, Metric metric) {
  return side != nullptr && side->computed ? MetricValue(*side->computed, metric) : 0;
}

int64_t MetricDelta(const ModuleDiff& diff, Metric metric) {
  return SideMetric(diff.b, metric) - SideMetric(diff.a, metric);
}

}  // namespace hlomem::report
