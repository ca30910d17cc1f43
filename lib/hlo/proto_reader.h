// Reads HLO modules from XLA's protos: the binary `*.hlo.pb` files a dump
// holds (HloProto: module + buffer assignment), bare HloModuleProto and
// HloSnapshot files, and their text-format forms (`*.pbtxt`, including
// HloUnoptimizedSnapshot).
//
// The Module built here is the one the text parser builds for the same
// module: same names, opcodes, shapes, operands, callees and roles, and, for
// a scheduled module, instructions in schedule order. Every string is copied
// into storage the module owns (Module::Own), so the parsed proto is not
// kept alive for the module's sake.
//
// The generated proto header stays out of this file: callers that want the
// buffer assignment include "proto/xla.pb.h" themselves.
#ifndef HLOMEM_LIB_HLO_PROTO_READER_H_
#define HLOMEM_LIB_HLO_PROTO_READER_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/module.h"

namespace xla {
class BufferAssignmentProto;
class HloModuleProto;
}  // namespace xla

namespace hlomem::hlo {

// Which message the file held.
enum class ProtoKind : uint8_t {
  kHloProto,                // hlo_module = 1, buffer_assignment = 3
  kHloModuleProto,          // a bare module
  kHloSnapshot,             // hlo = 1 (an HloProto)
  kHloUnoptimizedSnapshot,  // hlo_module = 1 (text form only; see .cc)
};
absl::string_view ProtoKindName(ProtoKind kind);

struct ProtoReadResult {
  Module module;
  ProtoKind kind = ProtoKind::kHloProto;
  // The buffer assignment XLA attached to an HloProto (after-optimizations
  // dumps); null when the file has none.
  std::shared_ptr<const xla::BufferAssignmentProto> buffer_assignment;
  // Proto instruction id (HloInstruction::unique_id; what
  // LogicalBufferProto.defined_at.instruction_id refers to) -> InstrId. When
  // an old proto repeats an id across computations, the first one is kept.
  absl::flat_hash_map<int64_t, InstrId> instruction_ids;

  bool has_buffer_assignment() const { return buffer_assignment != nullptr; }
};

// Reads a binary proto: an HloProto, a bare HloModuleProto or an
// HloSnapshot, told apart by which one parses into a module with
// computations. Errors read "path: error: ...".
absl::StatusOr<ProtoReadResult> ReadHloProto(
    std::shared_ptr<const FileContents> file);

// Reads a text-format proto: HloUnoptimizedSnapshot, HloSnapshot, HloProto
// or HloModuleProto. Fields this schema does not declare are skipped.
absl::StatusOr<ProtoReadResult> ReadHloProtoText(
    std::shared_ptr<const FileContents> file);

// Builds the model from a parsed module proto (the readers above, tests).
// `path` is used in diagnostics and stored in Module::path. Fills
// `instruction_ids` when it is not null.
absl::StatusOr<Module> ModuleFromProto(
    const xla::HloModuleProto& proto, absl::string_view path,
    absl::flat_hash_map<int64_t, InstrId>* instruction_ids = nullptr);

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_PROTO_READER_H_
