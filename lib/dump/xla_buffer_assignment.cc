#include "lib/dump/xla_buffer_assignment.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"
#include "lib/base/diagnostic.h"
#include "lib/base/status_macros.h"

namespace hlomem::dump {
namespace {

// Iterates over the lines of `text` from `pos`, without copying. A trailing
// '\r' is dropped so files that went through Windows tools still parse.
class LineReader {
 public:
  LineReader(absl::string_view text, size_t pos) : text_(text), pos_(pos) {}

  // Stores the next line and its byte offset; false at the end.
  bool Next(absl::string_view* line, size_t* offset) {
    if (pos_ >= text_.size()) return false;
    *offset = pos_;
    size_t end = text_.find('\n', pos_);
    if (end == absl::string_view::npos) end = text_.size();
    *line = text_.substr(pos_, end - pos_);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos_ = end + 1;
    return true;
  }

 private:
  absl::string_view text_;
  size_t pos_;
};

// A position inside one line, with the line's offset in the whole text so
// diagnostics can point at the exact byte.
struct Cursor {
  absl::string_view line;
  size_t line_offset = 0;
  size_t pos = 0;

  size_t offset() const { return line_offset + pos; }
  absl::string_view rest() const { return line.substr(pos); }
  bool AtEnd() const { return pos >= line.size(); }
  bool Consume(absl::string_view literal) {
    if (!absl::StartsWith(rest(), literal)) return false;
    pos += literal.size();
    return true;
  }
};

enum class IntResult { kOk, kMissing, kOverflow };

// [-]digits, with overflow detection (sizes come from untrusted files).
IntResult ConsumeInt(Cursor& cursor, int64_t* value) {
  size_t pos = cursor.pos;
  const bool negative = pos < cursor.line.size() && cursor.line[pos] == '-';
  if (negative) ++pos;
  const size_t digits_start = pos;
  int64_t result = 0;
  while (pos < cursor.line.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(cursor.line[pos]))) {
    const int digit = cursor.line[pos] - '0';
    if (result > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return IntResult::kOverflow;
    }
    result = result * 10 + digit;
    ++pos;
  }
  if (pos == digits_start) return IntResult::kMissing;
  cursor.pos = pos;
  *value = negative ? -result : result;
  return IntResult::kOk;
}

// Shared error reporting and token readers for the three text formats.
class TextParser {
 public:
  TextParser(absl::string_view path, absl::string_view text)
      : path_(path), text_(text) {}

  absl::string_view text() const { return text_; }

  // A diagnostic at `offset`. When the offset lies on a last line that has
  // no newline, the file was probably cut short, which is worth saying.
  absl::Status Error(size_t offset, absl::string_view message) const {
    const bool on_unterminated_last_line =
        !text_.empty() && text_.back() != '\n' &&
        text_.find('\n', offset) == absl::string_view::npos;
    if (on_unterminated_last_line) {
      return ErrorAt(path_, text_, offset,
                     absl::StrCat(message,
                                  " (the file ends here mid-line; "
                                  "was it truncated?)"));
    }
    return ErrorAt(path_, text_, offset, message);
  }

  absl::Status Expect(Cursor& cursor, absl::string_view literal) const {
    if (cursor.Consume(literal)) return absl::OkStatus();
    return Error(cursor.offset(), absl::StrCat("expected '", literal, "'"));
  }

  absl::Status ExpectInt(Cursor& cursor, absl::string_view what,
                         int64_t* value) const {
    const size_t at = cursor.offset();
    switch (ConsumeInt(cursor, value)) {
      case IntResult::kOk:
        return absl::OkStatus();
      case IntResult::kMissing:
        return Error(at, absl::StrCat("expected ", what, " (an integer)"));
      case IntResult::kOverflow:
        return Error(at, absl::StrCat(what, " does not fit in 64 bits"));
    }
    return absl::OkStatus();
  }

  absl::Status ExpectNonNegativeInt(Cursor& cursor, absl::string_view what,
                                    int64_t* value) const {
    const size_t at = cursor.offset();
    HLOMEM_RETURN_IF_ERROR(ExpectInt(cursor, what, value));
    if (*value < 0) {
      return Error(at, absl::StrCat(what, " must not be negative"));
    }
    return absl::OkStatus();
  }

  // `{}`, `{3}`, `{0,1}` (ShapeIndex::ToString; spaces tolerated).
  absl::Status ExpectShapeIndex(Cursor& cursor,
                                std::vector<int64_t>* index) const {
    HLOMEM_RETURN_IF_ERROR(Expect(cursor, "{"));
    index->clear();
    cursor.Consume(" ");
    if (cursor.Consume("}")) return absl::OkStatus();
    while (true) {
      int64_t element = 0;
      HLOMEM_RETURN_IF_ERROR(
          ExpectNonNegativeInt(cursor, "shape index element", &element));
      index->push_back(element);
      cursor.Consume(" ");
      if (cursor.Consume("}")) return absl::OkStatus();
      if (!cursor.Consume(",")) {
        return Error(cursor.offset(), "expected ',' or '}' in a shape index");
      }
      cursor.Consume(" ");
    }
  }

