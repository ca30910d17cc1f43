// Diffs that survive code moving: a line added above the model shifts every
// source line after it, and the buffers must show as moved, not as new and
// gone. B is a real report with its lines shifted, as such an edit does.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "lib/report/diff.h"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using testing::BuildCase;

Report ShiftLines(Report report, int64_t by) {
  for (ModuleReport& m : report.modules) {
    for (BufferRow& r : m.rows) {
      if (r.source_line > 0) r.source_line += by;
    }
  }
  return report;
}

std::map<ChangeKind, int> CountKinds(const ModuleDiff& d) {
  std::map<ChangeKind, int> counts;
  for (const BufferChange& c : d.changes) ++counts[c.change];
  return counts;
}

TEST(DiffMovesTest, ShiftedLinesAreMovedNotNew) {
  const Report a = BuildCase("transformer_block_train_step");
  const Report b = ShiftLines(a, 3);
  const DiffReport diff = DiffReports(a, b);
  ASSERT_EQ(diff.modules.size(), 1u);
  const ModuleDiff& d = diff.modules[0];
  EXPECT_TRUE(d.changes.empty()) << d.changes.size() << " changes, first "
                                 << (d.changes.empty() ? "" : d.changes[0].SourceShown());
  ASSERT_FALSE(d.moved.empty());
  const BufferChange& moved = d.moved.front();
  EXPECT_EQ(moved.bytes_a, moved.bytes_b);
  EXPECT_NE(moved.source, moved.moved_from);
  EXPECT_NE(moved.SourceShown().find("(was :"), std::string::npos) << moved.SourceShown();
}

TEST(DiffMovesTest, RealGrowthSurvivesAShift) {
  // jax-ml/jax#30015 without and with the gradient: the same new and grown
  // buffers whether or not every line of B moved.
  const Report a = BuildCase("seed_gather_grad_int32_nograds");
  const Report b = BuildCase("seed_gather_grad_int32_grads");
  const ModuleDiff plain = DiffReports(a, b).modules.at(0);
  const Report b_shifted = ShiftLines(b, 5);
  const ModuleDiff shifted = DiffReports(a, b_shifted).modules.at(0);
  EXPECT_EQ(CountKinds(plain), CountKinds(shifted));
  int64_t plain_delta = 0, shifted_delta = 0;
  for (const BufferChange& c : plain.changes) plain_delta += c.delta();
  for (const BufferChange& c : shifted.changes) shifted_delta += c.delta();
  EXPECT_EQ(plain_delta, shifted_delta);
  EXPECT_EQ(CountKinds(shifted)[ChangeKind::kGone], CountKinds(plain)[ChangeKind::kGone]);
}

}  // namespace
}  // namespace hlomem::report
