// Which target a module was compiled for, decided the same way for every
// command: what the user asked for, the dump's target files, the dump file
// name's backend token, and finally the HLO itself.
#ifndef HLOMEM_LIB_TARGET_RESOLVE_H_
#define HLOMEM_LIB_TARGET_RESOLVE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/hlo/module.h"
#include "lib/target/target.h"

namespace hlomem::target {

struct TargetInputs {
  // --target: "cpu", "gpu", "tpu", "tpu-v5e", "h100"...; "" to infer.
  std::string requested;
  // The backend token of the dump's file names: "cpu", "sm_9.0a",
  // "gfx942", "cl_1004524046" (XLA:TPU), "" for a file standing alone.
  std::string file_backend;
  // The dump's *.gpu_target_config.pbtxt and (TPU) *.target_arguments.txt,
  // path and text; empty when absent.
  std::string gpu_target_config_path;
  std::string gpu_target_config;
  std::string tpu_target_arguments_path;
  std::string tpu_target_arguments;
  int64_t alignment = 0;  // --alignment; 0 for the target's own
};

// The backend a dump file name's token stands for.
Backend BackendOfFileToken(absl::string_view token);

// The backend the HLO shows: tiled layouts are TPU's, cuBLAS/cuDNN/Triton
// calls GPU's; kUnknown when nothing tells.
Backend BackendOfModule(const hlo::Module& module);

// `module` may be null (a dump with XLA's report files only). A request
// that names no known target, or a malformed target file, is an error.
absl::StatusOr<std::unique_ptr<Target>> ResolveTarget(const TargetInputs& inputs,
                                                     const hlo::Module* module);

// The names --target accepts, for its help and errors.
std::string KnownTargetNames();

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_RESOLVE_H_
