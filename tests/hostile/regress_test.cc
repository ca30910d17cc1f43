// Every input under tests/regress/<target>/ once crashed hlomem (or broke a
// contract the fuzzers check). They are replayed through the fuzz targets
// in every build, so the sanitizer builds catch a regression; the HLO ones
// also have the diagnostic they must produce pinned here.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

// What each HLO regression input must produce now; "" means it is valid.
const std::map<std::string, std::string>& ExpectedHloDiagnostics() {
  static const auto* expected = new std::map<std::string, std::string>{
      // CheckedMul(dims) fit, then `bytes += 4 * rank` for the dynamic
      // dimension sizes overflowed.
      {"dynamic_dims_size_overflow.hlo", "3:12: error: invalid shape: shape's byte size overflows"},
      // RoundUpTo(dim, tile) overflowed before the product was checked.
      {"tile_round_up_overflow.hlo", "3:12: error: invalid shape: padded shape size overflows"},
      {"tail_padding_round_up_overflow.hlo",
       "3:12: error: invalid shape: padded shape size overflows"},
      // (bits + 7) / 8 overflowed for E(n) layouts near 2^63 bits.
      {"packed_element_bits_round_up_overflow.hlo", ""},
      // Valid shapes whose sizes summed past 2^63 in buffer assignment.
      {"total_buffer_bytes_overflow.hlo", "5:3: error: the module's buffers add up to more than"},
      {"zero_tile_dimension.hlo", "3:12: error: invalid shape: invalid tile dimension 0"},
      {"negative_memory_space.hlo", "3:12: error: invalid shape: negative memory space"},
  };
  return *expected;
}

TEST(RegressTest, HloInputsGiveTheirDiagnostics) {
  const std::vector<std::filesystem::path> files = FilesUnder(kRegressDir / "hlo_text");
  ASSERT_FALSE(files.empty());
  for (const std::filesystem::path& file : files) {
    const std::string name = file.filename().string();
    SCOPED_TRACE(name);
    auto expected = ExpectedHloDiagnostics().find(name);
    ASSERT_NE(expected, ExpectedHloDiagnostics().end()) << "add the expected diagnostic";
    absl::StatusOr<std::vector<hlo::Module>> modules =
        hlo::ParseHloString(ReadFileOrDie(file.string()), name);
    absl::Status status = modules.status();
    if (modules.ok()) {
      for (const hlo::Module& m : *modules) {
        if (status.ok()) status = hlo::VerifyModule(m);
      }
    }
    if (expected->second.empty()) {
      EXPECT_TRUE(status.ok()) << status;
    } else {
      EXPECT_THAT(std::string(status.message()), HasSubstr(name + ":" + expected->second));
    }
  }
}

}  // namespace
}  // namespace hlomem::testing
