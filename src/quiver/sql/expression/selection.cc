// quiver/sql/expression/selection.cc — EvaluateSelection (evaluate.h): a
// predicate's true rows as a selection vector, with the conjuncts of an AND
// applied one after another to the rows still selected.
//
// A conjunct `column <op> constant` (either side; integer, decimal, date,
// timestamp or string column; any constant expression, IsConstantExpr), or
// `column <op> column` of one physical type, is applied straight to the column's values through the current
// selection, without building a boolean column: one predicated store per
// row (DuckDB's SelectionVector / "select" comparisons work the same way).
// Other conjuncts are evaluated as expressions over the batch (or, once at
// most half the rows are left, over those rows only: AND / OR of such
// comparisons through the same steps, anything else with its columns
// gathered) and their truth narrows the selection. Once no row is left the remaining conjuncts
// are not evaluated (an error they would raise on rows already filtered out
// is not raised, as in DuckDB).
#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <type_traits>

#include "quiver/columnar/element_load.h"
#include "quiver/columnar/take.h"
#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {
namespace {

void FlattenAnd(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == Expr::Kind::kCall && e.fn == Fn::kAnd) {
    for (const auto& a : e.args) FlattenAnd(*a, out);
    return;
  }
  out->push_back(&e);
}

bool IsComparison(Fn f) {
  return f == Fn::kEq || f == Fn::kNe || f == Fn::kLt || f == Fn::kLe || f == Fn::kGt || f == Fn::kGe;
}

// `c op x` as `x Flip(op) c`.
Fn Flip(Fn f) {
  switch (f) {
    case Fn::kLt: return Fn::kGt;
    case Fn::kLe: return Fn::kGe;
    case Fn::kGt: return Fn::kLt;
    case Fn::kGe: return Fn::kLe;
    default: return f;
  }
}

// Rows i of [0, n) where pred(i), written to out; returns how many.
template <typename Pred>
int64_t SelectAll(int64_t n, Pred pred, int64_t* out) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[k] = i;
    k += pred(i) ? 1 : 0;
  }
  return k;
}

// Keeps the rows of sel[0, m) where pred(row), in place; returns how many.
template <typename Pred>
int64_t SelectSome(int64_t* sel, int64_t m, Pred pred) {
  int64_t k = 0;
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = sel[j];
    sel[k] = i;
    k += pred(i) ? 1 : 0;
  }
  return k;
}

// The selection step for load_a(i) op load_b(i) (rows where a is valid and
// extra(i)).
template <typename T, typename LoadA, typename LoadB, typename Extra = bool (*)(int64_t)>
int64_t SelectCompareColumns(Fn op, LoadA load_a, LoadB load_b, const Vec& a, bool first, int64_t n, int64_t* sel,
                             int64_t m, Extra extra = nullptr) {
  const bool nulls = a.MayHaveNulls();
  const uint8_t* valid =
      nulls && !a.array->buffers.empty() && a.array->buffers[0] ? a.array->buffers[0]->data() : nullptr;
  const int64_t off = a.array->offset;
  auto run = [&](auto cmp) -> int64_t {
    auto pred = [&](int64_t i) {
      bool ok = cmp(static_cast<T>(load_a(i)), static_cast<T>(load_b(i)));
      if (valid != nullptr) ok &= bit_util::GetBit(valid, off + i);
      if constexpr (!std::is_same_v<Extra, bool (*)(int64_t)>) ok &= extra(i);
      return ok;
    };
    return first ? SelectAll(n, pred, sel) : SelectSome(sel, m, pred);
  };
  switch (op) {
    case Fn::kEq: return run(std::equal_to<T>());
    case Fn::kNe: return run(std::not_equal_to<T>());
    case Fn::kLt: return run(std::less<T>());
    case Fn::kLe: return run(std::less_equal<T>());
    case Fn::kGt: return run(std::greater<T>());
    default: return run(std::greater_equal<T>());
  }
}

// The selection step for one comparison of values load(i) against c.
template <typename T, typename Load>
int64_t SelectCompare(Fn op, T c, Load load, const Vec& col, bool first, int64_t n, int64_t* sel, int64_t m) {
  return SelectCompareColumns<T>(
      op, load, [c](int64_t) { return c; }, col, first, n, sel, m);
}

