// xla-disagreement: where the dump holds XLA's own buffer assignment and a
// memory space's allocations differ from hlomem's. XLA's figures decide the
// gate and the device fit for the module; the finding says by how much the
// computed ones are off, so the difference is not hidden in a table.
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {

void DetectXlaDisagreement(const DetectorInput& input, int64_t min_bytes,
                           std::vector<Finding>* findings) {
  if (input.xla_color_bytes == nullptr) return;
  const target::Target& target = input.assignment.target();
  const std::map<int64_t, int64_t>& xla = *input.xla_color_bytes;
  const std::map<int64_t, int64_t>& computed = input.assignment.stats().color_bytes;
  std::map<int64_t, int64_t> colors = xla;
  for (const auto& [color, bytes] : computed) colors.emplace(color, 0);
  int64_t off_by = 0;
  std::string spaces;
  for (const auto& [color, unused] : colors) {
    const auto x = xla.find(color);
    const auto c = computed.find(color);
    const int64_t xla_bytes = x == xla.end() ? 0 : x->second;
    const int64_t computed_bytes = c == computed.end() ? 0 : c->second;
    if (xla_bytes == computed_bytes) continue;
    off_by += std::llabs(computed_bytes - xla_bytes);
    absl::StrAppend(&spaces, spaces.empty() ? "" : "; ", target.Space(color).name, ": hlomem ",
                    HumanBytes(computed_bytes), ", XLA ", HumanBytes(xla_bytes));
  }
  if (off_by == 0 || off_by < min_bytes) return;
  Finding f;
  f.detector = "xla-disagreement";
  f.severity = Severity::kInfo;
  f.bytes = off_by;
  f.message = absl::StrCat("hlomem's buffer assignment (", target.name(),
                           " rules) differs from XLA's own in the dump: ", spaces, ".");
  f.suggestion =
      "XLA's figures decide the check and the device fit for this module. `hlomem "
      "buffer-assignment FILE` prints hlomem's allocations in the layout of the dump's "
      "-buffer-assignment.txt, to see which allocation parts; a report of the module helps "
      "hlomem's rules for this backend.";
  findings->push_back(std::move(f));
}

}  // namespace hlomem::detect