  // An instruction name: everything up to one of `stops` (names never hold
  // braces, colons, spaces or '>'). Must be non-empty.
  absl::Status ExpectName(Cursor& cursor, absl::string_view stops,
                          std::string* name) const {
    const absl::string_view rest = cursor.rest();
    const size_t end = rest.find_first_of(stops);
    const size_t length = end == absl::string_view::npos ? rest.size() : end;
    if (length == 0) {
      return Error(cursor.offset(), "expected an instruction name");
    }
    name->assign(rest.data(), length);
    cursor.pos += length;
    return absl::OkStatus();
  }

  // A value: an instruction name (up to one of `stops`, which include '{'),
  // then its shape index where one is written (`x`, `x{1,0}`).
  absl::Status ExpectValueName(Cursor& cursor, absl::string_view stops, std::string* name,
                               std::vector<int64_t>* index, bool* has_index = nullptr) const {
    HLOMEM_RETURN_IF_ERROR(ExpectName(cursor, stops, name));
    const bool present = !cursor.rest().empty() && cursor.rest()[0] == '{';
    if (has_index != nullptr) *has_index = present;
    return present ? ExpectShapeIndex(cursor, index) : absl::OkStatus();
  }

  // The text up to the closing '|' of a `|shape|`, whose opening bar has been
  // consumed; the bar must come before `end` (a position in the line).
  absl::Status ExpectUntilBar(Cursor& cursor, size_t end,
                              absl::string_view what, std::string* text) const {
    const size_t bar = cursor.rest().find('|');
    if (bar == absl::string_view::npos || cursor.pos + bar >= end) {
      return Error(cursor.offset(),
                   absl::StrCat("unterminated ", what, " (missing '|')"));
    }
    text->assign(cursor.rest().data(), bar);
    cursor.pos += bar + 1;
    return absl::OkStatus();
  }

  // `Total bytes used: N[ (human)]` after the label has been consumed.
  absl::Status ParseTotalBytes(Cursor& cursor, int64_t* total) const {
    HLOMEM_RETURN_IF_ERROR(
        ExpectNonNegativeInt(cursor, "total byte count", total));
    if (!cursor.AtEnd() && !cursor.Consume(" (")) {
      return Error(cursor.offset(),
                   "expected end of line or ' (' after the byte count");
    }
    return absl::OkStatus();
  }

 private:
  absl::string_view path_;
  absl::string_view text_;
};

// ---------------------------------------------------------------------------
// Buffer assignment: allocation headers and value lines.

// `allocation I: size N[, attribute]*:` (BufferAllocation::ToShortString).
// Also the 2019 form `allocation I: 0x7f..., size N...`.
absl::Status ParseAllocationHeader(const TextParser& parser, Cursor& cursor,
                                   XlaAllocation* allocation) {
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "allocation "));
  HLOMEM_RETURN_IF_ERROR(parser.ExpectNonNegativeInt(cursor, "allocation index",
                                                     &allocation->index));
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ": "));
  if (cursor.Consume("0x")) {  // pre-2019-09 pointer
    const size_t comma = cursor.rest().find(", ");
    if (comma == absl::string_view::npos) {
      return parser.Error(cursor.offset(), "expected ', size' after pointer");
    }
    cursor.pos += comma + 2;
  }
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "size "));
  HLOMEM_RETURN_IF_ERROR(parser.ExpectNonNegativeInt(cursor, "allocation size",
                                                     &allocation->size));

  if (cursor.line.empty() || cursor.line.back() != ':' ||
      cursor.pos >= cursor.line.size()) {
    return parser.Error(cursor.line_offset + cursor.line.size(),
                        "expected ':' at the end of the allocation header");
  }
  // Attributes live between here and the final ':'.
  const size_t attributes_end = cursor.line.size() - 1;
  while (cursor.pos < attributes_end) {
    if (!cursor.Consume(", ")) {
      return parser.Error(cursor.offset(),
                          "expected ', ' before an allocation attribute");
    }
    if (cursor.Consume("color ")) {
      HLOMEM_RETURN_IF_ERROR(
          parser.ExpectNonNegativeInt(cursor, "color", &allocation->color));
    } else if (cursor.Consume("page ")) {
      HLOMEM_RETURN_IF_ERROR(
          parser.ExpectNonNegativeInt(cursor, "page", &allocation->page));
    } else if (cursor.Consume("parameter ")) {
      allocation->is_parameter = true;
      HLOMEM_RETURN_IF_ERROR(parser.ExpectNonNegativeInt(
          cursor, "parameter number", &allocation->parameter_number));
      if (cursor.Consume(", shape |")) {
        HLOMEM_RETURN_IF_ERROR(parser.ExpectUntilBar(
            cursor, attributes_end, "parameter shape",
            &allocation->parameter_shape));
      }
      HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, " at ShapeIndex "));
      HLOMEM_RETURN_IF_ERROR(
          parser.ExpectShapeIndex(cursor, &allocation->parameter_index));
    } else if (cursor.Consume("output shape is |")) {
      allocation->is_output = true;
      HLOMEM_RETURN_IF_ERROR(parser.ExpectUntilBar(
          cursor, attributes_end, "output shape", &allocation->output_shape));
    } else if (cursor.Consume("constant")) {
      allocation->is_constant = true;
    } else if (cursor.Consume("thread-local")) {
      allocation->is_thread_local = true;
    } else if (cursor.Consume("maybe-live-out")) {
      allocation->maybe_live_out = true;
    } else if (cursor.Consume("preallocated-temp")) {
      allocation->is_preallocated_temp = true;
    } else {
      // A newer XLA may add attributes: keep the text up to the next ", "
      // rather than rejecting the whole file.
      const absl::string_view rest =
          cursor.line.substr(cursor.pos, attributes_end - cursor.pos);
      size_t end = rest.find(", ");
      if (end == absl::string_view::npos) end = rest.size();
      if (end == 0) {
        return parser.Error(cursor.offset(), "empty allocation attribute");
      }
      allocation->other_attributes.emplace_back(rest.substr(0, end));
      cursor.pos += end;
    }
    if (cursor.pos > attributes_end) {
      return parser.Error(cursor.line_offset + attributes_end,
                          "allocation attribute runs past the final ':'");
    }
  }
  return absl::OkStatus();
}

