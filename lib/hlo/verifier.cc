#include "lib/hlo/verifier.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/parallel.h"
#include "lib/base/status_macros.h"

namespace hlomem::hlo {
namespace {

// Buffers reused across computations, so that verifying 10^5 small
// computations allocates nothing per computation.
struct Scratch {
  std::vector<InstrId> parameters;
  std::vector<bool> number_seen;
  // Per computation, its instructions that call computations (CSR): all the
  // call-graph walk needs to look at.
  std::vector<uint32_t> calling_offsets;
  std::vector<InstrId> calling;
};

// Finds the first parameter error of computation `c`, if any.
absl::Status ReportParameterError(const Module& m, CompId c) {
  absl::flat_hash_map<int64_t, InstrId> seen;
  int64_t count = 0;
  for (InstrId i : m.instructions_of(c)) {
    const Instruction& instr = m.instr(i);
    if (instr.opcode != Opcode::kParameter) continue;
    ++count;
    auto [it, inserted] = seen.emplace(instr.parameter_number(), i);
    if (!inserted) {
      return m.InstructionError(
          i, absl::StrCat("parameter number ", instr.parameter_number(),
                          " is already used by '", m.instr(it->second).name, "'"));
    }
  }
  for (InstrId i : m.instructions_of(c)) {
    const Instruction& instr = m.instr(i);
    if (instr.opcode == Opcode::kParameter && instr.parameter_number() >= count) {
      return m.InstructionError(
          i, absl::StrCat("parameter number ", instr.parameter_number(),
                          " is out of range: computation '", m.comp(c).name,
                          "' has ", count, " parameters"));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyParameters(const Module& m, CompId c, Scratch* scratch) {
  // Valid numbers are a permutation of 0..count-1, checked without a hash
  // map; anything else takes the reporting path for its exact message.
  std::vector<InstrId>& parameters = scratch->parameters;
  parameters.clear();
  for (InstrId i : m.instructions_of(c)) {
    if (m.instr(i).opcode == Opcode::kParameter) parameters.push_back(i);
  }
  std::vector<bool>& seen = scratch->number_seen;
  seen.assign(parameters.size(), false);
  for (InstrId i : parameters) {
    const int64_t number = m.instr(i).parameter_number();
    if (number < 0 || number >= static_cast<int64_t>(parameters.size()) ||
        seen[static_cast<size_t>(number)]) {
      return ReportParameterError(m, c);
    }
    seen[static_cast<size_t>(number)] = true;
  }
  return absl::OkStatus();
}

// True when every operand and control edge inside computation `c` comes
// from an earlier instruction, so text order is a topological order: the
// usual case, checked without building a graph.
bool EdgesPointBackward(const Module& m, CompId c) {
  const Computation& comp = m.comp(c);
  const InstrId base = comp.first_instruction;
  const auto backward = [&](absl::Span<const InstrId> sources, InstrId to) {
    for (InstrId from : sources) {
      if (from - base < comp.instruction_count && from >= to) return false;
    }
    return true;
  };
  for (InstrId i : m.instructions_of(c)) {
    if (!backward(m.operands(i), i) || !backward(m.control_predecessors(i), i)) return false;
  }
  return true;
}

// Kahn's algorithm over operand and control edges within one computation;
// iterative, so hostile input cannot exhaust the stack.
absl::Status VerifyAcyclic(const Module& m, CompId c) {
  if (EdgesPointBackward(m, c)) return absl::OkStatus();
  const Computation& comp = m.comp(c);
  const InstrId base = comp.first_instruction;
  std::vector<uint32_t> pending(comp.instruction_count, 0);
  std::vector<std::vector<uint32_t>> successors(comp.instruction_count);
  auto add_edge = [&](InstrId from, InstrId to) {
    if (from < base || from - base >= comp.instruction_count) return;
    successors[from - base].push_back(to - base);
    ++pending[to - base];
  };
  for (InstrId i : m.instructions_of(c)) {
    for (InstrId op : m.operands(i)) add_edge(op, i);
    for (InstrId pred : m.control_predecessors(i)) add_edge(pred, i);
  }
  std::vector<uint32_t> ready;
  for (uint32_t k = 0; k < comp.instruction_count; ++k) {
    if (pending[k] == 0) ready.push_back(k);
  }
  uint32_t visited = 0;
  while (!ready.empty()) {
    const uint32_t k = ready.back();
    ready.pop_back();
    ++visited;
    for (uint32_t s : successors[k]) {
      if (--pending[s] == 0) ready.push_back(s);
    }
  }
  if (visited == comp.instruction_count) return absl::OkStatus();
  for (uint32_t k = 0; k < comp.instruction_count; ++k) {
    if (pending[k] != 0) {
      return m.InstructionError(
          base + k, absl::StrCat("instruction '", m.instr(base + k).name,
                                 "' depends on itself through its operands"));
    }
  }
  return absl::OkStatus();
}

// Iterative DFS over the call graph with white/grey/black colouring. It
// visits only the instructions in `scratch.calling`: the others call nothing.
absl::Status VerifyCallGraph(const Module& m, const Scratch& scratch) {
  enum Color : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Color> color(m.computations.size(), kWhite);
  // Frame: computation and the next calling instruction (an index into
  // scratch.calling) to look at.
  struct Frame {
    CompId comp;
    uint32_t next;
  };
  const auto& offsets = scratch.calling_offsets;
  std::vector<Frame> stack;
  for (CompId root = 0; root < m.computations.size(); ++root) {
    if (color[root] != kWhite) continue;
    stack.assign(1, {root, offsets[root]});
    color[root] = kGrey;
    while (!stack.empty()) {
      const size_t top = stack.size() - 1;
      const uint32_t end = offsets[stack[top].comp + 1];
      CompId child = kNoId;
      while (stack[top].next < end && child == kNoId) {
        const InstrId i = scratch.calling[stack[top].next];
        for (const Callee& callee : m.callees(i)) {
          if (color[callee.computation] == kGrey) {
            return m.InstructionError(
                i, absl::StrCat("call cycle: computation '",
                                m.comp(callee.computation).name,
                                "' is called while it is being executed"));
          }
          if (color[callee.computation] == kWhite) {
            child = callee.computation;
            break;
          }
        }
        // Stay on this instruction until all its callees are finished.
        if (child == kNoId) ++stack[top].next;
      }
      if (child != kNoId) {
        color[child] = kGrey;
        stack.push_back({child, offsets[child]});
      } else {
        color[stack[top].comp] = kBlack;
        stack.pop_back();
      }
    }
  }
  return absl::OkStatus();
}

// Every size the engine adds up (allocations, the heap, the timeline,
// totals) is a sum of the instructions' buffer sizes. Bounding that sum
// keeps all of them, alignment padding included, clear of int64 overflow.
constexpr int64_t kMaxTotalBufferBytes = int64_t{1} << 62;

// The sum of `per_shape[shape]` over the instructions (saturating), from
// the module's shape use counts without walking the instructions; nullopt
// when the counts do not cover every instruction or a figure is negative.
std::optional<int64_t> SumOverInstructions(const Module& m, const std::vector<int64_t>& per_shape) {
  const absl::Span<const uint32_t> counts = m.shape_use_counts();
  if (counts.size() != per_shape.size()) return std::nullopt;
  int64_t sum = 0;
  uint64_t counted = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    if (per_shape[s] < 0) return std::nullopt;
    counted += counts[s];
    const std::optional<int64_t> term = CheckedMul(counts[s], per_shape[s]);
    sum = term ? SaturatingAdd(sum, *term) : std::numeric_limits<int64_t>::max();
  }
  if (counted != m.instructions.size()) return std::nullopt;
  return sum;
}

// True when no running sum of `per_shape[shape]` over the instructions can
// exceed `limit`: the figures are not negative and their total is within it.
bool SumStaysWithin(const Module& m, const std::vector<int64_t>& per_shape, int64_t limit) {
  const std::optional<int64_t> sum = SumOverInstructions(m, per_shape);
  return sum && *sum <= limit;
}

// The first instruction at which the running sum of `per_shape[shape]` over
// the instructions, in id order, exceeds `limit`; kNoId when it never does.
InstrId FirstInstructionOverLimit(const Module& m,
                                  const std::vector<int64_t>& per_shape,
                                  int64_t limit) {
  if (SumStaysWithin(m, per_shape, limit)) return kNoId;
  int64_t sum = 0;
  for (InstrId i = 0; i < m.instructions.size(); ++i) {
    sum = SaturatingAdd(sum, per_shape[m.instr(i).shape]);
    if (sum > limit) return i;
  }
  return kNoId;
}

// Bytes of each shape with all its subshapes; a tuple's elements were
// interned before it, so their ids are smaller.
std::vector<int64_t> BufferBytesPerShape(const Module& m) {
  std::vector<int64_t> shape_bytes(m.shapes.size());
  for (ShapeId s = 0; s < m.shapes.size(); ++s) {
    int64_t bytes = std::max(m.shapes.ByteSize(s), m.shapes.PaddedByteSize(s));
    for (ShapeId e : m.shapes.get(s).tuple_elements) {
      bytes = SaturatingAdd(bytes, shape_bytes[e]);
    }
    shape_bytes[s] = bytes;
  }
  return shape_bytes;
}

absl::Status TotalBufferBytesError(const Module& m, InstrId over) {
  return m.InstructionError(
      over, "the module's buffers add up to more than 4 EiB (2^62 bytes), "
            "more than 64-bit sizes can sum");
}

// The operand counts XLA allows an opcode: from `fewest` to `most`. Listed
// are only the opcodes whose arity XLA fixes, the same in every version
// whose dumps parse (send, recv, infeed and outfeed gained a token operand
// in 2018, so they are not); the others take any count. The engine reads
// operands by position (operand 0 of a bitcast, the update of a
// dynamic-update-slice, ...) and sizes buffers from them, so a count that
// does not fit describes a module XLA could not have built.
struct OperandCounts {
  uint32_t fewest = 0;
  uint32_t most = std::numeric_limits<uint32_t>::max();
};
constexpr OperandCounts Exactly(uint32_t n) { return {n, n}; }
constexpr OperandCounts AtLeast(uint32_t n) { return {n, std::numeric_limits<uint32_t>::max()}; }

constexpr OperandCounts AllowedOperandCounts(Opcode opcode) {
  switch (opcode) {
    case Opcode::kIota:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kRngGetAndUpdateState:
      return Exactly(0);
    // Unary elementwise.
    case Opcode::kAbs:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kReducePrecision:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    // One array in, one out.
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kCholesky:
    case Opcode::kFft:
    case Opcode::kGetDimensionSize:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kRngBitGenerator:
    case Opcode::kSlice:
    case Opcode::kTopK:
    case Opcode::kTranspose:
    // The second half of an asynchronous pair takes its first half.
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kRecvDone:
    case Opcode::kSendDone:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return Exactly(1);
    // Binary elementwise.
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kStochasticConvert:
    case Opcode::kSubtract:
    case Opcode::kXor:
    // Two arrays in.
    case Opcode::kAddDependency:
    case Opcode::kConvolution:
    case Opcode::kGather:
    case Opcode::kPad:
    case Opcode::kSetDimensionSize:
    case Opcode::kTriangularSolve:
      return Exactly(2);
    case Opcode::kBatchNormTraining:
    case Opcode::kClamp:
    case Opcode::kSelect:
    case Opcode::kSelectAndScatter:
    case Opcode::kTupleSelect:
      return Exactly(3);
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
      return Exactly(5);
    // Variadic, with a least. TPU dumps give async-update the operands of
    // the async-start's computation after the async-start.
    case Opcode::kAllGatherStart:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncUpdate:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kDynamicSlice:
    case Opcode::kSort:
      return AtLeast(1);
    case Opcode::kDot:  // sparse dots add metadata operands
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kRaggedAllToAll:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return AtLeast(2);
    case Opcode::kScatter:
      return AtLeast(3);
    default:
      return {};
  }
}

// Operand counts and operand references that analysis follows blindly.
absl::Status VerifyOperands(const Module& m, InstrId i) {
  const Instruction& instr = m.instr(i);
  const size_t count = m.operands(i).size();
  const OperandCounts allowed = AllowedOperandCounts(instr.opcode);
  if (count < allowed.fewest) {
    return m.InstructionError(i, absl::StrCat(OpcodeName(instr.opcode), " needs at least ",
                                              allowed.fewest, " operand(s), has ", count));
  }
  if (count > allowed.most) {
    return m.InstructionError(i, absl::StrCat(OpcodeName(instr.opcode), " takes exactly ",
                                              allowed.most, " operand(s), has ", count));
  }
  const Shape& shape = m.shapes.get(instr.shape);
  if (instr.opcode == Opcode::kTuple && shape.is_tuple() &&
      shape.tuple_elements.size() != count) {
    return m.InstructionError(i, absl::StrCat("tuple has ", count, " operands but its shape ",
                                              shape.tuple_elements.size(), " elements"));
  }
  for (const OutputOperandAlias& alias : m.output_operand_aliases(i)) {
    if (alias.operand < 0 || static_cast<size_t>(alias.operand) >= count ||
        !m.shapes.Subshape(m.instr(m.operands(i)[static_cast<size_t>(alias.operand)]).shape,
                           alias.operand_index) ||
        !m.shapes.Subshape(instr.shape, alias.output_index)) {
      return m.InstructionError(
          i, absl::StrCat("output_to_operand_aliasing names operand ", alias.operand, " at ",
                          ShapeIndexToString(alias.operand_index), " for output ",
                          ShapeIndexToString(alias.output_index), ", which do not exist"));
    }
  }
  return absl::OkStatus();
}

// Whether `a` and `b` nest tuples alike (arrays of any shape at the leaves).
bool SameTupleStructure(const hlo::ShapeTable& shapes, ShapeId a, ShapeId b) {
  if (a == b) return true;  // one shape, the usual case
  const Shape& x = shapes.get(a);
  const Shape& y = shapes.get(b);
  if (x.tuple_elements.size() != y.tuple_elements.size() || x.is_tuple() != y.is_tuple()) {
    return false;
  }
  for (size_t k = 0; k < x.tuple_elements.size(); ++k) {
    if (!SameTupleStructure(shapes, x.tuple_elements[k], y.tuple_elements[k])) return false;
  }
  return true;
}

// A caller whose output is its computation's root (a fusion, a call, a
// while's body, a conditional's branches): the analysis follows one into
// the other by output index, and a fusion's or call's operands into the
// parameters by number. `what` names the computation ("computation",
// "body", "branch").
absl::Status VerifyCalleeSignature(const Module& m, InstrId i, CompId callee,
                                   absl::string_view what, bool operands_are_parameters) {
  const absl::string_view opcode = OpcodeName(m.instr(i).opcode);
  if (operands_are_parameters) {
    const size_t operands = m.operands(i).size();
    const size_t parameters = m.parameters(callee).size();
    if (operands != parameters) {
      return m.InstructionError(
          i, absl::StrCat(opcode, " has ", operands, " operand(s), but its ", what, " '",
                          m.comp(callee).name, "' has ", parameters, " parameter(s)"));
    }
  }
  const InstrId root = m.comp(callee).root;
  if (root != kNoId && !SameTupleStructure(m.shapes, m.instr(i).shape, m.instr(root).shape)) {
    return m.InstructionError(
        i, absl::StrCat(opcode, "'s shape ", m.shapes.ToString(m.instr(i).shape, false),
                        " does not nest like the root of its ", what, " '", m.comp(callee).name,
                        "', ", m.shapes.ToString(m.instr(root).shape, false)));
  }
  return absl::OkStatus();
}

absl::Status VerifyInstruction(const Module& m, InstrId i) {
  HLOMEM_RETURN_IF_ERROR(VerifyOperands(m, i));
  const Instruction& instr = m.instr(i);
  const auto needs = [&](CallRole role, absl::string_view attribute) -> absl::Status {
    if (m.callee(i, role) == kNoId) {
      return m.InstructionError(i, absl::StrCat(OpcodeName(instr.opcode), " needs ",
                                                attribute, "="));
    }
    return absl::OkStatus();
  };
  switch (instr.opcode) {
    case Opcode::kGetTupleElement: {
      if (m.operands(i).size() != 1) {
        return m.InstructionError(i, "get-tuple-element takes exactly one operand");
      }
      const Shape& tuple = m.shape_of(m.operands(i)[0]);
      if (!tuple.is_tuple()) {
        return m.InstructionError(i, "get-tuple-element operand is not a tuple");
      }
      if (instr.tuple_index() < 0 ||
          instr.tuple_index() >= static_cast<int64_t>(tuple.tuple_elements.size())) {
        return m.InstructionError(
            i, absl::StrCat("tuple index ", instr.tuple_index(), " is out of range for a ",
                            tuple.tuple_elements.size(), "-element tuple"));
      }
      break;
    }
    case Opcode::kWhile:
      HLOMEM_RETURN_IF_ERROR(needs(CallRole::kBody, "body"));
      HLOMEM_RETURN_IF_ERROR(needs(CallRole::kCondition, "condition"));
      if (m.operands(i).size() != 1) {
        return m.InstructionError(i, "while takes exactly one operand");
      }
      HLOMEM_RETURN_IF_ERROR(
          VerifyCalleeSignature(m, i, m.callee(i, CallRole::kBody), "body", false));
      break;
    case Opcode::kConditional: {
      HLOMEM_RETURN_IF_ERROR(needs(CallRole::kBranch, "branch_computations"));
      // The branch index, then one operand per branch, each branch's one
      // parameter.
      size_t branches = 0;
      for (const Callee& callee : m.callees(i)) {
        if (callee.role != CallRole::kBranch) continue;
        ++branches;
        const size_t parameters = m.parameters(callee.computation).size();
        if (parameters != 1) {
          return m.InstructionError(
              i, absl::StrCat("conditional's branch '", m.comp(callee.computation).name, "' has ",
                              parameters, " parameter(s); a branch takes one"));
        }
        HLOMEM_RETURN_IF_ERROR(VerifyCalleeSignature(m, i, callee.computation, "branch", false));
      }
      if (m.operands(i).size() != branches + 1) {
        return m.InstructionError(
            i, absl::StrCat("conditional has ", m.operands(i).size(), " operand(s) for ", branches,
                            " branch(es); it takes the branch index and one per branch"));
      }
      break;
    }
    case Opcode::kFusion:
      HLOMEM_RETURN_IF_ERROR(needs(CallRole::kCalls, "calls"));
      HLOMEM_RETURN_IF_ERROR(
          VerifyCalleeSignature(m, i, m.callee(i, CallRole::kCalls), "computation", true));
      break;
    case Opcode::kScan:
      HLOMEM_RETURN_IF_ERROR(needs(CallRole::kToApply, "to_apply"));
      break;
    case Opcode::kCall: {
      CompId callee = m.callee(i, CallRole::kToApply);
      if (callee == kNoId) callee = m.callee(i, CallRole::kCalls);
      if (callee == kNoId) return m.InstructionError(i, "call needs to_apply=");
      HLOMEM_RETURN_IF_ERROR(VerifyCalleeSignature(m, i, callee, "computation", true));
      break;
    }
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyModule(const Module& m, int threads) {
  if (m.entry == kNoId || m.entry >= m.computations.size()) {
    return absl::InvalidArgumentError(absl::StrCat(m.path, ": error: module '", m.name,
                                                   "' has no entry computation"));
  }
  // One pass over each computation also collects what the later checks
  // read, so the instruction array (as large as the text of a big module)
  // is walked once. Ranges of computations are checked side by side; the
  // first error in computation order is the one reported.
  const std::vector<CompId> bounds =
      m.ComputationRanges(static_cast<size_t>(std::max(threads, 1)));
  const size_t ranges = bounds.size() - 1;
  std::vector<Scratch> checked(ranges);
  std::vector<absl::Status> errors(ranges);
  ParallelFor(ranges, [&](size_t r) {
    Scratch& scratch = checked[r];
    errors[r] = [&]() -> absl::Status {
      for (CompId c = bounds[r]; c < bounds[r + 1]; ++c) {
        HLOMEM_RETURN_IF_ERROR(VerifyParameters(m, c, &scratch));
        HLOMEM_RETURN_IF_ERROR(VerifyAcyclic(m, c));
        scratch.calling_offsets.push_back(static_cast<uint32_t>(scratch.calling.size()));
        for (InstrId i : m.instructions_of(c)) {
          HLOMEM_RETURN_IF_ERROR(VerifyInstruction(m, i));
          if (!m.callees(i).empty()) scratch.calling.push_back(i);
        }
      }
      return absl::OkStatus();
    }();
  }, ranges);
  for (const absl::Status& error : errors) HLOMEM_RETURN_IF_ERROR(error);
  Scratch& scratch = checked[0];
  for (size_t r = 1; r < ranges; ++r) {
    const auto shift = static_cast<uint32_t>(scratch.calling.size());
    for (uint32_t offset : checked[r].calling_offsets) {
      scratch.calling_offsets.push_back(offset + shift);
    }
    scratch.calling.insert(scratch.calling.end(), checked[r].calling.begin(),
                           checked[r].calling.end());
  }
  scratch.calling_offsets.push_back(static_cast<uint32_t>(scratch.calling.size()));
  HLOMEM_RETURN_IF_ERROR(VerifyCallGraph(m, scratch));
  // The buffer-byte sum is read from per-shape counts; only a module over
  // the limit is walked, to name the instruction where it went over.
  const InstrId over = FirstInstructionOverLimit(m, BufferBytesPerShape(m), kMaxTotalBufferBytes);
  if (over != kNoId) return TotalBufferBytesError(m, over);

  const auto entry_params = m.parameters(m.entry);
  auto check_parameter = [&](int64_t parameter, const ShapeIndex& index,
                             absl::string_view what) -> absl::Status {
    if (parameter < 0 || parameter >= static_cast<int64_t>(entry_params.size()) ||
        entry_params[static_cast<size_t>(parameter)] == kNoId) {
      return m.ComputationError(m.entry, absl::StrCat(what, " names parameter ", parameter,
                                                      ", which the entry does not have"));
    }
    const InstrId p = entry_params[static_cast<size_t>(parameter)];
    if (!m.shapes.Subshape(m.instr(p).shape, index)) {
      return m.ComputationError(
          m.entry, absl::StrCat(what, " names index ", ShapeIndexToString(index),
                                " of parameter ", parameter, ", which does not exist"));
    }
    return absl::OkStatus();
  };
  for (const InputOutputAlias& alias : m.input_output_aliases) {
    HLOMEM_RETURN_IF_ERROR(
        check_parameter(alias.parameter, alias.parameter_index, "input_output_alias"));
    const Computation& entry = m.comp(m.entry);
    if (!m.shapes.Subshape(m.instr(entry.root).shape, alias.output_index)) {
      return m.ComputationError(
          m.entry, absl::StrCat("input_output_alias names output index ",
                                ShapeIndexToString(alias.output_index),
                                ", which the entry's result does not have"));
    }
  }
  for (const BufferDonor& donor : m.buffer_donors) {
    HLOMEM_RETURN_IF_ERROR(
        check_parameter(donor.parameter, donor.parameter_index, "buffer_donor"));
  }
  return absl::OkStatus();
}

absl::Status VerifyElementCount(const Module& m, int64_t max_elements) {
  // A subshape costs one record plus one shape-index entry per level it is
  // nested: (((f32[]))) weighs 1 + 2 + 3 + 4. Counting levels keeps deep
  // tuples, whose indices grow with the depth, from multiplying memory.
  std::vector<int64_t> weight(m.shapes.size());
  for (ShapeId s = 0; s < m.shapes.size(); ++s) {
    int64_t w = 1;
    for (ShapeId e : m.shapes.get(s).tuple_elements) {
      w = SaturatingAdd(w, SaturatingAdd(weight[e], m.shapes.SubshapeCount(e)));
    }
    weight[s] = w;
  }
  const InstrId over = FirstInstructionOverLimit(m, weight, max_elements);
  if (over == kNoId) return absl::OkStatus();
  return m.InstructionError(
      over, absl::StrCat("the module has more than ", max_elements,
                         " elements (instructions and the tuple elements of their shapes, "
                         "counted once per nesting level); --max-elements raises the limit"));
}

}  // namespace hlomem::hlo
