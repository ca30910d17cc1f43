// The samples in README.md and docs/*.md are the binary's own output: every
// fenced block that starts with `$ hlomem ...` is run from the repository
// root (with this build's hlomem first on PATH, stderr merged) and must print
// what the block shows, so that no sample is older than the code.
// HLOMEM_UPDATE_DOCS=1 rewrites the blocks with what the commands print now;
// review the diff. Relative links in those files must name files that exist.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/run_command.h"
#include "tests/common/temp_path.h"

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(HLOMEM_TESTDATA_DIR).parent_path();

std::vector<std::string> ReadLines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<fs::path> DocFiles() {
  std::vector<fs::path> files = {kRoot / "README.md"};
  std::vector<fs::path> docs;
  if (fs::is_directory(kRoot / "docs")) {
    for (const auto& entry : fs::directory_iterator(kRoot / "docs")) {
      if (entry.path().extension() == ".md") docs.push_back(entry.path());
    }
  }
  std::sort(docs.begin(), docs.end());
  files.insert(files.end(), docs.begin(), docs.end());
  return files;
}

// One `$ hlomem ...` line of a fenced block and the lines it must print:
// lines [first, last) of the file, after the command's line.
struct Sample {
  std::string command;
  size_t command_line = 0;  // 0-based
  size_t first = 0;
  size_t last = 0;
};

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::vector<Sample> FindSamples(const std::vector<std::string>& lines) {
  std::vector<Sample> samples;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!StartsWith(lines[i], "```")) continue;
    size_t end = i + 1;
    while (end < lines.size() && !StartsWith(lines[end], "```")) ++end;
    if (i + 1 < end && StartsWith(lines[i + 1], "$ hlomem ")) {
      for (size_t j = i + 1; j < end;) {
        Sample sample;
        sample.command = lines[j].substr(2);
        sample.command_line = j;
        sample.first = ++j;
        while (j < end && !StartsWith(lines[j], "$ ")) ++j;
        sample.last = j;
        samples.push_back(sample);
      }
    }
    i = end;
  }
  return samples;
}

std::string RunSample(const std::string& command) {
  const fs::path script = hlomem::testing::TempPath("docs_sample.sh");
  {
    std::ofstream out(script);
    out << "cd '" << kRoot.string() << "' || exit 99\n"
        << "export PATH='" << fs::path(HLOMEM_BINARY).parent_path().string() << "':\"$PATH\"\n"
        << "unset XLA_FLAGS GITHUB_ACTIONS GITHUB_WORKSPACE\n"
        << command << "\n";
  }
  std::string out = hlomem::testing::RunCommand("bash '" + script.string() + "' 2>&1").out;
  fs::remove(script);
  return out;
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Join(const std::vector<std::string>& lines, size_t first, size_t last) {
  std::string text;
  for (size_t i = first; i < last; ++i) text += lines[i] + "\n";
  return text;
}

TEST(DocsSamplesTest, EverySampleIsWhatTheBinaryPrints) {
  const bool update = std::getenv("HLOMEM_UPDATE_DOCS") != nullptr;
  size_t readme_samples = 0;
  for (const fs::path& path : DocFiles()) {
    std::vector<std::string> lines = ReadLines(path);
    const std::vector<Sample> samples = FindSamples(lines);
    if (path.filename() == "README.md") readme_samples = samples.size();
    // Rewritten from the last sample up, so that earlier line numbers hold.
    bool changed = false;
    for (auto it = samples.rbegin(); it != samples.rend(); ++it) {
      const std::string expected = Join(lines, it->first, it->last);
      const std::string actual = RunSample(it->command);
      if (actual == expected) continue;
      if (update) {
        const std::vector<std::string> fresh = SplitLines(actual);
        lines.erase(lines.begin() + it->first, lines.begin() + it->last);
        lines.insert(lines.begin() + it->first, fresh.begin(), fresh.end());
        changed = true;
      } else {
        ADD_FAILURE() << path.lexically_relative(kRoot).string() << ":" << it->command_line + 1
                      << ": `" << it->command << "` prints something else now "
                      << "(HLOMEM_UPDATE_DOCS=1 rewrites the sample)\n--- the file shows:\n"
                      << expected << "--- the binary prints:\n" << actual;
      }
    }
    if (changed) {
      std::ofstream out(path);
      for (const auto& line : lines) out << line << "\n";
    }
  }
  // The README shows the report and the gate; an empty match is a broken test.
  EXPECT_GE(readme_samples, 2u);
}

TEST(DocsSamplesTest, RelativeLinksNameFilesThatExist) {
  for (const fs::path& path : DocFiles()) {
    const std::vector<std::string> lines = ReadLines(path);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
        const size_t end = line.find(')', at + 2);
        if (end == std::string::npos) break;
        std::string target = line.substr(at + 2, end - at - 2);
        if (target.empty() || target[0] == '#' || target.find("://") != std::string::npos ||
            StartsWith(target, "mailto:")) {
          continue;
        }
        target = target.substr(0, target.find('#'));
        EXPECT_TRUE(fs::exists(path.parent_path() / target))
            << path.lexically_relative(kRoot).string() << ":" << i + 1 << ": the link to "
            << target << " names no file";
      }
    }
  }
}

TEST(DocsSamplesTest, TheReadmeStaysShort) {
  // Issue 30: a newcomer's page. Reference material belongs in docs/.
  EXPECT_LE(ReadLines(kRoot / "README.md").size(), 260u)
      << "README.md has grown past about 250 lines: move reference material to docs/";
}

}  // namespace
