// Checks that testdata/jax/MANIFEST.json is consistent with the committed files:
// every listed file exists, each case's XLA total matches the "Total bytes used"
// line of its committed report files, and the required cases are present.
//
// Build: needs HLOMEM_TESTDATA_DIR (string macro: absolute path of testdata/),
// GTest::gtest_main and nlohmann_json::nlohmann_json.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#ifndef HLOMEM_TESTDATA_DIR
#error "HLOMEM_TESTDATA_DIR must be defined (absolute path of the testdata/ directory)"
#endif

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kTestdata{HLOMEM_TESTDATA_DIR};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const json& Manifest() {
  static const json* m = [] {
    auto* j = new json;
    const fs::path p = kTestdata / "jax" / "MANIFEST.json";
    std::ifstream in(p);
    if (in) *j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    return j;
  }();
  return *m;
}

std::optional<int64_t> ParseLeadingInt(const std::string& text, size_t pos) {
  size_t end = pos;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  if (end == pos) return std::nullopt;
  return std::stoll(text.substr(pos, end - pos));
}

// The XLA total in a report file:
//  * the first "Total bytes used: N" line (buffer-assignment text, the
//    -buffer-assignment-values.txt split file, and memory-usage reports up to 2026-03), or
//  * the sum of the per-memory-space "Total bytes: N" lines (memory-usage report
//    produced from MemoryUsageReportProto, since 2026-03).
std::optional<int64_t> TotalInReport(const std::string& text) {
  static const std::string kUsed = "Total bytes used: ";
  static const std::string kPerSpace = "Total bytes: ";
  std::optional<int64_t> per_space_sum;
  size_t line = 0;
  while (line < text.size()) {
    size_t eol = text.find('\n', line);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(line, kUsed.size(), kUsed) == 0) {
      if (auto v = ParseLeadingInt(text, line + kUsed.size())) return v;  // first one wins
    } else if (text.compare(line, kPerSpace.size(), kPerSpace) == 0) {
      if (auto v = ParseLeadingInt(text, line + kPerSpace.size())) {
        per_space_sum = per_space_sum.value_or(0) + *v;
      }
    }
    line = eol + 1;
  }
  return per_space_sum;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(Manifest, ParsesAndHasCases) {
  const json& m = Manifest();
  ASSERT_TRUE(m.is_object()) << "cannot read or parse " << (kTestdata / "jax" / "MANIFEST.json");
  ASSERT_TRUE(m.contains("cases"));
  ASSERT_TRUE(m["cases"].is_array());
  EXPECT_GE(m["cases"].size(), 44u);
  EXPECT_EQ(m.value("case_count", 0), static_cast<int>(m["cases"].size()));
}

TEST(Manifest, HasSeedCases) {
  const json& m = Manifest();
  ASSERT_TRUE(m.contains("cases"));
  std::set<std::string> names;
  for (const auto& c : m["cases"]) names.insert(c.value("name", ""));
  for (const char* n : {"seed_gather_grad_int32_grads", "seed_gather_grad_int32_nograds",
                        "seed_gather_grad_int16_grads", "seed_gather_grad_int16_nograds"}) {
    EXPECT_TRUE(names.count(n)) << "missing seed case " << n;
  }
  EXPECT_EQ(names.size(), m["cases"].size()) << "duplicate case names";
}

TEST(Manifest, SeedTotalsMatchIssue) {
  // jax-ml/jax#30015 reports these totals for the int32 program.
  const json& m = Manifest();
  ASSERT_TRUE(m.contains("cases"));
  int seen = 0;
  for (const auto& c : m["cases"]) {
    const std::string name = c.value("name", "");
    if (name == "seed_gather_grad_int32_nograds") {
      EXPECT_EQ(c["xla_total_bytes"].get<int64_t>(), int64_t{138521083996});
      ++seen;
    } else if (name == "seed_gather_grad_int32_grads") {
      EXPECT_EQ(c["xla_total_bytes"].get<int64_t>(), int64_t{240526557204});
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << "both int32 seed cases are listed once";
}

TEST(Manifest, CaseEntriesAreComplete) {
  const json& m = Manifest();
  ASSERT_TRUE(m.contains("cases"));
  for (const auto& c : m["cases"]) {
    const std::string name = c.value("name", "<unnamed>");
    SCOPED_TRACE(name);
    for (const char* key : {"name", "directory", "files", "jax_version", "jaxlib_version",
                            "xla_total_bytes", "memory_analysis"}) {
      EXPECT_TRUE(c.contains(key)) << "missing key " << key;
    }
    if (!c.contains("memory_analysis")) continue;
    const json& ma = c["memory_analysis"];
    for (const char* key : {"argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
                            "temp_size_in_bytes", "generated_code_size_in_bytes"}) {
      EXPECT_TRUE(ma.contains(key) && ma[key].is_number_integer()) << "memory_analysis." << key;
    }
  }
}

TEST(Manifest, ListedFilesExist) {
  const json& m = Manifest();
  ASSERT_TRUE(m.contains("cases"));
  for (const auto& c : m["cases"]) {
    const std::string name = c.value("name", "<unnamed>");
    SCOPED_TRACE(name);
    const fs::path dir = kTestdata / c.value("directory", "");
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    bool has_after = false, has_report = false, has_case_json = false;
    for (const auto& f : c["files"]) {
      const std::string fn = f.get<std::string>();
      EXPECT_TRUE(fs::is_regular_file(dir / fn)) << "missing " << (dir / fn);
      has_after |= EndsWith(fn, "after_optimizations.txt");
      has_report |= EndsWith(fn, "-buffer-assignment.txt");
      has_case_json |= fn == "case.json";
    }
    EXPECT_TRUE(has_after) << "no after-optimizations HLO text";
    EXPECT_TRUE(has_report) << "no buffer-assignment text";
    EXPECT_TRUE(has_case_json) << "no case.json";
  }
}

TEST(Manifest, XlaTotalsMatchReports) {
  const json& m = Manifest();
  ASSERT_TRUE(m.contains("cases"));
  for (const auto& c : m["cases"]) {
    const std::string name = c.value("name", "<unnamed>");
    SCOPED_TRACE(name);
    const fs::path dir = kTestdata / c.value("directory", "");
    const int64_t want = c.value("xla_total_bytes", int64_t{-1});
    int checked = 0;
    for (const auto& f : c["files"]) {
      const std::string fn = f.get<std::string>();
      // The memory-usage report, the buffer-assignment text and (since 2026-04)
      // the -buffer-assignment-values.txt split file carry the total.
      if (!EndsWith(fn, "-memory-usage-report.txt") && !EndsWith(fn, "-buffer-assignment.txt") &&
          !EndsWith(fn, "-buffer-assignment-values.txt")) {
        continue;
      }
      const std::string text = ReadFile(dir / fn);
      const std::optional<int64_t> got = TotalInReport(text);
      if (EndsWith(fn, "-buffer-assignment.txt") && !got) continue;  // 2026-04+ layout: no total
      ASSERT_TRUE(got.has_value()) << "no total in " << fn;
      EXPECT_EQ(*got, want) << fn;
      ++checked;
    }
    EXPECT_GE(checked, 1) << "no report file with a total";
  }
}

}  // namespace
