// Runs a shell command as a test would from a terminal: its stdout, and its
// exit code (-1 when it did not exit normally).
#ifndef HLOMEM_TESTS_COMMON_RUN_COMMAND_H_
#define HLOMEM_TESTS_COMMON_RUN_COMMAND_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace hlomem::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string out;
};

inline CommandOutput RunCommand(const std::string& command) {
  CommandOutput result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace hlomem::testing

#endif  // HLOMEM_TESTS_COMMON_RUN_COMMAND_H_