// ` value: <ID NAME[{INDEX}][ (phi)][ @COLOR]> (size=S,offset=O): SHAPE`
absl::Status ParseValueLine(const TextParser& parser, Cursor& cursor,
                            XlaValue* value) {
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, " value: <"));
  HLOMEM_RETURN_IF_ERROR(
      parser.ExpectNonNegativeInt(cursor, "value id", &value->id));
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, " "));
  HLOMEM_RETURN_IF_ERROR(
      parser.ExpectValueName(cursor, "{ >", &value->instruction, &value->shape_index));
  if (cursor.Consume(" (phi)")) value->is_phi = true;
  if (cursor.Consume(" @")) {
    HLOMEM_RETURN_IF_ERROR(
        parser.ExpectNonNegativeInt(cursor, "value color", &value->color));
  }
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ">"));
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, " (size="));
  HLOMEM_RETURN_IF_ERROR(
      parser.ExpectNonNegativeInt(cursor, "value size", &value->size));
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ",offset="));
  HLOMEM_RETURN_IF_ERROR(
      parser.ExpectNonNegativeInt(cursor, "value offset", &value->offset));
  HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "): "));
  if (cursor.AtEnd()) {
    return parser.Error(cursor.offset(), "expected the value's shape");
  }
  value->shape = std::string(cursor.rest());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// HloLiveRange::ToString.

enum class LiveRangeSection { kNone, kSequence, kBuffers, kPeak, kSkipped };

// Parses from `pos` (the `HloLiveRange (max T):` line) to the end of `text`
// or to the next line that starts in column 0.
absl::Status ParseLiveRangeAt(const TextParser& parser, size_t pos,
                              XlaLiveRange* live_range) {
  LineReader reader(parser.text(), pos);
  absl::string_view line;
  size_t offset = 0;
  if (!reader.Next(&line, &offset)) {
    return parser.Error(pos, "expected 'HloLiveRange (max T):'");
  }
  {
    Cursor cursor{line, offset};
    HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "HloLiveRange (max "));
    HLOMEM_RETURN_IF_ERROR(parser.ExpectInt(cursor, "maximum logical time",
                                            &live_range->max_time));
    HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "):"));
  }

  LiveRangeSection section = LiveRangeSection::kNone;
  while (reader.Next(&line, &offset)) {
    if (line.empty()) continue;
    Cursor cursor{line, offset};
    if (!absl::StartsWith(line, "  ")) break;  // something else follows
    if (!absl::StartsWith(line, "    ")) {
      // A section header, indented by two.
      if (line == "  InstructionSequence:") {
        section = LiveRangeSection::kSequence;
      } else if (line == "  BufferLiveRange:") {
        section = LiveRangeSection::kBuffers;
        live_range->has_buffer_ranges = true;
      } else if (cursor.Consume("  Live ranges at ") &&
                 ConsumeInt(cursor, &live_range->peak_time) == IntResult::kOk &&
                 cursor.rest() == " (peak):") {
        section = LiveRangeSection::kPeak;
      } else {
        // "Stack trace breakdown for peak usage" (2025-07+), "Live ranges at
        // every moment" (2021): not needed, skip their bodies.
        section = LiveRangeSection::kSkipped;
        live_range->has_other_section = true;
      }
      continue;
    }
    cursor.pos = 4;
    switch (section) {
      case LiveRangeSection::kNone:
        return parser.Error(offset,
                            "expected a section header such as "
                            "'  InstructionSequence:'");
      case LiveRangeSection::kSkipped:
        break;
      case LiveRangeSection::kSequence: {
        int64_t time = 0;
        HLOMEM_RETURN_IF_ERROR(parser.ExpectInt(cursor, "logical time", &time));
        if (time != static_cast<int64_t>(live_range->sequence.size())) {
          return parser.Error(offset + 4,
                              absl::StrCat("expected logical time ",
                                           live_range->sequence.size()));
        }
        HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ":"));
        if (cursor.AtEnd()) {
          return parser.Error(cursor.offset(), "expected an instruction name");
        }
        live_range->sequence.emplace_back(cursor.rest());
        break;
      }
      case LiveRangeSection::kBuffers: {
        XlaLiveRange::Range range;
        HLOMEM_RETURN_IF_ERROR(
            parser.ExpectValueName(cursor, "{:", &range.instruction, &range.shape_index));
        HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ":"));
        HLOMEM_RETURN_IF_ERROR(
            parser.ExpectInt(cursor, "start time", &range.start));
        HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "-"));
        HLOMEM_RETURN_IF_ERROR(
            parser.ExpectInt(cursor, "end time", &range.end));
        if (!cursor.AtEnd()) {
          return parser.Error(cursor.offset(), "expected end of line");
        }
        live_range->ranges.push_back(std::move(range));
        break;
      }
      case LiveRangeSection::kPeak: {
        XlaLiveRange::PeakValue peak;
        std::vector<int64_t> index;
        bool has_index = false;
        HLOMEM_RETURN_IF_ERROR(
            parser.ExpectValueName(cursor, "{:", &peak.instruction, &index, &has_index));
        if (has_index) peak.shape_index = std::move(index);
        HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ": "));
        HLOMEM_RETURN_IF_ERROR(
            parser.ExpectNonNegativeInt(cursor, "byte count", &peak.bytes));
        HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, " bytes"));
        // Since 2025-05: " (cumulative: M bytes)", not needed.
        live_range->peak_values.push_back(std::move(peak));
        break;
      }
    }
  }
  return absl::OkStatus();
}

