// The Parquet writer (formats/parquet/file_writer.h): every flat type
// written and read back through quiver's own reader equal (NULLs, empty
// batches, several row groups and pages, dictionary and PLAIN, each codec),
// the statistics it stores, the RLE hybrid encoder against the decoder,
// and clear errors for bad options and unsupported columns. DuckDB reading
// these files is tests/formats/parquet_writer_vs_duckdb.mjs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/concatenate.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/parquet/rle_encoder.h"
#include "quiver/formats/parquet/rle_hybrid.h"
#include "quiver/formats/sink.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

using testing::BitmapOf;
using testing::BufferOf;
using testing::BytesOf;
using testing::MakeArray;
using testing::PrimitiveArray;
template <typename T>
using Opt = std::vector<std::optional<T>>;

constexpr int kRows = 50;

/// Row i is NULL when i % 7 == 3 (nullable columns).
bool NullRow(int i) { return i % 7 == 3; }

template <typename T, typename F>
Opt<T> Values(F&& f, bool nulls = true) {
  Opt<T> v;
  for (int i = 0; i < kRows; ++i) {
    if (nulls && NullRow(i)) {
      v.push_back(std::nullopt);
    } else {
      v.push_back(static_cast<T>(f(i)));
    }
  }
  return v;
}

Opt<std::string> Strings(bool many) {
  Opt<std::string> v;
  for (int i = 0; i < kRows; ++i) {
    if (NullRow(i)) {
      v.push_back(std::nullopt);
    } else if (many) {
      v.push_back("value-" + std::to_string(i * 7919) + std::string(static_cast<size_t>(i % 5), 'x'));
    } else {
      v.push_back(std::string(i % 3 == 0 ? "" : i % 3 == 1 ? "alpha" : "\xce\xb2\xce\xb5\xcf\x84\xce\xb1"));
    }
  }
  return v;
}

ArrayDataPtr BinaryArray(MemoryPool* pool, DataTypePtr type, const Opt<std::string>& values) {
  auto s = testing::StringArray<int32_t>(pool, values);
  auto a = std::make_shared<ArrayData>(*s);
  a->type = std::move(type);
  return a;
}

/// A column as written and as quiver's reader gives it back.
struct Column {
  FieldPtr field;
  ArrayDataPtr written, expected;
};

class ParquetWriterTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  std::vector<Column> EveryType() {
    MemoryPool* p = pool();
    std::vector<Column> c;
    auto same = [&](std::string name, DataTypePtr type, ArrayDataPtr a, bool nullable = true) {
      c.push_back({field(std::move(name), std::move(type), nullable), a, a});
    };
    same("b", boolean(), testing::BoolArray(p, Values<bool>([](int i) { return i % 3 == 0; })));
    same("i8", int8(),
         PrimitiveArray<int8_t>(p, int8(), Values<int8_t>([](int i) { return i % 2 ? -128 + i : 127 - i; })));
    same("i16", int16(), PrimitiveArray<int16_t>(p, int16(), Values<int16_t>([](int i) { return i * 1000 - 32768; })));
    same("i32", int32(),
         PrimitiveArray<int32_t>(p, int32(), Values<int32_t>([](int i) { return (i % 4) * 1000003 - 7; })));
    same("i32_required", int32(),
         PrimitiveArray<int32_t>(p, int32(), Values<int32_t>([](int i) { return i * i; }, false)), false);
    same("i64", int64(), PrimitiveArray<int64_t>(p, int64(), Values<int64_t>([](int i) {
                                                   return i == 0 ? std::numeric_limits<int64_t>::min()
                                                                 : int64_t{i} * 123456789012LL;
                                                 })));
    same("u8", uint8(), PrimitiveArray<uint8_t>(p, uint8(), Values<uint8_t>([](int i) { return 255 - i; })));
    same("u16", uint16(), PrimitiveArray<uint16_t>(p, uint16(), Values<uint16_t>([](int i) { return 65535 - i * 3; })));
    same("u32", uint32(),
         PrimitiveArray<uint32_t>(p, uint32(), Values<uint32_t>([](int i) { return 4294967295u - i; })));
    same("u64", uint64(), PrimitiveArray<uint64_t>(p, uint64(), Values<uint64_t>([](int i) {
                                                     return i % 2 ? std::numeric_limits<uint64_t>::max() - i
                                                                  : uint64_t(i);
                                                   })));
    same("f32", float32(), PrimitiveArray<float>(p, float32(), Values<float>([](int i) { return i * 0.5f - 3; })));
    same("f64", float64(), PrimitiveArray<double>(p, float64(), Values<double>([](int i) {
                                                    return i == 5 ? std::nan("") : i == 6 ? -0.0 : i * 1.25e100 - 1;
                                                  })));
    same("f16", float16(), PrimitiveArray<uint16_t>(p, float16(), Values<uint16_t>([](int i) { return 0x3C00 + i; })));
    same("s", utf8(), testing::StringArray<int32_t>(p, Strings(false)));
    same("s_many", utf8(), testing::StringArray<int32_t>(p, Strings(true)));
    c.push_back({field("s_large", large_utf8()), testing::StringArray<int64_t>(p, Strings(false)),
                 testing::StringArray<int32_t>(p, Strings(false))});
    same("bin", binary(), BinaryArray(p, binary(), Strings(true)));
    same("d32", date32(), PrimitiveArray<int32_t>(p, date32(), Values<int32_t>([](int i) { return 19000 + i - 25; })));
    same("ts_ms_utc", timestamp(TimeUnit::kMilli, "UTC"),
         PrimitiveArray<int64_t>(p, timestamp(TimeUnit::kMilli, "UTC"),
                                 Values<int64_t>([](int i) { return 1700000000000LL + i * 1001; })));
    same("ts_us", timestamp(TimeUnit::kMicro),
         PrimitiveArray<int64_t>(p, timestamp(TimeUnit::kMicro), Values<int64_t>([](int i) { return -5 + i * 3; })));
    same("ts_ns_utc", timestamp(TimeUnit::kNano, "UTC"),
         PrimitiveArray<int64_t>(p, timestamp(TimeUnit::kNano, "UTC"),
                                 Values<int64_t>([](int i) { return 1700000000123456789LL + i; })));
    c.push_back({field("ts_s", timestamp(TimeUnit::kSecond)),
                 PrimitiveArray<int64_t>(p, timestamp(TimeUnit::kSecond), Values<int64_t>([](int i) { return i - 3; })),
                 PrimitiveArray<int64_t>(p, timestamp(TimeUnit::kMilli),
                                         Values<int64_t>([](int i) { return (i - 3) * 1000; }))});
    auto dec = [&](int prec, int scale, auto f) {
      auto t = decimal(128, prec, scale);
      same("dec" + std::to_string(prec), t, PrimitiveArray<__int128>(p, t, Values<__int128>(f)));
    };
    dec(5, 2, [](int i) { return __int128(i * 997 - 20000); });
    dec(15, 3, [](int i) { return __int128(i) * 12345678901LL - 300000000000LL; });
    dec(30, 4, [](int i) { return (__int128(i) * 1000000007LL * 1000000007LL) * (i % 2 ? -1 : 1); });
    dec(38, 0, [](int i) {
      __int128 max = 1;
      for (int k = 0; k < 38; ++k) max *= 10;
      return i % 2 ? max - 1 - i : -(max - 1) + i;
    });
    auto fsb = fixed_size_binary(3);
    same("fsb", fsb,
         PrimitiveArray<std::array<uint8_t, 3>>(
             p, fsb, Values<std::array<uint8_t, 3>>([](int i) {
               return std::array<uint8_t, 3>{uint8_t(i), uint8_t(255 - i), uint8_t(i % 2)};
             })));
    // dictionary<int32, utf8> is written as strings (dictionary-encoded).
    {
      auto dict = testing::StringArray<int32_t>(p, {"red", "green", "blue"});
      Opt<int32_t> idx = Values<int32_t>([](int i) { return i % 3; });
      auto indices = PrimitiveArray<int32_t>(p, int32(), idx);
      auto a = std::make_shared<ArrayData>(*indices);
      a->type = dictionary(int32(), utf8());
      a->dictionary = dict;
      Opt<std::string> decoded;
      for (const auto& v : idx)
        decoded.push_back(v ? std::optional<std::string>(*v == 0 ? "red" : *v == 1 ? "green" : "blue") : std::nullopt);
      c.push_back({field("dict", a->type), a, testing::StringArray<int32_t>(p, decoded)});
    }
    return c;
  }

  /// Writes `columns` in batches of `rows_per_batch` (plus an empty batch)
  /// and returns the file's bytes.
  std::vector<uint8_t> Write(const std::vector<Column>& columns, const WriterOptions& o, int rows_per_batch) {
    std::vector<FieldPtr> fields;
    for (const auto& c : columns) fields.push_back(c.field);
    auto schema = std::make_shared<Schema>();
    schema->fields = fields;
    formats::MemorySink sink;
    auto writer = FileWriter::Make(schema, &sink, o);
    EXPECT_OK(writer);
    if (!writer.ok()) return {};
    for (int start = 0; start <= kRows; start += rows_per_batch) {
      const int n = std::min(rows_per_batch, kRows - start);
      std::vector<ArrayDataPtr> arrays;
      for (const auto& c : columns) {
        auto s = SliceArray(c.written, start, n);
        EXPECT_OK(s);
        arrays.push_back(*s);
      }
      EXPECT_OK((*writer)->WriteBatch(testing::Batch(schema, arrays)));
      if (start == 0) {  // an empty batch among the others
        std::vector<ArrayDataPtr> empty;
        for (const auto& c : columns) empty.push_back(*SliceArray(c.written, 0, 0));
        EXPECT_OK((*writer)->WriteBatch(testing::Batch(schema, empty)));
      }
    }
    EXPECT_OK((*writer)->Close());
    return sink.bytes();
  }

  std::unique_ptr<FileReader> Open(const std::vector<uint8_t>& bytes) {
    auto buf = Buffer::CopyOf(pool(), bytes);
    EXPECT_OK(buf);
    auto reader = FileReader::Open(std::make_shared<formats::MemorySource>(*buf, "written.parquet"), pool());
    EXPECT_OK(reader);
    return reader.ok() ? std::move(*reader) : nullptr;
  }

  void ExpectRoundTrip(const std::vector<Column>& columns, const std::vector<uint8_t>& bytes) {
    auto reader = Open(bytes);
    ASSERT_NE(reader, nullptr);
    ASSERT_EQ(reader->schema()->num_fields(), static_cast<int>(columns.size()));
    ASSERT_EQ(reader->num_rows(), kRows);
    std::vector<std::vector<ArrayDataPtr>> read(columns.size());
    for (int g = 0; g < reader->num_row_groups(); ++g) {
      auto batch = reader->ReadRowGroup(g, {}, pool());
      ASSERT_OK(batch);
      for (size_t c = 0; c < columns.size(); ++c) read[c].push_back((*batch)->columns[c]);
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      const Field& f = *reader->schema()->fields[c];
      EXPECT_EQ(f.name, columns[c].field->name);
      EXPECT_EQ(f.nullable, columns[c].field->nullable) << f.name;
      auto all = ConcatenateArrays(read[c], pool());
      ASSERT_OK(all);
      CompareOptions exact;
      exact.float_abs_tolerance = exact.float_rel_tolerance = 0;
      EXPECT_OK(CompareArrays(*columns[c].expected, **all, exact, f.name));
    }
    // The same row groups decoded in slices (OpenRowGroup), of sizes that
    // end inside pages and across page boundaries, give the same values.
    for (int64_t slice : {1, 3, 7, 1000}) {
      std::vector<std::vector<ArrayDataPtr>> sliced(columns.size());
      for (int g = 0; g < reader->num_row_groups(); ++g) {
        auto slices = reader->OpenRowGroup(g, {}, pool());
        ASSERT_OK(slices);
        int64_t left = reader->metadata().row_groups[g].num_rows;
        EXPECT_EQ((*slices)->rows_left(), left);
        while (true) {
          auto batch = (*slices)->Next(slice);
          ASSERT_OK(batch);
          if (!*batch) break;
          EXPECT_EQ((*batch)->num_rows, std::min(slice, left));
          left -= (*batch)->num_rows;
          for (size_t c = 0; c < columns.size(); ++c) {
            EXPECT_EQ((*batch)->columns[c]->length, (*batch)->num_rows);
            sliced[c].push_back((*batch)->columns[c]);
          }
        }
        EXPECT_EQ(left, 0);
      }
      for (size_t c = 0; c < columns.size(); ++c) {
        auto all = ConcatenateArrays(sliced[c], pool());
        ASSERT_OK(all);
        CompareOptions exact;
        exact.float_abs_tolerance = exact.float_rel_tolerance = 0;
        EXPECT_OK(CompareArrays(*columns[c].expected, **all, exact,
                                reader->schema()->fields[c]->name + " in slices of " + std::to_string(slice)));
      }
    }
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

struct Case {
  const char* codec;
  bool dictionary;
};

class ParquetWriterRoundTrip : public ParquetWriterTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ParquetWriterRoundTrip, EveryFlatTypeWithNullsRowGroupsAndPages) {
  const auto columns = EveryType();
  WriterOptions o;
  o.pool = pool();
  o.codec = *ParseWriterCodec(GetParam().codec);
  o.dictionary = GetParam().dictionary;
  o.row_group_rows = 17;                // 50 rows: row groups of 17, 17, 16
  o.data_page_max_rows = 5;             // several pages per chunk
  o.dictionary_page_limit_bytes = 200;  // s_many and bin pass it: PLAIN
  const auto bytes = Write(columns, o, 12);
  ExpectRoundTrip(columns, bytes);
  auto reader = Open(bytes);
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(reader->num_row_groups(), 3);
  EXPECT_EQ(reader->metadata().row_groups[0].num_rows, 17);
  EXPECT_EQ(reader->metadata().row_groups[2].num_rows, 16);
  // Dictionary encoding where asked and the dictionary stays small.
  const auto& chunks = reader->metadata().row_groups[0].columns;
  auto encodings_of = [&](const std::string& name) {
    for (const auto& ch : chunks) {
      if (ch.meta_data->path_in_schema[0] == name) return ch.meta_data->encodings;
    }
    return std::vector<int32_t>{};
  };
  const int32_t dict = static_cast<int32_t>(Encoding::kRleDictionary);
  auto has = [](const std::vector<int32_t>& v, int32_t e) { return std::find(v.begin(), v.end(), e) != v.end(); };
  EXPECT_EQ(has(encodings_of("s"), dict), GetParam().dictionary);
  EXPECT_EQ(has(encodings_of("dict"), dict), GetParam().dictionary);
  EXPECT_FALSE(has(encodings_of("s_many"), dict));
  EXPECT_FALSE(has(encodings_of("b"), dict));
  for (const auto& ch : chunks) EXPECT_EQ(ch.meta_data->codec, o.codec);
}

