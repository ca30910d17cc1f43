// A finding: one piece of waste a detector found in a module, with the bytes
// a fix would save, the instructions involved, where in the user's program
// it comes from, and what to try.
#ifndef HLOMEM_LIB_DETECT_FINDING_H_
#define HLOMEM_LIB_DETECT_FINDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hlomem::detect {

enum class Severity : uint8_t { kInfo, kWarning, kError };
absl::string_view SeverityName(Severity severity);  // "info", "warning", "error"

struct Finding {
  std::string detector;  // the detector's name, e.g. "duplicate-buffer"
  Severity severity = Severity::kWarning;
  // What fixing it would save, in the module's peak or total, in bytes.
  int64_t bytes = 0;
  // One line, the bytes first ("2.55MiB: 6 entry parameters of train_step
  // are not donated"); "" when the detector wrote none (Summary derives it).
  std::string summary;
  std::string message;     // what is wasted, the details
  std::string suggestion;  // what to try, concrete for JAX users
  // Instruction names along the chain, producer first.
  std::vector<std::string> instructions;
  std::string source_file;  // the user's file, "" when unknown
  int64_t source_line = 0;
  std::string op_name;
};

// The finding in one line, its bytes first: `summary` when set, else the
// message's first clause (to about 120 characters) after the bytes.
std::string Summary(const Finding& f);

}  // namespace hlomem::detect

#endif  // HLOMEM_LIB_DETECT_FINDING_H_
