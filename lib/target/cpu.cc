// XLA:CPU (xla/service/cpu/cpu_compiler.cc's buffer assignment): the
// default colorer, the base AliasInfo, CpuExecutable::ShapeSizeBytes.
#include "lib/target/target.h"

namespace hlomem::target {
namespace {

// EIGEN_MAX_ALIGN_BYTES in XLA's own Eigen build (jaxlib, TensorFlow).
constexpr int64_t kCpuAlignment = 64;

class CpuTarget final : public Target {
 public:
  CpuTarget(Backend backend, int64_t alignment)
      : Target(backend, std::string(BackendName(backend))),
        alignment_(alignment > 0 ? alignment : kCpuAlignment) {}

  int64_t Alignment(int64_t) const override { return alignment_; }
  bool exact() const override { return true; }

 private:
  int64_t alignment_;
};

}  // namespace

std::unique_ptr<Target> MakeCpuTarget(int64_t alignment) {
  return std::make_unique<CpuTarget>(Backend::kCpu, alignment);
}

std::unique_ptr<Target> MakeUnknownTarget(int64_t alignment) {
  return std::make_unique<CpuTarget>(Backend::kUnknown, alignment);
}

const Target& DefaultTarget() {
  static const Target* const kCpu = MakeCpuTarget().release();
  return *kCpu;
}

}  // namespace hlomem::target
