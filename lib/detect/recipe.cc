#include "lib/detect/recipe.h"

#include "absl/container/flat_hash_map.h"

namespace hlomem::detect {
namespace {

using analysis::Dataflow;
using hlo::InstrId;
using hlo::Opcode;

// What one instruction of the chain computes, in terms of the producer's
// operands.
struct Expr {
  enum class State : uint8_t { kConstant, kSource, kOpaque };
  State state = State::kConstant;
  InstrId leaf = hlo::kNoId;  // the producer's operand read, for kSource
  bool expands = false;       // a broadcast adds elements to the source's
  bool broadcasts = false;
  bool converts = false;
  bool relayouts = false;
  bool slices = false;
  bool computes = false;
  bool normalizes = false;  // select or clamp: the range fix-up of index code

  static Expr Opaque() {
    Expr e;
    e.state = State::kOpaque;
    return e;
  }
};

// Combines the operands of one instruction: all of them must read the same
// source (or be constants) for the result to be a rematerialization.
Expr Merge(const std::vector<Expr>& parts) {
  Expr out;
  for (const Expr& p : parts) {
    if (p.state == Expr::State::kOpaque) return Expr::Opaque();
    if (p.state == Expr::State::kSource) {
      if (out.state == Expr::State::kSource && out.leaf != p.leaf) return Expr::Opaque();
      out.state = Expr::State::kSource;
      out.leaf = p.leaf;
    }
    out.expands |= p.expands;
    out.broadcasts |= p.broadcasts;
    out.converts |= p.converts;
    out.relayouts |= p.relayouts;
    out.slices |= p.slices;
    out.computes |= p.computes;
    out.normalizes |= p.normalizes;
  }
  return out;
}

// Elementwise ops that only massage values the way index code does (wrap
// negative indices, clamp into range), on integers. On floats the same ops
// are real computation (relu is a maximum).
bool IsIndexArithmetic(Opcode opcode, hlo::PrimitiveType type) {
  switch (opcode) {
    case Opcode::kClamp:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kSelect:
    case Opcode::kCompare:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kRemainder:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kNot:
      return hlo::IsIntegralType(type) || type == hlo::PrimitiveType::kPred;
    default:
      return false;
  }
}

bool SameMinorToMajor(const hlo::Shape& a, const hlo::Shape& b) {
  if (!a.layout || !b.layout) return !a.layout && !b.layout;
  return a.layout->minor_to_major == b.layout->minor_to_major;
}

class Tracer {
 public:
  Tracer(const hlo::Module& module, InstrId producer, std::vector<InstrId>* ops)
      : m_(module),
        producer_(producer),
        fused_(module.instr(producer).opcode == Opcode::kFusion),
        ops_(ops) {}

  Expr Trace(InstrId i) {
    auto it = memo_.find(i);
    if (it != memo_.end()) return it->second;
    Expr e = TraceUncached(i);
    memo_.emplace(i, e);
    return e;
  }

 private:
  // An operand of the producer: a scalar reads like a constant.
  Expr Leaf(InstrId operand) const {
    Expr e;
    const hlo::Instruction& in = m_.instr(operand);
    if (m_.shapes.ElementCount(in.shape) <= 1 || in.opcode == Opcode::kConstant) return e;
    if (!m_.shape_of(operand).is_array()) return Expr::Opaque();
    e.state = Expr::State::kSource;
    e.leaf = operand;
    return e;
  }

  std::vector<Expr> TraceOperands(InstrId i) {
    std::vector<Expr> parts;
    for (InstrId op : m_.operands(i)) parts.push_back(Trace(op));
    return parts;
  }

