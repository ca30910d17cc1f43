#include "lib/hlo/proto_reader.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "lib/base/diagnostic.h"
#include "lib/base/status_macros.h"
#include "proto/xla.pb.h"

namespace hlomem::hlo {
namespace {

namespace pb = ::google::protobuf;

// Deeper tuple nesting than this is refused (XLA's own limit is far lower;
// the check keeps the recursion bounded whatever the input).
constexpr int kMaxTupleDepth = 1000;
// Nesting limit for the text-format parser, whose default is unbounded.
constexpr int kTextRecursionLimit = 2000;
// XLA's Tile::kCombineDimension and Shape::kUnboundedSize.
constexpr int64_t kProtoCombineDimension = std::numeric_limits<int64_t>::min();
constexpr int64_t kProtoUnboundedSize = std::numeric_limits<int64_t>::min();
// The largest PrimitiveType value hlomem knows (BUFFER).
constexpr int kMaxPrimitiveType = static_cast<int>(PrimitiveType::kBuffer);

absl::string_view View(const std::string& s) { return absl::string_view(s.data(), s.size()); }

// Names as they appear in diagnostics: escaped, so a hostile name cannot
// smuggle control characters into the terminal.
std::string Quoted(const std::string& s) { return absl::CEscape(View(s)); }

// Copies strings into the module's own text. Repeated strings (op names,
// source files, attribute values) are stored once.
class InternedStrings {
 public:
  explicit InternedStrings(Module* module) : module_(module) {}

  absl::string_view Add(absl::string_view s) {
    if (s.empty()) return {};
    auto found = seen_.find(s);
    if (found != seen_.end()) return *found;
    absl::string_view stored = module_->Own(s);
    seen_.insert(stored);
    return stored;
  }
  absl::string_view Add(const std::string& s) { return Add(View(s)); }

  // For strings known to be unique (instruction names): no dedup table.
  absl::string_view AddUnique(const std::string& s) { return module_->Own(View(s)); }

 private:
  Module* module_;
  absl::flat_hash_set<absl::string_view> seen_;
};

// XLA's LexesAsJsonDict, approximately: printed raw when it looks like a
// JSON object, else as a C-escaped string.
std::string ConfigText(const std::string& value) {
  if (value.size() >= 2 && value.front() == '{' && value.back() == '}') return value;
  return absl::StrCat("\"", absl::CEscape(View(value)), "\"");
}

template <typename Ints>
std::string BraceList(const Ints& values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

template <typename Ints>
ShapeIndex ToShapeIndex(const Ints& values) {
  return ShapeIndex(values.begin(), values.end());
}

std::string FrontendAttributesText(const xla::FrontendAttributes& attributes) {
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(static_cast<size_t>(attributes.map_size()));
  for (const auto& entry : attributes.map()) {
    entries.emplace_back(entry.key(), entry.value());
  }
  std::sort(entries.begin(), entries.end());
  std::string out = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out.push_back(',');
    absl::StrAppend(&out, entries[i].first, "=", ConfigText(entries[i].second));
  }
  out.push_back('}');
  return out;
}

class ModuleBuilder {
 public:
  ModuleBuilder(const xla::HloModuleProto& proto, absl::string_view path,
                absl::flat_hash_map<int64_t, InstrId>* instruction_ids)
      : proto_(proto), path_(path), instruction_ids_(instruction_ids),
        strings_(&module_) {}

  absl::StatusOr<Module> Build();

 private:
  absl::Status Error(absl::string_view message) const {
    return FileError(path_, message);
  }
  absl::Status ComputationError(const xla::HloComputationProto& c,
                                absl::string_view message) const {
    return Error(absl::StrCat("computation '", Quoted(c.name()), "': ", message));
  }
  absl::Status InstructionError(const xla::HloComputationProto& c,
                                const xla::HloInstructionProto& i,
                                absl::string_view message) const {
    return Error(absl::StrCat("computation '", Quoted(c.name()), "': instruction '",
                              Quoted(i.name()), "': ", message));
  }

  absl::StatusOr<ShapeId> ConvertShape(const xla::ShapeProto& proto, int depth);
  absl::Status BuildComputation(CompId comp_id, uint64_t first_ordinal);
  absl::Status BuildInstruction(const xla::HloComputationProto& c,
                                const xla::HloInstructionProto& i,
                                CompId comp_id, uint64_t ordinal,
                                Instruction* out);
  uint32_t AddMetadata(const xla::OpMetadata& m);
  std::string MetadataText(const xla::OpMetadata& m) const;
  void BuildHeader();
  std::string ProgramShapeText(const xla::ProgramShapeProto& shape);

