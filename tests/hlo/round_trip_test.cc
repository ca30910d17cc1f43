// Parse -> print -> parse must rebuild the same model for every real module
// we have: the shared corpus (skipped visibly without it) and the committed
// JAX dumps.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/module_diff.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/text_parser.h"
#include "tests/hlo/hlo_files.h"

namespace hlomem::hlo {
namespace {

void ExpectRoundTrip(const std::string& path) {
  auto file = FileContents::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto first = ParseHloText(*file);
  ASSERT_TRUE(first.ok()) << first.status().message();
  for (const Module& module : *first) {
    const std::string printed = PrintModule(module);
    auto second = ParseHloString(printed, path + " (printed)");
    ASSERT_TRUE(second.ok()) << second.status().message();
    ASSERT_EQ(second->size(), 1u);
    EXPECT_EQ(DiffModules(module, second->front()), "") << path;
    // Printing is a fixed point after one round.
    EXPECT_EQ(PrintModule(second->front()), printed) << path;
  }
}

TEST(RoundTripTest, SharedCorpus) {
  const std::vector<std::string> files = HloTextFilesUnder(HLOMEM_CORPUS_DIR);
  if (files.empty()) GTEST_SKIP() << HLOMEM_CORPUS_DIR << " is absent";
  for (const std::string& path : files) ExpectRoundTrip(path);
  EXPECT_GE(files.size(), 25u);
}

TEST(RoundTripTest, CommittedJaxDumps) {
  const std::vector<std::string> files =
      HloTextFilesUnder(std::string(HLOMEM_TESTDATA_DIR) + "/jax");
  ASSERT_GE(files.size(), 80u);
  for (const std::string& path : files) ExpectRoundTrip(path);
}

}  // namespace
}  // namespace hlomem::hlo
