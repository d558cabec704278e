// Tests of DiskBudget (exact byte counts up a tree, the 53100 message naming
// the limit, concurrent reservations) and of the spill directories' names and
// start-up sweep (memory/spill_directory.h).
#include "quiver/memory/disk_budget.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "quiver/memory/spill_directory.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<DiskBudget> Budget(std::string name, int64_t limit, std::string limit_name,
                                   std::shared_ptr<DiskBudget> parent = nullptr) {
  DiskBudgetOptions o;
  o.name = std::move(name);
  o.limit_bytes = limit;
  o.limit_name = std::move(limit_name);
  return DiskBudget::Make(o, std::move(parent)).value();
}

TEST(DiskBudget, CountsExactBytesUpTheTreeAndRefusesPastALimitWith53100) {
  auto server = Budget("the server's spill files", 1000, "--spill-limit");
  auto a = Budget("the statement's spill files", 600, "--statement-spill-limit", server);
  auto b = Budget("the statement's spill files", -1, "--statement-spill-limit", server);
  ASSERT_OK(a->Reserve(600, "sort run"));
  EXPECT_EQ(a->used_bytes(), 600);
  EXPECT_EQ(server->used_bytes(), 600);
  // The statement's own limit: nothing is charged anywhere.
  Status st = a->Reserve(1, "sort run");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIOError);
  EXPECT_EQ(st.sql_state(), "53100");
  EXPECT_EQ(st.message(),
            "disk limit: sort run needs 1 more bytes on disk; the statement's spill files hold 600 of their limit of "
            "600 bytes (--statement-spill-limit)");
  EXPECT_EQ(a->used_bytes(), 600);
  EXPECT_EQ(server->used_bytes(), 600);
  // The server's limit, through another statement: rolled back on b too.
  ASSERT_OK(b->Reserve(400, "hash aggregate partition 3"));
  EXPECT_EQ(server->used_bytes(), 1000);
  st = b->Reserve(1, "a result chunk");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.sql_state(), "53100");
  EXPECT_EQ(st.message(),
            "disk limit: a result chunk needs 1 more bytes on disk; the server's spill files hold 1000 of their "
            "limit of 1000 bytes (--spill-limit)");
  EXPECT_EQ(b->used_bytes(), 400);
  EXPECT_EQ(b->total_reserved_bytes(), 400);
  EXPECT_EQ(server->used_bytes(), 1000);
  a->Release(250);
  EXPECT_EQ(a->used_bytes(), 350);
  EXPECT_EQ(server->used_bytes(), 750);
  ASSERT_OK(b->Reserve(250, "grace join partition 0"));
  EXPECT_EQ(server->used_bytes(), 1000);
  EXPECT_EQ(server->peak_bytes(), 1000);
  EXPECT_EQ(b->peak_bytes(), 650);
  // A statement that ends holding bytes gives them back to the server.
  a.reset();
  EXPECT_EQ(server->used_bytes(), 650);
  b->Release(650);
  EXPECT_EQ(server->used_bytes(), 0);
  EXPECT_EQ(server->total_reserved_bytes(), 1250);
  // Zero always fits; a negative count and a bad limit are refused.
  auto none = Budget("x", 0, "--spill-limit");
  EXPECT_OK(none->Reserve(0, "w"));
  EXPECT_EQ(none->Reserve(1, "w").sql_state(), "53100");
  EXPECT_EQ(none->Reserve(-1, "w").code(), StatusCode::kInvalid);
  DiskBudgetOptions bad;
  bad.limit_bytes = -2;
  EXPECT_FALSE(DiskBudget::MakeRoot(bad).ok());
}

TEST(DiskBudget, ReservationsGiveTheirBytesBack) {
  auto root = Budget("r", 100, "--spill-limit");
  {
    DiskReservation r(root);
    ASSERT_OK(r.Grow(70, "w"));
    EXPECT_FALSE(r.Grow(31, "w").ok());
    EXPECT_EQ(r.bytes(), 70);
    r.Shrink(20);
    EXPECT_EQ(root->used_bytes(), 50);
    DiskReservation moved(std::move(r));
    EXPECT_EQ(r.bytes(), 0);
    EXPECT_EQ(moved.bytes(), 50);
    EXPECT_EQ(root->used_bytes(), 50);
  }
  EXPECT_EQ(root->used_bytes(), 0);
}