// Applies `left op right` over two columns of one physical type (int32,
// date32, int64, timestamp, decimal of one scale, or strings).
Status TrySelectColumns(Fn op, const Expr& left, const Expr& right, const RecordBatch& batch, bool first, int64_t* sel,
                        int64_t* m, bool* handled) {
  const auto ncols = static_cast<int>(batch.columns.size());
  if (left.column < 0 || left.column >= ncols || right.column < 0 || right.column >= ncols) return Status::OK();
  Vec a, b;
  a.array = batch.columns[static_cast<size_t>(left.column)];
  b.array = batch.columns[static_cast<size_t>(right.column)];
  const TypeId id = a.type()->id;
  if (b.type()->id != id) return Status::OK();
  if (id == TypeId::kDecimal &&
      (ScaleOf(*a.type()) != ScaleOf(*b.type()) || a.type()->bit_width != b.type()->bit_width))
    return Status::OK();
  const int64_t n = batch.num_rows;
  // Rows where both sides are valid: a's validity is checked by
  // SelectCompare, b's folded into the comparison.
  const uint8_t* bvalid =
      b.MayHaveNulls() && !b.array->buffers.empty() && b.array->buffers[0] ? b.array->buffers[0]->data() : nullptr;
  const int64_t boff = b.array->offset;
  auto run = [&](auto load_a, auto load_b, auto tag) {
    using T = decltype(tag);
    if (bvalid == nullptr) {
      *m = SelectCompareColumns<T>(op, load_a, load_b, a, first, n, sel, *m);
    } else {
      *m = SelectCompareColumns<T>(op, load_a, load_b, a, first, n, sel, *m,
                                   [bvalid, boff](int64_t i) { return bit_util::GetBit(bvalid, boff + i); });
    }
  };
  if (id == TypeId::kUtf8) {
    auto load = [](const Vec& v) {
      const int32_t* offs = reinterpret_cast<const int32_t*>(v.array->buffers[1]->data()) + v.array->offset;
      const char* data = reinterpret_cast<const char*>(v.array->buffers[2]->data());
      return [offs, data](int64_t i) {
        return std::string_view(data + offs[i], static_cast<size_t>(offs[i + 1] - offs[i]));
      };
    };
    run(load(a), load(b), std::string_view{});
    *handled = true;
    return Status::OK();
  }
  // The exact fixed widths (not BOOLEAN or DOUBLE), loaded as their storage T.
  *handled = VisitSqlStorage(
      *a.type(),
      [&]<typename T>() {
        if constexpr (kIsPackedBit<T> || std::is_floating_point_v<T>) {
          return false;
        } else {
          auto load = [](const Vec& v) {
            const uint8_t* p = v.array->buffers[1]->data() + v.array->offset * static_cast<int64_t>(sizeof(T));
            return [p](int64_t i) { return LoadValue<T>(p, i); };
          };
          run(load(a), load(b), T{});
          return true;
        }
      },
      [] { return false; });
  return Status::OK();
}

// Applies `column op constant` to the selection when it has that shape and
// types this path handles; *handled false otherwise (nothing changed).
Status TrySelectComparison(const Expr& e, const RecordBatch& batch, EvalContext* ctx, bool first, int64_t* sel,
                           int64_t* m, bool* handled) {
  *handled = false;
  if (e.kind != Expr::Kind::kCall || !IsComparison(e.fn) || e.args.size() != 2) return Status::OK();
  const Expr* column = e.args[0].get();
  const Expr* constant = e.args[1].get();
  Fn op = e.fn;
  if (column->kind != Expr::Kind::kColumn) {
    std::swap(column, constant);
    op = Flip(op);
  }
  if (column->kind != Expr::Kind::kColumn) return Status::OK();
  if (constant->kind == Expr::Kind::kColumn)
    return TrySelectColumns(op, *column, *constant, batch, first, sel, m, handled);
  if (!IsConstantExpr(*constant)) return Status::OK();
  if (column->column < 0 || column->column >= static_cast<int>(batch.columns.size())) return Status::OK();
  Vec col;
  col.array = batch.columns[static_cast<size_t>(column->column)];
  const TypeClass cl = ClassOf(*col.type());
  const TypeClass cr = ClassOf(*constant->type);
  const bool exact = IsExactClass(cl) && IsExactClass(cr);
  const bool same_temporal = (cl == TypeClass::kDate || cl == TypeClass::kTimestamp) && cl == cr;
  const bool strings = cl == TypeClass::kString && cr == TypeClass::kString;
  if (!exact && !same_temporal && !strings) return Status::OK();
  // The column must not need scaling to meet the constant (a constant of a
  // finer scale than the column goes the general way).
  const int sl = ScaleOf(*col.type()), sr = ScaleOf(*constant->type);
  if (exact && sl < sr) return Status::OK();
  const TypeId id = col.type()->id;
  if (!strings && id != TypeId::kInt32 && id != TypeId::kDate32 && id != TypeId::kInt64 && id != TypeId::kTimestamp &&
      id != TypeId::kDecimal)
    return Status::OK();
  QUIVER_ASSIGN_OR_RETURN(Vec cv, Evaluate(*constant, batch, ctx));
  if (!cv.constant) return Status::OK();
  const int64_t n = batch.num_rows;
  *handled = true;
  if (cv.type()->id == TypeId::kNull || cv.IsNull(0)) {
    *m = 0;  // a comparison with NULL is unknown for every row
    return Status::OK();
  }
  if (strings) {
    const std::string_view c = cv.StringAt(0);
    const int32_t* offs = reinterpret_cast<const int32_t*>(col.array->buffers[1]->data()) + col.array->offset;
    const char* data = reinterpret_cast<const char*>(col.array->buffers[2]->data());
    auto load = [&](int64_t i) { return std::string_view(data + offs[i], static_cast<size_t>(offs[i + 1] - offs[i])); };
    *m = SelectCompare<std::string_view>(op, c, load, col, first, n, sel, *m);
    return Status::OK();
  }
  i128 c = cv.ExactAt(0);
  if (exact && sl > sr && __builtin_mul_overflow(c, Pow10(sl - sr), &c)) {
    *handled = false;  // beyond 128 bits at the column's scale: general path
    return Status::OK();
  }
  if (id == TypeId::kInt32 || id == TypeId::kDate32) {
    if (c < INT32_MIN || c > INT32_MAX) {
      *handled = false;
      return Status::OK();
    }
    const int32_t* v = col.Values<int32_t>();
    *m = SelectCompare<int32_t>(
        op, static_cast<int32_t>(c), [v](int64_t i) { return v[i]; }, col, first, n, sel, *m);
  } else if (id == TypeId::kInt64 || id == TypeId::kTimestamp || IsDecimal64(*col.type())) {
    if (c < INT64_MIN || c > INT64_MAX) {
      *handled = false;
      return Status::OK();
    }
    const int64_t* v = col.Values<int64_t>();
    *m = SelectCompare<int64_t>(
        op, static_cast<int64_t>(c), [v](int64_t i) { return v[i]; }, col, first, n, sel, *m);
  } else {
    const uint8_t* v = col.array->buffers[1]->data() + col.array->offset * 16;
    auto load = [v](int64_t i) {
      i128 x;
      std::memcpy(&x, v + i * 16, 16);
      return x;
    };
    *m = SelectCompare<i128>(op, c, load, col, first, n, sel, *m);
  }
  return Status::OK();
}

