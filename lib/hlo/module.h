// The in-memory model of an HLO module, shared by the text parser, the proto
// reader and every analysis.
//
// Layout: instructions and computations live in dense vectors indexed by
// InstrId / CompId ("assigned contiguously; usable as vector indexes").
// Variable-length lists (operands, callees, attributes, ...) are ranges into
// module-wide pools, so a 10^5-instruction module costs a handful of
// allocations. Names and raw attribute text are views into the input file,
// which the module keeps alive; text the readers synthesize (proto input) is
// owned by the module.
#ifndef HLOMEM_LIB_HLO_MODULE_H_
#define HLOMEM_LIB_HLO_MODULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_contents.h"
#include "lib/base/text_arena.h"
#include "lib/hlo/opcode.h"
#include "lib/hlo/shape.h"

namespace hlomem::hlo {

using InstrId = uint32_t;
using CompId = uint32_t;
inline constexpr uint32_t kNoId = 0xffffffffu;

enum class FusionKind : uint8_t { kNone, kLoop, kInput, kOutput, kCustom, kOther };
absl::string_view FusionKindName(FusionKind kind);  // "kLoop", ...

// How an instruction refers to a computation it calls.
enum class CallRole : uint8_t {
  kToApply,            // to_apply= (reduce, map, sort, scatter, all-reduce, call)
  kCalls,              // calls= (fusion, async-start, call in newer printers)
  kBody,               // while body=
  kCondition,          // while condition=
  kBranch,             // conditional true_/false_computation=, branch_computations=
  kSelect,             // select-and-scatter select=
  kScatter,            // select-and-scatter scatter=
  kCalledComputations, // custom-call called_computations=
};
absl::string_view CallRoleName(CallRole role);

struct Callee {
  CallRole role;
  CompId computation;
};

// One attribute as written: `key=value`, value verbatim ("{1,0}", "kLoop",
// "\"abc\"", "{op_name=...}").
struct Attribute {
  absl::string_view key;
  absl::string_view value;
};

// output_to_operand_aliasing={{out}: (operand, {operand_index})}
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
};

enum class AliasKind : uint8_t { kUnspecified, kMayAlias, kMustAlias };

// input_output_alias={ {out}: (param, {param_index}, may-alias) }
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter = 0;
  ShapeIndex parameter_index;
  AliasKind kind = AliasKind::kUnspecified;
};

// buffer_donor={ (param, {param_index}) }
struct BufferDonor {
  int64_t parameter = 0;
  ShapeIndex parameter_index;
};

struct OpMetadata {
  absl::string_view op_type;
  absl::string_view op_name;
  absl::string_view source_file;
  int64_t source_line = 0;
  int64_t stack_frame_id = 0;
  // The text as written, "{op_type=...}", when the text parser shares it
  // between instructions (see Instruction::elided_metadata_at).
  absl::string_view text;
};

// The 2025+ FileNames / FunctionNames / FileLocations / StackFrames header
// sections. Ids in the text are 1-based; entry k lives at index k-1.
struct StackFrameIndex {
  struct FileLocation {
    int64_t file_name_id = 0;
    int64_t function_name_id = 0;
    int64_t line = 0;
    int64_t end_line = 0;
    int64_t column = 0;
    int64_t end_column = 0;
  };
  struct Frame {
    int64_t file_location_id = 0;
    int64_t parent_frame_id = 0;
  };
  std::vector<absl::string_view> file_names;
  std::vector<absl::string_view> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<Frame> frames;

  bool empty() const {
    return file_names.empty() && function_names.empty() &&
           file_locations.empty() && frames.empty();
  }
};

struct SourceLocation {
  absl::string_view file;
  int64_t line = 0;
  // The StackFrames id of the instruction's stack (1-based), 0 when the
  // location came from source_file/source_line or there is none.
  int64_t stack_frame = 0;
  bool valid() const { return !file.empty(); }
};

// One frame of a Python stack, resolved through the StackFrames tables.
struct StackEntry {
  absl::string_view file;
  absl::string_view function;
  int64_t line = 0;
  bool library = false;  // a framework's or Python's own (OriginOfFrame)
};

// Where a frame's file comes from, for choosing the line of a stack that a
// user should look at.
enum class FrameOrigin {
  // The program and its model code, installed or not: a trainer started
  // with `python -m` from site-packages is the user's code.
  kUser,
  // jax, flax, optax, orbax, numpy and the like, and the packages a user
  // names (--skip-frames).
  kFramework,
  // Python itself: the standard library, `<frozen runpy>`.
  kRuntime,
};

