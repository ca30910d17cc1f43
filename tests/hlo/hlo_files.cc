#include "tests/hlo/hlo_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"

namespace hlomem::hlo {
namespace {

void Collect(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      Collect(path, out);
    } else if (absl::EndsWith(name, ".hlo") || absl::EndsWith(name, ".hlo.txt") ||
               absl::EndsWith(name, "optimizations.txt")) {
      out->push_back(path);
    }
  }
  ::closedir(d);
}

}  // namespace

std::vector<std::string> HloTextFilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  Collect(dir, &files);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace hlomem::hlo
