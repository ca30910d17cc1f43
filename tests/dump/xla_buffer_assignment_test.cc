#include "lib/dump/xla_buffer_assignment.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/dump/discovery.h"
#include "nlohmann/json.hpp"

namespace hlomem::dump {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Hand-typed in XLA's exact format (formats.md §2.1,
// BufferAllocation::ToShortString / ToString, HloLiveRange::ToString as of
// 2021-04..2025-04): a donated parameter aliased with the output, a tuple
// leaf parameter, a constant, a CPU thread-local, the temp arena with reuse
// at offset 0 and a phi, and a pinned-host (color 5) parameter.
// clang-format off
constexpr absl::string_view kPre2026BufferAssignment =
R"(BufferAssignment:
allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}, output shape is |f32[4]|, maybe-live-out:
 value: <0 p0 @0> (size=16,offset=0): f32[4]{0}
 value: <3 add.1 @0> (size=16,offset=0): f32[4]{0}
allocation 1: size 8, parameter 1, shape |(f32[2], s32[])| at ShapeIndex {1}:
 value: <2 p1{1} @0> (size=4,offset=0): s32[]
allocation 2: size 4, constant:
 value: <1 constant.2 @0> (size=4,offset=0): f32[]
allocation 3: size 4, thread-local:
 value: <5 x.3 @0> (size=4,offset=0): f32[]
allocation 4: size 64, preallocated-temp:
 value: <4 fusion.1 @0> (size=32,offset=0): f32[8]{0}
 value: <6 while.3{1} (phi) @0> (size=32,offset=32): f32[8]{0}
 value: <7 copy.4 @0> (size=32,offset=0): f32[8]{0}
allocation 5: size 128, color 5, parameter 2, shape |f32[32]| at ShapeIndex {}:
 value: <8 p2 @5> (size=128,offset=0): f32[32]{0:S(5)}

Total bytes used: 224 (224B)

Used values:
<0 p0 @0>
 positions:
  p0
 uses:
  add.1, operand 0
 from instruction: %p0 = f32[4]{0} parameter(0)
<1 constant.2 @0>
 positions:
  constant.2
 uses:
  fusion.1, operand 1
 from instruction: %constant.2 = f32[] constant(1)


HloLiveRange (max 5):
  InstructionSequence:
    0:p0
    1:p1
    2:fusion.1
    3:add.1
    4:copy.4
  BufferLiveRange:
    p0{}:0-5
    p1{1}:1-5
    fusion.1{}:2-3
    add.1{}:3-5
  Live ranges at 3 (peak):
    p0: 16 bytes
    fusion.1: 32 bytes
)";

// The same module in the 2026-04 split layout (formats.md §2.2), with a
// cross-color reuse list (2026-07) and the 2025-05+ peak lines.
constexpr absl::string_view k2026BufferAssignment =
R"(BufferAssignment:
allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}, output shape is |f32[4]|, maybe-live-out:
 value: <0 p0 @0> (size=16,offset=0): f32[4]{0}
allocation 1: size 64, preallocated-temp:
 value: <4 fusion.1 @0> (size=32,offset=0): f32[8]{0}
 reused by buffers of a different color:
  value: <9 copy-start.1 @1> (color=1)
)";

constexpr absl::string_view k2026Values =
R"(
Total bytes used: 80 (80B)

Used values:
<0 p0 @0>
 positions:
  p0
 uses:
  (none)
 from instruction: %p0 = f32[4]{0} parameter(0)
)";

constexpr absl::string_view k2026LiveRange =
R"(HloLiveRange (max 2):
  InstructionSequence:
    0:p0
    1:fusion.1
  BufferLiveRange:
    p0{}:0-2
    fusion.1{}:1-2
  Live ranges at 1 (peak):
    fusion.1{}: 32 bytes (cumulative: 32 bytes)
    p0{}: 16 bytes (cumulative: 48 bytes)
  Stack trace breakdown for peak usage: 48 bytes
    ├── 32 bytes f (x.py:3)
    └── 16 bytes <module> (x.py:9)
)";

