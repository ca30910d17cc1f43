#include "lib/dump/dump_file_name.h"

#include <cstddef>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hlomem::dump {
namespace {

constexpr absl::string_view kModuleMarker = "module_";
constexpr absl::string_view kAfterOptimizations = "after_optimizations";
constexpr absl::string_view kBeforeOptimizations = "before_optimizations";

struct Ending {
  absl::string_view text;
  FileKind kind;
  bool compressed;
};

// Checked in order, so the side files ("-buffer-assignment.txt") win over
// the generic ".txt" they end with.
constexpr Ending kEndings[] = {
    {"-buffer-assignment-values.txt", FileKind::kBufferAssignmentValues, false},
    {"-buffer-assignment.txt", FileKind::kBufferAssignment, false},
    {"-live-range.txt", FileKind::kLiveRange, false},
    {"-memory-usage-report.txt", FileKind::kMemoryUsageReport, false},
    {"-memory-usage-report.pb.gz", FileKind::kMemoryUsageReportProto, true},
    {"-memory-usage-report.pb", FileKind::kMemoryUsageReportProto, false},
    {".hlo.pb.gz", FileKind::kHloProto, true},
    {".hlo.pb", FileKind::kHloProto, false},
    {".txt", FileKind::kHloText, false},
};

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Number of ASCII digits at the end of `text`.
size_t TrailingDigits(absl::string_view text) {
  size_t count = 0;
  while (count < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(
                                    text[text.size() - 1 - count]))) {
    ++count;
  }
  return count;
}

// Number of ASCII digits at the start of `text`.
size_t LeadingDigits(absl::string_view text) {
  size_t count = 0;
  while (count < text.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(text[count]))) {
    ++count;
  }
  return count;
}

// The result of splitting `<module_name>.<suffix>`.
struct SuffixMatch {
  size_t suffix_start = 0;  // index in the stem where the suffix begins
  Stage stage = Stage::kUnknown;
  std::string backend;
};

std::vector<std::pair<size_t, absl::string_view>> SplitOnDots(
    absl::string_view stem) {
  std::vector<std::pair<size_t, absl::string_view>> tokens;
  size_t start = 0;
  while (true) {
    const size_t dot = stem.find('.', start);
    if (dot == absl::string_view::npos) {
      tokens.emplace_back(start, stem.substr(start));
      return tokens;
    }
    tokens.emplace_back(start, stem.substr(start, dot - start));
    start = dot + 1;
  }
}

// `NNNN.<pipeline>.after_<pass>.before_<pass>`: the step counter is the last
// all-digit token that is followed by a pipeline token and an `after_` token,
// with a `before_` token somewhere after that (pass names may hold dots).
std::optional<SuffixMatch> MatchPassDump(absl::string_view stem) {
  const auto tokens = SplitOnDots(stem);
  for (size_t i = tokens.size(); i-- > 0;) {
    // The counter needs a pipeline, an after_ and a before_ token after it.
    if (i + 3 >= tokens.size()) continue;
    if (!AllDigits(tokens[i].second)) continue;
    if (!absl::StartsWith(tokens[i + 2].second, "after_")) continue;
    bool has_before = false;
    for (size_t j = i + 3; j < tokens.size(); ++j) {
      if (absl::StartsWith(tokens[j].second, "before_")) has_before = true;
    }
    if (!has_before) continue;
    SuffixMatch match;
    match.suffix_start = tokens[i].first;
    match.stage = Stage::kIntermediate;
    return match;
  }
  return std::nullopt;
}

// Position where the token containing `pos` starts, i.e. just after the
// previous dot (0 if none).
size_t TokenStart(absl::string_view stem, size_t pos) {
  const size_t dot = stem.rfind('.', pos == 0 ? 0 : pos - 1);
  if (dot == absl::string_view::npos || dot >= pos) return 0;
  return dot + 1;
}

