#include "lib/report/device.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"
#include "lib/target/gpu.h"
#include "lib/target/tpu.h"

namespace hlomem::report {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Nominal capacities in GiB (the vendors' "80GB" HBM is 80 GiB of chips;
// drivers reserve a little of it). --device-memory takes the exact number.
constexpr DevicePreset kPresets[] = {
    {"a100-40gb", 40 * kGiB, true},    {"a100-80gb", 80 * kGiB, true},
    {"h100-80gb", 80 * kGiB, true},    {"h100-94gb", 94 * kGiB, true},
    {"h200-141gb", 141 * kGiB, true},  {"b200-192gb", 192 * kGiB, true},
    {"l4-24gb", 24 * kGiB, true},      {"a10g-24gb", 24 * kGiB, true},
    {"t4-16gb", 16 * kGiB, true},      {"v100-16gb", 16 * kGiB, true},
    {"v100-32gb", 32 * kGiB, true},    {"rtx4090-24gb", 24 * kGiB, true},
    {"mi300x-192gb", 192 * kGiB, true}, {"v4-32gb", 32 * kGiB, false},
    {"v5e-16gb", 16 * kGiB, false},    {"v5p-95gb", 95 * kGiB, false},
    {"v6e-32gb", 32 * kGiB, false},
};

absl::StatusOr<double> ParseFraction(absl::string_view text, absl::string_view origin) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value) || !(value > 0) || value > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("error: ", origin, " must be a fraction in (0, 1], got '", text, "'"));
  }
  return value;
}

}  // namespace

absl::Span<const DevicePreset> DevicePresets() { return kPresets; }

absl::StatusOr<std::optional<DeviceBudget>> ResolveDevice(const DeviceRequest& request) {
  if (request.preset.empty() && request.memory.empty()) return std::optional<DeviceBudget>();
  if (!request.preset.empty() && !request.memory.empty()) {
    return absl::InvalidArgumentError("error: give --device or --device-memory, not both");
  }
  DeviceBudget budget;
  bool is_gpu = true;
  if (!request.preset.empty()) {
    const DevicePreset* found = nullptr;
    for (const DevicePreset& p : kPresets) {
      if (p.name == request.preset) found = &p;
    }
    if (found == nullptr) {
      std::vector<absl::string_view> names;
      for (const DevicePreset& p : kPresets) names.push_back(p.name);
      return absl::InvalidArgumentError(absl::StrCat("error: unknown --device '", request.preset,
                                                     "'; known: ", absl::StrJoin(names, ", ")));
    }
    budget.name = std::string(found->name);
    budget.capacity = found->bytes;
    is_gpu = found->is_gpu;
  } else {
    absl::StatusOr<int64_t> bytes = ParseByteSize(request.memory);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("error: --device-memory: ", bytes.status().message()));
    }
    budget.capacity = *bytes;
  }
  if (request.mem_fraction) {
    budget.fraction = *request.mem_fraction;
    if (!(*budget.fraction > 0) || *budget.fraction > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("error: --mem-fraction must be in (0, 1], got ", *budget.fraction));
    }
  } else if (request.env_fraction != nullptr && *request.env_fraction != '\0') {
    absl::StatusOr<double> f = ParseFraction(request.env_fraction, "XLA_CLIENT_MEM_FRACTION");
    if (!f.ok()) return f.status();
    budget.fraction = *f;
  } else if (request.env_fraction_legacy != nullptr && *request.env_fraction_legacy != '\0') {
    absl::StatusOr<double> f =
        ParseFraction(request.env_fraction_legacy, "XLA_PYTHON_CLIENT_MEM_FRACTION");
    if (!f.ok()) return f.status();
    budget.fraction = *f;
  }
  budget.is_gpu = is_gpu;
  if (!is_gpu) {
    // "v5e-16gb" -> v5e: what XLA:TPU offers a program, out of the HBM of
    // one XLA device (a TensorCore's half on v4), not the chip's nominal HBM.
    const target::TpuGeneration* generation =
        target::FindTpuGeneration(budget.name.substr(0, budget.name.find('-')));
    if (generation != nullptr && generation->program_hbm_bytes > 0) {
      budget.capacity = generation->hbm_bytes;
      budget.program_limit = generation->program_hbm_bytes;
    }
  }
  return std::optional<DeviceBudget>(budget);
}

namespace {

// The device-memory bytes of a module's allocations, by whose figures:
// XLA's where every device space has them, else hlomem's.
struct DeviceBytes {
  std::optional<int64_t> xla;
  std::optional<int64_t> computed;
};
DeviceBytes DeviceBytesOf(const ModuleReport& m) {
  DeviceBytes out;
  if (m.memory_spaces.empty()) {
    // A report read from an older JSON: the totals are what it has.
    if (m.xla) out.xla = m.xla->total_bytes;
    if (m.computed) out.computed = m.computed->total_bytes;
    return out;
  }
  for (const MemorySpaceTotals& space : m.memory_spaces) {
    if (!space.is_device) continue;
    if (space.xla_bytes) out.xla = out.xla.value_or(0) + *space.xla_bytes;
    if (space.computed_bytes) out.computed = out.computed.value_or(0) + *space.computed_bytes;
  }
  if (!m.xla) out.xla.reset();
  return out;
}

// A preset of one kind of device applied to a dump compiled for another:
// the verdict is only indicative, and the dump can be made for the device
// without having one.
std::string OtherBackendCaveat(const DeviceBudget& budget, const ModuleReport& m) {
  if (budget.name.empty()) return "";  // --device-memory: no kind of device named
  const std::string wanted = budget.is_gpu ? "gpu" : "tpu";
  if (m.backend == wanted) return "";
  return absl::StrCat(
      "this dump was compiled for ", m.backend.empty() ? "an unknown backend" : m.backend, ", not for ",
      budget.name, ": XLA fuses, lays out, pads and aligns differently there, so the verdict is "
      "indicative only. Compile for the device without one: ",
      budget.is_gpu ? "jax.experimental.topologies.get_topology_desc(platform=\"cuda\", "
                      "target_config=..., topology=\"1x1x1\") with jax[cuda12] and JAX_PLATFORMS=cpu"
                    : "jax.experimental.topologies.get_topology_desc(\"v5e:1x1\", platform=\"tpu\") "
                      "with jax[tpu]",
      ", then lower and compile on ShapeDtypeStructs sharded over its devices");
}

}  // namespace