  const xla::HloModuleProto& proto_;
  std::string path_;
  absl::flat_hash_map<int64_t, InstrId>* instruction_ids_;
  Module module_;
  InternedStrings strings_;
  absl::flat_hash_map<int64_t, CompId> computation_ids_;
  // Per computation: proto instruction id -> proto index. Reused.
  absl::flat_hash_map<int64_t, int> local_ids_;
  // Per computation: text position -> proto index. Reused.
  std::vector<int> order_;
  std::vector<std::pair<absl::string_view, std::string>> attributes_;
};

absl::StatusOr<ShapeId> ModuleBuilder::ConvertShape(const xla::ShapeProto& proto,
                                                    int depth) {
  if (depth > kMaxTupleDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape nests tuples more than ", kMaxTupleDepth, " deep"));
  }
  const int type_value = static_cast<int>(proto.element_type());
  if (type_value <= 0 || type_value > kMaxPrimitiveType) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid element type ", type_value));
  }
  Shape shape;
  shape.type = static_cast<PrimitiveType>(type_value);
  if (shape.type == PrimitiveType::kTuple) {
    shape.tuple_elements.reserve(static_cast<size_t>(proto.tuple_shapes_size()));
    for (const xla::ShapeProto& element : proto.tuple_shapes()) {
      HLOMEM_ASSIGN_OR_RETURN(ShapeId id, ConvertShape(element, depth + 1));
      shape.tuple_elements.push_back(id);
    }
    return module_.shapes.Intern(std::move(shape));
  }
  if (!IsArrayType(shape.type)) return module_.shapes.Intern(std::move(shape));

