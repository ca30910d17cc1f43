// AtomicFileWriter: a file written piece by piece appears whole at Commit
// and not before; given up half way, the old file stays and no temporary is
// left.
#include "lib/base/atomic_file.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hlomem {
namespace {

class AtomicFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "hlomem_atomic_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/out.json";
  }
  void TearDown() override {
    for (const std::string& name : Entries()) ::unlink((dir_ + "/" + name).c_str());
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(d);
    }
    return names;
  }
  std::string Read() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_, path_;
};

TEST_F(AtomicFileWriterTest, PiecesAppearWholeAtCommit) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old\n").ok());
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Open(path_);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("{\"a\": ").ok());
  EXPECT_EQ(Read(), "old\n");  // not yet
  ASSERT_TRUE((*file)->Append("1}\n").ok());
  EXPECT_EQ(Entries().size(), 2u);  // the file and its temporary
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(Read(), "{\"a\": 1}\n");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.json"});
  // Nothing more after the end.
  EXPECT_FALSE((*file)->Append("x").ok());
  EXPECT_FALSE((*file)->Commit().ok());
}

TEST_F(AtomicFileWriterTest, GivenUpHalfWayLeavesTheOldFile) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old\n").ok());
  {
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Open(path_);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append("half").ok());
  }
  EXPECT_EQ(Read(), "old\n");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileWriterTest, MissingDirectoryIsALocatedError) {
  const std::string path = dir_ + "/no/such/out.json";
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> file = AtomicFileWriter::Open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(std::string(file.status().message()).rfind(path + ": error: cannot create", 0), 0u)
      << file.status();
}

}  // namespace
}  // namespace hlomem
