// Parser for HLO text as XLA has printed it since 2018: long (%-prefixed,
// operand shapes, program shapes) and short styles, /*index=N*/ comments,
// 2025+ StackFrames header sections, headerless single computations, and
// test files holding several modules separated by "// -----" lines.
#ifndef HLOMEM_LIB_HLO_TEXT_PARSER_H_
#define HLOMEM_LIB_HLO_TEXT_PARSER_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/file_contents.h"
#include "lib/hlo/module.h"

namespace hlomem::hlo {

// The most that ParseOptions::max_nesting_depth may be raised to: parsing
// and analysis recurse once per level (an 8 MiB stack, sanitizer builds
// included, must do), and shape indices grow with the depth.
inline constexpr int kMaxNestingDepthLimit = 2000;

struct ParseOptions {
  // Deepest nesting of tuple shapes and bracketed attribute values accepted;
  // protects the stack from hostile input. Values above kMaxNestingDepthLimit
  // are not safe: parsing and analysis recurse once per level.
  int max_nesting_depth = 1000;
  // A large module's computations are parsed on up to this many threads,
  // in parts of at least min_part_bytes of text each. The result is the
  // module a sequential parse builds.
  int threads = 1;
  size_t min_part_bytes = size_t{4} << 20;
  // When set, receives the number of parts the last module was parsed in
  // (1: sequentially, also after parts failed and the body was parsed again).
  int* parts_used = nullptr;
};

// Parses every module in `file`. Errors read
// "path:line:col: error: message" followed by the source line and a caret.
absl::StatusOr<std::vector<Module>> ParseHloText(
    std::shared_ptr<const FileContents> file, const ParseOptions& options = {});

// Convenience for tests: parses `text` as if read from `path`.
absl::StatusOr<std::vector<Module>> ParseHloString(
    absl::string_view text, absl::string_view path = "<string>",
    const ParseOptions& options = {});

}  // namespace hlomem::hlo

#endif  // HLOMEM_LIB_HLO_TEXT_PARSER_H_
