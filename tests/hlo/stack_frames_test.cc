// Python stacks from the StackFrames sections: the user's innermost frame is
// the source line, library frames (flax, site-packages) are skipped, and a
// malformed table cannot loop.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "gtest/gtest.h"
#include "lib/hlo/provenance.h"
#include "lib/hlo/text_parser.h"

namespace hlomem::hlo {
namespace {

// The layout of XLA's 2025+ header sections (a parent is printed as its id
// plus one), with a flax frame inside the user's model code.
constexpr char kModule[] = R"(HloModule m, is_scheduled=true

FileNames
1 "/home/me/train.py"
2 "/home/me/model.py"
3 "/usr/lib/python3.12/site-packages/flax/linen/linear.py"

FunctionNames
1 "<module>"
2 "Model.__call__"
3 "Dense.__call__"

FileLocations
1 {file_name_id=1 function_name_id=1 line=40 end_line=40 column=1 end_column=9}
2 {file_name_id=2 function_name_id=2 line=17 end_line=17 column=5 end_column=30}
3 {file_name_id=3 function_name_id=3 line=250 end_line=250 column=9 end_column=40}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=3}

ENTRY e {
  p = f32[8,8]{1,0} parameter(0)
  ROOT d = f32[8,8]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
}
)";

TEST(StackFramesTest, TheUsersInnermostFrameIsTheSource) {
  absl::StatusOr<std::vector<Module>> parsed = ParseHloString(kModule);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Module& m = (*parsed)[0];
  const InstrId dot = m.FindInstruction("d");
  const std::vector<StackEntry> stack = m.StackOf(3);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack[0].file, "/usr/lib/python3.12/site-packages/flax/linen/linear.py");
  EXPECT_TRUE(stack[0].library);
  EXPECT_EQ(stack[1].file, "/home/me/model.py");
  EXPECT_EQ(stack[1].function, "Model.__call__");
  EXPECT_EQ(stack[2].line, 40);
  EXPECT_EQ(m.ParentFrame(3), 2);
  EXPECT_EQ(m.ParentFrame(1), 0);
  const SourceLocation user = m.SourceOf(dot);
  EXPECT_EQ(user.file, "/home/me/model.py");
  EXPECT_EQ(user.line, 17);
  EXPECT_EQ(user.stack_frame, 3);
  EXPECT_EQ(ProvenanceOf(m, dot).line, 17);
  m.SetFramePolicy({.innermost_only = true});  // --frames all
  EXPECT_EQ(m.SourceOf(dot).line, 250);
  m.SetFramePolicy({});  // resolved once per frame: the same answer
  EXPECT_EQ(m.SourceOf(dot).line, 17);
}

// A trainer installed into a venv and started with `python -m`: its stack
// runs from <frozen runpy> through the trainer's model code into flax.
constexpr char kInstalledTrainer[] = R"(HloModule m, is_scheduled=true

FileNames
1 "<frozen runpy>"
2 "/venv/lib/python3.12/site-packages/trainer/layers/attention.py"
3 "/venv/lib/python3.12/site-packages/flax/linen/linear.py"

FunctionNames
1 "_run_code"
2 "Attention.__call__"
3 "Dense.__call__"

FileLocations
1 {file_name_id=1 function_name_id=1 line=88 end_line=88 column=1 end_column=9}
2 {file_name_id=2 function_name_id=2 line=412 end_line=412 column=5 end_column=30}
3 {file_name_id=3 function_name_id=3 line=250 end_line=250 column=9 end_column=40}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=3}

ENTRY e {
  p = f32[8,8]{1,0} parameter(0)
  ROOT d = f32[8,8]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" stack_frame_id=3}
}
)";

TEST(StackFramesTest, AnInstalledTrainersModelCodeIsTheSource) {
  absl::StatusOr<std::vector<Module>> parsed = ParseHloString(kInstalledTrainer);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Module& m = (*parsed)[0];
  const InstrId dot = m.FindInstruction("d");
  EXPECT_EQ(m.SourceOf(dot).line, 412);
  EXPECT_FALSE(m.StackOf(3)[1].library);
  // With the trainer skipped too, runpy is never the answer: flax's line is.
  m.SetFramePolicy({.skip_packages = {"trainer"}});
  EXPECT_EQ(m.SourceOf(dot).file, "/venv/lib/python3.12/site-packages/flax/linen/linear.py");
  EXPECT_TRUE(m.StackOf(3)[1].library);
}

TEST(StackFramesTest, FrameOrigins) {
  constexpr absl::string_view kVenv = "/opt/venv/lib/python3.12/site-packages/";
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "jax/_src/numpy/lax_numpy.py")), FrameOrigin::kFramework);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "orbax/checkpoint/utils.py")), FrameOrigin::kFramework);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "numpy/core/numeric.py")), FrameOrigin::kFramework);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "typing_extensions.py")), FrameOrigin::kFramework);
  // An installed trainer's model code is the user's.
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "maxtext/layers/attentions.py")), FrameOrigin::kUser);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "transformers/models/gpt2/modeling_flax_gpt2.py")),
            FrameOrigin::kUser);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "penzai/models/transformer/model_parts.py")),
            FrameOrigin::kUser);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "penzai/nn/linear_and_affine.py")), FrameOrigin::kFramework);
  // Named by the user: skipped like a framework, by package or subpackage.
  const std::vector<std::string> more = {"maxtext.utils", "toy"};
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "maxtext/utils/sharding.py"), more), FrameOrigin::kFramework);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "maxtext/layers/attentions.py"), more), FrameOrigin::kUser);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "toy.py"), more), FrameOrigin::kFramework);
  EXPECT_EQ(OriginOfFrame(absl::StrCat(kVenv, "toybox/x.py"), more), FrameOrigin::kUser);
  // Python's own: `python -m` starts in <frozen runpy>.
  EXPECT_EQ(OriginOfFrame("<frozen runpy>"), FrameOrigin::kRuntime);
  EXPECT_EQ(OriginOfFrame("/usr/lib/python3.12/contextlib.py"), FrameOrigin::kRuntime);
  EXPECT_EQ(OriginOfFrame("/root/.pyenv/versions/3.12.1/lib/python3.12/runpy.py"), FrameOrigin::kRuntime);
  EXPECT_EQ(OriginOfFrame("/home/me/lib/python3/train.py"), FrameOrigin::kUser);
  EXPECT_EQ(OriginOfFrame("<stdin>"), FrameOrigin::kUser);
}

bool IsFramework(absl::string_view path) { return OriginOfFrame(path) == FrameOrigin::kFramework; }

TEST(StackFramesTest, LibraryFiles) {
  EXPECT_TRUE(IsFramework("/opt/venv/lib/python3.12/site-packages/optax/_src/alias.py"));
  EXPECT_TRUE(IsFramework("/usr/local/lib/python3.12/dist-packages/flax/linen/normalization.py"));
  EXPECT_TRUE(IsFramework("jax/_src/numpy/lax_numpy.py"));
  EXPECT_TRUE(IsFramework("/src/equinox/equinox/nn/_linear.py"));
  EXPECT_FALSE(IsFramework("/root/hlo_dump/resnet_model.py"));
  EXPECT_FALSE(IsFramework("tools/programs/basic.py"));
  EXPECT_FALSE(IsFramework("myjax/model.py"));
}

}  // namespace
}  // namespace hlomem::hlo
