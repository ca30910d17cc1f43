// Every input under tests/regress/<target>/ once crashed hlomem (or broke a
// contract the fuzzers check). They are replayed through the fuzz targets
// in every build, so the sanitizer builds catch a regression; the HLO ones
// also have the diagnostic they must produce pinned here.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/hostile/scratch_dir.h"

namespace hlomem::testing {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kRegressDir = HLOMEM_REGRESS_DIR;

std::vector<std::filesystem::path> FilesUnder(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RegressTest, EveryInputReplaysThroughItsFuzzTarget) {
  int replayed = 0;
  for (const fuzz::FuzzTarget& target : fuzz::FuzzTargets()) {
    for (const std::filesystem::path& file : FilesUnder(kRegressDir / std::string(target.name))) {
      SCOPED_TRACE(file.string());
      target.run(ReadFileOrDie(file.string()));
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0);
}

// What each HLO regression input must produce now, by "<target>/<file>";
// "" means the input is a valid module.
const std::map<std::string, std::string>& ExpectedHloDiagnostics() {
  static const auto* expected = new std::map<std::string, std::string>{
      // CheckedMul(dims) fit, then `bytes += 4 * rank` for the dynamic
      // dimension sizes overflowed.
      {"hlo_text/dynamic_dims_size_overflow.hlo",
       ":3:12: error: invalid shape: shape's byte size overflows"},
      // RoundUpTo(dim, tile) overflowed before the product was checked.
      {"hlo_text/tile_round_up_overflow.hlo",
       ":3:12: error: invalid shape: padded shape size overflows"},
      {"hlo_text/tail_padding_round_up_overflow.hlo",
       ":3:12: error: invalid shape: padded shape size overflows"},
      // (bits + 7) / 8 overflowed for E(n) layouts near 2^63 bits.
      {"hlo_text/packed_element_bits_round_up_overflow.hlo", ""},
      // Valid shapes whose sizes summed past 2^63 in buffer assignment.
      {"hlo_text/total_buffer_bytes_overflow.hlo",
       ":5:3: error: the module's buffers add up to more than"},
      {"hlo_text/zero_tile_dimension.hlo", ":3:12: error: invalid shape: invalid tile dimension 0"},
      {"hlo_text/negative_memory_space.hlo", ":3:12: error: invalid shape: negative memory space"},
      // `t = tuple(t#0)`: the compact operand's base was the instruction
      // being parsed, whose id is not assigned yet (read as index 2^32-1).
      {"hlo_text/compact_operand_names_its_own_instruction.hlo",
       ":3:26: error: compact operand 't#0' refers to an instruction not defined before it"},
      // A fusion whose output has more leaves than its computation's root
      // tuple: the in-place analysis read past the root's operands.
      {"hlo_text/fusion_deeper_than_its_root.hlo",
       ":8:3: error: fusion's shape (f32[], f32[]) does not nest like the root of its "
       "computation 'f', (f32[])"},
      // A bitcast with no operand in a while body: the loop-carried-copy
      // detector read its operand 0.
      {"hlo_proto/bitcast_without_operand.hlo.pb",
       ": error: instruction 'bitcast.46': bitcast needs at least 1 operand(s), has 0"},
  };
  return *expected;
}

absl::Status ParseAndVerify(const std::string& target, const std::string& name,
                            const std::string& bytes) {
  std::vector<hlo::Module> modules;
  if (target == "hlo_text") {
    absl::StatusOr<std::vector<hlo::Module>> parsed = hlo::ParseHloString(bytes, name);
    if (!parsed.ok()) return parsed.status();
    modules = std::move(*parsed);
  } else {
    absl::StatusOr<hlo::ProtoReadResult> read =
        hlo::ReadHloProto(FileContents::FromString(name, bytes));
    if (!read.ok()) return read.status();
    modules.push_back(std::move(read->module));
  }
  for (const hlo::Module& m : modules) {
    absl::Status verified = hlo::VerifyModule(m);
    if (!verified.ok()) return verified;
  }
  return absl::OkStatus();
}

TEST(RegressTest, HloInputsGiveTheirDiagnostics) {
  int checked = 0;
  for (const std::string target : {"hlo_text", "hlo_proto"}) {
    for (const std::filesystem::path& file : FilesUnder(kRegressDir / target)) {
      const std::string name = file.filename().string();
      const std::string key = target + "/" + name;
      SCOPED_TRACE(key);
      auto expected = ExpectedHloDiagnostics().find(key);
      ASSERT_NE(expected, ExpectedHloDiagnostics().end()) << "add the expected diagnostic";
      const absl::Status status = ParseAndVerify(target, name, ReadFileOrDie(file.string()));
      if (expected->second.empty()) {
        EXPECT_TRUE(status.ok()) << status;
      } else {
        EXPECT_THAT(std::string(status.message()), HasSubstr(name + expected->second));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(ExpectedHloDiagnostics().size()));
}

}  // namespace
}  // namespace hlomem::testing
