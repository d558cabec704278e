// quiver/sql/execution/scan_project.cc — scan, filter, project, limit and
// the single-row source.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "quiver/columnar/dictionary.h"
#include "quiver/columnar/take.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/scan_pruning.h"

namespace quiver::sql {

RecordBatchPtr MakeBatch(const SchemaPtr& schema, int64_t rows, std::vector<ArrayDataPtr> columns) {
  auto b = std::make_shared<RecordBatch>();
  b->schema = schema;
  b->num_rows = rows;
  b->columns = std::move(columns);
  return b;
}

SchemaPtr SchemaOf(const std::vector<ColumnBinding>& columns) {
  auto s = std::make_shared<Schema>();
  for (const auto& c : columns) s->fields.push_back(field(c.name, c.type, true));
  return s;
}

Status NameOperator(const Status& st, const char* op) {
  if (st.ok() || !st.IsOutOfMemory()) return st;
  // Named already (an operator inside another of the same name): keep the
  // message, but never without its SQLSTATE.
  if (st.message().rfind(op, 0) == 0) return st.sql_state().empty() ? st.WithSqlState("53200") : st;
  return Status::OutOfMemory(std::string(op) + ": " + st.message()).WithSqlState("53200");
}

namespace {

bool HasSubquery(const Expr& e) {
  if (e.kind == Expr::Kind::kSubquery) return true;
  for (const auto& a : e.args)
    if (HasSubquery(*a)) return true;
  return false;
}

// A scan's filter split for dictionary-encoded columns: a conjunct that
// reads one column alone and cannot fail (a `term`) is evaluated once per
// dictionary entry, and once for NULL, when that column comes
// dictionary-encoded, and its rows are selected by their indices (DuckDB
// filters dictionary vectors on their dictionary alike); the verdicts are
// kept per dictionary, which the batches of a file share. Shared by a
// scan's instances (the verdicts under `mutex`).
struct DictionaryFilter {
  struct Term {
    int position;       // the column's position in the scan's schema
    ExprPtr conjunct;   // as bound to the scan's schema
    ExprPtr on_values;  // the same over one column (position 0): the values
    SchemaPtr values_schema;
  };
  std::vector<Term> terms;
  std::vector<ExprPtr> others;  // the other conjuncts
  ExprPtr all;                  // every conjunct (null: no filter)

  std::mutex mutex;
  // Per (dictionary, term): 1 where the entry passes, the last byte for
  // NULL. The key's dictionary is kept alive by `dictionaries`.
  std::map<std::pair<const ArrayData*, size_t>, std::shared_ptr<const std::vector<uint8_t>>> verdicts;
  std::vector<ArrayDataPtr> dictionaries;

  static std::shared_ptr<DictionaryFilter> Make(const std::vector<ExprPtr>& conjuncts, const SchemaPtr& schema) {
    auto f = std::make_shared<DictionaryFilter>();
    if (!conjuncts.empty()) f->all = MakeAnd(conjuncts);
    for (const auto& c : conjuncts) {
      std::set<int> cols;
      VisitColumns(*c, [&](int col) { cols.insert(col); });
      const bool one = cols.size() == 1 && *cols.begin() >= 0 &&
                       *cols.begin() < static_cast<int>(schema->fields.size()) && !MayFail(*c) && !HasSubquery(*c);
      if (!one) {
        f->others.push_back(c);
        continue;
      }
      const int pos = *cols.begin();
      auto rewritten = RewriteColumns(c, [](int) -> Result<int> { return 0; });
      if (!rewritten.ok()) {
        f->others.push_back(c);
        continue;
      }
      auto values_schema = std::make_shared<Schema>();
      values_schema->fields.push_back(schema->fields[static_cast<size_t>(pos)]);
      f->terms.push_back(Term{pos, c, std::move(*rewritten), std::move(values_schema)});
    }
    return f;
  }

