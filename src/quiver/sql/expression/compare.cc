// quiver/sql/expression/compare.cc — comparisons across numeric classes
// (exact: 128-bit integers at a common scale; DOUBLE when either side is),
// strings (bytes, memcmp order), dates and timestamps (a date is its
// midnight), booleans; three-valued AND / OR / NOT / IS [NOT] NULL; IN
// lists (hashed when constant); COALESCE, NULLIF and the CASE merge.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql::kernels {
namespace {

constexpr i128 kMicrosPerDay = static_cast<i128>(86400) * 1000000;

// x * m, saturated: a value beyond 128 bits at the common scale is beyond
// every value of the other side, so order is kept.
i128 ScaleSat(i128 x, i128 m) {
  i128 r;
  if (!__builtin_mul_overflow(x, m, &r)) return r;
  const i128 max = static_cast<i128>(~static_cast<unsigned __int128>(0) >> 1);
  return x < 0 ? -max - 1 : max;
}

// Exact values of a Vec as i128, multiplied by `mult`.
struct ExactScaled {
  const Vec* v;
  i128 mult;
  const int64_t* i64 = nullptr;
  const int32_t* i32 = nullptr;
  i128 constant = 0;
  bool is_const;
  ExactScaled(const Vec& vec, i128 m) : v(&vec), mult(m), is_const(vec.constant) {
    if (is_const) {
      constant = vec.IsNull(0) ? 0 : ScaleSat(vec.ExactAt(0), m);
    } else if (vec.type()->id == TypeId::kInt64 || vec.type()->id == TypeId::kTimestamp || IsDecimal64(*vec.type())) {
      i64 = vec.Values<int64_t>();
    } else if (vec.type()->id == TypeId::kInt32 || vec.type()->id == TypeId::kDate32) {
      i32 = vec.Values<int32_t>();
    }
  }
  i128 operator[](int64_t i) const {
    if (is_const) return constant;
    if (i64) return ScaleSat(i64[i], mult);
    if (i32) return ScaleSat(i32[i], mult);
    return ScaleSat(v->ExactAt(i), mult);
  }
};

template <typename T>
bool Apply(Fn op, const T& a, const T& b) {
  switch (op) {
    case Fn::kEq: return a == b;
    case Fn::kNe: return a != b;
    case Fn::kLt: return a < b;
    case Fn::kLe: return a <= b;
    case Fn::kGt: return a > b;
    default: return a >= b;
  }
}

// PostgreSQL float order: NaN equals NaN and sorts above every number.
int CompareDoubles(double a, double b) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return a < b ? -1 : (a > b ? 1 : 0);
}

template <typename Get, typename Cmp>
void Loop(int64_t n, uint8_t* bits, Get&& get, Cmp&& cmp) {
  for (int64_t i = 0; i < n; ++i) {
    if (cmp(get, i)) bit_util::SetBit(bits, i);
  }
}

Result<Vec> FinishBool(FixedBuilder* b, const std::vector<Vec>& args, int64_t rows) {
  for (const auto& a : args) {
    if (!a.MayHaveNulls()) continue;
    for (int64_t i = 0; i < rows; ++i)
      if (a.IsNull(i)) QUIVER_RETURN_NOT_OK(b->SetNull(i));
  }
  Vec out;
  out.array = b->Finish();
  out.constant = rows == 1 && args[0].constant && (args.size() < 2 || args[1].constant);
  return out;
}

// The multiplier bringing an exact / temporal type to the common unit.
void CommonExact(const DataType& l, const DataType& r, i128* ml, i128* mr) {
  const TypeClass cl = ClassOf(l), cr = ClassOf(r);
  if (cl == TypeClass::kDate && cr == TypeClass::kTimestamp) {
    *ml = kMicrosPerDay;
    *mr = 1;
    return;
  }
  if (cl == TypeClass::kTimestamp && cr == TypeClass::kDate) {
    *ml = 1;
    *mr = kMicrosPerDay;
    return;
  }
  const int sl = ScaleOf(l), sr = ScaleOf(r), s = std::max(sl, sr);
  *ml = Pow10(s - sl);
  *mr = Pow10(s - sr);
}

}  // namespace

