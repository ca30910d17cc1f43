// The analysis asks its target, and only its target, for the backend's
// rules: a fake target that records its questions and answers them its own
// way must see its answers in the assignment.
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/hlo/text_parser.h"
#include "lib/target/target.h"

namespace hlomem::analysis {
namespace {

// exp(a) feeds a loop fusion that negates it, and the sum of the fusion
// with itself is sliced to the output: three temps, each of which could
// take over its operand's buffer (the generic rules agree).
constexpr absl::string_view kModule = R"(HloModule seam, is_scheduled=true

%fused (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%p)
}

ENTRY %main (a: f32[8]) -> f32[4] {
  %a = f32[8]{0} parameter(0)
  %e = f32[8]{0} exponential(%a)
  %f = f32[8]{0} fusion(%e), kind=kLoop, calls=%fused
  %t = f32[8]{0} add(%f, %f)
  ROOT %s = f32[4]{0} slice(%t), slice={[0:4]}
}
)";

class RecordingTarget final : public target::Target {
 public:
  explicit RecordingTarget(std::optional<bool> may_alias)
      : Target(target::Backend::kUnknown, "recording"), may_alias_(may_alias) {}

  int64_t BufferBytes(const hlo::ShapeTable& shapes, hlo::ShapeId shape) const override {
    sized_.insert(shapes.ToString(shape));
    return 125 * shapes.ByteSize(shape);  // f32[8]: 4000 bytes, f32[4]: 2000
  }
  int64_t Alignment(int64_t color) const override {
    aligned_colors_.insert(color);
    return 4096;
  }
  std::optional<bool> MayAlias(const hlo::Module& module, hlo::InstrId operand, const hlo::ShapeIndex&,
                               hlo::InstrId user, const hlo::ShapeIndex&) const override {
    asked_alias_.insert({std::string(module.instr(operand).name), std::string(module.instr(user).name)});
    return may_alias_;
  }

  mutable std::set<std::string> sized_;
  mutable std::set<int64_t> aligned_colors_;
  mutable std::set<std::pair<std::string, std::string>> asked_alias_;

 private:
  std::optional<bool> may_alias_;
};

struct Result {
  std::vector<hlo::Module> modules;
  std::unique_ptr<BufferAssignment> assignment;
};

Result AssignWith(const target::Target& target) {
  Result out;
  auto modules = hlo::ParseHloString(kModule, "seam.hlo");
  EXPECT_TRUE(modules.ok()) << modules.status().message();
  if (!modules.ok()) return out;
  out.modules = std::move(*modules);
  auto assignment = BufferAssignment::Run(out.modules.front(), target);
  EXPECT_TRUE(assignment.ok()) << assignment.status().message();
  if (assignment.ok()) out.assignment = std::move(*assignment);
  return out;
}

int64_t TempBytes(const BufferAssignment& a) { return a.stats().temp_bytes; }

TEST(TargetSeamTest, SizesAndAlignmentComeFromTheTarget) {
  RecordingTarget target(std::nullopt);
  Result r = AssignWith(target);
  ASSERT_NE(r.assignment, nullptr);
  EXPECT_EQ(target.sized_, (std::set<std::string>{"f32[4]{0}", "f32[8]{0}"}));
  EXPECT_EQ(target.aligned_colors_, std::set<int64_t>{0});
  for (const Allocation& a : r.assignment->allocations()) {
    if (a.is_parameter) EXPECT_EQ(a.size, 4000);
    if (a.maybe_live_out) EXPECT_EQ(a.size, 2000);
    for (const Allocation::Slice& slice : a.slices) EXPECT_EQ(slice.offset % 4096, 0);
  }
  // Each overwrite was put to the target.
  EXPECT_TRUE(target.asked_alias_.count({"e", "f"}));
  EXPECT_TRUE(target.asked_alias_.count({"f", "t"}));
}

TEST(TargetSeamTest, TheTargetsAliasAnswerDecidesSharing) {
  RecordingTarget shares(true);
  RecordingTarget refuses(false);
  Result shared = AssignWith(shares);
  Result apart = AssignWith(refuses);
  ASSERT_NE(shared.assignment, nullptr);
  ASSERT_NE(apart.assignment, nullptr);
  // Sharing: e, f and t in one 4000-byte slot. Refused: f overlaps both e
  // and t, which do not overlap each other: two slots, 4096 apart.
  EXPECT_EQ(TempBytes(*shared.assignment), 4000);
  EXPECT_EQ(TempBytes(*apart.assignment), 4096 + 4000);
}

}  // namespace
}  // namespace hlomem::analysis