  shape.dims.assign(proto.dimensions().begin(), proto.dimensions().end());
  const bool any_dynamic =
      std::find(proto.is_dynamic_dimension().begin(),
                proto.is_dynamic_dimension().end(), true) !=
      proto.is_dynamic_dimension().end();
  if (any_dynamic) {
    if (proto.is_dynamic_dimension_size() != proto.dimensions_size()) {
      return absl::InvalidArgumentError(
          "is_dynamic_dimension does not match the rank");
    }
    shape.dynamic_dims.assign(proto.is_dynamic_dimension().begin(),
                              proto.is_dynamic_dimension().end());
    for (size_t d = 0; d < shape.dims.size(); ++d) {
      if (shape.dynamic_dims[d] && shape.dims[d] == kProtoUnboundedSize) {
        shape.dims[d] = kUnboundedDimension;
      }
    }
  }
  if (proto.has_layout()) {
    const xla::LayoutProto& lp = proto.layout();
    Layout layout;
    layout.minor_to_major.assign(lp.minor_to_major().begin(), lp.minor_to_major().end());
    for (const xla::TileProto& tile : lp.tiles()) {
      std::vector<int64_t> dims(tile.dimensions().begin(), tile.dimensions().end());
      for (int64_t& d : dims) {
        if (d == kProtoCombineDimension) d = -1;
      }
      layout.tiles.push_back(std::move(dims));
    }
    layout.element_size_bits = lp.element_size_in_bits();
    layout.memory_space = lp.memory_space();
    // XLA prints L(n) only for n != 1; 0 and 1 both mean none.
    layout.tail_padding_alignment =
        lp.tail_padding_alignment_in_elements() > 1 ? lp.tail_padding_alignment_in_elements() : 0;
    layout.dynamic_metadata_prefix = lp.dynamic_shape_metadata_prefix_bytes();
    // A scalar's trivial layout is invisible in the text, so the text parser
    // never records one; do the same.
    const bool trivial_scalar =
        shape.dims.empty() && layout.minor_to_major.empty() && layout.tiles.empty() &&
        !layout.element_size_bits && !layout.memory_space &&
        !layout.tail_padding_alignment && !layout.dynamic_metadata_prefix;
    if (!trivial_scalar) shape.layout = std::move(layout);
  }
  return module_.shapes.Intern(std::move(shape));
}

std::string ModuleBuilder::MetadataText(const xla::OpMetadata& m) const {
  std::vector<std::string> parts;
  auto quoted = [&](absl::string_view key, const std::string& value) {
    if (!value.empty()) parts.push_back(absl::StrCat(key, "=\"", absl::CEscape(View(value)), "\""));
  };
  auto number = [&](absl::string_view key, int64_t value) {
    if (value != 0) parts.push_back(absl::StrCat(key, "=", value));
  };
  quoted("op_type", m.op_type());
  quoted("op_name", m.op_name());
  quoted("source_file", m.source_file());
  number("source_line", m.source_line());
  number("source_end_line", m.source_end_line());
  number("source_column", m.source_column());
  number("source_end_column", m.source_end_column());
  quoted("scheduling_name", m.scheduling_name());
  number("stack_frame_id", m.stack_frame_id());
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

uint32_t ModuleBuilder::AddMetadata(const xla::OpMetadata& m) {
  OpMetadata out;
  out.op_type = strings_.Add(m.op_type());
  out.op_name = strings_.Add(m.op_name());
  out.source_file = strings_.Add(m.source_file());
  out.source_line = m.source_line();
  out.stack_frame_id = m.stack_frame_id();
  if (out.op_type.empty() && out.op_name.empty() && out.source_file.empty() &&
      out.source_line == 0 && out.stack_frame_id == 0) {
    return 0;
  }
  module_.metadata.push_back(out);
  return static_cast<uint32_t>(module_.metadata.size() - 1);
}

// The role of the `k`-th called computation, by opcode, as the text printer
// names them (formats.md §5.4).
CallRole CalleeRole(Opcode opcode, int k) {
  switch (opcode) {
    case Opcode::kWhile:  // [body, condition]
      if (k == 0) return CallRole::kBody;
      if (k == 1) return CallRole::kCondition;
      return CallRole::kCalls;
    case Opcode::kConditional:
      return CallRole::kBranch;
    case Opcode::kSelectAndScatter:  // [select, scatter]
      if (k == 0) return CallRole::kSelect;
      if (k == 1) return CallRole::kScatter;
      return CallRole::kCalls;
    case Opcode::kCustomCall:
      return CallRole::kCalledComputations;
    case Opcode::kCall:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScan:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
      return CallRole::kToApply;
    default:  // fusion, async-start/update/done, unknown opcodes
      return CallRole::kCalls;
  }
}

absl::Status ModuleBuilder::BuildInstruction(const xla::HloComputationProto& c,
                                             const xla::HloInstructionProto& i,
                                             CompId comp_id, uint64_t ordinal,
                                             Instruction* out) {
  out->name = strings_.AddUnique(i.name());
  InstructionExtras extras;
  const absl::string_view opcode_text = strings_.Add(i.opcode());
  out->opcode = OpcodeFromName(opcode_text).value_or(Opcode::kUnknown);
  if (opcode_text != OpcodeName(out->opcode)) extras.opcode_text = opcode_text;
  out->parent = comp_id;
  out->set_source_offset(ordinal);
  if (!i.has_shape()) return InstructionError(c, i, "has no shape");
  absl::StatusOr<ShapeId> shape = ConvertShape(i.shape(), 0);
  if (!shape.ok()) {
    return InstructionError(c, i, absl::StrCat("shape: ", shape.status().message()));
  }
  out->shape = *shape;
  attributes_.clear();

  // Operands and control predecessors: ids local to the computation.
  auto resolve = [&](int64_t id, absl::string_view what,
                     std::vector<InstrId>* pool) -> absl::Status {
    auto found = local_ids_.find(id);
    if (found == local_ids_.end()) {
      return InstructionError(c, i, absl::StrCat(what, " id ", id, " is not defined"));
    }
    pool->push_back(module_.computations[comp_id].first_instruction +
                    static_cast<InstrId>(found->second));
    return absl::OkStatus();
  };
  out->operands_begin = static_cast<uint32_t>(module_.operand_pool.size());
  for (int64_t id : i.operand_ids()) {
    HLOMEM_RETURN_IF_ERROR(resolve(id, "operand", &module_.operand_pool));
  }
  out->operand_count = static_cast<uint32_t>(module_.operand_pool.size()) - out->operands_begin;

  // Per-opcode typed fields and their attribute text.
  // The model keeps parameter numbers and tuple indices in 32 bits.
  auto to_int32 = [&](int64_t value, absl::string_view what, int32_t* field) -> absl::Status {
    if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
      return InstructionError(c, i, absl::StrCat(what, " ", value, " is too large"));
    }
    *field = static_cast<int32_t>(value);
    return absl::OkStatus();
  };
  switch (out->opcode) {
    case Opcode::kParameter:
      HLOMEM_RETURN_IF_ERROR(
          to_int32(i.parameter_number(), "parameter number", &out->index));
      break;
    case Opcode::kGetTupleElement:
      HLOMEM_RETURN_IF_ERROR(to_int32(i.tuple_index(), "tuple index", &out->index));
      attributes_.emplace_back("index", absl::StrCat(i.tuple_index()));
      break;
    case Opcode::kFusion: {
      const std::string& kind = i.fusion_kind();
      if (kind == "kLoop") out->fusion_kind = FusionKind::kLoop;
      else if (kind == "kInput") out->fusion_kind = FusionKind::kInput;
      else if (kind == "kOutput") out->fusion_kind = FusionKind::kOutput;
      else if (kind == "kCustom") out->fusion_kind = FusionKind::kCustom;
      else out->fusion_kind = FusionKind::kOther;
      attributes_.emplace_back("kind", kind);
      break;
    }
    case Opcode::kCustomCall:
      extras.custom_call_target = strings_.Add(i.custom_call_target());
      break;
    default:
      break;
  }
  if (out->opcode == Opcode::kIota) {
    if (i.dimensions_size() > 0) {
      attributes_.emplace_back("iota_dimension", absl::StrCat(i.dimensions(0)));
    }
  } else if (i.dimensions_size() > 0) {
    out->dimensions_begin = static_cast<uint32_t>(module_.dimension_pool.size());
    module_.dimension_pool.insert(module_.dimension_pool.end(), i.dimensions().begin(),
                                  i.dimensions().end());
    out->dimension_count = static_cast<uint32_t>(i.dimensions_size());
    attributes_.emplace_back("dimensions", BraceList(i.dimensions()));
  }
  if (i.slice_dimensions_size() > 0) {
    std::vector<std::string> parts;
    for (const auto& s : i.slice_dimensions()) {
      parts.push_back(s.stride() == 1 ? absl::StrCat("[", s.start(), ":", s.limit(), "]")
                                      : absl::StrCat("[", s.start(), ":", s.limit(), ":",
                                                     s.stride(), "]"));
    }
    attributes_.emplace_back("slice", absl::StrCat("{", absl::StrJoin(parts, ", "), "}"));
  }
  if (i.dynamic_slice_sizes_size() > 0) {
    attributes_.emplace_back("dynamic_slice_sizes", BraceList(i.dynamic_slice_sizes()));
  }
  if (i.channel_id() > 0) attributes_.emplace_back("channel_id", absl::StrCat(i.channel_id()));
  if (!i.comparison_direction().empty()) {
    attributes_.emplace_back("direction", i.comparison_direction());
  }
  if (!i.comparison_type().empty()) attributes_.emplace_back("type", i.comparison_type());
  if (out->opcode == Opcode::kSort && i.is_stable()) attributes_.emplace_back("is_stable", "true");
  if (out->opcode == Opcode::kTopK) {
    attributes_.emplace_back("k", absl::StrCat(i.k()));
    if (i.largest()) attributes_.emplace_back("largest", "true");
  }
  if (out->opcode == Opcode::kCustomCall) {
    attributes_.emplace_back("custom_call_target",
                             absl::StrCat("\"", absl::CEscape(View(i.custom_call_target())), "\""));
  }
  if (i.output_operand_aliasing_size() > 0) {
    std::vector<std::string> parts;
    extras.output_operand_aliases_begin =
        static_cast<uint32_t>(module_.output_operand_alias_pool.size());
    for (const auto& a : i.output_operand_aliasing()) {
      OutputOperandAlias alias;
      alias.output_index = ToShapeIndex(a.output_shape_index());
      alias.operand = a.operand_index();
      alias.operand_index = ToShapeIndex(a.operand_shape_index());
      parts.push_back(absl::StrCat(ShapeIndexToString(alias.output_index), ": (",
                                   alias.operand, ", ",
                                   ShapeIndexToString(alias.operand_index), ")"));
      module_.output_operand_alias_pool.push_back(std::move(alias));
    }
    extras.output_operand_alias_count = static_cast<uint32_t>(i.output_operand_aliasing_size());
    attributes_.emplace_back("output_to_operand_aliasing",
                             absl::StrCat("{", absl::StrJoin(parts, ", "), "}"));
  }

  // Called computations.
  extras.callees_begin = static_cast<uint32_t>(module_.callee_pool.size());
  std::vector<std::string> branch_names, called_names;
  for (int k = 0; k < i.called_computation_ids_size(); ++k) {
    const int64_t id = i.called_computation_ids(k);
    auto found = computation_ids_.find(id);
    if (found == computation_ids_.end()) {
      return InstructionError(c, i, absl::StrCat("called computation id ", id,
                                                 " is not defined"));
    }
    const CallRole role = CalleeRole(out->opcode, k);
    module_.callee_pool.push_back({role, found->second});
    const std::string& callee_name = proto_.computations(static_cast<int>(found->second)).name();
    if (role == CallRole::kBranch) {
      branch_names.push_back(callee_name);
    } else if (role == CallRole::kCalledComputations) {
      called_names.push_back(callee_name);
    } else {
      attributes_.emplace_back(CallRoleName(role), callee_name);
    }
  }
  extras.callee_count = static_cast<uint32_t>(module_.callee_pool.size()) - extras.callees_begin;
  if (!branch_names.empty()) {
    attributes_.emplace_back("branch_computations",
                             absl::StrCat("{", absl::StrJoin(branch_names, ", "), "}"));
  }
  if (!called_names.empty()) {
    attributes_.emplace_back("called_computations",
                             absl::StrCat("{", absl::StrJoin(called_names, ", "), "}"));
  }

  if (i.has_frontend_attributes() && i.frontend_attributes().map_size() > 0) {
    attributes_.emplace_back("frontend_attributes",
                             FrontendAttributesText(i.frontend_attributes()));
  }
  extras.control_predecessors_begin =
      static_cast<uint32_t>(module_.control_predecessor_pool.size());
  for (int64_t id : i.control_predecessor_ids()) {
    HLOMEM_RETURN_IF_ERROR(
        resolve(id, "control predecessor", &module_.control_predecessor_pool));
  }
  extras.control_predecessor_count =
      static_cast<uint32_t>(module_.control_predecessor_pool.size()) -
      extras.control_predecessors_begin;
  if (i.control_predecessor_ids_size() > 0) {
    std::vector<absl::string_view> names;
    for (int64_t id : i.control_predecessor_ids()) {
      const int position = local_ids_.at(id);
      names.push_back(View(c.instructions(order_[static_cast<size_t>(position)]).name()));
    }
    attributes_.emplace_back("control-predecessors",
                             absl::StrCat("{", absl::StrJoin(names, ", "), "}"));
  }

  if (!i.async_execution_thread().empty() && i.async_execution_thread() != "main") {
    attributes_.emplace_back(
        "async_execution_thread",
        absl::StrCat("\"", absl::CEscape(View(i.async_execution_thread())), "\""));
  }
  if (i.has_metadata()) {
    out->metadata = AddMetadata(i.metadata());
    if (out->metadata != 0) attributes_.emplace_back("metadata", MetadataText(i.metadata()));
  }
  if (!i.backend_config().empty()) {
    attributes_.emplace_back("backend_config", ConfigText(i.backend_config()));
  }

  out->attributes_begin = static_cast<uint32_t>(module_.attribute_pool.size());
  for (auto& [key, value] : attributes_) {
    module_.attribute_pool.push_back({key, strings_.Add(value)});
  }
  out->attribute_count = static_cast<uint32_t>(attributes_.size());
  module_.SetExtras(out, extras);
  return absl::OkStatus();
}

absl::Status ModuleBuilder::BuildComputation(CompId comp_id, uint64_t first_ordinal) {
  const xla::HloComputationProto& c = proto_.computations(static_cast<int>(comp_id));
  Computation& comp = module_.computations[comp_id];
  comp.name = strings_.AddUnique(c.name());
  comp.source_offset = comp_id;
  if (!c.execution_thread().empty() && c.execution_thread() != "main") {
    comp.execution_thread = strings_.Add(c.execution_thread());
  }
  const int n = c.instructions_size();
  if (n == 0) return ComputationError(c, "has no instructions");

  local_ids_.clear();
  local_ids_.reserve(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    if (!local_ids_.emplace(c.instructions(k).id(), k).second) {
      return InstructionError(c, c.instructions(k),
                              absl::StrCat("duplicate instruction id ", c.instructions(k).id()));
    }
  }

  // Text order: the schedule's, when the module has one for this
  // computation; else the proto's (operands before users).
  std::vector<int>& order = order_;  // position -> proto index
  order.clear();
  order.reserve(static_cast<size_t>(n));
  const auto& sequences = proto_.schedule().sequences();
  auto sequence = sequences.find(c.id());
  if (sequence != sequences.end()) {
    std::vector<bool> placed(static_cast<size_t>(n), false);
    for (int64_t id : sequence->second.instruction_ids()) {
      auto found = local_ids_.find(id);
      if (found == local_ids_.end()) {
        return ComputationError(
            c, absl::StrCat("schedule names instruction id ", id, ", which is not defined"));
      }
      if (placed[static_cast<size_t>(found->second)]) {
        return ComputationError(
            c, absl::StrCat("schedule names instruction id ", id, " twice"));
      }
      placed[static_cast<size_t>(found->second)] = true;
      order.push_back(found->second);
    }
    // Instructions the schedule leaves out (a verifier error in XLA) keep
    // their proto order after the scheduled ones.
    for (int k = 0; k < n; ++k) {
      if (!placed[static_cast<size_t>(k)]) order.push_back(k);
    }
  } else {
    for (int k = 0; k < n; ++k) order.push_back(k);
  }
  // Map proto index -> position so ids resolve to final InstrIds.
  std::vector<int> position(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) position[static_cast<size_t>(order[static_cast<size_t>(p)])] = p;
  for (auto& [id, index] : local_ids_) index = position[static_cast<size_t>(index)];

  comp.first_instruction = static_cast<InstrId>(module_.instructions.size());
  comp.instruction_count = static_cast<uint32_t>(n);
  module_.instructions.resize(module_.instructions.size() + static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) {
    const int k = order[static_cast<size_t>(p)];
    const InstrId id = comp.first_instruction + static_cast<InstrId>(p);
    // BuildInstruction may grow pools but not `instructions`, so the
    // reference stays valid.
    HLOMEM_RETURN_IF_ERROR(BuildInstruction(c, c.instructions(k), comp_id,
                                            first_ordinal + static_cast<uint64_t>(k),
                                            &module_.instructions[id]));
    if (instruction_ids_ != nullptr) instruction_ids_->emplace(c.instructions(k).id(), id);
  }

  auto root = local_ids_.find(c.root_id());
  if (root == local_ids_.end()) {
    return ComputationError(c, absl::StrCat("root id ", c.root_id(), " is not defined"));
  }
  comp.root = comp.first_instruction + static_cast<InstrId>(root->second);
  module_.instructions[comp.root].is_root = true;
  return absl::OkStatus();
}

std::string ModuleBuilder::ProgramShapeText(const xla::ProgramShapeProto& shape) {
  std::string out = "{(";
  for (int k = 0; k < shape.parameters_size(); ++k) {
    if (k) out.append(", ");
    if (k > 0 && k % 5 == 0) absl::StrAppend(&out, "/*index=", k, "*/");
    absl::StatusOr<ShapeId> id = ConvertShape(shape.parameters(k), 0);
    if (!id.ok()) return "";
    out.append(module_.shapes.ToString(*id));
  }
  out.append(")->");
  absl::StatusOr<ShapeId> result = ConvertShape(shape.result(), 0);
  if (!result.ok()) return "";
  absl::StrAppend(&out, module_.shapes.ToString(*result), "}");
  return out;
}

void ModuleBuilder::BuildHeader() {
  std::vector<std::pair<absl::string_view, std::string>> header;
  if (module_.is_scheduled) header.emplace_back("is_scheduled", "true");

  for (const auto& e : proto_.input_output_alias().entries()) {
    InputOutputAlias alias;
    alias.output_index = ToShapeIndex(e.output_shape_index());
    alias.parameter = e.parameter_number();
    alias.parameter_index = ToShapeIndex(e.parameter_shape_index());
    alias.kind = e.kind() == xla::MAY_ALIAS    ? AliasKind::kMayAlias
                 : e.kind() == xla::MUST_ALIAS ? AliasKind::kMustAlias
                                               : AliasKind::kUnspecified;
    module_.input_output_aliases.push_back(std::move(alias));
  }
  if (!module_.input_output_aliases.empty()) {
    std::vector<std::string> parts;
    for (const InputOutputAlias& a : module_.input_output_aliases) {
      std::string part = absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.parameter,
                                      ", ", ShapeIndexToString(a.parameter_index));
      if (a.kind == AliasKind::kMayAlias) part.append(", may-alias");
      if (a.kind == AliasKind::kMustAlias) part.append(", must-alias");
      part.push_back(')');
      parts.push_back(std::move(part));
    }
    header.emplace_back("input_output_alias",
                        absl::StrCat("{ ", absl::StrJoin(parts, ", "), " }"));
  }
  for (const auto& e : proto_.buffer_donor().entries()) {
    module_.buffer_donors.push_back(
        {e.parameter_number(), ToShapeIndex(e.parameter_shape_index())});
  }
  if (!module_.buffer_donors.empty()) {
    std::vector<std::string> parts;
    for (const BufferDonor& d : module_.buffer_donors) {
      parts.push_back(absl::StrCat("(", d.parameter, ", ", ShapeIndexToString(d.parameter_index),
                                   ")"));
    }
    header.emplace_back("buffer_donor", absl::StrCat("{ ", absl::StrJoin(parts, ", "), " }"));
  }
  if (proto_.has_host_program_shape()) {
    std::string layout = ProgramShapeText(proto_.host_program_shape());
    if (!layout.empty()) {
      module_.entry_computation_layout = strings_.Add(layout);
      header.emplace_back("entry_computation_layout", std::move(layout));
    }
  }
  if (proto_.has_frontend_attributes() && proto_.frontend_attributes().map_size() > 0) {
    header.emplace_back("frontend_attributes",
                        FrontendAttributesText(proto_.frontend_attributes()));
  }
  for (auto& [key, value] : header) {
    module_.header_attributes.push_back({key, strings_.Add(value)});
  }