// §3.1 layout (2024-10..2026-03) for kPre2026BufferAssignment.
constexpr absl::string_view kAllocationListReport =
"Total bytes used: 224 (224B)\n"
"\n"
"Allocations sorted by size:\n"
"\n"
"cumulative_size; total_size - cumulative_size; allocation\n"
"------------------------------------------------------------------------------\n"
"      128B( 57%);        96B; allocation 5: size 128B, color 5, parameter 2, shape |f32[32]| at ShapeIndex {}:\n"
"      192B( 86%);        32B; allocation 4: size 64B, preallocated-temp:\n"
"      208B( 93%);        16B; allocation 0: size 16B, parameter 0, shape |f32[4]| at ShapeIndex {}, output shape is |f32[4]|, maybe-live-out:\n"
"      216B( 96%);         8B; allocation 1: size 8B, parameter 1, shape |(f32[2], s32[])| at ShapeIndex {1}:\n"
"The rest 2 allocations are less than 5% of the total size and not shown.\n"
"\n"
"\n"
"Allocations sorted by size with their values:\n"
"allocation 5: size 128B, color 5, parameter 2, shape |f32[32]| at ShapeIndex {}:\n"
"allocation 4: size 64B, preallocated-temp:\n"
"\n"
"\tcumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
"\t------------------------------------------------------------\n"
"\t      32B( 50%);        32B;            0;                2; 2\xC3\x97" "f32[8]\n"
"\t      64B(100%);        32B;           32;                1; f32[8]\n"
"\n";

// §3.2 layout (2026-03+).
constexpr absl::string_view kMemorySpacesReport =
"Memory Space: default (color=0)\n"
"Total bytes: 96 (96B)\n"
"  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
"  ------------------------------------------------------------\n"
"        32B( 50%);        32B;            0;                2; 2\xC3\x97" "f32[8]\n"
"        64B(100%);        32B;           32;                1; f32[8]\n"
"\n"
"  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
"  ------------------------------------------------------------\n"
"        16B(100%);        16B;            0;                2; 2\xC3\x97" "f32[4]\n"
"\n"
"\n"
"Memory Space: color_5 (color=5)\n"
"Total bytes: 128 (128B)\n"
"  cumulative_size;       size;       offset; used_by_n_values; shapes_list\n"
"  ------------------------------------------------------------\n"
"       128B(100%);       128B;            0;                1; f32[32]\n";

// A real excerpt: EnzymeAD/Reactant.jl#1462 (corpus
// issue-excerpts/reactant-1462-buffer-assignment.txt), allocations part.
constexpr absl::string_view kReactantExcerpt =
R"(BufferAssignment:
allocation 0: size 307200000, parameter 0, shape |f32[100000,768]| at ShapeIndex {}, output shape is |f32[100000,768]|, maybe-live-out:
 value: <5 Arg_0.1 @0> (size=307200000,offset=0): f32[100000,768]{1,0}
 value: <7 copy.1 @0> (size=307200000,offset=0): f32[100000,768]{1,0}
allocation 1: size 3072, parameter 1, shape |f32[768]| at ShapeIndex {}:
 value: <4 Arg_1.2 @0> (size=3072,offset=0): f32[768]{0}
allocation 2: size 307200000, preallocated-temp:
 value: <6 input_concatenate_fusion @0> (size=307200000,offset=0): f32[100000,768]{1,0}

Total bytes used: 614403072 (585.94MiB)
)";
// clang-format on