Result<Vec> Compare(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const Vec& l = args[0];
  const Vec& r = args[1];
  const bool both_const = l.constant && r.constant;
  const int64_t rows = both_const ? 1 : n;
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(boolean(), rows, ctx->pool));
  if (l.type()->id == TypeId::kNull || r.type()->id == TypeId::kNull) {
    for (int64_t i = 0; i < rows; ++i) QUIVER_RETURN_NOT_OK(b.SetNull(i));
    Vec out;
    out.array = b.Finish();
    out.constant = both_const;
    return out;
  }
  uint8_t* bits = b.bits();
  const Fn op = e.fn;
  const TypeClass cl = ClassOf(*l.type()), cr = ClassOf(*r.type());
  if (cl == TypeClass::kString && cr == TypeClass::kString) {
    if (r.constant && !l.constant && !r.IsNull(0)) {
      const std::string_view c = r.StringAt(0);
      const int32_t* off = reinterpret_cast<const int32_t*>(l.array->buffers[1]->data()) + l.array->offset;
      const char* data = reinterpret_cast<const char*>(l.array->buffers[2]->data());
      if (op == Fn::kEq || op == Fn::kNe) {
        const bool want = op == Fn::kEq;
        for (int64_t i = 0; i < rows; ++i) {
          const size_t len = static_cast<size_t>(off[i + 1] - off[i]);
          const bool eq = len == c.size() && std::memcmp(data + off[i], c.data(), len) == 0;
          if (eq == want) bit_util::SetBit(bits, i);
        }
      } else {
        for (int64_t i = 0; i < rows; ++i) {
          const std::string_view v(data + off[i], static_cast<size_t>(off[i + 1] - off[i]));
          if (Apply(op, v.compare(c), 0)) bit_util::SetBit(bits, i);
        }
      }
    } else {
      for (int64_t i = 0; i < rows; ++i) {
        if (l.IsNull(i) || r.IsNull(i)) continue;
        if (Apply(op, l.StringAt(i).compare(r.StringAt(i)), 0)) bit_util::SetBit(bits, i);
      }
    }
    return FinishBool(&b, args, rows);
  }
  if (cl == TypeClass::kFloat || cr == TypeClass::kFloat) {
    for (int64_t i = 0; i < rows; ++i) {
      if (l.IsNull(i) || r.IsNull(i)) continue;
      if (Apply(op, CompareDoubles(l.FloatAt(i), r.FloatAt(i)), 0)) bit_util::SetBit(bits, i);
    }
    return FinishBool(&b, args, rows);
  }
  if (cl == TypeClass::kOther || cr == TypeClass::kOther || cl == TypeClass::kString || cr == TypeClass::kString)
    return Status::NotImplemented("comparing " + l.type()->ToString() + " with " + r.type()->ToString());
  i128 ml, mr;
  CommonExact(*l.type(), *r.type(), &ml, &mr);
  // Fast paths: a column of int64 / int32 / date32 against a constant.
  if (r.constant && !l.constant && ml == 1 && !r.IsNull(0)) {
    const i128 c = ScaleSat(r.ExactAt(0), mr);
    const TypeId id = l.type()->id;
    if (id == TypeId::kInt64 || id == TypeId::kTimestamp || IsDecimal64(*l.type())) {
      const int64_t* v = l.Values<int64_t>();
      if (c >= INT64_MIN && c <= INT64_MAX) {
        const int64_t c64 = static_cast<int64_t>(c);
        for (int64_t i = 0; i < rows; ++i)
          if (Apply(op, v[i], c64)) bit_util::SetBit(bits, i);
        return FinishBool(&b, args, rows);
      }
    } else if (id == TypeId::kInt32 || id == TypeId::kDate32) {
      const int32_t* v = l.Values<int32_t>();
      if (c >= INT32_MIN && c <= INT32_MAX) {
        const int32_t c32 = static_cast<int32_t>(c);
        for (int64_t i = 0; i < rows; ++i)
          if (Apply(op, v[i], c32)) bit_util::SetBit(bits, i);
        return FinishBool(&b, args, rows);
      }
    } else if (IsDecimal128(*l.type())) {
      const uint8_t* v = l.array->buffers[1]->data() + l.array->offset * 16;
      for (int64_t i = 0; i < rows; ++i) {
        i128 x;
        std::memcpy(&x, v + i * 16, 16);
        if (Apply(op, x, c)) bit_util::SetBit(bits, i);
      }
      return FinishBool(&b, args, rows);
    }
  }
  const ExactScaled a(l, ml), c(r, mr);
  for (int64_t i = 0; i < rows; ++i)
    if (Apply(op, a[i], c[i])) bit_util::SetBit(bits, i);
  return FinishBool(&b, args, rows);
}