INSTANTIATE_TEST_SUITE_P(Codecs, ParquetWriterRoundTrip,
                         ::testing::Values(Case{"none", true}, Case{"snappy", true}, Case{"zstd", true},
                                           Case{"snappy", false}, Case{"none", false}),
                         [](const auto& info) {
                           return std::string(info.param.codec) + (info.param.dictionary ? "_dictionary" : "_plain");
                         });

TEST_F(ParquetWriterTest, StatisticsAsTheSpecSays) {
  auto columns = EveryType();
  WriterOptions o;
  o.pool = pool();
  const auto bytes = Write(columns, o, 50);
  auto reader = Open(bytes);
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(reader->num_row_groups(), 1);
  std::map<std::string, Statistics> st;
  for (const auto& ch : reader->metadata().row_groups[0].columns) {
    st[ch.meta_data->path_in_schema[0]] = *ch.meta_data->statistics;
  }
  auto i32 = [](const std::string& s) {
    int32_t v;
    EXPECT_EQ(s.size(), 4u);
    std::memcpy(&v, s.data(), 4);
    return v;
  };
  // 50 rows, NULL where i % 7 == 3: rows 3, 10, 17, 24, 31, 38, 45.
  EXPECT_EQ(st["i32"].null_count, 7);
  EXPECT_EQ(st["i32_required"].null_count, 0);
  EXPECT_EQ(i32(*st["i32_required"].min_value), 0);
  EXPECT_EQ(i32(*st["i32_required"].max_value), 49 * 49);
  EXPECT_EQ(i32(*st["i32_required"].min), 0);  // signed: the deprecated fields too
  EXPECT_EQ(i32(*st["i16"].min_value), -32768);
  // Unsigned: min_value / max_value in unsigned order, no deprecated fields.
  EXPECT_EQ(static_cast<uint32_t>(i32(*st["u32"].max_value)), 4294967295u);
  EXPECT_FALSE(st["u32"].min.has_value());
  EXPECT_FALSE(st["s"].max.has_value());
  EXPECT_EQ(*st["s"].min_value, "");
  EXPECT_EQ(*st["s"].max_value, "\xce\xb2\xce\xb5\xcf\x84\xce\xb1");  // bytes compare unsigned: UTF-8 above ASCII
  // Doubles: NaN left out; -0.0 as minimum only when it is the minimum.
  double lo, hi;
  std::memcpy(&lo, st["f64"].min_value->data(), 8);
  std::memcpy(&hi, st["f64"].max_value->data(), 8);
  EXPECT_EQ(lo, -1);
  EXPECT_EQ(hi, 49 * 1.25e100 - 1);
  // DECIMAL(38) in FIXED_LEN_BYTE_ARRAY: big-endian, signed order, no deprecated fields.
  EXPECT_EQ(st["dec38"].min_value->size(), 16u);
  EXPECT_EQ(static_cast<uint8_t>((*st["dec38"].min_value)[0]), 0xB4);  // -(10^38 - 1) = 0xB4C4B357...01
  EXPECT_EQ(static_cast<uint8_t>((*st["dec38"].max_value)[0]), 0x4B);  // 10^38 - 2 = 0x4B3B4CA8...FE
  EXPECT_FALSE(st["dec38"].min.has_value());
  EXPECT_FALSE(st["f16"].min_value.has_value());
  EXPECT_EQ(st["f16"].null_count, 7);
}