  const xla::StackFrameIndexProto& frames = proto_.stack_frame_index();
  StackFrameIndex& out = module_.stack_frames;
  for (const std::string& f : frames.file_names()) out.file_names.push_back(strings_.Add(f));
  for (const std::string& f : frames.function_names()) {
    out.function_names.push_back(strings_.Add(f));
  }
  for (const auto& l : frames.file_locations()) {
    out.file_locations.push_back(
        {l.file_name_id(), l.function_name_id(), l.line(), l.end_line(), l.column(),
         l.end_column()});
  }
  for (const auto& f : frames.stack_frames()) {
    out.frames.push_back({f.file_location_id(), f.parent_frame_id()});
  }
}

absl::StatusOr<Module> ModuleBuilder::Build() {
  module_.path = path_;
  module_.name = strings_.Add(proto_.name());
  if (module_.metadata.empty()) module_.metadata.emplace_back();
  if (proto_.computations_size() == 0) return Error("module has no computations");

  const int count = proto_.computations_size();
  computation_ids_.reserve(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    if (!computation_ids_.emplace(proto_.computations(k).id(), static_cast<CompId>(k)).second) {
      return ComputationError(proto_.computations(k),
                              absl::StrCat("duplicate computation id ",
                                           proto_.computations(k).id()));
    }
  }
  for (const auto& [id, sequence] : proto_.schedule().sequences()) {
    if (!computation_ids_.contains(id)) {
      return Error(absl::StrCat("schedule names computation id ", id,
                                ", which is not defined"));
    }
  }
  module_.is_scheduled = proto_.has_schedule();

  module_.computations.resize(static_cast<size_t>(count));
  uint64_t ordinal = 0;
  for (int k = 0; k < count; ++k) {
    HLOMEM_RETURN_IF_ERROR(BuildComputation(static_cast<CompId>(k), ordinal));
    ordinal += static_cast<uint64_t>(proto_.computations(k).instructions_size());
  }

  // Entry: XLA goes by entry_computation_id; the name disambiguates old
  // protos whose ids are all zero.
  CompId entry = kNoId;
  auto by_id = computation_ids_.find(proto_.entry_computation_id());
  if (by_id != computation_ids_.end() &&
      (proto_.entry_computation_name().empty() ||
       proto_.computations(static_cast<int>(by_id->second)).name() ==
           proto_.entry_computation_name())) {
    entry = by_id->second;
  }
  if (entry == kNoId && !proto_.entry_computation_name().empty()) {
    for (int k = 0; k < count; ++k) {
      if (proto_.computations(k).name() == proto_.entry_computation_name()) {
        entry = static_cast<CompId>(k);
        break;
      }
    }
  }
  if (entry == kNoId && by_id != computation_ids_.end()) entry = by_id->second;
  if (entry == kNoId) entry = static_cast<CompId>(count - 1);
  module_.entry = entry;
  module_.computations[entry].is_entry = true;

  BuildHeader();
  module_.Finalize();
  return std::move(module_);
}