namespace {

// Truth bytes (0 false, 1 true, 2 unknown) of a boolean Vec.
void TruthOf(const Vec& v, int64_t n, std::vector<uint8_t>* out) {
  out->resize(static_cast<size_t>(n));
  if (v.type()->id == TypeId::kNull) {
    std::fill(out->begin(), out->end(), 2);
    return;
  }
  if (v.constant) {
    std::fill(out->begin(), out->end(), v.IsNull(0) ? 2 : (v.BoolAt(0) ? 1 : 0));
    return;
  }
  const uint8_t* bits = v.array->buffers[1]->data();
  const int64_t off = v.array->offset;
  const bool nulls = v.MayHaveNulls();
  for (int64_t i = 0; i < n; ++i) {
    (*out)[static_cast<size_t>(i)] = (nulls && v.IsNull(i)) ? 2 : bit_util::GetBit(bits, off + i);
  }
}

bool AllConst(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant) return false;
  return true;
}

}  // namespace

Result<Vec> Logic(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConst(args);
  const int64_t rows = all_const ? 1 : n;
  std::vector<uint8_t> acc, t;
  switch (e.fn) {
    case Fn::kIsNull:
    case Fn::kIsNotNull: {
      QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(boolean(), rows, ctx->pool));
      const bool want_null = e.fn == Fn::kIsNull;
      for (int64_t i = 0; i < rows; ++i)
        if (args[0].IsNull(i) == want_null) bit_util::SetBit(b.bits(), i);
      Vec out;
      out.array = b.Finish();
      out.constant = all_const;
      return out;
    }
    case Fn::kNot: {
      TruthOf(args[0], rows, &acc);
      for (auto& x : acc) x = x == 2 ? 2 : 1 - x;
      break;
    }
    case Fn::kAnd: {
      TruthOf(args[0], rows, &acc);
      for (size_t k = 1; k < args.size(); ++k) {
        TruthOf(args[k], rows, &t);
        for (int64_t i = 0; i < rows; ++i) {
          uint8_t& a = acc[static_cast<size_t>(i)];
          const uint8_t x = t[static_cast<size_t>(i)];
          a = (a == 0 || x == 0) ? 0 : ((a == 2 || x == 2) ? 2 : 1);
        }
      }
      break;
    }
    case Fn::kOr: {
      TruthOf(args[0], rows, &acc);
      for (size_t k = 1; k < args.size(); ++k) {
        TruthOf(args[k], rows, &t);
        for (int64_t i = 0; i < rows; ++i) {
          uint8_t& a = acc[static_cast<size_t>(i)];
          const uint8_t x = t[static_cast<size_t>(i)];
          a = (a == 1 || x == 1) ? 1 : ((a == 2 || x == 2) ? 2 : 0);
        }
      }
      break;
    }
    default: return Status::NotImplemented(std::string("logic ") + FnName(e.fn));
  }
  Vec out;
  QUIVER_ASSIGN_OR_RETURN(out.array, BoolArrayFromTruth(acc.data(), rows, ctx->pool));
  out.constant = all_const;
  return out;
}

// ---- IN lists ---------------------------------------------------------------

namespace {

struct I128Hash {
  size_t operator()(i128 v) const noexcept {
    const auto u = static_cast<unsigned __int128>(v);
    uint64_t h = static_cast<uint64_t>(u) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(u >> 64);
    h ^= h >> 29;
    return static_cast<size_t>(h * 0xBF58476D1CE4E5B9ULL);
  }
};

struct InSet {
  TypeClass cls = TypeClass::kNull;
  i128 mult = 1;  // probe values are multiplied by this to reach the items' unit
  std::unordered_set<i128, I128Hash> exact;
  std::unordered_set<double> reals;
  std::unordered_set<std::string> strings;
  bool has_null = false;
  std::vector<Value> items;  // as given (InSetItems)
};

}  // namespace

const std::vector<Value>& InSetItems(const void* aux) { return static_cast<const InSet*>(aux)->items; }