  // Term t's verdict per entry of `dictionary` (values canonicalized) and,
  // last, for NULL.
  Result<std::shared_ptr<const std::vector<uint8_t>>> Verdicts(size_t t, const ArrayDataPtr& dictionary,
                                                               ExecContext* ctx, MemoryPool* pool) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = verdicts.find({dictionary.get(), t});
      if (it != verdicts.end()) return it->second;
    }
    const Term& term = terms[t];
    const int64_t d = dictionary->length;
    auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(d) + 1, 0);
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr values, Canonicalize(dictionary, pool));
    EvalContext ev = ctx->Eval(pool);
    QUIVER_ASSIGN_OR_RETURN(auto sel,
                            EvaluateSelection(*term.on_values, *MakeBatch(term.values_schema, d, {values}), &ev));
    for (int64_t i : sel) (*out)[static_cast<size_t>(i)] = 1;
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr null_value, MakeArrayOfNull(values->type, 1, pool, "dictionary filter NULL"));
    QUIVER_ASSIGN_OR_RETURN(auto null_sel,
                            EvaluateSelection(*term.on_values, *MakeBatch(term.values_schema, 1, {null_value}), &ev));
    (*out)[static_cast<size_t>(d)] = null_sel.empty() ? 0 : 1;
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = verdicts.emplace(std::make_pair(dictionary.get(), t), std::move(out));
    if (inserted) dictionaries.push_back(dictionary);
    return it->second;
  }
};

// A published join filter key as a scan applies it: the bounds of the
// scan's column `position` (kept alive by `all`).
struct ActiveJoinFilter {
  int position = 0;
  std::shared_ptr<const std::vector<JoinKeyBounds>> all;
  const JoinKeyBounds* bounds = nullptr;
};
using ActiveJoinFilters = std::shared_ptr<const std::vector<ActiveJoinFilter>>;

// What each active join filter of one scan let through so far, over every
// instance of the scan (its morsels' and workers'): the rows it was tried
// on and those it kept. Relaxed atomics: they only order the filters.
struct JoinFilterPassCounts {
  explicit JoinFilterPassCounts(size_t filters) : checked(filters), passed(filters) {}
  std::vector<std::atomic<int64_t>> checked;
  std::vector<std::atomic<int64_t>> passed;
  // The share of the rows tried that filter `f` kept; 0 before it was
  // tried (a filter not tried yet goes first once, to be measured).
  double PassRate(size_t f) const {
    const int64_t c = checked[f].load(std::memory_order_relaxed);
    return c == 0 ? 0.0 : static_cast<double>(passed[f].load(std::memory_order_relaxed)) / static_cast<double>(c);
  }
};

// The share of a batch's rows above which a join filter's selection is not
// applied (ScanOp::SelectByJoinFilters).
constexpr double kKeepWhole = 0.75;

