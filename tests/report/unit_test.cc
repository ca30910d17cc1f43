// Small pieces of the report layer: formats, layouts, device budgets,
// GitHub annotations, capture's XLA_FLAGS.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/report/capture.h"
#include "lib/report/check.h"
#include "lib/report/device.h"
#include "lib/report/writers.h"

namespace hlomem::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(FormatTest, ParsesEveryName) {
  for (const char* name : kFormatNames) {
    absl::StatusOr<Format> format = ParseFormat(name);
    ASSERT_TRUE(format.ok()) << name;
    EXPECT_STREQ(kFormatNames[static_cast<int>(*format)], name);
  }
  // Each name selects its own writer: the table and the enum agree.
  EXPECT_EQ(*ParseFormat("text"), Format::kText);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_EQ(*ParseFormat("markdown"), Format::kMarkdown);
  EXPECT_EQ(*ParseFormat("csv"), Format::kCsv);
  EXPECT_EQ(*ParseFormat("html"), Format::kHtml);
  EXPECT_FALSE(ParseFormat("yaml").ok());
}

TEST(StripLayoutTest, RemovesLayoutsOnly) {
  EXPECT_EQ(StripLayout("s32[8,3]{1,0}"), "s32[8,3]");
  EXPECT_EQ(StripLayout("f32[1024,3]{1,0:T(8,128)}"), "f32[1024,3]");
  EXPECT_EQ(StripLayout("(f32[2]{0}, s8[])"), "(f32[2], s8[])");
  EXPECT_EQ(StripLayout("f32[]"), "f32[]");
}

TEST(PercentChangeTest, Readable) {
  EXPECT_EQ(PercentChange(100, 150), "+50.0%");
  EXPECT_EQ(PercentChange(100, 90), "-10.0%");
  EXPECT_EQ(PercentChange(0, 90), "");
  EXPECT_EQ(PercentChange(1, 1000), ">+999%");
}

TEST(DeviceTest, PresetAndDefaultFraction) {
  DeviceRequest request;
  request.preset = "h100-80gb";
  absl::StatusOr<std::optional<DeviceBudget>> budget = ResolveDevice(request);
  ASSERT_TRUE(budget.ok() && budget->has_value());
  EXPECT_EQ((*budget)->capacity, int64_t{80} << 30);
  EXPECT_DOUBLE_EQ((*budget)->fraction, 0.75);
  EXPECT_EQ((*budget)->usable(), int64_t{60} << 30);
}

TEST(DeviceTest, FractionPrecedenceFlagThenNewEnvThenLegacyEnv) {
  DeviceRequest request;
  request.memory = "16GiB";
  request.env_fraction_legacy = "0.5";
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction, 0.5);
  request.env_fraction = "0.9";
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction, 0.9);
  request.mem_fraction = 0.6;
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction, 0.6);
}

TEST(DeviceTest, TpuPresetsUseAllMemoryAndErrorsAreUsageErrors) {
  DeviceRequest tpu;
  tpu.preset = "v5e-16gb";
  EXPECT_DOUBLE_EQ((*ResolveDevice(tpu))->fraction, 1.0);
  DeviceRequest unknown;
  unknown.preset = "h900";
  EXPECT_THAT(std::string(ResolveDevice(unknown).status().message()), HasSubstr("h100-80gb"));
  DeviceRequest bad_env;
  bad_env.memory = "1GiB";
  bad_env.env_fraction = "1.5";
  EXPECT_FALSE(ResolveDevice(bad_env).ok());
  DeviceRequest none;
  EXPECT_FALSE(ResolveDevice(none)->has_value());
}

TEST(DeviceTest, VerdictNamesTheShortfall) {
  Report report;
  report.modules.emplace_back();
  report.modules[0].computed = MemoryNumbers();
  report.modules[0].computed->total_bytes = 100;
  ApplyDeviceFit(DeviceBudget{"", 120, 0.75}, &report);
  const DeviceFit& fit = *report.modules[0].device_fit;
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.usable, 90);
  EXPECT_EQ(fit.shortfall, 10);
}