std::shared_ptr<const void> MakeInSet(const DataTypePtr& probe_type, const std::vector<Value>& items) {
  auto set = std::make_shared<InSet>();
  set->items = items;
  const TypeClass pc = ClassOf(*probe_type);
  bool any_float = pc == TypeClass::kFloat;
  int scale = ScaleOf(*probe_type);
  for (const auto& v : items) {
    if (v.is_null) continue;
    if (ClassOf(*v.type) == TypeClass::kFloat) any_float = true;
    scale = std::max(scale, ScaleOf(*v.type));
  }
  for (const auto& v : items) {
    if (v.is_null) {
      set->has_null = true;
      continue;
    }
    const TypeClass vc = ClassOf(*v.type);
    if (pc == TypeClass::kString) {
      set->cls = TypeClass::kString;
      set->strings.insert(v.s);
    } else if (any_float) {
      set->cls = TypeClass::kFloat;
      set->reals.insert(vc == TypeClass::kFloat ? v.f : DecimalToDouble(v.i, ScaleOf(*v.type)));
    } else if (pc == TypeClass::kTimestamp && vc == TypeClass::kDate) {
      set->cls = TypeClass::kTimestamp;
      set->exact.insert(v.i * kMicrosPerDay);
    } else {
      set->cls = pc;
      set->exact.insert(ScaleSat(v.i, Pow10(scale - ScaleOf(*v.type))));
    }
  }
  if (set->cls == TypeClass::kNull) set->cls = any_float ? TypeClass::kFloat : pc;
  set->mult = any_float || pc == TypeClass::kString ? 1 : Pow10(scale - ScaleOf(*probe_type));
  return set;
}

Result<Vec> InList(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const Vec& x = args[0];
  const bool negated = e.negated;
  // One row only when the probe and every item are constants: a constant
  // probe against column items (`51 IN (col0, col1)`) differs row by row.
  bool all_constant = x.constant;
  for (size_t k = 1; k < args.size() && all_constant && !e.aux; ++k) all_constant = args[k].constant;
  std::vector<uint8_t> truth(static_cast<size_t>(all_constant ? 1 : n), 0);
  const int64_t rows = static_cast<int64_t>(truth.size());
  if (e.aux) {
    const auto& set = *static_cast<const InSet*>(e.aux.get());
    for (int64_t i = 0; i < rows; ++i) {
      if (x.IsNull(i)) {
        truth[static_cast<size_t>(i)] = 2;
        continue;
      }
      bool found = false;
      switch (set.cls) {
        case TypeClass::kString: found = set.strings.count(std::string(x.StringAt(i))) != 0; break;
        case TypeClass::kFloat: {
          double v = x.FloatAt(i);
          if (v == 0) v = 0;
          found = set.reals.count(v) != 0;
          break;
        }
        default: found = set.exact.count(ScaleSat(x.ExactAt(i), set.mult)) != 0; break;
      }
      truth[static_cast<size_t>(i)] = found ? 1 : (set.has_null ? 2 : 0);
    }
  } else {
    // Non-constant items: an OR chain of equalities.
    Expr eq;
    eq.kind = Expr::Kind::kCall;
    eq.fn = Fn::kEq;
    eq.type = boolean();
    for (size_t k = 1; k < args.size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(Vec c, Compare(eq, {x, args[k]}, n, ctx));
      for (int64_t i = 0; i < rows; ++i) {
        uint8_t& a = truth[static_cast<size_t>(i)];
        const uint8_t t = c.IsNull(i) ? 2 : c.BoolAt(i);
        a = (a == 1 || t == 1) ? 1 : ((a == 2 || t == 2) ? 2 : 0);
      }
    }
  }
  if (negated)
    for (auto& t : truth) t = t == 2 ? 2 : 1 - t;
  Vec out;
  QUIVER_ASSIGN_OR_RETURN(out.array, BoolArrayFromTruth(truth.data(), rows, ctx->pool));
  out.constant = all_constant && rows == 1;
  return out;
}

// ---- COALESCE / NULLIF / CASE merge -----------------------------------------