void ApplyDeviceFit(const DeviceBudget& budget, Report* report) {
  for (ModuleReport& m : report->modules) {
    const DeviceBytes bytes = DeviceBytesOf(m);
    if (!bytes.xla && !bytes.computed) continue;
    DeviceFit fit;
    fit.device = budget.name;
    fit.capacity = budget.capacity;
    if (budget.fraction) {
      fit.fraction = *budget.fraction;
    } else if (budget.program_limit) {
      fit.fraction = static_cast<double>(*budget.program_limit) / static_cast<double>(budget.capacity);
      fit.usable_source = "XLA:TPU's available HBM";
    } else {
      // The module's own target says what its runtime hands XLA; a preset
      // of the other kind than the dump does not change that.
      fit.fraction = m.backend.empty() || m.backend == "cpu"
                         ? (budget.is_gpu ? target::kJaxGpuMemFraction : 1.0)
                         : m.default_mem_fraction;
    }
    fit.usable = budget.program_limit && !budget.fraction
                     ? *budget.program_limit
                     : static_cast<int64_t>(static_cast<double>(fit.capacity) * fit.fraction);
    // XLA allocates arguments, outputs and the whole temp heap for a run:
    // the total, not the (smaller) peak of live bytes, is what must fit.
    if (bytes.xla) {
      fit.needed = *bytes.xla;
      fit.needed_source = "xla";
      if (bytes.computed && *bytes.computed != *bytes.xla) {
        fit.computed_needed = *bytes.computed;
        m.warnings.push_back(absl::StrCat(
            "device fit uses XLA's buffer assignment (", HumanAndExact(*bytes.xla),
            " of device memory); hlomem computes ", HumanAndExact(*bytes.computed), ", ",
            SignedBytes(*bytes.computed - *bytes.xla), " off"));
      }
    } else {
      fit.needed = *bytes.computed;
    }
    fit.fits = fit.needed <= fit.usable;
    fit.shortfall = fit.fits ? 0 : fit.needed - fit.usable;
    fit.caveat = OtherBackendCaveat(budget, m);
    m.device_fit = fit;
  }
}

std::vector<dump::XlaOomError> ApplyOomErrors(std::vector<dump::XlaOomError> errors,
                                              Report* report) {
  std::vector<dump::XlaOomError> unmatched;
  for (dump::XlaOomError& error : errors) {
    ModuleReport* target = nullptr;
    for (ModuleReport& m : report->modules) {
      if (!error.module_name.empty() && m.name == error.module_name) target = &m;
    }
    if (target == nullptr && error.module_name.empty() && report->modules.size() == 1) {
      target = &report->modules[0];
    }
    if (target == nullptr || target->oom) {
      unmatched.push_back(std::move(error));
      continue;
    }
    ModuleReport& m = *target;
    OomExplanation oom;
    const DeviceBytes bytes = DeviceBytesOf(m);
    if (bytes.xla) {
      oom.device_bytes = bytes.xla;
      oom.device_bytes_source = "xla";
    } else if (bytes.computed) {
      oom.device_bytes = bytes.computed;
      oom.device_bytes_source = "hlomem";
    }
    const bool whole_program = error.kind == dump::XlaOomError::Kind::kCompileTimeHbmOom;
    if (whole_program && error.needed_bytes && oom.device_bytes) {
      oom.agrees = std::abs(*oom.device_bytes - *error.needed_bytes) <= error.rounding_bytes;
    }
    if (whole_program && error.available_bytes && oom.device_bytes && !m.device_fit) {
      DeviceFit fit;
      fit.device = m.device ? m.device->device : "";
      fit.capacity = m.device ? m.device->capacity : *error.available_bytes;
      // The chip's exact limit when the error's rounded figure is it.
      fit.usable = *error.available_bytes;
      if (m.device && m.device->program_limit &&
          std::abs(*m.device->program_limit - *error.available_bytes) <= error.rounding_bytes) {
        fit.usable = *m.device->program_limit;
      }
      fit.fraction = static_cast<double>(fit.usable) / static_cast<double>(fit.capacity);
      fit.usable_source = "XLA:TPU's available HBM";
      fit.needed = *oom.device_bytes;
      fit.needed_source = oom.device_bytes_source;
      fit.fits = fit.needed <= fit.usable;
      fit.shortfall = fit.fits ? 0 : fit.needed - fit.usable;
      m.device_fit = fit;
    }
    oom.error = std::move(error);
    m.oom = std::move(oom);
  }
  return unmatched;
}

}  // namespace hlomem::report
