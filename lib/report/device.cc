#include "lib/report/device.h"

#include <algorithm>
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
constexpr int64_t kMiB = int64_t{1} << 20;

// GPU presets: the total memory CUDA reports for the card (cudaMemGetInfo),
// which JAX's allocator takes its fraction of: bytes_limit = fraction x
// total. It is less than the card's nominal size and than nvidia-smi's
// total (H100 80GB HBM3: 80 GiB of HBM, nvidia-smi 81559 MiB, CUDA 81080
// MiB), and it varies a little with the driver.
//
// Measured: this project's own run on the card. Estimated: public figures.
// Where several were found, the lowest is taken: a verdict that says "fits"
// on a card where the run then fails is the error that matters. PyTorch's
// "GPU 0 has a total capacity of X GiB" is cudaMemGetInfo's total to two
// decimals (taken here to the MiB below); XLA's GPU specs
// (xla/backends/gpu/target_config/specs/*.txtpb) record a real card's
// device_memory_size, except h200.txtpb's, which is exactly 141 GiB, the
// nominal size. Where neither was found, nvidia-smi's total less the 479
// MiB the measured H100 80GB reports less than nvidia-smi stands in.
//
// TPU presets: what XLA:TPU's E1000 says a program has (lib/target/tpu.cc
// holds the figures; `bytes` here is replaced by the generation's HBM).
constexpr DevicePreset kPresets[] = {
    {"a100-40gb", 42331013120, true, true,
     "estimated: device_memory_size of XLA's A100-SXM4-40GB spec (a100_sxm_40.txtpb); "
     "PyTorch reports 39.50 GiB on another A100 40GB"},
    {"a100-80gb", 81039 * kMiB, true, true,
     "estimated: PyTorch's \"total capacity of 79.14 GiB\" on an A100 80GB "
     "(lianqi1008/Control-GIC#6), the lowest found; XLA's A100-SXM4-80GB spec has 79.26 GiB, "
     "a pytorch/xla log 63898533888 B = 0.75 x 79.35 GiB"},
    {"h100-80gb", 85018542080, true, false,
     "measured: jax memory_stats bytes_limit 63763906560 B = 0.75 x 85018542080 B on H100 80GB HBM3, "
     "jax 0.11.2, 2026-11, on two cards (tools/fit/gpu_check.py)"},
    {"h100-94gb", (95830 - 479) * kMiB, true, true,
     "estimated: H100 NVL, nvidia-smi's 95830 MiB less the 479 MiB the measured H100 80GB "
     "reports less than nvidia-smi"},
    {"h200-141gb", (143771 - 479) * kMiB, true, true,
     "estimated: nvidia-smi's 143771 MiB less the 479 MiB the measured H100 80GB reports less "
     "than nvidia-smi (XLA's h200.txtpb has the nominal 141 GiB)"},
    {"b200-192gb", 191514673152, true, true,
     "estimated: device_memory_size of XLA's B200 spec (b200.txtpb)"},
    {"l4-24gb", 22558 * kMiB, true, true,
     "estimated: PyTorch's \"total capacity of 22.03 GiB\" on an L4 (ArcInstitute/evo2#190); "
     "nvidia-smi 23034 MiB"},
    {"a10g-24gb", 22732 * kMiB, true, true,
     "estimated: PyTorch's \"22.20 GiB total capacity\" on an A10G (g5.12xlarge, "
     "XavierXiao/Dreambooth-Stable-Diffusion#18), the lowest found; nvidia-smi 23028 MiB"},
    {"t4-16gb", 14909 * kMiB, true, true,
     "estimated: PyTorch's \"total capacity of 14.56 GiB\" on a T4 (GCP, Zheng-Chong/CatVTON#133), "
     "the lowest found; nvidia-smi 15360 MiB"},
    {"v100-16gb", 16935682048, true, true,
     "estimated: device_memory_size of XLA's Tesla V100-SXM2-16GB spec (v100.txtpb)"},
    {"v100-32gb", 32501 * kMiB, true, true,
     "estimated: PyTorch's \"31.74 GiB total capacity\" on a V100 32GB "
     "(liucongg/ChatGLM-Finetuning#73)"},
    {"rtx4090-24gb", 24207 * kMiB, true, true,
     "estimated: PyTorch's \"total capacity of 23.64 GiB\" on an RTX 4090 "
     "(3DTopia/Phidias-Diffusion#8), the lowest found"},
    {"mi300x-192gb", 196592 * kMiB, true, true,
     "estimated: a ROCm XLA log on an MI300X (ROCm/xla#363): its BFC and collective allocators "
     "together 16491332239 + 189650320752 B of the 196592 MiB total"},
    {"v4-32gb", 32 * kGiB, false, false,
     "XLA:TPU's E1000 \"available HBM (15.25G)\" of a TensorCore's 16 GiB (deviceless v4 compiles)"},
    {"v5e-16gb", 16 * kGiB, false, false,
     "XLA:TPU's E1000 \"available HBM (15.75G)\" (deviceless v5e compiles)"},
    {"v5p-95gb", 95 * kGiB, false, false,
     "XLA:TPU's E1000 \"available HBM (95.73G)\" (deviceless v5p compiles)"},
    {"v6e-32gb", 32 * kGiB, false, false,
     "XLA:TPU's E1000 \"available HBM (31.24G)\" (deviceless v6e compiles)"},
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
    budget.capacity_source = std::string(found->source);
    budget.capacity_estimated = found->estimated;
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
    fit.capacity_source = budget.capacity_source;
    fit.capacity_estimated = budget.capacity_estimated;
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
    // JAX's allocator: the fraction of the total, truncated to bytes.
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

void ApplyAllocatorLimit(const dump::AllocatorLimit& limit, Report* report) {
  const std::string from = dump::DescribeAllocatorLimit(limit);
  for (ModuleReport& m : report->modules) {
    // A BFC allocator is a GPU's: XLA:TPU states its own limit (E1000).
    if (m.backend == "tpu") continue;
    if (m.device_fit && !m.device_fit->usable_source.empty()) continue;  // a TPU preset's
    const DeviceBytes bytes = DeviceBytesOf(m);
    if (!bytes.xla && !bytes.computed) continue;
    if (!m.device_fit) {
      DeviceFit fit;
      fit.device = m.device ? m.device->device : "";
      fit.capacity = m.device ? std::max(m.device->capacity, limit.bytes) : limit.bytes;
      fit.needed = bytes.xla ? *bytes.xla : *bytes.computed;
      fit.needed_source = bytes.xla ? "xla" : "hlomem";
      fit.usable = limit.bytes;
      m.device_fit = fit;
    } else {
      m.device_fit->preset_usable = m.device_fit->usable;
      // A rounded figure ("pool limit 59.38GiB") confirms a preset's exact
      // one within its rounding; it replaces one it contradicts.
      const bool confirms = limit.rounding_bytes > 0 &&
                            std::abs(m.device_fit->usable - limit.bytes) <= limit.rounding_bytes;
      if (!confirms) m.device_fit->usable = limit.bytes;
    }
    DeviceFit& fit = *m.device_fit;
    fit.usable_from_log = from;
    if (fit.capacity > 0) {
      fit.fraction = static_cast<double>(fit.usable) / static_cast<double>(fit.capacity);
    }
    fit.fits = fit.needed <= fit.usable;
    fit.shortfall = fit.fits ? 0 : fit.needed - fit.usable;
    if (limit.rounding_bytes > 0 && !fit.preset_usable &&
        std::abs(fit.needed - fit.usable) <= limit.rounding_bytes) {
      m.warnings.push_back(absl::StrCat(
          "device fit: the program's ", HumanAndExact(fit.needed), " is within the rounding (",
          HumanBytes(limit.rounding_bytes), ") of the limit ", from, " gives (",
          HumanBytes(limit.bytes), "); the verdict needs the exact limit: the log's \"XLA backend "
          "allocating ... bytes ... for BFCAllocator\" line, or a --device preset"));
    }
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
    // A runtime message ("Out of memory while trying to allocate N bytes.")
    // names no module: the one whose temp allocation or total is N, to the
    // message's rounding. Several such modules are all named.
    std::string matched_by;
    std::vector<std::string> also_matching;
    if (target == nullptr && error.module_name.empty() && error.needed_bytes &&
        !dump::IsCompileTime(error.kind)) {
      const int64_t needed = *error.needed_bytes;
      auto near = [&](std::optional<int64_t> bytes) {
        return bytes && *bytes > 0 && std::abs(*bytes - needed) <= error.rounding_bytes;
      };
      for (ModuleReport& m : report->modules) {
        if (m.oom) continue;
        const std::optional<MemoryNumbers>& numbers = m.xla ? m.xla : m.computed;
        const DeviceBytes device = DeviceBytesOf(m);
        std::optional<int64_t> total = device.xla ? device.xla : device.computed;
        if (!total && numbers) total = numbers->total_bytes;
        const char* by = nullptr;
        if (numbers && near(numbers->temp_bytes)) {
          by = "temp";
        } else if (near(total)) {
          by = "total";
        }
        if (by == nullptr) continue;
        if (target == nullptr) {
          target = &m;
          matched_by = by;
        } else {
          also_matching.push_back(m.name);
        }
      }
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
    oom.matched_by = std::move(matched_by);
    oom.also_matching = std::move(also_matching);
    oom.error = std::move(error);
    m.oom = std::move(oom);
  }
  return unmatched;
}

}  // namespace hlomem::report
