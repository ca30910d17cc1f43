#include "lib/report/fit_result.h"

#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

absl::Status NotAFitResult(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": error: not a `hlomem fit --format json` result (", why, ")"));
}

std::string Scalar(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string Describe(const std::optional<int64_t>& largest) {
  return largest ? std::to_string(*largest) : "nothing fits";
}

}  // namespace

bool LooksLikeFitResult(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return json.is_object() && json.value("kind", "") == "fit";
}

absl::StatusOr<FitResultFile> ParseFitResult(const std::string& path, const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return NotAFitResult(path, "not JSON");
  if (!json.is_object() || json.value("kind", "") != "fit") return NotAFitResult(path, "no \"kind\": \"fit\"");
  const auto setting = json.find("setting");
  const auto frontier = json.find("frontier");
  if (setting == json.end() || !setting->is_string()) return NotAFitResult(path, "no \"setting\"");
  if (frontier == json.end() || !frontier->is_array()) return NotAFitResult(path, "no \"frontier\"");
  FitResultFile file;
  file.path = path;
  file.setting = setting->get<std::string>();
  if (json.contains("device") && json["device"].is_string()) file.device = json["device"];
  if (json.contains("device") && json["device"].is_array()) {  // chips as a choice of the grid
    std::vector<std::string> chips;
    for (const nlohmann::json& chip : json["device"]) chips.push_back(Scalar(chip));
    file.device = absl::StrCat("each of ", absl::StrJoin(chips, ", "));
  }
  for (const nlohmann::json& point : *frontier) {
    if (!point.is_object() || !point.contains("choices") || !point["choices"].is_object() ||
        !point.contains("largest")) {
      return NotAFitResult(path, "a frontier entry without \"choices\" and \"largest\"");
    }
    FitPoint entry;
    entry.choices = point["choices"].dump();  // nlohmann orders an object's keys
    std::vector<std::string> label;
    for (const auto& [name, value] : point["choices"].items()) {
      label.push_back(absl::StrCat(name, "=", Scalar(value)));
    }
    entry.label = absl::StrJoin(label, ", ");
    if (point["largest"].is_number_integer()) {
      entry.largest = point["largest"].get<int64_t>();
    } else if (!point["largest"].is_null()) {
      return NotAFitResult(path, "\"largest\" is neither an integer nor null");
    }
    if (point.contains("error") && point["error"].is_string()) entry.error = point["error"];
    file.frontier.push_back(std::move(entry));
  }
  return file;
}

absl::StatusOr<FitGateResult> CheckFitResult(const FitResultFile& now, const FitGateOptions& options) {
  std::map<std::string, std::optional<int64_t>> before;
  if (options.baseline != nullptr) {
    if (options.baseline->setting != now.setting) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.baseline->path, ": error: the baseline searched '", options.baseline->setting,
                       "', ", now.path, " searched '", now.setting, "'"));
    }
    for (const FitPoint& point : options.baseline->frontier) before[point.choices] = point.largest;
  }
  FitGateResult result;
  for (const FitPoint& point : now.frontier) {
    const std::string label = point.label.empty() ? now.setting : point.label;
    std::vector<std::string> failures;
    if (!point.error.empty()) {
      failures.push_back(absl::StrCat("a probe's compile failed: ", point.error.substr(0, point.error.find('\n'))));
    }
    const auto was = before.find(point.choices);
    if (was != before.end() && was->second &&
        (!point.largest || *point.largest < *was->second)) {
      failures.push_back(absl::StrCat("fell from ", *was->second, " (baseline) to ", Describe(point.largest)));
    }
    if (options.at_least && (!point.largest || *point.largest < *options.at_least)) {
      failures.push_back(absl::StrCat(Describe(point.largest), " is below --at-least ", *options.at_least));
    }
    std::string line = absl::StrCat(failures.empty() ? "ok    " : "FAIL  ", label, ": the largest ", now.setting,
                                    " that fits is ", point.largest ? std::to_string(*point.largest) : "none");
    if (was != before.end()) absl::StrAppend(&line, " (baseline ", Describe(was->second), ")");
    if (!failures.empty()) absl::StrAppend(&line, ": ", absl::StrJoin(failures, "; "));
    result.lines.push_back(std::move(line));
    result.violations += failures.empty() ? 0 : 1;
  }
  return result;
}

std::string FormatFitGate(const FitResultFile& now, const FitGateResult& result) {
  std::string out = absl::StrCat("check fit: ", now.path, ", the largest ", now.setting, " that fits",
                                 now.device.empty() ? "" : absl::StrCat(" ", now.device), "\n");
  for (const std::string& line : result.lines) absl::StrAppend(&out, "  ", line, "\n");
  absl::StrAppend(&out, result.passed() ? "check passed\n"
                                        : absl::StrCat("check FAILED: ", result.violations, " violation",
                                                       result.violations == 1 ? "" : "s", "\n"));
  return out;
}

}  // namespace hlomem::report
