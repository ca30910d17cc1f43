#include "tests/hostile/scratch_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hlomem::testing {

ScratchDir::ScratchDir() {
  std::string pattern = ::testing::TempDir() + "/hlomem_hostile.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << pattern;
  }
  path_ = name.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  // Entries a test made unreadable must be reachable to be removed.
  for (auto it = std::filesystem::recursive_directory_iterator(
           path_, std::filesystem::directory_options::skip_permission_denied, ignored);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
    if (!it->is_symlink(ignored)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ignored);
    }
  }
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::Write(absl::string_view name, absl::string_view contents) const {
  const std::string path = absl::StrCat(path_, "/", name);
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

bool HasLocatedError(absl::string_view output, absl::string_view path) {
  const std::string prefix = absl::StrCat(path, ":");
  for (size_t at = output.find(prefix); at != absl::string_view::npos;
       at = output.find(prefix, at + 1)) {
    absl::string_view rest = output.substr(at + prefix.size());
    int numbers = 0;
    while (numbers < 2 && !rest.empty() && absl::ascii_isdigit(static_cast<unsigned char>(rest[0]))) {
      while (!rest.empty() && absl::ascii_isdigit(static_cast<unsigned char>(rest[0]))) {
        rest.remove_prefix(1);
      }
      if (rest.empty() || rest[0] != ':') break;
      rest.remove_prefix(1);
      ++numbers;
    }
    if (numbers == 2 && absl::StartsWith(rest, " error: ")) return true;
  }
  return false;
}

bool HasErrorFor(absl::string_view output, absl::string_view path) {
  return HasLocatedError(output, path) ||
         absl::StrContains(output, absl::StrCat(path, ": error: "));
}

}  // namespace hlomem::testing
