// Tests of ipc::ReadFile (io.h): a whole file into one pool buffer, bounded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>

#include "quiver/ipc/io.h"

namespace quiver::ipc {
namespace {

std::string WriteTemp(const std::string& bytes) {
  char name[] = "/tmp/quiver-read-file-XXXXXX";
  const int fd = ::mkstemp(name);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  return name;
}

TEST(ReadFileTest, ReadsTheWholeFileFromThePool) {
  const std::string bytes(200000, 'q');
  const std::string path = WriteTemp(bytes);
  auto pool = MemoryPool::MakeRoot();
  {
    auto buf = ReadFile(path, pool.get(), int64_t{1} << 20);
    ASSERT_TRUE(buf.ok()) << buf.status().ToString();
    EXPECT_EQ((*buf)->view(), bytes);
    EXPECT_GE(pool->held_bytes(), static_cast<int64_t>(bytes.size()));
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  std::remove(path.c_str());
}

TEST(ReadFileTest, LimitIsInclusive) {
  const std::string path = WriteTemp("12345");
  auto pool = MemoryPool::MakeRoot();
  auto at = ReadFile(path, pool.get(), 5);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ((*at)->view(), "12345");
  auto over = ReadFile(path, pool.get(), 4);
  ASSERT_TRUE(over.status().IsInvalid()) << over.status().ToString();
  EXPECT_NE(over.status().message().find("is larger than 4 bytes"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find(path), std::string::npos);
  std::remove(path.c_str());
}

TEST(ReadFileTest, EmptyFileAndMissingFile) {
  const std::string path = WriteTemp("");
  auto pool = MemoryPool::MakeRoot();
  auto empty = ReadFile(path, pool.get(), 0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ((*empty)->size(), 0);
  std::remove(path.c_str());
  auto missing = ReadFile("/nonexistent/dir/x.json", pool.get(), 100);
  ASSERT_TRUE(missing.status().IsIOError()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/x.json"), std::string::npos);
}

}  // namespace
}  // namespace quiver::ipc