// `more_frameworks`: package names ("maxtext", "my_pkg.utils") skipped as
// frameworks too.
FrameOrigin OriginOfFrame(absl::string_view path,
                          absl::Span<const std::string> more_frameworks = {});

// How SourceOf picks a stack's line.
struct FramePolicy {
  // The innermost frame whatever it is (--frames all), not the user's.
  bool innermost_only = false;
  // Packages skipped besides the built-in frameworks (--skip-frames).
  std::vector<std::string> skip_packages;
};

// What few instructions have (calls, constants, custom calls, control
// dependencies, unusual spellings), kept out of Instruction so the millions
// of plain ones stay small.
struct InstructionExtras {
  // The opcode as written, when it differs from OpcodeName(opcode): unknown
  // opcodes and async syntax sugar ("custom-call-start" is an async-start).
  absl::string_view opcode_text;
  absl::string_view custom_call_target;  // unquoted
  // constant(...) payload, verbatim ("0", "{...}", "{1, 2}").
  absl::string_view literal;
  uint32_t callees_begin = 0, callee_count = 0;
  uint32_t control_predecessors_begin = 0, control_predecessor_count = 0;
  uint32_t output_operand_aliases_begin = 0, output_operand_alias_count = 0;

  bool empty() const {
    return opcode_text.empty() && custom_call_target.empty() && literal.empty() &&
           callee_count == 0 && control_predecessor_count == 0 &&
           output_operand_alias_count == 0;
  }
};

struct Instruction {
  // 72 bytes, laid out without padding: a 1 GB module holds millions of
  // these (7.3 M in the 1.12 GB fused module).
  absl::string_view name;
  ShapeId shape = 0;
  CompId parent = kNoId;

  uint32_t operands_begin = 0, operand_count = 0;
  uint32_t attributes_begin = 0, attribute_count = 0;
  uint32_t dimensions_begin = 0, dimension_count = 0;

  uint32_t metadata = 0;  // index into Module::metadata; 0 means none
  uint32_t extras = 0;    // index into Module::extras; 0 means none
  // parameter(N)'s N, get-tuple-element's index=N: no instruction has both.
  // Read through parameter_number() and tuple_index().
  int32_t index = -1;

 private:
  // source_offset(), in 40 bits: the text parser refuses a text of 2^40
  // bytes or more.
  uint32_t source_offset_low_ = 0;

 public:
  Opcode opcode = Opcode::kUnknown;
  FusionKind fusion_kind = FusionKind::kNone;
  bool is_root = false;
  // Synthesized by the text parser for a compact operand "x#1" (XLA 2026's
  // compact get-tuple-element printing): a get-tuple-element the printer
  // omitted. The printer folds it back into the operand.
  bool is_implicit = false;
  // The text parser keeps a shared metadata attribute out of the attribute
  // list (on millions of instructions it would be most of the list): it
  // stands before attributes(id)[elided_metadata_at], and its value is
  // metadata_of(id).text. kNotElided when the list holds it, if present.
  static constexpr uint16_t kNotElided = 0xffff;
  uint16_t elided_metadata_at = kNotElided;

 private:
  uint8_t source_offset_high_ = 0;

 public:
  static constexpr uint64_t kMaxSourceOffset = (uint64_t{1} << 40) - 1;

  // -1 for other opcodes.
  int32_t parameter_number() const { return opcode == Opcode::kParameter ? index : -1; }
  int32_t tuple_index() const { return opcode == Opcode::kGetTupleElement ? index : -1; }

  // Where the instruction starts in the input: a byte offset for text, the
  // instruction's position for protos. Used to locate diagnostics.
  uint64_t source_offset() const {
    return uint64_t{source_offset_high_} << 32 | source_offset_low_;
  }
  // `offset` <= kMaxSourceOffset.
  void set_source_offset(uint64_t offset) {
    source_offset_low_ = static_cast<uint32_t>(offset);
    source_offset_high_ = static_cast<uint8_t>(offset >> 32);
  }
};
static_assert(sizeof(Instruction) <= 72, "Instruction grew: rare fields belong in InstructionExtras");