CheckResult ManyViolations(int n) {
  CheckResult result;
  for (int k = 0; k < n; ++k) {
    Violation v;
    v.module = "m";
    v.rule = "max-temp";
    v.message = "m: temp 100% over, a,b:c\nnext";
    v.source_file = "/ws/repo/train.py";
    v.source_line = 10 + k;
    result.violations.push_back(v);
  }
  return result;
}

TEST(GithubAnnotationsTest, EscapesAndPointsAtRepositoryFiles) {
  const std::string out = GithubAnnotations(ManyViolations(1), Report(), "/ws/repo");
  EXPECT_EQ(out, "::error file=train.py,line=10,title=hlomem max-temp::m: temp 100%25 over, a,b:c%0Anext\n");
}

TEST(GithubAnnotationsTest, RespectsTheCapAndSaysWhereTheRestAre) {
  const std::string out = GithubAnnotations(ManyViolations(13), Report(), "");
  size_t errors = 0;
  for (size_t at = out.find("::error"); at != std::string::npos; at = out.find("::error", at + 1)) ++errors;
  EXPECT_EQ(errors, 10u);
  EXPECT_THAT(out, HasSubstr("::notice title=hlomem::3 more violations not annotated"));
}

TEST(GithubAnnotationsTest, FindingsThatDoNotFailAreWarnings) {
  Report report;
  report.modules.emplace_back();
  report.modules[0].name = "m";
  for (int k = 0; k < 12; ++k) {
    detect::Finding f;
    f.detector = k == 0 ? "duplicate-buffer" : "dtype-widening";
    f.message = "wasted";
    f.source_file = "a.py";
    f.source_line = k + 1;
    report.modules[0].findings.push_back(f);
  }
  CheckResult result;
  Violation v;
  v.module = "m";
  v.rule = "duplicate-buffer";  // --fail-on duplicate-buffer: that one is an error
  result.violations.push_back(v);
  const std::string out = GithubAnnotations(result, report, "");
  size_t warnings = 0;
  for (size_t at = out.find("::warning"); at != std::string::npos; at = out.find("::warning", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 10u);
  EXPECT_THAT(out, HasSubstr("::warning file=a.py,line=2,title=hlomem dtype-widening::m: wasted"));
  EXPECT_THAT(out, Not(HasSubstr("line=1,title=hlomem duplicate-buffer::m: wasted")));
  EXPECT_THAT(out, HasSubstr("1 more finding not annotated"));
}

TEST(RelativeToTest, StripsOnlyWholeDirectories) {
  EXPECT_EQ(RelativeTo("/ws/repo/a.py", "/ws/repo"), "a.py");
  EXPECT_EQ(RelativeTo("/ws/repo/a.py", "/ws/repo/"), "a.py");
  EXPECT_EQ(RelativeTo("/ws/repo2/a.py", "/ws/repo"), "/ws/repo2/a.py");
  EXPECT_EQ(RelativeTo("a.py", ""), "a.py");
}

TEST(CaptureFlagsTest, KeepsTheUsersFlagsAndAddsTheDump) {
  EXPECT_EQ(CaptureXlaFlags("", "/d"), "--xla_dump_to=/d --xla_dump_hlo_as_text --xla_dump_hlo_as_proto");
  EXPECT_EQ(CaptureXlaFlags("--xla_cpu_use_thunk_runtime=false --xla_dump_to=/old --xla_dump_hlo_as_text",
                            "/d"),
            "--xla_cpu_use_thunk_runtime=false --xla_dump_hlo_as_text --xla_dump_to=/d "
            "--xla_dump_hlo_as_proto");
  EXPECT_EQ(DumpDirInFlags("--a=1 --xla_dump_to=/x --xla_dump_to=/y"), "/y");
  EXPECT_EQ(DumpDirInFlags("--a=1"), "");
}

}  // namespace
}  // namespace hlomem::report
