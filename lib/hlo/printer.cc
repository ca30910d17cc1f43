#include "lib/hlo/printer.h"

#include "absl/strings/str_cat.h"

namespace hlomem::hlo {
namespace {

void AppendStackFrames(const StackFrameIndex& index, std::string* out) {
  if (index.empty()) return;
  auto strings = [&](absl::string_view title, const std::vector<absl::string_view>& table) {
    if (table.empty()) return;
    absl::StrAppend(out, title, "\n");
    for (size_t i = 0; i < table.size(); ++i) {
      absl::StrAppend(out, i + 1, " \"", table[i], "\"\n");
    }
    out->append("\n");
  };
  strings("FileNames", index.file_names);
  strings("FunctionNames", index.function_names);
  if (!index.file_locations.empty()) {
    out->append("FileLocations\n");
    for (size_t i = 0; i < index.file_locations.size(); ++i) {
      const auto& l = index.file_locations[i];
      absl::StrAppend(out, i + 1, " {file_name_id=", l.file_name_id,
                      " function_name_id=", l.function_name_id, " line=", l.line,
                      " end_line=", l.end_line, " column=", l.column,
                      " end_column=", l.end_column, "}\n");
    }
    out->append("\n");
  }
  if (!index.frames.empty()) {
    out->append("StackFrames\n");
    for (size_t i = 0; i < index.frames.size(); ++i) {
      absl::StrAppend(out, i + 1, " {file_location_id=", index.frames[i].file_location_id,
                      " parent_frame_id=", index.frames[i].parent_frame_id, "}\n");
    }
    out->append("\n");
  }
}

}  // namespace

std::string PrintInstruction(const Module& m, InstrId id) {
  const Instruction& instr = m.instr(id);
  std::string out;
  if (instr.is_root) out.append("ROOT ");
  absl::StrAppend(&out, instr.name, " = ", m.shapes.ToString(instr.shape), " ",
                  m.opcode_text(id),
                  "(");
  if (instr.opcode == Opcode::kParameter) {
    absl::StrAppend(&out, instr.parameter_number());
  } else if (instr.opcode == Opcode::kConstant) {
    absl::StrAppend(&out, m.literal(id));
  } else {
    bool first = true;
    for (InstrId op : m.operands(id)) {
      if (!first) out.append(", ");
      first = false;
      absl::StrAppend(&out, m.instr(op).name);
    }
  }
  out.append(")");
  const absl::Span<const Attribute> attributes = m.attributes(id);
  for (size_t k = 0; k <= attributes.size(); ++k) {
    if (k == instr.elided_metadata_at) absl::StrAppend(&out, ", metadata=", m.metadata_of(id).text);
    if (k < attributes.size()) absl::StrAppend(&out, ", ", attributes[k].key, "=", attributes[k].value);
  }
  return out;
}

std::string PrintModule(const Module& m) {
  std::string out;
  if (!m.name.empty() || !m.header_attributes.empty()) {
    absl::StrAppend(&out, "HloModule ", m.name.empty() ? "unnamed" : m.name);
    for (const Attribute& a : m.header_attributes) {
      absl::StrAppend(&out, ", ", a.key, "=", a.value);
    }
    out.append("\n\n");
  }
  AppendStackFrames(m.stack_frames, &out);
  for (CompId c = 0; c < m.computations.size(); ++c) {
    const Computation& comp = m.comp(c);
    absl::StrAppend(&out, comp.is_entry ? "ENTRY " : "", comp.name, " {\n");
    for (InstrId i : m.instructions_of(c)) {
      if (m.instr(i).is_implicit) continue;
      absl::StrAppend(&out, "  ", PrintInstruction(m, i), "\n");
    }
    out.append("}");
    if (!comp.execution_thread.empty()) {
      absl::StrAppend(&out, ", execution_thread=\"", comp.execution_thread, "\"");
    }
    out.append("\n\n");
  }
  return out;
}

}  // namespace hlomem::hlo