struct Computation {
  absl::string_view name;
  // Instructions are contiguous: [first_instruction, first + count), in text
  // order, which for a scheduled module is the schedule.
  InstrId first_instruction = 0;
  uint32_t instruction_count = 0;
  InstrId root = kNoId;
  bool is_entry = false;
  bool is_fusion = false;  // called by a fusion (set by Finalize)
  absl::string_view execution_thread;  // empty for the main thread
  uint64_t source_offset = 0;
};

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  // --- header ---------------------------------------------------------------
  absl::string_view name;
  CompId entry = kNoId;
  bool is_scheduled = false;
  absl::string_view entry_computation_layout;  // verbatim "{(...)->...}"
  std::vector<InputOutputAlias> input_output_aliases;
  std::vector<BufferDonor> buffer_donors;
  StackFrameIndex stack_frames;
  // Every header attribute verbatim, in order (frontend_attributes, ...).
  std::vector<Attribute> header_attributes;

  // --- body -----------------------------------------------------------------
  ShapeTable shapes;
  std::vector<Computation> computations;  // text order (callees first)
  std::vector<Instruction> instructions;

  // Pools addressed by the ranges in Instruction.
  std::vector<InstrId> operand_pool;
  std::vector<Callee> callee_pool;
  std::vector<InstrId> control_predecessor_pool;
  std::vector<Attribute> attribute_pool;
  std::vector<OutputOperandAlias> output_operand_alias_pool;
  std::vector<int64_t> dimension_pool;
  std::vector<OpMetadata> metadata;  // [0] is the empty metadata
  std::vector<InstructionExtras> extras;  // [0] is the empty extras

  // Gives `instr` these extras (nothing when they are empty).
  void SetExtras(Instruction* instr, const InstructionExtras& e) {
    if (e.empty()) return;
    if (extras.empty()) extras.emplace_back();
    instr->extras = static_cast<uint32_t>(extras.size());
    extras.push_back(e);
  }

  // --- provenance -----------------------------------------------------------
  std::string path;  // the file it was read from
  // True when read from HLO text: source_offset values are byte offsets into
  // source->data(), so diagnostics can quote the line.
  bool from_text = false;
  std::shared_ptr<const FileContents> source;  // keeps the views valid

  // Copies `text` into storage owned by the module and returns a view of it.
  absl::string_view Own(absl::string_view text) { return owned_text_.Copy(text); }
  // Takes over the text `other` owns, so views into it (names, metadata)
  // copied from `other` into this module stay valid.
  void AdoptOwnedText(Module* other);

  // --- accessors ------------------------------------------------------------
  const Instruction& instr(InstrId id) const { return instructions[id]; }
  const Computation& comp(CompId id) const { return computations[id]; }
  const Shape& shape_of(InstrId id) const { return shapes.get(instructions[id].shape); }

  // Inline: the analyses call these in their innermost loops.
  absl::Span<const InstrId> operands(InstrId id) const {
    const Instruction& i = instructions[id];
    return absl::MakeConstSpan(operand_pool.data() + i.operands_begin, i.operand_count);
  }
  const InstructionExtras& extras_of(InstrId id) const {
    static const InstructionExtras kNone;
    const uint32_t e = instructions[id].extras;
    return e == 0 ? kNone : extras[e];
  }
  absl::Span<const Callee> callees(InstrId id) const {
    const InstructionExtras& e = extras_of(id);
    return absl::MakeConstSpan(callee_pool.data() + e.callees_begin, e.callee_count);
  }
  // The opcode as written (OpcodeName(opcode) unless spelled otherwise).
  absl::string_view opcode_text(InstrId id) const;
  absl::string_view custom_call_target(InstrId id) const { return extras_of(id).custom_call_target; }
  absl::string_view literal(InstrId id) const { return extras_of(id).literal; }
  absl::Span<const InstrId> control_predecessors(InstrId id) const;
  absl::Span<const Attribute> attributes(InstrId id) const;
  absl::Span<const OutputOperandAlias> output_operand_aliases(InstrId id) const;
  absl::Span<const int64_t> dimensions(InstrId id) const;
  const OpMetadata& metadata_of(InstrId id) const {
    return metadata[instructions[id].metadata];
  }
  // The raw value of attribute `key`, if present (an elided metadata
  // attribute included).
  std::optional<absl::string_view> attribute(InstrId id, absl::string_view key) const;
  // The first callee with `role`, or kNoId.
  CompId callee(InstrId id, CallRole role) const;

  // Instruction ids of a computation, in text (= schedule) order.
  struct InstrRange {
    InstrId begin_id, end_id;
    struct Iterator {
      InstrId id;
      InstrId operator*() const { return id; }
      Iterator& operator++() { ++id; return *this; }
      bool operator!=(const Iterator& o) const { return id != o.id; }
    };
    Iterator begin() const { return {begin_id}; }
    Iterator end() const { return {end_id}; }
    uint32_t size() const { return end_id - begin_id; }
  };
  InstrRange instructions_of(CompId id) const {
    const Computation& c = computations[id];
    return {c.first_instruction, c.first_instruction + c.instruction_count};
  }

  // --- derived (valid after Finalize) ---------------------------------------
  // Users of each instruction (each user once, in id order).
  absl::Span<const InstrId> users(InstrId id) const;
  // Instructions that call computation `id`.
  absl::Span<const InstrId> callers(CompId id) const;
  // Parameters of a computation indexed by parameter number (kNoId holes).
  absl::Span<const InstrId> parameters(CompId id) const;
  // How many instructions have each shape, indexed by ShapeId: sums over
  // instructions of a per-shape figure, without walking the instructions.
  absl::Span<const uint32_t> shape_use_counts() const { return shape_use_counts_; }
  // The constant instructions, in id order: few, among millions.
  absl::Span<const InstrId> constants() const { return constants_; }

  // Where the instruction came from in the user's program: the metadata's
  // source_file/source_line, or its stack resolved through the StackFrames
  // tables, at the innermost frame that is not a library's.
  SourceLocation SourceOf(InstrId id) const;
  // The stack of a StackFrames id, innermost frame first; empty for 0 or an
  // id out of range.
  std::vector<StackEntry> StackOf(int64_t stack_frame) const;
  // One frame of a StackFrames id, without its callers; nullopt when the id
  // or its location is out of range.
  std::optional<StackEntry> FrameOf(int64_t stack_frame) const;
  // A frame's parent id, 0 at the root (or for a malformed forward link).
  int64_t ParentFrame(int64_t stack_frame) const;
  // SourceOf's choice in a stack: the user's innermost frame (frameworks
  // and Python's own frames skipped, the default) or the innermost frame
  // whatever it is. Also resolves every frame's choice once, so that
  // SourceOf, asked for each instruction and its neighbours, does not walk
  // stacks.
  void SetFramePolicy(FramePolicy policy);

  // Cuts the computations, in id order, into at most `parts` ranges
  // [bounds[r], bounds[r + 1]) of about equal instruction counts, for work
  // done on them side by side: bounds[0] = 0, bounds.back() = the count.
  std::vector<CompId> ComputationRanges(size_t parts) const;

  // Looks up a computation by name (linear; for tests and tools).
  CompId FindComputation(absl::string_view name) const;
  // Looks up an instruction by name (linear; for tests and tools).
  InstrId FindInstruction(absl::string_view name) const;

  // An error about one instruction: "path:line:col: error: ..." with the
  // line quoted for text input, "path: error: instruction 'x': ..." otherwise.
  absl::Status InstructionError(InstrId id, absl::string_view message) const;
  absl::Status ComputationError(CompId id, absl::string_view message) const;

  // Copies the names of the instructions outside fused computations (the
  // ones buffers are reported under) into the module, so they no longer
  // view the input. Call after Finalize.
  void OwnNamesOutsideFusions();
  // The same for the instructions [begin, end), whatever their computation:
  // the text parser copies a large unfused body's names while its text is
  // still in memory. Names copied before are left as they are.
  void OwnNames(InstrId begin, InstrId end);

  // Builds the derived tables (users, callers, parameters, fusion flags).
  // The readers call it after building the module. With threads > 1, the
  // instructions are taken in that many ranges of whole computations, side
  // by side.
  void Finalize(int threads = 1);

  // The entry computation's parameter and result shapes without layouts,
  // "(f32[8,3], s32[8])->f32[]": with the instruction count, what tells two
  // compiles of one jitted function apart. "" without an entry. After
  // Finalize.
  std::string EntrySignature() const;

 private:
  // The file location SourceOf reports for a frame (1-based ids, 0: none).
  int64_t ChosenLocation(int64_t stack_frame) const;
  // The origin of the file with id `file` (1-based), resolved once per file
  // by SetFramePolicy: stacks share their files.
  FrameOrigin OriginOfFile(int64_t file) const;
  FramePolicy frame_policy_;
  std::vector<FrameOrigin> file_origin_;  // per file name, from SetFramePolicy
  std::vector<int64_t> chosen_location_;  // per frame, from SetFramePolicy
  TextArena owned_text_;
  std::vector<uint32_t> user_offsets_;  // CSR over user_pool_
  std::vector<InstrId> user_pool_;
  std::vector<uint32_t> caller_offsets_;
  std::vector<InstrId> caller_pool_;
  std::vector<uint32_t> parameter_offsets_;
  std::vector<InstrId> parameter_pool_;
  std::vector<uint32_t> shape_use_counts_;
  std::vector<InstrId> constants_;
};

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_MODULE_H_