class ScanOp : public RecordBatchStream {
 public:
  // Reads `source`, or only `morsel` when given.
  // `schema`: the scanned columns (the filter's positions); `keep`
  // (empty: all) the positions returned, as `out_schema`.
  ScanOp(ExecContext* ctx, std::shared_ptr<SharedScan> source, std::vector<int> columns, SchemaPtr schema,
         std::shared_ptr<DictionaryFilter> filter, std::vector<int> keep, SchemaPtr out_schema,
         ActiveJoinFilters join_filters, std::shared_ptr<JoinFilterPassCounts> pass_counts,
         RecordBatchPtr morsel = nullptr)
      : ctx_(ctx),
        columns_(std::move(columns)),
        schema_(std::move(schema)),
        filter_(std::move(filter)),
        keep_(std::move(keep)),
        out_schema_(std::move(out_schema)),
        join_filters_(std::move(join_filters)),
        pass_counts_(std::move(pass_counts)),
        source_(std::move(source)),
        morsel_(std::move(morsel)) {}
  const SchemaPtr& schema() const override { return keep_.empty() ? schema_ : out_schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "scan");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    MemoryPool* pool = ctx_->scan_pool.get();
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      RecordBatchPtr in;
      if (morsel_) {
        in = std::move(morsel_);
      } else if (source_ && !single_) {
        QUIVER_ASSIGN_OR_RETURN(in, source_->Next());
      }
      single_ = single_ || !source_;
      if (!in) {
        source_.reset();
        return RecordBatchPtr{};
      }
      if (in->num_rows == 0) continue;
      // The selection's buffer is kept from batch to batch (no fresh
      // pages each batch).
      std::vector<int64_t>& sel = sel_;
      sel.clear();
      bool selected = false;
      // Join filters first: the rows whose keys no build row can match go
      // before any column is decoded.
      if (join_filters_ && !SelectByJoinFilters(*in, &sel, &selected)) continue;
      // Conjuncts over one dictionary-encoded column: the rows whose index
      // passes, before anything is decoded.
      std::vector<uint8_t> term_done;
      if (filter_ && !filter_->terms.empty()) {
        term_done.assign(filter_->terms.size(), 0);
        QUIVER_RETURN_NOT_OK(SelectByDictionaries(*in, &sel, &selected, &term_done));
        if (selected && sel.empty()) continue;
      }
      std::vector<ArrayDataPtr> cols;
      cols.reserve(columns_.size());
      for (int c : columns_) {
        ArrayDataPtr a = in->columns[static_cast<size_t>(c)];
        if (a->type->id == TypeId::kDictionary) {
          const std::string what = "column '" + in->schema->fields[static_cast<size_t>(c)]->name + "'";
          if (selected) {
            // Only the selected rows' values are decoded.
            QUIVER_ASSIGN_OR_RETURN(std::vector<int64_t> idx, DictionaryIndices(*a, what));
            std::vector<int64_t> picked(sel.size());
            for (size_t i = 0; i < sel.size(); ++i) picked[i] = idx[static_cast<size_t>(sel[i])];
            QUIVER_ASSIGN_OR_RETURN(a, Take(*a->dictionary, picked, pool, what));
          } else {
            QUIVER_ASSIGN_OR_RETURN(a, DecodeDictionary(*a, pool, what));
          }
        }
        QUIVER_ASSIGN_OR_RETURN(a, Canonicalize(a, pool));
        // A file whose DECIMAL column is stored wider or narrower than the
        // table's type (files of one table written by different writers).
        QUIVER_ASSIGN_OR_RETURN(a, ConformDecimalStorage(a, schema_->fields[cols.size()]->type, pool));
        if (selected && in->columns[static_cast<size_t>(c)]->type->id != TypeId::kDictionary) {
          QUIVER_ASSIGN_OR_RETURN(a, Take(*a, sel, pool, "column '" + schema_->fields[cols.size()]->name + "'"));
        }
        cols.push_back(std::move(a));
      }
      const int64_t rows = selected ? static_cast<int64_t>(sel.size()) : in->num_rows;
      RecordBatchPtr b = MakeBatch(schema_, rows, std::move(cols));
      // The rest of the filter on the (selected) rows.
      ExprPtr rest = filter_ ? filter_->all : nullptr;
      if (selected && filter_) {
        std::vector<ExprPtr> left = filter_->others;
        for (size_t t = 0; t < filter_->terms.size(); ++t)
          if (!term_done[t]) left.push_back(filter_->terms[t].conjunct);
        rest = left.empty() ? nullptr : (left.size() == 1 ? left[0] : MakeAnd(left));
      }
      sel.clear();
      if (rest) {
        EvalContext ev = ctx_->Eval(pool);
        QUIVER_ASSIGN_OR_RETURN(sel, EvaluateSelection(*rest, *b, &ev));
        if (sel.empty()) continue;
      }
      if (!keep_.empty()) {
        // Columns only the filter read are not gathered.
        std::vector<ArrayDataPtr> kept;
        for (int c : keep_) kept.push_back(b->columns[static_cast<size_t>(c)]);
        b = MakeBatch(out_schema_, b->num_rows, std::move(kept));
      }
      if (rest && static_cast<int64_t>(sel.size()) < b->num_rows) {
        QUIVER_ASSIGN_OR_RETURN(b, TakeRows(b, sel, pool));
      }
      return b;
    }
  }

  // Narrows the selection by the join filters; false when no row is left.
  // A selection that keeps more than kKeepWhole of the batch is dropped
  // again: gathering every column for the rows kept costs more than the
  // join spends on the few it would have been spared (the filter is only a
  // necessary condition of the join, which still drops them; TPC-DS Q59:
  // 2% of store_sales dropped, 0.43 -> 0.38 s of CPU without the gather).
  // The filters run in the order of the share of rows they kept so far,
  // the most selective first: each later one then tests only the rows the
  // earlier ones kept (TPC-DS Q61: store_sales under five filters, the
  // date's keeping 2% of the rows).
  bool SelectByJoinFilters(const RecordBatch& in, std::vector<int64_t>* sel, bool* selected) {
    const std::vector<ActiveJoinFilter>& filters = *join_filters_;
    order_.resize(filters.size());
    for (size_t f = 0; f < order_.size(); ++f) order_[f] = f;
    if (pass_counts_ && order_.size() > 1) {
      rates_.resize(order_.size());
      for (size_t f = 0; f < order_.size(); ++f) rates_[f] = pass_counts_->PassRate(f);
      std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return rates_[a] < rates_[b]; });
    }
    int64_t dropped = 0;
    for (size_t f : order_) {
      const ActiveJoinFilter& filter = filters[f];
      const int c = columns_[static_cast<size_t>(filter.position)];
      const int64_t tried = *selected ? static_cast<int64_t>(sel->size()) : in.num_rows;
      const int64_t out = SelectByJoinFilter(*filter.bounds, *in.columns[static_cast<size_t>(c)], sel, selected);
      dropped += out;
      if (pass_counts_) {
        pass_counts_->checked[f].fetch_add(tried, std::memory_order_relaxed);
        pass_counts_->passed[f].fetch_add(tried - out, std::memory_order_relaxed);
      }
      if (*selected && sel->empty()) break;
    }
    if (*selected && static_cast<double>(sel->size()) > kKeepWhole * static_cast<double>(in.num_rows)) {
      *selected = false;
      sel->clear();
      dropped = 0;
    }
    const bool none = *selected && sel->empty();
    if (JoinFilterCounters* n = ctx_->join_filter_counters.get()) {
      n->rows_checked.fetch_add(in.num_rows, std::memory_order_relaxed);
      n->rows_dropped.fetch_add(none ? in.num_rows : dropped, std::memory_order_relaxed);
      if (none) n->batches_dropped.fetch_add(1, std::memory_order_relaxed);
    }
    return !none;
  }

  // Applies the dictionary filter's terms whose column is
  // dictionary-encoded in `in` (with a dictionary no larger than the
  // batch): `*sel` the passing rows, `*selected` whether any term applied,
  // `(*done)[t]` for each that did.
  Status SelectByDictionaries(const RecordBatch& in, std::vector<int64_t>* sel, bool* selected,
                              std::vector<uint8_t>* done) {
    MemoryPool* pool = ctx_->scan_pool.get();
    std::vector<uint8_t> pass;
    for (size_t t = 0; t < filter_->terms.size(); ++t) {
      const int c = columns_[static_cast<size_t>(filter_->terms[t].position)];
      const ArrayDataPtr& a = in.columns[static_cast<size_t>(c)];
      if (a->type->id != TypeId::kDictionary || !a->dictionary || a->dictionary->length > in.num_rows) continue;
      const std::string what = "column '" + in.schema->fields[static_cast<size_t>(c)]->name + "'";
      QUIVER_ASSIGN_OR_RETURN(std::vector<int64_t> idx, DictionaryIndices(*a, what));
      QUIVER_ASSIGN_OR_RETURN(auto verdict, filter_->Verdicts(t, a->dictionary, ctx_, pool));
      const std::vector<uint8_t>& v = *verdict;
      const size_t null_at = v.size() - 1;
      auto passes = [&](int64_t r) {
        const int64_t i = idx[static_cast<size_t>(r)];
        return v[i < 0 ? null_at : static_cast<size_t>(i)] != 0;
      };
      if (!*selected) {
        sel->clear();
        for (int64_t r = 0; r < in.num_rows; ++r)
          if (passes(r)) sel->push_back(r);
        *selected = true;
      } else {
        std::erase_if(*sel, [&](int64_t r) { return !passes(r); });
      }
      (*done)[t] = 1;
      if (sel->empty()) break;
    }
    return Status::OK();
  }

  ExecContext* ctx_;
  std::vector<int> columns_;
  SchemaPtr schema_;
  std::shared_ptr<DictionaryFilter> filter_;  // null: no filter
  std::vector<int> keep_;
  SchemaPtr out_schema_;
  ActiveJoinFilters join_filters_;                     // null: none
  std::shared_ptr<JoinFilterPassCounts> pass_counts_;  // of join_filters_ (null: none)
  std::vector<size_t> order_;                          // the filters' order for this batch
  std::vector<double> rates_;                          // their pass rates when ordered
  std::vector<int64_t> sel_;                           // the batch's selected rows
  std::shared_ptr<SharedScan> source_;
  RecordBatchPtr morsel_;
  bool single_ = false;  // the morsel was the only input
};

