#include "lib/hlo/module_diff.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlomem::hlo {
namespace {

// The text parser keeps C escapes in quoted strings (metadata, custom-call
// targets); the proto reader has the real bytes. Compare the bytes.
std::string Unescaped(absl::string_view s) {
  if (s.find('\\') == absl::string_view::npos) return std::string(s);
  std::string out;
  if (!absl::CUnescape(s, &out)) return std::string(s);
  return out;
}

class Differ {
 public:
  Differ(const Module& a, const Module& b, const DiffOptions& options)
      : a_(a), b_(b), options_(options) {}

  std::string Run();

 private:
  bool Full() const { return count_ >= options_.max_differences; }

  void Report(absl::string_view where, absl::string_view what, absl::string_view va,
              absl::string_view vb) {
    if (Full()) {
      ++count_;
      return;
    }
    ++count_;
    if (!where.empty()) absl::StrAppend(&out_, where, ": ");
    absl::StrAppend(&out_, what, ": ", va, " vs ", vb, "\n");
  }
  template <typename T>
  void Compare(absl::string_view where, absl::string_view what, const T& va,
               const T& vb) {
    if (!(va == vb)) Report(where, what, absl::StrCat(va), absl::StrCat(vb));
  }
  void CompareText(absl::string_view where, absl::string_view what,
                   absl::string_view va, absl::string_view vb) {
    if (va != vb) {
      Report(where, what, absl::StrCat("'", va, "'"), absl::StrCat("'", vb, "'"));
    }
  }

  static std::string CompName(const Module& m, CompId id) {
    return id < m.computations.size() ? std::string(m.computations[id].name)
                                      : std::string("<none>");
  }
  static std::string InstrName(const Module& m, InstrId id) {
    return id < m.instructions.size() ? std::string(m.instructions[id].name)
                                      : std::string("<none>");
  }
  // An instruction as an operand: its name, or with
  // structural_get_tuple_elements, "producer#index" for a GTE.
  std::string Ref(const Module& m, InstrId id) const {
    std::string suffix;
    int guard = 0;
    while (options_.structural_get_tuple_elements && id < m.instructions.size() &&
           m.instructions[id].opcode == Opcode::kGetTupleElement &&
           m.operands(id).size() == 1 && ++guard < 64) {
      suffix = absl::StrCat("#", m.instructions[id].tuple_index(), suffix);
      id = m.operands(id)[0];
    }
    return InstrName(m, id) + suffix;
  }
  std::string Names(const Module& m, absl::Span<const InstrId> ids) const {
    std::vector<std::string> names;
    for (InstrId id : ids) names.push_back(Ref(m, id));
    return absl::StrCat("[", absl::StrJoin(names, ", "), "]");
  }
  // The instructions of a computation that the walk compares.
  std::vector<InstrId> Walked(const Module& m, CompId c) const {
    std::vector<InstrId> ids;
    for (InstrId id : m.instructions_of(c)) {
      if (options_.structural_get_tuple_elements &&
          m.instructions[id].opcode == Opcode::kGetTupleElement) {
        continue;
      }
      ids.push_back(id);
    }
    return ids;
  }
  // Callees grouped by role (stable, so branch order counts): the text
  // parser lists a while's callees as written (condition, body), the proto
  // in XLA's called_computations() order (body, condition).
  static std::string Callees(const Module& m, InstrId id) {
    std::vector<Callee> callees(m.callees(id).begin(), m.callees(id).end());
    std::stable_sort(callees.begin(), callees.end(), [](const Callee& x, const Callee& y) {
      return static_cast<int>(x.role) < static_cast<int>(y.role);
    });
    std::vector<std::string> parts;
    for (const Callee& c : callees) {
      parts.push_back(absl::StrCat(CallRoleName(c.role), "=", CompName(m, c.computation)));
    }
    return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  }
  static std::string Aliases(const Module& m, InstrId id) {
    std::vector<std::string> parts;
    for (const OutputOperandAlias& a : m.output_operand_aliases(id)) {
      parts.push_back(absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.operand, ", ",
                                   ShapeIndexToString(a.operand_index), ")"));
    }
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }
  std::string Metadata(const Module& m, InstrId id) const {
    const OpMetadata& md = m.metadata_of(id);
    const int64_t frame = options_.compare_stack_frame_ids ? md.stack_frame_id : 0;
    return absl::StrCat("{op_type=\"", Unescaped(md.op_type), "\" op_name=\"",
                        Unescaped(md.op_name), "\" source_file=\"",
                        Unescaped(md.source_file), "\" source_line=", md.source_line,
                        " stack_frame_id=", frame, "}");
  }
  std::string Shape(const Module& m, InstrId id) const {
    return m.shapes.ToString(m.instructions[id].shape, options_.compare_layouts);
  }
  static std::string InputOutputAliases(const Module& m) {
    std::vector<std::string> parts;
    for (const InputOutputAlias& a : m.input_output_aliases) {
      parts.push_back(absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.parameter, ", ",
                                   ShapeIndexToString(a.parameter_index), ", kind ",
                                   static_cast<int>(a.kind), ")"));
    }
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }
  static std::string BufferDonors(const Module& m) {
    std::vector<std::string> parts;
    for (const BufferDonor& d : m.buffer_donors) {
      parts.push_back(absl::StrCat("(", d.parameter, ", ", ShapeIndexToString(d.parameter_index),
                                   ")"));
    }
    return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
  }

  void CompareComputation(CompId ca, CompId cb);
  void CompareInstruction(const std::string& where, InstrId ia, InstrId ib);

  const Module& a_;
  const Module& b_;
  const DiffOptions& options_;
  int count_ = 0;
  std::string out_;
};

