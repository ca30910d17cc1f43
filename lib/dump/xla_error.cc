#include "lib/dump/xla_error.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/diagnostic.h"

namespace hlomem::dump {
namespace {

// A size as XLA prints it: "15.75G", "8.00M", "6.43M", "512B", "8.00GiB",
// "1.5K". Units are binary (XLA's HumanReadableNumBytes); the result is
// the value and half a unit of its last digit, the rounding either way.
struct ParsedSize {
  int64_t bytes = 0;
  int64_t rounding = 0;
};
std::optional<ParsedSize> ParseHumanSize(absl::string_view text) {
  size_t digits = 0;
  while (digits < text.size() &&
         (absl::ascii_isdigit(text[digits]) || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0 || digits > 24) return std::nullopt;
  double value = 0;
  if (!absl::SimpleAtod(text.substr(0, digits), &value) || !(value >= 0)) return std::nullopt;
  absl::string_view unit = text.substr(digits);
  if (absl::EndsWith(unit, "iB")) unit.remove_suffix(2);
  if (absl::EndsWith(unit, "B") && unit.size() == 2) unit.remove_suffix(1);
  int shift = 0;
  if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else if (unit == "P") shift = 50;
  else if (!unit.empty() && unit != "B") return std::nullopt;
  const double scale = std::ldexp(1.0, shift);
  const double bytes = value * scale;
  if (!(bytes < 9.0e18)) return std::nullopt;
  const size_t dot = text.substr(0, digits).find('.');
  const int decimals = dot == absl::string_view::npos ? 0 : static_cast<int>(digits - dot - 1);
  ParsedSize out;
  out.bytes = static_cast<int64_t>(std::llround(bytes));
  out.rounding = static_cast<int64_t>(std::ceil(scale * 0.5 * std::pow(10.0, -decimals)));
  return out;
}

// Sets `bytes` (and widens `rounding`) from a size XLA printed, if it is one.
void SetSize(absl::string_view text, std::optional<int64_t>* bytes, int64_t* rounding) {
  if (auto size = ParseHumanSize(absl::StripSuffix(text, "."))) {
    *bytes = size->bytes;
    *rounding = std::max(*rounding, size->rounding);
  }
}

// The token right after `marker` up to one of `stops`.
std::optional<absl::string_view> After(absl::string_view line, absl::string_view marker,
                                       absl::string_view stops) {
  const size_t at = line.find(marker);
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = line.substr(at + marker.size());
  const size_t end = rest.find_first_of(stops);
  return rest.substr(0, end);
}

std::optional<XlaOomError> ParseLine(absl::string_view line) {
  XlaOomError e;
  if (absl::StrContains(line, "CompileTimeHbmOom") ||
      absl::StrContains(line, "exceeds available HBM")) {
    e.kind = XlaOomError::Kind::kCompileTimeHbmOom;
    e.memory = "HBM";
    if (absl::StrContains(line, "E1000")) e.code = "E1000";
    if (auto needed = After(line, "temporaries (", ")")) {
      if (auto size = ParseHumanSize(*needed)) {
        e.needed_bytes = size->bytes;
        e.rounding_bytes = std::max(e.rounding_bytes, size->rounding);
      }
    }
    if (auto available = After(line, "available HBM (", ")")) {
      if (auto size = ParseHumanSize(*available)) {
        e.available_bytes = size->bytes;
        e.rounding_bytes = std::max(e.rounding_bytes, size->rounding);
      }
    }
    if (auto module = After(line, "HLO module: ", " \t\r")) {
      absl::string_view name = *module;
      if (absl::EndsWith(name, ".")) name.remove_suffix(1);
      e.module_name = std::string(name);
    }
    return e;
  }
  // XLA:TPU's other E1000 forms (openxla/xla docs/errors/error_1000.md):
  // "Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm." and
  // "Aborting compilation early ... Requires 3.84T, has 90.96G available."
  if (absl::StrContains(line, "Ran out of memory in memory space ")) {
    e.kind = XlaOomError::Kind::kCompileTimeHbmOom;
    e.code = "E1000";
    if (auto space = After(line, "Ran out of memory in memory space ", ". ")) {
      e.memory = absl::AsciiStrToUpper(*space);
    }
    const size_t used_at = line.find("Used ");
    if (used_at != absl::string_view::npos) {
      const absl::string_view used = line.substr(used_at);  // "Used 49.34G of 32.00G hbm."
      if (auto size = After(used, "Used ", " ")) SetSize(*size, &e.needed_bytes, &e.rounding_bytes);
      if (auto size = After(used, " of ", " ")) SetSize(*size, &e.available_bytes, &e.rounding_bytes);
    }
    return e;
  }
  if (absl::StrContains(line, "unlikely to have enough memory") && absl::StrContains(line, "Requires ")) {
    e.kind = XlaOomError::Kind::kCompileTimeHbmOom;
    e.code = "E1000";
    e.memory = "HBM";
    if (auto needed = After(line, "Requires ", ", ")) SetSize(*needed, &e.needed_bytes, &e.rounding_bytes);
    if (auto has = After(line, ", has ", " ")) SetSize(*has, &e.available_bytes, &e.rounding_bytes);
    return e;
  }
  // E1001 (docs/errors/error_1001.md): one allocation, often a kernel's
  // scoped VMEM, larger than its memory space: "Allocation (size=134217728)
  // would exceed memory (size=67108864) :: #allocation25 [..., space=vmem, ...]".
  if (absl::StrContains(line, "would exceed memory (size=")) {
    e.kind = XlaOomError::Kind::kCompileTimeAllocation;
    e.code = "E1001";
    int64_t bytes = 0;
    if (auto size = After(line, "Allocation (size=", ")");
        size && absl::SimpleAtoi(*size, &bytes) && bytes >= 0) {
      e.needed_bytes = bytes;
    }
    if (auto size = After(line, "would exceed memory (size=", ")");
        size && absl::SimpleAtoi(*size, &bytes) && bytes >= 0) {
      e.available_bytes = bytes;
    }
    if (auto space = After(line, "space=", ", ]")) e.memory = absl::AsciiStrToUpper(*space);
    return e;
  }
  if (absl::StrContains(line, "Attempting to allocate") &&
      absl::StrContains(line, "That was not possible")) {
    e.kind = XlaOomError::Kind::kTpuRuntime;
    if (auto needed = After(line, "Attempting to allocate ", " ")) {
      if (auto size = ParseHumanSize(absl::StripSuffix(*needed, "."))) {
        e.needed_bytes = size->bytes;
        e.rounding_bytes = size->rounding;
      }
    }
    if (auto free = After(line, "There are ", " ")) {
      if (auto size = ParseHumanSize(*free)) {
        e.available_bytes = size->bytes;
        e.rounding_bytes = std::max(e.rounding_bytes, size->rounding);
      }
    }
    if (auto memory = After(line, "; (", ")")) e.memory = std::string(*memory);
    return e;
  }
  if (absl::StrContains(line, "Out of memory while trying to allocate ")) {
    e.kind = XlaOomError::Kind::kGpuAllocation;
    if (auto needed = After(line, "Out of memory while trying to allocate ", " ")) {
      int64_t bytes = 0;
      if (absl::SimpleAtoi(*needed, &bytes) && bytes >= 0) e.needed_bytes = bytes;
    }
    return e;
  }
  if (absl::StrContains(line, "ran out of memory trying to allocate ")) {
    e.kind = XlaOomError::Kind::kGpuAllocation;
    int64_t bytes = 0;
    if (auto rounded = After(line, "(rounded to ", ")");
        rounded && absl::SimpleAtoi(*rounded, &bytes) && bytes >= 0) {
      e.needed_bytes = bytes;
    } else if (auto needed = After(line, "ran out of memory trying to allocate ", " ")) {
      if (auto size = ParseHumanSize(*needed)) {
        e.needed_bytes = size->bytes;
        e.rounding_bytes = size->rounding;
      }
    }
    return e;
  }
  return std::nullopt;
}

// The value after `key` in a listing line, unquoted: op_name="a/b" -> a/b.
std::string QuotedAfter(absl::string_view line, absl::string_view key) {
  const size_t at = line.find(key);
  if (at == absl::string_view::npos) return "";
  absl::string_view rest = line.substr(at + key.size());
  if (!absl::ConsumePrefix(&rest, "\"")) return std::string(rest.substr(0, rest.find(' ')));
  return std::string(rest.substr(0, rest.find('"')));
}

// Reads "BufferAssignment OOM Debugging." and what follows it, from
// lines[begin]; stops at the first line that is none of its parts.
// Returns the index after the listing.
size_t ParseListing(const std::vector<absl::string_view>& lines, size_t begin, XlaOomListing* out) {
  size_t k = begin;
  for (; k < lines.size(); ++k) {
    const absl::string_view line = absl::StripAsciiWhitespace(lines[k]);
    if (line.empty() || line == "BufferAssignment OOM Debugging." || line == "BufferAssignment stats:" ||
        line == "Peak buffers:" || absl::StartsWith(line, "=====")) {
      continue;
    }
    if (absl::StartsWith(line, "Buffer ") && absl::EndsWith(line, ":")) {
      out->peak_buffers.emplace_back();
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) break;
    const absl::string_view key = line.substr(0, colon);
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EndsWith(key, "allocation") || key == "total fragmentation") {
      std::string name(absl::StripSuffix(key, " allocation"));
      const absl::string_view size = value.substr(0, value.find(' '));
      if (auto parsed = ParseHumanSize(size)) out->stats.emplace_back(std::move(name), parsed->bytes);
      continue;
    }
    if (out->peak_buffers.empty()) break;
    XlaOomListing::PeakBuffer& b = out->peak_buffers.back();
    if (key == "Size") {
      if (auto parsed = ParseHumanSize(value)) b.bytes = parsed->bytes;
    } else if (key == "Operator") {
      b.op_name = QuotedAfter(value, "op_name=");
      b.source_file = QuotedAfter(value, "source_file=");
      int64_t source_line = 0;
      if (absl::SimpleAtoi(QuotedAfter(value, "source_line="), &source_line) && source_line >= 0) {
        b.source_line = source_line;
      }
    } else if (key == "XLA Label") {
      b.label = std::string(value);
    } else if (key == "Shape") {
      b.shape = std::string(value);
    } else if (key == "Entry Parameter Subshape") {
      b.shape = std::string(value);
      b.entry_parameter = true;
    } else {
      break;
    }
  }
  return k;
}

// A size a limit line gives: raw digits are exact bytes ("63763906560",
// TF's older dumps); else XLA's human form ("59.38GiB"), rounded.
std::optional<ParsedSize> ParseLimitSize(absl::string_view token) {
  while (!token.empty() && (token.back() == ',' || token.back() == '.' || token.back() == ';')) {
    token.remove_suffix(1);
  }
  if (token.empty()) return std::nullopt;
  if (std::all_of(token.begin(), token.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    int64_t bytes = 0;
    if (!absl::SimpleAtoi(token, &bytes) || bytes < 0) return std::nullopt;
    return ParsedSize{bytes, 0};
  }
  return ParseHumanSize(token);
}

// The first word of `text`.
absl::string_view FirstWord(absl::string_view text) {
  text = absl::StripLeadingAsciiWhitespace(text);
  return text.substr(0, text.find_first_of(" \t\r"));
}

// JAX's GPU client creating the allocator: "XLA backend allocating 59.38GiB
// (63763906560 bytes) on device 0 for BFCAllocator", older "XLA backend
// allocating 63763906560 bytes on device 0 for BFCAllocator.", and without
// preallocation "XLA backend will use up to ..." The collective allocator's
// line ("for CollectiveBFCAllocator") does not contain "for BFCAllocator".
std::optional<AllocatorLimit> ParseStartLine(absl::string_view line) {
  if (!absl::StrContains(line, "for BFCAllocator")) return std::nullopt;
  absl::string_view rest;
  for (absl::string_view marker : {"XLA backend allocating ", "XLA backend will use up to "}) {
    const size_t at = line.find(marker);
    if (at != absl::string_view::npos) rest = line.substr(at + marker.size());
  }
  if (rest.empty()) return std::nullopt;
  AllocatorLimit limit;
  limit.kind = AllocatorLimit::Kind::kBfcStart;
  std::optional<ParsedSize> size;
  if (auto exact = After(rest, "(", " )"); exact && absl::StrContains(rest, " bytes)")) {
    size = ParseLimitSize(*exact);  // "59.38GiB (63763906560 bytes)"
  }
  if (!size) size = ParseLimitSize(FirstWord(rest));  // "63763906560 bytes", or a human size
  if (!size) return std::nullopt;
  limit.bytes = size->bytes;
  limit.rounding_bytes = size->rounding;
  int device = 0;
  if (auto ordinal = After(rest, " on device ", " ."); ordinal && absl::SimpleAtoi(*ordinal, &device) && device >= 0) {
    limit.device = device;
  }
  return limit;
}

// The BFC allocator's out-of-memory dump: "... pool size 59.38GiB, pool
// limit 59.38GiB", "Total size in pool: 89.77GiB memory_limit_: 89.77GiB
// available size: ...", and the first line of its "Stats:" block,
// "Limit:   59.38GiB" (a line of its own, right after the one ending in
// "Stats:"; raw bytes in older versions).
std::optional<AllocatorLimit> ParseDumpLine(absl::string_view line, absl::string_view previous) {
  AllocatorLimit limit;
  std::optional<absl::string_view> token;
  if (auto pool = After(line, "pool limit ", " \t\r")) {
    limit.kind = AllocatorLimit::Kind::kPoolLimit;
    token = pool;
  } else if (auto memory = After(line, "memory_limit_: ", " \t\r")) {
    limit.kind = AllocatorLimit::Kind::kPoolLimit;
    token = memory;
  } else {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(trimmed, "Limit:") ||
        !absl::EndsWith(absl::StripAsciiWhitespace(previous), "Stats:")) {
      return std::nullopt;
    }
    limit.kind = AllocatorLimit::Kind::kStatsLimit;
    token = FirstWord(trimmed.substr(6));
  }
  std::optional<ParsedSize> size = ParseLimitSize(*token);
  if (!size) return std::nullopt;
  limit.bytes = size->bytes;
  limit.rounding_bytes = size->rounding;
  return limit;
}

}  // namespace

std::vector<AllocatorLimit> ParseAllocatorLimits(absl::string_view text) {
  std::vector<AllocatorLimit> out;
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t k = 0; k < lines.size(); ++k) {
    std::optional<AllocatorLimit> limit = ParseStartLine(lines[k]);
    if (!limit) limit = ParseDumpLine(lines[k], k > 0 ? lines[k - 1] : absl::string_view());
    if (!limit) continue;
    limit->line = static_cast<int64_t>(k) + 1;
    limit->message = std::string(absl::StripAsciiWhitespace(lines[k]));
    out.push_back(std::move(*limit));
  }
  return out;
}

