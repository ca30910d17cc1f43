#include "tests/hostile/run_hlomem.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace hlomem::testing {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  ::lseek(fd, 0, SEEK_SET);
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

}  // namespace

int64_t MemoryBound(int64_t input_bytes) {
  const int64_t base = kSanitized ? (int64_t{768} << 20) : (int64_t{96} << 20);
  return base + 4 * input_bytes;
}

RunResult RunHlomem(const std::vector<std::string>& args, const RunOptions& options) {
  RunResult result;
  // Output goes to an unlinked temporary file: a pipe could fill up and
  // stall the child while the parent only waits.
  char name[] = "/tmp/hlomem_run.XXXXXX";
  const int out_fd = ::mkstemp(name);
  if (out_fd < 0) return result;
  ::unlink(name);

  std::vector<char*> argv;
  std::string binary = HLOMEM_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> owned = args;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(out_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (options.file_size_limit_bytes >= 0) {
      const struct rlimit no_core = {0, 0};
      const rlim_t limit = static_cast<rlim_t>(options.file_size_limit_bytes);
      const struct rlimit file_size = {limit, limit};
      if (::setrlimit(RLIMIT_CORE, &no_core) != 0 || ::setrlimit(RLIMIT_FSIZE, &file_size) != 0) {
        std::_Exit(126);
      }
    }
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  if (pid < 0) {
    ::close(out_fd);
    return result;
  }

  const auto start = std::chrono::steady_clock::now();
  bool killed = false;
  int status = 0;
  struct rusage usage {};
  while (true) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!killed && options.kill_after_seconds >= 0 && elapsed >= options.kill_after_seconds) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (!killed && elapsed >= options.timeout_seconds) {
      ::kill(pid, SIGKILL);
      killed = true;
      result.timed_out = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(killed ? 1 : 5));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.max_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  result.output = ReadAll(out_fd);
  ::close(out_fd);
  return result;
}

}  // namespace hlomem::testing
