// SARIF 2.1.0 for GitHub code scanning. Results point at the user's Python
// file:line from the HLO metadata (relative to the source root, so GitHub
// can place them on the diff); results with no source point at the dump
// file. ruleIds and partialFingerprints are stable across runs.
#include <cstdio>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/detectors.h"
#include "lib/report/writers.h"
#include "nlohmann/json.hpp"

namespace hlomem::report {
namespace {

using Json = nlohmann::ordered_json;

std::string RuleDescription(const std::string& id) {
  static const std::map<std::string, std::string> kGateRules = {
      {"max-total", "Total bytes of a module exceed --max-total"},
      {"max-temp", "Temporary bytes of a module exceed --max-temp"},
      {"max-peak", "Peak live bytes of a module exceed --max-peak"},
      {"baseline-total", "Total bytes grew over the baseline beyond --tolerance"},
      {"baseline-temp", "Temporary bytes grew over the baseline beyond --tolerance"},
      {"baseline-peak", "Peak live bytes grew over the baseline beyond --tolerance"},
      {"device-fit", "The module does not fit in the device's usable memory"},
  };
  auto it = kGateRules.find(id);
  if (it != kGateRules.end()) return it->second;
  for (const detect::DetectorInfo& d : detect::Detectors()) {
    if (d.name == id) return std::string(d.description);
  }
  return id;
}

// FNV-1a: stable across platforms and runs, unlike std::hash.
std::string Fingerprint(absl::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Json Location(const std::string& file, int64_t line, const std::string& source_root) {
  Json physical;
  physical["artifactLocation"] = {{"uri", RelativeTo(file, source_root)}};
  if (line > 0) physical["region"] = {{"startLine", line}};
  return Json::array({{{"physicalLocation", physical}}});
}

std::string DumpFileOf(const Report& report, const std::string& module) {
  for (const ModuleReport& m : report.modules) {
    if (m.name == module && !m.files.empty()) return m.files.front();
  }
  return "";
}

}  // namespace

std::string WriteSarif(const CheckResult& result, const Report& report,
                       const std::string& source_root, const std::string& tool_version) {
  Json results = Json::array();
  std::vector<std::string> rule_ids;
  std::map<std::string, size_t> rule_index;
  auto add = [&](const std::string& rule, const char* level, const std::string& message,
                 const std::string& module, const std::string& file, int64_t line,
                 const std::string& identity) {
    if (rule_index.emplace(rule, rule_ids.size()).second) rule_ids.push_back(rule);
    Json r;
    r["ruleId"] = rule;
    r["ruleIndex"] = rule_index[rule];
    r["level"] = level;
    r["message"] = {{"text", message}};
    const std::string where = file.empty() ? DumpFileOf(report, module) : file;
    r["locations"] = Location(where, file.empty() ? 1 : line, file.empty() ? "" : source_root);
    r["partialFingerprints"] = {
        {"hlomem/v1", Fingerprint(absl::StrCat(rule, "|", module, "|", identity))}};
    results.push_back(std::move(r));
  };
  std::set<std::pair<std::string, std::string>> failed;  // (module, rule)
  for (const Violation& v : result.violations) {
    failed.insert({v.module, v.rule});
    const std::string identity =
        v.contributors.empty() ? "" : absl::StrCat(v.contributors.front().label, "|", v.source_file, ":", v.source_line);
    add(v.rule, "error", v.message, v.module, v.source_file, v.source_line, identity);
  }
  for (const ModuleReport& m : report.modules) {
    for (const detect::Finding& f : m.findings) {
      if (failed.count({m.name, f.detector})) continue;
      const char* level = f.severity == detect::Severity::kError   ? "error"
                          : f.severity == detect::Severity::kInfo ? "note"
                                                                  : "warning";
      add(f.detector, level,
          absl::StrCat(m.name, ": ",
                       f.summary.empty() ? absl::StrCat(f.message, " (", HumanBytes(f.bytes), ")")
                                         : absl::StrCat(f.summary, ". ", f.message),
                       f.suggestion.empty() ? "" : absl::StrCat(" Fix: ", f.suggestion)),
          m.name, f.source_file, f.source_line,
          absl::StrCat(f.op_name, "|", f.source_file, ":", f.source_line));
    }
  }
  Json rules = Json::array();
  for (const std::string& id : rule_ids) {
    rules.push_back({{"id", id}, {"name", id}, {"shortDescription", {{"text", RuleDescription(id)}}}});
  }
  Json driver;
  driver["name"] = "hlomem";
  driver["version"] = tool_version;
  driver["rules"] = std::move(rules);
  Json run;
  run["tool"] = {{"driver", std::move(driver)}};
  run["results"] = std::move(results);
  Json root;
  root["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  root["version"] = "2.1.0";
  root["runs"] = Json::array({std::move(run)});
  return root.dump(2) + "\n";
}

}  // namespace hlomem::report
