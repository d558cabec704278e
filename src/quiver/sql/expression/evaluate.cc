// quiver/sql/expression/evaluate.cc — see evaluate.h.
#include "quiver/sql/expression/evaluate.h"

#include <optional>

#include "quiver/columnar/take.h"
#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

Status SqlError(StatusCode code, const char* sql_state, std::string message) {
  return Status(code, std::move(message)).WithSqlState(sql_state);
}

Result<Vec> EvaluateCall(const Expr& e, const RecordBatch& batch, EvalContext* ctx);

namespace {

// `CASE WHEN c THEN x [ELSE NULL] END` with x an array of the CASE's type
// that cannot fail (TPC-DS Q59's seven `CASE WHEN d_day_name = 'Sunday'
// THEN ss_sales_price ELSE NULL END`): x itself, its values shared, with
// NULL where c is not true. Null (nothing written) when the shape differs.
Result<std::optional<Vec>> EvaluateMaskedCase(const Expr& e, const RecordBatch& batch, EvalContext* ctx) {
  if (e.args.size() != 3) return std::optional<Vec>();
  const Expr& otherwise = *e.args[2];
  if (otherwise.kind != Expr::Kind::kConstant || !otherwise.value.is_null || MayFail(*e.args[1]))
    return std::optional<Vec>();
  const int64_t n = batch.num_rows;
  QUIVER_ASSIGN_OR_RETURN(Vec cond, Evaluate(*e.args[0], batch, ctx));
  if (cond.type()->id != TypeId::kBool || cond.constant) return std::optional<Vec>();
  QUIVER_ASSIGN_OR_RETURN(Vec value, Evaluate(*e.args[1], batch, ctx));
  if (value.constant || value.type()->id == TypeId::kNull || !value.type()->Equals(*e.type) ||
      value.array->length != n || value.array->buffers.empty())
    return std::optional<Vec>();
  const ArrayData& v = *value.array;
  const int64_t off = v.offset;
  QUIVER_ASSIGN_OR_RETURN(auto bitmap, Buffer::AllocateZeroed(ctx->pool, bit_util::BytesForBits(off + n)));
  uint8_t* bits = bitmap->mutable_data();
  const uint8_t* cond_values = cond.array->buffers[1]->data();
  const int64_t cond_off = cond.array->offset;
  const uint8_t* cond_valid = cond.MayHaveNulls() && cond.array->buffers[0] ? cond.array->buffers[0]->data() : nullptr;
  const uint8_t* value_valid = v.null_count != 0 && v.buffers[0] ? v.buffers[0]->data() : nullptr;
  int64_t valid = 0;
  for (int64_t r = 0; r < n; ++r) {
    bool pass = bit_util::GetBit(cond_values, cond_off + r);
    if (cond_valid != nullptr) pass = pass && bit_util::GetBit(cond_valid, cond_off + r);
    if (value_valid != nullptr) pass = pass && bit_util::GetBit(value_valid, off + r);
    if (pass) bit_util::SetBit(bits, off + r);
    valid += pass ? 1 : 0;
  }
  auto out = std::make_shared<ArrayData>(v);
  out->buffers[0] = std::move(bitmap);
  out->null_count = n - valid;
  Vec result;
  result.array = std::move(out);
  return std::optional<Vec>(std::move(result));
}

Result<Vec> EvaluateCase(const Expr& e, const RecordBatch& batch, EvalContext* ctx) {
  const int64_t n = batch.num_rows;
  const size_t num_when = (e.args.size() - 1) / 2;
  {
    QUIVER_ASSIGN_OR_RETURN(std::optional<Vec> masked, EvaluateMaskedCase(e, batch, ctx));
    if (masked) return std::move(*masked);
  }
  std::vector<int32_t> branch(static_cast<size_t>(n), static_cast<int32_t>(num_when));  // default: ELSE
  std::vector<uint8_t> decided(static_cast<size_t>(n), 0);
  for (size_t w = 0; w < num_when; ++w) {
    QUIVER_ASSIGN_OR_RETURN(Vec cond, Evaluate(*e.args[2 * w], batch, ctx));
    const bool is_null_type = cond.type()->id == TypeId::kNull;
    for (int64_t r = 0; r < n; ++r) {
      if (decided[static_cast<size_t>(r)]) continue;
      if (is_null_type || cond.IsNull(r) || !cond.BoolAt(r)) continue;
      branch[static_cast<size_t>(r)] = static_cast<int32_t>(w);
      decided[static_cast<size_t>(r)] = 1;
    }
  }
  std::vector<Vec> results(num_when + 1);
  std::vector<int64_t> index(static_cast<size_t>(n));
  std::vector<std::vector<int64_t>> rows_of(num_when + 1);
  for (int64_t r = 0; r < n; ++r) rows_of[static_cast<size_t>(branch[static_cast<size_t>(r)])].push_back(r);
  for (size_t b = 0; b <= num_when; ++b) {
    const Expr& value = *e.args[b < num_when ? 2 * b + 1 : e.args.size() - 1];
    const auto& rows = rows_of[b];
    if (rows.empty()) continue;
    if (static_cast<int64_t>(rows.size()) == n || !MayFail(value)) {
      QUIVER_ASSIGN_OR_RETURN(results[b], Evaluate(value, batch, ctx));
      for (int64_t r : rows) index[static_cast<size_t>(r)] = r;
    } else {
      auto whole = std::make_shared<RecordBatch>(batch);
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr sub, TakeRows(whole, rows, ctx->pool));
      EvalContext subset = *ctx;  // other rows: not the memo's batch
      subset.memo = nullptr;
      QUIVER_ASSIGN_OR_RETURN(results[b], Evaluate(value, *sub, &subset));
      for (size_t k = 0; k < rows.size(); ++k) index[static_cast<size_t>(rows[k])] = static_cast<int64_t>(k);
    }
  }
  return kernels::MergeBranches(e.type, branch, index, results, n, ctx->pool);
}

}  // namespace

