// Validates real `report --format json` output against the committed JSON
// Schema (lib/report/report.schema.json) with a minimal checker of the
// keywords the schema uses: type, required, properties, items, enum,
// minimum, anyOf, allOf and local $ref. Also checks that a report read back
// from its JSON writes the same JSON (what --baseline and diff rely on).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/report/device.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using Json = nlohmann::json;
using ::hlomem::report::testing::BuildCase;
using ::hlomem::report::testing::ReadFileOrDie;
using ::hlomem::report::testing::RepoRoot;

class SchemaChecker {
 public:
  explicit SchemaChecker(Json root) : root_(std::move(root)) {}

  // Appends "path: problem" lines to `errors`.
  void Check(const Json& schema, const Json& value, const std::string& path,
             std::vector<std::string>* errors) const {
    if (schema.contains("$ref")) {
      const std::string ref = schema["$ref"];
      const std::string prefix = "#/$defs/";
      if (ref.rfind(prefix, 0) != 0 || !root_["$defs"].contains(ref.substr(prefix.size()))) {
        errors->push_back(path + ": unresolvable $ref " + ref);
        return;
      }
      Check(root_["$defs"][ref.substr(prefix.size())], value, path, errors);
    }
    if (schema.contains("type") && !TypeMatches(schema["type"], value)) {
      errors->push_back(path + ": expected type " + schema["type"].dump() + ", got " + value.type_name());
      return;
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const Json& option : schema["enum"]) found = found || option == value;
      if (!found) errors->push_back(path + ": " + value.dump() + " not in " + schema["enum"].dump());
    }
    if (schema.contains("minimum") && value.is_number() && value.get<double>() < schema["minimum"].get<double>()) {
      errors->push_back(path + ": " + value.dump() + " below the minimum");
    }
    if (schema.contains("allOf")) {
      for (const Json& sub : schema["allOf"]) Check(sub, value, path, errors);
    }
    if (schema.contains("anyOf")) {
      bool any = false;
      std::string why;
      for (const Json& sub : schema["anyOf"]) {
        std::vector<std::string> sub_errors;
        Check(sub, value, path, &sub_errors);
        any = any || sub_errors.empty();
        for (const std::string& e : sub_errors) why += "\n  " + e;
      }
      if (!any) errors->push_back(path + ": matches none of anyOf:" + why);
    }
    if (value.is_object()) {
      if (schema.contains("required")) {
        for (const Json& key : schema["required"]) {
          if (!value.contains(key.get<std::string>())) errors->push_back(path + ": missing " + key.dump());
        }
      }
      if (schema.contains("properties")) {
        for (const auto& [key, sub] : schema["properties"].items()) {
          if (value.contains(key)) Check(sub, value[key], path + "." + key, errors);
        }
      }
    }
    if (value.is_array() && schema.contains("items")) {
      for (size_t k = 0; k < value.size(); ++k) {
        Check(schema["items"], value[k], path + "[" + std::to_string(k) + "]", errors);
      }
    }
  }

  std::vector<std::string> Validate(const Json& value) const {
    std::vector<std::string> errors;
    Check(root_, value, "$", &errors);
    return errors;
  }

 private:
  static bool TypeIs(const std::string& type, const Json& v) {
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") return v.is_number_integer();
    if (type == "number") return v.is_number();
    if (type == "boolean") return v.is_boolean();
    if (type == "null") return v.is_null();
    return false;
  }
  static bool TypeMatches(const Json& type, const Json& v) {
    if (type.is_string()) return TypeIs(type.get<std::string>(), v);
    for (const Json& t : type) {
      if (TypeIs(t.get<std::string>(), v)) return true;
    }
    return false;
  }

  Json root_;
};

SchemaChecker LoadSchema() {
  return SchemaChecker(Json::parse(ReadFileOrDie(RepoRoot() + "/lib/report/report.schema.json")));
}

class SchemaTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SchemaTest, RealOutputValidates) {
  Report report = BuildCase(GetParam());
  ASSERT_FALSE(report.modules.empty());
  const SchemaChecker schema = LoadSchema();
  const Json plain = Json::parse(WriteJson(report, WriteOptions()));
  for (const std::string& e : schema.Validate(plain)) ADD_FAILURE() << e;
  // With a device verdict, too.
  ApplyDeviceFit(DeviceBudget{"a100-40gb", int64_t{40} << 30, 0.75}, &report);
  const Json with_fit = Json::parse(WriteJson(report, WriteOptions()));
  for (const std::string& e : schema.Validate(with_fit)) ADD_FAILURE() << e;
  EXPECT_FALSE(with_fit["modules"][0]["device_fit"].is_null());
}