TEST(ParseXlaBufferAssignmentTest, Pre2026LayoutAllocations) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("ba.txt", kPre2026BufferAssignment);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const XlaBufferAssignment& assignment = *parsed;
  ASSERT_EQ(assignment.allocations.size(), 6u);

  const XlaAllocation& donated = assignment.allocations[0];
  EXPECT_EQ(donated.index, 0);
  EXPECT_EQ(donated.size, 16);
  EXPECT_TRUE(donated.is_parameter);
  EXPECT_EQ(donated.parameter_number, 0);
  EXPECT_EQ(donated.parameter_shape, "f32[4]");
  EXPECT_TRUE(donated.parameter_index.empty());
  EXPECT_TRUE(donated.is_output);
  EXPECT_EQ(donated.output_shape, "f32[4]");
  EXPECT_TRUE(donated.maybe_live_out);
  EXPECT_FALSE(donated.is_preallocated_temp);
  ASSERT_EQ(donated.values.size(), 2u);
  EXPECT_EQ(donated.values[1].id, 3);
  EXPECT_EQ(donated.values[1].instruction, "add.1");
  EXPECT_EQ(donated.values[1].shape, "f32[4]{0}");

  const XlaAllocation& tuple_leaf = assignment.allocations[1];
  EXPECT_EQ(tuple_leaf.parameter_shape, "(f32[2], s32[])");
  EXPECT_THAT(tuple_leaf.parameter_index, ElementsAre(1));
  ASSERT_EQ(tuple_leaf.values.size(), 1u);
  EXPECT_EQ(tuple_leaf.values[0].instruction, "p1");
  EXPECT_THAT(tuple_leaf.values[0].shape_index, ElementsAre(1));

  EXPECT_TRUE(assignment.allocations[2].is_constant);
  EXPECT_TRUE(assignment.allocations[3].is_thread_local);

  const XlaAllocation& temp = assignment.allocations[4];
  EXPECT_TRUE(temp.is_preallocated_temp);
  ASSERT_EQ(temp.values.size(), 3u);
  EXPECT_EQ(temp.values[1].instruction, "while.3");
  EXPECT_THAT(temp.values[1].shape_index, ElementsAre(1));
  EXPECT_TRUE(temp.values[1].is_phi);
  EXPECT_EQ(temp.values[1].offset, 32);
  EXPECT_EQ(temp.values[1].size, 32);

  const XlaAllocation& host = assignment.allocations[5];
  EXPECT_EQ(host.color, 5);
  EXPECT_EQ(host.values[0].color, 5);
  EXPECT_EQ(host.values[0].shape, "f32[32]{0:S(5)}");

  ASSERT_TRUE(assignment.total_bytes.has_value());
  EXPECT_EQ(*assignment.total_bytes, 224);
  EXPECT_EQ(assignment.SumOfAllocationSizes(), 224);
}

TEST(ParseXlaBufferAssignmentTest, Pre2026LayoutLiveRange) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("ba.txt", kPre2026BufferAssignment);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(parsed->live_range.has_value());
  const XlaLiveRange& live_range = *parsed->live_range;
  EXPECT_EQ(live_range.max_time, 5);
  EXPECT_THAT(live_range.sequence,
              ElementsAre("p0", "p1", "fusion.1", "add.1", "copy.4"));
  ASSERT_EQ(live_range.ranges.size(), 4u);
  EXPECT_EQ(live_range.ranges[1].instruction, "p1");
  EXPECT_THAT(live_range.ranges[1].shape_index, ElementsAre(1));
  EXPECT_EQ(live_range.ranges[1].start, 1);
  EXPECT_EQ(live_range.ranges[1].end, 5);
  EXPECT_EQ(live_range.peak_time, 3);
  ASSERT_EQ(live_range.peak_values.size(), 2u);
  EXPECT_EQ(live_range.peak_values[1].instruction, "fusion.1");
  EXPECT_FALSE(live_range.peak_values[1].shape_index.has_value());
  EXPECT_EQ(live_range.peak_values[1].bytes, 32);
}

