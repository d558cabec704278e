// Tests of quiver/sql: every supported construct checked against a naive
// reference evaluator (nested loops, three-valued logic written out here)
// over small tables with NULLs in keys and predicates, for every join type;
// literal forms and select-list shapes (errors and limits:
// engine_limits_test.cc; analytical SQL: analytics_test.cc).
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

#include "quiver/sql/expression/evaluate.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql {
namespace {

using namespace ::quiver::sql::testing;  // NOLINT(build/namespaces)

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

  // An AND of k leaves (the shape EvaluateSelection narrows conjunct by
  // conjunct, `column <op> literal` ones straight on the values).
  Pred MakeConjunction(int k) {
    Pred p = Leaf();
    for (int i = 1; i < k; ++i) {
      Pred b = Leaf();
      Pred a = p;
      p = {a.sql + " AND " + b.sql, [a, b](const RefRow& r) { return And(a.eval(r), b.eval(r)); }};
    }
    return p;
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

TEST_F(SqlDifferentialTest, ConjunctionsOfLeafPredicates) {
  std::vector<const TestTable*> from = {&tables_["t1"]};
  PredGen gen(Columns(from), 23);
  int nonempty = 0;
  for (int i = 0; i < 300; ++i) {
    Pred p = gen.MakeConjunction(2 + i % 4);
    const std::string sql = "SELECT * FROM t1 WHERE " + p.sql;
    auto out = Run(sql);
    ASSERT_OK(out) << sql;
    std::vector<RefRow> ref;
    for (int64_t r = 0; r < tables_["t1"].rows; ++r) {
      if (p.eval({r}) == T) ref.push_back({r});
    }
    ASSERT_EQ(Rows(*out, false), RenderRef(ref, from, false)) << sql;
    nonempty += ref.empty() ? 0 : 1;
  }
  EXPECT_GT(nonempty, 30);
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
  EXPECT_EQ(Rows(*out), (std::vector<std::string>{"default|t1|false", "default|t2|false", "default|t3|false"}));
  auto desc = Run("DESCRIBE t2");
  ASSERT_OK(desc);
  EXPECT_EQ(Rows(*desc, false), (std::vector<std::string>{"k|bigint|null", "s|string|null", "v|int|null"}));
  auto desc2 = Run("  desc T1 ;");
  ASSERT_OK(desc2);
  EXPECT_EQ(Rows(*desc2).size(), 7u);
  auto missing = Run("DESCRIBE nope");
  ASSERT_RAISES(KeyError, missing);
}

}  // namespace
}  // namespace quiver::sql