Result<Vec> Evaluate(const Expr& e, const RecordBatch& batch, EvalContext* ctx) {
  if (ctx->cancel && ctx->cancel->load(std::memory_order_relaxed)) return Status::Cancelled("statement cancelled");
  switch (e.kind) {
    case Expr::Kind::kColumn: {
      if (e.column < 0 || e.column >= static_cast<int>(batch.columns.size()))
        return Status::Invalid("internal: column position " + std::to_string(e.column) + " outside a batch of " +
                               std::to_string(batch.columns.size()) + " columns");
      Vec v;
      v.array = batch.columns[static_cast<size_t>(e.column)];
      return v;
    }
    case Expr::Kind::kConstant: return ConstantVec(e.value, ctx->pool);
    case Expr::Kind::kSubquery: {
      QUIVER_ASSIGN_OR_RETURN(Value v, e.subquery->Get());
      return ConstantVec(v, ctx->pool);
    }
    case Expr::Kind::kCase: return EvaluateCase(e, batch, ctx);
    case Expr::Kind::kCall: break;
  }
  if (ctx->memo != nullptr && (ctx->memo_batch == nullptr || ctx->memo_batch == &batch)) {
    if (ctx->memo_batch == nullptr) ctx->memo_batch = &batch;
    for (const auto& [seen, value] : *ctx->memo)
      if (seen == &e || ExprEquals(*seen, e)) return value;
    QUIVER_ASSIGN_OR_RETURN(Vec v, EvaluateCall(e, batch, ctx));
    ctx->memo->emplace_back(&e, v);
    return v;
  }
  return EvaluateCall(e, batch, ctx);
}

