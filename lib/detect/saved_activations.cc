// saved-activations: values a train step computes in its forward pass and
// keeps in memory until its backward pass reads them (the residuals of
// jax.grad / jax.vjp). JAX names the forward instructions `jvp(...)` and the
// backward ones `transpose(jvp(...))` in their op_name; a value defined by a
// forward instruction and read by a backward one is a saved activation.
//
// Layers are the repeats of the forward pass: saved values with the same
// op_name (digits ignored, so `layers_3/...` matches `layers_4/...`) and the
// same source line, as an unrolled loop over layers or repeated calls of one
// block function produce them. The layer boundaries are the occurrences of
// one repeated forward op; of the candidates, the one that leaves the least
// in memory under remat is taken (the bytes crossing from one layer into the
// next, usually the residual stream, plus one layer's residuals): where
// jax.checkpoint around each layer would cut.
//
// Bytes: what jax.checkpoint on each layer (nothing saveable but the layer's
// input) would remove from the peak. Without remat the saved activations of
// every layer are live at the start of the backward pass; with it, only each
// layer's input (the value crossing the boundary into the next layer) is,
// plus the residuals of the one layer being recomputed in the backward pass:
//   saved in layers - layer inputs kept - the largest layer's residuals,
// at most the saved activations live at the peak.
//
// Layers run by jax.lax.scan are one forward while loop (op_name
// `jvp(...)/while`, known_trip_count n) whose outputs stack each
// iteration's residuals for the backward loop: a stacked output read by a
// backward instruction holds the saved activations of n layers. With the
// scan body in jax.checkpoint only the carry is stacked: the bytes are the
// stacks less those of the carry's shape, less one iteration's residuals
// (recomputed in the backward loop).
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/base/bytes.h"
#include "lib/detect/context.h"
#include "lib/detect/detector_list.h"

namespace hlomem::detect {
namespace {

using analysis::ValueId;
using hlo::InstrId;
using hlo::Opcode;

constexpr absl::string_view kName = "saved-activations";

enum class Phase : int8_t { kUnknown = -1, kOther, kForward, kBackward };

bool IsPlumbing(Opcode opcode) {
  return opcode == Opcode::kCall || opcode == Opcode::kTuple ||
         opcode == Opcode::kGetTupleElement || opcode == Opcode::kBitcast;
}

// The op_name with runs of digits replaced by '#': the path of a layer
// modulo its index.
std::string Normalized(absl::string_view op_name) {
  std::string out;
  out.reserve(op_name.size());
  for (size_t k = 0; k < op_name.size(); ++k) {
    if (op_name[k] >= '0' && op_name[k] <= '9') {
      if (out.empty() || out.back() != '#') out.push_back('#');
    } else {
      out.push_back(op_name[k]);
    }
  }
  return out;
}

// The last component of an op_name path: the JAX primitive ("dot_general").
absl::string_view Primitive(absl::string_view op_name) {
  const size_t slash = op_name.rfind('/');
  return slash == absl::string_view::npos ? op_name : op_name.substr(slash + 1);
}

struct Saved {
  ValueId value;
  InstrId producer;
  int64_t key;        // index into Analysis::keys
  int64_t layer = -1;  // -1: outside the repeated layers
  bool boundary = false;
  bool at_peak = false;
  bool dot_saveable = false;  // kept by dots_with_no_batch_dims_saveable
};

struct Key {
  std::string op_name;  // normalized
  std::string file;
  int64_t line = 0;
  InstrId first = hlo::kNoId;  // first producer, the group's anchor
};

class Analysis {
 public:
  explicit Analysis(const hlo::Module& m) : m_(m) {
    phase_.assign(m_.instructions.size(), Phase::kUnknown);
    key_of_.assign(m_.instructions.size(), -1);
  }