class FilterOp : public RecordBatchStream {
 public:
  FilterOp(ExecContext* ctx, OperatorPtr child, ExprPtr predicate)
      : ctx_(ctx), child_(std::move(child)), predicate_(std::move(predicate)) {}
  const SchemaPtr& schema() const override { return child_->schema(); }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
      if (!in) return in;
      EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
      QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*predicate_, *in, &ev));
      if (sel.empty()) continue;
      auto out = TakeRows(in, sel, ctx_->scan_pool.get());
      if (!out.ok()) return NameOperator(out.status(), "filter");
      return out;
    }
  }

 private:
  ExecContext* ctx_;
  OperatorPtr child_;
  ExprPtr predicate_;
};

class ProjectOp : public RecordBatchStream {
 public:
  ProjectOp(ExecContext* ctx, OperatorPtr child, std::vector<ExprPtr> exprs, SchemaPtr schema)
      : ctx_(ctx), child_(std::move(child)), exprs_(std::move(exprs)), schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
    if (!in) return in;
    std::vector<ArrayDataPtr> cols;
    cols.reserve(exprs_.size());
    EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
    std::vector<std::pair<const Expr*, Vec>> memo;  // subexpressions shared by the outputs
    ev.memo = &memo;
    for (const auto& e : exprs_) {
      auto v = Evaluate(*e, *in, &ev);
      if (!v.ok()) return NameOperator(v.status(), "project");
      QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Materialize(*v, in->num_rows, ctx_->scan_pool.get()));
      cols.push_back(std::move(a));
    }
    return MakeBatch(schema_, in->num_rows, std::move(cols));
  }

 private:
  ExecContext* ctx_;
  OperatorPtr child_;
  std::vector<ExprPtr> exprs_;
  SchemaPtr schema_;
};