Result<Vec> MergeBranches(const DataTypePtr& type, const std::vector<int32_t>& branch,
                          const std::vector<int64_t>& index, const std::vector<Vec>& results, int64_t n,
                          MemoryPool* pool) {
  auto src_null = [&](int64_t r) {
    const Vec& v = results[static_cast<size_t>(branch[static_cast<size_t>(r)])];
    return !v.array || v.type()->id == TypeId::kNull || v.IsNull(index[static_cast<size_t>(r)]);
  };
  if (ClassOf(*type) == TypeClass::kNull) {
    Vec out;
    QUIVER_ASSIGN_OR_RETURN(out, ConstantVec(Value::Null(null()), pool));
    QUIVER_ASSIGN_OR_RETURN(out.array, Materialize(out, n, pool));
    out.constant = false;
    return out;
  }
  if (ClassOf(*type) == TypeClass::kString) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 8, pool));
    for (int64_t r = 0; r < n; ++r) {
      if (src_null(r)) {
        QUIVER_RETURN_NOT_OK(b.AppendNull());
      } else {
        QUIVER_RETURN_NOT_OK(b.Append(
            results[static_cast<size_t>(branch[static_cast<size_t>(r)])].StringAt(index[static_cast<size_t>(r)])));
      }
    }
    Vec out;
    QUIVER_ASSIGN_OR_RETURN(out.array, b.Finish());
    return out;
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(type, n, pool));
  QUIVER_RETURN_NOT_OK(VisitSqlStorage(
      *type,
      [&]<typename T>() -> Status {
        for (int64_t r = 0; r < n; ++r) {
          if (src_null(r)) {
            QUIVER_RETURN_NOT_OK(b.SetNull(r));
            continue;
          }
          const Vec& v = results[static_cast<size_t>(branch[static_cast<size_t>(r)])];
          const int64_t k = index[static_cast<size_t>(r)];
          if constexpr (kIsPackedBit<T>) {
            bit_util::SetBitTo(b.bits(), r, v.BoolAt(k));
          } else if constexpr (std::is_floating_point_v<T>) {
            b.values<T>()[r] = v.FloatAt(k);
          } else if constexpr (std::is_same_v<T, i128>) {
            const i128 x = ScaleSat(v.ExactAt(k), Pow10(type->scale - ScaleOf(*v.type())));
            std::memcpy(b.values<uint8_t>() + r * 16, &x, 16);
          } else if (type->id == TypeId::kDecimal) {  // decimal64: the branches fit its precision
            b.values<T>()[r] = static_cast<T>(ScaleSat(v.ExactAt(k), Pow10(type->scale - ScaleOf(*v.type()))));
          } else {
            b.values<T>()[r] = static_cast<T>(v.ExactAt(k));
          }
        }
        return Status::OK();
      },
      [&] { return Status::NotImplemented("CASE result of type " + type->ToString()); }));
  Vec out;
  out.array = b.Finish();
  return out;
}

Result<Vec> Conditional(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConst(args);
  const int64_t rows = all_const ? 1 : n;
  std::vector<int32_t> branch(static_cast<size_t>(rows), 0);
  std::vector<int64_t> index(static_cast<size_t>(rows));
  std::vector<Vec> results = args;
  for (int64_t r = 0; r < rows; ++r) index[static_cast<size_t>(r)] = r;
  if (e.fn == Fn::kCoalesce) {
    for (int64_t r = 0; r < rows; ++r) {
      int32_t k = 0;
      while (k + 1 < static_cast<int32_t>(args.size()) && args[static_cast<size_t>(k)].IsNull(r)) ++k;
      branch[static_cast<size_t>(r)] = k;
    }
    for (auto& v : results)
      if (v.constant) {
        QUIVER_ASSIGN_OR_RETURN(v.array, Materialize(v, rows, ctx->pool));
        v.constant = false;
      }
  } else {  // NULLIF(a, b): NULL when a = b
    Expr eq;
    eq.kind = Expr::Kind::kCall;
    eq.fn = Fn::kEq;
    eq.type = boolean();
    QUIVER_ASSIGN_OR_RETURN(Vec same, Compare(eq, args, rows, ctx));
    QUIVER_ASSIGN_OR_RETURN(Vec null_vec, ConstantVec(Value::Null(null()), ctx->pool));
    results = {args[0], null_vec};
    if (results[0].constant) {
      QUIVER_ASSIGN_OR_RETURN(results[0].array, Materialize(results[0], rows, ctx->pool));
      results[0].constant = false;
    }
    for (int64_t r = 0; r < rows; ++r) {
      if (!same.IsNull(r) && same.BoolAt(r)) {
        branch[static_cast<size_t>(r)] = 1;
        index[static_cast<size_t>(r)] = 0;
      }
    }
  }
  QUIVER_ASSIGN_OR_RETURN(Vec out, MergeBranches(e.type, branch, index, results, rows, ctx->pool));
  out.constant = all_const;
  return out;
}

}  // namespace quiver::sql::kernels
