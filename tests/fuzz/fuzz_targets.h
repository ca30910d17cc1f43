// The fuzz targets, as plain functions: libFuzzer drives them through
// fuzzer_main.cc, and tests/hostile/regress_test.cc replays the inputs under
// tests/regress/<target>/ through the same code in every build.
//
// A target returns normally for any input. It aborts when an input breaks a
// contract no sanitizer sees: a failure whose message is not a diagnostic
// naming the input.
#ifndef HLOMEM_TESTS_FUZZ_FUZZ_TARGETS_H_
#define HLOMEM_TESTS_FUZZ_FUZZ_TARGETS_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hlomem::fuzz {

// HLO text -> parser -> verifier -> buffer assignment, profile, detectors.
void FuzzHloText(absl::string_view data);
// Binary and text-format HloProto / HloModuleProto / HloSnapshot -> proto
// reader -> XLA's attached assignment -> the engine.
void FuzzHloProto(absl::string_view data);
// XLA's -buffer-assignment.txt, -buffer-assignment-values.txt,
// -live-range.txt and -memory-usage-report.txt readers, each fed every
// input: their formats share sections, so seeds of one reach the others.
void FuzzXlaBufferAssignment(absl::string_view data);
// The dump file-name parser, on any bytes (non-UTF-8 names included).
void FuzzDumpFileName(absl::string_view data);
// The text-proto field reader under the target files (lib/target).
void FuzzTextProto(absl::string_view data);
// A *.gpu_target_config.pbtxt -> GpuDevice -> the resolved GPU target.
void FuzzGpuTargetConfig(absl::string_view data);
// A TPU *.target_arguments.txt -> generation -> the resolved TPU target.
void FuzzTpuTargetArguments(absl::string_view data);
// A log or pasted error -> the out-of-memory messages of XLA:TPU and XLA:GPU.
void FuzzXlaOomError(absl::string_view data);
// A report's JSON (check's and diff's baselines) -> the report -> JSON again.
void FuzzReportJson(absl::string_view data);

struct FuzzTarget {
  absl::string_view name;  // the fuzzer binary and tests/regress/<name>/
  void (*run)(absl::string_view data);
};
absl::Span<const FuzzTarget> FuzzTargets();

}  // namespace hlomem::fuzz

#endif  // HLOMEM_TESTS_FUZZ_FUZZ_TARGETS_H_