class LimitOp : public RecordBatchStream {
 public:
  LimitOp(OperatorPtr child, int64_t offset, int64_t limit) : child_(std::move(child)), skip_(offset), left_(limit) {
    schema_ = child_->schema();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (left_ != 0 && child_) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
      if (!in) return in;
      int64_t begin = 0;
      if (skip_ > 0) {
        begin = std::min(skip_, in->num_rows);
        skip_ -= begin;
      }
      int64_t n = in->num_rows - begin;
      if (left_ > 0) n = std::min(n, left_);
      if (n <= 0) continue;
      if (left_ > 0) left_ -= n;
      if (left_ == 0) child_.reset();  // nothing more is needed: release the inputs now
      if (begin == 0 && n == in->num_rows) return in;
      return SliceBatch(in, begin, n);
    }
    return RecordBatchPtr{};
  }

 private:
  OperatorPtr child_;
  SchemaPtr schema_;
  int64_t skip_;
  int64_t left_;  // -1 = no limit
};

class SingleRowOp : public RecordBatchStream {
 public:
  SingleRowOp() : schema_(std::make_shared<Schema>()) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    done_ = true;
    return MakeBatch(schema_, 1, {});
  }

 private:
  SchemaPtr schema_;
  bool done_ = false;
};

class ScanNode : public PhysicalNode {
 public:
  ScanNode(ExecContext* ctx, TableInfo table, std::vector<int> columns, SchemaPtr schema, std::vector<ExprPtr> filters,
           std::vector<int> keep, SchemaPtr out_schema, std::vector<ExprPtr> prune_only)
      : PhysicalNode(ctx, keep.empty() ? schema : out_schema),
        table_(std::move(table)),
        columns_(std::move(columns)),
        scan_schema_(std::move(schema)),
        keep_(std::move(keep)),
        out_schema_(std::move(out_schema)) {
    if (!filters.empty()) filter_ = DictionaryFilter::Make(filters, scan_schema_);
    if (table_.file_source || !table_.paths.empty()) {  // Parquet row groups, IPC batches
      prune_only.insert(prune_only.end(), filters.begin(), filters.end());
      prune_ = PruningPredicates(prune_only, columns_, *table_.schema);
    }
  }
  bool parallel() const override { return true; }
  Result<OperatorPtr> Instantiate() override {
    return OperatorPtr(
        std::make_unique<ScanOp>(ctx_, source_, columns_, scan_schema_, filter_, keep_, out_schema_, active_, counts_));
  }
  void Release() override { source_.reset(); }
  void AddJoinFilter(ScanJoinFilter f) { join_filters_.push_back(std::move(f)); }
  bool ordered_source() const override { return true; }
  SharedScan* morsel_source() override { return source_.get(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    return OperatorPtr(std::make_unique<ScanOp>(ctx_, nullptr, columns_, scan_schema_, filter_, keep_, out_schema_,
                                                active_, counts_, std::move(morsel)));
  }

 protected:
  Status DoPrepare() override {
    // The join filters their joins have published by now (each join
    // publishes before it prepares its probe side): their ranges prune
    // row groups, and the scan's instances drop the rows they exclude.
    std::vector<parquet::StatsPredicate> prune = prune_;
    auto active = std::make_shared<std::vector<ActiveJoinFilter>>();
    for (const ScanJoinFilter& f : join_filters_) {
      auto published = f.filter->published();
      if (!published || f.key >= published->size()) continue;
      const JoinKeyBounds& bounds = (*published)[f.key];
      active->push_back(ActiveJoinFilter{f.position, published, &bounds});
      if (table_.file_source || !table_.paths.empty()) {
        for (auto& p : JoinFilterPredicates(bounds, columns_[static_cast<size_t>(f.position)]))
          prune.push_back(std::move(p));
      }
    }
    if (!active->empty()) {
      counts_ = std::make_shared<JoinFilterPassCounts>(active->size());
      active_ = std::move(active);
    }
    auto r = ctx_->catalog->OpenSharedScan(table_, ctx_->scan_pool.get(), columns_, 64 * 1024, std::move(prune));
    if (!r.ok()) return NameOperator(r.status(), "scan");
    source_ = std::move(*r);
    return Status::OK();
  }

 private:
  TableInfo table_;
  std::vector<int> columns_;
  SchemaPtr scan_schema_;
  std::vector<int> keep_;
  SchemaPtr out_schema_;
  std::shared_ptr<DictionaryFilter> filter_;      // null: no filter
  std::vector<parquet::StatsPredicate> prune_;    // file tables: row groups the filters exclude
  std::vector<ScanJoinFilter> join_filters_;      // attached by the planner
  ActiveJoinFilters active_;                      // those published at Prepare (null: none)
  std::shared_ptr<JoinFilterPassCounts> counts_;  // what each of active_ kept so far
  std::shared_ptr<SharedScan> source_;
};

class FilterNode : public PhysicalNode {
 public:
  FilterNode(ExecContext* ctx, NodePtr child, ExprPtr predicate)
      : PhysicalNode(ctx, child->schema()), child_(std::move(child)), predicate_(std::move(predicate)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<FilterOp>(ctx_, std::move(in), predicate_));
  }
  void Release() override { child_->Release(); }
  bool ordered_source() const override { return child_->ordered_source(); }
  SharedScan* morsel_source() override { return child_->morsel_source(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->InstantiateOn(std::move(morsel)));
    return OperatorPtr(std::make_unique<FilterOp>(ctx_, std::move(in), predicate_));
  }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  ExprPtr predicate_;
};

