// hlomem._core: the C++ engine as a Python extension. It exposes the
// pipeline and the report writers as they are (the same calls the CLI
// makes); the Python package (python/hlomem) turns the JSON contract into
// typed objects. Every analysis releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/hlomem/cli.h"
#include "lib/base/bytes.h"
#include "lib/detect/detectors.h"
#include "lib/pipeline/pipeline.h"
#include "lib/report/check.h"
#include "lib/report/device.h"
#include "lib/report/diff.h"
#include "lib/report/report.h"
#include "lib/report/writers.h"

namespace nb = nanobind;

namespace hlomem::python {
namespace {

// Raised as hlomem.Error (a ValueError): bad input, with XLA-style
// "path:line:col: error: ..." messages.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T ValueOrRaise(absl::StatusOr<T> value) {
  if (!value.ok()) throw Error(std::string(value.status().message()));
  return std::move(*value);
}

// "" as the CLI's default: after optimizations, or before them as an
// estimate; "after" or "before": only the modules dumped at that stage.
void ApplyStage(const std::string& stage, dump::LoadOptions* options) {
  if (stage != "" && stage != "after" && stage != "before") {
    throw Error("error: stage must be 'after' or 'before', not '" + stage + "'");
  }
  options->stage = stage == "before" ? dump::Stage::kBeforeOptimizations
                                     : dump::Stage::kAfterOptimizations;
  options->stage_only = !stage.empty();
}

// What analyze() takes besides its input: the CLI's report flags.
struct AnalyzeOptions {
  std::string target;
  std::string stage;
  std::string module_regex;
  int64_t min_bytes = -1;
  std::string device;
  std::string device_memory;
  std::optional<double> mem_fraction;
  std::string frames = "user";
  std::vector<std::string> skip_frames;
  bool skip_unreadable = false;
};

pipeline::ReportOptions ToPipelineOptions(const AnalyzeOptions& in) {
  pipeline::ReportOptions options;
  ApplyStage(in.stage, &options.load);
  options.target = in.target;
  options.module_regex = in.module_regex;
  options.detect.min_bytes = in.min_bytes;
  if (in.frames != "user" && in.frames != "all") {
    throw Error("error: frames must be 'user' or 'all', not '" + in.frames + "'");
  }
  options.frames.innermost_only = in.frames == "all";
  options.frames.skip_packages = in.skip_frames;
  return options;
}

// The device fit, as `--device`/`--device-memory`/`--mem-fraction` apply it.
void ApplyDevice(const AnalyzeOptions& in, report::Report* out) {
  report::DeviceRequest request;
  request.preset = in.device;
  request.memory = in.device_memory;
  request.mem_fraction = in.mem_fraction;
  request.env_fraction = std::getenv("XLA_CLIENT_MEM_FRACTION");
  request.env_fraction_legacy = std::getenv("XLA_PYTHON_CLIENT_MEM_FRACTION");
  std::optional<report::DeviceBudget> budget = ValueOrRaise(report::ResolveDevice(request));
  if (budget) report::ApplyDeviceFit(*budget, out);
}

// A report, immutable once built, shared by the Python objects made from it.
struct ReportHandle {
  std::shared_ptr<const report::Report> report;