// `[<backend>_]after_optimizations[<tpu tail>]`, where <backend> is `cpu`,
// `sm_<x.y>_gpu` (note the dot), `gfx942_gpu`, or anything a closed-source
// backend chose.
std::optional<SuffixMatch> MatchAfterOptimizations(absl::string_view stem) {
  const size_t pos = stem.rfind(kAfterOptimizations);
  if (pos == absl::string_view::npos) return std::nullopt;
  // Anything after the marker must stay within the same token:
  // `cpu_after_optimizations.thunk_sequence` is another kind of file.
  if (stem.find('.', pos) != absl::string_view::npos) return std::nullopt;
  size_t start = TokenStart(stem, pos);
  // `sm_9.0_gpu_`: the token found so far is `0_gpu_`; step back over the
  // `sm_9` part when it is there.
  // `sm_9.0a_gpu_` (sm_90a, H100) and `sm_10.0f_gpu_` carry a feature
  // letter after the minor version.
  const absl::string_view head = stem.substr(start, pos - start);
  const size_t minor_digits = LeadingDigits(head);
  size_t minor_end = minor_digits;
  while (minor_end < head.size() && absl::ascii_isalpha(head[minor_end])) ++minor_end;
  if (start > 0 && minor_digits > 0 && minor_end < head.size() && head[minor_end] == '_') {
    const absl::string_view before_dot = stem.substr(0, start - 1);
    const size_t major_digits = TrailingDigits(before_dot);
    if (major_digits > 0 &&
        absl::EndsWith(before_dot.substr(0, before_dot.size() - major_digits),
                       "sm_")) {
      const size_t sm_start = before_dot.size() - major_digits - 3;
      // The `sm_` must begin its own token.
      if (sm_start == 0 || stem[sm_start - 1] == '.') start = sm_start;
    }
  }
  // XLA:TPU writes its backend as a token of its own, `cl_<changelist>.`,
  // before a bare `after_optimizations`.
  if (start == pos && start > 0) {
    const size_t previous = TokenStart(stem, start - 1);
    const absl::string_view token = stem.substr(previous, start - 1 - previous);
    if (absl::StartsWith(token, "cl_") && AllDigits(token.substr(3))) {
      SuffixMatch match;
      match.suffix_start = previous;
      match.stage = Stage::kAfterOptimizations;
      match.backend = std::string(token);
      return match;
    }
  }
  SuffixMatch match;
  match.suffix_start = start;
  match.stage = Stage::kAfterOptimizations;
  absl::string_view backend = stem.substr(start, pos - start);
  if (absl::EndsWith(backend, "_")) backend.remove_suffix(1);
  if (absl::EndsWith(backend, "_gpu")) backend.remove_suffix(4);
  match.backend = std::string(backend);
  return match;
}

// XLA:TPU puts its `cl_<changelist>` token between the module name and
// every stage (`jit_f.cl_1004524046.before_optimizations`): the token joins
// the suffix, as it does for after_optimizations, so that all stages of a
// module share its name.
SuffixMatch WithTpuTag(absl::string_view stem, SuffixMatch match) {
  if (match.suffix_start < 2) return match;
  const size_t previous = TokenStart(stem, match.suffix_start - 1);
  const absl::string_view token = stem.substr(previous, match.suffix_start - 1 - previous);
  if (absl::StartsWith(token, "cl_") && AllDigits(token.substr(3))) {
    match.suffix_start = previous;
    match.backend = std::string(token);
  }
  return match;
}

std::optional<SuffixMatch> MatchSuffix(absl::string_view stem) {
  if (auto pass = MatchPassDump(stem)) return WithTpuTag(stem, *pass);
  const size_t last_dot = stem.rfind('.');
  const size_t last_start =
      last_dot == absl::string_view::npos ? 0 : last_dot + 1;
  const absl::string_view last_token = stem.substr(last_start);
  if (last_token == kBeforeOptimizations) {
    SuffixMatch match;
    match.suffix_start = last_start;
    match.stage = Stage::kBeforeOptimizations;
    return WithTpuTag(stem, match);
  }
  if (last_token == "before_auto_spmd_sharding" ||
      last_token == "after_auto_spmd_sharding" ||
      last_token == "after_spmd_calls") {
    SuffixMatch match;
    match.suffix_start = last_start;
    match.stage = Stage::kIntermediate;
    return WithTpuTag(stem, match);
  }
  return MatchAfterOptimizations(stem);
}

