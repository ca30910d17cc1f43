// Runs the hlomem binary as CI would: separate process, wall-clock limit,
// peak memory measured, killable mid-run.
#ifndef HLOMEM_TESTS_HOSTILE_RUN_HLOMEM_H_
#define HLOMEM_TESTS_HOSTILE_RUN_HLOMEM_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hlomem::testing {

struct RunResult {
  int exit_code = -1;    // -1 unless the process exited normally
  int signal = 0;        // the signal that ended it, if any
  bool timed_out = false;
  std::string output;    // stdout and stderr, interleaved
  int64_t max_rss_bytes = 0;
};

struct RunOptions {
  double timeout_seconds = 120;
  // When >= 0: SIGKILL the process this many seconds after it started
  // (simulates a job killed mid-run); the result has signal == SIGKILL if it
  // was still running.
  double kill_after_seconds = -1;
  // When >= 0: the process may write files up to this many bytes
  // (RLIMIT_FSIZE). The write that would pass it kills the process with
  // SIGXFSZ at exactly that byte, without a core file: a run killed mid-write
  // at a chosen point, with no timing involved.
  int64_t file_size_limit_bytes = -1;
};

RunResult RunHlomem(const std::vector<std::string>& args, const RunOptions& options = {});

// Peak RSS allowed for a run over `input_bytes` of input: a fixed base for
// the binary (more under the sanitizers, whose shadow memory and quarantine
// count) plus a small multiple of the input, which is mapped and indexed.
int64_t MemoryBound(int64_t input_bytes);

}  // namespace hlomem::testing

#endif  // HLOMEM_TESTS_HOSTILE_RUN_HLOMEM_H_