  Phase PhaseOf(InstrId i) {
    if (phase_[i] != Phase::kUnknown) return phase_[i];
    const std::string op_name = OpName(m_, i);
    Phase p = Phase::kOther;
    if (absl::StrContains(op_name, "transpose(")) {
      p = Phase::kBackward;
    } else if (absl::StrContains(op_name, "jvp(")) {
      p = Phase::kForward;
    }
    // jax.checkpoint's recomputation: ".../checkpoint/rematted_computation/...".
    if (absl::StrContains(op_name, "rematted_computation") ||
        absl::StrContains(op_name, "/checkpoint/")) {
      uses_remat_ = true;
    }
    return phase_[i] = p;
  }

  int64_t KeyOf(InstrId i) {
    if (key_of_[i] >= 0) return key_of_[i];
    Provenance p = ProvenanceOf(m_, i);
    std::string id = absl::StrCat(Normalized(p.op_name), "@", p.file, ":", p.line);
    auto [it, inserted] = key_index_.try_emplace(id, static_cast<int64_t>(keys_.size()));
    if (inserted) keys_.push_back({Normalized(p.op_name), p.file, p.line, i});
    return key_of_[i] = it->second;
  }

  bool uses_remat() const { return uses_remat_; }
  const Key& key(int64_t k) const { return keys_[static_cast<size_t>(k)]; }