// Evaluates `conjunct` over rows sel[0, m) only (the columns it reads
// gathered into a batch of m rows; the others left as placeholders it never
// reads) and keeps the rows where it is true; returns how many.
Result<int64_t> NarrowOnSelected(const Expr& conjunct, const RecordBatch& batch, EvalContext* ctx, int64_t* sel,
                                 int64_t m) {
  std::vector<bool> read(batch.columns.size(), false);
  bool outside = false;
  VisitColumns(conjunct, [&](int id) {
    if (id < 0 || id >= static_cast<int>(read.size())) {
      outside = true;
    } else {
      read[static_cast<size_t>(id)] = true;
    }
  });
  if (outside) return Status::Invalid("internal: a predicate reads a column outside its batch");
  const std::vector<int64_t> rows(sel, sel + m);
  RecordBatch sub;
  sub.schema = batch.schema;
  sub.num_rows = m;
  sub.columns.reserve(batch.columns.size());
  TakeOptions opts;
  opts.boundscheck = false;
  for (size_t c = 0; c < batch.columns.size(); ++c) {
    const ArrayDataPtr& col = batch.columns[c];
    if (!read[c] || col->type->id == TypeId::kNull) {
      auto placeholder = std::make_shared<ArrayData>();
      placeholder->type = null();
      placeholder->length = m;
      placeholder->null_count = m;
      sub.columns.push_back(std::move(placeholder));
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(auto taken, Take(*col, rows, ctx->pool, "column " + std::to_string(c), opts));
    sub.columns.push_back(std::move(taken));
  }
  EvalContext subset = *ctx;  // other rows: not a memo's batch
  subset.memo = nullptr;
  QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(conjunct, sub, &subset));
  if (v.type()->id == TypeId::kNull) return int64_t{0};
  if (v.constant) return v.IsNull(0) || !v.BoolAt(0) ? int64_t{0} : m;
  const uint8_t* bits = v.array->buffers[1]->data();
  const int64_t off = v.array->offset;
  const bool nulls = v.MayHaveNulls();
  int64_t k = 0;
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = sel[j];
    sel[k] = i;
    k += bit_util::GetBit(bits, off + j) && (!nulls || !v.IsNull(j)) ? 1 : 0;
  }
  return k;
}