std::optional<AllocatorLimit> ChooseAllocatorLimit(const std::vector<AllocatorLimit>& limits) {
  std::optional<AllocatorLimit> best;
  for (const AllocatorLimit& limit : limits) {
    if (!best || limit.rounding_bytes < best->rounding_bytes ||
        (limit.rounding_bytes == best->rounding_bytes && limit.bytes < best->bytes)) {
      best = limit;
    }
  }
  return best;
}

std::string DescribeAllocatorLimit(const AllocatorLimit& limit) {
  absl::string_view what = "BFCAllocator";
  if (limit.kind == AllocatorLimit::Kind::kPoolLimit) {
    what = absl::StrContains(limit.message, "pool limit") ? "pool limit" : "memory_limit_";
  } else if (limit.kind == AllocatorLimit::Kind::kStatsLimit) {
    what = "Limit:";
  }
  return absl::StrCat("the log's ", what, " line (line ", limit.line, ")");
}

std::optional<int64_t> XlaOomListing::Stat(absl::string_view name) const {
  for (const auto& [key, bytes] : stats) {
    if (key == name) return bytes;
  }
  return std::nullopt;
}

absl::string_view XlaOomKindName(XlaOomError::Kind kind) {
  switch (kind) {
    case XlaOomError::Kind::kCompileTimeHbmOom: return "CompileTimeHbmOom";
    case XlaOomError::Kind::kTpuRuntime: return "TPU runtime allocation";
    case XlaOomError::Kind::kGpuAllocation: return "GPU allocation";
    case XlaOomError::Kind::kCompileTimeAllocation: return "compile-time allocation";
  }
  return "";
}

