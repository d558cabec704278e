// quiver/sql/expression.cc — see expression.h.
#include "quiver/sql/expression.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/take.h"
#include "quiver/columnar/type_visit.h"
#include "quiver/columnar/value_format.h"
#include "quiver/join/key_types.h"
#include "quiver/join/row_format.h"

namespace quiver::sql {
namespace {

using i128 = __int128;

i128 Pow10(int n) {
  i128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// The values of one operand over a batch, in its comparison class.
struct Values {
  bool is_const = false;
  std::vector<i128> exact;
  std::vector<double> real;
  std::vector<std::string_view> bytes;
  std::vector<uint8_t> valid;
  size_t at(int64_t i) const { return is_const ? 0 : static_cast<size_t>(i); }
};

// An exact numeric (an integer of any width, uint64 in full, or a decimal
// of up to 128 bits) as an i128 at the column's own scale.
i128 LoadExact(const ArrayData& a, int64_t i) {
  const int64_t j = a.offset + i;
  if (a.type->id == TypeId::kDecimal) {
    if (a.type->bit_width == 32) return a.GetValues<int32_t>(1)[j];
    if (a.type->bit_width == 64) return a.GetValues<int64_t>(1)[j];
    const uint8_t* p = a.GetValues<uint8_t>(1) + j * 16;
    const uint64_t lo = bit_util::LoadLE<uint64_t>(p);
    const int64_t hi = bit_util::LoadLE<int64_t>(p + 8);
    return static_cast<i128>((static_cast<unsigned __int128>(static_cast<uint64_t>(hi)) << 64) | lo);
  }
  return VisitIntegerType(
      a.type->id, [&]<typename T>() -> i128 { return a.GetValues<T>(1)[j]; }, []() -> i128 { return 0; });
}

i128 LoadTemporalNs(const ArrayData& a, int64_t i) {
  const int64_t j = a.offset + i;
  switch (a.type->id) {
    case TypeId::kDate32: return static_cast<i128>(a.GetValues<int32_t>(1)[j]) * 86400 * 1000000000LL;
    case TypeId::kDate64: return static_cast<i128>(a.GetValues<int64_t>(1)[j]) * 1000000;
    case TypeId::kTimestamp: {
      const i128 v = a.GetValues<int64_t>(1)[j];
      switch (a.type->unit) {
        case TimeUnit::kSecond: return v * 1000000000;
        case TimeUnit::kMilli: return v * 1000000;
        case TimeUnit::kMicro: return v * 1000;
        case TimeUnit::kNano: return v;
      }
      return v;
    }
    default: return 0;
  }
}

void Load(const Operand& op, CompareClass cls, const RecordBatch& batch, Values* out) {
  if (op.column < 0) {
    out->is_const = true;
    out->valid.assign(1, op.literal.is_null ? 0 : 1);
    switch (cls) {
      case CompareClass::kExact:
      case CompareClass::kTemporal:
      case CompareClass::kBool: out->exact.assign(1, op.literal.exact); break;
      case CompareClass::kFloat: out->real.assign(1, op.literal.real); break;
      case CompareClass::kString: out->bytes.assign(1, std::string_view(op.literal.bytes)); break;
    }
    return;
  }
  const ArrayData& a = *batch.columns[static_cast<size_t>(op.column)];
  const int64_t n = batch.num_rows;
  out->valid.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out->valid[i] = a.IsValid(i) ? 1 : 0;
  switch (cls) {
    case CompareClass::kExact: {
      out->exact.resize(static_cast<size_t>(n));
      const i128 m = Pow10(op.rescale);
      for (int64_t i = 0; i < n; ++i) out->exact[i] = out->valid[i] ? LoadExact(a, i) * m : 0;
      break;
    }
    case CompareClass::kFloat: {
      out->real.resize(static_cast<size_t>(n));
      if (a.type->id == TypeId::kFloat32) {
        const float* v = a.GetValues<float>(1) + a.offset;
        for (int64_t i = 0; i < n; ++i) out->real[i] = v[i];
      } else if (a.type->id == TypeId::kFloat64) {
        const double* v = a.GetValues<double>(1) + a.offset;
        for (int64_t i = 0; i < n; ++i) out->real[i] = v[i];
      } else {
        const long double d = static_cast<long double>(Pow10(op.source_scale));
        for (int64_t i = 0; i < n; ++i) {
          out->real[i] = out->valid[i] ? static_cast<double>(static_cast<long double>(LoadExact(a, i)) / d) : 0;
        }
      }
      break;
    }
    case CompareClass::kString:
      out->bytes.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out->bytes[i] = out->valid[i] ? BinaryValueAt(a, i) : std::string_view();
      break;
    case CompareClass::kTemporal:
      out->exact.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) out->exact[i] = out->valid[i] ? LoadTemporalNs(a, i) : 0;
      break;
    case CompareClass::kBool:
      out->exact.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        out->exact[i] = out->valid[i] ? (bit_util::GetBit(a.buffers[1]->data(), a.offset + i) ? 1 : 0) : 0;
      }
      break;
  }
}

inline bool Apply(CompareOp op, int c) {
  switch (op) {
    case CompareOp::kEq: return c == 0;
    case CompareOp::kNe: return c != 0;
    case CompareOp::kLt: return c < 0;
    case CompareOp::kLe: return c <= 0;
    case CompareOp::kGt: return c > 0;
    case CompareOp::kGe: return c >= 0;
  }
  return false;
}

inline int CompareReal(double a, double b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  return a < b ? -1 : (a > b ? 1 : 0);
}

void EvaluateCompare(const Expr& e, const RecordBatch& batch, std::vector<uint8_t>* out) {
  Values l, r;
  Load(e.lhs, e.cls, batch, &l);
  Load(e.rhs, e.cls, batch, &r);
  const int64_t n = batch.num_rows;
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const size_t a = l.at(i), b = r.at(i);
    if (!l.valid[a] || !r.valid[b]) {
      (*out)[i] = kUnknown;
      continue;
    }
    int c = 0;
    switch (e.cls) {
      case CompareClass::kExact:
      case CompareClass::kTemporal:
      case CompareClass::kBool: c = l.exact[a] < r.exact[b] ? -1 : (l.exact[a] > r.exact[b] ? 1 : 0); break;
      case CompareClass::kFloat: c = CompareReal(l.real[a], r.real[b]); break;
      case CompareClass::kString: {
        const int k = l.bytes[a].compare(r.bytes[b]);
        c = k < 0 ? -1 : (k > 0 ? 1 : 0);
        break;
      }
    }
    (*out)[i] = Apply(e.op, c) ? kTrue : kFalse;
  }
}

