#include "lib/detect/detectors.h"

#include <algorithm>

namespace hlomem::detect {

absl::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "";
}

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The registry. Add a detector here and nowhere else.
constexpr DetectorInfo kDetectors[] = {
    {"none-yet", "placeholder until the first detector lands", kMiB, nullptr},
};

}  // namespace

absl::Span<const DetectorInfo> Detectors() {
  absl::Span<const DetectorInfo> all(kDetectors);
  // Entries without an implementation are not detectors yet.
  size_t n = 0;
  while (n < all.size() && all[n].run != nullptr) ++n;
  return all.subspan(0, n);
}

std::vector<Finding> RunDetectors(const DetectorInput& input, const DetectOptions& options) {
  std::vector<Finding> findings;
  for (const DetectorInfo& d : Detectors()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), d.name) == options.only.end()) {
      continue;
    }
    const int64_t threshold = options.min_bytes >= 0 ? options.min_bytes : d.default_min_bytes;
    std::vector<Finding> found;
    d.run(input, threshold, &found);
    for (Finding& f : found) {
      if (f.bytes >= threshold) findings.push_back(std::move(f));
    }
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.bytes > b.bytes; });
  return findings;
}

}  // namespace hlomem::detect