// A module worth reading: computations, each with named instructions whose
// opcodes look like opcodes. This tells the candidate message types apart,
// since HloProto, HloSnapshot and HloModuleProto all start with a
// length-delimited field 1 and often parse as one another.
bool LooksLikeModule(const xla::HloModuleProto& m) {
  if (m.computations_size() == 0) return false;
  for (const xla::HloComputationProto& c : m.computations()) {
    if (c.instructions_size() == 0) return false;
    for (const xla::HloInstructionProto& i : c.instructions()) {
      if (i.name().empty() || i.opcode().empty()) return false;
      for (char ch : i.opcode()) {
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-')) return false;
      }
    }
  }
  return true;
}

// Owns a parsed message and its arena; the buffer assignment handed out
// aliases this holder.
template <typename Message>
struct Parsed {
  pb::Arena arena;
  Message* message = nullptr;
};

template <typename Message>
std::shared_ptr<Parsed<Message>> ParseBinary(absl::string_view bytes) {
  auto parsed = std::make_shared<Parsed<Message>>();
  parsed->message = pb::Arena::CreateMessage<Message>(&parsed->arena);
  if (!parsed->message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return nullptr;
  }
  return parsed;
}

template <typename Message>
std::shared_ptr<Parsed<Message>> ParseText(absl::string_view text) {
  auto parsed = std::make_shared<Parsed<Message>>();
  parsed->message = pb::Arena::CreateMessage<Message>(&parsed->arena);
  pb::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  parser.SetRecursionLimit(kTextRecursionLimit);
  // Errors are expected while probing the candidate types; keep stderr quiet.
  class Silent : public pb::io::ErrorCollector {
   public:
    void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
    void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  } silent;
  parser.RecordErrorsTo(&silent);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, parsed->message)) return nullptr;
  return parsed;
}

