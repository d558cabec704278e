// quiver/sql/expression.h — bound predicates of the SQL layer and their
// batch-at-a-time evaluation in SQL three-valued logic (internal to
// quiver/sql; the planner in engine.cc builds them).
//
// A predicate is a tree of AND / OR / NOT over leaves: comparisons of two
// operands (columns or literals) in one comparison class, IS [NOT] NULL, a
// boolean column, a constant, or membership of a column in a hashed set of
// literals. BETWEEN is planned as an AND of comparisons; `col IN (v1, ...)`
// as one hashed membership test per comparison class of its items (a NULL
// item adds an unknown term), OR-ed — which gives exactly the three-valued
// semantics of the OR chain `col = v1 OR col = v2 ...` in O(1) per row
// instead of O(items).
//
// Thread safety: a bound Expr is immutable; Evaluate is pure.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
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

/// The non-NULL literals of an IN list that share one comparison class,
/// hashed (built once when planning; looked up once per row).
struct InSet {
  struct ExactHash {
    size_t operator()(__int128 v) const noexcept {
      const auto u = static_cast<unsigned __int128>(v);
      uint64_t h = static_cast<uint64_t>(u) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(u >> 64);
      h ^= h >> 29;
      return static_cast<size_t>(h * 0xBF58476D1CE4E5B9ULL);
    }
  };
  struct BytesHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const noexcept { return std::hash<std::string_view>{}(v); }
  };
  /// kExact: unscaled values at the column's own scale (items that are not
  /// representable at that scale can never be equal and are left out);
  /// kTemporal: nanoseconds; kBool: 0 / 1.
  std::unordered_set<__int128, ExactHash> exact;
  /// kFloat: the bits of each value, canonical (-0.0 as 0.0, every NaN as
  /// one quiet NaN: NaN equals NaN, as in PostgreSQL).
  std::unordered_set<uint64_t> real_bits;
  /// kString: the bytes.
  std::unordered_set<std::string, BytesHash, std::equal_to<>> bytes;

  /// The canonical bits of `v` for real_bits.
  static uint64_t CanonicalBits(double v);
};

struct Expr {
  /// kInSet: `lhs` (a column; kExact at rescale 0) is in `in_set` — true
  /// when it is, unknown when it is NULL, false otherwise.
  enum class Kind : uint8_t { kAnd, kOr, kNot, kCompare, kIsNull, kIsNotNull, kBoolColumn, kConst, kInSet };
  Kind kind = Kind::kConst;
  std::vector<std::unique_ptr<Expr>> args;  ///< kAnd / kOr (>= 1), kNot (1)
  CompareOp op = CompareOp::kEq;
  CompareClass cls = CompareClass::kExact;
  Operand lhs, rhs;                     ///< kCompare; kIsNull / kIsNotNull / kBoolColumn use lhs
  Truth value = kTrue;                  ///< kConst
  std::shared_ptr<const InSet> in_set;  ///< kInSet
};

/// Evaluates `expr` over the rows of `batch` (whose columns the operands'
/// indices name, of the types they were planned for) into `out`
/// (resized to num_rows, one Truth per row).
/// `cancel` (may be null) is polled between the terms of every AND / OR, so
/// that a long predicate over a large batch stops soon after it is set:
/// Cancelled("statement cancelled"), `out` then unspecified.
Status Evaluate(const Expr& expr, const RecordBatch& batch, std::vector<uint8_t>* out,
                const std::atomic<bool>* cancel = nullptr);

/// The rows of `batch` for which `expr` is true: the batch itself when all
/// are, nullptr when none is, otherwise a new batch of those rows (columns
/// gathered with Take (columnar/take.h) from `pool`, the same schema).
/// Errors: OutOfMemory from `pool`; NotImplemented for a column type rows
/// cannot be gathered for (checked when planning); Cancelled as Evaluate.
Result<RecordBatchPtr> FilterBatch(const Expr& expr, const RecordBatchPtr& batch, MemoryPool* pool,
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace quiver::sql