TEST(ParseXlaBufferAssignmentTest, StatsFollowMemoryAnalysis) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("ba.txt", kPre2026BufferAssignment);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const XlaMemoryStats stats = parsed->Stats();
  EXPECT_EQ(stats.argument_bytes, 16 + 8);
  EXPECT_EQ(stats.alias_bytes, 16);
  EXPECT_EQ(stats.output_bytes, 16);
  EXPECT_EQ(stats.temp_bytes, 64);
  EXPECT_EQ(stats.constant_bytes, 4);
  EXPECT_EQ(stats.thread_local_bytes, 4);
  EXPECT_EQ(stats.host_argument_bytes, 128);
  EXPECT_EQ(stats.host_alias_bytes, 0);
  EXPECT_EQ(stats.total_allocation_bytes, 224);
}

TEST(ParseXlaBufferAssignmentTest, RealReactantExcerpt) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("reactant.txt", kReactantExcerpt);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->allocations.size(), 3u);
  EXPECT_EQ(*parsed->total_bytes, 614403072);
  EXPECT_EQ(parsed->SumOfAllocationSizes(), 614403072);
  const XlaMemoryStats stats = parsed->Stats();
  EXPECT_EQ(stats.argument_bytes, 307200000 + 3072);
  EXPECT_EQ(stats.alias_bytes, 307200000);
  EXPECT_EQ(stats.output_bytes, 307200000);
  EXPECT_EQ(stats.temp_bytes, 307200000);
  EXPECT_FALSE(parsed->live_range.has_value());
}

TEST(ParseXlaBufferAssignmentTest, SplitLayoutOf2026) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("ba.txt", k2026BufferAssignment);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->total_bytes.has_value());
  ASSERT_EQ(parsed->allocations.size(), 2u);
  EXPECT_EQ(parsed->allocations[1].values.size(), 1u);
  EXPECT_EQ(parsed->allocations[1].cross_color_values, 1);

  ASSERT_TRUE(
      ParseXlaBufferAssignmentValues("values.txt", k2026Values, &*parsed).ok());
  EXPECT_EQ(parsed->total_bytes, 80);
  EXPECT_EQ(parsed->SumOfAllocationSizes(), 80);

  absl::StatusOr<std::optional<XlaLiveRange>> live_range =
      ParseXlaLiveRange("live.txt", k2026LiveRange);
  ASSERT_TRUE(live_range.ok()) << live_range.status();
  ASSERT_TRUE(live_range->has_value());
  EXPECT_EQ((*live_range)->peak_time, 1);
  ASSERT_EQ((*live_range)->peak_values.size(), 2u);
  EXPECT_EQ((*live_range)->peak_values[0].instruction, "fusion.1");
  ASSERT_TRUE((*live_range)->peak_values[0].shape_index.has_value());
  EXPECT_TRUE((*live_range)->peak_values[0].shape_index->empty());
  EXPECT_EQ((*live_range)->peak_values[1].bytes, 16);
}

TEST(ParseXlaLiveRangeTest, NotAvailable) {
  absl::StatusOr<std::optional<XlaLiveRange>> live_range = ParseXlaLiveRange(
      "live.txt",
      "HloLiveRange not available (finalized or constructed from proto)\n");
  ASSERT_TRUE(live_range.ok()) << live_range.status();
  EXPECT_FALSE(live_range->has_value());
}

