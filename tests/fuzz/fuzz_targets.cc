#include "tests/fuzz/fuzz_targets.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/base/file_contents.h"
#include "lib/detect/detectors.h"
#include "lib/dump/dump_file_name.h"
#include "lib/dump/xla_buffer_assignment.h"
#include "lib/dump/xla_buffer_assignment_proto.h"
#include "lib/dump/xla_error.h"
#include "lib/hlo/module.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "lib/report/writers.h"
#include "lib/target/gpu.h"
#include "lib/target/resolve.h"
#include "lib/target/target_files.h"
#include "lib/target/tpu.h"
#include "proto/xla.pb.h"

namespace hlomem::fuzz {
namespace {

// A failure must be a diagnostic that names the input.
void CheckDiagnostic(const absl::Status& status, absl::string_view path) {
  if (status.ok()) return;
  const absl::string_view message = status.message();
  if (!absl::StartsWith(message, path) || !absl::StrContains(message, "error: ")) {
    std::fprintf(stderr, "failure without a located diagnostic: %s\n",
                 std::string(message).c_str());
    std::abort();
  }
}

// What `hlomem report` does with a module that parsed: the loader's checks,
// then the whole engine. It must not crash on any module the verifier
// accepts.
void AnalyzeModule(const hlo::Module& module) {
  if (!hlo::VerifyModule(module).ok() ||
      !hlo::VerifyElementCount(module, hlo::kDefaultMaxElements).ok()) {
    return;
  }
  absl::StatusOr<std::unique_ptr<analysis::BufferAssignment>> assignment =
      analysis::BufferAssignment::Run(module);
  if (!assignment.ok()) return;
  const analysis::MemoryProfile profile = analysis::ComputeMemoryProfile(**assignment);
  const detect::DetectorInput input{module, **assignment, profile};
  detect::RunDetectors(input, detect::DetectOptions{});
  analysis::FormatAllocations(**assignment);
}

// The text parsed in parts (cut wherever the layout allows, bodies
// included) must give the sequential parse's result: the same diagnostic,
// or modules of the same instructions and operands.
void CheckPartsAgree(absl::string_view data, absl::string_view path,
                     const absl::StatusOr<std::vector<hlo::Module>>& sequential) {
  hlo::ParseOptions in_parts;
  in_parts.threads = 3;
  in_parts.min_part_bytes = 1;
  const absl::StatusOr<std::vector<hlo::Module>> parts = hlo::ParseHloString(data, path, in_parts);
  bool agree = parts.ok() == sequential.ok();
  if (agree && !parts.ok()) agree = parts.status().message() == sequential.status().message();
  if (agree && parts.ok()) {
    agree = parts->size() == sequential->size();
    for (size_t m = 0; agree && m < parts->size(); ++m) {
      const hlo::Module& a = (*parts)[m];
      const hlo::Module& b = (*sequential)[m];
      agree = a.instructions.size() == b.instructions.size() &&
              a.computations.size() == b.computations.size() &&
              a.operand_pool == b.operand_pool &&
              a.control_predecessor_pool == b.control_predecessor_pool;
      for (size_t c = 0; agree && c < a.computations.size(); ++c) {
        agree = a.computations[c].root == b.computations[c].root &&
                a.computations[c].instruction_count == b.computations[c].instruction_count;
      }
    }
  }
  if (!agree) {
    std::fprintf(stderr, "the parse in parts disagrees with the sequential parse\n");
    std::abort();
  }
}

void CheckProtoRead(const absl::StatusOr<hlo::ProtoReadResult>& read, absl::string_view path) {
  if (!read.ok()) {
    CheckDiagnostic(read.status(), path);
    return;
  }
  if (read->has_buffer_assignment()) {
    (void)dump::XlaBufferAssignmentFromProto(*read);
    dump::ReplayHeapSimulatorTraces(*read->buffer_assignment);
    dump::StaticPeakBytes(*read->buffer_assignment);
    dump::ComputePeakMemory(*read->buffer_assignment);
  }
  AnalyzeModule(read->module);
}

}  // namespace

void FuzzHloText(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.hlo";
  absl::StatusOr<std::vector<hlo::Module>> modules = hlo::ParseHloString(data, kPath);
  CheckPartsAgree(data, kPath, modules);
  if (!modules.ok()) {
    CheckDiagnostic(modules.status(), kPath);
    return;
  }
  for (const hlo::Module& module : *modules) AnalyzeModule(module);
}

void FuzzHloProto(absl::string_view data) {
  const std::string bytes(data);
  CheckProtoRead(hlo::ReadHloProto(FileContents::FromString("fuzz.hlo.pb", bytes)),
                 "fuzz.hlo.pb");
  CheckProtoRead(hlo::ReadHloProtoText(FileContents::FromString("fuzz.pbtxt", bytes)),
                 "fuzz.pbtxt");
}

void FuzzXlaBufferAssignment(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.txt";
  absl::StatusOr<dump::XlaBufferAssignment> assignment =
      dump::ParseXlaBufferAssignment(kPath, data);
  if (assignment.ok()) {
    assignment->Stats();
    assignment->SumOfAllocationSizes();
    CheckDiagnostic(dump::ParseXlaBufferAssignmentValues(kPath, data, &*assignment), kPath);
  } else {
    CheckDiagnostic(assignment.status(), kPath);
  }
  dump::XlaBufferAssignment empty;
  CheckDiagnostic(dump::ParseXlaBufferAssignmentValues(kPath, data, &empty), kPath);
  CheckDiagnostic(dump::ParseXlaLiveRange(kPath, data).status(), kPath);
  CheckDiagnostic(dump::ParseXlaMemoryUsageReport(kPath, data).status(), kPath);
}

void FuzzDumpFileName(absl::string_view data) {
  const std::optional<dump::DumpFileName> parsed = dump::ParseDumpFileName(data);
  if (parsed) {
    parsed->ModuleStem();
    dump::FileKindName(parsed->kind);
    dump::StageName(parsed->stage);
  }
  dump::FileKindName(dump::GuessStandaloneFileKind(data));
}

void FuzzTextProto(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.txtpb";
  const absl::Status status = target::ForEachTextProtoField(
      kPath, data, [](const std::string& field, const std::string&) {
        // Every field path starts with a name (the reader takes dots inside
        // names as written, so "a..b" is one name, not an empty part).
        if (field.empty() || !(absl::ascii_isalpha(static_cast<unsigned char>(field[0])) ||
                               field[0] == '_' || field[0] == '[')) {
          std::fprintf(stderr, "malformed field path '%s'\n", field.c_str());
          std::abort();
        }
      });
  CheckDiagnostic(status, kPath);
}

void FuzzGpuTargetConfig(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.gpu_target_config.pbtxt";
  const absl::StatusOr<target::GpuDevice> device = target::ParseGpuTargetConfig(kPath, data);
  if (!device.ok()) {
    CheckDiagnostic(device.status(), kPath);
    return;
  }
  if (device->memory_bytes < 0) {
    std::fprintf(stderr, "negative device memory\n");
    std::abort();
  }
  target::TargetInputs inputs;
  inputs.file_backend = "sm_9.0a";
  inputs.gpu_target_config_path = std::string(kPath);
  inputs.gpu_target_config = std::string(data);
  absl::StatusOr<std::unique_ptr<target::Target>> resolved = target::ResolveTarget(inputs, nullptr);
  if (!resolved.ok() || (*resolved)->backend() != target::Backend::kGpu) {
    std::fprintf(stderr, "a config that parsed did not resolve to a GPU\n");
    std::abort();
  }
  (*resolved)->Alignment(0);
  (*resolved)->caveat();
}

void FuzzTpuTargetArguments(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.target_arguments.txt";
  const absl::StatusOr<const target::TpuGeneration*> generation =
      target::ParseTpuTargetArguments(kPath, data);
  if (!generation.ok()) {
    CheckDiagnostic(generation.status(), kPath);
    return;
  }
  if (*generation != nullptr && target::FindTpuGeneration((*generation)->name) != *generation) {
    std::fprintf(stderr, "generation not found by its own name\n");
    std::abort();
  }
  target::TargetInputs inputs;
  inputs.file_backend = "cl_1004524046";
  inputs.tpu_target_arguments_path = std::string(kPath);
  inputs.tpu_target_arguments = std::string(data);
  absl::StatusOr<std::unique_ptr<target::Target>> resolved = target::ResolveTarget(inputs, nullptr);
  if (!resolved.ok() || (*resolved)->backend() != target::Backend::kTpu ||
      (*resolved)->device().has_value() != (*generation != nullptr)) {
    std::fprintf(stderr, "arguments that parsed did not resolve to their TPU\n");
    std::abort();
  }
  // The names --target and the device presets take go through the same
  // lookup; any bytes must give a generation or nullptr.
  target::FindTpuGeneration(data.substr(0, 64));
}

void FuzzXlaOomError(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.error.txt";
  const absl::StatusOr<std::vector<dump::XlaOomError>> errors = dump::ParseXlaOomErrors(kPath, data);
  if (!errors.ok()) {
    CheckDiagnostic(errors.status(), kPath);
    return;
  }
  const int64_t lines = 1 + static_cast<int64_t>(std::count(data.begin(), data.end(), '\n'));
  int64_t previous_line = 0;
  for (const dump::XlaOomError& e : *errors) {
    bool sizes_ok = e.needed_bytes.value_or(0) >= 0 && e.available_bytes.value_or(0) >= 0 &&
                    e.rounding_bytes >= 0;
    if (e.listing) {
      for (const auto& [name, bytes] : e.listing->stats) sizes_ok = sizes_ok && bytes >= 0;
      for (const dump::XlaOomListing::PeakBuffer& b : e.listing->peak_buffers) {
        sizes_ok = sizes_ok && b.bytes >= 0 && b.source_line >= 0;
      }
    }
    if (!sizes_ok || e.line <= previous_line || e.line > lines || e.message.size() > data.size()) {
      std::fprintf(stderr, "an OOM message with a negative size or a line out of order\n");
      std::abort();
    }
    previous_line = e.line;
    dump::XlaOomKindName(e.kind);
  }
}

void FuzzReportJson(absl::string_view data) {
  constexpr absl::string_view kPath = "fuzz.json";
  const absl::StatusOr<report::Report> read = report::ReadJsonReport(data, std::string(kPath));
  if (!read.ok()) {
    CheckDiagnostic(read.status(), kPath);
    return;
  }
  // Whatever was read must write again (a baseline's numbers are shown).
  report::WriteJson(*read, report::WriteOptions());
}

absl::Span<const FuzzTarget> FuzzTargets() {
  static constexpr FuzzTarget kTargets[] = {
      {"hlo_text", &FuzzHloText},
      {"hlo_proto", &FuzzHloProto},
      {"xla_buffer_assignment", &FuzzXlaBufferAssignment},
      {"dump_file_name", &FuzzDumpFileName},
      {"text_proto", &FuzzTextProto},
      {"gpu_target_config", &FuzzGpuTargetConfig},
      {"tpu_target_arguments", &FuzzTpuTargetArguments},
      {"xla_oom_error", &FuzzXlaOomError},
      {"report_json", &FuzzReportJson},
  };
  return kTargets;
}

}  // namespace hlomem::fuzz
