// Parse -> print -> parse must rebuild the same model for every real module
// we have: the shared corpus (skipped visibly without it) and the committed
// JAX dumps.
#include <dirent.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/module_diff.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/text_parser.h"

namespace hlomem::hlo {
namespace {

void CollectFiles(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      CollectFiles(path, out);
    } else if (absl::EndsWith(name, ".hlo") || absl::EndsWith(name, "optimizations.txt") ||
               absl::EndsWith(name, ".hlo.txt") || absl::EndsWith(name, "_optimization.hlo")) {
      out->push_back(path);
    }
  }
  ::closedir(d);
  std::sort(out->begin(), out->end());
}

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
  std::vector<std::string> files;
  CollectFiles(HLOMEM_CORPUS_DIR, &files);
  if (files.empty()) GTEST_SKIP() << HLOMEM_CORPUS_DIR << " is absent";
  for (const std::string& path : files) ExpectRoundTrip(path);
  EXPECT_GE(files.size(), 25u);
}

TEST(RoundTripTest, CommittedJaxDumps) {
  std::vector<std::string> files;
  CollectFiles(std::string(HLOMEM_TESTDATA_DIR) + "/jax", &files);
  ASSERT_GE(files.size(), 80u);
  for (const std::string& path : files) ExpectRoundTrip(path);
}

}  // namespace
}  // namespace hlomem::hlo