bool EndsWithKnownEnding(absl::string_view name, const Ending** found) {
  for (const Ending& ending : kEndings) {
    if (name.size() > ending.text.size() && absl::EndsWith(name, ending.text)) {
      *found = &ending;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::string_view FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kHloText:
      return "hlo-text";
    case FileKind::kHloProto:
      return "hlo-proto";
    case FileKind::kBufferAssignment:
      return "buffer-assignment";
    case FileKind::kBufferAssignmentValues:
      return "buffer-assignment-values";
    case FileKind::kLiveRange:
      return "live-range";
    case FileKind::kMemoryUsageReport:
      return "memory-usage-report";
    case FileKind::kMemoryUsageReportProto:
      return "memory-usage-report-proto";
    case FileKind::kIgnored:
      return "ignored";
  }
  return "ignored";
}

absl::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kBeforeOptimizations:
      return "before_optimizations";
    case Stage::kAfterOptimizations:
      return "after_optimizations";
    case Stage::kIntermediate:
      return "intermediate";
    case Stage::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string DumpFileName::ModuleStem() const {
  std::string stem;
  if (!prefix.empty()) absl::StrAppend(&stem, prefix, ".");
  // Ids are printed with %04d by XLA; keep that so stems match file names.
  std::string id = std::to_string(module_id);
  if (id.size() < 4) id.insert(0, 4 - id.size(), '0');
  absl::StrAppend(&stem, kModuleMarker, id);
  if (!module_name.empty()) absl::StrAppend(&stem, ".", module_name);
  return stem;
}

std::optional<DumpFileName> ParseDumpFileName(absl::string_view basename) {
  // Find the first `module_<digits>.`; XLA's own grouping regex is
  // `.*module_(\d+)\..*`, but the first match is the one that can be
  // followed by a module name.
  size_t search_from = 0;
  size_t marker = absl::string_view::npos;
  size_t digits = 0;
  while (true) {
    marker = basename.find(kModuleMarker, search_from);
    if (marker == absl::string_view::npos) return std::nullopt;
    const absl::string_view after =
        basename.substr(marker + kModuleMarker.size());
    digits = LeadingDigits(after);
    // 18 digits always fit in int64_t.
    if (digits > 0 && digits <= 18 && digits < after.size() &&
        after[digits] == '.') {
      break;
    }
    search_from = marker + 1;
  }

  DumpFileName name;
  absl::string_view prefix = basename.substr(0, marker);
  if (absl::EndsWith(prefix, ".")) prefix.remove_suffix(1);
  name.prefix = std::string(prefix);
  name.module_id = 0;
  for (char c : basename.substr(marker + kModuleMarker.size(), digits)) {
    name.module_id = name.module_id * 10 + (c - '0');
  }
  absl::string_view rest =
      basename.substr(marker + kModuleMarker.size() + digits + 1);

  const Ending* ending = nullptr;
  if (!EndsWithKnownEnding(rest, &ending)) {
    name.kind = FileKind::kIgnored;
    return name;
  }
  name.kind = ending->kind;
  name.compressed = ending->compressed;
  const absl::string_view stem =
      rest.substr(0, rest.size() - ending->text.size());

  const std::optional<SuffixMatch> match = MatchSuffix(stem);
  if (!match.has_value()) {
    // `.thunk_sequence.txt`, `.autotune_results.txt`, protos dumped by
    // passes: text files that are not HLO modules.
    if (name.kind == FileKind::kHloText) name.kind = FileKind::kIgnored;
    return name;
  }
  name.stage = match->stage;
  name.backend = match->backend;
  name.suffix = std::string(stem.substr(match->suffix_start));
  if (match->suffix_start > 0) {
    // Drop the dot between module name and suffix.
    name.module_name = std::string(stem.substr(0, match->suffix_start - 1));
  }
  return name;
}

FileKind GuessStandaloneFileKind(absl::string_view basename) {
  const Ending* ending = nullptr;
  if (EndsWithKnownEnding(basename, &ending)) return ending->kind;
  if (absl::EndsWith(basename, ".pb") || absl::EndsWith(basename, ".pb.gz") ||
      absl::EndsWith(basename, ".binpb")) {
    return FileKind::kHloProto;
  }
  return FileKind::kHloText;
}

}  // namespace hlomem::dump