  Expr TraceUncached(InstrId i) {
    const hlo::Instruction& in = m_.instr(i);
    if (fused_ && in.opcode == Opcode::kParameter) {
      const auto operands = m_.operands(producer_);
      if (in.parameter_number() < 0 ||
          static_cast<size_t>(in.parameter_number()) >= operands.size()) {
        return Expr::Opaque();
      }
      return Leaf(operands[static_cast<size_t>(in.parameter_number())]);
    }
    if (!fused_ && i != producer_) return Leaf(i);

    const hlo::Shape& shape = m_.shape_of(i);
    Expr e;
    switch (in.opcode) {
      case Opcode::kConstant:
        return e;
      case Opcode::kBitcast:
      case Opcode::kReshape:
        return Trace(m_.operands(i)[0]);
      case Opcode::kBroadcast: {
        const InstrId operand = m_.operands(i)[0];
        e = Trace(operand);
        e.broadcasts = true;
        if (e.state == Expr::State::kSource) {
          e.expands |= m_.shapes.ElementCount(in.shape) > m_.shapes.ElementCount(m_.instr(operand).shape);
        }
        break;
      }
      case Opcode::kCopy:
      case Opcode::kTranspose: {
        const InstrId operand = m_.operands(i)[0];
        e = Trace(operand);
        e.relayouts |= in.opcode == Opcode::kTranspose || !SameMinorToMajor(shape, m_.shape_of(operand));
        break;
      }
      case Opcode::kSlice:
      case Opcode::kReverse:
      case Opcode::kPad:
      case Opcode::kConcatenate:
        e = Merge(TraceOperands(i));
        e.slices = true;
        break;
      case Opcode::kConvert: {
        // Only widening conversions keep every value; narrowing ones
        // (f32 -> fp8, a quantization) compute something new.
        const InstrId operand = m_.operands(i)[0];
        const hlo::PrimitiveType from = m_.shape_of(operand).type;
        if (from == shape.type) return Trace(operand);
        if (hlo::PrimitiveTypeBitWidth(shape.type) <= hlo::PrimitiveTypeBitWidth(from)) {
          return Expr::Opaque();
        }
        e = Trace(operand);
        e.converts = true;
        break;
      }
      default:
        if (!IsIndexArithmetic(in.opcode, shape.type)) return Expr::Opaque();
        e = Merge(TraceOperands(i));
        e.computes = true;
        e.normalizes |= in.opcode == Opcode::kSelect || in.opcode == Opcode::kClamp ||
                        in.opcode == Opcode::kMaximum || in.opcode == Opcode::kMinimum;
        break;
    }
    if (e.state == Expr::State::kSource) ops_->push_back(i);
    return e;
  }

  const hlo::Module& m_;
  InstrId producer_;
  bool fused_;
  std::vector<InstrId>* ops_;
  absl::flat_hash_map<InstrId, Expr> memo_;
};

}  // namespace

Recipe RecipeOf(const Dataflow& dataflow, analysis::ValueId value) {
  const hlo::Module& m = dataflow.module();
  const analysis::HloValue& v = dataflow.value(value);
  Recipe recipe;
  recipe.producer = v.instruction;
  if (!dataflow.defined_at_top(value) || !m.shapes.get(v.shape).is_array()) return recipe;
  InstrId root = v.instruction;
  if (m.instr(root).opcode == Opcode::kFusion) {
    const hlo::CompId fused = m.callee(root, hlo::CallRole::kCalls);
    if (fused == hlo::kNoId) return recipe;
    root = m.comp(fused).root;
  }
  std::vector<InstrId> ops;
  Tracer tracer(m, v.instruction, &ops);
  const Expr e = tracer.Trace(root);
  // Integer arithmetic without a select or clamp is real computation
  // (w + 1), not an index fix-up (select(idx < 0, idx + n, idx)).
  if (e.state == Expr::State::kOpaque || (e.computes && !e.normalizes)) return recipe;
  // Post-order pushes operands first; the recipe lists the root first.
  recipe.ops.assign(ops.rbegin(), ops.rend());
  recipe.converts = e.converts;
  recipe.relayouts = e.relayouts;
  recipe.slices = e.slices;
  recipe.computes = e.computes;
  const int64_t elements = m.shapes.ElementCount(v.shape);
  if (e.state == Expr::State::kConstant) {
    if (e.broadcasts && elements > 1) recipe.kind = Recipe::Kind::kBroadcast;
    return recipe;
  }
  const analysis::ValueId source = dataflow.top_value(e.leaf);
  if (source == analysis::kNone) return recipe;
  recipe.source = source;
  recipe.source_operand = e.leaf;
  recipe.source_elements = m.shapes.ElementCount(m.instr(e.leaf).shape);
  recipe.source_type = m.shape_of(e.leaf).type;
  // A broadcast of an operand at least this many times smaller is one that
  // could have been recomputed on the fly.
  constexpr int64_t kBroadcastRatio = 8;
  if (e.expands) {
    if (elements >= kBroadcastRatio * recipe.source_elements) recipe.kind = Recipe::Kind::kBroadcast;
  } else if (elements == recipe.source_elements) {
    recipe.kind = Recipe::Kind::kRematerialization;
  }
  return recipe;
}

int64_t WideningBytes(const hlo::ShapeTable& shapes, const Recipe& recipe, hlo::ShapeId shape) {
  if (recipe.kind != Recipe::Kind::kRematerialization || !recipe.converts) return 0;
  const int wide = hlo::PrimitiveTypeBitWidth(shapes.get(shape).type);
  const int narrow = hlo::PrimitiveTypeBitWidth(recipe.source_type);
  if (narrow <= 0 || wide <= narrow) return 0;
  const int64_t size = shapes.ByteSize(shape);
  // Exact for whole bytes: size * (wide - narrow) / wide, without overflow.
  return size / wide * (wide - narrow) + size % wide * (wide - narrow) / wide;
}

}  // namespace hlomem::detect
