// Small pieces of the report layer: formats, layouts, device budgets,
// GitHub annotations, capture's XLA_FLAGS.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/pipeline/capture.h"
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

// Rows view the pool's strings: equal texts share one copy, and a view
// stays valid however many strings come after it.
TEST(StringPoolTest, KeepsOneCopyOfEachTextWhereItWas) {
  StringPool pool;
  std::string text = "bf16[8,128]{1,0}";
  const absl::string_view first = pool.Intern(text);
  text.assign(text.size(), '?');  // the pool holds its own copy
  EXPECT_EQ(first, "bf16[8,128]{1,0}");
  const absl::string_view short_text = pool.Intern("s32[]");  // kept inside a std::string
  for (int k = 0; k < 10000; ++k) pool.Intern(absl::StrCat("f32[", k, "]"));
  EXPECT_EQ(short_text, "s32[]");
  const absl::string_view again = pool.Intern("bf16[8,128]{1,0}");
  EXPECT_EQ(again.data(), first.data());
  EXPECT_EQ(first, "bf16[8,128]{1,0}");
  EXPECT_EQ(pool.Intern("f32[9999]"), "f32[9999]");
  EXPECT_NE(pool.Intern("f32[1]").data(), pool.Intern("f32[2]").data());
}

TEST(PercentChangeTest, Readable) {
  EXPECT_EQ(PercentChange(100, 150), "+50.0%");
  EXPECT_EQ(PercentChange(100, 90), "-10.0%");
  EXPECT_EQ(PercentChange(0, 90), "");
  EXPECT_EQ(PercentChange(1, 1000), ">+999%");
}

// A module as the pipeline leaves it for ApplyDeviceFit: its backend, its
// target's default fraction and its device-memory totals.
ModuleReport ModuleOn(const std::string& backend, double default_fraction, int64_t computed,
                      std::optional<int64_t> xla = std::nullopt) {
  ModuleReport m;
  m.backend = backend;
  m.default_mem_fraction = default_fraction;
  m.computed = MemoryNumbers();
  m.computed->total_bytes = computed;
  MemorySpaceTotals device;
  device.name = backend == "tpu" ? "HBM" : "device";
  device.is_device = true;
  device.computed_bytes = computed;
  if (xla) {
    m.xla = MemoryNumbers();
    m.xla->total_bytes = *xla;
    device.xla_bytes = *xla;
  }
  m.memory_spaces.push_back(device);
  // On-chip memory is not device memory: it must not count.
  MemorySpaceTotals vmem;
  vmem.color = 1;
  vmem.name = "VMEM";
  vmem.computed_bytes = int64_t{1} << 40;
  m.memory_spaces.push_back(vmem);
  return m;
}

DeviceFit FitOf(const DeviceRequest& request, ModuleReport module) {
  absl::StatusOr<std::optional<DeviceBudget>> budget = ResolveDevice(request);
  EXPECT_TRUE(budget.ok() && budget->has_value());
  Report report;
  report.modules.push_back(std::move(module));
  ApplyDeviceFit(**budget, &report);
  EXPECT_TRUE(report.modules[0].device_fit.has_value());
  return report.modules[0].device_fit.value_or(DeviceFit());
}

// The H100 80GB HBM3 as measured (issue 27): CUDA reports 85,018,542,080 B
// and JAX's allocator took 0.75 of it, bytes_limit 63,763,906,560 B; a
// program ran if and only if XLA's total was at most that.
constexpr int64_t kH100CudaTotal = 85018542080;
constexpr int64_t kH100BytesLimit = 63763906560;

TEST(DeviceTest, GpuPresetUsesTheTargetsPreallocatedShareOfWhatCudaReports) {
  DeviceRequest request;
  request.preset = "h100-80gb";
  const DeviceFit fit = FitOf(request, ModuleOn("gpu", 0.75, int64_t{61} << 30));
  EXPECT_EQ(fit.capacity, kH100CudaTotal);
  EXPECT_DOUBLE_EQ(fit.fraction, 0.75);
  EXPECT_EQ(fit.usable, kH100BytesLimit);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.shortfall, (int64_t{61} << 30) - kH100BytesLimit);
  EXPECT_FALSE(fit.capacity_estimated);
  EXPECT_THAT(fit.capacity_source, HasSubstr("measured: jax memory_stats bytes_limit"));
  EXPECT_THAT(DeviceFitBudget(fit), HasSubstr("usable 59.38GiB (63763906560 B) from the h100-80gb preset "
                                              "(75% of 79.18GiB, measured)"));
  EXPECT_THAT(DeviceFitSource(fit), HasSubstr("h100-80gb: 79.18GiB (85018542080 B), measured: "));
}