class ProjectNode : public PhysicalNode {
 public:
  ProjectNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> exprs, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), child_(std::move(child)), exprs_(std::move(exprs)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<ProjectOp>(ctx_, std::move(in), exprs_, schema_));
  }
  void Release() override { child_->Release(); }
  bool ordered_source() const override { return child_->ordered_source(); }
  SharedScan* morsel_source() override { return child_->morsel_source(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->InstantiateOn(std::move(morsel)));
    return OperatorPtr(std::make_unique<ProjectOp>(ctx_, std::move(in), exprs_, schema_));
  }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  std::vector<ExprPtr> exprs_;
};

class LimitNode : public PhysicalNode {
 public:
  LimitNode(ExecContext* ctx, NodePtr child, int64_t offset, int64_t limit)
      : PhysicalNode(ctx, child->schema()), child_(std::move(child)), offset_(offset), limit_(limit) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, Gathered(ctx_, child_));
    return OperatorPtr(std::make_unique<LimitOp>(std::move(in), offset_, limit_));
  }

 protected:
  Status DoPrepare() override { return Status::OK(); }

 private:
  NodePtr child_;
  int64_t offset_, limit_;
};

class SingleRowNode : public PhysicalNode {
 public:
  explicit SingleRowNode(ExecContext* ctx) : PhysicalNode(ctx, std::make_shared<Schema>()) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override { return OperatorPtr(std::make_unique<SingleRowOp>()); }

