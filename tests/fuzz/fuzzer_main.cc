// libFuzzer entry point; compiled once per target with HLOMEM_FUZZ_TARGET
// naming one of the functions in fuzz_targets.h.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hlomem::fuzz::HLOMEM_FUZZ_TARGET(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