// The two programs of issue 27 that failed on the GPU while the old preset
// (0.75 x 80 GiB = 64,424,509,440 B) said both fit.
TEST(DeviceTest, TheTwoProgramsThatFailedOnAnH100DoNotFitAndTheLimitItselfDoes) {
  DeviceRequest request;
  request.preset = "h100-80gb";
  for (const int64_t needed : {int64_t{63766003724}, int64_t{65036877836}}) {
    const DeviceFit fit = FitOf(request, ModuleOn("gpu", 0.75, needed, needed));
    EXPECT_EQ(fit.needed_source, "xla");
    EXPECT_FALSE(fit.fits) << needed;
    EXPECT_EQ(fit.shortfall, needed - kH100BytesLimit);
  }
  // 59.39 GiB against 59.38: two MiB over, to the byte.
  EXPECT_EQ(FitOf(request, ModuleOn("gpu", 0.75, 63766003724, 63766003724)).shortfall, 2097164);
  const DeviceFit exact = FitOf(request, ModuleOn("gpu", 0.75, kH100BytesLimit, kH100BytesLimit));
  EXPECT_TRUE(exact.fits);
  EXPECT_EQ(exact.shortfall, 0);
  EXPECT_FALSE(FitOf(request, ModuleOn("gpu", 0.75, kH100BytesLimit + 1, kH100BytesLimit + 1)).fits);
}

TEST(DeviceTest, EveryPresetSaysWhereItsFigureComesFromAndWhichAreEstimates) {
  int measured = 0;
  for (const DevicePreset& preset : DevicePresets()) {
    EXPECT_FALSE(preset.source.empty()) << preset.name;
    if (!preset.is_gpu) {
      EXPECT_THAT(std::string(preset.source), HasSubstr("E1000")) << preset.name;
      continue;
    }
    // A GPU's figure is what CUDA reports, less than the nominal size the
    // name gives ("80gb": 80 GiB of HBM).
    const absl::string_view size = preset.name.substr(preset.name.rfind('-') + 1);
    int64_t nominal_gib = 0;
    ASSERT_TRUE(absl::SimpleAtoi(size.substr(0, size.size() - 2), &nominal_gib)) << preset.name;
    EXPECT_LT(preset.bytes, nominal_gib << 30) << preset.name;
    EXPECT_GT(preset.bytes, (nominal_gib << 30) * 9 / 10) << preset.name;
    const std::string source(preset.source);
    EXPECT_EQ(absl::StartsWith(source, "estimated: "), preset.estimated) << preset.name;
    EXPECT_EQ(absl::StartsWith(source, "measured: "), !preset.estimated) << preset.name;
    if (!preset.estimated) ++measured;
    DeviceRequest request;
    request.preset = std::string(preset.name);
    const DeviceFit fit = FitOf(request, ModuleOn("gpu", 0.75, 1));
    EXPECT_EQ(fit.capacity_estimated, preset.estimated);
    EXPECT_THAT(DeviceFitBudget(fit), HasSubstr(preset.estimated ? ", estimated)" : ", measured)"));
  }
  EXPECT_EQ(measured, 1);  // the H100 80GB, so far
}

// The allocator's limit as the user's log states it (--error FILE).
dump::AllocatorLimit LogLimit(int64_t bytes, int64_t rounding = 0,
                              dump::AllocatorLimit::Kind kind = dump::AllocatorLimit::Kind::kBfcStart) {
  dump::AllocatorLimit limit;
  limit.kind = kind;
  limit.bytes = bytes;
  limit.rounding_bytes = rounding;
  limit.line = 3;
  limit.message = kind == dump::AllocatorLimit::Kind::kPoolLimit ? "pool size 59.38GiB, pool limit 59.38GiB"
                                                                  : "XLA backend allocating";
  return limit;
}

Report OneModule(ModuleReport m) {
  Report report;
  report.modules.push_back(std::move(m));
  return report;
}

