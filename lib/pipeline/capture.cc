#include "lib/pipeline/capture.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hlomem::pipeline {
namespace {

constexpr absl::string_view kDumpTo = "--xla_dump_to=";

std::vector<absl::string_view> SplitFlags(absl::string_view flags) {
  return absl::StrSplit(flags, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
}

absl::Status MakeDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, ": error: cannot create the dump directory: ", std::strerror(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

bool HasEntries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool any = false;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      any = true;
      break;
    }
  }
  ::closedir(d);
  return any;
}

absl::StatusOr<std::string> MakeTempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/hlomem-capture-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(pattern, ": error: cannot create a temporary directory: ", std::strerror(errno)));
  }
  return pattern;
}

// Copies `fd` to our stderr as it comes and keeps the last kKeptOutputBytes
// of it in `kept`.
void TeeUntilClosed(int fd, std::string* kept) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(STDERR_FILENO, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // our stderr is gone: keep reading so the command is not blocked
      done += w;
    }
    kept->append(buffer, static_cast<size_t>(n));
    if (kept->size() > 2 * kKeptOutputBytes) kept->erase(0, kept->size() - kKeptOutputBytes);
  }
}

}  // namespace

std::string DumpDirInFlags(absl::string_view flags) {
  std::string dir;
  for (absl::string_view flag : SplitFlags(flags)) {
    if (absl::StartsWith(flag, kDumpTo)) dir = std::string(flag.substr(kDumpTo.size()));
  }
  return dir;  // the last one wins, as in XLA's flag parsing
}

std::string CaptureXlaFlags(absl::string_view user_flags, const std::string& dir) {
  std::vector<std::string> out;
  for (absl::string_view flag : SplitFlags(user_flags)) {
    if (!absl::StartsWith(flag, kDumpTo)) out.emplace_back(flag);
  }
  out.push_back(absl::StrCat(kDumpTo, dir));
  for (const char* flag : kDumpFlags) {
    bool present = false;
    for (const std::string& f : out) present = present || f == flag || f == absl::StrCat(flag, "=true");
    if (!present) out.emplace_back(flag);
  }
  return absl::StrJoin(out, " ");
}

absl::StatusOr<CaptureResult> RunCapture(const CaptureOptions& options) {
  if (options.command.empty()) {
    return absl::InvalidArgumentError("error: capture needs a command after --, e.g. -- python train.py");
  }
  CaptureResult result;
  result.dir = options.dir.empty() ? DumpDirInFlags(options.user_xla_flags) : options.dir;
  const bool made_temp_dir = result.dir.empty();
  if (made_temp_dir) {
    absl::StatusOr<std::string> dir = MakeTempDir();
    if (!dir.ok()) return dir.status();
    result.dir = *dir;
  } else {
    absl::Status made = MakeDirs(result.dir);
    if (!made.ok()) return made;
    result.dir_had_files = HasEntries(result.dir);
  }
  result.xla_flags = CaptureXlaFlags(options.user_xla_flags, result.dir);
  std::vector<char*> argv;
  for (const std::string& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    return absl::InternalError(absl::StrCat("error: pipe failed: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return absl::InternalError(absl::StrCat("error: fork failed: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[1]);
    ::setenv("XLA_FLAGS", result.xla_flags.c_str(), 1);
    ::setenv("JAX_ENABLE_COMPILATION_CACHE", "false", /*overwrite=*/0);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "%s: error: cannot run: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  TeeUntilClosed(pipe_fds[0], &result.stderr_text);
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(absl::StrCat("error: waiting for the command: ", std::strerror(errno)));
    }
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.nothing_dumped = !HasEntries(result.dir);
  // An empty folder of ours would be left in the temp dir for nothing.
  if (made_temp_dir && result.nothing_dumped) ::rmdir(result.dir.c_str());
  return result;
}

}  // namespace hlomem::pipeline