TEST(DiskBudget, ConcurrentReservationsNeverPassTheLimit) {
  auto root = Budget("r", 10000, "--spill-limit");
  std::atomic<int64_t> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        if (root->Reserve(7, "w").ok()) granted += 7;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(root->used_bytes(), granted.load());
  EXPECT_LE(granted.load(), 10000);
  EXPECT_GT(granted.load(), 10000 - 7);
  EXPECT_EQ(root->peak_bytes(), granted.load());
}

TEST(SpillDirectory, NamesMatchOnlyTheExactPattern) {
  EXPECT_EQ(SpillDirectoryOwner("quiver-spill-1234-0"), 1234);
  EXPECT_EQ(SpillDirectoryOwner("quiver-spill-7-42"), 7);
  for (const char* other :
       {"quiver-spill-", "quiver-spill-12", "quiver-spill-12-", "quiver-spill--1-0", "quiver-spill-0-0",
        "quiver-spill-12-3x", "quiver-spill-a1-0", "quiver-spill-aB3xYz", "quiver-spill-99999999999999999999-0",
        "xquiver-spill-12-0", "quiver-spill-12-0/x", "quiver-tpch-12", "quiver-spill-+12-0"}) {
    EXPECT_EQ(SpillDirectoryOwner(other), -1) << other;
  }
}

