// A JSON report is bounded unless --full: the largest buffers live at the
// peak and the largest of all, the rollups at the peak made from every
// buffer, and the timeline reduced to each span's highest step. Every
// figure it keeps is --full's, and a baseline read back from it gives the
// same peak, rollups and counts.
#include <algorithm>
#include <climits>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

using Json = nlohmann::json;

const std::string kLargeCase = std::string(HLOMEM_TESTDATA_DIR) + "/jax/big_unrolled_transformer_train";

std::map<std::string, int64_t> RollupMap(const ModuleReport& m, RollupKey key) {
  std::map<std::string, int64_t> out;
  for (const RollupRow& row : RollupAtPeak(m, key)) out[row.key] = row.bytes;
  return out;
}

// The `count` largest of `sizes`, smallest last.
int64_t NthLargest(std::vector<int64_t> sizes, size_t count) {
  std::sort(sizes.rbegin(), sizes.rend());
  return sizes[count - 1];
}

TEST(BoundedJsonTest, KeepsTheLargestAndTheFiguresOfEverything) {
  absl::StatusOr<Report> built = pipeline::BuildReport({kLargeCase}, {});
  ASSERT_TRUE(built.ok()) << built.status();
  const ModuleReport& module = built->modules[0];
  const size_t rows = module.rows.size();
  const size_t steps = module.profile.timeline.size();
  const size_t live = module.profile.live_at_peak.size();
  constexpr size_t kLimit = 300;
  // What the bounds below cut into.
  ASSERT_GT(live, kLimit);
  ASSERT_GT(rows, live + kLimit);
  ASSERT_GT(steps, 1000u);

  WriteOptions bounded;
  bounded.json_max_buffers = kLimit;
  bounded.json_max_timeline = 500;
  const std::string text = WriteJson(*built, bounded);
  const Json j = Json::parse(text);
  const Json& m = j["modules"][0];
  EXPECT_EQ(j["schema_version"], 2);
  const size_t written = m["buffers"].size();
  EXPECT_GE(written, kLimit);
  EXPECT_LE(written, 2 * kLimit);
  EXPECT_EQ(m["truncated"]["buffers"]["written"], written);
  EXPECT_EQ(m["truncated"]["buffers"]["total"], rows);
  EXPECT_EQ(m["truncated"]["live_at_peak"]["written"], kLimit);
  EXPECT_EQ(m["truncated"]["live_at_peak"]["total"], live);
  EXPECT_EQ(m["truncated"]["timeline"]["total"], steps);

  // The buffers kept are the largest live at the peak and the largest of all.
  std::vector<int64_t> live_sizes, all_sizes;
  for (size_t k : module.profile.live_at_peak) live_sizes.push_back(module.rows[k].bytes);
  for (const BufferRow& r : module.rows) all_sizes.push_back(r.bytes);
  ASSERT_EQ(m["live_at_peak"].size(), kLimit);
  int64_t smallest_live = INT64_MAX;
  for (const Json& k : m["live_at_peak"]) {
    smallest_live = std::min(smallest_live, m["buffers"][k.get<size_t>()]["bytes"].get<int64_t>());
  }
  EXPECT_EQ(smallest_live, NthLargest(live_sizes, kLimit));
  std::multiset<int64_t> written_sizes;
  for (const Json& b : m["buffers"]) written_sizes.insert(b["bytes"].get<int64_t>());
  EXPECT_GE(*std::next(written_sizes.rbegin(), kLimit - 1), NthLargest(all_sizes, kLimit));

  // The rollups at the peak count every live buffer: --full's.
  std::map<std::string, int64_t> by_line;
  for (const Json& row : m["peak_by_line"]) by_line[row["key"]] = row["bytes"];
  EXPECT_EQ(by_line, RollupMap(module, RollupKey::kSourceLine));
  int64_t line_total = 0;
  for (const auto& [key, bytes] : by_line) line_total += bytes;
  EXPECT_EQ(line_total, module.computed->peak_live_bytes);

  // The timeline keeps the peak step; every kept step's bytes are --full's.
  const int64_t peak_step = module.profile.peak_step;
  ASSERT_EQ(m["timeline"].size(), 500u);
  bool has_peak = false;
  for (size_t k = 0; k < 500; ++k) {
    const size_t step = m["timeline_steps"][k];
    EXPECT_EQ(m["timeline"][k], module.profile.timeline[step]);
    has_peak |= static_cast<int64_t>(step) == peak_step;
  }
  EXPECT_TRUE(has_peak);

  // Read back (a baseline): the peak, its step, the rollups and the live
  // count are --full's, and writing it again says what was cut.
  absl::StatusOr<Report> read = ReadJsonReport(text, "bounded.json");
  ASSERT_TRUE(read.ok()) << read.status();
  const ModuleReport& back = read->modules[0];
  ASSERT_EQ(back.profile.timeline.size(), steps);
  EXPECT_EQ(*std::max_element(back.profile.timeline.begin(), back.profile.timeline.end()),
            module.computed->peak_live_bytes);
  EXPECT_EQ(back.profile.timeline[static_cast<size_t>(peak_step)], module.profile.timeline[peak_step]);
  EXPECT_EQ(RollupMap(back, RollupKey::kSourceLine), RollupMap(module, RollupKey::kSourceLine));
  EXPECT_EQ(RollupMap(back, RollupKey::kOpName), RollupMap(module, RollupKey::kOpName));
  EXPECT_EQ(LiveAtPeakCount(back), live);
  const Json again = Json::parse(WriteJson(*read, WriteOptions{}))["modules"][0];
  EXPECT_EQ(again["truncated"]["buffers"]["total"], rows);
  EXPECT_EQ(again["truncated"]["live_at_peak"]["total"], live);
  EXPECT_EQ(again["truncated"]["timeline"]["total"], steps);
  EXPECT_EQ(again["peak_by_line"], m["peak_by_line"]);
  // The text of the report read back counts the whole live set.
  EXPECT_NE(WriteText(*read, WriteOptions{}).find(std::to_string(live) + " buffers"), std::string::npos);

  // --full: everything, and nothing said cut.
  WriteOptions full;
  full.json_max_buffers = full.json_max_timeline = 0;
  const Json whole = Json::parse(WriteJson(*built, full))["modules"][0];
  EXPECT_EQ(whole["buffers"].size(), rows);
  EXPECT_EQ(whole["live_at_peak"].size(), live);
  EXPECT_EQ(whole["timeline"].size(), steps);
  EXPECT_TRUE(whole["timeline_steps"].is_null());
  EXPECT_TRUE(whole["truncated"].is_null());
  EXPECT_EQ(whole["peak_by_line"], m["peak_by_line"]);
}

