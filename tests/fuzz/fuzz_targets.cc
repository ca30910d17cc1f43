#include "tests/fuzz/fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "lib/analysis/buffer_assignment.h"
#include "lib/analysis/memory_profile.h"
#include "lib/base/file_contents.h"
#include "lib/detect/detectors.h"
#include "lib/dump/dump_file_name.h"
#include "lib/dump/xla_buffer_assignment.h"
#include "lib/dump/xla_buffer_assignment_proto.h"
#include "lib/hlo/module.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
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

absl::Span<const FuzzTarget> FuzzTargets() {
  static constexpr FuzzTarget kTargets[] = {
      {"hlo_text", &FuzzHloText},
      {"hlo_proto", &FuzzHloProto},
      {"xla_buffer_assignment", &FuzzXlaBufferAssignment},
      {"dump_file_name", &FuzzDumpFileName},
  };
  return kTargets;
}

}  // namespace hlomem::fuzz
