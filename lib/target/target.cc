#include "lib/target/target.h"

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"

namespace hlomem::target {

absl::string_view BackendName(Backend backend) {
  switch (backend) {
    case Backend::kCpu: return "cpu";
    case Backend::kGpu: return "gpu";
    case Backend::kTpu: return "tpu";
    case Backend::kUnknown: break;
  }
  return "";
}

int64_t Target::BufferBytes(const hlo::ShapeTable& shapes, hlo::ShapeId shape) const {
  return shapes.ByteSize(shape);
}

int64_t Target::ColorOf(const hlo::Shape& shape) const {
  return shape.layout ? shape.layout->memory_space : 0;
}

MemorySpace Target::Space(int64_t color) const {
  // CPU and GPU runtimes put every colour but host memory in device memory
  // (GPU colours 1 and 2 are collective and temp buffers).
  MemorySpace space;
  if (color == kHostColor) {
    space.name = "host";
    space.is_host = true;
  } else {
    space.name = color == 0 ? "device" : absl::StrCat("S(", color, ")");
    space.is_main = true;
  }
  return space;
}

std::optional<bool> Target::MayAlias(const hlo::Module&, hlo::InstrId, const hlo::ShapeIndex&,
                                     hlo::InstrId, const hlo::ShapeIndex&) const {
  return std::nullopt;
}

bool AddToMemoryStats(const Target& target, int64_t color, const AllocationRole& role,
                      int64_t size, MemoryStats* stats) {
  const MemorySpace space = target.Space(color);
  if ((!space.is_main && !space.is_host) || !space.in_memory_analysis) return false;
  const bool host = space.is_host;
  auto add = [size](int64_t& sum) { sum = SaturatingAdd(sum, size); };
  if (role.parameter) {
    add(host ? stats->host_argument_bytes : stats->argument_bytes);
    if (role.aliased) add(host ? stats->host_alias_bytes : stats->alias_bytes);
  }
  if (role.live_out) add(host ? stats->host_output_bytes : stats->output_bytes);
  if (role.temp) add(host ? stats->host_temp_bytes : stats->temp_bytes);
  if (role.constant) add(stats->constant_bytes);
  if (role.thread_local_) add(stats->thread_local_bytes);
  return true;
}

std::string Target::caveat() const {
  if (exact()) return "";
  return absl::StrCat("the ", name_, " backend's buffer assignment is reproduced approximately");
}

}  // namespace hlomem::target
