// The Arrow C Data and C Stream Interfaces over every gold case of the Arrow
// integration corpus (arrow-testing data/arrow-ipc-stream/integration): the
// .arrow_file read by quiver, exported (schema + each batch) and imported
// back, equals what was read, metadata included; the same through an
// ArrowArrayStream whose consumer moves each batch's columns out and releases
// them in reverse order; and once everything is released the read pool is
// back to zero (every buffer freed exactly once; ASan checks the rest).
#include "cross_test_support.h"
#include "quiver/columnar/c_data.h"

namespace quiver::cross_test {
namespace {

struct CDataGoldCase {
  std::string label;
  fs::path file;
};

std::vector<CDataGoldCase> ListCases() {
  std::vector<CDataGoldCase> out;
  for (const auto& dir : ListDirs(IntegrationDir())) {
    for (const auto& f :
         ListFiles(dir, [](const fs::path& p) { return EndsWith(p.filename().string(), ".arrow_file"); })) {
      out.push_back({dir.filename().string() + "_" + f.stem().string(), f});
    }
  }
  return out;
}

void PrintTo(const CDataGoldCase& c, std::ostream* os) { *os << c.label; }

class CDataGoldTest : public ::testing::TestWithParam<CDataGoldCase> {
 protected:
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_P(CDataGoldTest, ExportImportRoundTripsEveryBatch) {
  const auto& c = GetParam();
  {
    ASSERT_OK_AND_ASSIGN(IpcTable table, ReadIpcPath(c.file, pool_.get()));
    const CompareOptions exact = ExactCompare(/*check_metadata=*/true);

    // Schema and batches one by one.
    ArrowSchema cs{};
    ASSERT_OK(ExportSchema(*table.schema, &cs));
    ASSERT_OK_AND_ASSIGN(SchemaPtr schema, ImportSchema(&cs));
    ASSERT_OK(CompareSchemas(*table.schema, *schema, exact));
    std::vector<RecordBatchPtr> back;
    for (const auto& batch : table.batches) {
      ArrowArray ca{};
      ASSERT_OK(ExportRecordBatch(*batch, &ca));
      ASSERT_OK_AND_ASSIGN(auto b, ImportRecordBatch(&ca, schema));
      ASSERT_OK(ValidateBatch(*b, ValidationLevel::kFull));
      back.push_back(std::move(b));
    }
    IpcTable back_table;
    back_table.schema = schema;
    back_table.batches = back;
    EXPECT_OK(CompareTables(table.schema, table.batches, back_table, exact));

    // Through a stream, with a consumer that moves the columns out of each
    // batch and releases them last-first, after the batch itself.
    ArrowArrayStream stream{};
    ASSERT_OK(ExportRecordBatchStream(std::make_unique<BatchVectorStream>(table.schema, table.batches), &stream));
    ArrowSchema ss{};
    ASSERT_EQ(stream.get_schema(&stream, &ss), 0);
    ss.release(&ss);
    size_t n = 0;
    while (true) {
      ArrowArray a{};
      ASSERT_EQ(stream.get_next(&stream, &a), 0) << stream.get_last_error(&stream);
      if (a.release == nullptr) break;
      ASSERT_LT(n, table.batches.size());
      EXPECT_EQ(a.length, table.batches[n]->num_rows);
      std::vector<ArrowArray> moved;
      for (int64_t i = 0; i < a.n_children; ++i) {
        moved.push_back(*a.children[i]);
        a.children[i]->release = nullptr;
      }
      a.release(&a);
      for (auto it = moved.rbegin(); it != moved.rend(); ++it) it->release(&*it);
      ++n;
    }
    EXPECT_EQ(n, table.batches.size());
    stream.release(&stream);

    // And the importer of streams.
    ASSERT_OK(ExportRecordBatchStream(std::make_unique<BatchVectorStream>(table.schema, table.batches), &stream));
    ASSERT_OK_AND_ASSIGN(auto imported, ImportRecordBatchStream(&stream));
    IpcTable streamed;
    streamed.schema = imported->schema();
    while (true) {
      ASSERT_OK_AND_ASSIGN(auto b, imported->Next());
      if (!b) break;
      streamed.batches.push_back(std::move(b));
    }
    EXPECT_OK(CompareTables(table.schema, table.batches, streamed, exact));
  }
  EXPECT_EQ(pool_->held_bytes(), 0) << "an exported buffer was not released";
}

INSTANTIATE_TEST_SUITE_P(Integration, CDataGoldTest, ::testing::ValuesIn(ListCases()),
                         [](const ::testing::TestParamInfo<CDataGoldCase>& info) {
                           return TestNameOf(info.param.label);
                         });

TEST(CDataGoldCorpus, IsPresent) { EXPECT_GE(ListCases().size(), 72u); }

}  // namespace
}  // namespace quiver::cross_test
