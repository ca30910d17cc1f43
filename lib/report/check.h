// `hlomem check`: the CI gate. Budgets on each module's numbers, growth
// against a baseline report, findings of chosen detectors, and device fit;
// every violation names the module, the number, the limit and the buffers
// that contribute most, so a red CI run says what to look at.
#ifndef HLOMEM_LIB_REPORT_CHECK_H_
#define HLOMEM_LIB_REPORT_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/report/report.h"

namespace hlomem::report {

struct CheckOptions {
  std::optional<int64_t> max_total;
  std::optional<int64_t> max_temp;
  std::optional<int64_t> max_peak;
  const Report* baseline = nullptr;  // a previous `report --format json`
  double tolerance_percent = 0;      // growth over the baseline allowed
  // Detector names whose findings fail the gate; "all" means any finding.
  std::vector<std::string> fail_on;
  int contributors = 3;  // buffers named per violation
  // Name the gates as Python's keywords (max_total=, tolerance=, fail_on=)
  // instead of the CLI's flags (--max-total, --tolerance, --fail-on).
  bool python_names = false;
};

// A buffer that makes a number large, for the failure message.
struct Contributor {
  int64_t bytes = 0;  // its bytes, or its growth for a baseline violation
  std::string label;  // op_name or instruction
  std::string shape;
  std::string source_file;
  int64_t source_line = 0;
};

struct Violation {
  std::string module;
  // Stable rule ids (SARIF ruleId): "max-total", "max-temp", "max-peak",
  // "baseline-total", "baseline-temp", "baseline-peak", "device-fit", or
  // the detector name of a --fail-on finding.
  std::string rule;
  int64_t value = 0;
  int64_t limit = 0;
  std::string message;  // one line, sizes human-readable and exact
  std::string details;  // a finding's full text ("" for budgets)
  std::vector<Contributor> contributors;
  // Where in the user's program to point (the top contributor's source).
  std::string source_file;
  int64_t source_line = 0;
  // On a helper module (HelperModules): still a violation, but the text
  // says how to gate the step alone when every violation is on one.
  bool on_helper = false;
};

struct CheckResult {
  std::vector<Violation> violations;
  // Passing lines ("total 224.01GiB within --max-total 250GiB") and notes
  // (a module missing from the baseline).
  std::vector<std::string> passes;
  // Per pass, the name of its module when that module is a helper
  // (HelperModules: jit__normal, jit_true_divide, ...), else "": the text
  // summarizes those passes on one line.
  std::vector<std::string> pass_helper;
  std::vector<size_t> pass_module;  // per pass, its module's index in the report
  std::vector<std::string> notes;
  bool passed() const { return violations.empty(); }
};

CheckResult RunCheck(const Report& report, const CheckOptions& options);

// An error when a module of the report or of the baseline has no
// counterpart on the other side (pairing.h): a gate that skips a module it
// cannot pair passes by accident. With `allow_new`, the paired modules are
// checked and the others noted. `remedy` ends the error: what to do, in
// the face's own words.
absl::Status ValidateBaseline(const Report& report, const Report& baseline, bool allow_new,
                              absl::string_view remedy);

// The human form: one block per violation, then a verdict line. Unless
// `all`, the passes of helper modules are one line; violations are always
// each listed, whatever module they are on.
std::string FormatCheckText(const CheckResult& result, bool all = true);

// GitHub workflow commands for stderr: `::error file=...,line=...,title=...::msg`
// per violation and `::warning` per finding that did not fail the gate.
// GitHub shows at most 10 annotations of a type per step: the first `cap`
// of each get one, then a notice says where the rest are. `source_root`
// (e.g. $GITHUB_WORKSPACE) is stripped from file paths so annotations land
// on the repository's files.
// Unless `all`, findings on helper modules (HelperModules: random init,
// optimizer init) are not annotated, since the user cannot act on them;
// a notice counts them. Violations are annotated on any module.
std::string GithubAnnotations(const CheckResult& result, const Report& report,
                              const std::string& source_root, int cap = 10, bool all = true);

// The path relative to `root` when it lies under it, else unchanged.
std::string RelativeTo(const std::string& path, const std::string& root);

}  // namespace hlomem::report

#endif  // HLOMEM_LIB_REPORT_CHECK_H_
