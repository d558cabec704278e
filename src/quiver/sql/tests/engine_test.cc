// Tests of quiver/sql: every supported construct checked against a naive
// reference evaluator (nested loops, three-valued logic written out here)
// over small tables with NULLs in keys and predicates, for every join type;
// unsupported constructs and type errors named with their position; memory
// limits and cancellation.
#include "quiver/sql/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/join/tests/join_test_util.h"
#include "quiver/sql/expression/evaluate.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql {
namespace {

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

int64_t Days(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return sys_days(year_month_day(year(y), month(m), day(d))).time_since_epoch().count();
}

ArrayDataPtr Decimals(MemoryPool* pool, const std::vector<std::optional<double>>& v) {
  std::vector<std::optional<__int128>> x;
  for (const auto& d : v)
    x.push_back(d ? std::optional<__int128>(static_cast<__int128>(std::llround(*d * 100))) : std::nullopt);
  return PrimitiveArray<__int128>(pool, decimal(128, 15, 2), x);
}

ArrayDataPtr Bools(MemoryPool* pool, const std::vector<std::optional<double>>& v) {
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

// ---- the reference evaluator ----------------------------------------------------

enum Tri { F = 0, T = 1, U = 2 };
Tri Not(Tri a) { return a == U ? U : (a == T ? F : T); }
Tri And(Tri a, Tri b) { return (a == F || b == F) ? F : ((a == U || b == U) ? U : T); }
Tri Or(Tri a, Tri b) { return (a == T || b == T) ? T : ((a == U || b == U) ? U : F); }

// A joined row: one row index per FROM table (-1 = null-extended).
using RefRow = std::vector<int64_t>;

struct ColumnAt {
  int table;  // position in FROM
  const TestColumn* col;
};

struct RefValue {
  bool null = false;
  bool is_str = false;
  double num = 0;
  std::string str;
};

RefValue ValueOf(const ColumnAt& c, const RefRow& row) {
  RefValue v;
  const int64_t r = row[static_cast<size_t>(c.table)];
  if (r < 0 || c.col->IsNull(r)) {
    v.null = true;
    return v;
  }
  if (c.col->kind == Kind::kStr) {
    v.is_str = true;
    v.str = *c.col->str[r];
  } else {
    v.num = *c.col->num[r];
  }
  return v;
}

Tri Cmp(const RefValue& a, const RefValue& b, const std::string& op) {
  if (a.null || b.null) return U;
  int c;
  if (a.is_str)
    c = a.str < b.str ? -1 : (a.str > b.str ? 1 : 0);
  else
    c = a.num < b.num ? -1 : (a.num > b.num ? 1 : 0);
  bool r = op == "="    ? c == 0
           : op == "<>" ? c != 0
           : op == "<"  ? c < 0
           : op == "<=" ? c <= 0
           : op == ">"  ? c > 0
                        : c >= 0;
  return r ? T : F;
}

// A predicate as SQL text and as a reference function.
struct Pred {
  std::string sql;
  std::function<Tri(const RefRow&)> eval;
};

class PredGen {
 public:
  PredGen(std::vector<std::pair<std::string, ColumnAt>> columns, uint64_t seed)
      : cols_(std::move(columns)), rng_(seed) {}

  Pred Make(int depth) {
    const int pick = static_cast<int>(rng_() % 10);
    if (depth > 0 && pick < 2) {
      Pred a = Make(depth - 1), b = Make(depth - 1);
      return {"(" + a.sql + " AND " + b.sql + ")", [a, b](const RefRow& r) { return And(a.eval(r), b.eval(r)); }};
    }
    if (depth > 0 && pick < 4) {
      Pred a = Make(depth - 1), b = Make(depth - 1);
      return {"(" + a.sql + " OR " + b.sql + ")", [a, b](const RefRow& r) { return Or(a.eval(r), b.eval(r)); }};
    }
    if (depth > 0 && pick < 5) {
      Pred a = Make(depth - 1);
      return {"NOT (" + a.sql + ")", [a](const RefRow& r) { return Not(a.eval(r)); }};
    }
    return Leaf();
  }

 private:
  std::pair<std::string, RefValue> Literal(const TestColumn& c) {
    RefValue v;
    switch (c.kind) {
      case Kind::kStr: {
        static const char* kVals[] = {"a", "b", "bb", "c", "", "z"};
        v.is_str = true;
        v.str = kVals[rng_() % 6];
        return {"'" + v.str + "'", v};
      }
      case Kind::kDate: {
        const int k = static_cast<int>(rng_() % 12);
        v.num = static_cast<double>(Days(1994, 1, 1) + k * 30 - (k % 3 == 0 ? 1 : 0));
        const auto ymd =
            std::chrono::year_month_day(std::chrono::sys_days(std::chrono::days(static_cast<int64_t>(v.num))));
        char buf[40];
        std::snprintf(buf, sizeof buf, "DATE '%04d-%02u-%02u'", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
        return {buf, v};
      }
      case Kind::kBool: v.num = static_cast<double>(rng_() % 2); return {v.num != 0 ? "TRUE" : "FALSE", v};
      case Kind::kNum: {
        const int form = static_cast<int>(rng_() % 3);
        if (form == 0) {
          v.num = static_cast<double>(static_cast<int64_t>(rng_() % 10) - 2);
          return {std::to_string(static_cast<int64_t>(v.num)), v};
        }
        const int64_t cents = static_cast<int64_t>(rng_() % 1000) - 200;
        v.num = static_cast<double>(cents) / 100.0;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%lld.%02lld", cents < 0 ? "-" : "",
                      static_cast<long long>(std::llabs(cents) / 100), static_cast<long long>(std::llabs(cents) % 100));
        if (form == 2) {
          v.num = static_cast<double>(cents) / 100.0;
          return {std::string(buf) + "e0", v};  // a float literal
        }
        return {buf, v};
      }
    }
    return {"NULL", v};
  }

  Pred Leaf() {
    const auto& [name, at] = cols_[rng_() % cols_.size()];
    const ColumnAt col = at;
    const int form = static_cast<int>(rng_() % 9);
    static const char* kOps[] = {"=", "<>", "<", "<=", ">", ">="};
    const std::string op = kOps[rng_() % 6];
    if (form == 0) {
      const bool neg = rng_() % 2;
      return {name + (neg ? " IS NOT NULL" : " IS NULL"), [col, neg](const RefRow& r) {
                const bool is_null = ValueOf(col, r).null;
                return (is_null != neg) ? T : F;
              }};
    }
    if (form == 1) {
      std::vector<RefValue> items;
      std::string list;
      const int n = 1 + static_cast<int>(rng_() % 6);  // mixes int, decimal and float items
      bool has_null = false;
      for (int i = 0; i < n; ++i) {
        if (!list.empty()) list += ", ";
        if (rng_() % 6 == 0) {
          list += "NULL";
          has_null = true;
          continue;
        }
        auto [text, v] = Literal(*col.col);
        list += text;
        items.push_back(v);
      }
      const bool neg = rng_() % 2;
      return {name + (neg ? " NOT IN (" : " IN (") + list + ")", [col, items, has_null, neg](const RefRow& r) {
                const RefValue x = ValueOf(col, r);
                Tri t = has_null ? U : F;
                for (const auto& v : items) t = Or(t, Cmp(x, v, "="));
                return neg ? Not(t) : t;
              }};
    }
    if (form == 2) {
      // (No structured bindings: clang 14 cannot capture them in lambdas.)
      const auto lo_lit = Literal(*col.col);
      const auto hi_lit = Literal(*col.col);
      const std::string lo_text = lo_lit.first, hi_text = hi_lit.first;
      const RefValue lo = lo_lit.second, hi = hi_lit.second;
      const bool neg = rng_() % 2;
      return {name + (neg ? " NOT BETWEEN " : " BETWEEN ") + lo_text + " AND " + hi_text,
              [col, lo, hi, neg](const RefRow& r) {
                const RefValue x = ValueOf(col, r);
                const Tri t = And(Cmp(x, lo, ">="), Cmp(x, hi, "<="));
                return neg ? Not(t) : t;
              }};
    }
    if (form == 3) {
      // column op column of the same kind
      std::vector<const std::pair<std::string, ColumnAt>*> same;
      for (const auto& c : cols_) {
        if (c.second.col->kind == col.col->kind) same.push_back(&c);
      }
      const auto& other = *same[rng_() % same.size()];
      const ColumnAt oc = other.second;
      return {name + " " + op + " " + other.first,
              [col, oc, op](const RefRow& r) { return Cmp(ValueOf(col, r), ValueOf(oc, r), op); }};
    }
    if (form == 4) {
      return {name + " " + op + " NULL", [](const RefRow&) { return U; }};
    }
    if (form == 5 && col.col->kind == Kind::kBool) {
      return {name, [col](const RefRow& r) {
                const RefValue x = ValueOf(col, r);
                return x.null ? U : (x.num != 0 ? T : F);
              }};
    }
    const auto lit = Literal(*col.col);
    const std::string text = lit.first;
    const RefValue v = lit.second;
    const bool flip = rng_() % 4 == 0;  // literal on the left
    if (flip) {
      return {text + " " + op + " " + name, [col, v, op](const RefRow& r) { return Cmp(v, ValueOf(col, r), op); }};
    }
    return {name + " " + op + " " + text, [col, v, op](const RefRow& r) { return Cmp(ValueOf(col, r), v, op); }};
  }

  std::vector<std::pair<std::string, ColumnAt>> cols_;
  std::mt19937_64 rng_;
};

enum class JT { kInner, kLeft, kRight, kFull };

// Nested-loop join of `left` rows (over FROM tables 0..k-1) with table k.
std::vector<RefRow> RefJoin(const std::vector<RefRow>& left, int64_t right_rows, JT type,
                            const std::function<Tri(const RefRow&)>& on, size_t width) {
  std::vector<RefRow> out;
  std::vector<bool> right_matched(static_cast<size_t>(right_rows), false);
  for (const auto& l : left) {
    bool matched = false;
    for (int64_t r = 0; r < right_rows; ++r) {
      RefRow row = l;
      row.push_back(r);
      if (on(row) == T) {
        out.push_back(row);
        matched = true;
        right_matched[static_cast<size_t>(r)] = true;
      }
    }
    if (!matched && (type == JT::kLeft || type == JT::kFull)) {
      RefRow row = l;
      row.push_back(-1);
      out.push_back(row);
    }
  }
  if (type == JT::kRight || type == JT::kFull) {
    for (int64_t r = 0; r < right_rows; ++r) {
      if (right_matched[static_cast<size_t>(r)]) continue;
      RefRow row(width - 1, -1);
      row.push_back(r);
      out.push_back(row);
    }
  }
  return out;
}

// ---- differential tests -----------------------------------------------------------

class SqlDifferentialTest : public SqlTest {
 protected:
  // Renders reference rows: every column of each FROM table in order.
  std::vector<std::string> RenderRef(const std::vector<RefRow>& rows, const std::vector<const TestTable*>& from,
                                     bool sorted = true) {
    std::vector<std::string> out;
    for (const auto& row : rows) {
      std::string s;
      bool first = true;
      for (size_t t = 0; t < from.size(); ++t) {
        for (const auto& c : from[t]->cols) {
          if (!first) s += '|';
          first = false;
          s += row[t] < 0 ? "null" : Cell(*c.array, row[t]);
        }
      }
      out.push_back(s);
    }
    if (sorted) std::sort(out.begin(), out.end());
    return out;
  }

  std::vector<std::pair<std::string, ColumnAt>> Columns(const std::vector<const TestTable*>& from) {
    std::vector<std::pair<std::string, ColumnAt>> cols;
    for (size_t t = 0; t < from.size(); ++t) {
      for (const auto& c : from[t]->cols)
        cols.push_back({from[t]->name + "." + c.name, ColumnAt{static_cast<int>(t), &c}});
    }
    return cols;
  }

  ColumnAt Col(const std::vector<const TestTable*>& from, int t, const std::string& name) {
    for (const auto& c : from[static_cast<size_t>(t)]->cols) {
      if (c.name == name) return {t, &c};
    }
    ADD_FAILURE() << "no column " << name;
    return {t, nullptr};
  }
};

TEST_F(SqlDifferentialTest, SingleTableWherePredicates) {
  std::vector<const TestTable*> from = {&tables_["t1"]};
  PredGen gen(Columns(from), 11);
  int nonempty = 0, partial = 0;
  for (int i = 0; i < 300; ++i) {
    Pred p = gen.Make(3);
    const std::string sql = "SELECT * FROM t1 WHERE " + p.sql;
    auto out = Run(sql);
    ASSERT_OK(out) << sql;
    std::vector<RefRow> ref;
    for (int64_t r = 0; r < tables_["t1"].rows; ++r) {
      if (p.eval({r}) == T) ref.push_back({r});
    }
    // A scan keeps storage order: compare unsorted.
    ASSERT_EQ(Rows(*out, false), RenderRef(ref, from, false)) << sql;
    nonempty += ref.empty() ? 0 : 1;
    partial += (!ref.empty() && static_cast<int64_t>(ref.size()) < tables_["t1"].rows) ? 1 : 0;
  }
  // The generated predicates select some rows, not none or all, most of the time.
  EXPECT_GT(nonempty, 150);
  EXPECT_GT(partial, 100);
}

TEST_F(SqlDifferentialTest, JoinsOfEveryTypeWithFilters) {
  const std::pair<JT, const char*> kTypes[] = {{JT::kInner, "JOIN"},       {JT::kInner, "INNER JOIN"},
                                               {JT::kLeft, "LEFT JOIN"},   {JT::kLeft, "LEFT OUTER JOIN"},
                                               {JT::kRight, "RIGHT JOIN"}, {JT::kFull, "FULL OUTER JOIN"}};
  for (const char* right : {"t2", "t3"}) {  // t2 smaller than t1 (builds right), t3 larger (builds left)
    std::vector<const TestTable*> from = {&tables_["t1"], &tables_[right]};
    PredGen gen(Columns(from), 23);
    for (const auto& [jt, text] : kTypes) {
      for (int keys = 1; keys <= 2; ++keys) {
        if (keys == 2 && std::string(right) == "t3") continue;
        for (int i = 0; i < 25; ++i) {
          Pred p = gen.Make(2);
          const bool with_where = i % 5 != 0;
          std::string on = "t1.k = " + std::string(right) + ".k";
          if (keys == 2) on += " AND t2.s = t1.s";
          const std::string sql = "SELECT * FROM t1 " + std::string(text) + " " + right + " ON " + on +
                                  (with_where ? " WHERE " + p.sql : "");
          ExecuteOptions o = Options();
          o.memory_mode = i % 2 ? join::MemoryMode::kOffHeap : join::MemoryMode::kOnHeap;
          auto out = Run(sql, o);
          ASSERT_OK(out) << sql;
          const ColumnAt lk = Col(from, 0, "k"), rk = Col(from, 1, "k");
          std::function<Tri(const RefRow&)> on_eval = [&](const RefRow& r) {
            Tri t = Cmp(ValueOf(lk, r), ValueOf(rk, r), "=");
            if (keys == 2) t = And(t, Cmp(ValueOf(Col(from, 1, "s"), r), ValueOf(Col(from, 0, "s"), r), "="));
            return t;
          };
          std::vector<RefRow> left;
          for (int64_t r = 0; r < tables_["t1"].rows; ++r) left.push_back({r});
          auto joined = RefJoin(left, from[1]->rows, jt, on_eval, 2);
          std::vector<RefRow> ref;
          for (const auto& row : joined) {
            if (!with_where || p.eval(row) == T) ref.push_back(row);
          }
          ASSERT_EQ(Rows(*out), RenderRef(ref, from)) << sql;
        }
      }
    }
  }
}

TEST_F(SqlDifferentialTest, ThreeTableChains) {
  std::vector<const TestTable*> from = {&tables_["t1"], &tables_["t2"], &tables_["t3"]};
  PredGen gen(Columns(from), 5);
  const std::pair<JT, const char*> kTypes[] = {
      {JT::kInner, "JOIN"}, {JT::kLeft, "LEFT JOIN"}, {JT::kRight, "RIGHT JOIN"}, {JT::kFull, "FULL JOIN"}};
  for (const auto& [jt1, text1] : kTypes) {
    for (const auto& [jt2, text2] : kTypes) {
      for (int i = 0; i < 4; ++i) {
        Pred p = gen.Make(2);
        const std::string sql = std::string("SELECT * FROM t1 ") + text1 + " t2 ON t2.k = t1.k " + text2 +
                                " t3 ON t3.k = t2.k" + (i > 0 ? " WHERE " + p.sql : "");
        auto out = Run(sql);
        ASSERT_OK(out) << sql;
        std::vector<RefRow> rows;
        for (int64_t r = 0; r < tables_["t1"].rows; ++r) rows.push_back({r});
        rows = RefJoin(
            rows, tables_["t2"].rows, jt1,
            [&](const RefRow& r) { return Cmp(ValueOf(Col(from, 1, "k"), r), ValueOf(Col(from, 0, "k"), r), "="); }, 2);
        rows = RefJoin(
            rows, tables_["t3"].rows, jt2,
            [&](const RefRow& r) { return Cmp(ValueOf(Col(from, 2, "k"), r), ValueOf(Col(from, 1, "k"), r), "="); }, 3);
        std::vector<RefRow> ref;
        for (const auto& row : rows) {
          if (i == 0 || p.eval(row) == T) ref.push_back(row);
        }
        ASSERT_EQ(Rows(*out), RenderRef(ref, from)) << sql;
      }
    }
  }
}

TEST_F(SqlDifferentialTest, ExistsAndNotExistsAreSemiAndAntiJoins) {
  std::vector<const TestTable*> from = {&tables_["t1"]};
  std::vector<const TestTable*> inner = {&tables_["t2"]};
  PredGen outer_gen(Columns(from), 3);
  const TestColumn& ik = tables_["t2"].cols[0];
  const TestColumn& iv = tables_["t2"].cols[2];
  const TestColumn& is = tables_["t2"].cols[1];
  for (int i = 0; i < 40; ++i) {
    const bool anti = i % 2 == 1;
    const bool two_keys = i % 4 >= 2;
    const int64_t threshold = i % 5;
    Pred p = outer_gen.Make(1);
    const std::string sql = "SELECT t1.id, t1.k FROM t1 WHERE " + p.sql + " AND " + (anti ? "NOT " : "") +
                            "EXISTS (SELECT * FROM t2 WHERE t2.k = t1.k AND t2.v > " + std::to_string(threshold) +
                            (two_keys ? " AND t1.s = t2.s" : "") + ")";
    auto out = Run(sql);
    ASSERT_OK(out) << sql;
    std::vector<std::string> ref;
    const TestTable& t1 = tables_["t1"];
    for (int64_t r = 0; r < t1.rows; ++r) {
      if (p.eval({r}) != T) continue;
      bool exists = false;
      for (int64_t q = 0; q < tables_["t2"].rows; ++q) {
        if (t1.cols[1].IsNull(r) || ik.IsNull(q) || *t1.cols[1].num[r] != *ik.num[q]) continue;
        if (iv.IsNull(q) || !(*iv.num[q] > static_cast<double>(threshold))) continue;
        if (two_keys && (t1.cols[2].IsNull(r) || is.IsNull(q) || *t1.cols[2].str[r] != *is.str[q])) continue;
        exists = true;
      }
      if (exists != anti) ref.push_back(Cell(*t1.cols[0].array, r) + "|" + Cell(*t1.cols[1].array, r));
    }
    std::sort(ref.begin(), ref.end());
    ASSERT_EQ(Rows(*out), ref) << sql;
  }
}

TEST_F(SqlTest, ExistsSubqueryTableMayShadowAnOuterName) {
  // The inner t2 shadows the outer t2; t3 stays visible for the correlation.
  auto shadow =
      Run("SELECT t2.k, t3.w FROM t2 JOIN t3 ON t3.k = t2.k WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.k = t3.k AND t2.v "
          "> 3)");
  ASSERT_OK(shadow);
  auto plain =
      Run("SELECT t2.k, t3.w FROM t2 JOIN t3 ON t3.k = t2.k WHERE EXISTS (SELECT 1 FROM t2 i WHERE i.k = t3.k AND i.v "
          "> 3)");
  ASSERT_OK(plain);
  EXPECT_EQ(Rows(*shadow), Rows(*plain));
  EXPECT_FALSE(Rows(*plain).empty());
}

TEST_F(SqlDifferentialTest, LimitAndOffsetOnAScan) {
  const TestTable& t1 = tables_["t1"];
  for (int limit : {0, 1, 3, 6, 100}) {
    for (int offset : {0, 2, 7, 50}) {
      const std::string sql =
          "SELECT id FROM t1 WHERE k >= 1 LIMIT " + std::to_string(limit) + " OFFSET " + std::to_string(offset);
      auto out = Run(sql);
      ASSERT_OK(out) << sql;
      std::vector<std::string> ref;
      for (int64_t r = 0; r < t1.rows; ++r) {
        if (!t1.cols[1].IsNull(r) && *t1.cols[1].num[r] >= 1) ref.push_back(Cell(*t1.cols[0].array, r));
      }
      std::vector<std::string> cut;
      for (size_t i = static_cast<size_t>(offset); i < ref.size() && cut.size() < static_cast<size_t>(limit); ++i)
        cut.push_back(ref[i]);
      ASSERT_EQ(Rows(*out, false), cut) << sql;
    }
  }
  auto all = Run("SELECT id FROM t1 LIMIT ALL OFFSET 40");
  ASSERT_OK(all);
  EXPECT_EQ(Rows(*all, false), std::vector<std::string>{"40"});
}

TEST_F(SqlTest, SelectListShapes) {
  auto out = Run("SELECT b.v AS value, a.*, a.id AS x, a.s FROM t1 a JOIN t2 b ON a.k = b.k WHERE a.id < 3");
  ASSERT_OK(out);
  auto stream = engine_->Execute("SELECT b.v AS value, a.*, a.id AS x, v FROM t1 a JOIN t2 b ON a.k = b.k", Options());
  ASSERT_OK(stream);
  std::vector<std::string> names;
  for (const auto& f : (*stream)->schema()->fields) names.push_back(f->name);
  EXPECT_EQ(names, (std::vector<std::string>{"value", "id", "k", "s", "d", "dt", "f", "b", "x", "v"}));
  // Unqualified 's' is ambiguous between t1 and t2.
  auto amb = Run("SELECT s FROM t1 JOIN t2 ON t1.k = t2.k");
  ASSERT_RAISES(Invalid, amb);
  EXPECT_NE(amb.status().message().find("'s' is ambiguous (line 1, column 8)"), std::string::npos)
      << amb.status().ToString();
  // Case-insensitive table and column names; a quoted name keeps its case.
  auto upper = Run("SELECT ID, T1.K FROM T1 WHERE Id = 3");
  ASSERT_OK(upper);
  EXPECT_EQ(Rows(*upper).size(), 1u);
}

TEST_F(SqlTest, LiteralForms) {
  const TestTable& t1 = tables_["t1"];
  auto count = [&](const std::function<bool(int64_t)>& keep) {
    size_t n = 0;
    for (int64_t r = 0; r < t1.rows; ++r) n += keep(r) ? 1 : 0;
    return n;
  };
  struct Case {
    std::string where;
    std::function<bool(int64_t)> keep;
  };
  const TestColumn &k = t1.cols[1], &d = t1.cols[3], &dt = t1.cols[4], &f = t1.cols[5];
  std::vector<Case> cases = {
      {"k = -1", [&](int64_t r) { return !k.IsNull(r) && *k.num[r] == -1; }},
      {"k > - 1", [&](int64_t r) { return !k.IsNull(r) && *k.num[r] > -1; }},
      {"k < 0", [&](int64_t r) { return !k.IsNull(r) && *k.num[r] < 0; }},
      {"k < 2.5", [&](int64_t r) { return !k.IsNull(r) && *k.num[r] < 2.5; }},
      {"k <= 12345678901234", [&](int64_t r) { return !k.IsNull(r); }},
      {"d >= -1.5", [&](int64_t r) { return !d.IsNull(r) && *d.num[r] >= -1.5; }},
      {"d > 3", [&](int64_t r) { return !d.IsNull(r) && *d.num[r] > 3; }},
      {"d = 0.010", [&](int64_t r) { return !d.IsNull(r) && std::llround(*d.num[r] * 100) == 1; }},
      {"f > 1e0", [&](int64_t r) { return !f.IsNull(r) && *f.num[r] > 1; }},
      {"f <= 1", [&](int64_t r) { return !f.IsNull(r) && *f.num[r] <= 1; }},
      {"dt >= DATE '1994-03-02'", [&](int64_t r) { return !dt.IsNull(r) && *dt.num[r] >= Days(1994, 3, 2); }},
      {"dt < '1994-03-02'", [&](int64_t r) { return !dt.IsNull(r) && *dt.num[r] < Days(1994, 3, 2); }},
      {"dt < TIMESTAMP '1994-03-02 00:00:01'",
       [&](int64_t r) { return !dt.IsNull(r) && *dt.num[r] <= Days(1994, 3, 2); }},
      {"b", [&](int64_t r) { return !t1.cols[6].IsNull(r) && *t1.cols[6].num[r] != 0; }},
      {"b = FALSE", [&](int64_t r) { return !t1.cols[6].IsNull(r) && *t1.cols[6].num[r] == 0; }},
      {"TRUE", [&](int64_t) { return true; }},
      {"NULL", [&](int64_t) { return false; }},
      {"NOT (k = NULL)", [&](int64_t) { return false; }},
      {"k IN (1, NULL)", [&](int64_t r) { return !k.IsNull(r) && *k.num[r] == 1; }},
      {"k NOT IN (1, NULL)", [&](int64_t) { return false; }},
      {"s = 'bb' OR s = ''",
       [&](int64_t r) { return !t1.cols[2].IsNull(r) && (*t1.cols[2].str[r] == "bb" || t1.cols[2].str[r]->empty()); }},
      {"s > 'b'", [&](int64_t r) { return !t1.cols[2].IsNull(r) && *t1.cols[2].str[r] > "b"; }},
  };
  for (const auto& c : cases) {
    auto out = Run("SELECT id FROM t1 WHERE " + c.where);
    ASSERT_OK(out) << c.where;
    EXPECT_EQ(Rows(*out).size(), count(c.keep)) << c.where;
  }
}

TEST_F(SqlTest, TimestampsUnsignedAndWideDecimals) {
  // ts: timestamp[us] at 1995-03-01 00:00:00 + i hours; u: uint64 near the top; w: decimal128(38, 10).
  const int64_t base_us = Days(1995, 3, 1) * int64_t{86400} * 1000000;
  std::vector<std::optional<int64_t>> ts;
  std::vector<std::optional<uint64_t>> u;
  std::vector<std::optional<__int128>> w;
  for (int i = 0; i < 6; ++i) {
    ts.push_back(i == 5 ? std::nullopt : std::optional<int64_t>(base_us + int64_t{i} * 3600 * 1000000));
    u.push_back(std::optional<uint64_t>(UINT64_MAX - static_cast<uint64_t>(i)));
    w.push_back(std::optional<__int128>(static_cast<__int128>(i) * 10000000000LL + 5000000000LL));  // i + 0.5
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("ts", timestamp(TimeUnit::kMicro, "UTC")), field("u", uint64()),
                    field("w", decimal(128, 38, 10))};
  auto batch = Batch(schema, {PrimitiveArray<int64_t>(pool_.get(), schema->fields[0]->type, ts),
                              PrimitiveArray<uint64_t>(pool_.get(), uint64(), u),
                              PrimitiveArray<__int128>(pool_.get(), schema->fields[2]->type, w)});
  ASSERT_OK(catalog_->RegisterBatches("wide", schema, {batch}));
  auto n = [&](const std::string& where) -> int64_t {
    auto out = Run("SELECT ts FROM wide WHERE " + where);
    EXPECT_OK(out) << where;
    return out.ok() ? static_cast<int64_t>(Rows(*out).size()) : -1;
  };
  EXPECT_EQ(n("ts >= TIMESTAMP '1995-03-01 02:00:00'"), 3);
  EXPECT_EQ(n("ts > TIMESTAMP '1995-03-01 01:59:59.999999'"), 3);
  EXPECT_EQ(n("ts < DATE '1995-03-02'"), 5);
  EXPECT_EQ(n("ts = '1995-03-01T03:00'"), 1);
  EXPECT_EQ(n("ts BETWEEN DATE '1995-03-01' AND TIMESTAMP '1995-03-01 01:00:00'"), 2);
  EXPECT_EQ(n("u = 18446744073709551615"), 1);
  EXPECT_EQ(n("u > 18446744073709551612"), 3);
  EXPECT_EQ(n("u > 9223372036854775807"), 6);
  EXPECT_EQ(n("w > 2.5"), 3);
  EXPECT_EQ(n("w = 2.5000000000"), 1);
  EXPECT_EQ(n("w < 1e0"), 1);
  // A literal finer than the column's scale compares exactly (never equal here).
  EXPECT_EQ(n("w = 2.00000000000000000001"), 0);
  EXPECT_EQ(n("w > 2.49999999999999999999"), 4);  // 2.5 3.5 4.5 5.5
  auto wide = engine_->Execute("SELECT ts FROM wide WHERE w = 2.000000000000000000000000000000000000001", Options());
  ASSERT_RAISES(NotImplemented, wide);
  EXPECT_NE(wide.status().message().find("more than 38 digits"), std::string::npos) << wide.status().ToString();
}

TEST_F(SqlTest, ShowTablesAndDescribe) {
  auto out = Run("SHOW TABLES");
  ASSERT_OK(out);
  EXPECT_EQ(Rows(*out), (std::vector<std::string>{"t1|41", "t2|29", "t3|67"}));
  auto desc = Run("DESCRIBE t2");
  ASSERT_OK(desc);
  EXPECT_EQ(Rows(*desc, false), (std::vector<std::string>{"k|int64|true", "s|large_utf8|true", "v|int32|true"}));
  auto desc2 = Run("  desc T1 ;");
  ASSERT_OK(desc2);
  EXPECT_EQ(Rows(*desc2).size(), 7u);
  auto missing = Run("DESCRIBE nope");
  ASSERT_RAISES(KeyError, missing);
}

// ---- errors -------------------------------------------------------------------------

struct ErrorCase {
  std::string sql;
  StatusCode code;
  std::string message;  // a substring, including the position
};

TEST_F(SqlTest, UnsupportedConstructsAreNamedWithTheirPosition) {
  const std::vector<ErrorCase> cases = {
      {"SELECT rank() OVER (ORDER BY k) FROM t1", StatusCode::kNotImplemented,
       "window function rank() OVER is not supported (line 1, column 8)"},
      {"SELECT k FROM t1 UNION SELECT k FROM t2", StatusCode::kNotImplemented,
       "UNION is not supported (line 1, column 18)"},
      {"INSERT INTO t1 VALUES (1)", StatusCode::kNotImplemented, "INSERT is not supported (line 1, column 1)"},
      {"CREATE TABLE x (a int)", StatusCode::kNotImplemented, "CREATE TABLE is not supported"},
      {"DROP TABLE t1", StatusCode::kNotImplemented, "DROP is not supported"},
      {"UPDATE t1 SET k = 1", StatusCode::kNotImplemented, "UPDATE is not supported"},
      {"DELETE FROM t1", StatusCode::kNotImplemented, "DELETE is not supported"},
      {"SELECT k FROM t1 WHERE k = 1 OR EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k)", StatusCode::kNotImplemented,
       "EXISTS outside a top-level AND term of WHERE is not supported (line 1, column 33)"},
      {"SELECT k FROM t1 WHERE k NOT IN (SELECT v FROM t2 WHERE t2.k = t1.k)", StatusCode::kNotImplemented,
       "NOT IN over a correlated subquery is not supported"},
      {"SELECT k FROM t1 WHERE k > ALL (SELECT v FROM t2)", StatusCode::kNotImplemented,
       "this kind of subquery (ALL_SUBLINK) is not supported"},
      {"SELECT t1.k FROM t1 JOIN t2 USING (k)", StatusCode::kNotImplemented, "JOIN ... USING is not supported"},
      {"WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", StatusCode::kNotImplemented,
       "WITH RECURSIVE is not supported"},
      {"SELECT DISTINCT ON (k) k FROM t1", StatusCode::kNotImplemented, "DISTINCT ON is not supported"},
      {"SELECT k FROM t1; SELECT k FROM t2", StatusCode::kNotImplemented, "more than one statement is not supported"},
      {"SHOW search_path", StatusCode::kNotImplemented, "SHOW search_path is not supported"},
      {"SELECT k FROM t1 WHERE k BETWEEN SYMMETRIC 1 AND 2", StatusCode::kNotImplemented,
       "BETWEEN SYMMETRIC is not supported"},
      {"SELECT k FROM t1 WHERE k IS DISTINCT FROM 1", StatusCode::kNotImplemented, "IS DISTINCT FROM is not supported"},
      {"SELECT k FROM t1 WHERE b IS TRUE", StatusCode::kNotImplemented, "IS [NOT] TRUE/FALSE/UNKNOWN is not supported"},
      {"SELECT k FROM t1 LIMIT 1 + 1", StatusCode::kNotImplemented,
       "LIMIT other than an integer constant is not supported"},
      {"SELECT k FROM t1 WHERE k = (SELECT v FROM t2 WHERE t2.k = t1.k)", StatusCode::kNotImplemented,
       "a correlated scalar subquery that is not a single aggregate"},
  };
  for (const auto& c : cases) {
    auto r = engine_->Execute(c.sql, Options());
    ASSERT_FALSE(r.ok()) << c.sql;
    EXPECT_EQ(r.status().code(), c.code) << c.sql << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.sql << ": " << r.status().ToString();
    EXPECT_EQ(r.status().sql_state(), "0A000") << c.sql << ": " << r.status().ToString();
  }
}

TEST_F(SqlTest, PlanTimeErrors) {
  const std::vector<ErrorCase> cases = {
      {"SELECT k FROM t1 WHERE s = 1", StatusCode::kInvalid,
       "operator '=' cannot take VARCHAR and INTEGER (line 1, column 26)"},
      {"SELECT k FROM t1 WHERE k = 'a'", StatusCode::kInvalid, "invalid input syntax for type DECIMAL(38,0): 'a'"},
      {"SELECT k FROM t1 WHERE dt = 5", StatusCode::kInvalid, "operator '=' cannot take DATE and INTEGER"},
      {"SELECT k FROM t1 WHERE dt = 'soon'", StatusCode::kInvalid, "'soon' is not a date or timestamp"},
      {"SELECT k FROM t1 WHERE dt = DATE '1994-02-30'", StatusCode::kInvalid, "invalid DATE literal '1994-02-30'"},
      {"SELECT k FROM t1 WHERE b = 1", StatusCode::kInvalid, "operator '=' cannot take BOOLEAN and INTEGER"},
      {"SELECT k FROM t1 WHERE s = k", StatusCode::kInvalid, "operator '=' cannot take VARCHAR and INTEGER"},
      {"SELECT k FROM t1 WHERE k", StatusCode::kInvalid, "argument of WHERE must be boolean"},
      {"SELECT t1.k FROM t1 JOIN t2 ON t1.s = t2.k", StatusCode::kInvalid,
       "operator '=' cannot take VARCHAR and BIGINT (line 1, column 37)"},
      {"SELECT k FROM nope", StatusCode::kKeyError, "no table named 'nope' (line 1, column 15)"},
      {"SELECT zz FROM t1", StatusCode::kKeyError, "no column named 'zz' (line 1, column 8)"},
      {"SELECT q.k FROM t1", StatusCode::kKeyError, "missing FROM entry for table 'q'"},
      {"SELECT k FROM t1 a JOIN t2 a ON a.k = a.k", StatusCode::kInvalid, "is used twice in FROM"},
      {"SELEC k FROM t1", StatusCode::kInvalid, "syntax error at or near \"SELEC\" (line 1, column 1)"},
      {"SELECT k FROM t1 WHERE", StatusCode::kInvalid, "syntax error at end of input (line 1, column 23)"},
      {"SELECT k FROM t1 LIMIT -1", StatusCode::kInvalid, "LIMIT must not be negative"},
      {"SELECT k, count(*) FROM t1", StatusCode::kInvalid,
       "column 'k' must appear in the GROUP BY clause or be used in an aggregate function"},
      {"SELECT k FROM t1 WHERE count(*) > 1", StatusCode::kInvalid,
       "aggregate function count() is not allowed in WHERE"},
      {"SELECT sum(s) FROM t1", StatusCode::kInvalid, "sum() cannot take VARCHAR"},
      {"SELECT k FROM t1 ORDER BY 9", StatusCode::kInvalid, "ORDER BY position 9 is not in select list"},
      {"SELECT (SELECT zz FROM t2) FROM t1", StatusCode::kKeyError, "no column named 'zz'"},
  };
  for (const auto& c : cases) {
    auto r = engine_->Execute(c.sql, Options());
    ASSERT_FALSE(r.ok()) << c.sql;
    EXPECT_EQ(r.status().code(), c.code) << c.sql << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.sql << ": " << r.status().ToString();
  }
}

// ---- memory and cancellation ------------------------------------------------------------

TEST_F(SqlTest, MemoryLimitGivesOutOfMemoryAndReturnsThePool) {
  const int64_t baseline = pool_->held_bytes();
  for (auto mode : {join::MemoryMode::kOnHeap, join::MemoryMode::kOffHeap}) {
    ExecuteOptions o = Options();
    o.memory_mode = mode;
    o.memory_limit_bytes = 512;
    auto r = Run("SELECT * FROM t1 JOIN t3 ON t1.k = t3.k WHERE t1.s <> 'a'", o);
    ASSERT_RAISES(OutOfMemory, r);
    EXPECT_EQ(pool_->held_bytes(), baseline);
    // The same statement fits a larger limit.
    o.memory_limit_bytes = int64_t{64} << 20;
    auto ok = Run("SELECT * FROM t1 JOIN t3 ON t1.k = t3.k WHERE t1.s <> 'a'", o);
    ASSERT_OK(ok);
    ok->clear();
    EXPECT_EQ(pool_->held_bytes(), baseline);
  }
}

TEST_F(SqlTest, CancellationStopsAndFrees) {
  const int64_t baseline = pool_->held_bytes();
  ExecuteOptions o = Options();
  o.cancel = std::make_shared<std::atomic<bool>>(false);
  auto stream = engine_->Execute("SELECT * FROM t3 JOIN t1 ON t1.k = t3.k", o);
  ASSERT_OK(stream);
  auto first = (*stream)->Next();
  ASSERT_OK(first);
  ASSERT_NE(*first, nullptr);
  o.cancel->store(true);
  auto next = (*stream)->Next();
  ASSERT_RAISES(Cancelled, next);
  auto again = (*stream)->Next();
  EXPECT_EQ(again.status().code(), StatusCode::kCancelled);
  first = RecordBatchPtr{};
  EXPECT_EQ(pool_->held_bytes(), baseline);  // the relation and pending batches are gone
  // Cancelled before planning.
  auto pre = engine_->Execute("SELECT * FROM t1", o);
  ASSERT_RAISES(Cancelled, pre);
}

// A long IN list is one hashed lookup per row, not an OR chain of
// comparisons: 100,000 items (ints, decimals that do and do not fit the
// column's scale, floats, a NULL) over 200,000 rows in one batch give the
// rows the chain's three-valued logic gives (before, this took minutes).
TEST_F(SqlTest, LongInListsAreHashedWithTheChainsThreeValuedResult) {
  const int64_t n = 200000;
  std::vector<std::optional<int64_t>> k(n);
  std::vector<std::optional<std::string>> s(n);
  std::vector<std::optional<double>> d(n);
  for (int64_t i = 0; i < n; ++i) {
    if (i % 11 != 3) k[i] = (i * 7919) % 400000 - 1000;
    if (i % 13 != 5) s[i] = "v" + std::to_string(i % 5000);
    if (i % 17 != 2) d[i] = static_cast<double>(i % 3000) / 100.0;
  }
  auto schema = std::make_shared<Schema>();
  std::vector<ArrayDataPtr> cols = {Int64Array(pool_.get(), k), StringArray(pool_.get(), s, false),
                                    Decimals(pool_.get(), d)};
  for (const char* name : {"k", "s", "d"})
    schema->fields.push_back(field(name, cols[schema->fields.size()]->type, true));
  ASSERT_TRUE(catalog_->RegisterBatches("big", schema, {Batch(schema, cols)}).ok());

  // k IN (every even number in [-1000, 199,000), 2.5 (never equal), 4.0 (= 4), 1e0 (float: = 1))
  std::string list;
  for (int64_t v = -1000; v < 199000; v += 2) list += std::to_string(v) + ", ";
  list += "2.5, 4.0, 1e0";
  auto in_k = [&](int64_t v) { return (v >= -1000 && v < 199000 && v % 2 == 0) || v == 1; };
  for (const bool with_null : {false, true}) {
    for (const bool negated : {false, true}) {
      const std::string sql = std::string("SELECT k FROM big WHERE k ") + (negated ? "NOT IN (" : "IN (") + list +
                              (with_null ? ", NULL)" : ")");
      auto r = Run(sql);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      int64_t got = 0, want = 0;
      for (const auto& b : *r) got += b->num_rows;
      for (int64_t i = 0; i < n; ++i) {
        if (!k[i]) continue;  // NULL IN (...) is unknown
        const bool member = in_k(*k[i]);
        if (negated ? (!member && !with_null) : member) ++want;  // a NULL item turns false into unknown
      }
      EXPECT_EQ(got, want) << (negated ? "NOT IN" : "IN") << (with_null ? " with NULL" : "");
      if (negated && with_null)
        EXPECT_EQ(want, 0);  // x NOT IN (..., NULL) is never true
      else
        EXPECT_GT(want, 0);
    }
  }
  // Strings and decimals (items at a finer scale than the column that can
  // and cannot be represented at its scale).
  std::string slist, dlist;
  for (int v = 0; v < 100000; v += 3) slist += "'v" + std::to_string(v) + "', ";
  slist += "'zz'";
  for (int v = 0; v < 3000; v += 7)
    dlist += std::to_string(v / 100) + "." + (v % 100 < 10 ? "0" : "") + std::to_string(v % 100) + "0, ";
  dlist += "0.001, 29.995";
  auto rs = Run("SELECT s FROM big WHERE s IN (" + slist + ")");
  auto rd = Run("SELECT d FROM big WHERE d IN (" + dlist + ")");
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  int64_t got_s = 0, want_s = 0, got_d = 0, want_d = 0;
  for (const auto& b : *rs) got_s += b->num_rows;
  for (const auto& b : *rd) got_d += b->num_rows;
  for (int64_t i = 0; i < n; ++i) {
    if (s[i] && std::stoi(s[i]->substr(1)) % 3 == 0) ++want_s;
    if (d[i] && (i % 3000) % 7 == 0) ++want_d;
  }
  EXPECT_EQ(got_s, want_s);
  EXPECT_EQ(got_d, want_d);
  EXPECT_GT(want_s, 0);
  EXPECT_GT(want_d, 0);
}

// Cancellation is polled between the terms of an AND / OR inside one batch,
// so a long predicate over a large batch stops when the statement is
// cancelled (CloseOperation, Ctrl-C, server shutdown) instead of running to
// the end of the batch.
TEST_F(SqlTest, CancellationIsPolledInsideALongPredicate) {
  auto schema = std::make_shared<Schema>();
  std::vector<std::optional<int64_t>> v(1000);
  for (int i = 0; i < 1000; ++i) v[i] = i;
  schema->fields.push_back(field("k", int64(), true));
  auto batch = Batch(schema, {Int64Array(pool_.get(), v)});
  std::vector<ExprPtr> terms;
  for (int i = 0; i < 3; ++i) {
    auto c = BindCall(Fn::kEq, {Expr::Column(0, int64()), Expr::Constant(Value::Int64(i))}, -1);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    terms.push_back(*c);
  }
  auto chain = BindCall(Fn::kOr, terms, -1);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  std::atomic<bool> cancel{false};
  EvalContext ev{pool_.get(), &cancel};
  auto kept = EvaluateSelection(**chain, *batch, &ev);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->size(), 3u);
  cancel.store(true);
  auto stopped = EvaluateSelection(**chain, *batch, &ev);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled);

