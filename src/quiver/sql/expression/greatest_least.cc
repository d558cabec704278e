// quiver/sql/expression/greatest_least.cc — greatest(...) / least(...): per
// row, the largest / smallest of the arguments that are not NULL (NULL only
// when all are; PostgreSQL, DuckDB and Spark agree). The binder casts every
// argument to their common type first, so the values compare as one type:
// exact numbers, dates, timestamps and booleans as integers, doubles with
// NaN above every number (as in ORDER BY), strings bytewise.
#include <cmath>
#include <vector>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql::kernels {
namespace {

// <0, 0, >0 as row i of a compares to row j of b (both not NULL, one type).
int CompareAt(TypeClass c, const Vec& a, int64_t i, const Vec& b, int64_t j) {
  switch (c) {
    case TypeClass::kFloat: {
      const double x = a.FloatAt(i), y = b.FloatAt(j);
      const bool nx = std::isnan(x), ny = std::isnan(y);
      if (nx || ny) return static_cast<int>(nx) - static_cast<int>(ny);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case TypeClass::kString: {
      const int r = a.StringAt(i).compare(b.StringAt(j));
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    default: {
      const i128 x = a.ExactAt(i), y = b.ExactAt(j);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
  }
}

}  // namespace

Result<Vec> Extreme(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  bool all_const = true;
  for (const auto& a : args) all_const = all_const && a.constant;
  const int64_t rows = all_const ? 1 : n;
  const TypeClass c = ClassOf(*e.type);
  const int sign = e.fn == Fn::kGreatest ? 1 : -1;
  std::vector<Vec> results = args;
  QUIVER_ASSIGN_OR_RETURN(Vec none, ConstantVec(Value::Null(null()), ctx->pool));
  results.push_back(none);  // the branch of a row whose arguments are all NULL
  const int32_t all_null = static_cast<int32_t>(args.size());
  std::vector<int32_t> branch(static_cast<size_t>(rows), all_null);
  std::vector<int64_t> index(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    index[static_cast<size_t>(r)] = r;
    int32_t best = all_null;
    for (size_t k = 0; k < args.size(); ++k) {
      const Vec& a = args[k];
      if (a.type()->id == TypeId::kNull || a.IsNull(r)) continue;
      if (best == all_null || sign * CompareAt(c, a, r, args[static_cast<size_t>(best)], r) > 0)
        best = static_cast<int32_t>(k);
    }
    branch[static_cast<size_t>(r)] = best;
    if (best == all_null) index[static_cast<size_t>(r)] = 0;
  }
  QUIVER_ASSIGN_OR_RETURN(Vec out, MergeBranches(e.type, branch, index, results, rows, ctx->pool));
  out.constant = all_const;
  return out;
}

}  // namespace quiver::sql::kernels
