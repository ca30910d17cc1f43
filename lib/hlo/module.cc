#include "lib/hlo/module.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lib/base/allocator.h"
#include "lib/base/diagnostic.h"
#include "lib/base/parallel.h"

namespace hlomem::hlo {
namespace {

// Builds a CSR index of the distinct (key, value) pairs that
// `for_each_pair(r, emit)` emits for each range r of keys
// [key_bounds[r], key_bounds[r + 1]), calling emit(key, value) in
// nondecreasing value order: each key's row lists its values in order, once.
// Ranges are indexed side by side, on their own threads. Two passes, no
// sort; a repeated pair directly follows its first emission among its
// key's pairs, so both passes drop it by comparing with the key's last
// value. False, with nothing built, if a range emitted a key outside it.
template <typename ForEachPair>
bool BuildDistinctCsr(const std::vector<uint32_t>& key_bounds, const ForEachPair& for_each_pair,
                      std::vector<uint32_t>* offsets, std::vector<uint32_t>* pool) {
  const size_t key_count = key_bounds.back();
  const size_t ranges = key_bounds.size() - 1;
  // Per key: the last value counted by the first pass, then where the
  // second pass puts the key's next value. Each range fills its own keys.
  const std::unique_ptr<uint32_t[]> cursor(new uint32_t[key_count]);
  offsets->assign(key_count + 1, 0);
  std::vector<char> strayed(ranges, 0);
  ParallelFor(ranges, [&](size_t r) {
    const uint32_t low = key_bounds[r], high = key_bounds[r + 1];
    std::fill(cursor.get() + low, cursor.get() + high, kNoId);
    for_each_pair(r, [&](uint32_t key, uint32_t value) {
      if (key < low || key >= high) {
        strayed[r] = 1;
        return;
      }
      if (cursor[key] == value) return;
      cursor[key] = value;
      ++(*offsets)[key + 1];
    });
  }, ranges);
  if (std::find(strayed.begin(), strayed.end(), 1) != strayed.end()) return false;
  for (size_t i = 1; i <= key_count; ++i) (*offsets)[i] += (*offsets)[i - 1];
  std::copy(offsets->begin(), offsets->end() - 1, cursor.get());
  pool->assign(offsets->back(), kNoId);
  ParallelFor(ranges, [&](size_t r) {
    for_each_pair(r, [&](uint32_t key, uint32_t value) {
      uint32_t& next = cursor[key];
      if (next == (*offsets)[key] || (*pool)[next - 1] != value) (*pool)[next++] = value;
    });
  }, ranges);
  return true;
}

template <typename T>
absl::Span<const T> CsrRow(const std::vector<uint32_t>& offsets,
                           const std::vector<T>& pool, uint32_t key) {
  if (key + 1 >= offsets.size()) return {};
  return absl::MakeConstSpan(pool.data() + offsets[key],
                             offsets[key + 1] - offsets[key]);
}

}  // namespace

absl::string_view FusionKindName(FusionKind kind) {
  switch (kind) {
    case FusionKind::kNone: return "";
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
    case FusionKind::kOther: return "kOther";
  }
  return "";
}

absl::string_view CallRoleName(CallRole role) {
  switch (role) {
    case CallRole::kToApply: return "to_apply";
    case CallRole::kCalls: return "calls";
    case CallRole::kBody: return "body";
    case CallRole::kCondition: return "condition";
    case CallRole::kBranch: return "branch_computations";
    case CallRole::kSelect: return "select";
    case CallRole::kScatter: return "scatter";
    case CallRole::kCalledComputations: return "called_computations";
  }
  return "";
}

void Module::AdoptOwnedText(Module* other) { owned_text_.Adopt(std::move(other->owned_text_)); }

void Module::OwnNames(InstrId begin, InstrId end) {
  // Names still viewing the input; the others are owned already.
  const absl::string_view input = source != nullptr ? source->data() : absl::string_view();
  auto views_input = [&](absl::string_view name) {
    return !name.empty() && name.data() >= input.data() &&
           name.data() < input.data() + input.size();
  };
  size_t bytes = 0;
  for (InstrId i = begin; i < end; ++i) {
    if (views_input(instructions[i].name)) bytes += instructions[i].name.size();
  }
  // One block for all of them.
  char* next = owned_text_.Allocate(bytes);
  for (InstrId i = begin; i < end; ++i) {
    absl::string_view& instr_name = instructions[i].name;
    if (!views_input(instr_name)) continue;
    std::memcpy(next, instr_name.data(), instr_name.size());
    instr_name = absl::string_view(next, instr_name.size());
    next += instr_name.size();
  }
}

void Module::OwnNamesOutsideFusions() {
  for (CompId c = 0; c < computations.size(); ++c) {
    if (computations[c].is_fusion) continue;
    const InstrRange range = instructions_of(c);
    OwnNames(range.begin_id, range.end_id);
  }
}

absl::Span<const InstrId> Module::control_predecessors(InstrId id) const {
  const InstructionExtras& e = extras_of(id);
  return absl::MakeConstSpan(control_predecessor_pool.data() + e.control_predecessors_begin,
                             e.control_predecessor_count);
}
absl::string_view Module::opcode_text(InstrId id) const {
  const absl::string_view written = extras_of(id).opcode_text;
  return written.empty() ? OpcodeName(instructions[id].opcode) : written;
}
absl::Span<const Attribute> Module::attributes(InstrId id) const {
  const Instruction& i = instructions[id];
  return absl::MakeConstSpan(attribute_pool.data() + i.attributes_begin,
                             i.attribute_count);
}
absl::Span<const OutputOperandAlias> Module::output_operand_aliases(
    InstrId id) const {
  const InstructionExtras& e = extras_of(id);
  return absl::MakeConstSpan(output_operand_alias_pool.data() + e.output_operand_aliases_begin,
                             e.output_operand_alias_count);
}
absl::Span<const int64_t> Module::dimensions(InstrId id) const {
  const Instruction& i = instructions[id];
  return absl::MakeConstSpan(dimension_pool.data() + i.dimensions_begin,
                             i.dimension_count);
}

std::optional<absl::string_view> Module::attribute(InstrId id,
                                                   absl::string_view key) const {
  if (key == "metadata" && instructions[id].elided_metadata_at != Instruction::kNotElided) {
    return metadata_of(id).text;
  }
  for (const Attribute& a : attributes(id)) {
    if (a.key == key) return a.value;
  }
  return std::nullopt;
}

CompId Module::callee(InstrId id, CallRole role) const {
  for (const Callee& c : callees(id)) {
    if (c.role == role) return c.computation;
  }
  return kNoId;
}

absl::Span<const InstrId> Module::users(InstrId id) const {
  return CsrRow(user_offsets_, user_pool_, id);
}
absl::Span<const InstrId> Module::callers(CompId id) const {
  return CsrRow(caller_offsets_, caller_pool_, id);
}
absl::Span<const InstrId> Module::parameters(CompId id) const {
  return CsrRow(parameter_offsets_, parameter_pool_, id);
}

namespace {

// Frameworks: what builds, differentiates, optimizes and checkpoints a model
// rather than being one. Paths below site-packages (or a source checkout's
// folder of that name); model libraries (transformers, keras_hub, praxis,
// maxtext, ...) are the user's code.
constexpr absl::string_view kFrameworks[] = {
    "jax/",        "jaxlib/",  "jax_plugins/", "flax/",     "optax/",   "orbax/",
    "chex/",       "equinox/", "haiku/",       "penzai/nn/", "penzai/core/", "numpy/",
    "ml_dtypes/",  "scipy/",   "einops/",      "optree/",   "absl/",    "etils/",
    "jaxtyping/",  "jmp/",     "keras/",       "tf_keras/", "tensorflow/", "torch/",
    "torch_xla/",  "typing_extensions.py"};

bool UnderPackage(absl::string_view path, absl::string_view package) {
  return absl::StartsWith(path, package) || absl::StrContains(path, absl::StrCat("/", package));
}

// "my_pkg.utils" as a path: "my_pkg/utils/".
std::string PackagePath(absl::string_view package) {
  std::string path = absl::StrReplaceAll(package, {{".", "/"}});
  if (!absl::EndsWith(path, "/")) path += "/";
  return path;
}

// The standard library: .../lib/python3.12/x.py, not below site-packages.
bool InStandardLibrary(absl::string_view path) {
  const size_t lib = path.find("/lib/python");
  if (lib == absl::string_view::npos) return false;
  const absl::string_view rest = path.substr(lib + 11);
  const size_t slash = rest.find('/');
  if (slash == absl::string_view::npos) return false;
  const absl::string_view version = rest.substr(0, slash);  // "3.12"
  const size_t dot = version.find('.');
  if (dot == absl::string_view::npos || dot == 0 || dot + 1 == version.size()) return false;
  for (char c : version) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

}  // namespace

FrameOrigin OriginOfFrame(absl::string_view path,
                          absl::Span<const std::string> more_frameworks) {
  if (absl::StartsWith(path, "<frozen ")) return FrameOrigin::kRuntime;
  // What follows site-packages/ names the package.
  absl::string_view within = path;
  for (absl::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    const size_t at = path.rfind(packages);
    if (at != absl::string_view::npos) within = path.substr(at + packages.size());
  }
  const bool installed = within.size() != path.size();
  for (absl::string_view framework : kFrameworks) {
    if (installed ? absl::StartsWith(within, framework) : UnderPackage(path, framework)) {
      return FrameOrigin::kFramework;
    }
  }
  for (const std::string& package : more_frameworks) {
    const std::string package_path = PackagePath(package);
    if (installed ? absl::StartsWith(within, package_path) ||
                        within == absl::StrCat(package_path.substr(0, package_path.size() - 1), ".py")
                  : UnderPackage(path, package_path)) {
      return FrameOrigin::kFramework;
    }
  }
  if (!installed && InStandardLibrary(path)) return FrameOrigin::kRuntime;
  return FrameOrigin::kUser;
}

std::optional<StackEntry> Module::FrameOf(int64_t stack_frame) const {
  const auto& frames = stack_frames.frames;
  const auto& locations = stack_frames.file_locations;
  const auto& files = stack_frames.file_names;
  const auto& functions = stack_frames.function_names;
  if (stack_frame <= 0 || stack_frame > static_cast<int64_t>(frames.size())) return std::nullopt;
  const int64_t location = frames[static_cast<size_t>(stack_frame - 1)].file_location_id;
  if (location <= 0 || location > static_cast<int64_t>(locations.size())) return std::nullopt;
  const StackFrameIndex::FileLocation& loc = locations[static_cast<size_t>(location - 1)];
  StackEntry entry;
  if (loc.file_name_id > 0 && loc.file_name_id <= static_cast<int64_t>(files.size())) {
    entry.file = files[static_cast<size_t>(loc.file_name_id - 1)];
  }
  if (loc.function_name_id > 0 && loc.function_name_id <= static_cast<int64_t>(functions.size())) {
    entry.function = functions[static_cast<size_t>(loc.function_name_id - 1)];
  }
  entry.line = loc.line;
  entry.library = loc.file_name_id > 0 && loc.file_name_id <= static_cast<int64_t>(files.size()) &&
                  OriginOfFile(loc.file_name_id) != FrameOrigin::kUser;
  return entry;
}

std::vector<StackEntry> Module::StackOf(int64_t stack_frame) const {
  std::vector<StackEntry> stack;
  for (int64_t frame = stack_frame;; frame = ParentFrame(frame)) {
    std::optional<StackEntry> entry = FrameOf(frame);
    if (!entry) break;
    stack.push_back(*entry);
  }
  return stack;
}

int64_t Module::ParentFrame(int64_t stack_frame) const {
  const auto& frames = stack_frames.frames;
  if (stack_frame <= 0 || stack_frame > static_cast<int64_t>(frames.size())) return 0;
  // XLA prints a parent as its id plus one: 1 is the root's "no parent".
  // Parents precede their children, which also ends a malformed cycle.
  const int64_t parent = frames[static_cast<size_t>(stack_frame - 1)].parent_frame_id - 1;
  return parent > 0 && parent < stack_frame ? parent : 0;
}

int64_t Module::ChosenLocation(int64_t stack_frame) const {
  const auto& frames = stack_frames.frames;
  const auto& locations = stack_frames.file_locations;
  const auto& files = stack_frames.file_names;
  int64_t innermost = 0;
  int64_t innermost_framework = 0;
  for (int64_t frame = stack_frame; frame > 0 && frame <= static_cast<int64_t>(frames.size());
       frame = ParentFrame(frame)) {
    const int64_t location = frames[static_cast<size_t>(frame - 1)].file_location_id;
    if (location <= 0 || location > static_cast<int64_t>(locations.size())) break;
    const int64_t file = locations[static_cast<size_t>(location - 1)].file_name_id;
    if (file <= 0 || file > static_cast<int64_t>(files.size())) break;
    if (innermost == 0) innermost = location;
    if (frame_policy_.innermost_only) break;
    switch (OriginOfFile(file)) {
      case FrameOrigin::kUser:
        return location;
      case FrameOrigin::kFramework:
        if (innermost_framework == 0) innermost_framework = location;
        break;
      case FrameOrigin::kRuntime:
        break;
    }
  }
  // No user frame: a framework's line says more than runpy's.
  return innermost_framework != 0 ? innermost_framework : innermost;
}

FrameOrigin Module::OriginOfFile(int64_t file) const {
  const auto& files = stack_frames.file_names;
  return file_origin_.size() == files.size()
             ? file_origin_[static_cast<size_t>(file - 1)]
             : OriginOfFrame(files[static_cast<size_t>(file - 1)], frame_policy_.skip_packages);
}

void Module::SetFramePolicy(FramePolicy policy) {
  frame_policy_ = std::move(policy);
  file_origin_.clear();
  for (absl::string_view file : stack_frames.file_names) {
    file_origin_.push_back(OriginOfFrame(file, frame_policy_.skip_packages));
  }
  chosen_location_.assign(stack_frames.frames.size(), 0);
  for (size_t k = 0; k < chosen_location_.size(); ++k) {
    chosen_location_[k] = ChosenLocation(static_cast<int64_t>(k) + 1);
  }
}

SourceLocation Module::SourceOf(InstrId id) const {
  const OpMetadata& m = metadata_of(id);
  if (!m.source_file.empty()) return {m.source_file, m.source_line, 0};
  const int64_t frame = m.stack_frame_id;
  if (frame <= 0 || frame > static_cast<int64_t>(stack_frames.frames.size())) return {};
  const int64_t location = chosen_location_.size() == stack_frames.frames.size()
                               ? chosen_location_[static_cast<size_t>(frame - 1)]
                               : ChosenLocation(frame);
  if (location <= 0) return {};
  const StackFrameIndex::FileLocation& loc = stack_frames.file_locations[static_cast<size_t>(location - 1)];
  return {stack_frames.file_names[static_cast<size_t>(loc.file_name_id - 1)], loc.line, frame};
}

std::vector<CompId> Module::ComputationRanges(size_t parts) const {
  std::vector<CompId> bounds = {0};
  parts = std::max<size_t>(parts, 1);
  size_t total = 0;
  for (const Computation& c : computations) total += c.instruction_count;
  size_t so_far = 0;
  for (CompId c = 0; c + 1 < computations.size() && bounds.size() < parts; ++c) {
    so_far += computations[c].instruction_count;
    if (so_far >= total / parts * bounds.size()) bounds.push_back(c + 1);
  }
  bounds.push_back(static_cast<CompId>(computations.size()));
  return bounds;
}

CompId Module::FindComputation(absl::string_view wanted) const {
  for (CompId c = 0; c < computations.size(); ++c) {
    if (computations[c].name == wanted) return c;
  }
  return kNoId;
}

InstrId Module::FindInstruction(absl::string_view wanted) const {
  for (InstrId i = 0; i < instructions.size(); ++i) {
    if (instructions[i].name == wanted) return i;
  }
  return kNoId;
}

absl::Status Module::InstructionError(InstrId id, absl::string_view message) const {
  const Instruction& i = instructions[id];
  if (from_text && source != nullptr) {
    return ErrorAt(path, source->data(), i.source_offset(), message);
  }
  return FileError(path, absl::StrCat("instruction '", i.name, "': ", message));
}

absl::Status Module::ComputationError(CompId id, absl::string_view message) const {
  const Computation& c = computations[id];
  if (from_text && source != nullptr) {
    return ErrorAt(path, source->data(), c.source_offset, message);
  }
  return FileError(path, absl::StrCat("computation '", c.name, "': ", message));
}

void Module::Finalize(int threads) {
  const size_t n = instructions.size();

  // One pass over the instruction array (as large as the input text for big
  // modules) gathers what the tables below need; they then read only these
  // compact copies. Large modules take it in ranges of whole computations,
  // on several threads.
  struct OperandRange {
    uint32_t begin, count;
  };
  // Written by the ranges below, each its own instructions' entries.
  std::unique_ptr<OperandRange[]> operand_ranges(new OperandRange[n]);
  struct NumberedParameter {
    InstrId id;
    int64_t number;  // >= 0
  };
  struct RangeFacts {
    std::vector<InstrId> callers;  // instructions with callees
    std::vector<InstrId> constants;
    std::vector<NumberedParameter> parameters;
    std::vector<uint32_t> shape_use_counts;
  };
  // Ranges of instructions: those of ranges of whole computations, when
  // the computations lie one after another in id order (as parsed).
  std::vector<InstrId> bounds = {0};
  size_t tiled = 0;
  for (const Computation& c : computations) {
    tiled = c.first_instruction == tiled ? tiled + c.instruction_count : n + 1;
  }
  if (tiled == n) {
    const std::vector<CompId> comp_bounds =
        ComputationRanges(static_cast<size_t>(std::max(threads, 1)));
    for (size_t r = 1; r + 1 < comp_bounds.size(); ++r) {
      bounds.push_back(computations[comp_bounds[r]].first_instruction);
    }
  }
  bounds.push_back(static_cast<InstrId>(n));
  const size_t ranges = bounds.size() - 1;
  std::vector<RangeFacts> facts(ranges);
  ParallelFor(ranges, [&](size_t r) {
    RangeFacts& f = facts[r];
    f.shape_use_counts.assign(shapes.size(), 0);
    for (InstrId i = bounds[r]; i < bounds[r + 1]; ++i) {
      const Instruction& instr = instructions[i];
      operand_ranges[i] = {instr.operands_begin, instr.operand_count};
      if (instr.shape < f.shape_use_counts.size()) ++f.shape_use_counts[instr.shape];
      if (!callees(i).empty()) f.callers.push_back(i);
      if (instr.opcode == Opcode::kConstant) f.constants.push_back(i);
      if (instr.opcode == Opcode::kParameter && instr.parameter_number() >= 0) {
        f.parameters.push_back({i, instr.parameter_number()});
      }
    }
  }, ranges);
  std::vector<InstrId> callers_in_order;
  std::vector<NumberedParameter> numbered_parameters;
  shape_use_counts_.assign(shapes.size(), 0);
  constants_.clear();
  for (RangeFacts& f : facts) {
    callers_in_order.insert(callers_in_order.end(), f.callers.begin(), f.callers.end());
    constants_.insert(constants_.end(), f.constants.begin(), f.constants.end());
    numbered_parameters.insert(numbered_parameters.end(), f.parameters.begin(), f.parameters.end());
    for (size_t s = 0; s < shape_use_counts_.size(); ++s) {
      shape_use_counts_[s] += f.shape_use_counts[s];
    }
  }
  FreeStorage(facts);

  // Users: each distinct user once per operand instruction. Operands lie
  // in their user's computation, so each range has rows of its own; a
  // module where one does not is indexed as one range.
  const auto uses_in = [&](const std::vector<InstrId>& user_bounds) {
    return [&, user_bounds](size_t r, auto emit) {
      for (InstrId user = user_bounds[r]; user < user_bounds[r + 1]; ++user) {
        const OperandRange range = operand_ranges[user];
        for (uint32_t k = range.begin; k < range.begin + range.count; ++k) {
          const InstrId op = operand_pool[k];
          if (op < n) emit(op, user);
        }
      }
    };
  };
  if (!BuildDistinctCsr(bounds, uses_in(bounds), &user_offsets_, &user_pool_)) {
    const std::vector<InstrId> whole = {0, static_cast<InstrId>(n)};
    BuildDistinctCsr(whole, uses_in(whole), &user_offsets_, &user_pool_);
  }
  operand_ranges.reset();

  // Callers, and the fusion flag of fusion bodies.
  for (Computation& c : computations) c.is_fusion = false;
  for (InstrId caller : callers_in_order) {
    if (instructions[caller].opcode != Opcode::kFusion) continue;
    for (const Callee& callee : callees(caller)) {
      if (callee.computation < computations.size()) {
        computations[callee.computation].is_fusion = true;
      }
    }
  }
  BuildDistinctCsr(
      {0, static_cast<uint32_t>(computations.size())},
      [&](size_t, auto emit) {
        for (InstrId caller : callers_in_order) {
          for (const Callee& callee : callees(caller)) {
            if (callee.computation < computations.size()) emit(callee.computation, caller);
          }
        }
      },
      &caller_offsets_, &caller_pool_);

  // Parameters by number; holes stay kNoId (the verifier reports them).
  // numbered_parameters is sorted, so a computation's are a subrange.
  // Computations as parsed lie one after another in id order: each subrange
  // is then found by walking on from the last one, the others by binary
  // search.
  std::vector<absl::Span<const NumberedParameter>> parameters_of(computations.size());
  {
    const NumberedParameter* const all = numbered_parameters.data();
    const NumberedParameter* const all_end = all + numbered_parameters.size();
    const auto id_below = [](const NumberedParameter& p, InstrId id) { return p.id < id; };
    const NumberedParameter* next = all;  // the parameters before it have ids below next_id
    InstrId next_id = 0;
    for (CompId c = 0; c < computations.size(); ++c) {
      const InstrId begin_id = computations[c].first_instruction;
      const InstrId end_id = begin_id + computations[c].instruction_count;
      const NumberedParameter* first;
      const NumberedParameter* last;
      if (begin_id >= next_id) {
        first = next;
        while (first != all_end && first->id < begin_id) ++first;
        last = first;
        while (last != all_end && last->id < end_id) ++last;
        next = last;
        next_id = std::max(begin_id, end_id);  // end_id may have wrapped
      } else {
        first = std::lower_bound(all, all_end, begin_id, id_below);
        last = std::lower_bound(first, all_end, end_id, id_below);
      }
      parameters_of[c] = absl::MakeConstSpan(first, static_cast<size_t>(last - first));
    }
  }
  parameter_offsets_.assign(computations.size() + 1, 0);
  for (CompId c = 0; c < computations.size(); ++c) {
    int64_t count = 0;
    for (const NumberedParameter& p : parameters_of[c]) count = std::max(count, p.number + 1);
    // Bound the table by the instruction count so a hostile parameter(10^18)
    // cannot make it huge; such numbers are left for the verifier.
    count = std::min<int64_t>(count, computations[c].instruction_count);
    parameter_offsets_[c + 1] = parameter_offsets_[c] + static_cast<uint32_t>(count);
  }
  parameter_pool_.assign(parameter_offsets_.back(), kNoId);
  for (CompId c = 0; c < computations.size(); ++c) {
    const uint32_t begin = parameter_offsets_[c];
    const uint32_t size = parameter_offsets_[c + 1] - begin;
    for (const NumberedParameter& p : parameters_of[c]) {
      if (p.number < static_cast<int64_t>(size)) {
        InstrId& slot = parameter_pool_[begin + static_cast<uint32_t>(p.number)];
        if (slot == kNoId) slot = p.id;
      }
    }
  }
}

std::string Module::EntrySignature() const {
  if (entry == kNoId) return "";
  std::string out = "(";
  const char* separator = "";
  for (InstrId id : parameters(entry)) {
    absl::StrAppend(&out, separator, id == kNoId ? "?" : shapes.ToString(instr(id).shape, false));
    separator = ", ";
  }
  const InstrId root = comp(entry).root;
  absl::StrAppend(&out, ")->", root == kNoId ? "?" : shapes.ToString(instr(root).shape, false));
  return out;
}

}  // namespace hlomem::hlo
