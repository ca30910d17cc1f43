// missed-donation: entry parameters that are not donated although an output
// of the same shape and layout is their new value: written by the op that
// reads the parameter last, an op that could write over it (the SGD update
// `p - lr * g`, a loop carry initialised by copying the parameter). With
// donate_argnums XLA writes the output over the parameter. Outputs merely
// computed after a same-shape parameter died (gradients of parameters) are
// not reported: the caller usually still needs that parameter. Also donations XLA could
// not use (a buffer_donor left without an output to alias; jax drops such
// donations itself, with "Some donated buffers were not usable", so they
// appear in dumps from other frontends).
//
// Bytes: for missed donations, the sizes of the outputs that could reuse a
// parameter, summed over the module (one finding): the output allocations
// donation removes. For an unused donation, the donated parameter's size.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::NodeId;
using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "missed-donation";

struct Candidate {
  InstrId parameter;
  ValueId value;
  int64_t last_use = -1;  // latest step reading it
  bool taken = false;
};

struct Output {
  ValueId value;          // the value at the root
  int64_t start = 0;      // first step its buffer is written
  InstrId writer = hlo::kNoId;  // the instruction writing it first
};

int64_t LastUse(const Context& ctx, ValueId v) {
  int64_t last = -1;
  for (const analysis::HloUse& use : ctx.dataflow().uses(v)) {
    last = std::max(last, ctx.assignment().schedule().time_of(use.user));
  }
  return last;
}

// Whether `writer` could write its output over the parameter it reads last:
// a copy, or an op XLA lets share its operand's buffer (elementwise, sort,
// in-place updates).
bool CanOverwrite(const Context& ctx, const Candidate& c, InstrId writer, ValueId output) {
  const analysis::Dataflow& df = ctx.dataflow();
  if (ctx.module().instr(writer).opcode == Opcode::kCopy) return true;
  for (InstrId operand : ctx.module().operands(writer)) {
    const NodeId node = df.node_begin(operand);
    if (df.value_at(node) != c.value) continue;
    const analysis::HloValue& out = df.value(output);
    if (analysis::CanShareOperandBufferWithUser(df, node, writer, out.node)) return true;
  }
  return false;
}

// The top-level argument a flattened parameter name belongs to:
// "params['w1']" -> "params".
std::string ArgumentName(const std::string& op_name) {
  const size_t end = op_name.find_first_of("[.");
  return op_name.substr(0, end);
}

// The line that calls the jitted function the module is named after
// ("jit_train_step": the caller of a frame of train_step), from the
// StackFrames tables; nullopt without them or such a frame. Donation is
// decided there, not on the lines inside the step.
std::optional<hlo::StackEntry> JitCallSite(const hlo::Module& m) {
  absl::string_view function = m.name;
  if (!absl::ConsumePrefix(&function, "jit_") || function.empty()) return std::nullopt;
  const int64_t frames = static_cast<int64_t>(m.stack_frames.frames.size());
  for (int64_t frame = 1; frame <= frames; ++frame) {
    const std::optional<hlo::StackEntry> entry = m.FrameOf(frame);
    if (!entry || entry->function != function) continue;
    const std::optional<hlo::StackEntry> caller = m.FrameOf(m.ParentFrame(frame));
    if (caller && caller->function != function && !caller->library && !caller->file.empty()) {
      return caller;
    }
  }
  return std::nullopt;
}

void DetectUnusedDonations(const Context& ctx, std::vector<Finding>* findings) {
  const hlo::Module& m = ctx.module();
  for (const hlo::BufferDonor& donor : m.buffer_donors) {
    const bool aliased = ctx.assignment().parameter_aliased(donor.parameter, donor.parameter_index);
    const auto params = m.parameters(m.entry);
    if (aliased || donor.parameter < 0 || static_cast<size_t>(donor.parameter) >= params.size()) {
      continue;
    }
    const InstrId p = params[static_cast<size_t>(donor.parameter)];
    const NodeId node = p == hlo::kNoId ? analysis::kNone
                                        : ctx.dataflow().NodeAt(p, donor.parameter_index);
    if (node == analysis::kNone || ctx.dataflow().value_at(node) == analysis::kNone) continue;
    const ValueId v = ctx.dataflow().value_at(node);
    Finding f = ctx.MakeFinding(kName, ctx.dataflow().value(v).size, p);
    f.severity = std::max(f.severity, Severity::kWarning);
    f.message = absl::StrCat(ctx.DescribeSource(v), " at index ",
                             hlo::ShapeIndexToString(donor.parameter_index),
                             " is donated but no output has its shape and layout, so XLA could "
                             "not reuse it: the donation saves nothing.");
    f.suggestion =
        "Donate only arguments that have an output of the same shape, dtype and layout (the "
        "updated state); drop this one from donate_argnums, or return its update so the "
        "donation is usable.";
    f.instructions = {std::string(m.instr(p).name)};
    findings->push_back(std::move(f));
  }
}

}  // namespace

