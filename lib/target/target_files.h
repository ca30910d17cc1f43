// Readers for the target description files XLA writes into a dump:
// `*.gpu_target_config.pbtxt` (GpuTargetConfigProto) and TPU's compilation
// environment. Both are protobuf text format; hlomem reads the few scalar
// fields it needs with a small tokenizer of its own, so that unknown or
// newer fields never stop it, and malformed text gets `path:line:col`.
#ifndef HLOMEM_LIB_TARGET_TARGET_FILES_H_
#define HLOMEM_LIB_TARGET_TARGET_FILES_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hlomem::target {

// Calls `field(path, value, offset)` for every scalar field of a text proto,
// with `path` the dotted field names from the top ("gpu_device_info.
// cuda_compute_capability.major") and `value` unquoted and unescaped.
// Messages ({...} or <...>) nest; lists ([a, b]) give one call per element.
absl::Status ForEachTextProtoField(
    absl::string_view path, absl::string_view text,
    const std::function<void(const std::string& field, const std::string& value)>& field);

}  // namespace hlomem::target

#endif  // HLOMEM_LIB_TARGET_TARGET_FILES_H_
