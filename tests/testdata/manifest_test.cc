// Checks that testdata/jax/MANIFEST.json is consistent with the committed files:
// every listed file exists, each case's XLA total matches the "Total bytes used"
// line of its committed report files, and the required cases are present.
// The same for testdata/accel/MANIFEST.json: every listed file exists, each
// case's per-colour totals are its buffer-assignment file's (and its
// memory-usage report's), its memory_analysis is memory_analysis.json's, and
// every committed buffer-assignment file belongs to a listed case.
//
// Build: needs HLOMEM_TESTDATA_DIR (string macro: absolute path of testdata/),
// GTest::gtest_main and nlohmann_json::nlohmann_json.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
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

// testdata/accel/MANIFEST.json ///////////////////////////////////////////

const json& AccelManifest() {
  static const json* m = [] {
    auto* j = new json;
    std::ifstream in(kTestdata / "accel" / "MANIFEST.json");
    if (in) *j = json::parse(in, nullptr, /*allow_exceptions=*/false);
    return j;
  }();
  return *m;
}

// The sum of the allocation sizes per colour in a buffer-assignment file:
// "allocation 3: size 65536, color 1, page 0, ..." (no colour: 0). Keys as
// the manifest writes them ("0", "1", ...); a zero-size allocation makes its
// colour appear with 0 bytes.
std::map<std::string, int64_t> TotalsByColorInAssignment(const std::string& text) {
  std::map<std::string, int64_t> totals;
  static const std::string kAllocation = "allocation ";
  static const std::string kSize = ": size ";
  static const std::string kColor = ", color ";
  size_t line = 0;
  while (line < text.size()) {
    size_t eol = text.find('\n', line);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(line, kAllocation.size(), kAllocation) == 0) {
      const size_t size_at = text.find(kSize, line);
      if (size_at != std::string::npos && size_at < eol) {
        const size_t bytes_at = size_at + kSize.size();
        const std::optional<int64_t> bytes = ParseLeadingInt(text, bytes_at);
        std::string color = "0";
        size_t after = bytes_at;
        while (after < eol && text[after] >= '0' && text[after] <= '9') ++after;
        if (text.compare(after, kColor.size(), kColor) == 0) {
          if (auto c = ParseLeadingInt(text, after + kColor.size())) color = std::to_string(*c);
        }
        if (bytes) totals[color] += *bytes;
      }
    }
    line = eol + 1;
  }
  return totals;
}

// The per-memory-space totals of a memory-usage report: "Memory Space:
// vmem (color=1)" followed by "Total bytes: N"; spaces of 0 bytes left out.
std::map<std::string, int64_t> TotalsByColorInUsageReport(const std::string& text) {
  std::map<std::string, int64_t> totals;
  static const std::string kSpace = "Memory Space: ";
  static const std::string kColor = "(color=";
  static const std::string kTotal = "Total bytes: ";
  std::optional<std::string> color;
  size_t line = 0;
  while (line < text.size()) {
    size_t eol = text.find('\n', line);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(line, kSpace.size(), kSpace) == 0) {
      const size_t at = text.find(kColor, line);
      color.reset();
      if (at != std::string::npos && at < eol) {
        if (auto c = ParseLeadingInt(text, at + kColor.size())) color = std::to_string(*c);
      }
    } else if (color && text.compare(line, kTotal.size(), kTotal) == 0) {
      if (auto v = ParseLeadingInt(text, line + kTotal.size()); v && *v != 0) totals[*color] += *v;
      color.reset();
    }
    line = eol + 1;
  }
  return totals;
}

std::map<std::string, int64_t> NonZero(const std::map<std::string, int64_t>& totals) {
  std::map<std::string, int64_t> out;
  for (const auto& [color, bytes] : totals) {
    if (bytes != 0) out[color] = bytes;
  }
  return out;
}

TEST(AccelManifest, ParsesAndHasCases) {
  const json& m = AccelManifest();
  ASSERT_TRUE(m.is_object()) << "cannot read or parse " << (kTestdata / "accel" / "MANIFEST.json");
  ASSERT_TRUE(m.contains("cases") && m["cases"].is_array());
  EXPECT_GE(m["cases"].size(), 500u);
  EXPECT_EQ(m.value("case_count", 0), static_cast<int>(m["cases"].size()));
  std::set<std::string> directories;
  for (const auto& c : m["cases"]) {
    EXPECT_TRUE(directories.insert(c.value("directory", "")).second)
        << "listed twice: " << c.value("directory", "");
  }
}