 private:
  const hlo::Module& m_;
  std::vector<Phase> phase_;
  std::vector<int64_t> key_of_;
  std::vector<Key> keys_;
  absl::flat_hash_map<std::string, int64_t> key_index_;
  bool uses_remat_ = false;
};

// A value the program writes into memory: a temp, an output, or a donated
// parameter's buffer that XLA reuses for it (Context::IsMaterialized leaves
// parameter allocations out; with donate_argnums XLA puts activations in
// them once the parameter is copied or dead).
bool InProgramMemory(const Context& ctx, ValueId v) {
  const analysis::Allocation* a = ctx.AllocationOf(v);
  return a != nullptr && !a->is_constant && !a->is_thread_local &&
         (!a->is_parameter || a->aliased_with_output);
}

// True when every operand of `i` is an entry parameter or a constant: ops
// on weights alone (transposed copies of parameters) that the scheduler may
// hoist out of their layer.
bool OnParametersOnly(const hlo::Module& m, InstrId i) {
  for (InstrId o : m.operands(i)) {
    const Opcode op = m.instr(o).opcode;
    if (op != Opcode::kParameter && op != Opcode::kConstant) return false;
  }
  return true;
}

// A matmul without batch dimensions (x @ w, not an attention einsum): what
// jax.checkpoint_policies.dots_with_no_batch_dims_saveable keeps.
bool IsDotWithoutBatchDims(const hlo::Module& m, InstrId i) {
  // A checkpoint policy's saved dot: reduce_precision(dot) in the forward pass.
  if (Primitive(OpName(m, i)) == "reduce_precision" && !m.operands(i).empty()) {
    return IsDotWithoutBatchDims(m, m.operands(i)[0]);
  }
  if (Primitive(OpName(m, i)) != "dot_general") return false;
  InstrId dot = i;
  if (m.instr(i).opcode == Opcode::kFusion) {
    const hlo::CompId fused = m.callee(i, hlo::CallRole::kCalls);
    if (fused == hlo::kNoId) return false;
    dot = hlo::kNoId;
    for (InstrId j : m.instructions_of(fused)) {
      if (m.instr(j).opcode == Opcode::kDot) dot = j;
    }
    if (dot == hlo::kNoId) return false;
  }
  if (m.instr(dot).opcode != Opcode::kDot) return false;
  const std::optional<absl::string_view> batch = m.attribute(dot, "lhs_batch_dims");
  return !batch.has_value() || *batch == "{}";
}

// The estimate for one choice of layer boundaries.
struct Cut {
  std::vector<int64_t> layer_of_time;  // schedule time -> layer (-1 before the first)
  int64_t kept = 0;                    // the layer inputs jax.checkpoint keeps
  std::vector<ValueId> boundary;       // the values crossing into a later layer
  // Per saved value: its layer (-1 outside the repeats), whether it crosses.
  std::vector<int64_t> layer;
  std::vector<bool> is_boundary;
  int64_t count = 0;              // saved values in the layers
  int64_t in_layers = 0;          // their bytes
  int64_t in_layers_at_peak = 0;  // those live at the peak
  int64_t largest = 0;            // the most residuals of one layer (not crossing)
  int64_t dots = 0;               // residuals dots_with_no_batch_dims_saveable keeps
  int64_t largest_policy = 0;     // the most residuals of one layer that policy recomputes
};

// known_trip_count {"n":"8"} of a while's backend_config, or 0.
int64_t TripCount(const hlo::Module& m, InstrId w) {
  const std::optional<absl::string_view> config = m.attribute(w, "backend_config");
  if (!config.has_value()) return 0;
  const size_t at = config->find("\"known_trip_count\"");
  if (at == absl::string_view::npos) return 0;
  const size_t n = config->find("\"n\":\"", at);
  if (n == absl::string_view::npos) return 0;
  int64_t trips = 0;
  for (size_t k = n + 5; k < config->size() && absl::ascii_isdigit((*config)[k]); ++k) {
    trips = trips * 10 + ((*config)[k] - '0');
  }
  return trips;
}

// One finding per forward scan (while loop) stacking residuals for the
// backward pass.
void DetectScanResiduals(const Context& ctx, Analysis* a, int64_t min_bytes,
                         std::vector<Finding>* findings) {
  const hlo::Module& m = ctx.module();
  const analysis::Dataflow& df = ctx.dataflow();
  for (InstrId w : ctx.assignment().schedule().sequence) {
    if (m.instr(w).opcode != Opcode::kWhile || a->PhaseOf(w) != Phase::kForward) continue;
    const int64_t trips = TripCount(m, w);
    if (trips < 2) continue;
    // The loop's array elements: stacked (leading dimension `trips`) or not.
    std::vector<ValueId> stacked;
    std::vector<std::vector<int64_t>> carry_dims;
    for (analysis::NodeId n = df.node_begin(w); n < df.node_begin(w) + df.node_count(w); ++n) {
      const ValueId v = df.value_at(n);
      if (v == analysis::kNone || df.IsTupleNode(n)) continue;
      const hlo::Shape& shape = m.shapes.get(df.NodeShape(n));
      if (!shape.is_array()) continue;
      if (shape.dims.empty() || shape.dims[0] != trips) {
        carry_dims.push_back(shape.dims);
        continue;
      }
      // Stacked weights the loop only reads (scan's xs) are parameters.
      const InstrId def = df.value(v).instruction;
      if (m.instr(def).opcode == Opcode::kParameter && m.instr(def).parent == m.entry) continue;
      if (!InProgramMemory(ctx, v)) continue;
      bool read_backward = false;
      for (const analysis::HloUse& use : df.uses(v)) {
        read_backward |= !IsPlumbing(m.instr(use.user).opcode) &&
                         a->PhaseOf(use.user) == Phase::kBackward;
      }
      if (read_backward && std::find(stacked.begin(), stacked.end(), v) == stacked.end()) {
        stacked.push_back(v);
      }
    }
    // A stack of the carry's shape is the carry per iteration, which
    // jax.checkpoint on the body keeps.
    int64_t total = 0, carries = 0;
    std::vector<std::string> described;
    for (ValueId v : stacked) {
      const hlo::Shape& shape = m.shapes.get(df.value(v).shape);
      const std::vector<int64_t> slice(shape.dims.begin() + 1, shape.dims.end());
      const bool carry =
          std::find(carry_dims.begin(), carry_dims.end(), slice) != carry_dims.end();
      total += df.value(v).size;
      if (carry) carries += df.value(v).size;
      described.push_back(absl::StrCat(m.shapes.ToString(df.value(v).shape, false), " (",
                                       HumanBytes(df.value(v).size), carry ? ", the carry" : "",
                                       ")"));
    }
    const int64_t residuals = total - carries;
    const int64_t bytes = std::max<int64_t>(0, residuals - residuals / trips);
    if (bytes <= 0 || bytes < min_bytes) continue;
    Finding f = ctx.MakeFinding(kName, bytes, w);
    f.message = absl::StrCat(
        "The jax.lax.scan ", m.instr(w).name, " (", trips,
        " iterations, e.g. one per layer) stacks ", stacked.size(),
        " arrays of activations from the forward pass (jvp) for the backward pass "
        "(transpose(jvp)), ",
        HumanBytes(total), " (", HumanBytes(total / trips),
        " per iteration): ", absl::StrJoin(described, ", "), ".");
    f.suggestion = absl::StrCat(
        "Wrap the scanned function in jax.checkpoint: jax.lax.scan(jax.checkpoint(body, "
        "policy=jax.checkpoint_policies.nothing_saveable), ...) stacks only the carry and "
        "recomputes each iteration's residuals in the backward loop, about ",
        HumanBytes(bytes),
        " less (the stacks less the carry's, less one iteration's residuals); "
        "policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable keeps the matmul "
        "outputs. Microbatching (gradient accumulation over k microbatches) divides the stacks "
        "by k: k = 2 saves about ",
        HumanBytes(total / 2), ".");
    f.instructions = {std::string(m.instr(w).name)};
    findings->push_back(std::move(f));
  }
}

}  // namespace

void DetectSavedActivations(const DetectorInput& input, int64_t min_bytes,
                            std::vector<Finding>* findings) {
  const Context ctx(input);
  const hlo::Module& m = ctx.module();
  const analysis::Dataflow& df = ctx.dataflow();
  const analysis::FlatSchedule& schedule = ctx.assignment().schedule();
  Analysis a(m);

  // The forward instructions in schedule order, and whether there is a
  // backward part at all.
  std::vector<InstrId> forward;
  bool has_backward = false;
  for (InstrId i : schedule.sequence) {
    const Phase p = a.PhaseOf(i);
    if (p == Phase::kForward && !IsPlumbing(m.instr(i).opcode)) forward.push_back(i);
    has_backward |= p == Phase::kBackward;
  }
  if (forward.empty() || !has_backward) return;
  DetectScanResiduals(ctx, &a, min_bytes, findings);

  // Saved activations: forward-defined array values in the program's own
  // memory that a backward instruction reads.
  std::vector<Saved> saved;
  for (ValueId v = 0; v < df.values().size(); ++v) {
    const analysis::HloValue& value = df.value(v);
    if (value.is_phi || value.live_out || !m.shapes.get(value.shape).is_array()) continue;
    if (!InProgramMemory(ctx, v) || a.PhaseOf(value.instruction) != Phase::kForward) continue;
    if (schedule.time_of(value.instruction) < 0) continue;
    bool read_backward = false;
    for (const analysis::HloUse& use : df.uses(v)) {
      if (!IsPlumbing(m.instr(use.user).opcode) && a.PhaseOf(use.user) == Phase::kBackward) {
        read_backward = true;
        break;
      }
    }
    if (!read_backward) continue;
    Saved s{v, value.instruction, a.KeyOf(value.instruction)};
    s.at_peak = ctx.LiveAtPeak(v);
    s.dot_saveable = IsDotWithoutBatchDims(m, value.instruction);
    saved.push_back(s);
  }
  if (saved.empty()) return;

  // How many layers: the largest repeat count c such that the saved values
  // whose group repeats a multiple of c times hold half the repeated bytes.
  std::map<int64_t, int64_t> saved_count;  // key -> values
  for (const Saved& s : saved) ++saved_count[s.key];
  std::vector<int64_t> count_of_saved;  // saved_count of each one's key
  count_of_saved.reserve(saved.size());
  int64_t repeated_bytes = 0;
  for (const Saved& s : saved) {
    count_of_saved.push_back(saved_count[s.key]);
    if (count_of_saved.back() >= 2) repeated_bytes += df.value(s.value).size;
  }
  int64_t layers = 1;
  std::map<int64_t, int64_t> covered_by;  // count -> bytes of the saved it divides
  for (const auto& [key, count] : saved_count) {
    if (count <= layers) continue;
    auto [it, inserted] = covered_by.try_emplace(count, 0);
    if (inserted) {
      for (size_t k = 0; k < saved.size(); ++k) {
        if (count_of_saved[k] % count == 0) it->second += df.value(saved[k].value).size;
      }
    }
    if (2 * it->second >= repeated_bytes) layers = count;
  }
  if (layers < 2) return;  // one block: checkpointing it recomputes all it saves

  // Occurrences of each forward op in schedule order.
  std::map<int64_t, std::vector<InstrId>> occurrences;
  for (InstrId i : forward) occurrences[a.KeyOf(i)].push_back(i);

  // The forward values a later layer may read, whatever the layers turn
  // out to be: each with its definer's step and the last step a forward op
  // reads it at. Layers only grow with time, so a value crosses into a
  // later layer exactly when its last such read does.
  struct Crossing {
    ValueId value;
    int64_t defined;
    int64_t last_read;
  };
  std::vector<Crossing> crossings;
  for (InstrId i : forward) {
    const int64_t defined = schedule.time_of(i);
    if (defined < 0) continue;
    for (analysis::NodeId n = df.node_begin(i); n < df.node_begin(i) + df.node_count(i); ++n) {
      const ValueId v = df.value_at(n);
      if (v == analysis::kNone || df.value(v).instruction != i || df.IsTupleNode(n) ||
          !InProgramMemory(ctx, v)) {
        continue;
      }
      int64_t last_read = -1;
      for (const analysis::HloUse& use : df.uses(v)) {
        const int64_t t = schedule.time_of(use.user);
        if (t < 0 || IsPlumbing(m.instr(use.user).opcode) ||
            a.PhaseOf(use.user) != Phase::kForward) {
          continue;
        }
        last_read = std::max(last_read, t);
      }
      if (last_read >= 0) crossings.push_back({v, defined, last_read});
    }
  }

  // Each candidate boundary op: repeated a multiple of `layers` times, its
  // second layer's instance reading an activation (not weights only). Its
  // cut: the values of one layer that a forward op of a later layer reads.
  auto evaluate = [&](const std::vector<InstrId>& occ) {
    const size_t per_layer = occ.size() / static_cast<size_t>(layers);
    Cut cut;
    cut.layer_of_time.assign(static_cast<size_t>(schedule.end_time()), -1);
    int64_t layer = -1;
    size_t next = 0;
    for (int64_t t = 0; t < schedule.end_time(); ++t) {
      if (next < occ.size() && schedule.sequence[static_cast<size_t>(t)] == occ[next]) {
        layer = static_cast<int64_t>(next / per_layer);
        next += per_layer;
      }
      cut.layer_of_time[static_cast<size_t>(t)] = layer;
    }
    for (const Crossing& c : crossings) {
      const int64_t li = cut.layer_of_time[static_cast<size_t>(c.defined)];
      if (li < 0 || cut.layer_of_time[static_cast<size_t>(c.last_read)] <= li) continue;
      cut.kept += df.value(c.value).size;
      cut.boundary.push_back(c.value);
    }
    return cut;
  };
  // What jax.checkpoint would do with one choice of boundaries: the saved
  // values of the repeated layers, those crossing into a later layer (the
  // layer inputs it keeps), the residuals of each layer it recomputes.
  auto assess = [&](Cut* cut) {
    std::sort(cut->boundary.begin(), cut->boundary.end());
    cut->layer.assign(saved.size(), -1);
    cut->is_boundary.assign(saved.size(), false);
    std::vector<int64_t> residuals(static_cast<size_t>(layers), 0);
    std::vector<int64_t> residuals_policy(static_cast<size_t>(layers), 0);
    for (size_t k = 0; k < saved.size(); ++k) {
      const Saved& s = saved[k];
      const int64_t size = df.value(s.value).size;
      const int64_t layer = cut->layer_of_time[static_cast<size_t>(schedule.time_of(s.producer))];
      if (layer < 0 || saved_count[s.key] < 2) continue;
      cut->layer[k] = layer;
      cut->is_boundary[k] =
          std::binary_search(cut->boundary.begin(), cut->boundary.end(), s.value);
      ++cut->count;
      cut->in_layers += size;
      if (s.at_peak) cut->in_layers_at_peak += size;
      if (cut->is_boundary[k]) continue;
      residuals[static_cast<size_t>(layer)] += size;
      if (s.dot_saveable) {
        cut->dots += size;
      } else {
        residuals_policy[static_cast<size_t>(layer)] += size;
      }
    }
    cut->largest = *std::max_element(residuals.begin(), residuals.end());
    cut->largest_policy = *std::max_element(residuals_policy.begin(), residuals_policy.end());
  };
  // The boundaries that leave the least in memory with remat: the inputs kept
  // plus the largest layer recomputed.
  Cut best;
  bool found = false;
  for (const auto& [key, occ] : occurrences) {
    if (occ.size() % static_cast<size_t>(layers) != 0) continue;
    const size_t per_layer = occ.size() / static_cast<size_t>(layers);
    if (OnParametersOnly(m, occ[per_layer])) continue;
    Cut cut = evaluate(occ);
    assess(&cut);
    if (!found || cut.kept + cut.largest < best.kept + best.largest) {
      best = std::move(cut);
      found = true;
    }
  }
  if (!found) return;

  int64_t at_peak = 0;
  for (size_t k = 0; k < saved.size(); ++k) {
    if (saved[k].at_peak) at_peak += df.value(saved[k].value).size;
    saved[k].layer = best.layer[k];
    saved[k].boundary = best.is_boundary[k];
  }
  const int64_t in_layers = best.in_layers;
  const int64_t count_in_layers = best.count;
  const int64_t remat = std::min(best.in_layers_at_peak,
                                 std::max<int64_t>(0, in_layers - best.kept - best.largest));
  const int64_t policy =
      std::min(best.in_layers_at_peak,
               std::max<int64_t>(0, in_layers - best.kept - best.dots - best.largest_policy));
  if (remat < min_bytes || remat <= 0) return;

  // Groups by op_name and source line, largest first.
  struct Group {
    int64_t key;
    int64_t count = 0;
    int64_t bytes = 0;
    ValueId example;
    bool uniform = true;
  };
  std::vector<Group> groups;
  std::map<int64_t, size_t> group_of;
  std::vector<const Saved*> listed;
  for (const Saved& s : saved) {
    if (s.layer < 0) continue;
    listed.push_back(&s);
    auto [it, inserted] = group_of.try_emplace(s.key, groups.size());
    if (inserted) groups.push_back({s.key, 0, 0, s.value});
    Group& g = groups[it->second];
    ++g.count;
    g.bytes += df.value(s.value).size;
    g.uniform &= df.value(s.value).shape == df.value(g.example).shape;
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& x, const Group& y) { return x.bytes > y.bytes; });
  constexpr size_t kGroupsListed = 6;
  std::vector<std::string> described;
  for (size_t k = 0; k < groups.size() && k < kGroupsListed; ++k) {
    const Group& g = groups[k];
    const Key& key = a.key(g.key);
    const analysis::HloValue& ex = df.value(g.example);
    std::string where = key.file.empty() ? "" : absl::StrCat(key.file, ":", key.line, " ");
    described.push_back(absl::StrCat(
        where, "`", Primitive(key.op_name), "` ",
        g.uniform ? m.shapes.ToString(ex.shape, /*with_layout=*/false) : "(various shapes)", " ",
        g.uniform ? HumanBytes(ex.size) : "", g.uniform ? " " : "", "x", g.count, " = ",
        HumanBytes(g.bytes)));
  }
  if (groups.size() > kGroupsListed) {
    described.push_back(absl::StrCat(groups.size() - kGroupsListed, " more"));
  }