constexpr absl::string_view kLiveRangeUnavailable =
    "HloLiveRange not available";

// ---------------------------------------------------------------------------
// Wholeness.

// "8.29MiB (8693068 B)".
std::string Bytes(int64_t bytes) {
  return absl::StrCat(HumanBytes(bytes), " (", bytes, " B)");
}

// The entries of a "Used values:" list (HloValue::ToString, one per value of
// every allocation, sorted by id): `<ID NAME @C>`, its positions and uses,
// and since 2019 a closing ` from instruction: ...` line.
class UsedValuesList {
 public:
  // Takes one line of the list.
  void Add(absl::string_view line) {
    if (!line.empty() && line[0] == '<') {
      Cursor cursor{line, 0, 1};
      int64_t id = -1;
      if (ConsumeInt(cursor, &id) != IntResult::kOk) return;
      entries_.emplace_back(id, line);
    } else if (absl::StartsWith(line, " from instruction: ")) {
      ++closed_;
    }
  }

  // Records in `assignment` where the list and the allocations' value lines
  // disagree. `where` names the list ("its 'Used values'").
  void Compare(absl::string_view where, XlaBufferAssignment* assignment) const {
    if (!assignment->lists_values) return;
    absl::flat_hash_set<int64_t> in_allocations;
    for (const XlaAllocation& allocation : assignment->allocations) {
      for (const XlaValue& value : allocation.values) in_allocations.insert(value.id);
    }
    absl::flat_hash_set<int64_t> listed;
    int64_t unplaced = 0;
    absl::string_view first_unplaced;
    for (const auto& [id, line] : entries_) {
      listed.insert(id);
      if (!in_allocations.contains(id)) {
        if (unplaced++ == 0) first_unplaced = line;
      }
    }
    if (unplaced > 0) {
      assignment->gaps.push_back(absl::StrCat(where, " lists ", entries_.size(), " values, ",
                                              unplaced, " of them in none of its allocations (",
                                              first_unplaced, unplaced > 1 ? ", ..." : "", ")"));
    }
    int64_t unlisted = 0;
    for (int64_t id : in_allocations) unlisted += listed.contains(id) ? 0 : 1;
    if (unlisted > 0) {
      assignment->gaps.push_back(absl::StrCat(where, " lists ", listed.size(), " of the ",
                                              in_allocations.size(),
                                              " values of its allocations"));
    }
    // XLA closes each entry with its instruction (since 2019): a list cut
    // inside its last entry has one fewer.
    if (closed_ > 0 && closed_ < static_cast<int64_t>(entries_.size())) {
      assignment->gaps.push_back(
          absl::StrCat(where, " stops inside the entry of ", entries_.back().second));
    }
  }

 private:
  std::vector<std::pair<int64_t, absl::string_view>> entries_;
  int64_t closed_ = 0;  // ` from instruction:` lines
};

// How a gap names another file of the dump: by what follows the stem it
// shares with the buffer-assignment file ("*-buffer-assignment-values.txt"),
// else by its path.
std::string SiblingName(absl::string_view assignment_path, absl::string_view sibling) {
  constexpr absl::string_view kSuffix = "-buffer-assignment.txt";
  if (!absl::EndsWith(assignment_path, kSuffix)) return std::string(sibling);
  const absl::string_view stem = assignment_path.substr(0, assignment_path.size() - kSuffix.size());
  if (!absl::StartsWith(sibling, stem)) return std::string(sibling);
  return absl::StrCat("*", sibling.substr(stem.size()));
}

// Lines in `text`, counting a last one without a newline.
int64_t LineCount(absl::string_view text) {
  int64_t lines = std::count(text.begin(), text.end(), '\n');
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

}  // namespace