TEST(ParseXlaBufferAssignmentTest, OldPointerHeaderAndNoTotal) {
  // Hand-typed 2019-era form: pointer in the header, `[offset,size]` values,
  // no "Total bytes used" line.
  absl::StatusOr<XlaBufferAssignment> parsed = ParseXlaBufferAssignment(
      "old.txt",
      "BufferAssignment:\n"
      "allocation 0: 0x55d0c8a0, size 16, parameter 0 at ShapeIndex {}:\n"
      "  p0[] [0,16]: f32[4]{0}\n"
      "allocation 1: 0x55d0c8b0, size 4, maybe-live-out:\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->allocations.size(), 2u);
  EXPECT_EQ(parsed->allocations[0].size, 16);
  EXPECT_TRUE(parsed->allocations[0].is_parameter);
  EXPECT_TRUE(parsed->allocations[0].parameter_shape.empty());
  EXPECT_TRUE(parsed->allocations[1].maybe_live_out);
  EXPECT_FALSE(parsed->total_bytes.has_value());
}

TEST(ParseXlaBufferAssignmentTest, KeepsUnknownAttributes) {
  absl::StatusOr<XlaBufferAssignment> parsed = ParseXlaBufferAssignment(
      "new.txt",
      "BufferAssignment:\n"
      "allocation 0: size 8, future-flag, preallocated-temp:\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->allocations[0].other_attributes,
              ElementsAre("future-flag"));
  EXPECT_TRUE(parsed->allocations[0].is_preallocated_temp);
}

// --- Diagnostics, pinned word for word. ---

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

// The diagnostic for buffer-assignment text that must not parse; a text
// that parses gives a string no expected diagnostic equals.
std::string BufferAssignmentError(absl::string_view text) {
  absl::StatusOr<XlaBufferAssignment> parsed =
      ParseXlaBufferAssignment("t.txt", text);
  return parsed.ok() ? "<parsed without error>" : Message(parsed.status());
}

TEST(XlaBufferAssignmentErrorsTest, BadSize) {
  EXPECT_EQ(
      BufferAssignmentError("BufferAssignment:\nallocation 0: size abc:\n"),
      "t.txt:2:20: error: expected allocation size (an integer)\n"
      "allocation 0: size abc:\n"
      "                   ^");
}

TEST(XlaBufferAssignmentErrorsTest, TruncatedHeader) {
  EXPECT_EQ(
      BufferAssignmentError("BufferAssignment:\nallocation 0: size 16, param"),
      "t.txt:2:29: error: expected ':' at the end of the allocation "
      "header (the file ends here mid-line; was it truncated?)\n"
      "allocation 0: size 16, param\n"
      "                            ^");
}

TEST(XlaBufferAssignmentErrorsTest, TruncatedValueLine) {
  EXPECT_EQ(BufferAssignmentError("BufferAssignment:\nallocation 0: size 16:\n "
                                  "value: <0 p0 @0> (size=1"),
            "t.txt:3:26: error: expected ',offset=' (the file ends here "
            "mid-line; was it truncated?)\n"
            " value: <0 p0 @0> (size=1\n"
            "                         ^");
}

TEST(XlaBufferAssignmentErrorsTest, NotABufferAssignment) {
  EXPECT_EQ(BufferAssignmentError("HloModule m\n"),
            "t.txt:1:1: error: expected 'BufferAssignment:' (the first line "
            "of a -buffer-assignment.txt file)\n"
            "HloModule m\n"
            "^");
}

TEST(XlaBufferAssignmentErrorsTest, SizeOverflow) {
  EXPECT_EQ(
      BufferAssignmentError(
          "BufferAssignment:\nallocation 0: size 99999999999999999999:\n"),
      "t.txt:2:20: error: allocation size does not fit in 64 bits\n"
      "allocation 0: size 99999999999999999999:\n"
      "                   ^");
}

TEST(XlaBufferAssignmentErrorsTest, LiveRangeOutOfOrder) {
  absl::StatusOr<std::optional<XlaLiveRange>> parsed = ParseXlaLiveRange(
      "lr.txt",
      "HloLiveRange (max 2):\n  InstructionSequence:\n    0:a\n    2:b\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(Message(parsed.status()),
            "lr.txt:4:5: error: expected logical time 1\n"
            "    2:b\n"
            "    ^");
}

TEST(XlaBufferAssignmentErrorsTest, ValueBeforeAllocation) {
  EXPECT_THAT(
      BufferAssignmentError(
          "BufferAssignment:\n value: <0 p0 @0> (size=4,offset=0): f32[]\n"),
      HasSubstr("t.txt:2:1: error: value line before any allocation"));
}

TEST(XlaBufferAssignmentErrorsTest, MissingValuesTotal) {
  XlaBufferAssignment assignment;
  const absl::Status status =
      ParseXlaBufferAssignmentValues("v.txt", "\nUsed values:\n", &assignment);
  EXPECT_EQ(Message(status),
            "v.txt:2:1: error: expected 'Total bytes used: N' (the first line "
            "of a -buffer-assignment-values.txt file)\n"
            "Used values:\n"
            "^");
}

// Every prefix of a valid file must give a result or a diagnostic, never a
// crash or a hang (files are cut short when a job is killed mid-dump).
TEST(XlaBufferAssignmentErrorsTest, EveryPrefixIsHandled) {
  for (absl::string_view text :
       {kPre2026BufferAssignment, k2026BufferAssignment, kReactantExcerpt}) {
    for (size_t length = 0; length <= text.size(); ++length) {
      (void)ParseXlaBufferAssignment("p.txt", text.substr(0, length));
    }
  }
  for (absl::string_view text : {k2026LiveRange}) {
    for (size_t length = 0; length <= text.size(); ++length) {
      (void)ParseXlaLiveRange("p.txt", text.substr(0, length));
    }
  }
  for (absl::string_view text : {kAllocationListReport, kMemorySpacesReport}) {
    for (size_t length = 0; length <= text.size(); ++length) {
      (void)ParseXlaMemoryUsageReport("p.txt", text.substr(0, length));
    }
  }
}

// Random single-byte damage (deterministic): a result or a diagnostic,
// never a crash; run under ASan/UBSan in the sanitizer build.
TEST(XlaBufferAssignmentErrorsTest, MutatedInputIsHandled) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  const auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  constexpr char kBytes[] = {'\n', ' ', ':', ',', '{', '}', '<', '>', '|',
                             '-',  '0', '9', 'a', '\0', '\xff'};
  for (absl::string_view original :
       {kPre2026BufferAssignment, kAllocationListReport, kMemorySpacesReport}) {
    for (int round = 0; round < 2000; ++round) {
      std::string text(original);
      for (int edits = 1 + static_cast<int>(next() % 3); edits > 0; --edits) {
        text[next() % text.size()] = kBytes[next() % sizeof(kBytes)];
      }
      (void)ParseXlaBufferAssignment("m.txt", text);
      (void)ParseXlaLiveRange("m.txt", text);
      (void)ParseXlaMemoryUsageReport("m.txt", text);
      XlaBufferAssignment assignment;
      (void)ParseXlaBufferAssignmentValues("m.txt", text, &assignment);
    }
  }
}