  std::string Write(const std::string& format, int top, int width, bool buffers, bool timeline,
                    bool all_modules) const {
    report::WriteOptions options;
    options.python_names = true;
    options.top = top;
    // The text shows the modules as the CLI does: largest first, helper
    // modules on one line unless `all_modules`. The report keeps the
    // dump's order (Report.modules, the JSON).
    options.largest_first = true;
    options.all_modules = all_modules;
    options.width = width;
    options.json_buffers = buffers;
    options.json_timeline = timeline;
    // Python's objects are made from this JSON: every buffer and step.
    options.json_max_buffers = options.json_max_timeline = 0;
    const report::Format parsed = ValueOrRaise(report::ParseFormat(format));
    nb::gil_scoped_release release;
    return report::WriteReport(*report, parsed, options);
  }
};

ReportHandle Wrap(report::Report report) {
  return ReportHandle{std::make_shared<const report::Report>(std::move(report))};
}

ReportHandle AnalyzePaths(const std::vector<std::string>& paths, const AnalyzeOptions& options) {
  const pipeline::ReportOptions pipeline_options = ToPipelineOptions(options);
  absl::StatusOr<report::Report> built;
  {
    nb::gil_scoped_release release;
    built = pipeline::BuildReport(paths, pipeline_options);
  }
  report::Report out = ValueOrRaise(std::move(built));
  if (options.skip_unreadable) {
    report::WarnOfUnreadable(&out, "skip_unreadable=True");
  } else if (const std::string error = report::UnreadableError(out, "skip_unreadable=True"); !error.empty()) {
    throw Error(error);
  }
  ApplyDevice(options, &out);
  return Wrap(std::move(out));
}

ReportHandle AnalyzeText(const std::string& text, const std::string& origin,
                         const AnalyzeOptions& options) {
  const pipeline::ReportOptions pipeline_options = ToPipelineOptions(options);
  absl::StatusOr<report::Report> built;
  {
    nb::gil_scoped_release release;
    built = pipeline::BuildReportFromText(text, origin, pipeline_options);
  }
  report::Report out = ValueOrRaise(std::move(built));
  ApplyDevice(options, &out);
  return Wrap(std::move(out));
}

ReportHandle ReadJson(const std::string& json, const std::string& origin) {
  absl::StatusOr<report::Report> read;
  {
    nb::gil_scoped_release release;
    read = report::ReadJsonReport(json, origin);
  }
  return Wrap(ValueOrRaise(std::move(read)));
}

std::string Diff(const ReportHandle& a, const ReportHandle& b, const std::string& format, int top,
                 const std::string& a_label, const std::string& b_label) {
  report::WriteOptions options;
  options.python_names = true;
  options.top = top;
  const report::Format parsed = ValueOrRaise(report::ParseFormat(format));
  nb::gil_scoped_release release;
  report::DiffReport diff = report::DiffReports(*a.report, *b.report);
  diff.a_label = a_label;
  diff.b_label = b_label;
  return report::WriteDiff(diff, parsed, options);
}

// `hlomem check`'s verdict on a report, with every form the CLI writes.
struct CheckHandle {
  std::shared_ptr<const report::Report> report;
  std::shared_ptr<const report::Report> baseline;  // kept alive: the result points into it
  report::CheckResult result;
};

// The names `fail_on` takes: the detector registry's, and "all".
std::vector<std::string> DetectorNames() {
  std::vector<std::string> names;
  for (const detect::DetectorInfo& d : detect::Detectors()) names.emplace_back(d.name);
  return names;
}

// Raises hlomem.Error naming the first name that is no detector, and the
// ones there are, as `hlomem check --fail-on` refuses it (in Python's words).
void ValidateFailOn(const std::vector<std::string>& fail_on) {
  const std::vector<std::string> known = DetectorNames();
  for (const std::string& name : fail_on) {
    if (name == "all" || std::find(known.begin(), known.end(), name) != known.end()) continue;
    throw Error(absl::StrCat("fail_on: unknown detector '", name, "'; the detectors are ",
                             absl::StrJoin(known, ", "), ", or 'all' for every one"));
  }
}

CheckHandle Check(const ReportHandle& in, std::optional<int64_t> max_total,
                  std::optional<int64_t> max_temp, std::optional<int64_t> max_peak,
                  const std::optional<ReportHandle>& baseline, double tolerance,
                  const std::vector<std::string>& fail_on, bool allow_new, int contributors) {
  ValidateFailOn(fail_on);
  report::CheckOptions options;
  options.python_names = true;
  options.max_total = max_total;
  options.max_temp = max_temp;
  options.max_peak = max_peak;
  options.tolerance_percent = tolerance;
  options.fail_on = fail_on;
  options.contributors = contributors;
  CheckHandle out;
  out.report = in.report;
  if (baseline) {
    out.baseline = baseline->report;
    options.baseline = out.baseline.get();
    const absl::Status matched = report::ValidateBaseline(
        *in.report, *out.baseline, allow_new,
        "Save the baseline again from the same program (report.save(path)), analyze only the "
        "modules to compare (module=REGEX), or pass allow_new=True to check the paired modules and "
        "list the others");
    if (!matched.ok()) throw Error(std::string(matched.message()));
  }
  out.result = report::RunCheck(*in.report, options);
  return out;
}

nb::dict ViolationToDict(const report::Violation& v) {
  nb::dict d;
  d["module"] = v.module;
  d["rule"] = v.rule;
  d["value"] = v.value;
  d["limit"] = v.limit;
  d["message"] = v.message;
  d["source_file"] = v.source_file;
  d["source_line"] = v.source_line;
  nb::list contributors;
  for (const report::Contributor& c : v.contributors) {
    nb::dict row;
    row["bytes"] = c.bytes;
    row["label"] = c.label;
    row["shape"] = c.shape;
    row["source_file"] = c.source_file;
    row["source_line"] = c.source_line;
    contributors.append(row);
  }
  d["contributors"] = contributors;
  return d;
}

int CliMain(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& a : args) argv.push_back(a.c_str());
  nb::gil_scoped_release release;
  return cli::Main(static_cast<int>(argv.size()), argv.data());
}

}  // namespace
}  // namespace hlomem::python