TEST_P(SchemaTest, JsonReadBackWritesTheSameJson) {
  const Report report = BuildCase(GetParam());
  const std::string json = WriteJson(report, WriteOptions());
  absl::StatusOr<Report> read = ReadJsonReport(json, "report.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(WriteJson(*read, WriteOptions()), json);
  // And renders the same text as the report built from the dump.
  EXPECT_EQ(WriteText(*read, WriteOptions()), WriteText(report, WriteOptions()));
}

INSTANTIATE_TEST_SUITE_P(Cases, SchemaTest,
                         ::testing::Values("seed_gather_grad_int32_grads", "seed_gather_grad_int16_nograds_latest",
                                           "transformer_block_train_step", "adam_update_donated",
                                           "cond_branches", "fori_loop_nested", "host_callback",
                                           "det_missed_donation_pos"),
                         [](const auto& info) { return std::string(info.param); });

// The reader takes each module's buffers as the parse reaches them, not
// from the whole document: every module must still get its own rows.
TEST(ReadJsonReportTest, EachModuleReadsBackItsOwnBuffers) {
  Report report = BuildCase("transformer_block_train_step");
  Report second = BuildCase("adam_update_donated");
  report.modules.push_back(std::move(second.modules.front()));
  ASSERT_NE(report.modules[0].rows.size(), report.modules[1].rows.size());
  const std::string json = WriteJson(report, WriteOptions());
  absl::StatusOr<Report> read = ReadJsonReport(json, "report.json");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->modules.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(read->modules[k].rows.size(), report.modules[k].rows.size()) << k;
    EXPECT_EQ(read->modules[k].rows.front().instruction,
              report.modules[k].rows.front().instruction);
  }
  EXPECT_EQ(WriteJson(*read, WriteOptions()), json);
}

// A bounded timeline read back is rebuilt from its kept steps: steps out of
// order, or a length no report has, are an error, never a write past the
// timeline or an allocation of whatever size the file says.
TEST(ReadJsonReportTest, TimelineStepsMustIncreaseAndStayBounded) {
  const Json written = Json::parse(WriteJson(BuildCase("adam_update_donated"), WriteOptions()));
  auto read_with = [&](const Json& steps, int64_t total) {
    Json j = written;
    Json& m = j["modules"][0];
    m["timeline"] = Json::array({10, 20, 30});
    m["timeline_steps"] = steps;
    m["truncated"] = Json{{"timeline", Json{{"total", total}}}};
    return ReadJsonReport(j.dump(), "baseline.json");
  };
  absl::StatusOr<Report> kept = read_with(Json::array({0, 2, 4}), 6);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->modules[0].profile.timeline, (std::vector<int64_t>{10, 10, 20, 20, 30, 30}));

  absl::StatusOr<Report> unordered = read_with(Json::array({0, 100, 5}), 6);
  ASSERT_FALSE(unordered.ok());
  EXPECT_EQ(unordered.status().message(),
            "baseline.json: error: timeline_steps is not a list of increasing steps");
  absl::StatusOr<Report> huge = read_with(Json::array({0, 2, 4}), int64_t{1} << 40);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(),
            "baseline.json: error: the timeline has 1099511627776 steps; a report has at most "
            "134217728");
}

// A float where the report has an integer is not converted (past int64_t
// that is undefined behavior): the file is refused.
TEST(ReadJsonReportTest, AFloatInAnIntegerFieldIsAnError) {
  Json j = Json::parse(WriteJson(BuildCase("adam_update_donated"), WriteOptions()));
  j["modules"][0]["schedule_length"] = 5.1e85;
  absl::StatusOr<Report> read = ReadJsonReport(j.dump(), "baseline.json");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "baseline.json: error: bad report JSON: a number that should be an integer is not");
}

TEST(SchemaCheckerTest, CatchesARenamedKeyAndAWrongType) {
  const Report report = BuildCase("seed_gather_grad_int32_grads");
  Json j = Json::parse(WriteJson(report, WriteOptions()));
  j["modules"][0]["computed"]["total"] = j["modules"][0]["computed"]["total_bytes"];
  j["modules"][0]["computed"].erase("total_bytes");
  j["modules"][0]["buffers"][0]["bytes"] = "8 MiB";
  const std::vector<std::string> errors = LoadSchema().Validate(j);
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  EXPECT_NE(all.find("missing \"total_bytes\""), std::string::npos) << all;
  EXPECT_NE(all.find("$.modules[0].buffers[0].bytes: expected type"), std::string::npos) << all;
}

TEST(ReadJsonReportTest, RejectsWhatIsNotAReport) {
  EXPECT_FALSE(ReadJsonReport("{}", "x.json").ok());
  EXPECT_FALSE(ReadJsonReport("not json", "x.json").ok());
  EXPECT_FALSE(ReadJsonReport(R"({"schema_version": 99, "modules": [{}]})", "x.json").ok());
  EXPECT_FALSE(ReadJsonReport(R"({"schema_version": 1, "modules": [{"name": 3}]})", "x.json").ok());
}

}  // namespace
}  // namespace hlomem::report