TEST_F(ParquetWriterTest, NoRowsGivesAReadableFileWithTheSchema) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("a", int64()), field("s", utf8(), false)};
  formats::MemorySink sink;
  WriterOptions o;
  o.pool = pool();
  auto w = FileWriter::Make(schema, &sink, o);
  ASSERT_OK(w);
  ASSERT_OK((*w)->Close());
  auto reader = Open(sink.bytes());
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->num_rows(), 0);
  EXPECT_EQ(reader->num_row_groups(), 0);
  EXPECT_TRUE(reader->schema()->Equals(*schema)) << reader->schema()->ToString();
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "Close called twice", (*w)->Close());
}

TEST_F(ParquetWriterTest, RowGroupsCutByBytes) {
  auto columns = EveryType();
  WriterOptions o;
  o.pool = pool();
  o.row_group_bytes = 2000;  // the 50 rows hold several KiB of buffers
  const auto bytes = Write(columns, o, 50);
  ExpectRoundTrip(columns, bytes);
  auto reader = Open(bytes);
  ASSERT_NE(reader, nullptr);
  EXPECT_GT(reader->num_row_groups(), 2);
}

TEST_F(ParquetWriterTest, BadOptionsAndColumnsAreClearErrors) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("a", int64())};
  formats::MemorySink sink;
  WriterOptions o;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "no memory pool", FileWriter::Make(schema, &sink, o));
  o.pool = pool();
  o.row_group_rows = 0;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "row_group_rows 0 (expected >= 1)", FileWriter::Make(schema, &sink, o));
  o.row_group_rows = 10;
  o.codec = static_cast<int32_t>(Codec::kGzip);
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "codec GZIP (expected snappy, zstd or none)", FileWriter::Make(schema, &sink, o));
  o.codec = static_cast<int32_t>(Codec::kZstd);
  o.zstd_level = 40;
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "zstd level 40", FileWriter::Make(schema, &sink, o));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "Parquet compression 'lz4' (expected snappy, zstd or none)",
                             ParseWriterCodec("lz4"));
  EXPECT_EQ(*ParseWriterCodec("ZSTD"), static_cast<int32_t>(Codec::kZstd));
  o.zstd_level = 3;
  auto nested = std::make_shared<Schema>();
  nested->fields = {field("a", int64()), field("l", list(field("item", int32())))};
  EXPECT_RAISES_WITH_MESSAGE(NotImplemented, "column 'l' of type list<item: int32>",
                             FileWriter::Make(nested, &sink, o));
  // A NULL in a non-nullable field.
  auto required = std::make_shared<Schema>();
  required->fields = {field("r", int32(), false)};
  auto w = FileWriter::Make(required, &sink, o);
  ASSERT_OK(w);
  o.row_group_rows = 1;
  EXPECT_OK((*w)->WriteBatch(testing::Batch(required, {testing::Int32Array(pool(), {1, std::nullopt})})));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "column 'r' is not nullable but holds 1 NULLs", (*w)->Close());
  // A batch of another type.
  auto w2 = FileWriter::Make(required, &sink, o);
  ASSERT_OK(w2);
  auto wrong = std::make_shared<RecordBatch>();
  wrong->schema = required;
  wrong->num_rows = 1;
  wrong->columns = {testing::Int64Array(pool(), {1})};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "column 'r' is int64 in a batch, int32 in the schema", (*w2)->WriteBatch(wrong));
}