absl::StatusOr<std::vector<XlaOomError>> ParseXlaOomErrors(absl::string_view path,
                                                          absl::string_view text) {
  std::vector<XlaOomError> out;
  const std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (size_t k = 0; k < lines.size(); ++k) {
    std::optional<XlaOomError> e = ParseLine(lines[k]);
    if (!e) continue;
    e->line = static_cast<int64_t>(k) + 1;
    e->message = std::string(absl::StripAsciiWhitespace(lines[k]));
    // XLA:GPU prints its buffer assignment's summary under the error.
    if (k + 1 < lines.size() &&
        absl::StrContains(lines[k + 1], "BufferAssignment OOM Debugging")) {
      XlaOomListing listing;
      k = ParseListing(lines, k + 1, &listing) - 1;
      if (!listing.stats.empty() || !listing.peak_buffers.empty()) e->listing = std::move(listing);
    }
    out.push_back(std::move(*e));
  }
  if (std::optional<AllocatorLimit> limit = ChooseAllocatorLimit(ParseAllocatorLimits(text))) {
    for (XlaOomError& e : out) e.allocator_limit = limit;
  }
  if (out.empty()) {
    return FileError(path,
                     "no out-of-memory message found (expected XLA:TPU's E1000 \"CompileTimeHbmOom\", "
                     "\"Ran out of memory in memory space\" or \"unlikely to have enough memory\", "
                     "E1001 \"would exceed memory\", a TPU runtime \"Attempting to allocate\", a GPU "
                     "\"Out of memory while trying to allocate\" or a BFC \"ran out of memory trying "
                     "to allocate\" line)");
  }
  return out;
}

}  // namespace hlomem::dump
