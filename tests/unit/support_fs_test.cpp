// support/fs.h: write_file_atomic replaces a regular file through a temporary and a rename, and
// writes anything else (a FIFO, a device such as `-o /dev/null`) in place: renaming over it would
// leave a regular file where it was.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/fs.h"

namespace kf {
namespace {

TEST(WriteFileAtomic, ReplacesARegularFile) {
  TempDir dir("kf-fs-test");
  const fs::path p = dir.path() / "sub" / "out.txt";
  ASSERT_TRUE(write_file_atomic(p, "first").ok());
  ASSERT_TRUE(write_file_atomic(p, "second").ok());
  auto text = read_file(p);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(p.parent_path()), fs::directory_iterator()), 1)
      << "no temporary left behind";
}

TEST(WriteFileAtomic, WritesAFifoInPlaceAndLeavesItAFifo) {
  TempDir dir("kf-fs-test");
  const fs::path p = dir.path() / "pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    got = ss.str();
  });
  const Status st = write_file_atomic(p, "through the pipe");
  reader.join();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::status(p)));
}

}  // namespace
}  // namespace kf