TEST(DeviceTest, TheLogsLimitDecidesOverThePresetAndTheVerdictSaysWhichFigure) {
  DeviceRequest request;
  request.preset = "h100-80gb";
  // Run with XLA_PYTHON_CLIENT_MEM_FRACTION=.9: the log says so, the preset cannot.
  const int64_t limit = static_cast<int64_t>(kH100CudaTotal * 0.9);
  Report report = OneModule(ModuleOn("gpu", 0.75, 65036877836, 65036877836));
  ApplyDeviceFit(**ResolveDevice(request), &report);
  EXPECT_FALSE(report.modules[0].device_fit->fits);
  ApplyAllocatorLimit(LogLimit(limit), &report);
  const DeviceFit& fit = *report.modules[0].device_fit;
  EXPECT_TRUE(fit.fits);
  EXPECT_EQ(fit.usable, limit);
  EXPECT_EQ(fit.preset_usable, kH100BytesLimit);
  EXPECT_EQ(fit.usable_from_log, "the log's BFCAllocator line (line 3)");
  EXPECT_THAT(DeviceFitBudget(fit), HasSubstr(absl::StrCat("usable 71.26GiB (", limit,
                                                           " B) from the log's BFCAllocator line (line 3), not "
                                                           "the h100-80gb preset's 59.38GiB (63763906560 B)")));
  EXPECT_DOUBLE_EQ(fit.fraction, static_cast<double>(limit) / kH100CudaTotal);
}

TEST(DeviceTest, TheLogsExactLimitEqualToThePresetsConfirmsIt) {
  DeviceRequest request;
  request.preset = "h100-80gb";
  Report report = OneModule(ModuleOn("gpu", 0.75, 63766003724, 63766003724));
  ApplyDeviceFit(**ResolveDevice(request), &report);
  ApplyAllocatorLimit(LogLimit(kH100BytesLimit), &report);
  const DeviceFit& fit = *report.modules[0].device_fit;
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.shortfall, 2097164);
  EXPECT_THAT(DeviceFitBudget(fit), HasSubstr("usable 59.38GiB (63763906560 B) from the h100-80gb preset, "
                                              "which the log's BFCAllocator line (line 3) confirms"));
}

TEST(DeviceTest, ARoundedLogLimitConfirmsAnExactPresetAndReplacesAnotherOne) {
  const int64_t pool_limit = static_cast<int64_t>(59.38 * (int64_t{1} << 30) + 0.5);
  const int64_t rounding = ((int64_t{1} << 30) + 199) / 200;
  const auto pool = dump::AllocatorLimit::Kind::kPoolLimit;
  // "pool limit 59.38GiB" on the H100: the preset's exact 63,763,906,560 B stands.
  DeviceRequest h100;
  h100.preset = "h100-80gb";
  Report report = OneModule(ModuleOn("gpu", 0.75, 63766003724, 63766003724));
  ApplyDeviceFit(**ResolveDevice(h100), &report);
  ApplyAllocatorLimit(LogLimit(pool_limit, rounding, pool), &report);
  EXPECT_EQ(report.modules[0].device_fit->usable, kH100BytesLimit);
  EXPECT_FALSE(report.modules[0].device_fit->fits);
  EXPECT_THAT(DeviceFitBudget(*report.modules[0].device_fit),
              HasSubstr("from the h100-80gb preset, which the log's pool limit line (line 3) confirms"));
  // The same log against the (estimated) A100 80GB preset: the log decides.
  DeviceRequest a100;
  a100.preset = "a100-80gb";
  report = OneModule(ModuleOn("gpu", 0.75, 63700000000, 63700000000));
  ApplyDeviceFit(**ResolveDevice(a100), &report);
  ApplyAllocatorLimit(LogLimit(pool_limit, rounding, pool), &report);
  const DeviceFit& fit = *report.modules[0].device_fit;
  EXPECT_EQ(fit.usable, pool_limit);
  EXPECT_TRUE(fit.fits);
  EXPECT_THAT(DeviceFitBudget(fit), HasSubstr("from the log's pool limit line (line 3), not the a100-80gb "
                                              "preset's"));
}

TEST(DeviceTest, TheLogsLimitOverDeviceMemoryNamesTheFlag) {
  DeviceRequest request;
  request.memory = "80GiB";
  Report report = OneModule(ModuleOn("gpu", 0.75, 63766003724, 63766003724));
  ApplyDeviceFit(**ResolveDevice(request), &report);
  ApplyAllocatorLimit(LogLimit(kH100BytesLimit), &report);
  EXPECT_THAT(DeviceFitBudget(*report.modules[0].device_fit),
              HasSubstr("from the log's BFCAllocator line (line 3), not --device-memory's 60.00GiB"));
  EXPECT_EQ(DeviceFitSource(*report.modules[0].device_fit), "");
}