void Differ::CompareInstruction(const std::string& where, InstrId ia, InstrId ib) {
  const Instruction& x = a_.instructions[ia];
  const Instruction& y = b_.instructions[ib];
  const std::string at = absl::StrCat(where, ": instruction '", x.name, "'");
  CompareText(where, "instruction name", x.name, y.name);
  if (x.opcode != y.opcode || (x.opcode == Opcode::kUnknown && a_.opcode_text(ia) != b_.opcode_text(ib))) {
    Report(at, "opcode", x.opcode == Opcode::kUnknown ? a_.opcode_text(ia) : OpcodeName(x.opcode),
           y.opcode == Opcode::kUnknown ? b_.opcode_text(ib) : OpcodeName(y.opcode));
  }
  Compare(at, "shape", Shape(a_, ia), Shape(b_, ib));
  Compare(at, "is_root", x.is_root, y.is_root);
  Compare(at, "operands", Names(a_, a_.operands(ia)), Names(b_, b_.operands(ib)));
  Compare(at, "callees", Callees(a_, ia), Callees(b_, ib));
  Compare(at, "parameter_number", x.parameter_number(), y.parameter_number());
  Compare(at, "tuple_index", x.tuple_index(), y.tuple_index());
  if (x.fusion_kind != y.fusion_kind) {
    Report(at, "fusion_kind", FusionKindName(x.fusion_kind), FusionKindName(y.fusion_kind));
  }
  CompareText(at, "custom_call_target", Unescaped(a_.custom_call_target(ia)),
              Unescaped(b_.custom_call_target(ib)));
  Compare(at, "dimensions",
          absl::StrCat("{", absl::StrJoin(a_.dimensions(ia), ","), "}"),
          absl::StrCat("{", absl::StrJoin(b_.dimensions(ib), ","), "}"));
  Compare(at, "output_operand_aliases", Aliases(a_, ia), Aliases(b_, ib));
  if (options_.compare_metadata) Compare(at, "metadata", Metadata(a_, ia), Metadata(b_, ib));
  Compare(at, "control_predecessors", Names(a_, a_.control_predecessors(ia)),
          Names(b_, b_.control_predecessors(ib)));
}

void Differ::CompareComputation(CompId ca, CompId cb) {
  const Computation& x = a_.computations[ca];
  const Computation& y = b_.computations[cb];
  const std::string where = absl::StrCat("computation '", x.name, "'");
  if (options_.compare_computation_order) {
    CompareText("", absl::StrCat("computation ", ca, " name"), x.name, y.name);
  }
  Compare(where, "is_entry", x.is_entry, y.is_entry);
  CompareText(where, "execution_thread", x.execution_thread, y.execution_thread);
  Compare(where, "root", Ref(a_, x.root), Ref(b_, y.root));
  const std::vector<InstrId> ia = Walked(a_, ca);
  const std::vector<InstrId> ib = Walked(b_, cb);
  Compare(where, "instruction count", ia.size(), ib.size());
  const size_t n = std::min(ia.size(), ib.size());
  for (size_t k = 0; k < n && !Full(); ++k) CompareInstruction(where, ia[k], ib[k]);
}

std::string Differ::Run() {
  CompareText("", "module name", a_.name, b_.name);
  Compare("", "entry", CompName(a_, a_.entry), CompName(b_, b_.entry));
  Compare("", "is_scheduled", a_.is_scheduled, b_.is_scheduled);
  Compare("", "input_output_alias", InputOutputAliases(a_), InputOutputAliases(b_));
  Compare("", "buffer_donor", BufferDonors(a_), BufferDonors(b_));
  Compare("", "computation count", a_.computations.size(), b_.computations.size());
  if (options_.compare_computation_order) {
    const size_t n = std::min(a_.computations.size(), b_.computations.size());
    for (size_t k = 0; k < n && !Full(); ++k) {
      CompareComputation(static_cast<CompId>(k), static_cast<CompId>(k));
    }
  } else {
    absl::flat_hash_map<absl::string_view, CompId> by_name;
    for (CompId k = 0; k < b_.computations.size(); ++k) {
      by_name.emplace(b_.computations[k].name, k);
    }
    for (CompId k = 0; k < a_.computations.size() && !Full(); ++k) {
      auto found = by_name.find(a_.computations[k].name);
      if (found == by_name.end()) {
        Report("", "computation", absl::StrCat("'", a_.computations[k].name, "'"), "missing");
        continue;
      }
      CompareComputation(k, found->second);
    }
  }
  if (count_ > options_.max_differences) {
    absl::StrAppend(&out_, "... and more differences\n");
  }
  return out_;
}

}  // namespace

std::string DiffModules(const Module& a, const Module& b, const DiffOptions& options) {
  return Differ(a, b, options).Run();
}

}  // namespace hlomem::hlo
