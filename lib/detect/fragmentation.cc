// fragmentation: the temp heap XLA lays out is larger than the most
// temporary bytes live at once (the no-fragmentation lower bound), by a
// significant share: temporaries of different sizes and interleaved
// lifetimes leave holes the heap simulator cannot fill.
//
// Bytes: heap size minus that lower bound, what a perfect packing of the
// same buffers would save in the module's total; reported from 5% of the
// heap on.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {

void DetectFragmentation(const DetectorInput& input, int64_t /*min_bytes*/,
                         std::vector<Finding>* findings) {
  const Context ctx(input);
  const analysis::AssignmentStats& stats = ctx.assignment().stats();
  const int64_t wasted = ctx.profile().fragmentation_bytes;
  constexpr int64_t kSignificantPercent = 5;
  if (wasted <= 0 || wasted * 100 < kSignificantPercent * stats.heap_bytes) return;

  // The temporaries live at the peak are the ones whose packing matters.
  std::vector<hlo::InstrId> temps;
  constexpr size_t kListed = 6;
  for (size_t k : ctx.profile().live_at_peak) {
    const analysis::BufferRecord& r = ctx.profile().buffers[k];
    if (r.kind == analysis::BufferKind::kTemp && !r.is_tuple_table && temps.size() < kListed) {
      temps.push_back(r.instruction);
    }
  }
  Finding f = ctx.MakeFinding("fragmentation", wasted, temps.empty() ? hlo::kNoId : temps[0]);
  f.message = absl::StrFormat(
      "The temp heap is %s but at most %s of temporaries are live at once: %s (%.1f%% of the "
      "heap) are holes left between buffers of different sizes and lifetimes.",
      HumanBytes(stats.heap_bytes), HumanBytes(stats.heap_lower_bound), HumanBytes(wasted),
      100.0 * static_cast<double>(wasted) / static_cast<double>(stats.heap_bytes));
  f.suggestion =
      "Give the large intermediates fewer distinct sizes and nested lifetimes: consume each "
      "result soon after it is produced, bucket or pad shapes to a few sizes, or loop over "
      "equal-size chunks with lax.scan/lax.map so one buffer is reused. Memory the heap cannot "
      "pack is also a reason to try jax.checkpoint on the longest-lived intermediates.";
  f.instructions = InstructionNames(ctx.module(), temps);
  findings->push_back(std::move(f));
}

}  // namespace hlomem::detect