TEST(AccelManifest, ListedFilesExistAndRolesAreListed) {
  const json& m = AccelManifest();
  ASSERT_TRUE(m.contains("cases"));
  for (const auto& c : m["cases"]) {
    SCOPED_TRACE(c.value("directory", "<no directory>"));
    for (const char* key : {"name", "target", "directory", "files", "role_files", "xla_totals_by_color",
                            "memory_analysis"}) {
      ASSERT_TRUE(c.contains(key)) << "missing key " << key;
    }
    const fs::path dir = kTestdata / c["directory"].get<std::string>();
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::set<std::string> files;
    for (const auto& f : c["files"]) {
      const std::string fn = f.get<std::string>();
      files.insert(fn);
      EXPECT_TRUE(fs::is_regular_file(dir / fn)) << "missing " << (dir / fn);
    }
    for (const auto& [role, f] : c["role_files"].items()) {
      EXPECT_TRUE(files.count(f.get<std::string>())) << role << " " << f << " is not in files";
    }
    // Every case has XLA's figures from one of its files.
    EXPECT_TRUE(c["role_files"].contains("buffer_assignment") ||
                c["role_files"].contains("memory_usage_report"))
        << "no buffer-assignment file and no memory-usage report";
  }
}

// The recorded figures are the committed files': xla_totals_by_color is the
// buffer-assignment file's sum per colour (and the memory-usage report's
// "Total bytes" per memory space), memory_analysis is memory_analysis.json.
TEST(AccelManifest, RecordedFiguresAreTheFilesFigures) {
  const json& m = AccelManifest();
  ASSERT_TRUE(m.contains("cases"));
  int assignments = 0, reports = 0, analyses = 0;
  for (const auto& c : m["cases"]) {
    SCOPED_TRACE(c.value("directory", "<no directory>"));
    const fs::path dir = kTestdata / c.value("directory", "");
    std::map<std::string, int64_t> recorded;
    for (const auto& [color, bytes] : c["xla_totals_by_color"].items()) recorded[color] = bytes.get<int64_t>();
    const json& roles = c["role_files"];
    if (roles.contains("buffer_assignment")) {
      const std::string fn = roles["buffer_assignment"].get<std::string>();
      const std::map<std::string, int64_t> in_file = TotalsByColorInAssignment(ReadFile(dir / fn));
      EXPECT_FALSE(in_file.empty()) << "no allocations in " << fn;
      EXPECT_EQ(recorded, in_file) << fn;
      ++assignments;
    }
    if (roles.contains("memory_usage_report")) {
      const std::string fn = roles["memory_usage_report"].get<std::string>();
      EXPECT_EQ(NonZero(recorded), TotalsByColorInUsageReport(ReadFile(dir / fn))) << fn;
      ++reports;
    }
    const fs::path analysis = dir / "memory_analysis.json";
    if (fs::is_regular_file(analysis)) {
      const json in_file = json::parse(ReadFile(analysis), nullptr, /*allow_exceptions=*/false);
      ASSERT_TRUE(in_file.is_object()) << "cannot parse " << analysis;
      for (const auto& [key, value] : c["memory_analysis"].items()) {
        EXPECT_EQ(in_file.value(key, json()), value) << "memory_analysis." << key;
      }
      ++analyses;
    } else {
      EXPECT_TRUE(c["memory_analysis"].is_null() || c["memory_analysis"].empty())
          << "memory_analysis recorded without memory_analysis.json";
    }
  }
  EXPECT_GE(assignments, 500);
  EXPECT_EQ(reports, static_cast<int>(m["cases"].size()));
  EXPECT_GE(analyses, 400);
}

// Nothing committed is left out of the manifest: every case directory and
// every buffer-assignment file under testdata/accel is a listed case's.
TEST(AccelManifest, EveryCommittedAssignmentIsListed) {
  const json& m = AccelManifest();
  ASSERT_TRUE(m.contains("cases"));
  std::set<fs::path> listed_assignments, listed_directories;
  for (const auto& c : m["cases"]) {
    const fs::path dir = (kTestdata / c.value("directory", "")).lexically_normal();
    listed_directories.insert(dir);
    if (c["role_files"].contains("buffer_assignment")) {
      listed_assignments.insert(dir / c["role_files"]["buffer_assignment"].get<std::string>());
    }
  }
  int committed = 0;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(kTestdata / "accel")) {
    const fs::path path = e.path().lexically_normal();
    if (e.is_directory() && path.parent_path().parent_path() == (kTestdata / "accel").lexically_normal()) {
      EXPECT_TRUE(listed_directories.count(path)) << "case directory not in the manifest: " << path;
    }
    if (!e.is_regular_file() || !EndsWith(path.filename().string(), "-buffer-assignment.txt")) continue;
    ++committed;
    EXPECT_TRUE(listed_assignments.count(path)) << "buffer-assignment file not in the manifest: " << path;
  }
  EXPECT_EQ(committed, static_cast<int>(listed_assignments.size()));
}

}  // namespace
