// Issue 35 #7: operator spill files are charged to a DiskBudget (exact
// bytes: what the spill directory holds), a statement past its disk limit
// fails with 53100 naming the limit and leaves no file, and a cancelled
// statement's spill directory goes at the cancel, before its stream does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "quiver/memory/disk_budget.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_tables.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;

// A full sort and a GROUP BY of many groups over TPC-H lineitem (scale
// 0.01, 60,036 rows); both spill under a 2 MiB statement limit.
const char* const kSort =
    "SELECT l_orderkey, l_linenumber, l_comment, l_extendedprice FROM lineitem "
    "ORDER BY l_comment DESC, l_orderkey, l_linenumber";
const char* const kGroupBy =
    "SELECT l_orderkey, l_linenumber, l_comment, count(*), sum(l_extendedprice) FROM lineitem "
    "GROUP BY l_orderkey, l_linenumber, l_comment";

class SpillBudgetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (fs::temp_directory_path() / ("quiver-spill-budget-test-" + std::to_string(::getpid()))).string());
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ + "/tables");
    pool_ = new std::shared_ptr<MemoryPool>(MemoryPool::MakeRoot({"spill-budget-test"}));
    catalog_ = new std::shared_ptr<Catalog>(std::make_shared<Catalog>());
    TpchFilesOptions to;
    to.scale = 0.01;
    to.batch_rows = 4096;
    to.pool = pool_->get();
    ASSERT_OK(RegisterTpchTables(catalog_->get(), *dir_ + "/tables", to).status());
  }
  static void TearDownTestSuite() {
    delete catalog_;
    delete pool_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override {
    spill_root_ = *dir_ + "/spill";
    fs::remove_all(spill_root_);
    fs::create_directories(spill_root_);
  }

  ExecuteOptions Options(std::shared_ptr<DiskBudget> budget) {
    ExecuteOptions eo;
    eo.threads = 1;
    eo.memory_limit_bytes = 2 << 20;
    eo.max_batch_rows = 4096;
    eo.spill_directory = spill_root_;
    eo.disk_budget = std::move(budget);
    eo.spilled_bytes = std::make_shared<std::atomic<int64_t>>(0);
    eo.spilled_files = std::make_shared<std::atomic<int64_t>>(0);
    eo.cancel = std::make_shared<std::atomic<bool>>(false);
    return eo;
  }
  // Bytes of the regular files under the spill root now.
  int64_t BytesOnDisk() const {
    int64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(spill_root_)) {
      if (e.is_regular_file()) n += static_cast<int64_t>(e.file_size());
    }
    return n;
  }
  static std::shared_ptr<DiskBudget> Budget(int64_t limit_bytes) {
    DiskBudgetOptions o;
    o.name = "the statement's spill files";
    o.limit_bytes = limit_bytes;
    o.limit_name = "--spill-limit";
    return DiskBudget::MakeRoot(o).value();
  }

  std::string spill_root_;
  static std::string* dir_;
  static std::shared_ptr<MemoryPool>* pool_;
  static std::shared_ptr<Catalog>* catalog_;
};

std::string* SpillBudgetTest::dir_ = nullptr;
std::shared_ptr<MemoryPool>* SpillBudgetTest::pool_ = nullptr;
std::shared_ptr<Catalog>* SpillBudgetTest::catalog_ = nullptr;

TEST_F(SpillBudgetTest, TheBudgetHoldsExactlyTheBytesOfTheLiveSpillFiles) {
  for (const char* sql : {kSort, kGroupBy}) {
    SCOPED_TRACE(sql);
    auto budget = Budget(-1);
    ExecuteOptions eo = Options(budget);
    auto statement = (*pool_)->MakeChild({.name = "statement"});
    eo.pool = statement.get();
    Engine engine(*catalog_);
    auto stream = engine.Execute(sql, eo);
    ASSERT_OK(stream);
    int64_t rows = 0;
    bool checked = false;
    while (true) {
      auto b = (*stream)->Next();
      ASSERT_OK(b);
      if (!*b) break;
      rows += (**b).num_rows;
      if (!checked) {
        // Between two pulls no write is in progress: the budget holds
        // what the files hold, byte for byte.
        checked = true;
        EXPECT_GT(budget->used_bytes(), 0);
        EXPECT_EQ(budget->used_bytes(), BytesOnDisk());
      }
    }
    EXPECT_EQ(rows, 60036);
    EXPECT_GT(eo.spilled_files->load(), 0);
    EXPECT_GE(budget->peak_bytes(), budget->used_bytes());
    stream->reset();
    EXPECT_EQ(budget->used_bytes(), 0);
    EXPECT_TRUE(fs::is_empty(spill_root_));
  }
}

TEST_F(SpillBudgetTest, AStatementPastItsDiskLimitFailsWith53100AndLeavesNoFile) {
  for (const char* sql : {kSort, kGroupBy}) {
    SCOPED_TRACE(sql);
    constexpr int64_t kLimitBytes = 256 << 10;  // the unlimited runs spill several MiB
    auto budget = Budget(kLimitBytes);
    ExecuteOptions eo = Options(budget);
    auto statement = (*pool_)->MakeChild({.name = "statement"});
    eo.pool = statement.get();
    Engine engine(*catalog_);
    auto stream = engine.Execute(sql, eo);
    ASSERT_OK(stream);
    Status st;
    while (st.ok()) {
      auto b = (*stream)->Next();
      if (!b.ok()) {
        st = b.status();
      } else if (!*b) {
        break;
      }
    }
    ASSERT_FALSE(st.ok()) << "the statement ended within " << kLimitBytes << " bytes of disk";
    EXPECT_EQ(st.sql_state(), "53100") << st.ToString();
    EXPECT_NE(st.message().find("of their limit of 262144 bytes (--spill-limit)"), std::string::npos) << st.ToString();
    // At the error, before the stream goes: no file, no charge.
    EXPECT_TRUE(fs::is_empty(spill_root_)) << "spill files left behind";
    EXPECT_EQ(budget->used_bytes(), 0);
    EXPECT_LE(budget->peak_bytes(), kLimitBytes);
    // The same error again, and the memory back once the stream goes.
    EXPECT_EQ((*stream)->Next().status().sql_state(), "53100");
    stream->reset();
    EXPECT_EQ(statement->held_bytes(), 0);
  }
}

TEST_F(SpillBudgetTest, ACancelledStatementsSpillDirectoryGoesAtTheCancel) {
  auto budget = Budget(-1);
  ExecuteOptions eo = Options(budget);
  auto statement = (*pool_)->MakeChild({.name = "statement"});
  eo.pool = statement.get();
  Engine engine(*catalog_);
  auto stream = engine.Execute(kSort, eo);
  ASSERT_OK(stream);
  auto first = (*stream)->Next();
  ASSERT_OK(first);
  ASSERT_TRUE(*first);
  first->reset();
  EXPECT_FALSE(fs::is_empty(spill_root_));
  EXPECT_GT(budget->used_bytes(), 0);
  eo.cancel->store(true);
  auto next = (*stream)->Next();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kCancelled) << next.status().ToString();
  // The stream is still there (a server's operation keeps it until its
  // producer ends): its files are gone already.
  EXPECT_TRUE(fs::is_empty(spill_root_)) << "spill files left behind by a cancelled sort";
  EXPECT_EQ(budget->used_bytes(), 0);
  stream->reset();
  EXPECT_EQ(statement->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::sql
