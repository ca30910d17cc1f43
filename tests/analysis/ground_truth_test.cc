// Runs the engine on the after-optimizations HLO text alone, for every case
// of testdata/jax/MANIFEST.json, and compares with XLA's own numbers: the
// "Total bytes used" of its buffer assignment and jax's memory_analysis().
// Every case must match on both, and each one that does not fails by name.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"
#include "nlohmann/json.hpp"

namespace hlomem::analysis {
namespace {

// Every committed case: a case added to or lost from testdata/jax changes
// this count, and the test says so.
constexpr size_t kCases = 96;
// The cases that also carry the module as a .hlo.pb.
constexpr int kCasesWithProto = 93;

struct Row {
  std::string name;
  int64_t xla = 0, computed = 0;
  bool stats_exact = false;
  std::string note;
};

TEST(GroundTruthTest, TotalsMatchXla) {
  const std::string root = HLOMEM_TESTDATA_DIR;
  std::ifstream in(root + "/jax/MANIFEST.json");
  ASSERT_TRUE(in) << "missing " << root << "/jax/MANIFEST.json";
  const nlohmann::json manifest = nlohmann::json::parse(in);
  std::vector<Row> rows;
  int exact = 0, stats_exact = 0, within_one_percent = 0, proto_checked = 0;
  for (const auto& c : manifest["cases"]) {
    Row row;
    row.name = c["name"];
    row.xla = c["xla_total_bytes"];
    const std::string path = root + "/" + c["directory"].get<std::string>() + "/" +
                             c["role_files"]["after_optimizations"].get<std::string>();
    auto file = FileContents::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    auto modules = hlo::ParseHloText(*file);
    ASSERT_TRUE(modules.ok()) << modules.status().message();
    auto assignment = BufferAssignment::Run(modules->front());
    ASSERT_TRUE(assignment.ok()) << assignment.status().message();
    const AssignmentStats& st = (*assignment)->stats();
    row.computed = st.total_bytes;
    // Bytes live at once can never exceed the bytes allocated.
    const MemoryProfile profile = ComputeMemoryProfile(**assignment);
    EXPECT_LE(profile.peak_live_bytes, st.total_bytes - st.thread_local_bytes) << row.name;
    ASSERT_FALSE(profile.timeline.empty()) << row.name;
    EXPECT_EQ(*std::max_element(profile.timeline.begin(), profile.timeline.end()),
              profile.peak_live_bytes) << row.name;
    const auto& ma = c["memory_analysis"];
    // Each case's total and memory_analysis() fields equal XLA's: a single
    // case that regresses fails here, by name.
    EXPECT_EQ(row.computed, row.xla) << row.name << ": total differs from XLA's Total bytes used";
    for (const auto& [field, computed] :
         {std::pair<const char*, int64_t>{"argument_size_in_bytes", st.argument_bytes},
          {"output_size_in_bytes", st.output_bytes},
          {"alias_size_in_bytes", st.alias_bytes},
          {"temp_size_in_bytes", st.temp_bytes}}) {
      EXPECT_EQ(computed, ma[field].get<int64_t>()) << row.name << ": memory_analysis()." << field;
    }
    row.stats_exact = st.argument_bytes == ma["argument_size_in_bytes"].get<int64_t>() &&
                      st.output_bytes == ma["output_size_in_bytes"].get<int64_t>() &&
                      st.alias_bytes == ma["alias_size_in_bytes"].get<int64_t>() &&
                      st.temp_bytes == ma["temp_size_in_bytes"].get<int64_t>();
    if (!row.stats_exact) {
      row.note = "arg " + std::to_string(st.argument_bytes - ma["argument_size_in_bytes"].get<int64_t>()) +
                 " out " + std::to_string(st.output_bytes - ma["output_size_in_bytes"].get<int64_t>()) +
                 " alias " + std::to_string(st.alias_bytes - ma["alias_size_in_bytes"].get<int64_t>()) +
                 " temp " + std::to_string(st.temp_bytes - ma["temp_size_in_bytes"].get<int64_t>());
    }
    // The same module read from the .hlo.pb must give the same numbers.
    if (c["role_files"].contains("after_optimizations_pb")) {
      const std::string pb = root + "/" + c["directory"].get<std::string>() + "/" +
                             c["role_files"]["after_optimizations_pb"].get<std::string>();
      auto pb_file = FileContents::Open(pb);
      ASSERT_TRUE(pb_file.ok()) << pb_file.status().message();
      auto read = hlo::ReadHloProto(*pb_file);
      ASSERT_TRUE(read.ok()) << read.status().message();
      auto from_proto = BufferAssignment::Run(read->module);
      ASSERT_TRUE(from_proto.ok()) << from_proto.status().message();
      const AssignmentStats& ps = (*from_proto)->stats();
      EXPECT_EQ(ps.total_bytes, st.total_bytes) << row.name << ": .hlo.pb and text differ";
      EXPECT_EQ(ps.temp_bytes, st.temp_bytes) << row.name << ": .hlo.pb and text differ";
      ++proto_checked;
    }
    exact += row.computed == row.xla;
    stats_exact += row.stats_exact;
    const double delta = row.xla == 0 ? 0 : std::abs(double(row.computed - row.xla)) / double(row.xla);
    within_one_percent += delta <= 0.01;
    rows.push_back(row);
  }
  for (const Row& r : rows) {
    std::printf("%-45s xla %15lld computed %15lld delta %12lld %s%s\n", r.name.c_str(),
                static_cast<long long>(r.xla), static_cast<long long>(r.computed),
                static_cast<long long>(r.computed - r.xla), r.stats_exact ? "" : "stats differ: ",
                r.note.c_str());
  }
  std::printf("exact totals: %d/%zu, exact memory_analysis: %d/%zu, within 1%%: %d/%zu\n", exact,
              rows.size(), stats_exact, rows.size(), within_one_percent, rows.size());
  std::printf("text and .hlo.pb compared on %d cases\n", proto_checked);
  EXPECT_EQ(manifest["cases"].size(), kCases) << "testdata/jax/MANIFEST.json lists another number of cases";
  EXPECT_EQ(rows.size(), kCases);
  EXPECT_EQ(exact, static_cast<int>(rows.size()));
  EXPECT_EQ(stats_exact, static_cast<int>(rows.size()));
  EXPECT_EQ(proto_checked, kCasesWithProto);
}

}  // namespace
}  // namespace hlomem::analysis
