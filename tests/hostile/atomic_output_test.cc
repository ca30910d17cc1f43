// `hlomem report -o FILE` replaces FILE atomically: a run killed at any
// moment leaves the previous FILE whole (or the complete new one), never a
// partial file; a failed write leaves no temporary behind.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

// The largest committed case: its JSON report is megabytes, written in
// many pieces.
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

// A run killed while it writes the report leaves the previous file whole.
// The kill is placed, not timed: a file-size limit kills the process with
// SIGXFSZ at the byte chosen, from the first byte of the report to its last.
TEST(AtomicOutputTest, KilledRunLeavesThePreviousFileWhole) {
  ScratchDir dir;
  const std::string out = dir.path() + "/report.json";
  const std::vector<std::string> args = {"report", "--format", "json", "--full", "-o", out, kLargeCase};

  // A complete run: what the new file holds.
  RunResult run = RunHlomem(args);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string complete = ReadFileOrDie(out);
  ASSERT_GT(complete.size(), size_t{1} << 20);

  const std::string previous = "{\"previous\": true}\n";
  const int64_t size = static_cast<int64_t>(complete.size());
  for (int64_t limit : {int64_t{0}, int64_t{1}, int64_t{4096}, int64_t{65537}, size / 2, size - 1}) {
    SCOPED_TRACE("killed after " + std::to_string(limit) + " of " + std::to_string(size) + " bytes");
    dir.Write("report.json", previous);
    RunOptions options;
    options.file_size_limit_bytes = limit;
    run = RunHlomem(args, options);
    ASSERT_EQ(run.signal, SIGXFSZ) << "exit " << run.exit_code << ": " << run.output;
    EXPECT_EQ(ReadFileOrDie(out), previous);
    // Nothing but the target and the temporary the run was writing, which
    // holds the report's first `limit` bytes: the kill landed mid-write.
    std::vector<std::string> temporaries;
    for (const std::string& name : Entries(dir.path())) {
      if (absl::StartsWith(name, "report.json.tmp.")) {
        temporaries.push_back(name);
      } else {
        EXPECT_EQ(name, "report.json");
      }
    }
    ASSERT_EQ(temporaries.size(), 1u);
    const std::string temporary = dir.path() + "/" + temporaries[0];
    EXPECT_TRUE(ReadFileOrDie(temporary) == complete.substr(0, static_cast<size_t>(limit)))
        << "the temporary is not the start of the report";
    ASSERT_EQ(::unlink(temporary.c_str()), 0);
  }
  // Unlimited again: the run completes and replaces the file.
  dir.Write("report.json", previous);
  run = RunHlomem(args);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(ReadFileOrDie(out) == complete);
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"report.json"});
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
