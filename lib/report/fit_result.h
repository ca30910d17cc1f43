// A committed `hlomem fit --format json` result as a CI gate: `hlomem check
// FIT.json --baseline COMMITTED.json` fails when the largest fitting value
// of any combination fell below the committed one ("the largest batch on
// v5e-16gb may not fall below 24"), `--at-least N` when it is below N.
// The fit itself runs in Python (python/hlomem/_fit.py); this reads what it
// wrote.
#ifndef HLOMEM_LIB_REPORT_FIT_RESULT_H_
#define HLOMEM_LIB_REPORT_FIT_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlomem::report {

struct FitPoint {
  std::string choices;  // the discrete settings, canonical: {"remat":"none"}
  std::string label;    // "remat=none", or "" without discrete settings
  std::optional<int64_t> largest;  // nullopt: nothing in the range fits
  std::string error;               // a probe's compile failed (not memory)
};

struct FitResultFile {
  std::string path;
  std::string setting;  // "batch"
  std::string device;
  std::vector<FitPoint> frontier;
};

// Whether `text` is a fit result (its "kind" is "fit") rather than a report.
bool LooksLikeFitResult(const std::string& text);

// Errors name the path: not JSON, not a fit result, a field missing.
absl::StatusOr<FitResultFile> ParseFitResult(const std::string& path, const std::string& text);

struct FitGateOptions {
  const FitResultFile* baseline = nullptr;
  std::optional<int64_t> at_least;
};

struct FitGateResult {
  std::vector<std::string> lines;  // one per combination, verdict first
  int violations = 0;
  bool passed() const { return violations == 0; }
};

// The baseline must have searched the same setting (an error otherwise);
// a combination it lacks is checked against --at-least only.
absl::StatusOr<FitGateResult> CheckFitResult(const FitResultFile& now, const FitGateOptions& options);

std::string FormatFitGate(const FitResultFile& now, const FitGateResult& result);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_FIT_RESULT_H_