Result<Vec> EvaluateCall(const Expr& e, const RecordBatch& batch, EvalContext* ctx) {
  std::vector<Vec> args;
  args.reserve(e.args.size());
  for (const auto& a : e.args) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*a, batch, ctx));
    args.push_back(std::move(v));
  }
  const int64_t n = batch.num_rows;
  switch (e.fn) {
    case Fn::kAdd:
    case Fn::kSub:
    case Fn::kMul:
    case Fn::kDiv:
    case Fn::kMod:
    case Fn::kNeg:
    case Fn::kAbs:
    case Fn::kRound:
    case Fn::kFloor:
    case Fn::kCeil:
    case Fn::kSqrt:
    case Fn::kLn:
    case Fn::kExp:
    case Fn::kPower:
    case Fn::kLog10:
    case Fn::kLog2:
    case Fn::kLog:
    case Fn::kCbrt:
    case Fn::kSign:
    case Fn::kSparkSign:
    case Fn::kBround:
    case Fn::kPmod: return kernels::Arithmetic(e, args, n, ctx);
    case Fn::kEq:
    case Fn::kNe:
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe: return kernels::Compare(e, args, n, ctx);
    case Fn::kAnd:
    case Fn::kOr:
    case Fn::kNot:
    case Fn::kIsNull:
    case Fn::kIsNotNull: return kernels::Logic(e, args, n, ctx);
    case Fn::kInList: return kernels::InList(e, args, n, ctx);
    case Fn::kLike: return kernels::Like(e, args, n, ctx);
    case Fn::kCoalesce:
    case Fn::kNullIf: return kernels::Conditional(e, args, n, ctx);
    case Fn::kCast:
    case Fn::kSparkCast:
    case Fn::kTryCast:
    case Fn::kSparkTryCast: return kernels::Cast(e, args, n, ctx);
    case Fn::kOrderedValue: return kernels::OrderedValue(e, args, n, ctx);
    case Fn::kAddDays:
    case Fn::kAddMonths:
    case Fn::kDateDiff:
    case Fn::kExtractYear:
    case Fn::kExtractMonth:
    case Fn::kExtractDay: return kernels::Temporal(e, args, n, ctx);
    case Fn::kSubstring:
    case Fn::kUpper:
    case Fn::kLower:
    case Fn::kLength:
    case Fn::kTrim:
    case Fn::kLTrim:
    case Fn::kRTrim:
    case Fn::kConcat: return kernels::StringFunction(e, args, n, ctx);
    case Fn::kReplace:
    case Fn::kSplitPart:
    case Fn::kLpad:
    case Fn::kRpad:
    case Fn::kInstr:
    case Fn::kConcatWs:
    case Fn::kLeft:
    case Fn::kRight:
    case Fn::kInitcap: return kernels::StringEdit(e, args, n, ctx);
    case Fn::kLocate:
    case Fn::kRepeat:
    case Fn::kReverse:
    case Fn::kTranslate:
    case Fn::kAscii:
    case Fn::kChr:
    case Fn::kSparkChr: return kernels::StringChars(e, args, n, ctx);
    case Fn::kRegexpLike:
    case Fn::kRegexpReplace:
    case Fn::kRegexpExtract: return kernels::Regexp(e, args, n, ctx);
    case Fn::kGreatest:
    case Fn::kLeast: return kernels::Extreme(e, args, n, ctx);
    case Fn::kDateTrunc:
    case Fn::kExtractQuarter:
    case Fn::kDayOfWeek:
    case Fn::kDayOfYear:
    case Fn::kExtractHour:
    case Fn::kExtractMinute:
    case Fn::kExtractSecond:
    case Fn::kToDate:
    case Fn::kToTimestamp:
    case Fn::kDateFormat:
    case Fn::kLastDay:
    case Fn::kMakeDate:
    case Fn::kTruncDate:
    case Fn::kWeekOfYear:
    case Fn::kNextDay:
    case Fn::kMonthsBetween:
    case Fn::kUnixTimestamp:
    case Fn::kFromUnixtime: return kernels::DateFunction(e, args, n, ctx);
    case Fn::kNvl2:
    case Fn::kIf:
    case Fn::kDecode:
    case Fn::kSparkDateAdd:
    case Fn::kSparkDateSub:
    case Fn::kSparkDateDiff:
    case Fn::kSparkAddMonths: break;  // bound as other calls
  }
  return Status::NotImplemented(std::string("function ") + FnName(e.fn));
}

// EvaluateSelection: selection.cc.

Result<Value> EvaluateConstant(const Expr& expr, EvalContext* ctx) {
  RecordBatch one;
  one.num_rows = 1;
  one.schema = std::make_shared<Schema>();
  QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(expr, one, ctx));
  return ValueAt(v, 0);
}

Result<RecordBatchPtr> TakeRows(const RecordBatchPtr& batch, const std::vector<int64_t>& selection, MemoryPool* pool) {
  if (static_cast<int64_t>(selection.size()) == batch->num_rows) {
    bool identity = true;
    for (size_t i = 0; i < selection.size() && identity; ++i) identity = selection[i] == static_cast<int64_t>(i);
    if (identity) return batch;
  }
  auto out = std::make_shared<RecordBatch>();
  out->schema = batch->schema;
  out->num_rows = static_cast<int64_t>(selection.size());
  out->columns.reserve(batch->columns.size());
  TakeOptions opts;
  opts.boundscheck = false;
  for (size_t c = 0; c < batch->columns.size(); ++c) {
    const auto& col = batch->columns[c];
    if (col->type->id == TypeId::kNull) {
      auto a = std::make_shared<ArrayData>();
      a->type = col->type;
      a->length = out->num_rows;
      a->null_count = out->num_rows;
      out->columns.push_back(a);
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(auto a, Take(*col, selection, pool, "column " + std::to_string(c), opts));
    out->columns.push_back(std::move(a));
  }
  return RecordBatchPtr(out);
}

}  // namespace quiver::sql