NB_MODULE(_core, m) {
  using namespace hlomem::python;
  namespace report = hlomem::report;
  m.doc() = "hlomem's C++ engine; use the hlomem package, not this module.";
  nb::exception<Error>(m, "Error", PyExc_ValueError);
  m.attr("schema_version") = report::kSchemaVersion;

  nb::class_<AnalyzeOptions>(m, "AnalyzeOptions")
      .def(nb::init<>())
      .def_rw("target", &AnalyzeOptions::target)
      .def_rw("stage", &AnalyzeOptions::stage)
      .def_rw("module_regex", &AnalyzeOptions::module_regex)
      .def_rw("min_bytes", &AnalyzeOptions::min_bytes)
      .def_rw("device", &AnalyzeOptions::device)
      .def_rw("device_memory", &AnalyzeOptions::device_memory)
      .def_rw("mem_fraction", &AnalyzeOptions::mem_fraction, nb::arg().none())
      .def_rw("frames", &AnalyzeOptions::frames)
      .def_rw("skip_frames", &AnalyzeOptions::skip_frames)
      .def_rw("skip_unreadable", &AnalyzeOptions::skip_unreadable);

  nb::class_<ReportHandle>(m, "ReportHandle")
      .def("write", &ReportHandle::Write, nb::arg("format"), nb::arg("top") = 10,
           nb::arg("width") = 100, nb::arg("buffers") = true, nb::arg("timeline") = true,
           nb::arg("all_modules") = false);

  nb::class_<CheckHandle>(m, "CheckHandle")
      .def_prop_ro("passed", [](const CheckHandle& c) { return c.result.passed(); })
      .def_prop_ro("violations",
                   [](const CheckHandle& c) {
                     nb::list out;
                     for (const report::Violation& v : c.result.violations) out.append(ViolationToDict(v));
                     return out;
                   })
      .def_prop_ro("passes", [](const CheckHandle& c) { return c.result.passes; })
      .def_prop_ro("notes", [](const CheckHandle& c) { return c.result.notes; })
      .def("text", [](const CheckHandle& c) { return report::FormatCheckText(c.result); })
      .def("markdown",
           [](const CheckHandle& c, int top) {
             report::WriteOptions options;
             options.python_names = true;
             options.top = top;
             return report::WriteCheckMarkdown(c.result, *c.report, options);
           },
           nb::arg("top") = 10)
      .def("github_annotations",
           [](const CheckHandle& c, const std::string& source_root) {
             return report::GithubAnnotations(c.result, *c.report, source_root);
           },
           nb::arg("source_root") = "")
      .def("sarif",
           [](const CheckHandle& c, const std::string& source_root, const std::string& version) {
             return report::WriteSarif(c.result, *c.report, source_root, version);
           },
           nb::arg("source_root"), nb::arg("version"));

  m.def("analyze_paths", &AnalyzePaths, nb::arg("paths"), nb::arg("options"));
  m.def("analyze_text", &AnalyzeText, nb::arg("text"), nb::arg("origin"), nb::arg("options"));
  m.def("read_json", &ReadJson, nb::arg("json"), nb::arg("origin"));
  m.def("diff", &Diff, nb::arg("a"), nb::arg("b"), nb::arg("format"), nb::arg("top") = 10,
        nb::arg("a_label") = "", nb::arg("b_label") = "");
  m.def("check", &Check, nb::arg("report"), nb::arg("max_total").none(), nb::arg("max_temp").none(),
        nb::arg("max_peak").none(), nb::arg("baseline").none(), nb::arg("tolerance"),
        nb::arg("fail_on"), nb::arg("allow_new") = false, nb::arg("contributors") = 3);
  m.def(
      "device_presets",
      [] {
        // The one table of devices (lib/report/device.cc), for fit's compiles.
        nb::list out;
        for (const report::DevicePreset& p : report::DevicePresets()) {
          report::DeviceRequest request;
          request.preset = std::string(p.name);
          const std::optional<report::DeviceBudget> budget = ValueOrRaise(report::ResolveDevice(request));
          nb::dict d;
          d["name"] = std::string(p.name);
          d["bytes"] = p.bytes;
          d["is_gpu"] = p.is_gpu;
          d["estimated"] = p.estimated;
          d["source"] = std::string(p.source);
          d["program_limit"] = budget && budget->program_limit ? nb::cast(*budget->program_limit) : nb::none();
          out.append(d);
        }
        return out;
      },
      "Every --device preset: name, bytes (a GPU's CUDA total, a TPU's HBM), is_gpu, estimated, "
      "source, program_limit (what a TPU offers one program).");
  m.def("parse_bytes",
        [](const std::string& text) { return ValueOrRaise(hlomem::ParseByteSize(text)); },
        nb::arg("text"), "\"80GiB\", \"1.5e9\" -> bytes, as the CLI reads sizes.");
  m.def("parse_percent",
        [](const std::string& text) { return ValueOrRaise(hlomem::ParsePercent(text)); },
        nb::arg("text"), "\"5\", \"5%\", \"5 %\" -> 5.0, as the CLI reads --tolerance.");
  m.def("detector_names", &DetectorNames,
        "The detectors' names, as `hlomem detectors` lists them (fail_on also takes 'all').");
  m.def("cli_main", &CliMain, nb::arg("argv"),
        "Runs the hlomem command line with argv (argv[0] the program name); returns the exit code.");
}
