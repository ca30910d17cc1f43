// Module pairing across a baseline or a diff: repeated names pair with
// their own program, then by signature, then by name where counts agree.
#include "lib/report/pairing.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/report/diff.h"

namespace hlomem::report {
namespace {

ModuleReport Module(const std::string& name, const std::string& signature, int64_t instructions) {
  ModuleReport m;
  m.name = name;
  m.signature = signature;
  m.instruction_count = instructions;
  m.computed = MemoryNumbers{};
  return m;
}

// Which of a's modules each of b's pairs with (its index, -1 for none), in
// b's order.
std::vector<int> PartnersOfB(const Report& a, const Report& b) {
  std::vector<int> out;
  for (const ModulePair& p : PairModules(a, b, true)) {
    if (p.b == nullptr) continue;
    out.push_back(p.a == nullptr ? -1 : static_cast<int>(p.a - a.modules.data()));
  }
  return out;
}

TEST(PairingTest, RepeatedNamesPairWithTheirOwnProgram) {
  Report a, b;
  a.modules = {Module("jit_step", "(f32[64,8])->f32[]", 40), Module("jit_step", "(f32[40,8])->f32[]", 40)};
  // The short-batch compile comes first in b.
  b.modules = {Module("jit_step", "(f32[40,8])->f32[]", 40), Module("jit_step", "(f32[64,8])->f32[]", 40)};
  EXPECT_EQ(PartnersOfB(a, b), (std::vector<int>{1, 0}));
  for (const ModulePair& p : PairModules(a, b, true)) EXPECT_EQ(p.basis, PairBasis::kProgram);
}

TEST(PairingTest, ChangedCodePairsBySignature) {
  Report a, b;
  a.modules = {Module("jit_step", "(f32[64,8])->f32[]", 40), Module("jit_step", "(f32[40,8])->f32[]", 40)};
  b.modules = {Module("jit_step", "(f32[64,8])->f32[]", 52), Module("jit_step", "(f32[40,8])->f32[]", 52)};
  EXPECT_EQ(PartnersOfB(a, b), (std::vector<int>{0, 1}));
  EXPECT_EQ(PairModules(a, b, true)[1].basis, PairBasis::kSignature);
}

TEST(PairingTest, ChangedShapesPairByNameWhereCountsAgree) {
  Report a, b;
  a.modules = {Module("jit_step", "(f32[64,8])->f32[]", 40), Module("jit_step", "(f32[40,8])->f32[]", 40),
               Module("jit_init", "(u32[2])->f32[296,8]", 9)};
  b.modules = {Module("jit_step", "(f32[64,8])->f32[]", 40), Module("jit_step", "(f32[48,8])->f32[]", 40),
               Module("jit_init", "(u32[2])->f32[304,8]", 9)};
  EXPECT_EQ(PartnersOfB(a, b), (std::vector<int>{0, 1, 2}));
  const std::vector<ModulePair> pairs = PairModules(a, b, true);
  EXPECT_EQ(pairs[0].basis, PairBasis::kProgram);
  EXPECT_EQ(pairs[1].basis, PairBasis::kName);
  EXPECT_EQ(pairs[2].basis, PairBasis::kName);
}

TEST(PairingTest, AnExtraCompileIsUnpairedOnBothSidesOfItsName) {
  // Three jit_step now, two before, none with the same program: which one
  // is new cannot be told, so none of them is compared by name.
  Report a, b;
  a.modules = {Module("jit_step", "(f32[64])->f32[]", 4), Module("jit_step", "(f32[40])->f32[]", 4)};
  b.modules = {Module("jit_step", "(f32[32])->f32[]", 4), Module("jit_step", "(f32[16])->f32[]", 4),
               Module("jit_step", "(f32[8])->f32[]", 4)};
  EXPECT_EQ(PartnersOfB(a, b), (std::vector<int>{-1, -1, -1}));
  const std::vector<ModulePair> pairs = PairModules(a, b, true);
  ASSERT_EQ(pairs.size(), 5u);  // b's three, then a's two
  EXPECT_EQ(pairs[3].b, nullptr);
  EXPECT_EQ(pairs[3].a, &a.modules[0]);
  EXPECT_EQ(pairs[4].a, &a.modules[1]);
}

TEST(PairingTest, OldBaselinesWithoutSignaturesPairByNameInOrder) {
  Report a, b;
  a.modules = {Module("jit_step", "", 0), Module("jit_step", "", 0), Module("jit_gone", "", 0)};
  b.modules = {Module("jit_step", "(f32[64])->f32[]", 4), Module("jit_step", "(f32[40])->f32[]", 4)};
  EXPECT_EQ(PartnersOfB(a, b), (std::vector<int>{0, 1}));
  const std::vector<ModulePair> pairs = PairModules(a, b, true);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[2].a, &a.modules[2]);
  EXPECT_EQ(pairs[2].b, nullptr);
}

TEST(PairingTest, TheOnlyModuleOnEachSidePairsWhateverItsName) {
  Report a, b;
  a.modules = {Module("jit_loss", "(f32[8])->f32[]", 4)};
  b.modules = {Module("jit_loss_v2", "(f32[16])->f32[]", 6)};
  const std::vector<ModulePair> pairs = PairModules(a, b, true);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].a, &a.modules[0]);
  EXPECT_EQ(pairs[0].basis, PairBasis::kOnly);
  // A gate never compares differently named programs.
  EXPECT_EQ(PairModules(a, b, false)[0].a, nullptr);
}

TEST(PairingTest, DiffListsModulesOnlyInA) {
  Report a, b;
  a.modules = {Module("jit_step", "(f32[64])->f32[]", 4), Module("jit_step", "(f32[40])->f32[]", 4),
               Module("jit_eval", "(f32[64])->f32[]", 3)};
  b.modules = {Module("jit_step", "(f32[64])->f32[]", 4)};
  const DiffReport diff = DiffReports(a, b);
  ASSERT_EQ(diff.modules.size(), 3u);
  EXPECT_EQ(diff.modules[0].a, &a.modules[0]);
  EXPECT_EQ(diff.modules[1].a, &a.modules[1]);
  EXPECT_EQ(diff.modules[1].b, nullptr);
  EXPECT_EQ(diff.modules[2].a, &a.modules[2]);
  EXPECT_EQ(diff.modules[2].b, nullptr);
}

TEST(PairingTest, SignatureChangeNamesOnlyWhatChanged) {
  EXPECT_EQ(SignatureChange("(f32[2], (s32[4], f32[1,2]))->f32[]", "(f32[2], (s32[4], f32[1,2]))->f32[]"), "");
  EXPECT_EQ(SignatureChange("(f32[2], (s32[4], f32[1,2]), u8[3])->f32[]",
                            "(f32[2], (s32[8], f32[1,2]), u8[3])->(f32[], f32[2])"),
            "parameter 1 (s32[4], f32[1,2]) -> (s32[8], f32[1,2]); result f32[] -> (f32[], f32[2])");
  EXPECT_EQ(SignatureChange("(f32[2])->f32[]", "(f32[2], f32[2])->f32[]"),
            "was (f32[2])->f32[], now (f32[2], f32[2])->f32[]");
}

}  // namespace
}  // namespace hlomem::report