// --- Memory-usage report. ---

TEST(ParseXlaMemoryUsageReportTest, AllocationListLayout) {
  absl::StatusOr<XlaMemoryUsageReport> report =
      ParseXlaMemoryUsageReport("r.txt", kAllocationListReport);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->layout, XlaMemoryUsageReport::Layout::kAllocationList);
  EXPECT_EQ(report->total_bytes, 224);
  EXPECT_THAT(report->allocations_by_size, ElementsAre(5, 4, 0, 1));
  EXPECT_EQ(report->allocations_not_shown, 2);
}

TEST(ParseXlaMemoryUsageReportTest, MemorySpacesLayout) {
  absl::StatusOr<XlaMemoryUsageReport> report =
      ParseXlaMemoryUsageReport("r.txt", kMemorySpacesReport);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->layout, XlaMemoryUsageReport::Layout::kMemorySpaces);
  ASSERT_EQ(report->memory_spaces.size(), 2u);
  EXPECT_EQ(report->memory_spaces[0].name, "default");
  EXPECT_EQ(report->memory_spaces[0].color, 0);
  EXPECT_EQ(report->memory_spaces[0].total_bytes, 96);
  EXPECT_EQ(report->memory_spaces[0].allocation_tables, 2);
  EXPECT_EQ(report->memory_spaces[1].name, "color_5");
  EXPECT_EQ(report->memory_spaces[1].color, 5);
  EXPECT_EQ(report->memory_spaces[1].allocation_tables, 1);
  EXPECT_EQ(report->total_bytes, 224);
}