 protected:
  Status DoPrepare() override { return Status::OK(); }
};

}  // namespace

NodePtr MakeScanNode(ExecContext* ctx, TableInfo table, std::vector<int> table_columns, SchemaPtr schema,
                     std::vector<ExprPtr> filters, std::vector<int> keep, SchemaPtr out_schema,
                     std::vector<ExprPtr> prune_only) {
  return std::make_shared<ScanNode>(ctx, std::move(table), std::move(table_columns), std::move(schema),
                                    std::move(filters), std::move(keep), std::move(out_schema), std::move(prune_only));
}
bool AttachJoinFilter(PhysicalNode* scan, ScanJoinFilter filter) {
  auto* node = dynamic_cast<ScanNode*>(scan);
  if (node == nullptr) return false;
  node->AddJoinFilter(std::move(filter));
  return true;
}
NodePtr MakeFilterNode(ExecContext* ctx, NodePtr child, ExprPtr predicate) {
  return std::make_shared<FilterNode>(ctx, std::move(child), std::move(predicate));
}
NodePtr MakeProjectNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> exprs, SchemaPtr schema) {
  return std::make_shared<ProjectNode>(ctx, std::move(child), std::move(exprs), std::move(schema));
}
NodePtr MakeLimitNode(ExecContext* ctx, NodePtr child, int64_t offset, int64_t limit) {
  return std::make_shared<LimitNode>(ctx, std::move(child), offset, limit);
}
NodePtr MakeSingleRowNode(ExecContext* ctx) { return std::make_shared<SingleRowNode>(ctx); }

}  // namespace quiver::sql