// Builds the result for a module inside a parsed holder.
template <typename Message>
absl::StatusOr<ProtoReadResult> Finish(std::shared_ptr<Parsed<Message>> parsed,
                                       const xla::HloModuleProto& module,
                                       const xla::HloProto* hlo, ProtoKind kind,
                                       const std::shared_ptr<const FileContents>& file) {
  ProtoReadResult result;
  result.kind = kind;
  HLOMEM_ASSIGN_OR_RETURN(result.module,
                          ModuleFromProto(module, file->path(), &result.instruction_ids));
  result.module.source = file;
  if (hlo != nullptr && hlo->has_buffer_assignment()) {
    result.buffer_assignment = std::shared_ptr<const xla::BufferAssignmentProto>(
        parsed, &hlo->buffer_assignment());
  }
  return result;
}

absl::Status CheckSize(const FileContents& file) {
  if (file.data().size() > static_cast<size_t>(INT_MAX)) {
    return FileError(file.path(), "file is larger than protobuf's 2 GiB limit");
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view ProtoKindName(ProtoKind kind) {
  switch (kind) {
    case ProtoKind::kHloProto: return "HloProto";
    case ProtoKind::kHloModuleProto: return "HloModuleProto";
    case ProtoKind::kHloSnapshot: return "HloSnapshot";
    case ProtoKind::kHloUnoptimizedSnapshot: return "HloUnoptimizedSnapshot";
  }
  return "";
}

absl::StatusOr<Module> ModuleFromProto(const xla::HloModuleProto& proto,
                                       absl::string_view path,
                                       absl::flat_hash_map<int64_t, InstrId>* instruction_ids) {
  return ModuleBuilder(proto, path, instruction_ids).Build();
}

absl::StatusOr<ProtoReadResult> ReadHloProto(std::shared_ptr<const FileContents> file) {
  HLOMEM_RETURN_IF_ERROR(CheckSize(*file));
  const absl::string_view bytes = file->data();
  // A dump's .hlo.pb is an HloProto; try it first. An HloModuleProto or an
  // HloSnapshot may also parse as an HloProto, so the module must look real.
  if (auto p = ParseBinary<xla::HloProto>(bytes);
      p != nullptr && LooksLikeModule(p->message->hlo_module())) {
    const xla::HloProto* hlo = p->message;
    return Finish(p, hlo->hlo_module(), hlo, ProtoKind::kHloProto, file);
  }
  if (auto p = ParseBinary<xla::HloSnapshot>(bytes);
      p != nullptr && LooksLikeModule(p->message->hlo().hlo_module())) {
    const xla::HloProto* hlo = &p->message->hlo();
    return Finish(p, hlo->hlo_module(), hlo, ProtoKind::kHloSnapshot, file);
  }
  if (auto p = ParseBinary<xla::HloModuleProto>(bytes);
      p != nullptr && LooksLikeModule(*p->message)) {
    return Finish(p, *p->message, nullptr, ProtoKind::kHloModuleProto, file);
  }
  return FileError(file->path(),
                   "not an XLA HloProto, HloModuleProto or HloSnapshot (binary protobuf)");
}

absl::StatusOr<ProtoReadResult> ReadHloProtoText(std::shared_ptr<const FileContents> file) {
  HLOMEM_RETURN_IF_ERROR(CheckSize(*file));
  const absl::string_view text = file->data();
  if (auto p = ParseText<xla::HloSnapshot>(text);
      p != nullptr && LooksLikeModule(p->message->hlo().hlo_module())) {
    const xla::HloProto* hlo = &p->message->hlo();
    return Finish(p, hlo->hlo_module(), hlo, ProtoKind::kHloSnapshot, file);
  }
  // HloProto and HloUnoptimizedSnapshot share field 1 (hlo_module); the
  // snapshot's `partitions` tells them apart.
  if (auto p = ParseText<xla::HloUnoptimizedSnapshot>(text);
      p != nullptr && p->message->partitions_size() > 0 &&
      LooksLikeModule(p->message->hlo_module())) {
    return Finish(p, p->message->hlo_module(), nullptr, ProtoKind::kHloUnoptimizedSnapshot,
                  file);
  }
  if (auto p = ParseText<xla::HloProto>(text);
      p != nullptr && LooksLikeModule(p->message->hlo_module())) {
    const xla::HloProto* hlo = p->message;
    return Finish(p, hlo->hlo_module(), hlo, ProtoKind::kHloProto, file);
  }
  if (auto p = ParseText<xla::HloModuleProto>(text);
      p != nullptr && LooksLikeModule(*p->message)) {
    return Finish(p, *p->message, nullptr, ProtoKind::kHloModuleProto, file);
  }
  return FileError(file->path(),
                   "not an XLA HloProto, HloModuleProto, HloSnapshot or "
                   "HloUnoptimizedSnapshot in protobuf text format");
}

}  // namespace hlomem::hlo