std::string LiveRangeGap(const XlaLiveRange& live_range) {
  if (static_cast<int64_t>(live_range.sequence.size()) < live_range.max_time) {
    return absl::StrCat("stops at logical time ", live_range.sequence.size(), " of ",
                        live_range.max_time);
  }
  if (!live_range.has_buffer_ranges) return "has no BufferLiveRange section";
  if (live_range.peak_time < 0) {
    return live_range.has_other_section ? "" : "stops before the live ranges at its peak";
  }
  int64_t spanning = 0;
  for (const XlaLiveRange::Range& range : live_range.ranges) {
    if (range.start <= live_range.peak_time && live_range.peak_time <= range.end) ++spanning;
  }
  if (static_cast<int64_t>(live_range.peak_values.size()) < spanning) {
    return absl::StrCat("lists ", live_range.peak_values.size(), " of the ", spanning,
                        " values live at its peak (time ", live_range.peak_time, ")");
  }
  return "";
}

std::string XlaBufferAssignment::IncompleteReason() const {
  if (gaps.empty()) return "";
  // Two signs say enough; a cut file usually shows several.
  constexpr size_t kShown = 2;
  std::vector<std::string> parts;
  if (!end_description.empty()) parts.push_back(end_description);
  parts.insert(parts.end(), gaps.begin(), gaps.begin() + std::min(gaps.size(), kShown));
  if (gaps.size() > kShown) {
    parts.push_back(absl::StrCat(gaps.size() - kShown, " more sign",
                                 gaps.size() - kShown == 1 ? "" : "s", " of it"));
  }
  return absl::StrJoin(parts, "; ");
}

// ---------------------------------------------------------------------------

int64_t XlaBufferAssignment::SumOfAllocationSizes() const {
  int64_t sum = 0;
  for (const XlaAllocation& allocation : allocations) {
    sum = SaturatingAdd(sum, allocation.size);
  }
  return sum;
}

XlaMemoryStats XlaBufferAssignment::Stats(const target::Target& target) const {
  XlaMemoryStats stats;
  for (const XlaAllocation& allocation : allocations) {
    const int64_t size = allocation.size;
    stats.total_allocation_bytes = SaturatingAdd(stats.total_allocation_bytes, size);
    int64_t& color_total = stats.color_bytes[allocation.color];
    color_total = SaturatingAdd(color_total, size);
    target::AllocationRole role;
    role.parameter = allocation.is_parameter;
    role.aliased = allocation.is_parameter && allocation.maybe_live_out;
    role.live_out = allocation.maybe_live_out;
    role.temp = allocation.is_preallocated_temp;
    role.constant = allocation.is_constant;
    role.thread_local_ = allocation.is_thread_local;
    if (target::AddToMemoryStats(target, allocation.color, role, size, &stats)) {
      stats.total_bytes = SaturatingAdd(stats.total_bytes, size);
    }
  }
  return stats;
}