  // Through the engine: an OR chain of 4,000 comparisons over 400,000 rows
  // in one batch (minutes of work) ends Cancelled soon after the flag is set.
  std::vector<std::optional<int64_t>> big(400000);
  for (int64_t i = 0; i < 400000; ++i) big[i] = i;
  auto bschema = std::make_shared<Schema>();
  bschema->fields.push_back(field("k", int64(), true));
  ASSERT_TRUE(catalog_->RegisterBatches("wide", bschema, {Batch(bschema, {Int64Array(pool_.get(), big)})}).ok());
  std::string sql = "SELECT k FROM wide WHERE k = -1";
  for (int i = 0; i < 4000; ++i) sql += " OR k = " + std::to_string(i * 97);
  ExecuteOptions o = Options();
  o.cancel = std::make_shared<std::atomic<bool>>(false);
  auto stream = engine_->Execute(sql, o);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  std::thread canceller([flag = o.cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    flag->store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  auto next = (*stream)->Next();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  canceller.join();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), StatusCode::kCancelled);
  // The whole chain takes minutes; polling stops it within a few terms.
  EXPECT_LT(seconds, 30.0);
}

TEST_F(SqlTest, StatementsRunConcurrentlyOnOneEngine) {
  const std::vector<std::string> sqls = {"SELECT * FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.d > 0.5",
                                         "SELECT t3.w FROM t3 LEFT JOIN t1 ON t1.id = t3.k WHERE t1.s IS NULL",
                                         "SELECT id FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t3 WHERE t3.k = t1.k)",
                                         "SELECT k FROM t1 ORDER BY k"};
  std::vector<std::vector<std::string>> expected;
  for (const auto& sql : sqls) {
    auto r = Run(sql);
    expected.push_back(r.ok() ? Rows(*r) : std::vector<std::string>{r.status().ToString()});
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const size_t q = static_cast<size_t>(t + i) % sqls.size();
        ExecuteOptions o = Options();
        o.memory_mode = i % 2 ? join::MemoryMode::kOffHeap : join::MemoryMode::kOnHeap;
        auto stream = engine_->Execute(sqls[q], o);
        std::vector<std::string> rows;
        if (!stream.ok()) {
          rows.push_back(stream.status().ToString());
        } else {
          std::vector<RecordBatchPtr> batches;
          while (true) {
            auto b = (*stream)->Next();
            if (!b.ok() || !*b) break;
            batches.push_back(*b);
          }
          rows = join::testing::RenderSorted(batches);
        }
        if (rows != expected[q]) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(SqlTest, StreamsBatchesAsPulled) {
  // A LIMIT stops pulling: the statement's pool holds no more than a few batches.
  auto stream = engine_->Execute("SELECT t3.w FROM t3 JOIN t1 ON t1.k = t3.k LIMIT 2", Options());
  ASSERT_OK(stream);
  int64_t rows = 0;
  while (true) {
    auto b = (*stream)->Next();
    ASSERT_OK(b);
    if (!*b) break;
    rows += (*b)->num_rows;
  }
  EXPECT_EQ(rows, 2);
}

}  // namespace
}  // namespace quiver::sql