// Narrows sel[0, m) to the rows where `e` is true when `e` is built of
// AND and OR over comparisons TrySelectComparison applies: an AND narrows
// argument by argument, an OR keeps the union of its arguments' true rows,
// each argument tried on the rows no earlier one kept (TPC-DS Q28's
// `x BETWEEN a AND b OR y BETWEEN c AND d OR ...` on the rows its first
// conjunct kept, without gathering x, y, ...). *handled false, with `sel`
// and `m` untouched, when some part has another shape.
Status TrySelectLogical(const Expr& e, const RecordBatch& batch, EvalContext* ctx, int64_t* sel, int64_t* m,
                        bool* handled, int depth = 0) {
  *handled = false;
  if (depth > 8) return Status::OK();
  if (e.kind != Expr::Kind::kCall) return Status::OK();
  if (IsComparison(e.fn)) {
    std::vector<int64_t> rows(sel, sel + *m);
    int64_t k = *m;
    QUIVER_RETURN_NOT_OK(TrySelectComparison(e, batch, ctx, false, rows.data(), &k, handled));
    if (*handled) {
      std::copy(rows.begin(), rows.begin() + k, sel);
      *m = k;
    }
    return Status::OK();
  }
  if (e.fn == Fn::kAnd) {
    std::vector<int64_t> rows(sel, sel + *m);
    int64_t k = *m;
    for (const auto& a : e.args) {
      bool h = false;
      QUIVER_RETURN_NOT_OK(TrySelectLogical(*a, batch, ctx, rows.data(), &k, &h, depth + 1));
      if (!h) return Status::OK();
    }
    std::copy(rows.begin(), rows.begin() + k, sel);
    *m = k;
    *handled = true;
    return Status::OK();
  }
  if (e.fn != Fn::kOr) return Status::OK();
  std::vector<int64_t> left(sel, sel + *m);  // rows no argument kept yet (ascending)
  std::vector<int64_t> kept, part, rest;
  for (const auto& a : e.args) {
    if (left.empty()) break;
    part = left;
    int64_t k = static_cast<int64_t>(part.size());
    bool h = false;
    QUIVER_RETURN_NOT_OK(TrySelectLogical(*a, batch, ctx, part.data(), &k, &h, depth + 1));
    if (!h) return Status::OK();
    part.resize(static_cast<size_t>(k));
    kept.insert(kept.end(), part.begin(), part.end());
    rest.clear();
    std::set_difference(left.begin(), left.end(), part.begin(), part.end(), std::back_inserter(rest));
    left.swap(rest);
  }
  std::sort(kept.begin(), kept.end());
  std::copy(kept.begin(), kept.end(), sel);
  *m = static_cast<int64_t>(kept.size());
  *handled = true;
  return Status::OK();
}

}  // namespace

Result<std::vector<int64_t>> EvaluateSelection(const Expr& predicate, const RecordBatch& batch, EvalContext* ctx) {
  const int64_t n = batch.num_rows;
  std::vector<const Expr*> conjuncts;
  FlattenAnd(predicate, &conjuncts);
  std::vector<int64_t> sel(static_cast<size_t>(n));
  int64_t m = n;
  bool first = true;  // sel not yet written: every row is selected
  std::vector<const Expr*> rest;
  for (const Expr* c : conjuncts) {
    if (!first && m == 0) break;
    bool handled = false;
    QUIVER_RETURN_NOT_OK(TrySelectComparison(*c, batch, ctx, first, sel.data(), &m, &handled));
    if (handled) {
      first = false;
    } else {
      rest.push_back(c);
    }
  }
  for (const Expr* c : rest) {
    if (!first && m == 0) break;
    if (!first) {
      // AND / OR of comparisons run on the rows left through the
      // comparison steps; other conjuncts, once few rows are left, on
      // those rows only (their columns gathered).
      bool handled = false;
      QUIVER_RETURN_NOT_OK(TrySelectLogical(*c, batch, ctx, sel.data(), &m, &handled));
      if (handled) continue;
      if (m <= n / 2) {
        QUIVER_ASSIGN_OR_RETURN(m, NarrowOnSelected(*c, batch, ctx, sel.data(), m));
        continue;
      }
    }
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*c, batch, ctx));
    if (v.type()->id == TypeId::kNull) {
      m = 0;
      first = false;
      break;
    }
    if (v.constant) {
      if (v.IsNull(0) || !v.BoolAt(0)) {
        m = 0;
        first = false;
        break;
      }
      continue;
    }
    const uint8_t* bits = v.array->buffers[1]->data();
    const int64_t off = v.array->offset;
    const bool nulls = v.MayHaveNulls();
    auto pred = [&](int64_t i) { return bit_util::GetBit(bits, off + i) && (!nulls || !v.IsNull(i)); };
    m = first ? SelectAll(n, pred, sel.data()) : SelectSome(sel.data(), m, pred);
    first = false;
  }
  if (first) {
    for (int64_t i = 0; i < n; ++i) sel[static_cast<size_t>(i)] = i;
  }
  sel.resize(static_cast<size_t>(m));
  return sel;
}

}  // namespace quiver::sql