absl::StatusOr<XlaBufferAssignment> ParseXlaBufferAssignment(
    absl::string_view path, absl::string_view text) {
  const TextParser parser(path, text);
  XlaBufferAssignment assignment;
  LineReader reader(text, 0);
  absl::string_view line;
  size_t offset = 0;

  bool saw_header = false;
  while (reader.Next(&line, &offset)) {
    if (line.empty()) continue;
    if (line != "BufferAssignment:") {
      return parser.Error(offset,
                          "expected 'BufferAssignment:' (the first line of a "
                          "-buffer-assignment.txt file)");
    }
    saw_header = true;
    break;
  }
  if (!saw_header) {
    return parser.Error(text.size(), "empty buffer-assignment file");
  }

  enum class Section { kAllocations, kAfterAllocations, kUsedValues };
  Section section = Section::kAllocations;
  bool in_cross_color_list = false;
  assignment.text_end = XlaTextEnd::kAllocations;
  UsedValuesList used_values;
  while (reader.Next(&line, &offset)) {
    Cursor cursor{line, offset};
    if (section == Section::kAllocations) {
      if (absl::StartsWith(line, "allocation ")) {
        XlaAllocation allocation;
        HLOMEM_RETURN_IF_ERROR(
            ParseAllocationHeader(parser, cursor, &allocation));
        if (absl::StrContains(line.substr(0, line.find(',')), ": 0x")) {
          assignment.lists_values = false;  // the pre-2019-09 header
        }
        assignment.allocations.push_back(std::move(allocation));
        in_cross_color_list = false;
        continue;
      }
      if (absl::StartsWith(line, " value: ")) {
        if (assignment.allocations.empty()) {
          return parser.Error(offset, "value line before any allocation");
        }
        XlaValue value;
        HLOMEM_RETURN_IF_ERROR(ParseValueLine(parser, cursor, &value));
        assignment.allocations.back().values.push_back(std::move(value));
        continue;
      }
      if (line == " reused by buffers of a different color:") {
        if (assignment.allocations.empty()) {
          return parser.Error(offset, "cross-color list before any allocation");
        }
        in_cross_color_list = true;
        continue;
      }
      if (absl::StartsWith(line, "  ")) {
        // Cross-color reuse entries (2026), or value lines of the pre-2019-09
        // format `  <buffer> [offset,size]: shape`, which carry nothing the
        // allocation header does not.
        if (in_cross_color_list && !assignment.allocations.empty()) {
          ++assignment.allocations.back().cross_color_values;
        }
        continue;
      }
      if (line.empty()) {
        section = Section::kAfterAllocations;
        continue;
      }
      if (!absl::StartsWith(line, "Total bytes used: ") &&
          !absl::StartsWith(line, "HloLiveRange")) {
        return parser.Error(offset,
                            "expected 'allocation N: size M...:' or ' value: "
                            "<...>' in the allocation list");
      }
      section = Section::kAfterAllocations;
    }

    if (cursor.Consume("Total bytes used: ")) {
      int64_t total = 0;
      HLOMEM_RETURN_IF_ERROR(parser.ParseTotalBytes(cursor, &total));
      assignment.total_bytes = total;
      assignment.text_end = std::max(assignment.text_end, XlaTextEnd::kTotal);
      continue;
    }
    if (line == "Used values:") {
      section = Section::kUsedValues;
      assignment.text_end = std::max(assignment.text_end, XlaTextEnd::kUsedValues);
      continue;
    }
    if (absl::StartsWith(line, "HloLiveRange (max ")) {
      XlaLiveRange live_range;
      HLOMEM_RETURN_IF_ERROR(ParseLiveRangeAt(parser, offset, &live_range));
      assignment.live_range = std::move(live_range);
      assignment.text_end = XlaTextEnd::kLiveRange;
      break;
    }
    if (absl::StartsWith(line, kLiveRangeUnavailable)) {
      assignment.text_end = XlaTextEnd::kLiveRange;
      break;
    }
    // The "Used values" entries are read only to see that the list is
    // whole; anything else after the allocations (a section a newer XLA
    // added) is not needed.
    if (section == Section::kUsedValues) used_values.Add(line);
  }

  // Whole, as far as the text alone can say? (The loader also compares it
  // with the dump's other files, the pipeline with the module.)
  assignment.path = std::string(path);
  const int64_t lines = LineCount(text);
  switch (assignment.text_end) {
    case XlaTextEnd::kNotText:
    case XlaTextEnd::kAllocations:
      assignment.end_description =
          assignment.allocations.empty()
              ? absl::StrCat("it ends before any allocation (line ", lines, ")")
              : absl::StrCat("it ends after allocation ", assignment.allocations.back().index,
                             " (line ", lines, ")");
      break;
    case XlaTextEnd::kTotal:
      assignment.end_description =
          absl::StrCat("it ends after 'Total bytes used' (line ", lines, ")");
      break;
    case XlaTextEnd::kUsedValues:
      assignment.end_description = absl::StrCat("it ends in 'Used values' (line ", lines, ")");
      break;
    case XlaTextEnd::kLiveRange:
      assignment.end_description = absl::StrCat("it ends in HloLiveRange (line ", lines, ")");
      break;
  }
  if (!text.empty() && text.back() != '\n') {
    assignment.gaps.push_back("its last line has no newline: the file was cut mid-line");
  }
  const int64_t sum = assignment.SumOfAllocationSizes();
  if (assignment.total_bytes && *assignment.total_bytes != sum) {
    assignment.gaps.push_back(absl::StrCat("its allocations sum to ", Bytes(sum), ", not the ",
                                           Bytes(*assignment.total_bytes),
                                           " of its 'Total bytes used'"));
  }
  if (assignment.text_end == XlaTextEnd::kTotal) {
    assignment.gaps.push_back("no 'Used values:' follows its 'Total bytes used', as XLA writes it");
  }
  if (assignment.text_end >= XlaTextEnd::kUsedValues && !assignment.total_bytes) {
    assignment.gaps.push_back("it has no 'Total bytes used' line before its 'Used values'");
  }
  if (assignment.text_end >= XlaTextEnd::kUsedValues) {
    used_values.Compare("its 'Used values'", &assignment);
  }
  if (assignment.live_range) {
    const std::string gap = LiveRangeGap(*assignment.live_range);
    if (!gap.empty()) assignment.gaps.push_back(absl::StrCat("its HloLiveRange ", gap));
  }
  return assignment;
}