// A report built with only the rows its bounded JSON writes (report
// --format json) writes that JSON byte for byte, keeps at most twice the
// bound of rows, and still counts every buffer.
TEST(BoundedJsonTest, BuildingOnlyTheWrittenRowsWritesTheSameJson) {
  absl::StatusOr<Report> whole = pipeline::BuildReport({kLargeCase}, {});
  ASSERT_TRUE(whole.ok()) << whole.status();
  constexpr size_t kLimit = 300;
  pipeline::ReportOptions options;
  options.rows = pipeline::ReportOptions::Rows::kLargest;
  options.max_rows = kLimit;
  absl::StatusOr<Report> bounded = pipeline::BuildReport({kLargeCase}, options);
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  const ModuleReport& all = whole->modules[0];
  const ModuleReport& cut = bounded->modules[0];
  ASSERT_GT(all.rows.size(), 2 * kLimit);
  EXPECT_LE(cut.rows.size(), 2 * kLimit);
  EXPECT_GE(cut.rows.size(), kLimit);
  EXPECT_EQ(cut.buffers_total, static_cast<int64_t>(all.rows.size()));
  EXPECT_EQ(LiveAtPeakCount(cut), all.profile.live_at_peak.size());
  EXPECT_EQ(RollupMap(cut, RollupKey::kOpName), RollupMap(all, RollupKey::kOpName));
  WriteOptions write;
  write.json_max_buffers = kLimit;
  EXPECT_EQ(WriteJson(*bounded, write), WriteJson(*whole, write));
  // The default bound (1000) too, the timeline cut as well.
  options.max_rows = WriteOptions{}.json_max_buffers;
  absl::StatusOr<Report> by_default = pipeline::BuildReport({kLargeCase}, options);
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_EQ(WriteJson(*by_default, WriteOptions{}), WriteJson(*whole, WriteOptions{}));
}

// Text and Markdown show only buffers live at the peak: built with only
// those rows, both write what they write from every row.
TEST(BoundedJsonTest, TextAndMarkdownFromTheRowsLiveAtThePeakAreTheSame) {
  absl::StatusOr<Report> whole = pipeline::BuildReport({kLargeCase}, {});
  ASSERT_TRUE(whole.ok()) << whole.status();
  pipeline::ReportOptions options;
  options.rows = pipeline::ReportOptions::Rows::kLiveAtPeak;
  absl::StatusOr<Report> live = pipeline::BuildReport({kLargeCase}, options);
  ASSERT_TRUE(live.ok()) << live.status();
  const ModuleReport& all = whole->modules[0];
  const ModuleReport& cut = live->modules[0];
  ASSERT_GT(all.rows.size(), all.profile.live_at_peak.size());
  EXPECT_EQ(cut.rows.size(), all.profile.live_at_peak.size());
  EXPECT_EQ(cut.buffers_total, static_cast<int64_t>(all.rows.size()));
  WriteOptions write;
  write.top = 1000;  // every group, so a wrong row would show
  EXPECT_EQ(WriteText(*live, write), WriteText(*whole, write));
  EXPECT_EQ(WriteReport(*live, Format::kMarkdown, write), WriteReport(*whole, Format::kMarkdown, write));
}

}  // namespace
}  // namespace hlomem::report
