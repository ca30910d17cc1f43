// Python stacks from the StackFrames sections: the user's innermost frame is
// the source line, library frames (flax, site-packages) are skipped, and a
// malformed table cannot loop.
#include <string>

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
  m.SetFramePolicy(/*innermost_frame_only=*/true);  // --frames all
  EXPECT_EQ(m.SourceOf(dot).line, 250);
  m.SetFramePolicy(false);  // resolved once per frame: the same answer
  EXPECT_EQ(m.SourceOf(dot).line, 17);
}

TEST(StackFramesTest, LibraryFiles) {
  EXPECT_TRUE(IsLibraryFile("/opt/venv/lib/python3.12/site-packages/optax/_src/alias.py"));
  EXPECT_TRUE(IsLibraryFile("/usr/local/lib/python3.12/dist-packages/flax/linen/normalization.py"));
  EXPECT_TRUE(IsLibraryFile("jax/_src/numpy/lax_numpy.py"));
  EXPECT_TRUE(IsLibraryFile("/src/equinox/equinox/nn/_linear.py"));
  EXPECT_FALSE(IsLibraryFile("/root/hlo_dump/resnet_model.py"));
  EXPECT_FALSE(IsLibraryFile("tools/programs/basic.py"));
  EXPECT_FALSE(IsLibraryFile("myjax/model.py"));
}

}  // namespace
}  // namespace hlomem::hlo