absl::Status ParseXlaBufferAssignmentValues(absl::string_view path,
                                            absl::string_view text,
                                            XlaBufferAssignment* assignment) {
  const TextParser parser(path, text);
  LineReader reader(text, 0);
  absl::string_view line;
  size_t offset = 0;
  std::optional<int64_t> total;
  bool in_used_values = false;
  UsedValuesList used_values;
  while (reader.Next(&line, &offset)) {
    if (!total) {
      if (line.empty()) continue;
      Cursor cursor{line, offset};
      if (!cursor.Consume("Total bytes used: ")) {
        return parser.Error(offset,
                            "expected 'Total bytes used: N' (the first line of a "
                            "-buffer-assignment-values.txt file)");
      }
      int64_t bytes = 0;
      HLOMEM_RETURN_IF_ERROR(parser.ParseTotalBytes(cursor, &bytes));
      total = bytes;
      continue;
    }
    if (line == "Used values:") {
      in_used_values = true;
    } else if (in_used_values) {
      used_values.Add(line);
    }
  }
  if (!total) return parser.Error(text.size(), "expected 'Total bytes used: N'");
  assignment->total_bytes = *total;

  // The values file is written from the same allocations: its total is
  // their sum, and its list names each of their values.
  const std::string name = SiblingName(assignment->path, path);
  const int64_t sum = assignment->SumOfAllocationSizes();
  if (*total != sum) {
    assignment->gaps.push_back(absl::StrCat("its allocations sum to ", Bytes(sum), ", not the ",
                                            Bytes(*total), " of 'Total bytes used' in ", name));
  }
  if (text.back() != '\n') {
    assignment->gaps.push_back(absl::StrCat(name, " ends mid-line"));
  }
  if (!in_used_values) {
    assignment->gaps.push_back(absl::StrCat(name, " stops before its 'Used values:'"));
  } else {
    used_values.Compare(absl::StrCat("'Used values' in ", name), assignment);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<XlaLiveRange>> ParseXlaLiveRange(
    absl::string_view path, absl::string_view text) {
  const TextParser parser(path, text);
  size_t start = 0;
  while (start < text.size() && (text[start] == '\n' || text[start] == '\r')) {
    ++start;
  }
  if (absl::StartsWith(text.substr(start), kLiveRangeUnavailable)) {
    return std::optional<XlaLiveRange>();
  }
  XlaLiveRange live_range;
  HLOMEM_RETURN_IF_ERROR(ParseLiveRangeAt(parser, start, &live_range));
  return std::optional<XlaLiveRange>(std::move(live_range));
}

// ---------------------------------------------------------------------------
// Memory-usage report.

namespace {

// §3.1: "Total bytes used: N (H)", then the allocations sorted by size. The
// per-allocation value tables after "Allocations sorted by size with their
// values:" only repeat, in human-readable sizes, what the buffer assignment
// gives exactly, so reading stops there.
absl::Status ParseAllocationListReport(const TextParser& parser,
                                       LineReader& reader,
                                       XlaMemoryUsageReport* report) {
  absl::string_view line;
  size_t offset = 0;
  while (reader.Next(&line, &offset)) {
    if (line == "Allocations sorted by size with their values:") break;
    Cursor cursor{line, offset};
    if (cursor.Consume("The rest ")) {
      HLOMEM_RETURN_IF_ERROR(parser.ExpectNonNegativeInt(
          cursor, "allocation count", &report->allocations_not_shown));
      continue;
    }
    // Rows: `%10s(%3.0f%%); %10s; allocation I: size H...:`
    const size_t marker = line.find("; allocation ");
    if (marker == absl::string_view::npos) continue;
    cursor.pos = marker + 2;
    cursor.Consume("allocation ");
    int64_t index = 0;
    HLOMEM_RETURN_IF_ERROR(
        parser.ExpectNonNegativeInt(cursor, "allocation index", &index));
    HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ": size "));
    if (line.back() != ':') {
      return parser.Error(offset + line.size(),
                          "expected ':' at the end of the allocation row");
    }
    report->allocations_by_size.push_back(index);
  }
  return absl::OkStatus();
}

// §3.2: blocks of "Memory Space: NAME (color=C)" / "Total bytes: N (H)",
// each followed by one table per allocation.
absl::Status ParseMemorySpacesReport(const TextParser& parser,
                                     LineReader& reader, absl::string_view line,
                                     size_t offset,
                                     XlaMemoryUsageReport* report) {
  int64_t total = 0;
  bool expect_total = false;
  do {
    Cursor cursor{line, offset};
    if (expect_total) {
      HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, "Total bytes: "));
      int64_t bytes = 0;
      HLOMEM_RETURN_IF_ERROR(parser.ParseTotalBytes(cursor, &bytes));
      report->memory_spaces.back().total_bytes = bytes;
      total = SaturatingAdd(total, bytes);
      expect_total = false;
      continue;
    }
    if (cursor.Consume("Memory Space: ")) {
      XlaMemoryUsageReport::MemorySpace space;
      const size_t paren = cursor.rest().rfind(" (color=");
      if (paren == absl::string_view::npos) {
        return parser.Error(cursor.offset(),
                            "expected 'NAME (color=C)' after 'Memory Space: '");
      }
      space.name = std::string(cursor.rest().substr(0, paren));
      cursor.pos += paren + 8;
      HLOMEM_RETURN_IF_ERROR(parser.ExpectInt(cursor, "color", &space.color));
      HLOMEM_RETURN_IF_ERROR(parser.Expect(cursor, ")"));
      report->memory_spaces.push_back(std::move(space));
      expect_total = true;
      continue;
    }
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line),
                         "cumulative_size;")) {
      if (report->memory_spaces.empty()) {
        return parser.Error(offset, "allocation table before 'Memory Space:'");
      }
      ++report->memory_spaces.back().allocation_tables;
    }
  } while (reader.Next(&line, &offset));
  if (expect_total) {
    return parser.Error(parser.text().size(),
                        "expected 'Total bytes: N' after 'Memory Space:'");
  }
  report->total_bytes = total;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<XlaMemoryUsageReport> ParseXlaMemoryUsageReport(
    absl::string_view path, absl::string_view text) {
  const TextParser parser(path, text);
  XlaMemoryUsageReport report;
  LineReader reader(text, 0);
  absl::string_view line;
  size_t offset = 0;
  while (reader.Next(&line, &offset)) {
    if (line.empty()) continue;
    Cursor cursor{line, offset};
    if (cursor.Consume("Total bytes used: ")) {
      report.layout = XlaMemoryUsageReport::Layout::kAllocationList;
      int64_t total = 0;
      HLOMEM_RETURN_IF_ERROR(parser.ParseTotalBytes(cursor, &total));
      report.total_bytes = total;
      HLOMEM_RETURN_IF_ERROR(
          ParseAllocationListReport(parser, reader, &report));
      return report;
    }
    if (absl::StartsWith(line, "Memory Space: ")) {
      report.layout = XlaMemoryUsageReport::Layout::kMemorySpaces;
      HLOMEM_RETURN_IF_ERROR(
          ParseMemorySpacesReport(parser, reader, line, offset, &report));
      return report;
    }
    return parser.Error(offset,
                        "expected 'Total bytes used: N' or 'Memory Space: "
                        "NAME (color=C)' (the first line of a "
                        "-memory-usage-report.txt file)");
  }
  // XLA writes an empty report for a module with no allocations.
  return report;
}