// A pid that is not running: a child that has exited and been reaped.
pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST(SpillDirectory, TheSweepRemovesOnlyDeadProcessesDirectories) {
  const fs::path root = fs::temp_directory_path() / ("quiver-sweep-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const pid_t dead = DeadPid();
  ASSERT_NE(::kill(dead, 0), 0);
  const fs::path dead_dir = root / ("quiver-spill-" + std::to_string(dead) + "-0");
  const fs::path dead_dir2 = root / ("quiver-spill-" + std::to_string(dead) + "-17");
  const fs::path live_dir = root / ("quiver-spill-" + std::to_string(::getppid()) + "-0");  // a live process
  const fs::path own_dir = root / ("quiver-spill-" + std::to_string(::getpid()) + "-3");
  const fs::path unrelated = root / "unrelated";
  const fs::path lookalike = root / ("quiver-spill-" + std::to_string(dead) + "-0x");
  const fs::path dead_file = root / ("quiver-spill-" + std::to_string(dead) + "-1");  // a file, not a directory
  for (const auto& d : {dead_dir, dead_dir2, live_dir, own_dir, unrelated, lookalike})
    fs::create_directories(d / "sub");
  auto write = [](const fs::path& p, size_t n) { std::ofstream(p) << std::string(n, 'x'); };
  write(dead_dir / "spill-0.arrows", 1000);
  write(dead_dir / "sub" / "spill-1.arrows", 24);
  write(dead_dir2 / "spill-0.arrows", 100);
  write(live_dir / "spill-0.arrows", 10);
  write(unrelated / "keep", 10);
  write(dead_file, 5);
  // A symlink named like a dead process's directory, pointing at a
  // directory that must survive.
  const fs::path link = root / ("quiver-spill-" + std::to_string(dead) + "-2");
  fs::create_directory_symlink(unrelated, link);

  const SpillSweepReport r = SweepDeadSpillDirectories(root.string());
  EXPECT_EQ(r.directories, 2);
  EXPECT_EQ(r.bytes, 1124);
  EXPECT_FALSE(fs::exists(dead_dir));
  EXPECT_FALSE(fs::exists(dead_dir2));
  EXPECT_TRUE(fs::exists(live_dir / "spill-0.arrows"));
  EXPECT_TRUE(fs::exists(own_dir));
  EXPECT_TRUE(fs::exists(unrelated / "keep"));
  EXPECT_TRUE(fs::exists(lookalike));
  EXPECT_TRUE(fs::exists(dead_file));
  EXPECT_TRUE(fs::is_symlink(link));
  // Again: nothing more to do. Then this process's own, on request only.
  EXPECT_EQ(SweepDeadSpillDirectories(root.string()).directories, 0);
  EXPECT_EQ(SweepDeadSpillDirectories(root.string(), /*only_own=*/true).directories, 1);
  EXPECT_FALSE(fs::exists(own_dir));
  EXPECT_TRUE(fs::exists(live_dir));
  // A root that does not exist is an empty sweep.
  EXPECT_EQ(SweepDeadSpillDirectories((root / "missing").string()).directories, 0);
  fs::remove_all(root);
}

TEST(SpillDirectory, MakeSpillDirectoryNamesItAfterThisProcess) {
  const fs::path root = fs::temp_directory_path() / ("quiver-mkspill-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  auto a = MakeSpillDirectory(root.string());
  auto b = MakeSpillDirectory(root.string());
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(SpillDirectoryOwner(fs::path(*a).filename().string()), ::getpid());
  EXPECT_EQ(fs::status(*a).permissions() & fs::perms::all, fs::perms::owner_all);
  auto missing = MakeSpillDirectory((root / "missing").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing"), std::string::npos);
  fs::remove_all(root);
}

// Issue 35 #7: the generated TPC-H directories of dead processes
// ("quiver-serve-tpch-<pid>", "quiver-tpch-<pid>") go too; a live
// process's, this process's, a look-alike and another prefix's stay.
TEST(SpillDirectory, TheSweepOfPerProcessDirectoriesMatchesTheWholeName) {
  EXPECT_EQ(ProcessDirectoryOwner("quiver-serve-tpch-123", "quiver-serve-tpch-"), 123);
  for (const char* other :
       {"quiver-serve-tpch-", "quiver-serve-tpch-12x", "quiver-serve-tpch--12", "quiver-serve-tpch-0",
        "quiver-serve-tpch-99999999999999999999", "xquiver-serve-tpch-12", "quiver-tpch-12"}) {
    EXPECT_EQ(ProcessDirectoryOwner(other, "quiver-serve-tpch-"), -1) << other;
  }
  EXPECT_EQ(ProcessDirectoryOwner("12", ""), -1) << "an empty prefix matches nothing";
  const fs::path root = fs::temp_directory_path() / ("quiver-tpch-sweep-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const pid_t dead = DeadPid();
  ASSERT_NE(::kill(dead, 0), 0);
  const std::string d = std::to_string(dead);
  const fs::path dead_serve = root / ("quiver-serve-tpch-" + d);
  const fs::path dead_sql = root / ("quiver-tpch-" + d);
  const fs::path live = root / ("quiver-serve-tpch-" + std::to_string(::getppid()));
  const fs::path own = root / ("quiver-serve-tpch-" + std::to_string(::getpid()));
  const fs::path lookalike = root / ("quiver-serve-tpch-" + d + ".bak");
  for (const auto& p : {dead_serve, dead_sql, live, own, lookalike}) fs::create_directories(p);
  std::ofstream(dead_serve / "lineitem.arrow") << std::string(3000, 'x');
  std::ofstream(dead_sql / "orders.arrow") << std::string(70, 'x');
  const SpillSweepReport serve = SweepDeadProcessDirectories(root.string(), "quiver-serve-tpch-");
  EXPECT_EQ(serve.directories, 1);
  EXPECT_EQ(serve.bytes, 3000);
  EXPECT_FALSE(fs::exists(dead_serve));
  EXPECT_TRUE(fs::exists(dead_sql)) << "another prefix";
  const SpillSweepReport sql = SweepDeadProcessDirectories(root.string(), "quiver-tpch-");
  EXPECT_EQ(sql.directories, 1);
  EXPECT_EQ(sql.bytes, 70);
  EXPECT_FALSE(fs::exists(dead_sql));
  for (const auto& p : {live, own, lookalike}) EXPECT_TRUE(fs::exists(p)) << p;
  EXPECT_EQ(SweepDeadProcessDirectories(root.string(), "").directories, 0);
  fs::remove_all(root);
}

}  // namespace
}  // namespace quiver
