// quiver/sql/tests/sql_test_fixture.h — the SqlTest fixture of the SQL
// engine's tests: small in-memory tables with NULLs in keys and predicates
// (t1, t2, t3), a catalog and an engine over them, and helpers to run a
// statement and render its rows. Shared by engine_test.cc and
// engine_limits_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/sql/engine.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql::testing {

using join::testing::Batch;
using join::testing::Cell;
using join::testing::Int32Array;
using join::testing::Int64Array;
using join::testing::PrimitiveArray;
using join::testing::Split;
using join::testing::StringArray;

// ---- test tables -------------------------------------------------------------

enum class Kind { kNum, kStr, kDate, kBool };

struct TestColumn {
  std::string name;
  Kind kind;
  std::vector<std::optional<double>> num;  // kNum, kDate (days), kBool (0/1)
  std::vector<std::optional<std::string>> str;
  ArrayDataPtr array;
  bool IsNull(int64_t r) const { return kind == Kind::kStr ? !str[r].has_value() : !num[r].has_value(); }
};

struct TestTable {
  std::string name;
  int64_t rows = 0;
  std::vector<TestColumn> cols;
  SchemaPtr schema;
};

inline int64_t Days(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return sys_days(year_month_day(year(y), month(m), day(d))).time_since_epoch().count();
}

inline ArrayDataPtr Decimals(MemoryPool* pool, const std::vector<std::optional<double>>& v) {
  std::vector<std::optional<__int128>> x;
  for (const auto& d : v)
    x.push_back(d ? std::optional<__int128>(static_cast<__int128>(std::llround(*d * 100))) : std::nullopt);
  return PrimitiveArray<__int128>(pool, decimal(128, 15, 2), x);
}

inline ArrayDataPtr Bools(MemoryPool* pool, const std::vector<std::optional<double>>& v) {
  std::vector<std::optional<uint8_t>> bytes;
  auto a = std::make_shared<ArrayData>();
  a->type = boolean();
  a->length = static_cast<int64_t>(v.size());
  std::vector<bool> valid;
  std::vector<uint8_t> bits((v.size() + 8) / 8, 0);
  for (size_t i = 0; i < v.size(); ++i) {
    valid.push_back(v[i].has_value());
    if (v[i] && *v[i] != 0) bits[i / 8] |= uint8_t(1u << (i % 8));
  }
  int64_t nulls = 0;
  auto bitmap = join::testing::BitmapOf(pool, valid, &nulls);
  a->null_count = nulls;
  a->buffers = {nulls ? bitmap : nullptr, join::testing::BufferOf(pool, bits)};
  return a;
}

class SqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = MemoryPool::MakeRoot({"sql-test"});
    catalog_ = std::make_shared<Catalog>();
    std::mt19937_64 rng(7);
    auto maybe = [&](int null_pct) { return static_cast<int>(rng() % 100) >= null_pct; };
    // t1(id int64, k int32, s utf8, d decimal(15,2), dt date32, f float64, b bool)
    AddTable("t1", 41, rng,
             {{"id", Kind::kNum, "int64"},
              {"k", Kind::kNum, "int32"},
              {"s", Kind::kStr, "utf8"},
              {"d", Kind::kNum, "decimal"},
              {"dt", Kind::kDate, "date32"},
              {"f", Kind::kNum, "float64"},
              {"b", Kind::kBool, "bool"}},
             maybe);
    // t2(k int64, s utf8, v int32)
    AddTable("t2", 29, rng, {{"k", Kind::kNum, "int64"}, {"s", Kind::kStr, "large_utf8"}, {"v", Kind::kNum, "int32"}},
             maybe);
    // t3(k int64, w utf8) — larger than t1 and t2
    AddTable("t3", 67, rng, {{"k", Kind::kNum, "int64"}, {"w", Kind::kStr, "utf8"}}, maybe);
    engine_ = std::make_unique<Engine>(catalog_);
  }

  struct ColSpec {
    std::string name;
    Kind kind;
    std::string type;
  };

  void AddTable(const std::string& name, int64_t rows, std::mt19937_64& rng, const std::vector<ColSpec>& specs,
                const std::function<bool(int)>& maybe) {
    TestTable t;
    t.name = name;
    t.rows = rows;
    auto schema = std::make_shared<Schema>();
    std::vector<ArrayDataPtr> arrays;
    for (const auto& spec : specs) {
      TestColumn c;
      c.name = spec.name;
      c.kind = spec.kind;
      for (int64_t r = 0; r < rows; ++r) {
        const bool valid = spec.name == "id" || maybe(15);
        switch (spec.kind) {
          case Kind::kNum: {
            double v;
            if (spec.name == "id")
              v = static_cast<double>(r);
            else if (spec.type == "decimal")
              v = static_cast<double>(static_cast<int64_t>(rng() % 1200) - 200) / 100.0;
            else if (spec.type == "float64")
              v = static_cast<double>(static_cast<int64_t>(rng() % 16) - 4) / 2.0;
            else
              v = static_cast<double>(static_cast<int64_t>(rng() % 8) - 1);
            c.num.push_back(valid ? std::optional<double>(v) : std::nullopt);
            break;
          }
          case Kind::kStr: {
            static const char* kVals[] = {"a", "b", "bb", "c", "d", "", "e"};
            c.str.push_back(valid ? std::optional<std::string>(kVals[rng() % 7]) : std::nullopt);
            break;
          }
          case Kind::kDate:
            c.num.push_back(valid ? std::optional<double>(
                                        static_cast<double>(Days(1994, 1, 1) + static_cast<int64_t>(rng() % 10) * 30))
                                  : std::nullopt);
            break;
          case Kind::kBool:
            c.num.push_back(valid ? std::optional<double>(static_cast<double>(rng() % 2)) : std::nullopt);
            break;
        }
      }
      DataTypePtr type;
      ArrayDataPtr a;
      MemoryPool* p = pool_.get();
      if (spec.type == "int64") {
        std::vector<std::optional<int64_t>> v;
        for (auto& x : c.num) v.push_back(x ? std::optional<int64_t>(static_cast<int64_t>(*x)) : std::nullopt);
        a = Int64Array(p, v);
      } else if (spec.type == "int32") {
        std::vector<std::optional<int32_t>> v;
        for (auto& x : c.num) v.push_back(x ? std::optional<int32_t>(static_cast<int32_t>(*x)) : std::nullopt);
        a = Int32Array(p, v);
      } else if (spec.type == "decimal") {
        a = Decimals(p, c.num);
      } else if (spec.type == "float64") {
        a = PrimitiveArray<double>(p, float64(), c.num);
      } else if (spec.type == "date32") {
        std::vector<std::optional<int32_t>> v;
        for (auto& x : c.num) v.push_back(x ? std::optional<int32_t>(static_cast<int32_t>(*x)) : std::nullopt);
        a = PrimitiveArray<int32_t>(p, date32(), v);
      } else if (spec.type == "bool") {
        a = Bools(p, c.num);
      } else {
        a = StringArray(p, c.str, spec.type == "large_utf8");
      }
      c.array = a;
      schema->fields.push_back(field(spec.name, a->type, spec.name != "id"));
      arrays.push_back(a);
      t.cols.push_back(std::move(c));
    }
    t.schema = schema;
    auto batch = Batch(schema, arrays);
    ASSERT_OK(catalog_->RegisterBatches(name, schema, Split(batch, 7)));
    tables_[name] = std::move(t);
  }

  ExecuteOptions Options() {
    ExecuteOptions o;
    o.pool = pool_.get();
    o.max_batch_rows = 5;  // many small join output batches
    return o;
  }

  Result<std::vector<RecordBatchPtr>> Run(const std::string& sql, ExecuteOptions o) {
    QUIVER_ASSIGN_OR_RETURN(auto stream, engine_->Execute(sql, o));
    std::vector<RecordBatchPtr> out;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(auto b, stream->Next());
      if (!b) break;
      EXPECT_TRUE(b->schema->Equals(*stream->schema()));
      out.push_back(b);
    }
    return out;
  }
  Result<std::vector<RecordBatchPtr>> Run(const std::string& sql) { return Run(sql, Options()); }

  /// The result columns of `sql` as "name: type[ not null]" (Field::ToString),
  /// from the stream's schema (so also for a result without rows).
  std::vector<std::string> Columns(const std::string& sql) {
    std::vector<std::string> out;
    auto stream = engine_->Execute(sql, Options());
    EXPECT_TRUE(stream.ok()) << sql << ": " << stream.status().ToString();
    if (!stream.ok()) return out;
    for (const auto& f : (*stream)->schema()->fields) out.push_back(f->ToString());
    return out;
  }

  std::vector<std::string> Rows(const std::vector<RecordBatchPtr>& batches, bool sorted = true) {
    std::vector<std::string> rows;
    for (const auto& b : batches) {
      EXPECT_OK(ValidateBatch(*b, ValidationLevel::kFull));
      for (int64_t r = 0; r < b->num_rows; ++r) {
        std::string s;
        for (size_t c = 0; c < b->columns.size(); ++c) {
          if (c) s += '|';
          s += Cell(*b->columns[c], r);
        }
        rows.push_back(s);
      }
    }
    if (sorted) std::sort(rows.begin(), rows.end());
    return rows;
  }

  std::shared_ptr<MemoryPool> pool_;
  std::shared_ptr<Catalog> catalog_;
  std::unique_ptr<Engine> engine_;
  std::map<std::string, TestTable> tables_;
};

}  // namespace quiver::sql::testing
