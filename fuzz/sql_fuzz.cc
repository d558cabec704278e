// libFuzzer target: any bytes as one SQL statement, planned and executed by
// quiver::sql::Engine over three tiny in-memory tables (NULLs in keys and
// values; int32/int64/utf8/decimal/date/float/bool columns) under a 64 MiB
// statement limit, in both join memory modes. Every result batch must
// validate fully and match its stream's schema; once the stream is gone the
// pool must be back at zero. Errors are fine; crashes, leaks and invalid
// batches are not.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/validate.h"
#include "quiver/sql/engine.h"

namespace {

using namespace quiver;

std::shared_ptr<Buffer> Copy(MemoryPool* pool, const void* data, int64_t n) {
  auto b = Buffer::Allocate(pool, n > 0 ? n : 1);
  if (!b.ok()) __builtin_trap();
  if (n > 0) std::memcpy((*b)->mutable_data(), data, static_cast<size_t>(n));
  return *b;
}

// A column of `n` rows whose row i is null when (i * 7 + salt) % 5 == 0.
ArrayDataPtr Column(MemoryPool* pool, DataTypePtr type, int64_t n, int salt) {
  auto a = std::make_shared<ArrayData>();
  a->type = type;
  a->length = n;
  std::vector<uint8_t> bits(static_cast<size_t>(bit_util::BytesForBits(n)) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if ((i * 7 + salt) % 5 != 0)
      bit_util::SetBit(bits.data(), i);
    else
      ++a->null_count;
  }
  auto validity = Copy(pool, bits.data(), static_cast<int64_t>(bits.size()));
  if (type->id == TypeId::kUtf8) {
    std::vector<int32_t> offsets{0};
    std::string data;
    for (int64_t i = 0; i < n; ++i) {
      data += std::string(static_cast<size_t>((i + salt) % 3), static_cast<char>('a' + (i % 4)));
      offsets.push_back(static_cast<int32_t>(data.size()));
    }
    a->buffers = {validity, Copy(pool, offsets.data(), static_cast<int64_t>(offsets.size() * 4)),
                  Copy(pool, data.data(), static_cast<int64_t>(data.size()))};
    return a;
  }
  if (type->id == TypeId::kBool) {
    std::vector<uint8_t> v(bits.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      if ((i + salt) % 2) bit_util::SetBit(v.data(), i);
    }
    a->buffers = {validity, Copy(pool, v.data(), static_cast<int64_t>(v.size()))};
    return a;
  }
  const int width = FixedBitWidth(*type) / 8;
  std::vector<uint8_t> v(static_cast<size_t>(n * width), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = type->id == TypeId::kFloat64 ? 0 : (i * 3 + salt) % 7 - 2;
    if (type->id == TypeId::kFloat64) {
      const double d = static_cast<double>((i + salt) % 9) / 2 - 1;
      std::memcpy(&v[static_cast<size_t>(i * width)], &d, 8);
    } else if (width == 16) {
      const int64_t hi = x < 0 ? -1 : 0;
      std::memcpy(&v[static_cast<size_t>(i * width)], &x, 8);
      std::memcpy(&v[static_cast<size_t>(i * width) + 8], &hi, 8);
    } else {
      std::memcpy(&v[static_cast<size_t>(i * width)], &x, static_cast<size_t>(width));
    }
  }
  a->buffers = {validity, Copy(pool, v.data(), static_cast<int64_t>(v.size()))};
  return a;
}

struct Fixture {
  std::shared_ptr<MemoryPool> data_pool = MemoryPool::MakeRoot({"fuzz-data"});
  std::shared_ptr<sql::Catalog> catalog = std::make_shared<sql::Catalog>();
  std::unique_ptr<sql::Engine> engine;

  void Add(const std::string& name, std::vector<std::pair<std::string, DataTypePtr>> cols, int64_t rows, int salt) {
    auto schema = std::make_shared<Schema>();
    auto batch = std::make_shared<RecordBatch>();
    batch->num_rows = rows;
    for (auto& [n, t] : cols) {
      schema->fields.push_back(field(n, t));
      batch->columns.push_back(Column(data_pool.get(), t, rows, salt++));
    }
    batch->schema = schema;
    std::vector<RecordBatchPtr> batches;
    for (int64_t off = 0; off < rows; off += 4) {
      auto s = SliceBatch(batch, off, std::min<int64_t>(4, rows - off));
      if (!s.ok()) __builtin_trap();
      batches.push_back(*s);
    }
    if (!catalog->RegisterBatches(name, schema, batches).ok()) __builtin_trap();
  }

  Fixture() {
    Add("t1",
        {{"id", int64()},
         {"k", int32()},
         {"s", utf8()},
         {"d", decimal(128, 15, 2)},
         {"dt", date32()},
         {"f", float64()},
         {"b", boolean()}},
        11, 0);
    Add("t2", {{"k", int64()}, {"s", utf8()}, {"v", int32()}}, 9, 3);
    Add("t3", {{"k", int64()}, {"w", utf8()}}, 13, 1);
    engine = std::make_unique<sql::Engine>(catalog);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fixture;
  if (size > 4096) return 0;
  const std::string sql(reinterpret_cast<const char*>(data), size);
  for (auto mode : {join::MemoryMode::kOnHeap, join::MemoryMode::kOffHeap}) {
    auto pool = MemoryPool::MakeRoot({"fuzz-sql", int64_t{256} << 20});
    {
      sql::ExecuteOptions o;
      o.pool = pool.get();
      o.memory_mode = mode;
      o.memory_limit_bytes = int64_t{64} << 20;
      o.max_batch_rows = 3;
      auto stream = fixture.engine->Execute(sql, o);
      if (stream.ok()) {
        for (int i = 0; i < 10000; ++i) {
          auto b = (*stream)->Next();
          if (!b.ok() || !*b) break;
          if (!(*b)->schema->Equals(*(*stream)->schema())) __builtin_trap();
          if (!ValidateBatch(**b, ValidationLevel::kFull).ok()) __builtin_trap();
        }
      }
    }
    if (pool->held_bytes() != 0) __builtin_trap();
  }
  return 0;
}