void CheckAgainstMemoryUsageReport(const XlaMemoryUsageReport& report,
                                   absl::string_view report_path,
                                   XlaBufferAssignment* assignment) {
  const std::string name = SiblingName(assignment->path, report_path);
  if (report.layout == XlaMemoryUsageReport::Layout::kAllocationList) {
    // An empty report says nothing.
    if (!report.total_bytes) return;
    const int64_t sum = assignment->SumOfAllocationSizes();
    if (*report.total_bytes != sum) {
      assignment->gaps.push_back(absl::StrCat("its allocations sum to ", Bytes(sum), ", not the ",
                                              Bytes(*report.total_bytes),
                                              " of 'Total bytes used' in ", name));
    }
    // This layout dates the dump to 2024-10..2026-03, when the text ended
    // with HloLiveRange.
    if (assignment->text_end != XlaTextEnd::kNotText &&
        assignment->text_end != XlaTextEnd::kLiveRange) {
      assignment->gaps.push_back(absl::StrCat(
          "it has no HloLiveRange, with which XLA ended the file when it wrote memory-usage "
          "reports such as ",
          name));
    }
    return;
  }
  std::map<int64_t, int64_t> by_color;
  for (const XlaAllocation& allocation : assignment->allocations) {
    int64_t& bytes = by_color[allocation.color];
    bytes = SaturatingAdd(bytes, allocation.size);
  }
  std::map<int64_t, std::pair<std::string, int64_t>> reported;
  for (const XlaMemoryUsageReport::MemorySpace& space : report.memory_spaces) {
    reported[space.color] = {space.name, space.total_bytes};
  }
  for (const auto& [color, entry] : reported) {
    const auto it = by_color.find(color);
    const int64_t bytes = it == by_color.end() ? 0 : it->second;
    if (bytes != entry.second) {
      assignment->gaps.push_back(absl::StrCat("its allocations in memory space ", entry.first,
                                              " (color ", color, ") sum to ", Bytes(bytes),
                                              ", not the ", Bytes(entry.second), " of ",
                                              name));
      return;
    }
  }
  if (report.memory_spaces.empty()) return;  // an empty report
  for (const auto& [color, bytes] : by_color) {
    if (reported.count(color) == 0) {
      assignment->gaps.push_back(absl::StrCat("its allocations of color ", color, " (",
                                              Bytes(bytes), ") are in no memory space of ",
                                              name));
      return;
    }
  }
}

void CheckXlaCoverage(const std::vector<XlaBufferName>& assigned,
                      XlaBufferAssignment* assignment) {
  if (!assignment->lists_values) return;
  // Views into the values and into `assigned`: no copies for a module of a
  // million buffers.
  using Key = std::pair<absl::string_view, absl::Span<const int64_t>>;
  absl::flat_hash_set<Key> in_allocations;
  for (const XlaAllocation& allocation : assignment->allocations) {
    for (const XlaValue& value : allocation.values) {
      in_allocations.insert(Key(value.instruction, value.shape_index));
    }
  }
  absl::flat_hash_set<Key> seen;
  std::vector<std::string> missing;
  for (const XlaBufferName& buffer : assigned) {
    const Key key(buffer.instruction, buffer.shape_index);
    if (in_allocations.contains(key) || !seen.insert(key).second) continue;
    missing.push_back(buffer.shape_index.empty()
                          ? std::string(buffer.instruction)
                          : absl::StrCat(buffer.instruction, "{",
                                         absl::StrJoin(buffer.shape_index, ","), "}"));
  }
  if (missing.empty()) return;
  constexpr size_t kShown = 3;
  const std::vector<std::string> shown(missing.begin(),
                                       missing.begin() + std::min(missing.size(), kShown));
  assignment->gaps.push_back(absl::StrCat(
      "none of its allocations holds ", missing.size(), " of the ", assigned.size(),
      " buffers hlomem assigns (", absl::StrJoin(shown, ", "),
      missing.size() > kShown ? ", ..." : "", ")"));
}

}  // namespace hlomem::dump
