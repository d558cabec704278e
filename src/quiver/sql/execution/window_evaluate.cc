// quiver/sql/execution/window_evaluate.cc — ranking and value functions
// over a window chunk, and the dispatch of EvaluateWindowCall (see
// window_evaluate.h). Definitions as in PostgreSQL's documentation (9.22,
// Window Functions): rank = 1 + rows before the current row's first peer;
// dense_rank counts peer groups; percent_rank = (rank - 1) / (rows - 1)
// (0 for a one-row partition); cume_dist = rows up to the current row's
// last peer / rows; ntile(n) deals the rows into n buckets whose sizes
// differ by at most one, the larger first; lag / lead read the row `offset`
// before / after the current one in its partition (the default, or NULL,
// past its edge); first_value / last_value / nth_value read the frame.
#include "quiver/sql/execution/window_evaluate.h"
#include "quiver/columnar/take.h"

namespace quiver::sql {
namespace {

Result<Vec> EvalArg(ExecContext* ctx, const Expr& e, const RecordBatch& chunk, MemoryPool* pool) {
  EvalContext ev = ctx->Eval(pool);
  return Evaluate(e, chunk, &ev);
}

// Rows `rows` of `values` (-1: NULL) as a new array.
Result<ArrayDataPtr> Pick(const Vec& values, int64_t length, const std::vector<int64_t>& rows, MemoryPool* pool,
                          const char* what) {
  QUIVER_ASSIGN_OR_RETURN(auto full, Materialize(values, length, pool));
  return Take(*full, rows, pool, std::string(what) + "() over a window");
}

}  // namespace

Result<ArrayDataPtr> EvaluateWindowCall(ExecContext* ctx, const WindowCall& call, const RecordBatch& chunk,
                                        const WindowLayout& layout, MemoryPool* pool) {
  const int64_t n = layout.rows;
  const size_t un = static_cast<size_t>(n);
  const auto& parts = layout.partition_starts;
  const char* name = WindowFnName(call.fn, call.agg);
  switch (call.fn) {
    case WindowFn::kRowNumber:
    case WindowFn::kRank:
    case WindowFn::kDenseRank:
    case WindowFn::kNtile: {
      QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), n, pool));
      int64_t* out = b.values<int64_t>();
      const int64_t buckets = call.fn == WindowFn::kNtile ? static_cast<int64_t>(call.args[0]->value.i) : 1;
      for (size_t p = 0; p + 1 < parts.size(); ++p) {
        const int64_t ps = parts[p], pe = parts[p + 1], size = pe - ps;
        int64_t dense = 0;
        // ntile: the first `big` buckets hold per + 1 rows, the rest per.
        const int64_t per = size / buckets, big = size % buckets;
        for (int64_t i = ps; i < pe; ++i) {
          const size_t k = static_cast<size_t>(i);
          switch (call.fn) {
            case WindowFn::kRowNumber: out[i] = i - ps + 1; break;
            case WindowFn::kRank: out[i] = layout.peer_begin[k] - ps + 1; break;
            case WindowFn::kDenseRank:
              if (layout.peer_begin[k] == i) ++dense;
              out[i] = dense;
              break;
            default: {
              const int64_t r = i - ps;
              const int64_t big_rows = big * (per + 1);
              out[i] = r < big_rows ? r / (per + 1) + 1 : big + (r - big_rows) / std::max<int64_t>(per, 1) + 1;
              break;
            }
          }
        }
      }
      return b.Finish();
    }
    case WindowFn::kPercentRank:
    case WindowFn::kCumeDist: {
      QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(float64(), n, pool));
      double* out = b.values<double>();
      for (size_t p = 0; p + 1 < parts.size(); ++p) {
        const int64_t ps = parts[p], pe = parts[p + 1], size = pe - ps;
        for (int64_t i = ps; i < pe; ++i) {
          const size_t k = static_cast<size_t>(i);
          if (call.fn == WindowFn::kPercentRank) {
            out[i] = size <= 1 ? 0.0 : static_cast<double>(layout.peer_begin[k] - ps) / static_cast<double>(size - 1);
          } else {
            out[i] = static_cast<double>(layout.peer_end[k] - ps) / static_cast<double>(size);
          }
        }
      }
      return b.Finish();
    }
    case WindowFn::kLag:
    case WindowFn::kLead: {
      QUIVER_ASSIGN_OR_RETURN(Vec value, EvalArg(ctx, *call.args[0], chunk, pool));
      const int64_t offset = static_cast<int64_t>(call.args[1]->value.i);
      QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx->aggregate_tmm->Reserve(n * 16, "window lag/lead rows"));
      std::vector<int64_t> rows(un, -1);
      for (size_t p = 0; p + 1 < parts.size(); ++p) {
        const int64_t ps = parts[p], pe = parts[p + 1];
        for (int64_t i = ps; i < pe; ++i) {
          // offset <= INT64_MAX: compared with the room left, never added past it
          if (call.fn == WindowFn::kLag ? offset <= i - ps : offset < pe - i)
            rows[static_cast<size_t>(i)] = call.fn == WindowFn::kLag ? i - offset : i + offset;
        }
      }
      const bool has_default =
          call.args.size() == 3 && !(call.args[2]->kind == Expr::Kind::kConstant && call.args[2]->value.is_null);
      if (!has_default) return Pick(value, n, rows, pool, name);
      QUIVER_ASSIGN_OR_RETURN(Vec dflt, EvalArg(ctx, *call.args[2], chunk, pool));
      QUIVER_ASSIGN_OR_RETURN(auto values, Materialize(value, n, pool));
      QUIVER_ASSIGN_OR_RETURN(auto defaults, Materialize(dflt, n, pool));
      std::vector<SourceRow> from(un);
      for (size_t i = 0; i < un; ++i)
        from[i] = rows[i] >= 0 ? SourceRow{0, rows[i]} : SourceRow{1, static_cast<int64_t>(i)};
      const ArrayData* sources[] = {values.get(), defaults.get()};
      return Interleave(sources, from, pool, std::string(name) + "() over a window");
    }
    case WindowFn::kFirstValue:
    case WindowFn::kLastValue:
    case WindowFn::kNthValue:
    case WindowFn::kAggregate: {
      QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx->aggregate_tmm->Reserve(n * 16, "window frames"));
      std::vector<int64_t> begin, end;
      QUIVER_RETURN_NOT_OK(ComputeFrames(ctx, call, layout, &begin, &end));
      if (call.fn == WindowFn::kAggregate) {
        Vec arg;
        if (call.agg != AggFn::kCountStar) {
          QUIVER_ASSIGN_OR_RETURN(arg, EvalArg(ctx, *call.args[0], chunk, pool));
        }
        return WindowAggregate(ctx, call, arg, begin, end, pool);
      }
      QUIVER_ASSIGN_OR_RETURN(Vec value, EvalArg(ctx, *call.args[0], chunk, pool));
      const int64_t nth = call.fn == WindowFn::kNthValue ? static_cast<int64_t>(call.args[1]->value.i) : 1;
      std::vector<int64_t> rows(un, -1);
      for (size_t k = 0; k < un; ++k) {
        if (end[k] <= begin[k]) continue;
        if (call.fn == WindowFn::kFirstValue) {
          rows[k] = begin[k];
        } else if (call.fn == WindowFn::kLastValue) {
          rows[k] = end[k] - 1;
        } else if (nth <= end[k] - begin[k]) {
          rows[k] = begin[k] + nth - 1;
        }
      }
      return Pick(value, n, rows, pool, name);
    }
  }
  return Status::Invalid("internal: unknown window function");
}

}  // namespace quiver::sql
