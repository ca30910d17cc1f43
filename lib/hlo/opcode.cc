#include "lib/hlo/opcode.h"

#include "absl/container/flat_hash_map.h"

namespace hlomem::hlo {
namespace {

enum OpcodeKind { kElementwise, kOther };

struct OpcodeInfo {
  absl::string_view name;
  OpcodeKind kind;
};

constexpr OpcodeInfo kOpcodeInfo[] = {
#define HLO_OPCODE(enum_name, text, kind) {text, kind},
#include "lib/hlo/opcode.def"
#undef HLO_OPCODE
    {"unknown", kOther},
};

const absl::flat_hash_map<absl::string_view, Opcode>& OpcodesByName() {
  static const auto* table = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, Opcode>();
    for (size_t i = 0; i + 1 < sizeof(kOpcodeInfo) / sizeof(kOpcodeInfo[0]);
         ++i) {
      map->emplace(kOpcodeInfo[i].name, static_cast<Opcode>(i));
    }
    // Spellings that older printers used for the same operations.
    map->emplace("clz", Opcode::kClz);
    map->emplace("optimization-barrier", Opcode::kOptimizationBarrier);
    return map;
  }();
  return *table;
}

}  // namespace

absl::string_view OpcodeName(Opcode opcode) {
  return kOpcodeInfo[static_cast<size_t>(opcode)].name;
}

std::optional<Opcode> OpcodeFromName(absl::string_view name) {
  const auto& table = OpcodesByName();
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

bool IsElementwiseOpcode(Opcode opcode) {
  return kOpcodeInfo[static_cast<size_t>(opcode)].kind == kElementwise;
}

}  // namespace hlomem::hlo