void EvaluateInSet(const Expr& e, const RecordBatch& batch, std::vector<uint8_t>* out) {
  Values v;
  Load(e.lhs, e.cls, batch, &v);
  const InSet& set = *e.in_set;
  const int64_t n = batch.num_rows;
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const size_t a = v.at(i);
    if (!v.valid[a]) {
      (*out)[i] = kUnknown;
      continue;
    }
    bool found = false;
    switch (e.cls) {
      case CompareClass::kExact:
      case CompareClass::kTemporal:
      case CompareClass::kBool: found = set.exact.count(v.exact[a]) != 0; break;
      case CompareClass::kFloat: found = set.real_bits.count(InSet::CanonicalBits(v.real[a])) != 0; break;
      case CompareClass::kString: found = set.bytes.find(v.bytes[a]) != set.bytes.end(); break;
    }
    (*out)[i] = found ? kTrue : kFalse;
  }
}

Status CheckCancel(const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return Status::Cancelled("statement cancelled");
  return Status::OK();
}

}  // namespace

uint64_t InSet::CanonicalBits(double v) {
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
  if (v == 0) v = 0.0;  // -0.0 == 0.0
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

Status Evaluate(const Expr& e, const RecordBatch& batch, std::vector<uint8_t>* out, const std::atomic<bool>* cancel) {
  const int64_t n = batch.num_rows;
  switch (e.kind) {
    case Expr::Kind::kConst: out->assign(static_cast<size_t>(n), e.value); return Status::OK();
    case Expr::Kind::kCompare: EvaluateCompare(e, batch, out); return Status::OK();
    case Expr::Kind::kInSet: EvaluateInSet(e, batch, out); return Status::OK();
    case Expr::Kind::kIsNull:
    case Expr::Kind::kIsNotNull: {
      out->resize(static_cast<size_t>(n));
      const bool want_null = e.kind == Expr::Kind::kIsNull;
      if (e.lhs.column < 0) {
        out->assign(static_cast<size_t>(n), (e.lhs.literal.is_null == want_null) ? kTrue : kFalse);
        return Status::OK();
      }
      const ArrayData& a = *batch.columns[static_cast<size_t>(e.lhs.column)];
      for (int64_t i = 0; i < n; ++i) (*out)[i] = (!a.IsValid(i) == want_null) ? kTrue : kFalse;
      return Status::OK();
    }
    case Expr::Kind::kBoolColumn: {
      out->resize(static_cast<size_t>(n));
      const ArrayData& a = *batch.columns[static_cast<size_t>(e.lhs.column)];
      for (int64_t i = 0; i < n; ++i) {
        (*out)[i] = !a.IsValid(i) ? kUnknown : (bit_util::GetBit(a.buffers[1]->data(), a.offset + i) ? kTrue : kFalse);
      }
      return Status::OK();
    }
    case Expr::Kind::kNot: {
      QUIVER_RETURN_NOT_OK(Evaluate(*e.args[0], batch, out, cancel));
      for (uint8_t& t : *out) t = t == kUnknown ? kUnknown : (t == kTrue ? kFalse : kTrue);
      return Status::OK();
    }
    case Expr::Kind::kAnd:
    case Expr::Kind::kOr: {
      QUIVER_RETURN_NOT_OK(Evaluate(*e.args[0], batch, out, cancel));
      std::vector<uint8_t> next;
      const bool is_and = e.kind == Expr::Kind::kAnd;
      for (size_t k = 1; k < e.args.size(); ++k) {
        QUIVER_RETURN_NOT_OK(CheckCancel(cancel));
        QUIVER_RETURN_NOT_OK(Evaluate(*e.args[k], batch, &next, cancel));
        for (int64_t i = 0; i < n; ++i) {
          const uint8_t a = (*out)[i], b = next[i];
          if (is_and) {
            (*out)[i] = (a == kFalse || b == kFalse) ? kFalse : ((a == kUnknown || b == kUnknown) ? kUnknown : kTrue);
          } else {
            (*out)[i] = (a == kTrue || b == kTrue) ? kTrue : ((a == kUnknown || b == kUnknown) ? kUnknown : kFalse);
          }
        }
      }
      return Status::OK();
    }
  }
  return Status::OK();
}

Result<RecordBatchPtr> FilterBatch(const Expr& expr, const RecordBatchPtr& batch, MemoryPool* pool,
                                   const std::atomic<bool>* cancel) {
  std::vector<uint8_t> truth;
  QUIVER_RETURN_NOT_OK(Evaluate(expr, *batch, &truth, cancel));
  std::vector<int64_t> selection;
  selection.reserve(truth.size());
  for (size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] == kTrue) selection.push_back(static_cast<int64_t>(i));
  }
  if (selection.empty()) return RecordBatchPtr{};
  if (static_cast<int64_t>(selection.size()) == batch->num_rows) return batch;
  auto out = std::make_shared<RecordBatch>();
  out->schema = batch->schema;
  out->num_rows = static_cast<int64_t>(selection.size());
  out->columns.reserve(batch->columns.size());
  for (size_t c = 0; c < batch->columns.size(); ++c) {
    QUIVER_ASSIGN_OR_RETURN(
        auto col, Take(*batch->columns[c], selection, pool, "column '" + batch->schema->fields[c]->name + "'"));
    out->columns.push_back(std::move(col));
  }
  return RecordBatchPtr(std::move(out));
}

}  // namespace quiver::sql