TEST(ParseXlaMemoryUsageReportTest, EmptyReport) {
  absl::StatusOr<XlaMemoryUsageReport> report =
      ParseXlaMemoryUsageReport("r.txt", "");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->total_bytes.has_value());
}

TEST(ParseXlaMemoryUsageReportTest, PinnedErrors) {
  absl::StatusOr<XlaMemoryUsageReport> wrong =
      ParseXlaMemoryUsageReport("r.txt", "BufferAssignment:\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(Message(wrong.status()),
            "r.txt:1:1: error: expected 'Total bytes used: N' or 'Memory "
            "Space: NAME (color=C)' (the first line of a "
            "-memory-usage-report.txt file)\n"
            "BufferAssignment:\n"
            "^");
  absl::StatusOr<XlaMemoryUsageReport> no_total =
      ParseXlaMemoryUsageReport("r.txt", "Memory Space: hbm (color=3)\n\n");
  ASSERT_FALSE(no_total.ok());
  EXPECT_THAT(Message(no_total.status()),
              HasSubstr("r.txt:2:1: error: expected 'Total bytes: '"));
}

// --- Real dumps generated with JAX (testdata/jax/<case>/...). ---

struct RealFile {
  std::string path;
  std::string text;
};

std::optional<RealFile> ReadIfExists(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  absl::StatusOr<std::shared_ptr<const FileContents>> contents =
      FileContents::Open(path);
  if (!contents.ok()) return std::nullopt;
  return RealFile{path, std::string((*contents)->data())};
}

TEST(RealJaxDumpsTest, TotalsAgreeAcrossFiles) {
  const std::string root = std::string(HLOMEM_TESTDATA_DIR) + "/jax";
  std::vector<std::string> buffer_assignments;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::skip_permission_denied,
           error);
       !error && it != std::filesystem::recursive_directory_iterator();
       it.increment(error)) {
    const std::string path = it->path().string();
    if (absl::EndsWith(path, "-buffer-assignment.txt")) {
      buffer_assignments.push_back(path);
    }
  }
  // testdata/jax is checked in: finding nothing is a broken tree.
  ASSERT_FALSE(buffer_assignments.empty())
      << "no *-buffer-assignment.txt under " << root;
  std::sort(buffer_assignments.begin(), buffer_assignments.end());

  int with_report = 0;
  for (const std::string& path : buffer_assignments) {
    SCOPED_TRACE(path);
    const std::optional<RealFile> file = ReadIfExists(path);
    ASSERT_TRUE(file.has_value());
    absl::StatusOr<XlaBufferAssignment> parsed =
        ParseXlaBufferAssignment(file->path, file->text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();

    const std::string base = path.substr(
        0, path.size() - std::string("-buffer-assignment.txt").size());
    if (const std::optional<RealFile> values =
            ReadIfExists(base + "-buffer-assignment-values.txt")) {
      ASSERT_TRUE(
          ParseXlaBufferAssignmentValues(values->path, values->text, &*parsed)
              .ok());
    }
    if (const std::optional<RealFile> live =
            ReadIfExists(base + "-live-range.txt")) {
      absl::StatusOr<std::optional<XlaLiveRange>> live_range =
          ParseXlaLiveRange(live->path, live->text);
      ASSERT_TRUE(live_range.ok()) << live_range.status();
    }
    ASSERT_TRUE(parsed->total_bytes.has_value());
    EXPECT_EQ(parsed->SumOfAllocationSizes(), *parsed->total_bytes);
    if (parsed->live_range.has_value()) {
      EXPECT_EQ(parsed->live_range->sequence.empty(), false);
    }

    if (const std::optional<RealFile> report_file =
            ReadIfExists(base + "-memory-usage-report.txt")) {
      absl::StatusOr<XlaMemoryUsageReport> report =
          ParseXlaMemoryUsageReport(report_file->path, report_file->text);
      ASSERT_TRUE(report.ok()) << report.status();
      if (report->total_bytes.has_value()) {
        EXPECT_EQ(*report->total_bytes, *parsed->total_bytes);
        ++with_report;
      }
      // Every allocation the report names exists; 2026 reports print one
      // table per allocation with more than one value, at most.
      for (int64_t index : report->allocations_by_size) {
        EXPECT_LT(index, static_cast<int64_t>(parsed->allocations.size()));
      }
      int64_t tables = 0;
      for (const auto& space : report->memory_spaces) {
        tables += space.allocation_tables;
      }
      EXPECT_LE(tables, static_cast<int64_t>(parsed->allocations.size()));
      if (report->layout == XlaMemoryUsageReport::Layout::kAllocationList) {
        EXPECT_FALSE(report->allocations_by_size.empty());
      } else {
        EXPECT_FALSE(report->memory_spaces.empty());
      }
    }
  }
  RecordProperty("buffer_assignments",
                 static_cast<int>(buffer_assignments.size()));
  RecordProperty("with_memory_usage_report", with_report);
  // The jax 0.7.0 seed cases' reports carry a total to compare.
  EXPECT_GT(with_report, 0);
}

