// The hlomem command line as a function, so that the `hlomem` executable
// and the Python package's `hlomem` console script run the same code.
#ifndef HLOMEM_CMD_HLOMEM_CLI_H_
#define HLOMEM_CMD_HLOMEM_CLI_H_

namespace hlomem::cli {

// Runs `hlomem ARGS...` (argv[0] is the program name) and returns its exit
// code: 0 ok, 1 a check failed, 2 bad input or usage.
int Main(int argc, const char* const* argv);

}  // namespace hlomem::cli

#endif  // HLOMEM_CMD_HLOMEM_CLI_H_
