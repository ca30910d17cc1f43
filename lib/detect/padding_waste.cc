// padding-waste: TPU's tiled layouts (T(8,128): 8 sublanes x 128 lanes on
// the two minor dimensions) round each buffer up to whole tiles; a minor
// dimension of 3 in a T(8,128) tile stores 128 lanes. CPU never produces
// tiled layouts, so only TPU dumps show this.
//
// Bytes: per shape, the padding (padded size minus logical size) of its
// buffers live at the module's peak: what the peak would drop by if they
// were not padded. Reported when padding is at least a fifth of the data.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

struct Group {
  int64_t padding = 0;  // summed over buffers live at the peak
  int64_t count = 0;
  std::vector<hlo::InstrId> instructions;
};

}  // namespace

void DetectPaddingWaste(const DetectorInput& input, int64_t min_bytes,
                        std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  const analysis::MemoryProfile& profile = ctx.profile();
  absl::flat_hash_map<hlo::ShapeId, Group> groups;
  std::vector<hlo::ShapeId> order;
  for (size_t k : profile.live_at_peak) {
    const analysis::BufferRecord& r = profile.buffers[k];
    const hlo::Shape& shape = m.shapes.get(r.shape);
    if (r.is_tuple_table || !shape.layout || shape.layout->tiles.empty()) continue;
    const int64_t logical = m.shapes.ByteSize(r.shape);
    const int64_t padding = m.shapes.PaddedByteSize(r.shape) - logical;
    constexpr int64_t kSignificantRatio = 5;  // padding >= logical / 5
    if (padding <= 0 || padding * kSignificantRatio < logical) continue;
    auto [it, inserted] = groups.try_emplace(r.shape);
    if (inserted) order.push_back(r.shape);
    it->second.padding += padding;
    it->second.count += 1;
    constexpr size_t kListed = 8;
    if (it->second.instructions.size() < kListed) it->second.instructions.push_back(r.instruction);
  }
  for (hlo::ShapeId shape : order) {
    const Group& g = groups[shape];
    if (g.padding < min_bytes) continue;
    const int64_t logical = m.shapes.ByteSize(shape);
    const int64_t padded = m.shapes.PaddedByteSize(shape);
    Finding f = ctx.MakeFinding("padding-waste", g.padding, g.instructions[0]);
    f.message = absl::StrFormat(
        "%d buffer%s of %s live at the peak hold %s of data in %s each: %.0f%% of the memory is "
        "tile padding (%s in all).",
        g.count, g.count == 1 ? "" : "s", m.shapes.ToString(shape), HumanBytes(logical),
        HumanBytes(padded), 100.0 * static_cast<double>(padded - logical) / static_cast<double>(padded),
        HumanBytes(g.padding));
    f.suggestion =
        "TPU tiles the two minor dimensions (8 sublanes x 128 lanes for 32-bit types, 16 x 128 "
        "for bf16, 32 x 128 for int8). Make the last dimension a multiple of 128 and the one "
        "before a multiple of 8: put the largest dimension last (jnp.transpose/reshape, e.g. "
        "merge small trailing dimensions), or pick batch and feature sizes that are multiples of "
        "128.";
    f.instructions = InstructionNames(m, g.instructions);
    findings->push_back(std::move(f));
  }
}

}  // namespace hlomem::detect
