// `hlomem report -o FILE` replaces FILE atomically: a run killed at any
// moment leaves the previous FILE whole (or the complete new one), never a
// partial file; a failed write leaves no temporary behind.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/hostile/run_hlomem.h"
#include "tests/hostile/scratch_dir.h"

namespace hlomem::testing {
namespace {

using ::testing::HasSubstr;

// The largest committed case: its JSON report is megabytes, so a kill has
// a fair chance of landing while it is written.
const std::string kLargeCase = std::string(HLOMEM_TESTDATA_DIR) + "/jax/big_unrolled_transformer_train";

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return names;
  while (const dirent* entry = ::readdir(handle)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(handle);
  return names;
}

TEST(AtomicOutputTest, KilledRunLeavesThePreviousFileWhole) {
  ScratchDir dir;
  const std::string out = dir.path() + "/report.json";
  const std::vector<std::string> args = {"report", "--format", "json", "-o", out, kLargeCase};

  // A complete run: how long one takes, and what the new file holds.
  const auto start = std::chrono::steady_clock::now();
  RunResult run = RunHlomem(args);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string complete = ReadFileOrDie(out);
  ASSERT_GT(complete.size(), size_t{1} << 20);

  const std::string previous = "{\"previous\": true}\n";
  int killed = 0;
  for (double fraction : {0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99}) {
    dir.Write("report.json", previous);
    RunOptions options;
    options.kill_after_seconds = seconds * fraction;
    run = RunHlomem(args, options);
    const std::string now = ReadFileOrDie(out);
    if (run.signal == SIGKILL) {
      ++killed;
      EXPECT_TRUE(now == previous || now == complete)
          << "killed at " << fraction << " of a run: " << now.size() << " bytes";
    } else {
      EXPECT_EQ(run.exit_code, 0) << run.output;
      EXPECT_EQ(now, complete);
    }
    // Nothing but the target and the temporaries of killed runs.
    for (const std::string& name : Entries(dir.path())) {
      EXPECT_TRUE(name == "report.json" || absl::StartsWith(name, "report.json.tmp."))
          << name;
    }
  }
  EXPECT_GT(killed, 0);
}

TEST(AtomicOutputTest, FailedWriteLeavesNoTemporary) {
  ScratchDir dir;
  const std::string target = dir.path() + "/is_a_directory";
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  const RunResult run = RunHlomem(
      {"report", "--format", "json", "-o", target,
       std::string(HLOMEM_TESTDATA_DIR) + "/jax/argmax"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr(target + ": error: "));
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"is_a_directory"});

  const RunResult missing = RunHlomem(
      {"report", "-o", dir.path() + "/no/such/dir/out.txt",
       std::string(HLOMEM_TESTDATA_DIR) + "/jax/argmax"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"is_a_directory"});
}

// A pipe or device (`-o /dev/null`) is written in place: renaming over it
// would swap the device for a regular file.
TEST(AtomicOutputTest, PipeIsWrittenInPlace) {
  ScratchDir dir;
  const std::string fifo = dir.path() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // Both ends opened here first, so neither open blocks and the reader sees
  // end-of-file only once the test lets go of its own write end: a run that
  // never opens the pipe fails the test instead of hanging it.
  const int read_end = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(read_end, 0);
  const int held_write_end = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(held_write_end, 0);
  ASSERT_EQ(::fcntl(read_end, F_SETFL, 0), 0);  // blocking reads from here on
  std::string received;
  std::thread reader([&] {
    char buffer[1 << 16];
    ssize_t n;
    while ((n = ::read(read_end, buffer, sizeof buffer)) > 0) {
      received.append(buffer, static_cast<size_t>(n));
    }
  });
  const RunResult run = RunHlomem({"report", "--format", "json", "-o", fifo,
                                   std::string(HLOMEM_TESTDATA_DIR) + "/jax/argmax"});
  ::close(held_write_end);
  reader.join();
  ::close(read_end);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(received, HasSubstr("\"schema_version\""));
  struct stat after;
  ASSERT_EQ(::stat(fifo.c_str(), &after), 0);
  EXPECT_TRUE(S_ISFIFO(after.st_mode));
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"pipe"});
}

}  // namespace
}  // namespace hlomem::testing
