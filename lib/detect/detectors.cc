#include "lib/detect/detectors.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/detector_list.h"

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

// The registry. Add a detector here and nowhere else. Each description says
// what `bytes` means for its findings.
constexpr DetectorInfo kDetectors[] = {
    {"duplicate-buffer",
     "a buffer holding another live buffer's elements again (sliced and re-concatenated, "
     "index-normalized, converted); bytes: the copy's size less any dtype-widening part",
     kMiB, DetectDuplicateBuffers},
    {"dtype-widening",
     "a buffer converting another to a wider type with the same element count (s16->s32, "
     "bf16->f32); bytes: the extra bytes of the wider type",
     kMiB, DetectDtypeWidening},
    {"broadcast-materialized",
     "a broadcast of a scalar or small operand stored in memory instead of fused into its "
     "consumer; bytes: the broadcast buffer's size",
     kMiB, DetectMaterializedBroadcasts},
    {"missed-donation",
     "entry parameters not donated though a same-shape output is their new value (written "
     "over them by their last reader), and donations XLA could not use; bytes: the outputs "
     "donation would remove",
     kMiB, DetectMissedDonations, /*needs_optimized_module=*/false},
    {"layout-copy",
     "a copy/transpose that only changes another live buffer's layout; bytes: the copy's size",
     kMiB, DetectLayoutCopies},
    {"fragmentation",
     "a temp heap larger than the most temporaries live at once by 5% or more; bytes: heap "
     "size minus that lower bound",
     kMiB, DetectFragmentation},
    {"padding-waste",
     "TPU tiled layouts padding buffers by a fifth or more; bytes: the padding of the buffers "
     "live at the peak",
     kMiB, DetectPaddingWaste},
    {"large-constant",
     "array constants embedded in the module; bytes: the constant's size",
     kMiB, DetectLargeConstants, /*needs_optimized_module=*/false},
    {"loop-carried-copy",
     "while loops copying their carried state each iteration; bytes: the copies' own buffers "
     "live at once",
     kMiB, DetectLoopCarriedCopies},
    {"saved-activations",
     "activations a train step's forward pass (jvp) keeps for its backward pass "
     "(transpose(jvp)), grouped by layer and source line; bytes: what jax.checkpoint on each "
     "layer would remove from the peak (the saved activations less the layer inputs kept and "
     "one layer's residuals recomputed)",
     kMiB, DetectSavedActivations},
    {"xla-disagreement",
     "a memory space whose allocations hlomem computes differently from XLA's own buffer "
     "assignment in the dump (XLA's decide); bytes: the differences, summed over the spaces",
     1, DetectXlaDisagreement},
};

}  // namespace

absl::Span<const DetectorInfo> Detectors() { return kDetectors; }

std::string Summary(const Finding& f) {
  if (!f.summary.empty()) return f.summary;
  // The first clause: up to ". ", ": " or "; " outside parentheses.
  const std::string& text = f.message;
  size_t end = text.size();
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && (c == '.' || c == ':' || c == ';') && (i + 1 == text.size() || text[i + 1] == ' ')) {
      end = i;
      break;
    }
  }
  std::string clause = text.substr(0, end);
  constexpr size_t kMax = 100;
  if (clause.size() > kMax) {
    const size_t space = clause.rfind(' ', kMax);
    clause = clause.substr(0, space == std::string::npos ? kMax : space) + " ...";
  }
  return clause.empty() ? HumanBytes(f.bytes) : absl::StrCat(HumanBytes(f.bytes), ": ", clause);
}

std::vector<Finding> RunDetectors(const DetectorInput& input, const DetectOptions& options) {
  std::vector<Finding> findings;
  for (const DetectorInfo& d : Detectors()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), d.name) == options.only.end()) {
      continue;
    }
    if (d.needs_optimized_module && !input.module.is_scheduled) continue;
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