void DetectMissedDonations(const DetectorInput& input, int64_t /*min_bytes*/,
                           std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  const analysis::Dataflow& df = ctx.dataflow();
  DetectUnusedDonations(ctx, findings);

  std::vector<Candidate> candidates;
  for (InstrId p : m.parameters(m.entry)) {
    if (p == hlo::kNoId) continue;
    for (NodeId n = df.node_begin(p); n < df.node_begin(p) + df.node_count(p); ++n) {
      const ValueId v = df.value_at(n);
      if (v == analysis::kNone || df.value(v).instruction != p || df.IsTupleNode(n)) continue;
      const analysis::Allocation* a = ctx.AllocationOf(v);
      if (a == nullptr || !a->is_parameter || a->aliased_with_output) continue;
      candidates.push_back({p, v, LastUse(ctx, v)});
    }
  }

  std::vector<Output> outputs;
  std::vector<analysis::BufferId> seen;
  const InstrId root = m.comp(m.entry).root;
  for (NodeId n = df.node_begin(root); n < df.node_begin(root) + df.node_count(root); ++n) {
    const ValueId v = df.value_at(n);
    if (v == analysis::kNone || df.IsTupleNode(n) || !ctx.IsMaterialized(v)) continue;
    const analysis::BufferId b = df.buffer_of(v);
    if (std::find(seen.begin(), seen.end(), b) != seen.end()) continue;
    seen.push_back(b);
    Output out{v, -1, hlo::kNoId};
    for (ValueId w : df.buffer_values(b)) {
      const analysis::LiveRange& r = ctx.assignment().live_range(w);
      if (!r.valid() || (out.start >= 0 && r.start >= out.start)) continue;
      out.start = r.start;
      out.writer = df.value(w).instruction;
    }
    if (out.start >= 0) outputs.push_back(out);
  }

  int64_t bytes = 0;
  std::vector<std::string> pairs;
  std::vector<std::string> names;
  std::vector<std::string> arguments;
  InstrId anchor = hlo::kNoId;
  for (const Output& out : outputs) {
    const analysis::HloValue& ov = df.value(out.value);
    Candidate* best = nullptr;  // parameters come in order: p before g in p - lr * g
    for (Candidate& c : candidates) {
      if (c.taken || df.value(c.value).shape != ov.shape) continue;
      // The output must be the parameter's new value: written by the op
      // that reads the parameter last, able to write over it.
      if (c.last_use != out.start || !CanOverwrite(ctx, c, out.writer, out.value)) continue;
      best = &c;
      break;
    }
    if (best == nullptr) continue;
    best->taken = true;
    bytes += ov.size;
    if (anchor == hlo::kNoId) anchor = best->parameter;
    const std::string op_name = OpName(m, best->parameter);
    if (!op_name.empty() &&
        std::find(arguments.begin(), arguments.end(), ArgumentName(op_name)) == arguments.end()) {
      arguments.push_back(ArgumentName(op_name));
    }
    constexpr size_t kListed = 8;
    if (pairs.size() < kListed) {
      pairs.push_back(absl::StrCat(ctx.DescribeSource(best->value), " -> the output ",
                                   m.instr(out.writer).name, " writes"));
    }
    names.push_back(std::string(m.instr(best->parameter).name));
    names.push_back(std::string(m.instr(out.writer).name));
  }
  if (bytes == 0) return;
  const size_t count = names.size() / 2;
  Finding f = ctx.MakeFinding(kName, bytes, anchor);
  // Whether the caller still needs the inputs is not in the dump.
  f.severity = std::min(f.severity, Severity::kWarning);
  // Donation is the jitted function's call's choice: point there.
  const std::optional<hlo::StackEntry> call = JitCallSite(m);
  if (call) {
    f.source_file = std::string(call->file);
    f.source_line = call->line;
  }
  absl::string_view function = m.name;
  absl::ConsumePrefix(&function, "jit_");
  f.summary = absl::StrCat(
      HumanBytes(bytes), ": ", count, count == 1 ? " input" : " inputs", " of ", function,
      " not donated", arguments.empty() ? "" : absl::StrCat(" (", absl::StrJoin(arguments, ", "), ")"),
      ", so ", count == 1 ? "its output is" : "their outputs are", " allocated beside ",
      count == 1 ? "it" : "them");
  f.message = absl::StrCat(
      call ? absl::StrCat(function, " is called at ", call->file, ":", call->line, ". ") : "",
      count, count == 1 ? " entry parameter is" : " entry parameters are",
      " not donated though an output of the same shape and layout is computed from it by its "
      "last reader, so both are allocated (", HumanBytes(bytes), "): ", absl::StrJoin(pairs, "; "),
      count > pairs.size() ? absl::StrCat("; and ", count - pairs.size(), " more") : "", ".");
  f.suggestion = absl::StrCat(
      "Donate the inputs the step replaces: jax.jit(f, donate_argnums=...)",
      arguments.empty() ? ""
                        : absl::StrCat(" or donate_argnames=(", absl::StrJoin(arguments, ", ",
                                       [](std::string* out, const std::string& a) {
                                         absl::StrAppend(out, "'", a, "'");
                                       }),
                                       ")"),
      "; the caller must not use the donated arrays afterwards. Outputs then reuse the "
      "parameters' memory (input_output_alias).");
  f.instructions = std::move(names);
  findings->push_back(std::move(f));
}

}  // namespace hlomem::detect
