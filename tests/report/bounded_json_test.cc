// A JSON report is bounded unless --full: the buffers live at the peak and
// the largest others, and the timeline reduced to each span's highest step.
// Every figure it keeps is --full's, and a baseline read back from it gives
// the same peak, live set and rollups.
#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <vector>
#include <string>

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

TEST(BoundedJsonTest, KeepsThePeakAndTheLargestAndSaysWhatItCut) {
  absl::StatusOr<Report> built = pipeline::BuildReport({kLargeCase}, {});
  ASSERT_TRUE(built.ok()) << built.status();
  const ModuleReport& module = built->modules[0];
  const size_t rows = module.rows.size();
  const size_t steps = module.profile.timeline.size();
  const size_t live = module.profile.live_at_peak.size();
  // What the bounds below cut into: more rows than kept, a live set smaller
  // than the bound, a timeline longer than it.
  ASSERT_GT(rows, 2000u);
  ASSERT_LT(live, 1500u);
  ASSERT_GT(steps, 1000u);

  WriteOptions bounded;
  bounded.json_max_buffers = 1500;
  bounded.json_max_timeline = 500;
  const Json j = Json::parse(WriteJson(*built, bounded));
  const Json& m = j["modules"][0];
  EXPECT_EQ(j["schema_version"], 2);
  ASSERT_EQ(m["buffers"].size(), 1500u);
  EXPECT_EQ(m["truncated"]["buffers"]["written"], 1500);
  EXPECT_EQ(m["truncated"]["buffers"]["total"], rows);
  EXPECT_EQ(m["truncated"]["timeline"]["total"], steps);
  ASSERT_EQ(m["timeline"].size(), 500u);
  ASSERT_EQ(m["timeline_steps"].size(), 500u);

  // Every buffer live at the peak is there, and the live set adds up to the peak.
  ASSERT_EQ(m["live_at_peak"].size(), live);
  int64_t live_bytes = 0;
  for (const Json& k : m["live_at_peak"]) live_bytes += m["buffers"][k.get<size_t>()]["bytes"].get<int64_t>();
  EXPECT_EQ(live_bytes, module.computed->peak_live_bytes);
  std::vector<int64_t> kept_sizes;
  for (const Json& b : m["buffers"]) kept_sizes.push_back(b["bytes"]);
  // The rows kept besides the live set are the largest of the rest.
  std::vector<bool> live_row(rows, false);
  for (size_t k : module.profile.live_at_peak) live_row[k] = true;
  std::vector<int64_t> rest;
  for (size_t k = 0; k < rows; ++k) {
    if (!live_row[k]) rest.push_back(module.rows[k].bytes);
  }
  std::sort(rest.rbegin(), rest.rend());
  int64_t kept_rest_min = INT64_MAX;
  const size_t rest_kept = 1500 - live;
  std::vector<int64_t> kept_rest;
  {
    std::multiset<int64_t> live_sizes;
    for (size_t k : module.profile.live_at_peak) live_sizes.insert(module.rows[k].bytes);
    for (int64_t size : kept_sizes) {
      auto at = live_sizes.find(size);
      if (at != live_sizes.end()) {
        live_sizes.erase(at);
      } else {
        kept_rest.push_back(size);
      }
    }
  }
  ASSERT_EQ(kept_rest.size(), rest_kept);
  for (int64_t size : kept_rest) kept_rest_min = std::min(kept_rest_min, size);
  EXPECT_EQ(kept_rest_min, rest[rest_kept - 1]);
  // The timeline keeps the peak step with the peak's bytes, and every kept
  // step's bytes are --full's at that step.
  const int64_t peak_step = module.profile.peak_step;
  bool has_peak = false;
  for (size_t k = 0; k < 500; ++k) {
    const size_t step = m["timeline_steps"][k];
    EXPECT_EQ(m["timeline"][k], module.profile.timeline[step]);
    has_peak |= static_cast<int64_t>(step) == peak_step;
  }
  EXPECT_TRUE(has_peak);

  // Read back (a baseline): the peak, its step, the live set and the rollups
  // at the peak are --full's, and writing it again says what was cut.
  absl::StatusOr<Report> read = ReadJsonReport(WriteJson(*built, bounded), "bounded.json");
  ASSERT_TRUE(read.ok()) << read.status();
  const ModuleReport& back = read->modules[0];
  ASSERT_EQ(back.profile.timeline.size(), steps);
  EXPECT_EQ(*std::max_element(back.profile.timeline.begin(), back.profile.timeline.end()),
            module.computed->peak_live_bytes);
  EXPECT_EQ(back.profile.timeline[static_cast<size_t>(peak_step)], module.profile.timeline[peak_step]);
  EXPECT_EQ(RollupMap(back, RollupKey::kSourceLine), RollupMap(module, RollupKey::kSourceLine));
  EXPECT_EQ(RollupMap(back, RollupKey::kOpName), RollupMap(module, RollupKey::kOpName));
  const Json again = Json::parse(WriteJson(*read, WriteOptions{}))["modules"][0];
  EXPECT_EQ(again["truncated"]["buffers"]["total"], rows);
  EXPECT_EQ(again["truncated"]["timeline"]["total"], steps);

  // --full: everything, and nothing said cut.
  WriteOptions full;
  full.json_max_buffers = full.json_max_timeline = 0;
  const Json whole = Json::parse(WriteJson(*built, full))["modules"][0];
  EXPECT_EQ(whole["buffers"].size(), rows);
  EXPECT_EQ(whole["timeline"].size(), steps);
  EXPECT_TRUE(whole["timeline_steps"].is_null());
  EXPECT_TRUE(whole["truncated"].is_null());
}

// A live set larger than the bound is kept whole: the peak's buffers are
// what the report is for.
TEST(BoundedJsonTest, TheLiveSetIsNeverCut) {
  absl::StatusOr<Report> built = pipeline::BuildReport({kLargeCase}, {});
  ASSERT_TRUE(built.ok()) << built.status();
  WriteOptions tight;
  tight.json_max_buffers = 10;
  const Json m = Json::parse(WriteJson(*built, tight))["modules"][0];
  EXPECT_EQ(m["buffers"].size(), built->modules[0].profile.live_at_peak.size());
  EXPECT_EQ(m["live_at_peak"].size(), built->modules[0].profile.live_at_peak.size());
}

}  // namespace
}  // namespace hlomem::report