  const int64_t peak = std::max<int64_t>(ctx.profile().peak_live_bytes, 1);
  const Group& top = groups.front();
  Finding f = ctx.MakeFinding(kName, remat, a.key(top.key).first);
  // Per layer, the saved values jax.checkpoint recomputes; the values
  // crossing into the next layer are its inputs, which it keeps.
  int64_t crossing = 0, crossing_bytes = 0;
  for (const Saved& s : saved) {
    if (s.layer >= 0 && s.boundary) {
      ++crossing;
      crossing_bytes += df.value(s.value).size;
    }
  }
  const int64_t recomputed = count_in_layers - crossing;
  const std::string per_layer =
      recomputed % layers == 0
          ? absl::StrCat(recomputed / layers)
          : absl::StrFormat("%.1f", static_cast<double>(recomputed) / static_cast<double>(layers));
  f.message = absl::StrCat(
      layers, " layers (repeats of the same ops, by op_name and source line) keep ",
      count_in_layers, " activations from the forward pass (jvp) for the backward pass "
      "(transpose(jvp)), ", HumanBytes(in_layers), ": ", per_layer,
      " per layer that jax.checkpoint would recompute (",
      HumanBytes(in_layers - crossing_bytes), ")",
      crossing > 0 ? absl::StrCat(" and ", crossing, " layer outputs read by the next layer (",
                                  HumanBytes(crossing_bytes), "), which it keeps")
                   : "",
      ". ", HumanBytes(at_peak), " of saved activations are live at the peak (",
      static_cast<int64_t>(100.0 * static_cast<double>(at_peak) / static_cast<double>(peak)),
      "% of it). By op and source line, identical buffers merged (xN: how many): ",
      absl::StrJoin(described, "; "), ".");
  const std::string already =
      a.uses_remat()
          ? "The program already uses jax.checkpoint: these are what its policy saves. "
          : "";
  std::string suggestion = absl::StrCat(
      already,
      "Wrap each layer in jax.checkpoint (jax.remat), e.g. layer = jax.checkpoint(layer, "
      "policy=jax.checkpoint_policies.nothing_saveable): only each layer's input is kept and the "
      "rest is recomputed in the backward pass, about ",
      HumanBytes(remat), " less at the peak (the saved activations less the layer inputs kept "
      "and one layer's residuals recomputed), for about one more forward pass of compute.");
  if (policy > 0 && policy < remat) {
    absl::StrAppend(&suggestion,
                    " With policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable the "
                    "matmul outputs stay saved and the cheap elementwise ops are recomputed: "
                    "about ",
                    HumanBytes(policy), " less.");
  }
  absl::StrAppend(
      &suggestion,
      " With many identical layers, stack their parameters and run them with jax.lax.scan over "
      "the layer axis with the body wrapped in jax.checkpoint: the same saving, one layer "
      "compiled. Without remat, microbatching (gradient accumulation over k microbatches, "
      "e.g. a jax.lax.scan over batch slices summing the gradients) divides the saved "
      "activations by k: k = 2 saves about ",
      HumanBytes(in_layers / 2), ".");
  f.suggestion = std::move(suggestion);
  std::stable_sort(listed.begin(), listed.end(), [&](const Saved* x, const Saved* y) {
    return df.value(x->value).size > df.value(y->value).size;
  });
  std::vector<InstrId> ids;
  for (const Saved* s : listed) ids.push_back(s->producer);
  f.instructions = InstructionNames(m, ids);
  findings->push_back(std::move(f));
}

}  // namespace hlomem::detect