TEST(DeviceTest, ALogLimitGivesAVerdictWithoutADeviceAndLeavesTpuModulesAlone) {
  Report report = OneModule(ModuleOn("gpu", 0.75, 63766003724, 63766003724));
  report.modules.push_back(ModuleOn("tpu", 1.0, 1));
  ApplyAllocatorLimit(LogLimit(kH100BytesLimit), &report);
  ASSERT_TRUE(report.modules[0].device_fit.has_value());
  const DeviceFit& fit = *report.modules[0].device_fit;
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.usable, kH100BytesLimit);
  EXPECT_FALSE(fit.preset_usable.has_value());
  EXPECT_THAT(DeviceFitBudget(fit), HasSubstr("usable 59.38GiB (63763906560 B) from the log's BFCAllocator "
                                              "line (line 3)"));
  EXPECT_FALSE(report.modules[1].device_fit.has_value());
  // A rounded limit the program is within: the verdict cannot be sure.
  const int64_t rounding = ((int64_t{1} << 30) + 199) / 200;
  report = OneModule(ModuleOn("gpu", 0.75, 63766003724, 63766003724));
  ApplyAllocatorLimit(LogLimit(63762000000, rounding, dump::AllocatorLimit::Kind::kStatsLimit), &report);
  ASSERT_EQ(report.modules[0].warnings.size(), 1u);
  EXPECT_THAT(report.modules[0].warnings[0], HasSubstr("within the rounding"));
}

TEST(DeviceTest, FractionPrecedenceFlagThenNewEnvThenLegacyEnv) {
  DeviceRequest request;
  request.memory = "16GiB";
  request.env_fraction_legacy = "0.5";
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction.value_or(0), 0.5);
  request.env_fraction = "0.9";
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction.value_or(0), 0.9);
  request.mem_fraction = 0.6;
  EXPECT_DOUBLE_EQ((*ResolveDevice(request))->fraction.value_or(0), 0.6);
}

TEST(DeviceTest, TpuPresetOffersXlasAvailableHbmAndCountsHbmOnly) {
  DeviceRequest tpu;
  tpu.preset = "v5e-16gb";
  // XLA:TPU's CompileTimeHbmOom on v5e: "available HBM (15.75G)".
  const int64_t available = (int64_t{63} << 30) / 4;
  DeviceFit fit = FitOf(tpu, ModuleOn("tpu", 1.0, available));
  EXPECT_EQ(fit.usable, available);
  EXPECT_EQ(fit.needed, available);
  EXPECT_TRUE(fit.fits);
  fit = FitOf(tpu, ModuleOn("tpu", 1.0, available + 1));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.shortfall, 1);
}

TEST(DeviceTest, DeviceMemoryOnATpuModuleGetsNoGpuFraction) {
  DeviceRequest request;
  request.memory = "15.75GiB";
  const DeviceFit fit = FitOf(request, ModuleOn("tpu", 1.0, int64_t{15} << 30));
  EXPECT_DOUBLE_EQ(fit.fraction, 1.0);
  EXPECT_EQ(fit.usable, (int64_t{63} << 30) / 4);
}

TEST(DeviceTest, XlasAssignmentDecidesAndADisagreementIsAWarning) {
  DeviceRequest request;
  request.memory = "100GiB";
  request.mem_fraction = 1.0;
  Report report;
  report.modules.push_back(ModuleOn("gpu", 0.75, 120, int64_t{100} << 30));
  ApplyDeviceFit(**ResolveDevice(request), &report);
  const ModuleReport& m = report.modules[0];
  EXPECT_EQ(m.device_fit->needed, int64_t{100} << 30);
  EXPECT_EQ(m.device_fit->needed_source, "xla");
  EXPECT_EQ(m.device_fit->computed_needed, 120);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0], HasSubstr("uses XLA's buffer assignment"));
}

TEST(DeviceTest, UnknownPresetAndBadEnvironmentAreUsageErrors) {
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
  EXPECT_EQ(pipeline::CaptureXlaFlags("", "/d"), "--xla_dump_to=/d --xla_dump_hlo_as_text --xla_dump_hlo_as_proto");
  EXPECT_EQ(pipeline::CaptureXlaFlags("--xla_cpu_use_thunk_runtime=false --xla_dump_to=/old --xla_dump_hlo_as_text",
                            "/d"),
            "--xla_cpu_use_thunk_runtime=false --xla_dump_hlo_as_text --xla_dump_to=/d "
            "--xla_dump_hlo_as_proto");
  EXPECT_EQ(pipeline::DumpDirInFlags("--a=1 --xla_dump_to=/x --xla_dump_to=/y"), "/y");
  EXPECT_EQ(pipeline::DumpDirInFlags("--a=1"), "");
}

}  // namespace
}  // namespace hlomem::report
