// `hlomem capture -- COMMAND...`: runs the user's program with XLA's dump
// flags added to its XLA_FLAGS (the user's own flags are kept), so that a
// report can be made of what it compiled.
#ifndef HLOMEM_LIB_PIPELINE_CAPTURE_H_
#define HLOMEM_LIB_PIPELINE_CAPTURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hlomem::pipeline {

// The dump flags hlomem needs: HLO text (for the report) and protos.
inline constexpr const char* kDumpFlags[] = {"--xla_dump_hlo_as_text", "--xla_dump_hlo_as_proto"};

// The value of --xla_dump_to in `flags`, or "".
std::string DumpDirInFlags(absl::string_view flags);

// `user_flags` with --xla_dump_to=`dir` and kDumpFlags: a --xla_dump_to the
// user gave is replaced, flags already present are not repeated, every
// other flag is kept in order.
std::string CaptureXlaFlags(absl::string_view user_flags, const std::string& dir);

struct CaptureOptions {
  std::string dir;  // "" : the user's --xla_dump_to, else a new temp dir
  std::vector<std::string> command;
  std::string user_xla_flags;  // the environment's XLA_FLAGS
};

struct CaptureResult {
  std::string dir;
  std::string xla_flags;  // what the command ran with
  int exit_code = 0;      // the command's; 128+N when killed by signal N
  bool dir_had_files = false;  // the dump dir was not empty before the run
  // The command wrote no dump; a temporary dump dir made for it is gone.
  bool nothing_dumped = false;
  // The command's stderr, which was also passed through to ours as it
  // came (the last kKeptOutputBytes of it): where an out-of-memory error
  // lands.
  std::string stderr_text;
};

inline constexpr size_t kKeptOutputBytes = size_t{16} << 20;

// Runs the command (PATH lookup) with the new XLA_FLAGS, passes its stderr
// through while keeping it, and waits for it.
// Also sets JAX_ENABLE_COMPILATION_CACHE=false unless the user set it: a
// persistent-cache hit skips compilation, and with it the dump.
absl::StatusOr<CaptureResult> RunCapture(const CaptureOptions& options);

}  // namespace hlomem::pipeline

#endif  // HLOMEM_LIB_PIPELINE_CAPTURE_H_