// Each generated case holds jax's Compiled.memory_analysis() next to the
// dump; XLA's buffer-assignment text must reproduce those sums (engine.md §6).
TEST(RealJaxDumpsTest, StatsMatchJaxMemoryAnalysis) {
  const std::string root = std::string(HLOMEM_TESTDATA_DIR) + "/jax";
  std::vector<std::string> cases;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(root, error);
       !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    if (std::filesystem::exists(it->path() / "memory_analysis.json", error)) {
      cases.push_back(it->path().string());
    }
  }
  ASSERT_FALSE(cases.empty())
      << "no case with memory_analysis.json under " << root;
  std::sort(cases.begin(), cases.end());
  int compared = 0;
  for (const std::string& dir : cases) {
    SCOPED_TRACE(dir);
    absl::StatusOr<DiscoveryResult> found = DiscoverDumps({dir}, {});
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_EQ(found->modules.size(), 1u);
    const DumpModuleFiles& module = found->modules[0];
    EXPECT_TRUE(module.has_hlo());
    if (module.buffer_assignment.empty()) continue;
    const std::optional<RealFile> file = ReadIfExists(module.buffer_assignment);
    ASSERT_TRUE(file.has_value());
    absl::StatusOr<XlaBufferAssignment> parsed =
        ParseXlaBufferAssignment(file->path, file->text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();

    const std::optional<RealFile> json_file =
        ReadIfExists(dir + "/memory_analysis.json");
    ASSERT_TRUE(json_file.has_value());
    const nlohmann::json analysis = nlohmann::json::parse(
        json_file->text, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(analysis.is_discarded());
    const XlaMemoryStats stats = parsed->Stats();
    const auto field = [&](const char* name) -> int64_t {
      return analysis.value(name, int64_t{-1});
    };
    EXPECT_EQ(stats.argument_bytes, field("argument_size_in_bytes"));
    EXPECT_EQ(stats.output_bytes, field("output_size_in_bytes"));
    EXPECT_EQ(stats.alias_bytes, field("alias_size_in_bytes"));
    EXPECT_EQ(stats.temp_bytes, field("temp_size_in_bytes"));
    EXPECT_EQ(stats.host_argument_bytes, field("host_argument_size_in_bytes"));
    EXPECT_EQ(stats.host_output_bytes, field("host_output_size_in_bytes"));
    EXPECT_EQ(stats.host_alias_bytes, field("host_alias_size_in_bytes"));
    EXPECT_EQ(stats.host_temp_bytes, field("host_temp_size_in_bytes"));
    ++compared;
  }
  RecordProperty("cases_compared", compared);
  // MANIFEST.json lists a buffer-assignment text for every case.
  EXPECT_EQ(compared, static_cast<int>(cases.size()));
}

}  // namespace
}  // namespace hlomem::dump