TEST_F(ParquetWriterTest, MemoryComesFromThePoolAndGoesBack) {
  auto columns = EveryType();
  MemoryPoolOptions po;
  po.name = "parquet-write";
  auto child = pool_->MakeChild(po);
  WriterOptions o;
  o.pool = child.get();
  o.codec = static_cast<int32_t>(Codec::kZstd);
  Write(columns, o, 50);
  EXPECT_GT(child->peak_bytes(), 0);
  EXPECT_EQ(child->held_bytes(), 0);
}

TEST_F(ParquetWriterTest, APoolLimitStopsTheWriterWithOutOfMemory) {
  auto columns = EveryType();
  MemoryPoolOptions po;
  po.name = "parquet-write";
  po.limit_bytes = 4096;  // less than the dictionary index's first charge
  auto child = pool_->MakeChild(po);
  std::vector<FieldPtr> fields;
  std::vector<ArrayDataPtr> arrays;
  for (const auto& c : columns) {
    fields.push_back(c.field);
    arrays.push_back(c.written);
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = fields;
  formats::MemorySink sink;
  WriterOptions o;
  o.pool = child.get();
  auto w = FileWriter::Make(schema, &sink, o);
  ASSERT_OK(w);
  ASSERT_OK((*w)->WriteBatch(testing::Batch(schema, arrays)));
  EXPECT_RAISES_WITH_MESSAGE(OutOfMemory, "parquet-write", (*w)->Close());
  EXPECT_EQ(child->held_bytes(), 0);
}

TEST(RleHybridEncoder, DecodesBackForEveryWidthAndRunShape) {
  std::mt19937 rng(36);
  for (int width = 0; width <= 20; ++width) {
    for (int shape = 0; shape < 4; ++shape) {
      std::vector<uint32_t> values;
      const uint32_t max = width == 0 ? 0 : width >= 32 ? UINT32_MAX : (1u << width) - 1;
      const int n = 1 + static_cast<int>(rng() % 300);
      while (static_cast<int>(values.size()) < n) {
        const uint32_t v = max == 0 ? 0 : rng() % (max + 1);
        // shape 0: random; 1: long runs; 2: runs of 1..12; 3: alternating
        const int run = shape == 0 ? 1 : shape == 1 ? 40 : shape == 2 ? 1 + static_cast<int>(rng() % 12) : 1;
        for (int k = 0; k < run; ++k) values.push_back(shape == 3 ? (values.size() % 2 ? max : 0) : v);
      }
      std::string bytes;
      AppendRleHybrid(values, width, &bytes);
      RleBitPackedDecoder dec({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, width);
      std::vector<uint32_t> out(values.size());
      ASSERT_OK(dec.Get(static_cast<int64_t>(out.size()), out.data())) << "width " << width << " shape " << shape;
      EXPECT_EQ(out, values) << "width " << width << " shape " << shape;
    }
  }
}

}  // namespace
}  // namespace quiver::parquet
