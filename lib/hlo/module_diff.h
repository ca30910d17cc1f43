// Structural comparison of two modules, for tests: the text and the proto of
// one module must give the same model, and parse -> print -> parse must be a
// fixed point.
#ifndef HLOMEM_LIB_HLO_MODULE_DIFF_H_
#define HLOMEM_LIB_HLO_MODULE_DIFF_H_

#include <string>

#include "lib/hlo/module.h"

namespace hlomem::hlo {

struct DiffOptions {
  // Differences reported before giving up.
  int max_differences = 10;
  // Compare metadata (op_type, op_name, source_file, source_line,
  // stack_frame_id). Dumps made with --xla_dump_disable_metadata differ
  // from their protos only there.
  bool compare_metadata = true;
  // Compare shapes with their layouts (text without layouts vs proto).
  bool compare_layouts = true;
  // Require the computations in the same order. XLA's text printer and its
  // HloModule::ToProto emit different (both callees-first) orders, so a
  // text-vs-proto comparison turns this off and pairs computations by name.
  bool compare_computation_order = true;
  // Compare metadata stack_frame_id (older text dumps omit it while the
  // proto of the same module carries it).
  bool compare_stack_frame_ids = true;
  // Treat get-tuple-element instructions as plumbing: leave them out of the
  // positional walk and name every operand that is one by its structure,
  // "producer#index". 2026 dumps print compact GTEs (`%x#1`), so the text
  // model's synthesized GTEs have neither the proto's names nor its
  // schedule positions.
  bool structural_get_tuple_elements = false;
};

// Returns "" when `a` and `b` are structurally equal, else one line per
// difference (the first few), each naming where it is, e.g.
//   computation 'main': instruction 'add.3': operands: [x, y] vs [y, x]
// Compared: module name, entry, is_scheduled; computations (name, order
// unless turned off,
// root, is_entry, execution_thread); per computation the instructions in
// order (name, opcode, shape text, operand names, callee names and roles,
// parameter_number, tuple_index, fusion_kind, custom_call_target,
// dimensions, output_operand_aliases, metadata, control predecessor names);
// input_output_aliases and buffer_donors. Callees are compared grouped by
// role (a while's body/condition in either order); metadata strings and
// custom_call_target after C-unescaping (the text parser keeps escapes).
// Not compared: attribute text, literals, header attributes, ids, source
// offsets, stack frame tables.
std::string DiffModules(const Module& a, const Module& b,
                        const DiffOptions& options = {});

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_MODULE_DIFF_H_
