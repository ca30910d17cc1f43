#include "lib/target/resolve.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/target/gpu.h"
#include "lib/target/tpu.h"

namespace hlomem::target {
namespace {

// A target without a file: its name to XLA's device description. Memory
// sizes are the device_memory_size of XLA's GPU specs.
struct NamedGpu {
  absl::string_view name;
  GpuDevice device;
};
const std::vector<NamedGpu>& NamedGpus() {
  static const std::vector<NamedGpu> kGpus = {
      {"h100", {"sm_9.0a", "NVIDIA H100 80GB HBM3", 84978434048}},
      {"a100", {"sm_8.0", "NVIDIA A100-SXM4-80GB", 85100068864}},
      {"b200", {"sm_10.0a", "NVIDIA B200", 191514673152}},
      {"mi250", {"gfx90a", "AMD Instinct MI250X/MI250", 67628957696}},
  };
  return kGpus;
}

bool IsGpuCall(absl::string_view target) {
  return absl::StartsWith(target, "__cublas") || absl::StartsWith(target, "__cudnn") ||
         absl::StartsWith(target, "__triton") || absl::StartsWith(target, "__gpu$") ||
         absl::StartsWith(target, "__cusolver");
}

absl::StatusOr<std::unique_ptr<Target>> FromRequest(const TargetInputs& in) {
  std::string name = absl::AsciiStrToLower(in.requested);
  if (name == "cpu") return MakeCpuTarget(in.alignment);
  if (name == "gpu" || name == "cuda") return MakeGpuTarget(GpuDevice{}, in.alignment);
  if (name == "tpu") return MakeTpuTarget(nullptr, in.alignment);
  if (absl::StartsWith(name, "tpu-") || absl::StartsWith(name, "tpu_")) name = name.substr(4);
  if (const TpuGeneration* g = FindTpuGeneration(name)) return MakeTpuTarget(g, in.alignment);
  for (const NamedGpu& gpu : NamedGpus()) {
    if (name == gpu.name || name == absl::StrCat("gpu-", gpu.name)) {
      return MakeGpuTarget(gpu.device, in.alignment);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("error: unknown --target '", in.requested,
                                                 "'; known: ", KnownTargetNames()));
}

}  // namespace

Backend BackendOfFileToken(absl::string_view token) {
  if (token == "cpu") return Backend::kCpu;
  if (absl::StartsWith(token, "sm_") || absl::StartsWith(token, "gfx") || token == "gpu" ||
      absl::EndsWith(token, "_gpu")) {
    return Backend::kGpu;
  }
  if (absl::StartsWith(token, "cl_") || absl::StrContains(token, "tpu")) return Backend::kTpu;
  return Backend::kUnknown;
}

Backend BackendOfModule(const hlo::Module& m) {
  for (hlo::ShapeId id = 0; id < m.shapes.size(); ++id) {
    const hlo::Shape& shape = m.shapes.get(id);
    if (shape.layout && !shape.layout->tiles.empty()) return Backend::kTpu;
  }
  // Custom-call targets live in the few instructions' extras: a module
  // without a GPU library's target there has no such call (7.3 M
  // instructions against 0.6 M extras in a 1.1 GB module), and only one
  // with it needs the opcodes read.
  const bool names_a_gpu_call =
      std::any_of(m.extras.begin(), m.extras.end(), [](const hlo::InstructionExtras& e) {
        return IsGpuCall(e.custom_call_target);
      });
  if (!names_a_gpu_call) return Backend::kUnknown;
  for (hlo::InstrId i = 0; i < m.instructions.size(); ++i) {
    if (m.instr(i).opcode != hlo::Opcode::kCustomCall) continue;
    if (IsGpuCall(m.custom_call_target(i))) return Backend::kGpu;
  }
  return Backend::kUnknown;
}

std::string KnownTargetNames() {
  std::string out = "cpu, gpu, tpu";
  for (const NamedGpu& gpu : NamedGpus()) absl::StrAppend(&out, ", ", gpu.name);
  for (absl::string_view g : {"v2", "v3", "v4", "v5e", "v5p", "v6e"}) {
    absl::StrAppend(&out, ", tpu-", g);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Target>> ResolveTarget(const TargetInputs& in,
                                                     const hlo::Module* module) {
  if (!in.requested.empty()) return FromRequest(in);
  if (!in.gpu_target_config.empty()) {
    absl::StatusOr<GpuDevice> device =
        ParseGpuTargetConfig(in.gpu_target_config_path, in.gpu_target_config);
    if (!device.ok()) return device.status();
    if (device->arch.empty() && BackendOfFileToken(in.file_backend) == Backend::kGpu) {
      device->arch = in.file_backend;
    }
    return MakeGpuTarget(*device, in.alignment);
  }
  Backend backend = BackendOfFileToken(in.file_backend);
  if (backend == Backend::kUnknown && !in.tpu_target_arguments.empty()) backend = Backend::kTpu;
  if (backend == Backend::kUnknown && module != nullptr) backend = BackendOfModule(*module);
  switch (backend) {
    case Backend::kGpu: {
      GpuDevice device;
      device.arch = in.file_backend;
      return MakeGpuTarget(device, in.alignment);
    }
    case Backend::kTpu: {
      const TpuGeneration* generation = nullptr;
      if (!in.tpu_target_arguments.empty()) {
        absl::StatusOr<const TpuGeneration*> g =
            ParseTpuTargetArguments(in.tpu_target_arguments_path, in.tpu_target_arguments);
        if (!g.ok()) return g.status();
        generation = *g;
      }
      return MakeTpuTarget(generation, in.alignment);
    }
    case Backend::kCpu:
      return MakeCpuTarget(in.alignment);
    case Backend::kUnknown:
      break;
  }
  return MakeUnknownTarget(in.alignment);
}

}  // namespace hlomem::target
