// quiver/sql/expression.h — bound predicates of the SQL layer and their
// batch-at-a-time evaluation in SQL three-valued logic (internal to
// quiver/sql; the planner in engine.cc builds them).
//
// A predicate is a tree of AND / OR / NOT over leaves: comparisons of two
// operands (columns or literals) in one comparison class, IS [NOT] NULL, a
// boolean column, or a constant. IN and BETWEEN are planned as OR / AND of
// comparisons, which gives exactly their three-valued semantics.
//
// Thread safety: a bound Expr is immutable; Evaluate is pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"

namespace quiver::sql {

/// Truth values of three-valued logic, one byte per row.
enum Truth : uint8_t { kFalse = 0, kTrue = 1, kUnknown = 2 };

/// How the two sides of a comparison are compared.
enum class CompareClass : uint8_t {
  kExact,     ///< integers and decimals: 128-bit integers at a common scale
  kFloat,     ///< float64 (NaN equal to NaN and above every number, as PostgreSQL)
  kString,    ///< bytes, memcmp order
  kTemporal,  ///< nanoseconds since 1970-01-01 UTC, 128-bit
  kBool,      ///< false < true
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

/// A literal value, already converted to its comparison class.
struct LiteralValue {
  bool is_null = false;
  CompareClass cls = CompareClass::kExact;
  __int128 exact = 0;  ///< kExact: unscaled at `scale`; kTemporal: ns; kBool: 0/1
  int scale = 0;       ///< kExact only
  double real = 0;     ///< kFloat
  std::string bytes;   ///< kString
};

/// One side of a comparison.
struct Operand {
  /// Column index in the batch the predicate is evaluated on, or -1 for a literal.
  int column = -1;
  /// kExact: powers of ten the column's values are multiplied by to reach
  /// the comparison's scale (0..38, checked to fit 128 bits when planned).
  int rescale = 0;
  /// kExact columns compared as kFloat: the column's decimal scale.
  int source_scale = 0;
  LiteralValue literal;
};

struct Expr {
  enum class Kind : uint8_t { kAnd, kOr, kNot, kCompare, kIsNull, kIsNotNull, kBoolColumn, kConst };
  Kind kind = Kind::kConst;
  std::vector<std::unique_ptr<Expr>> args;  ///< kAnd / kOr (>= 1), kNot (1)
  CompareOp op = CompareOp::kEq;
  CompareClass cls = CompareClass::kExact;
  Operand lhs, rhs;    ///< kCompare; kIsNull / kIsNotNull / kBoolColumn use lhs
  Truth value = kTrue; ///< kConst
};

/// Evaluates `expr` over the rows of `batch` (whose columns the operands'
/// indices name, of the types they were planned for) into `out`
/// (resized to num_rows, one Truth per row).
void Evaluate(const Expr& expr, const RecordBatch& batch, std::vector<uint8_t>* out);

/// The rows of `batch` for which `expr` is true: the batch itself when all
/// are, nullptr when none is, otherwise a new batch of those rows (columns
/// gathered with Take (columnar/take.h) from `pool`, the same schema).
/// Errors: OutOfMemory from `pool`; NotImplemented for a column type rows
/// cannot be gathered for (checked when planning).
Result<RecordBatchPtr> FilterBatch(const Expr& expr, const RecordBatchPtr& batch, MemoryPool* pool);

}  // namespace quiver::sql
