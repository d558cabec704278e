// quiver/sql/engine.cc — see engine.h. The statement is parsed by
// libpg_query into its JSON parse tree; the planner below binds names and
// types and builds a tree of pull-based operators (operators.h).
#include "quiver/sql/engine.h"

#include <pg_query.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/dictionary.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/row_format.h"
#include "quiver/sql/expression.h"

namespace quiver::sql {

std::string DescribePosition(std::string_view text, int offset) {
  if (offset < 0) offset = 0;
  if (offset > static_cast<int>(text.size())) offset = static_cast<int>(text.size());
  int line = 1, col = 1;
  for (int i = 0; i < offset; ++i) {
    if (text[static_cast<size_t>(i)] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

namespace {

using Json = nlohmann::json;
using i128 = __int128;

// ---------------------------------------------------------------------------
// Execution context and operators

struct ExecContext {
  std::shared_ptr<MemoryPool> statement_pool;  // "sql-statement" (the limit)
  std::shared_ptr<MemoryPool> build_pool;      // its child "build": join relations
  std::shared_ptr<MemoryPool> pool;            // its child "probe": all else
  std::unique_ptr<join::TaskMemoryManager> tmm;
  std::shared_ptr<std::atomic<bool>> cancel;
  int64_t max_batch_rows = 64 * 1024;

  Status CheckCancel() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) return Status::Cancelled("statement cancelled");
    return Status::OK();
  }
};

RecordBatchPtr Rewrap(const SchemaPtr& schema, int64_t rows, std::vector<ArrayDataPtr> columns) {
  auto b = std::make_shared<RecordBatch>();
  b->schema = schema;
  b->num_rows = rows;
  b->columns = std::move(columns);
  return b;
}

// Scans a catalog table: keeps the needed columns, decodes dictionaries,
// applies the pushed-down filter.
class ScanOp : public RecordBatchStream {
 public:
  ScanOp(ExecContext* ctx, std::shared_ptr<const Catalog> catalog, TableInfo table, std::vector<int> columns,
         SchemaPtr schema, std::unique_ptr<Expr> filter)
      : ctx_(ctx),
        catalog_(std::move(catalog)),
        table_(std::move(table)),
        columns_(std::move(columns)),
        schema_(std::move(schema)),
        filter_(std::move(filter)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (!source_) {
      QUIVER_ASSIGN_OR_RETURN(source_, catalog_->OpenScan(table_, ctx_->pool.get(), columns_));
    }
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, source_->Next());
      if (!in) {
        source_.reset();
        return RecordBatchPtr{};
      }
      if (in->num_rows == 0) continue;
      std::vector<ArrayDataPtr> cols;
      std::vector<FieldPtr> fields;
      bool dict = false;
      for (int c : columns_) {
        cols.push_back(in->columns[static_cast<size_t>(c)]);
        fields.push_back(in->schema->fields[static_cast<size_t>(c)]);
        dict |= cols.back()->type->id == TypeId::kDictionary;
      }
      auto projected_schema = std::make_shared<Schema>();
      projected_schema->fields = std::move(fields);
      RecordBatchPtr b = Rewrap(projected_schema, in->num_rows, std::move(cols));
      if (dict) {
        QUIVER_ASSIGN_OR_RETURN(b, DecodeDictionaries(b, ctx_->pool.get()));
      }
      b = Rewrap(schema_, b->num_rows, b->columns);
      if (filter_) {
        QUIVER_ASSIGN_OR_RETURN(b, FilterBatch(*filter_, b, ctx_->pool.get(), ctx_->cancel.get()));
        if (!b) continue;
      }
      return b;
    }
  }

 private:
  ExecContext* ctx_;
  std::shared_ptr<const Catalog> catalog_;
  TableInfo table_;
  std::vector<int> columns_;
  SchemaPtr schema_;
  std::unique_ptr<Expr> filter_;
  std::unique_ptr<RecordBatchStream> source_;
};

class FilterOp : public RecordBatchStream {
 public:
  FilterOp(ExecContext* ctx, std::unique_ptr<RecordBatchStream> child, std::unique_ptr<Expr> filter)
      : ctx_(ctx), child_(std::move(child)), filter_(std::move(filter)) {}
  const SchemaPtr& schema() const override { return child_->schema(); }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
      if (!in) return in;
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, FilterBatch(*filter_, in, ctx_->pool.get(), ctx_->cancel.get()));
      if (out) return out;
    }
  }

 private:
  ExecContext* ctx_;
  std::unique_ptr<RecordBatchStream> child_;
  std::unique_ptr<Expr> filter_;
};

// A hash join: the build input is read whole into a relation on the first
// pull, then probe batches stream through it.
class JoinOp : public RecordBatchStream {
 public:
  JoinOp(ExecContext* ctx, std::shared_ptr<const join::HashJoin> join, std::unique_ptr<RecordBatchStream> probe,
         std::unique_ptr<RecordBatchStream> build, std::vector<int> reorder, SchemaPtr schema)
      : ctx_(ctx),
        join_(std::move(join)),
        probe_input_(std::move(probe)),
        build_input_(std::move(build)),
        reorder_(std::move(reorder)),
        schema_(std::move(schema)) {}
  ~JoinOp() override {
    prober_.reset();
    if (relation_) relation_->Close();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    if (!prober_ && !finished_) {
      std::vector<RecordBatchPtr> batches;
      while (true) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, build_input_->Next());
        if (!b) break;
        batches.push_back(std::move(b));
      }
      build_input_.reset();
      QUIVER_ASSIGN_OR_RETURN(relation_, join_->BuildRelation(batches, ctx_->tmm.get()));
      batches.clear();
      QUIVER_ASSIGN_OR_RETURN(prober_, join_->MakeProbe(relation_));
    }
    const join::BatchSink sink = [this](RecordBatchPtr b) {
      if (b->num_rows > 0) pending_.push_back(std::move(b));
      return Status::OK();
    };
    while (pending_.empty()) {
      if (finished_) return RecordBatchPtr{};
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, probe_input_->Next());
      if (in) {
        QUIVER_RETURN_NOT_OK(prober_->Probe(*in, sink));
      } else {
        QUIVER_RETURN_NOT_OK(prober_->Finish(sink));
        finished_ = true;
        prober_.reset();
        relation_->Close();
        relation_.reset();
        probe_input_.reset();
      }
    }
    RecordBatchPtr out = std::move(pending_.front());
    pending_.pop_front();
    std::vector<ArrayDataPtr> cols;
    if (reorder_.empty()) {
      cols = out->columns;
    } else {
      for (int c : reorder_) cols.push_back(out->columns[static_cast<size_t>(c)]);
    }
    return Rewrap(schema_, out->num_rows, std::move(cols));
  }

 private:
  ExecContext* ctx_;
  std::shared_ptr<const join::HashJoin> join_;
  std::unique_ptr<RecordBatchStream> probe_input_, build_input_;
  std::vector<int> reorder_;
  SchemaPtr schema_;
  std::shared_ptr<join::HashedRelation> relation_;
  std::unique_ptr<join::HashJoinProbe> prober_;
  std::deque<RecordBatchPtr> pending_;
  bool finished_ = false;
};

class ProjectOp : public RecordBatchStream {
 public:
  ProjectOp(std::unique_ptr<RecordBatchStream> child, std::vector<int> columns, SchemaPtr schema)
      : child_(std::move(child)), columns_(std::move(columns)), schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
    if (!in) return in;
    std::vector<ArrayDataPtr> cols;
    for (int c : columns_) cols.push_back(in->columns[static_cast<size_t>(c)]);
    return Rewrap(schema_, in->num_rows, std::move(cols));
  }

 private:
  std::unique_ptr<RecordBatchStream> child_;
  std::vector<int> columns_;
  SchemaPtr schema_;
};

class LimitOp : public RecordBatchStream {
 public:
  LimitOp(std::unique_ptr<RecordBatchStream> child, int64_t offset, int64_t limit)
      : child_(std::move(child)), skip_(offset), left_(limit) {}
  const SchemaPtr& schema() const override { return child_->schema(); }
  Result<RecordBatchPtr> Next() override {
    while (left_ != 0) {
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
  std::unique_ptr<RecordBatchStream> child_;
  int64_t skip_;
  int64_t left_;  // -1 = no limit
};

class ConstStream : public RecordBatchStream {
 public:
  ConstStream(SchemaPtr schema, RecordBatchPtr batch) : schema_(std::move(schema)), batch_(std::move(batch)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override { return std::move(batch_); }

 private:
  SchemaPtr schema_;
  RecordBatchPtr batch_;
};

// The statement's stream: owns the context (pool, memory manager) and the
// operator tree; on the first error releases the operators.
class StatementStream : public RecordBatchStream {
 public:
  StatementStream(std::shared_ptr<ExecContext> ctx, std::unique_ptr<RecordBatchStream> root)
      : ctx_(std::move(ctx)), schema_(root->schema()), root_(std::move(root)) {}
  ~StatementStream() override { root_.reset(); }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (!error_.ok()) return error_;
    if (!root_) return RecordBatchPtr{};
    Status st = ctx_->CheckCancel();
    if (st.ok()) {
      auto r = root_->Next();
      if (r.ok()) {
        if (!*r) root_.reset();
        return r;
      }
      st = r.status();
    }
    error_ = st;
    root_.reset();
    return error_;
  }

 private:
  std::shared_ptr<ExecContext> ctx_;
  SchemaPtr schema_;
  std::unique_ptr<RecordBatchStream> root_;
  Status error_;
};

// ---------------------------------------------------------------------------
// Small array builders for SHOW TABLES / DESCRIBE results.

Result<ArrayDataPtr> BuildUtf8(const std::vector<std::string>& values, MemoryPool* pool) {
  int64_t total = 0;
  for (auto& v : values) total += static_cast<int64_t>(v.size());
  if (total > INT32_MAX) return Status::Invalid("string column too large");
  const int64_t n = static_cast<int64_t>(values.size());
  QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool, (n + 1) * 4));
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, std::max<int64_t>(total, 1)));
  int32_t* off = reinterpret_cast<int32_t*>(offsets->mutable_data());
  int32_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    off[i] = pos;
    std::memcpy(data->mutable_data() + pos, values[i].data(), values[i].size());
    pos += static_cast<int32_t>(values[i].size());
  }
  off[n] = pos;
  auto a = std::make_shared<ArrayData>();
  a->type = utf8();
  a->length = n;
  a->buffers = {nullptr, offsets, data};
  return ArrayDataPtr(a);
}

Result<ArrayDataPtr> BuildInt64(const std::vector<int64_t>& values, MemoryPool* pool) {
  const int64_t n = static_cast<int64_t>(values.size());
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, std::max<int64_t>(n * 8, 1)));
  if (n > 0) std::memcpy(data->mutable_data(), values.data(), static_cast<size_t>(n * 8));
  auto a = std::make_shared<ArrayData>();
  a->type = int64();
  a->length = n;
  a->buffers = {nullptr, data};
  return ArrayDataPtr(a);
}

Result<ArrayDataPtr> BuildBool(const std::vector<bool>& values, MemoryPool* pool) {
  const int64_t n = static_cast<int64_t>(values.size());
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::AllocateZeroed(pool, std::max<int64_t>(bit_util::BytesForBits(n), 1)));
  for (int64_t i = 0; i < n; ++i) {
    if (values[i]) bit_util::SetBit(data->mutable_data(), i);
  }
  auto a = std::make_shared<ArrayData>();
  a->type = boolean();
  a->length = n;
  a->buffers = {nullptr, data};
  return ArrayDataPtr(a);
}

// ---------------------------------------------------------------------------
// Literals

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Parses "YYYY-MM-DD" (date_only) or "YYYY-MM-DD[( |T)HH:MM[:SS[.f{1,9}]]]"
// into nanoseconds since the epoch.
bool ParseTemporal(std::string_view s, bool date_only, i128* ns) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  size_t p = 0;
  auto num = [&](int min_digits, int max_digits, int64_t* v) {
    int k = 0;
    *v = 0;
    while (p < s.size() && k < max_digits && s[p] >= '0' && s[p] <= '9') {
      *v = *v * 10 + (s[p] - '0');
      ++p;
      ++k;
    }
    return k >= min_digits;
  };
  auto lit = [&](char c) {
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  };
  int64_t y, mo, d;
  if (!num(4, 4, &y) || !lit('-') || !num(1, 2, &mo) || !lit('-') || !num(1, 2, &d)) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1) return false;
  if (d > kDays[mo - 1] + (mo == 2 && IsLeap(y) ? 1 : 0)) return false;
  i128 v =
      static_cast<i128>(DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400 * 1000000000LL;
  if (p < s.size() && !date_only && (s[p] == ' ' || s[p] == 'T')) {
    ++p;
    int64_t h, mi, sec = 0, frac = 0;
    if (!num(1, 2, &h) || !lit(':') || !num(2, 2, &mi)) return false;
    if (lit(':')) {
      if (!num(2, 2, &sec)) return false;
      if (lit('.')) {
        const size_t start = p;
        if (!num(1, 9, &frac)) return false;
        for (size_t k = p - start; k < 9; ++k) frac *= 10;
      }
    }
    if (h > 23 || mi > 59 || sec > 59) return false;
    v += (static_cast<i128>(h) * 3600 + mi * 60 + sec) * 1000000000LL + frac;
  }
  if (p != s.size()) return false;
  *ns = v;
  return true;
}

// A literal as written.
struct Literal {
  enum class Kind { kNull, kInt, kDecimal, kFloat, kString, kBool, kDate, kTimestamp } kind = Kind::kNull;
  i128 unscaled = 0;  // kInt, kDecimal
  int scale = 0;
  int digits = 0;
  double real = 0;
  std::string text;  // kString; the source text otherwise (messages)
  bool boolean = false;
  i128 ns = 0;  // kDate, kTimestamp
  int location = -1;
};

std::string_view LiteralKindName(Literal::Kind k) {
  switch (k) {
    case Literal::Kind::kNull: return "NULL";
    case Literal::Kind::kInt: return "integer literal";
    case Literal::Kind::kDecimal: return "decimal literal";
    case Literal::Kind::kFloat: return "float literal";
    case Literal::Kind::kString: return "string literal";
    case Literal::Kind::kBool: return "boolean literal";
    case Literal::Kind::kDate: return "DATE literal";
    case Literal::Kind::kTimestamp: return "TIMESTAMP literal";
  }
  return "literal";
}

// Parses a numeric literal text: [-]digits[.digits] (exact) or with an
// exponent (float).
bool ParseNumber(std::string_view t, Literal* lit) {
  std::string s(t);
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  if (s.find_first_of("eE") != std::string::npos) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    lit->kind = Literal::Kind::kFloat;
    lit->real = v;
    return true;
  }
  bool neg = false;
  size_t p = 0;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) {
    neg = s[p] == '-';
    ++p;
    while (p < s.size() && s[p] == ' ') ++p;
  }
  i128 v = 0;
  int digits = 0, scale = 0;
  bool dot = false, any = false;
  for (; p < s.size(); ++p) {
    const char c = s[p];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    any = true;
    if (digits > 0 || c != '0') ++digits;
    if (digits > 38) return false;
    v = v * 10 + (c - '0');
    if (dot) ++scale;
  }
  if (!any) return false;
  lit->kind = dot ? Literal::Kind::kDecimal : Literal::Kind::kInt;
  lit->unscaled = neg ? -v : v;
  lit->scale = scale;
  lit->digits = std::max(digits, scale) + 1;
  return true;
}

// ---------------------------------------------------------------------------
// The planner

struct ColRef {
  int table = -1;   // index into Planner::tables_, or kInnerTable for an EXISTS subquery's table
  int column = -1;  // in the table's (decoded) schema
};

// A bound expression with column references not yet mapped to the
// operators' column indices (Operand::column holds a ref index).
struct BoundTable {
  TableInfo info;
  std::string alias;
  SchemaPtr schema;  // dictionaries decoded
  bool null_supplied = false;
  std::vector<std::unique_ptr<Expr>> pushed;
  std::vector<int> needed;  // sorted source column indices
};

enum class SqlJoin { kInner, kLeft, kRight, kFull };

struct JoinStep {
  SqlJoin type = SqlJoin::kInner;
  std::vector<std::pair<ColRef, ColRef>> keys;  // (left side, right table)
  int location = 0;
};

struct SemiStep {
  bool anti = false;
  BoundTable inner;
  std::vector<std::pair<ColRef, ColRef>> keys;  // (outer, inner)
  int location = 0;
};

class Planner {
 public:
  Planner(std::string_view sql, std::shared_ptr<const Catalog> catalog, ExecContext* ctx)
      : sql_(sql), catalog_(std::move(catalog)), ctx_(ctx) {}

  Result<std::unique_ptr<RecordBatchStream>> PlanSelect(Json& select);
  Result<std::unique_ptr<RecordBatchStream>> ShowTables();
  Result<std::unique_ptr<RecordBatchStream>> Describe(std::string_view name, int location);

  Status Unsupported(const std::string& construct, int location) const {
    return Status::NotImplemented(construct + " is not supported (" + DescribePosition(sql_, location) + ")");
  }
  Status Error(const std::string& message, int location) const {
    return Status::Invalid(message + " (" + DescribePosition(sql_, location) + ")");
  }

  // Position of the last `keyword` (case-insensitive, as a word) at or before `location`; else `location`.
  int KeywordBefore(std::string_view keyword, int location) const {
    for (int p = std::min<int>(location, static_cast<int>(sql_.size()) - static_cast<int>(keyword.size())); p >= 0;
         --p) {
      bool match = true;
      for (size_t k = 0; k < keyword.size() && match; ++k) {
        char c = sql_[static_cast<size_t>(p) + k];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        match = c == keyword[k];
      }
      if (match) return p;
    }
    return location;
  }

  // Position of the first `keyword` (case-insensitive) in the statement, or 0.
  int FirstKeyword(std::string_view keyword) const {
    for (size_t p = 0; p + keyword.size() <= sql_.size(); ++p) {
      bool match = true;
      for (size_t k = 0; k < keyword.size() && match; ++k) {
        char c = sql_[p + k];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        match = c == keyword[k];
      }
      if (match) return static_cast<int>(p);
    }
    return 0;
  }

  static int MinLocation(Json& j) {
    int best = -1;
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "location" && it.value().is_number_integer()) {
          const int v = it.value().get<int>();
          if (v >= 0 && (best < 0 || v < best)) best = v;
        } else {
          const int v = MinLocation(it.value());
          if (v >= 0 && (best < 0 || v < best)) best = v;
        }
      }
    } else if (j.is_array()) {
      for (auto& e : j) {
        const int v = MinLocation(e);
        if (v >= 0 && (best < 0 || v < best)) best = v;
      }
    }
    return best;
  }

 private:
  static constexpr int kInnerTable = 1000000;

  Status CheckSelectClauses(Json& s, bool subquery) const;
  Status BindFrom(Json& from);
  Status AddTable(Json& range_var, std::vector<BoundTable>* into);
  Result<ColRef> ResolveColumn(Json& column_ref, bool allow_inner, bool allow_outer) const;
  const BoundTable& Table(const ColRef& r) const {
    return r.table == kInnerTable ? *inner_ : tables_[static_cast<size_t>(r.table)];
  }
  const Field& FieldOf(const ColRef& r) const { return *Table(r).schema->fields[static_cast<size_t>(r.column)]; }
  Result<Literal> BindLiteral(Json& node) const;
  Result<std::unique_ptr<Expr>> BindPredicate(Json& node, bool allow_inner, bool allow_outer);
  Result<std::unique_ptr<Expr>> BindComparison(CompareOp op, Json& lhs, Json& rhs, int location, bool allow_inner,
                                               bool allow_outer);
  Status BindExists(Json& sublink, bool anti);
  Status BindEquiKeys(Json& quals, int left_tables, std::vector<std::pair<ColRef, ColRef>>* keys);
  Status ConstructName(Json& node, int* location, std::string* name) const;

  // Column mapping: every ColRef collected in an Expr is kept in refs_ and
  // Operand::column holds its index until Remap.
  int AddRef(ColRef r) {
    refs_.push_back(r);
    return static_cast<int>(refs_.size()) - 1;
  }
  void CollectRefs(const Expr& e, std::vector<int>* out) const;
  void Remap(Expr* e, const std::function<int(const ColRef&)>& map) const;
  uint64_t TablesOf(const Expr& e) const;

  std::string_view sql_;
  std::shared_ptr<const Catalog> catalog_;
  ExecContext* ctx_;
  std::vector<BoundTable> tables_;
  std::vector<JoinStep> joins_;  // joins_[i] joins tables 0..i with table i+1
  std::vector<SemiStep> semis_;
  std::vector<std::unique_ptr<Expr>> post_filters_;
  BoundTable* inner_ = nullptr;  // the EXISTS subquery table being bound
  std::vector<ColRef> refs_;
};

SchemaPtr DecodedSchema(const Schema& s) {
  auto out = std::make_shared<Schema>();
  for (auto& f : s.fields) {
    if (f->type->id == TypeId::kDictionary) {
      out->fields.push_back(field(f->name, f->type->value_type, f->nullable, f->metadata));
    } else {
      out->fields.push_back(f);
    }
  }
  return out;
}

// Comparison class of a column type; false when the type cannot be compared.
bool ClassOfType(const DataType& t, CompareClass* cls, int* scale, int* digits) {
  *scale = 0;
  switch (t.id) {
    case TypeId::kInt8:
    case TypeId::kUInt8:
      *cls = CompareClass::kExact;
      *digits = 3;
      return true;
    case TypeId::kInt16:
    case TypeId::kUInt16:
      *cls = CompareClass::kExact;
      *digits = 5;
      return true;
    case TypeId::kInt32:
    case TypeId::kUInt32:
      *cls = CompareClass::kExact;
      *digits = 10;
      return true;
    case TypeId::kInt64:
      *cls = CompareClass::kExact;
      *digits = 19;
      return true;
    case TypeId::kUInt64:
      *cls = CompareClass::kExact;
      *digits = 20;
      return true;
    case TypeId::kDecimal:
      if (t.bit_width > 128 || t.scale < 0) return false;
      *cls = CompareClass::kExact;
      *scale = t.scale;
      *digits = std::max(t.precision, t.scale + 1);
      return true;
    case TypeId::kFloat32:
    case TypeId::kFloat64:
      *cls = CompareClass::kFloat;
      *digits = 0;
      return true;
    case TypeId::kBinary:
    case TypeId::kUtf8:
    case TypeId::kLargeBinary:
    case TypeId::kLargeUtf8:
    case TypeId::kBinaryView:
    case TypeId::kUtf8View:
    case TypeId::kFixedSizeBinary:
      *cls = CompareClass::kString;
      *digits = 0;
      return true;
    case TypeId::kDate32:
    case TypeId::kDate64:
    case TypeId::kTimestamp:
      *cls = CompareClass::kTemporal;
      *digits = 0;
      return true;
    case TypeId::kBool:
      *cls = CompareClass::kBool;
      *digits = 0;
      return true;
    default: return false;
  }
}

bool IsNumeric(CompareClass c) { return c == CompareClass::kExact || c == CompareClass::kFloat; }

const std::string& StringField(Json& j) {
  static const std::string kEmpty;
  if (j.is_object() && j.contains("String") && j["String"].contains("sval"))
    return j["String"]["sval"].get_ref<const std::string&>();
  return kEmpty;
}

int LocationOf(Json& node) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.value().is_object() && it.value().contains("location") && it.value()["location"].is_number_integer()) {
        return it.value()["location"].get<int>();
      }
    }
  }
  return Planner::MinLocation(node);
}

// Names of constructs for "X is not supported" errors.
std::string ExprNodeName(const std::string& key, Json& v) {
  if (key == "FuncCall") {
    std::string name;
    if (v.contains("funcname")) {
      for (auto& n : v["funcname"]) name = StringField(n);
    }
    static const char* kAggregates[] = {"count",    "sum",       "avg",        "min",      "max",     "stddev",
                                        "variance", "array_agg", "string_agg", "bool_and", "bool_or", "every"};
    if (v.contains("over")) return "window function " + name + "() OVER";
    for (const char* a : kAggregates) {
      if (name == a) return "aggregate function " + name + "()";
    }
    return "function " + name + "()";
  }
  if (key == "SubLink") {
    const std::string t = v.value("subLinkType", "");
    if (t == "EXPR_SUBLINK") return "scalar subquery";
    if (t == "ANY_SUBLINK") return "IN (subquery)";
    if (t == "ALL_SUBLINK") return "ALL (subquery)";
    if (t == "EXISTS_SUBLINK") return "EXISTS outside a top-level AND term of WHERE";
    return "subquery";
  }
  if (key == "CaseExpr") return "CASE";
  if (key == "CoalesceExpr") return "COALESCE";
  if (key == "MinMaxExpr") return "GREATEST/LEAST";
  if (key == "BooleanTest") return "IS [NOT] TRUE/FALSE/UNKNOWN";
  if (key == "ParamRef") return "parameter placeholder";
  if (key == "SQLValueFunction") return "SQL value function (CURRENT_DATE, ...)";
  if (key == "RowExpr") return "row constructor";
  if (key == "A_ArrayExpr") return "ARRAY constructor";
  if (key == "CollateClause") return "COLLATE";
  if (key == "A_Indirection") return "subscript or field selection";
  if (key == "TypeCast") {
    std::string t;
    if (v.contains("typeName") && v["typeName"].contains("names")) {
      for (auto& n : v["typeName"]["names"]) t = StringField(n);
    }
    return "type cast to " + t;
  }
  if (key == "GroupingFunc") return "GROUPING()";
  return key;
}

Status Planner::ConstructName(Json& node, int* location, std::string* name) const {
  if (!node.is_object() || node.empty()) {
    *name = "expression";
    *location = 0;
    return Status::OK();
  }
  const std::string key = node.begin().key();
  Json& v = node.begin().value();
  *location =
      v.contains("location") && v["location"].is_number_integer() ? v["location"].get<int>() : MinLocation(node);
  if (*location < 0) *location = 0;
  if (key == "A_Expr") {
    const std::string kind = v.value("kind", "");
    std::string op;
    if (v.contains("name")) {
      for (auto& n : v["name"]) op = StringField(n);
    }
    if (kind == "AEXPR_LIKE")
      *name = "LIKE";
    else if (kind == "AEXPR_ILIKE")
      *name = "ILIKE";
    else if (kind == "AEXPR_SIMILAR")
      *name = "SIMILAR TO";
    else if (kind == "AEXPR_DISTINCT")
      *name = "IS DISTINCT FROM";
    else if (kind == "AEXPR_NOT_DISTINCT")
      *name = "IS NOT DISTINCT FROM";
    else if (kind == "AEXPR_NULLIF")
      *name = "NULLIF";
    else if (kind == "AEXPR_OP_ANY")
      *name = "ANY (array)";
    else if (kind == "AEXPR_OP_ALL")
      *name = "ALL (array)";
    else if (kind == "AEXPR_BETWEEN_SYM" || kind == "AEXPR_NOT_BETWEEN_SYM")
      *name = "BETWEEN SYMMETRIC";
    else
      *name = "operator '" + op + "'";
    return Status::OK();
  }
  *name = ExprNodeName(key, v);
  return Status::OK();
}

Status Planner::CheckSelectClauses(Json& s, bool subquery) const {
  struct Clause {
    const char* key;
    const char* name;
    const char* keyword;
  };
  static const Clause kClauses[] = {
      {"withClause", "WITH (common table expression)", "WITH"},
      {"distinctClause", "DISTINCT", "DISTINCT"},
      {"intoClause", "SELECT INTO", "INTO"},
      {"groupClause", "GROUP BY", "GROUP"},
      {"havingClause", "HAVING", "HAVING"},
      {"windowClause", "WINDOW", "WINDOW"},
      {"sortClause", "ORDER BY", "ORDER"},
      {"lockingClause", "FOR UPDATE/SHARE", "FOR"},
      {"valuesLists", "VALUES", "VALUES"},
  };
  for (const Clause& c : kClauses) {
    if (s.contains(c.key)) {
      int loc = MinLocation(s[c.key]);
      if (loc < 0) {
        // No location inside (e.g. a plain DISTINCT): the keyword's first occurrence.
        return Unsupported(c.name, FirstKeyword(c.keyword));
      }
      return Unsupported(c.name, KeywordBefore(c.keyword, loc));
    }
  }
  if (s.value("op", "SETOP_NONE") != "SETOP_NONE") {
    const std::string op = s.value("op", "");
    const char* name = op == "SETOP_UNION" ? "UNION" : op == "SETOP_INTERSECT" ? "INTERSECT" : "EXCEPT";
    int loc = s.contains("rarg") ? MinLocation(s["rarg"]) : 0;
    return Unsupported(name, KeywordBefore(name, std::max(loc, 0)));
  }
  if (s.value("limitOption", "LIMIT_OPTION_DEFAULT") == "LIMIT_OPTION_WITH_TIES") {
    return Unsupported("FETCH ... WITH TIES", std::max(MinLocation(s["limitCount"]), 0));
  }
  if (subquery && (s.contains("limitCount") || s.contains("limitOffset"))) {
    return Unsupported("LIMIT/OFFSET in a subquery", std::max(MinLocation(s), 0));
  }
  if (!s.contains("fromClause")) {
    return Unsupported("SELECT without FROM", std::max(MinLocation(s), 0));
  }
  return Status::OK();
}

Status Planner::AddTable(Json& node, std::vector<BoundTable>* into) {
  if (!node.contains("RangeVar")) {
    int loc = 0;
    std::string what = node.empty() ? "FROM item" : node.begin().key();
    loc = std::max(MinLocation(node), 0);
    if (what == "RangeSubselect") {
      what = "subquery in FROM";
      loc = KeywordBefore("(", loc);
    } else if (what == "RangeFunction")
      what = "function in FROM";
    else if (what == "JoinExpr")
      what = "parenthesized join on the right of JOIN";
    return Unsupported(what, loc);
  }
  Json& rv = node["RangeVar"];
  const int loc = rv.value("location", 0);
  if (rv.contains("schemaname") || rv.contains("catalogname")) return Unsupported("schema-qualified table name", loc);
  if (rv.contains("alias") && rv["alias"].contains("colnames")) return Unsupported("column aliases in FROM", loc);
  const std::string relname = rv.value("relname", "");
  auto info = catalog_->GetTable(relname);
  if (!info.ok()) return Status::KeyError("no table named '" + relname + "' (" + DescribePosition(sql_, loc) + ")");
  BoundTable t;
  t.info = std::move(*info);
  t.alias = rv.contains("alias") ? rv["alias"].value("aliasname", relname) : relname;
  t.schema = DecodedSchema(*t.info.schema);
  for (auto& other : *into) {  // an EXISTS subquery's table may shadow an outer name
    if (other.alias == t.alias) return Error("table name or alias '" + t.alias + "' is used twice in FROM", loc);
  }
  into->push_back(std::move(t));
  return Status::OK();
}

Status Planner::BindFrom(Json& from) {
  if (from.size() != 1) {
    return Unsupported("comma-separated FROM list (cross join)", std::max(MinLocation(from[1]), 0));
  }
  // Flatten the left-deep join tree.
  std::vector<Json*> chain;
  Json* cur = &from[0];
  while (cur->contains("JoinExpr")) {
    chain.push_back(cur);
    cur = &(*cur)["JoinExpr"]["larg"];
  }
  QUIVER_RETURN_NOT_OK(AddTable(*cur, &tables_));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    Json& j = (**it)["JoinExpr"];
    const int loc = std::max(MinLocation(j["rarg"]), 0);
    if (j.value("isNatural", false)) return Unsupported("NATURAL JOIN", KeywordBefore("NATURAL", loc));
    if (j.contains("usingClause")) return Unsupported("JOIN ... USING", loc);
    if (j.contains("alias")) return Unsupported("alias of a join", loc);
    JoinStep step;
    step.location = KeywordBefore("JOIN", loc);
    const std::string type = j.value("jointype", "JOIN_INNER");
    if (type == "JOIN_INNER")
      step.type = SqlJoin::kInner;
    else if (type == "JOIN_LEFT")
      step.type = SqlJoin::kLeft;
    else if (type == "JOIN_RIGHT")
      step.type = SqlJoin::kRight;
    else if (type == "JOIN_FULL")
      step.type = SqlJoin::kFull;
    else
      return Unsupported("join type " + type, step.location);
    if (!j.contains("quals")) return Unsupported("CROSS JOIN (a join without ON)", step.location);
    QUIVER_RETURN_NOT_OK(AddTable(j["rarg"], &tables_));
    QUIVER_RETURN_NOT_OK(BindEquiKeys(j["quals"], static_cast<int>(tables_.size()) - 1, &step.keys));
    const int right = static_cast<int>(tables_.size()) - 1;
    if (step.type == SqlJoin::kLeft || step.type == SqlJoin::kFull)
      tables_[static_cast<size_t>(right)].null_supplied = true;
    if (step.type == SqlJoin::kRight || step.type == SqlJoin::kFull) {
      for (int t = 0; t < right; ++t) tables_[static_cast<size_t>(t)].null_supplied = true;
    }
    joins_.push_back(std::move(step));
  }
  if (tables_.size() > 60) return Unsupported("more than 60 tables in FROM", 0);
  return Status::OK();
}

Result<ColRef> Planner::ResolveColumn(Json& column_ref, bool allow_inner, bool allow_outer) const {
  Json& cr = column_ref["ColumnRef"];
  const int loc = cr.value("location", 0);
  std::vector<std::string> parts;
  for (auto& f : cr["fields"]) {
    if (f.contains("A_Star")) return Unsupported("'*' here", loc);
    parts.push_back(StringField(f));
  }
  if (parts.empty() || parts.size() > 2) return Unsupported("column name with more than two parts", loc);
  const std::string* qualifier = parts.size() == 2 ? &parts[0] : nullptr;
  const std::string& name = parts.back();
  // Candidates, inner scope first (SQL scoping).
  std::vector<std::pair<int, const BoundTable*>> scopes;
  if (allow_inner && inner_) scopes.emplace_back(kInnerTable, inner_);
  if (allow_outer) {
    for (size_t t = 0; t < tables_.size(); ++t) scopes.emplace_back(static_cast<int>(t), &tables_[t]);
  }
  for (int pass = 0; pass < 2; ++pass) {  // 0: inner scope only (when there is one); 1: all
    if (pass == 0 && !(allow_inner && inner_)) continue;
    std::vector<ColRef> exact, folded;
    for (auto& [id, t] : scopes) {
      if (pass == 0 && id != kInnerTable) continue;
      if (qualifier && *qualifier != t->alias) continue;
      for (int c = 0; c < t->schema->num_fields(); ++c) {
        const std::string& fname = t->schema->fields[static_cast<size_t>(c)]->name;
        if (fname == name)
          exact.push_back({id, c});
        else if (FoldIdentifier(fname) == FoldIdentifier(name))
          folded.push_back({id, c});
      }
    }
    const auto& found = exact.empty() ? folded : exact;
    if (found.size() == 1) return found[0];
    if (found.size() > 1) return Error("column reference '" + name + "' is ambiguous", loc);
  }
  std::string full = qualifier ? *qualifier + "." + name : name;
  if (qualifier) {
    bool known = false;
    for (auto& [id, t] : scopes) known |= t->alias == *qualifier;
    if (!known)
      return Status::KeyError("missing FROM entry for table '" + *qualifier + "' (" + DescribePosition(sql_, loc) +
                              ")");
  }
  return Status::KeyError("no column named '" + full + "' (" + DescribePosition(sql_, loc) + ")");
}

Status Planner::BindEquiKeys(Json& quals, int right_table, std::vector<std::pair<ColRef, ColRef>>* keys) {
  if (quals.contains("BoolExpr") && quals["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (auto& a : quals["BoolExpr"]["args"]) QUIVER_RETURN_NOT_OK(BindEquiKeys(a, right_table, keys));
    return Status::OK();
  }
  const int loc = std::max(MinLocation(quals), 0);
  if (!quals.contains("A_Expr") || quals["A_Expr"].value("kind", "") != "AEXPR_OP" ||
      StringField(quals["A_Expr"]["name"][0]) != "=" || !quals["A_Expr"].contains("lexpr") ||
      !quals["A_Expr"]["lexpr"].contains("ColumnRef") || !quals["A_Expr"].contains("rexpr") ||
      !quals["A_Expr"]["rexpr"].contains("ColumnRef")) {
    return Unsupported("join condition other than column = column (ANDed)", loc);
  }
  QUIVER_ASSIGN_OR_RETURN(ColRef a, ResolveColumn(quals["A_Expr"]["lexpr"], false, true));
  QUIVER_ASSIGN_OR_RETURN(ColRef b, ResolveColumn(quals["A_Expr"]["rexpr"], false, true));
  if (a.table == right_table && b.table < right_table) std::swap(a, b);
  if (!(a.table < right_table && b.table == right_table)) {
    return Unsupported("join condition that does not compare the joined table with the tables before it", loc);
  }
  keys->emplace_back(a, b);
  return Status::OK();
}

Result<Literal> Planner::BindLiteral(Json& node) const {
  Literal lit;
  if (node.contains("TypeCast")) {
    Json& tc = node["TypeCast"];
    std::string type;
    for (auto& n : tc["typeName"]["names"]) type = StringField(n);
    const int loc = tc.value("location", -1) >= 0 ? tc["location"].get<int>() : std::max(MinLocation(tc), 0);
    if (!tc["arg"].contains("A_Const") || !tc["arg"]["A_Const"].contains("sval") ||
        (type != "date" && type != "timestamp")) {
      return Unsupported("type cast to " + type, loc);
    }
    if (tc["typeName"].contains("typmods")) return Unsupported("type modifier on " + type, loc);
    const std::string text = tc["arg"]["A_Const"]["sval"].value("sval", "");
    lit.location = loc;
    lit.text = text;
    lit.kind = type == "date" ? Literal::Kind::kDate : Literal::Kind::kTimestamp;
    if (!ParseTemporal(text, type == "date", &lit.ns)) {
      return Error("invalid " + std::string(type == "date" ? "DATE" : "TIMESTAMP") + " literal '" + text + "'", loc);
    }
    return lit;
  }
  Json& c = node["A_Const"];
  lit.location = c.value("location", 0);
  if (c.value("isnull", false)) {
    lit.kind = Literal::Kind::kNull;
  } else if (c.contains("ival")) {
    // libpg_query's JSON drops negative (and zero) integer values: read the
    // literal from the statement text at its location.
    size_t p = static_cast<size_t>(std::max(lit.location, 0));
    size_t e = p;
    if (e < sql_.size() && (sql_[e] == '-' || sql_[e] == '+')) ++e;
    while (e < sql_.size() && sql_[e] == ' ') ++e;
    while (e < sql_.size() && sql_[e] >= '0' && sql_[e] <= '9') ++e;
    const std::string text(sql_.substr(p, e - p));
    if (!ParseNumber(text, &lit) || lit.kind != Literal::Kind::kInt) {
      return Error("cannot read integer literal '" + text + "'", lit.location);
    }
    if (c["ival"].contains("ival") && static_cast<i128>(c["ival"]["ival"].get<int64_t>()) != lit.unscaled) {
      return Error("integer literal '" + text + "' read inconsistently", lit.location);
    }
    lit.text = text;
  } else if (c.contains("fval")) {
    lit.text = c["fval"].value("fval", "");
    if (!ParseNumber(lit.text, &lit)) return Error("numeric literal '" + lit.text + "' out of range", lit.location);
  } else if (c.contains("sval")) {
    lit.kind = Literal::Kind::kString;
    lit.text = c["sval"].value("sval", "");
  } else if (c.contains("boolval")) {
    lit.kind = Literal::Kind::kBool;
    lit.boolean = c["boolval"].value("boolval", false);
    lit.text = lit.boolean ? "TRUE" : "FALSE";
  } else if (c.contains("bsval")) {
    return Unsupported("bit-string literal", lit.location);
  } else {
    return Unsupported("literal", lit.location);
  }
  return lit;
}

bool IsOperandNode(Json& n) {
  return n.is_object() && (n.contains("ColumnRef") || n.contains("A_Const") || n.contains("TypeCast"));
}

Result<std::unique_ptr<Expr>> Planner::BindComparison(CompareOp op, Json& lnode, Json& rnode, int location,
                                                      bool allow_inner, bool allow_outer) {
  struct Side {
    bool column = false;
    ColRef ref;
    DataTypePtr type;
    std::string desc;
    Literal lit;
    CompareClass cls = CompareClass::kExact;
    int scale = 0, digits = 0;
  };
  Side s[2];
  Json* nodes[2] = {&lnode, &rnode};
  for (int k = 0; k < 2; ++k) {
    Json& n = *nodes[k];
    if (!IsOperandNode(n)) {
      int loc;
      std::string name;
      QUIVER_RETURN_NOT_OK(ConstructName(n, &loc, &name));
      return Unsupported(name, loc);
    }
    if (n.contains("ColumnRef")) {
      QUIVER_ASSIGN_OR_RETURN(s[k].ref, ResolveColumn(n, allow_inner, allow_outer));
      const Field& f = FieldOf(s[k].ref);
      s[k].column = true;
      s[k].type = f.type;
      s[k].desc = "column '" + f.name + "' (" + f.type->ToString() + ")";
      if (!ClassOfType(*f.type, &s[k].cls, &s[k].scale, &s[k].digits)) {
        return Error("cannot compare " + s[k].desc + ": type not comparable", location);
      }
    } else {
      QUIVER_ASSIGN_OR_RETURN(s[k].lit, BindLiteral(n));
      s[k].desc = std::string(LiteralKindName(s[k].lit.kind)) + " '" + s[k].lit.text + "'";
    }
  }
  auto e = std::make_unique<Expr>();
  if ((!s[0].column && s[0].lit.kind == Literal::Kind::kNull) ||
      (!s[1].column && s[1].lit.kind == Literal::Kind::kNull)) {
    // A comparison with NULL is unknown on every row; the other side still
    // has to name a real column.
    e->kind = Expr::Kind::kConst;
    e->value = kUnknown;
    return e;
  }
  // Literal classes, adapted to the other side where PostgreSQL would
  // coerce an untyped string literal.
  for (int k = 0; k < 2; ++k) {
    if (s[k].column) continue;
    Side& me = s[k];
    const Side& other = s[1 - k];
    switch (me.lit.kind) {
      case Literal::Kind::kInt:
        me.cls = CompareClass::kExact;
        me.scale = 0;
        me.digits = me.lit.digits;
        break;
      case Literal::Kind::kDecimal:
        me.cls = CompareClass::kExact;
        me.scale = me.lit.scale;
        me.digits = me.lit.digits;
        break;
      case Literal::Kind::kFloat: me.cls = CompareClass::kFloat; break;
      case Literal::Kind::kBool: me.cls = CompareClass::kBool; break;
      case Literal::Kind::kDate:
      case Literal::Kind::kTimestamp: me.cls = CompareClass::kTemporal; break;
      case Literal::Kind::kString:
        me.cls = CompareClass::kString;
        if (other.column && other.cls == CompareClass::kTemporal) {
          if (!ParseTemporal(me.lit.text, false, &me.lit.ns)) {
            return Error("cannot compare " + other.desc + " with " + me.desc + ": not a date or timestamp",
                         me.lit.location);
          }
          me.lit.kind = Literal::Kind::kTimestamp;
          me.cls = CompareClass::kTemporal;
        }
        break;
      case Literal::Kind::kNull: break;
    }
  }
  CompareClass cls;
  if (IsNumeric(s[0].cls) && IsNumeric(s[1].cls)) {
    cls = (s[0].cls == CompareClass::kFloat || s[1].cls == CompareClass::kFloat) ? CompareClass::kFloat
                                                                                 : CompareClass::kExact;
  } else if (s[0].cls == s[1].cls) {
    cls = s[0].cls;
  } else {
    return Error("cannot compare " + s[0].desc + " with " + s[1].desc, location);
  }
  const int common_scale = std::max(s[0].scale, s[1].scale);
  e->kind = Expr::Kind::kCompare;
  e->op = op;
  e->cls = cls;
  Operand* ops[2] = {&e->lhs, &e->rhs};
  for (int k = 0; k < 2; ++k) {
    Operand& o = *ops[k];
    if (s[k].column) {
      o.column = AddRef(s[k].ref);
      if (cls == CompareClass::kExact) {
        o.rescale = common_scale - s[k].scale;
        if (s[k].digits + o.rescale > 38) {
          return Unsupported(
              "comparison of " + s[k].desc + " at scale " + std::to_string(common_scale) + " (more than 38 digits)",
              location);
        }
      }
      o.source_scale = s[k].scale;
      continue;
    }
    LiteralValue& v = o.literal;
    v.cls = cls;
    const Literal& lit = s[k].lit;
    switch (cls) {
      case CompareClass::kExact: {
        const int shift = common_scale - lit.scale;
        if (lit.digits + shift > 38) return Unsupported("literal with more than 38 digits at scale", lit.location);
        v.exact = lit.unscaled;
        for (int i = 0; i < shift; ++i) v.exact *= 10;
        v.scale = common_scale;
        break;
      }
      case CompareClass::kFloat:
        if (lit.kind == Literal::Kind::kFloat) {
          v.real = lit.real;
        } else {
          long double d = static_cast<long double>(lit.unscaled);
          for (int i = 0; i < lit.scale; ++i) d /= 10;
          v.real = static_cast<double>(d);
        }
        break;
      case CompareClass::kString: v.bytes = lit.text; break;
      case CompareClass::kTemporal: v.exact = lit.ns; break;
      case CompareClass::kBool: v.exact = lit.boolean ? 1 : 0; break;
    }
  }
  return e;
}

// Turns the OR of `column = literal` comparisons that an IN list was bound
// to into one kInSet term per comparison class (plus one unknown term when
// the list holds a NULL), with the same three-valued result: a row is true
// when its value equals an item, unknown when it is NULL or no item matches
// and the list holds a NULL, false otherwise. Terms that are not
// column-literal comparisons (none today) are kept as they are.
std::unique_ptr<Expr> HashInList(std::unique_ptr<Expr> chain) {
  auto out = std::make_unique<Expr>();
  out->kind = Expr::Kind::kOr;
  std::shared_ptr<InSet> sets[5];
  bool has_null = false;
  for (auto& c : chain->args) {
    if (c->kind == Expr::Kind::kConst && c->value == kUnknown) {
      has_null = true;
      continue;
    }
    if (c->kind != Expr::Kind::kCompare || c->op != CompareOp::kEq || c->lhs.column < 0 || c->rhs.column >= 0 ||
        c->rhs.literal.is_null) {
      out->args.push_back(std::move(c));
      continue;
    }
    const int k = static_cast<int>(c->cls);
    if (!sets[k]) {
      sets[k] = std::make_shared<InSet>();
      auto t = std::make_unique<Expr>();
      t->kind = Expr::Kind::kInSet;
      t->cls = c->cls;
      t->lhs = c->lhs;
      t->lhs.rescale = 0;  // kExact: the set holds values at the column's scale
      t->in_set = sets[k];
      out->args.push_back(std::move(t));
    }
    InSet& set = *sets[k];
    const LiteralValue& lit = c->rhs.literal;
    switch (c->cls) {
      case CompareClass::kExact: {
        // column * 10^rescale == literal  <=>  literal divisible by 10^rescale
        // and column == literal / 10^rescale.
        i128 p = 1;
        for (int i = 0; i < c->lhs.rescale; ++i) p *= 10;
        if (lit.exact % p == 0) set.exact.insert(lit.exact / p);
        break;
      }
      case CompareClass::kTemporal:
      case CompareClass::kBool: set.exact.insert(lit.exact); break;
      case CompareClass::kFloat: set.real_bits.insert(InSet::CanonicalBits(lit.real)); break;
      case CompareClass::kString: set.bytes.insert(lit.bytes); break;
    }
  }
  if (has_null) {
    auto u = std::make_unique<Expr>();
    u->kind = Expr::Kind::kConst;
    u->value = kUnknown;
    out->args.push_back(std::move(u));
  }
  if (out->args.size() == 1) return std::move(out->args[0]);
  return out;
}

Result<std::unique_ptr<Expr>> Planner::BindPredicate(Json& node, bool allow_inner, bool allow_outer) {
  if (!node.is_object() || node.empty()) return Error("empty expression", 0);
  const std::string key = node.begin().key();
  Json& v = node.begin().value();
  if (key == "BoolExpr") {
    const std::string op = v.value("boolop", "");
    auto e = std::make_unique<Expr>();
    e->kind = op == "AND_EXPR" ? Expr::Kind::kAnd : op == "OR_EXPR" ? Expr::Kind::kOr : Expr::Kind::kNot;
    for (auto& a : v["args"]) {
      QUIVER_ASSIGN_OR_RETURN(auto sub, BindPredicate(a, allow_inner, allow_outer));
      e->args.push_back(std::move(sub));
    }
    if (e->args.empty() || (e->kind == Expr::Kind::kNot && e->args.size() != 1))
      return Error("malformed boolean expression", v.value("location", 0));
    return e;
  }
  if (key == "NullTest") {
    Json& arg = v["arg"];
    auto e = std::make_unique<Expr>();
    e->kind = v.value("nulltesttype", "") == "IS_NULL" ? Expr::Kind::kIsNull : Expr::Kind::kIsNotNull;
    if (arg.contains("ColumnRef")) {
      QUIVER_ASSIGN_OR_RETURN(ColRef r, ResolveColumn(arg, allow_inner, allow_outer));
      e->lhs.column = AddRef(r);
      return e;
    }
    if (IsOperandNode(arg)) {
      QUIVER_ASSIGN_OR_RETURN(Literal lit, BindLiteral(arg));
      e->lhs.literal.is_null = lit.kind == Literal::Kind::kNull;
      return e;
    }
    int loc;
    std::string name;
    QUIVER_RETURN_NOT_OK(ConstructName(arg, &loc, &name));
    return Unsupported(name, loc);
  }
  if (key == "ColumnRef") {
    QUIVER_ASSIGN_OR_RETURN(ColRef r, ResolveColumn(node, allow_inner, allow_outer));
    const Field& f = FieldOf(r);
    if (f.type->id != TypeId::kBool) {
      return Error("argument of WHERE must be boolean, not column '" + f.name + "' (" + f.type->ToString() + ")",
                   v.value("location", 0));
    }
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::kBoolColumn;
    e->lhs.column = AddRef(r);
    return e;
  }
  if (key == "A_Const") {
    QUIVER_ASSIGN_OR_RETURN(Literal lit, BindLiteral(node));
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::kConst;
    if (lit.kind == Literal::Kind::kNull)
      e->value = kUnknown;
    else if (lit.kind == Literal::Kind::kBool)
      e->value = lit.boolean ? kTrue : kFalse;
    else
      return Error("argument of WHERE must be boolean, not " + std::string(LiteralKindName(lit.kind)), lit.location);
    return e;
  }
  if (key == "A_Expr") {
    const std::string kind = v.value("kind", "");
    const int loc = v.value("location", 0);
    std::string op;
    if (v.contains("name")) {
      for (auto& n : v["name"]) op = StringField(n);
    }
    if (kind == "AEXPR_OP" && v.contains("lexpr") && v.contains("rexpr")) {
      CompareOp cop;
      if (op == "=")
        cop = CompareOp::kEq;
      else if (op == "<>" || op == "!=")
        cop = CompareOp::kNe;
      else if (op == "<")
        cop = CompareOp::kLt;
      else if (op == "<=")
        cop = CompareOp::kLe;
      else if (op == ">")
        cop = CompareOp::kGt;
      else if (op == ">=")
        cop = CompareOp::kGe;
      else
        return Unsupported("operator '" + op + "'", loc);
      return BindComparison(cop, v["lexpr"], v["rexpr"], loc, allow_inner, allow_outer);
    }
    if (kind == "AEXPR_IN") {
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::kOr;
      if (!v["rexpr"].contains("List")) return Unsupported("IN with a subquery or expression", loc);
      for (auto& item : v["rexpr"]["List"]["items"]) {
        if (!(item.contains("A_Const") || item.contains("TypeCast"))) {
          int l;
          std::string name;
          QUIVER_RETURN_NOT_OK(ConstructName(item, &l, &name));
          return Unsupported(item.contains("ColumnRef") ? std::string("column in an IN list") : name, l);
        }
        QUIVER_ASSIGN_OR_RETURN(auto c,
                                BindComparison(CompareOp::kEq, v["lexpr"], item, loc, allow_inner, allow_outer));
        e->args.push_back(std::move(c));
      }
      // Each item was bound (and type-checked) as `lexpr = item`; when
      // lexpr is a column, the comparisons become hashed sets.
      if (v["lexpr"].contains("ColumnRef")) e = HashInList(std::move(e));
      if (op == "<>") {
        auto n = std::make_unique<Expr>();
        n->kind = Expr::Kind::kNot;
        n->args.push_back(std::move(e));
        return n;
      }
      return e;
    }
    if (kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN") {
      Json& items = v["rexpr"]["List"]["items"];
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::kAnd;
      QUIVER_ASSIGN_OR_RETURN(auto lo,
                              BindComparison(CompareOp::kGe, v["lexpr"], items[0], loc, allow_inner, allow_outer));
      QUIVER_ASSIGN_OR_RETURN(auto hi,
                              BindComparison(CompareOp::kLe, v["lexpr"], items[1], loc, allow_inner, allow_outer));
      e->args.push_back(std::move(lo));
      e->args.push_back(std::move(hi));
      if (kind == "AEXPR_NOT_BETWEEN") {
        auto n = std::make_unique<Expr>();
        n->kind = Expr::Kind::kNot;
        n->args.push_back(std::move(e));
        return n;
      }
      return e;
    }
  }
  int loc;
  std::string name;
  QUIVER_RETURN_NOT_OK(ConstructName(node, &loc, &name));
  if (key == "A_Expr" || key == "TypeCast" || key == "FuncCall" || key == "SubLink") return Unsupported(name, loc);
  return Unsupported(name, loc);
}

// Splits nested ANDs into their terms.
void Conjuncts(Json& node, std::vector<Json*>* out) {
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (auto& a : node["BoolExpr"]["args"]) Conjuncts(a, out);
    return;
  }
  out->push_back(&node);
}

Status Planner::BindExists(Json& sublink, bool anti) {
  const int loc = sublink.value("location", 0);
  Json& sub = sublink["subselect"];
  if (!sub.contains("SelectStmt")) return Unsupported("EXISTS over a non-SELECT", loc);
  Json& s = sub["SelectStmt"];
  QUIVER_RETURN_NOT_OK(CheckSelectClauses(s, true));
  if (s["fromClause"].size() != 1 || s["fromClause"][0].contains("JoinExpr")) {
    return Unsupported("EXISTS subquery over more than one table", std::max(MinLocation(s["fromClause"]), 0));
  }
  SemiStep step;
  step.anti = anti;
  step.location = loc;
  std::vector<BoundTable> one;
  QUIVER_RETURN_NOT_OK(AddTable(s["fromClause"][0], &one));
  step.inner = std::move(one[0]);
  inner_ = &step.inner;
  // The select list of an EXISTS subquery is not evaluated; its names must
  // still exist.
  for (auto& target : s["targetList"]) {
    Json& val = target["ResTarget"]["val"];
    if (val.contains("ColumnRef")) {
      bool star = false;
      for (auto& f : val["ColumnRef"]["fields"]) star |= f.contains("A_Star");
      if (!star) {
        auto r = ResolveColumn(val, true, true);
        if (!r.ok()) {
          inner_ = nullptr;
          return r.status();
        }
      }
    } else if (!val.contains("A_Const")) {
      int l;
      std::string name;
      QUIVER_RETURN_NOT_OK(ConstructName(val, &l, &name));
      inner_ = nullptr;
      return Unsupported(name + " in an EXISTS select list", l);
    }
  }
  Status st;
  if (s.contains("whereClause")) {
    std::vector<Json*> terms;
    Conjuncts(s["whereClause"], &terms);
    for (Json* t : terms) {
      // inner.col = outer.col (either order) correlates.
      if (t->contains("A_Expr") && (*t)["A_Expr"].value("kind", "") == "AEXPR_OP" &&
          StringField((*t)["A_Expr"]["name"][0]) == "=" && (*t)["A_Expr"].contains("lexpr") &&
          (*t)["A_Expr"]["lexpr"].contains("ColumnRef") && (*t)["A_Expr"].contains("rexpr") &&
          (*t)["A_Expr"]["rexpr"].contains("ColumnRef")) {
        auto a = ResolveColumn((*t)["A_Expr"]["lexpr"], true, true);
        auto b = ResolveColumn((*t)["A_Expr"]["rexpr"], true, true);
        if (!a.ok()) {
          st = a.status();
          break;
        }
        if (!b.ok()) {
          st = b.status();
          break;
        }
        ColRef x = *a, y = *b;
        if (x.table == kInnerTable && y.table != kInnerTable) std::swap(x, y);
        if (x.table != kInnerTable && y.table == kInnerTable) {
          step.keys.emplace_back(x, y);
          continue;
        }
      }
      auto e = BindPredicate(*t, true, true);
      if (!e.ok()) {
        st = e.status();
        break;
      }
      const uint64_t outer = TablesOf(**e);
      std::vector<int> rs;
      CollectRefs(**e, &rs);
      bool only_inner = true;
      for (int r : rs) only_inner &= refs_[static_cast<size_t>(r)].table == kInnerTable;
      (void)outer;
      if (!only_inner) {
        st = Unsupported("correlated condition other than inner.column = outer.column", std::max(LocationOf(*t), 0));
        break;
      }
      step.inner.pushed.push_back(std::move(*e));
    }
  }
  inner_ = nullptr;
  QUIVER_RETURN_NOT_OK(st);
  if (step.keys.empty()) return Unsupported("EXISTS without an equality correlated with the outer query", loc);
  semis_.push_back(std::move(step));
  return Status::OK();
}

void Planner::CollectRefs(const Expr& e, std::vector<int>* out) const {
  if (e.kind == Expr::Kind::kCompare) {
    if (e.lhs.column >= 0) out->push_back(e.lhs.column);
    if (e.rhs.column >= 0) out->push_back(e.rhs.column);
  } else if (e.kind == Expr::Kind::kIsNull || e.kind == Expr::Kind::kIsNotNull || e.kind == Expr::Kind::kBoolColumn ||
             e.kind == Expr::Kind::kInSet) {
    if (e.lhs.column >= 0) out->push_back(e.lhs.column);
  }
  for (auto& a : e.args) CollectRefs(*a, out);
}

uint64_t Planner::TablesOf(const Expr& e) const {
  std::vector<int> rs;
  CollectRefs(e, &rs);
  uint64_t mask = 0;
  for (int r : rs) {
    const int t = refs_[static_cast<size_t>(r)].table;
    if (t != kInnerTable) mask |= uint64_t{1} << t;
  }
  return mask;
}

void Planner::Remap(Expr* e, const std::function<int(const ColRef&)>& map) const {
  if (e->kind == Expr::Kind::kCompare || e->kind == Expr::Kind::kIsNull || e->kind == Expr::Kind::kIsNotNull ||
      e->kind == Expr::Kind::kBoolColumn || e->kind == Expr::Kind::kInSet) {
    if (e->lhs.column >= 0) e->lhs.column = map(refs_[static_cast<size_t>(e->lhs.column)]);
    if (e->kind == Expr::Kind::kCompare && e->rhs.column >= 0)
      e->rhs.column = map(refs_[static_cast<size_t>(e->rhs.column)]);
  }
  for (auto& a : e->args) Remap(a.get(), map);
}

std::unique_ptr<Expr> AndOf(std::vector<std::unique_ptr<Expr>> terms) {
  if (terms.empty()) return nullptr;
  if (terms.size() == 1) return std::move(terms[0]);
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::kAnd;
  e->args = std::move(terms);
  return e;
}

Status CheckGatherable(const Schema& schema, const std::string& where) {
  for (auto& f : schema.fields) {
    join::FieldKind kind;
    int32_t width;
    QUIVER_RETURN_NOT_OK_CTX(join::FieldKindOf(*f->type, "column '" + f->name + "'", &kind, &width), where);
  }
  return Status::OK();
}

Result<int64_t> LimitValue(const Planner& p, Json& node, const std::string_view sql, const char* what) {
  (void)sql;
  if (node.contains("A_Const") && node["A_Const"].value("isnull", false)) return int64_t{-1};  // LIMIT ALL / NULL
  if (!node.contains("A_Const") || !node["A_Const"].contains("ival")) {
    return p.Unsupported(std::string(what) + " other than an integer constant",
                         std::max(Planner::MinLocation(node), 0));
  }
  Json& c = node["A_Const"];
  if (!c["ival"].contains("ival")) {
    // Zero or negative (libpg_query's JSON omits them); negatives are errors below.
    return int64_t{0};
  }
  const int64_t v = c["ival"]["ival"].get<int64_t>();
  if (v < 0) return p.Error(std::string(what) + " must not be negative", c.value("location", 0));
  return v;
}

Result<std::unique_ptr<RecordBatchStream>> Planner::PlanSelect(Json& s) {
  QUIVER_RETURN_NOT_OK(CheckSelectClauses(s, false));
  QUIVER_RETURN_NOT_OK(BindFrom(s["fromClause"]));
  // Select list.
  struct OutCol {
    ColRef ref;
    std::string name;
  };
  std::vector<OutCol> out_cols;
  for (auto& target : s["targetList"]) {
    Json& rt = target["ResTarget"];
    Json& val = rt["val"];
    const int loc = rt.value("location", 0);
    if (val.contains("ColumnRef")) {
      Json& fields = val["ColumnRef"]["fields"];
      const bool star = fields[fields.size() - 1].contains("A_Star");
      if (star) {
        if (rt.contains("name")) return Error("'*' cannot have an alias", loc);
        if (fields.size() > 2) return Unsupported("'*' with a more than one-part qualifier", loc);
        bool any = false;
        for (size_t t = 0; t < tables_.size(); ++t) {
          if (fields.size() == 2 && StringField(fields[0]) != tables_[t].alias) continue;
          any = true;
          for (int c = 0; c < tables_[t].schema->num_fields(); ++c) {
            out_cols.push_back({{static_cast<int>(t), c}, tables_[t].schema->fields[static_cast<size_t>(c)]->name});
          }
        }
        if (!any)
          return Status::KeyError("missing FROM entry for table '" + StringField(fields[0]) + "' (" +
                                  DescribePosition(sql_, loc) + ")");
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(ColRef r, ResolveColumn(val, false, true));
      out_cols.push_back({r, rt.contains("name") ? rt["name"].get<std::string>() : FieldOf(r).name});
      continue;
    }
    int l;
    std::string name;
    QUIVER_RETURN_NOT_OK(ConstructName(val, &l, &name));
    if (val.contains("A_Const") || val.contains("TypeCast")) name = "constant";
    if (val.contains("SubLink")) name = "subquery";
    return Unsupported(name + " in the SELECT list", l);
  }
  // WHERE.
  if (s.contains("whereClause")) {
    std::vector<Json*> terms;
    Conjuncts(s["whereClause"], &terms);
    for (Json* t : terms) {
      if (t->contains("SubLink") && (*t)["SubLink"].value("subLinkType", "") == "EXISTS_SUBLINK") {
        QUIVER_RETURN_NOT_OK(BindExists((*t)["SubLink"], false));
        continue;
      }
      if (t->contains("BoolExpr") && (*t)["BoolExpr"].value("boolop", "") == "NOT_EXPR" &&
          (*t)["BoolExpr"]["args"].size() == 1 && (*t)["BoolExpr"]["args"][0].contains("SubLink") &&
          (*t)["BoolExpr"]["args"][0]["SubLink"].value("subLinkType", "") == "EXISTS_SUBLINK") {
        QUIVER_RETURN_NOT_OK(BindExists((*t)["BoolExpr"]["args"][0]["SubLink"], true));
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(auto e, BindPredicate(*t, false, true));
      const uint64_t mask = TablesOf(*e);
      if (mask != 0 && (mask & (mask - 1)) == 0) {
        const int table = __builtin_ctzll(mask);
        if (!tables_[static_cast<size_t>(table)].null_supplied) {
          tables_[static_cast<size_t>(table)].pushed.push_back(std::move(e));
          continue;
        }
      }
      post_filters_.push_back(std::move(e));
    }
  }
  // LIMIT / OFFSET.
  int64_t limit = -1, offset = 0;
  if (s.contains("limitCount")) {
    QUIVER_ASSIGN_OR_RETURN(limit, LimitValue(*this, s["limitCount"], sql_, "LIMIT"));
  }
  if (s.contains("limitOffset")) {
    QUIVER_ASSIGN_OR_RETURN(offset, LimitValue(*this, s["limitOffset"], sql_, "OFFSET"));
    offset = std::max<int64_t>(offset, 0);
  }
  // A LIMIT/OFFSET given as a negative literal shows up as 0 above; read the text.
  for (const char* k : {"limitCount", "limitOffset"}) {
    if (!s.contains(k) || !s[k].contains("A_Const") || !s[k]["A_Const"].contains("ival") ||
        s[k]["A_Const"]["ival"].contains("ival")) {
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(Literal lit, BindLiteral(s[k]));
    if (lit.unscaled < 0)
      return Error(std::string(k[5] == 'C' ? "LIMIT" : "OFFSET") + " must not be negative", lit.location);
  }

  // Needed columns per table.
  auto need = [&](const ColRef& r) {
    BoundTable& t = r.table == kInnerTable ? *inner_ : tables_[static_cast<size_t>(r.table)];
    t.needed.push_back(r.column);
  };
  for (auto& oc : out_cols) need(oc.ref);
  for (auto& j : joins_) {
    for (auto& [a, b] : j.keys) {
      need(a);
      need(b);
    }
  }
  std::vector<int> rs;
  for (auto& e : post_filters_) CollectRefs(*e, &rs);
  for (auto& t : tables_) {
    for (auto& e : t.pushed) CollectRefs(*e, &rs);
  }
  for (int r : rs) need(refs_[static_cast<size_t>(r)]);
  for (auto& sm : semis_) {
    for (auto& [outer, in] : sm.keys) {
      need(outer);
      sm.inner.needed.push_back(in.column);
    }
    std::vector<int> irs;
    for (auto& e : sm.inner.pushed) CollectRefs(*e, &irs);
    for (int r : irs) sm.inner.needed.push_back(refs_[static_cast<size_t>(r)].column);
  }
  auto finish_needed = [](BoundTable& t) {
    if (t.needed.empty()) t.needed.push_back(0);
    std::sort(t.needed.begin(), t.needed.end());
    t.needed.erase(std::unique(t.needed.begin(), t.needed.end()), t.needed.end());
  };
  for (auto& t : tables_) finish_needed(t);
  for (auto& sm : semis_) finish_needed(sm.inner);
  // Compact indices: tables in FROM order, needed columns only.
  std::vector<int> base(tables_.size(), 0);
  for (size_t t = 1; t < tables_.size(); ++t) base[t] = base[t - 1] + static_cast<int>(tables_[t - 1].needed.size());
  auto local_index = [](const BoundTable& t, int column) {
    return static_cast<int>(std::lower_bound(t.needed.begin(), t.needed.end(), column) - t.needed.begin());
  };
  auto compact = [&](const ColRef& r) {
    return base[static_cast<size_t>(r.table)] + local_index(tables_[static_cast<size_t>(r.table)], r.column);
  };

  // Scans.
  auto make_scan = [&](BoundTable& t) -> Result<std::unique_ptr<RecordBatchStream>> {
    auto schema = std::make_shared<Schema>();
    for (int c : t.needed) schema->fields.push_back(t.schema->fields[static_cast<size_t>(c)]);
    for (auto& e : t.pushed) {
      Remap(e.get(), [&](const ColRef& r) { return local_index(t, r.column); });
    }
    auto filter = AndOf(std::move(t.pushed));
    if (filter) QUIVER_RETURN_NOT_OK(CheckGatherable(*schema, "filtering table '" + t.alias + "'"));
    return std::unique_ptr<RecordBatchStream>(
        std::make_unique<ScanOp>(ctx_, catalog_, t.info, t.needed, schema, std::move(filter)));
  };
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<RecordBatchStream> current, make_scan(tables_[0]));
  int64_t estimate = tables_[0].info.num_rows;
  for (size_t i = 0; i < joins_.size(); ++i) {
    BoundTable& right = tables_[i + 1];
    QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<RecordBatchStream> rscan, make_scan(right));
    const JoinStep& step = joins_[i];
    const bool build_left = estimate < right.info.num_rows;
    join::HashJoinOptions jo;
    jo.output_pool = ctx_->pool.get();
    jo.max_output_rows = ctx_->max_batch_rows;
    const int left_width = static_cast<int>(current->schema()->fields.size());
    std::vector<int> left_keys, right_keys;
    for (auto& [a, b] : step.keys) {
      left_keys.push_back(compact(a));
      right_keys.push_back(local_index(right, b.column));
    }
    switch (step.type) {
      case SqlJoin::kInner: jo.type = join::JoinType::kInner; break;
      case SqlJoin::kFull: jo.type = join::JoinType::kFullOuter; break;
      case SqlJoin::kLeft: jo.type = build_left ? join::JoinType::kRightOuter : join::JoinType::kLeftOuter; break;
      case SqlJoin::kRight: jo.type = build_left ? join::JoinType::kLeftOuter : join::JoinType::kRightOuter; break;
    }
    std::vector<int> reorder;
    SchemaPtr build_schema = build_left ? current->schema() : rscan->schema();
    SchemaPtr probe_schema = build_left ? rscan->schema() : current->schema();
    jo.build_keys = build_left ? left_keys : right_keys;
    jo.probe_keys = build_left ? right_keys : left_keys;
    auto made = join::HashJoin::Make(build_schema, probe_schema, jo);
    if (!made.ok()) {
      return Status(made.status().code(), made.status().message() + " (" + DescribePosition(sql_, step.location) + ")");
    }
    std::shared_ptr<const join::HashJoin> hj = *made;
    auto schema = std::make_shared<Schema>();
    const auto& ofields = hj->output_schema()->fields;
    if (build_left) {
      // Output is (right table, left side): put the left side first.
      const int right_width = static_cast<int>(rscan->schema()->fields.size());
      for (int c = 0; c < left_width; ++c) reorder.push_back(right_width + c);
      for (int c = 0; c < right_width; ++c) reorder.push_back(c);
      for (int c : reorder) schema->fields.push_back(ofields[static_cast<size_t>(c)]);
    } else {
      schema->fields = ofields;
    }
    if (build_left) {
      current = std::make_unique<JoinOp>(ctx_, hj, std::move(rscan), std::move(current), std::move(reorder), schema);
    } else {
      current = std::make_unique<JoinOp>(ctx_, hj, std::move(current), std::move(rscan), std::move(reorder), schema);
    }
    estimate = std::max(estimate, right.info.num_rows);
  }
  if (!post_filters_.empty()) {
    for (auto& e : post_filters_) Remap(e.get(), compact);
    QUIVER_RETURN_NOT_OK(CheckGatherable(*current->schema(), "filtering the joined rows"));
    current = std::make_unique<FilterOp>(ctx_, std::move(current), AndOf(std::move(post_filters_)));
  }
  for (auto& sm : semis_) {
    QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<RecordBatchStream> inner_scan, make_scan(sm.inner));
    join::HashJoinOptions jo;
    jo.output_pool = ctx_->pool.get();
    jo.max_output_rows = ctx_->max_batch_rows;
    jo.type = sm.anti ? join::JoinType::kLeftAnti : join::JoinType::kLeftSemi;
    for (auto& [outer, in] : sm.keys) {
      jo.probe_keys.push_back(compact(outer));
      jo.build_keys.push_back(local_index(sm.inner, in.column));
    }
    auto made = join::HashJoin::Make(inner_scan->schema(), current->schema(), jo);
    if (!made.ok()) {
      return Status(made.status().code(), made.status().message() + " (" + DescribePosition(sql_, sm.location) + ")");
    }
    SchemaPtr schema = current->schema();
    current =
        std::make_unique<JoinOp>(ctx_, *made, std::move(current), std::move(inner_scan), std::vector<int>{}, schema);
  }
  // Projection.
  auto schema = std::make_shared<Schema>();
  std::vector<int> columns;
  for (auto& oc : out_cols) {
    const int c = compact(oc.ref);
    columns.push_back(c);
    const Field& f = *current->schema()->fields[static_cast<size_t>(c)];
    schema->fields.push_back(field(oc.name, f.type, f.nullable, f.metadata));
  }
  current = std::make_unique<ProjectOp>(std::move(current), std::move(columns), schema);
  if (limit >= 0 || offset > 0) current = std::make_unique<LimitOp>(std::move(current), offset, limit);
  return current;
}

Result<std::unique_ptr<RecordBatchStream>> Planner::ShowTables() {
  std::vector<std::string> names;
  std::vector<int64_t> rows;
  for (auto& t : catalog_->ListTables()) {
    names.push_back(t.name);
    rows.push_back(t.num_rows);
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("table_name", utf8(), false), field("num_rows", int64(), false)};
  QUIVER_ASSIGN_OR_RETURN(auto a, BuildUtf8(names, ctx_->pool.get()));
  QUIVER_ASSIGN_OR_RETURN(auto b, BuildInt64(rows, ctx_->pool.get()));
  return std::unique_ptr<RecordBatchStream>(std::make_unique<ConstStream>(
      schema, names.empty() ? nullptr : Rewrap(schema, static_cast<int64_t>(names.size()), {a, b})));
}

Result<std::unique_ptr<RecordBatchStream>> Planner::Describe(std::string_view name, int location) {
  auto t = catalog_->GetTable(name);
  if (!t.ok())
    return Status::KeyError("no table named '" + FoldIdentifier(name) + "' (" + DescribePosition(sql_, location) + ")");
  std::vector<std::string> names, types;
  std::vector<bool> nullable;
  for (auto& f : t->schema->fields) {
    names.push_back(f->name);
    types.push_back(f->type->ToString());
    nullable.push_back(f->nullable);
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("column_name", utf8(), false), field("data_type", utf8(), false),
                    field("nullable", boolean(), false)};
  QUIVER_ASSIGN_OR_RETURN(auto a, BuildUtf8(names, ctx_->pool.get()));
  QUIVER_ASSIGN_OR_RETURN(auto b, BuildUtf8(types, ctx_->pool.get()));
  QUIVER_ASSIGN_OR_RETURN(auto c, BuildBool(nullable, ctx_->pool.get()));
  return std::unique_ptr<RecordBatchStream>(std::make_unique<ConstStream>(
      schema, names.empty() ? nullptr : Rewrap(schema, static_cast<int64_t>(names.size()), {a, b, c})));
}

// "DESCRIBE name" / "DESC name" (not PostgreSQL syntax, so recognised
// before parsing): returns true and the name when `sql` is one.
bool MatchDescribe(std::string_view sql, std::string* name, int* name_offset) {
  size_t p = 0;
  auto skip_ws = [&] {
    while (p < sql.size() && (sql[p] == ' ' || sql[p] == '\t' || sql[p] == '\n' || sql[p] == '\r')) ++p;
  };
  skip_ws();
  const size_t w = p;
  while (p < sql.size() && std::isalpha(static_cast<unsigned char>(sql[p]))) ++p;
  const std::string word = FoldIdentifier(sql.substr(w, p - w));
  if (word != "describe" && word != "desc") return false;
  skip_ws();
  *name_offset = static_cast<int>(p);
  std::string n;
  if (p < sql.size() && sql[p] == '"') {
    ++p;
    while (p < sql.size() && sql[p] != '"') n += sql[p++];
    if (p >= sql.size()) return false;
    ++p;
  } else {
    while (p < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[p])) || sql[p] == '_')) n += sql[p++];
    n = FoldIdentifier(n);
  }
  skip_ws();
  if (p < sql.size() && sql[p] == ';') ++p;
  skip_ws();
  if (p != sql.size() || n.empty()) return false;
  *name = n;
  return true;
}

std::string StatementName(const std::string& key) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"InsertStmt", "INSERT"},
      {"UpdateStmt", "UPDATE"},
      {"DeleteStmt", "DELETE"},
      {"MergeStmt", "MERGE"},
      {"CreateStmt", "CREATE TABLE"},
      {"CreateTableAsStmt", "CREATE TABLE AS"},
      {"DropStmt", "DROP"},
      {"AlterTableStmt", "ALTER TABLE"},
      {"IndexStmt", "CREATE INDEX"},
      {"ViewStmt", "CREATE VIEW"},
      {"TruncateStmt", "TRUNCATE"},
      {"CopyStmt", "COPY"},
      {"ExplainStmt", "EXPLAIN"},
      {"TransactionStmt", "transaction control (BEGIN/COMMIT/ROLLBACK)"},
      {"VariableSetStmt", "SET"},
      {"CreateSchemaStmt", "CREATE SCHEMA"},
      {"GrantStmt", "GRANT/REVOKE"},
      {"PrepareStmt", "PREPARE"},
      {"ExecuteStmt", "EXECUTE"},
      {"CallStmt", "CALL"},
      {"DoStmt", "DO"},
      {"VacuumStmt", "VACUUM/ANALYZE"},
  };
  for (auto& [k, n] : kNames) {
    if (key == k) return n;
  }
  std::string s = key;
  if (s.size() > 4 && s.substr(s.size() - 4) == "Stmt") s.resize(s.size() - 4);
  return s + " statement";
}

}  // namespace

Engine::Engine(std::shared_ptr<const Catalog> catalog) : catalog_(std::move(catalog)) {}

Result<std::unique_ptr<RecordBatchStream>> Engine::Execute(std::string_view sql, const ExecuteOptions& options) const {
  if (options.pool == nullptr) return Status::Invalid("ExecuteOptions.pool is required");
  if (options.max_batch_rows <= 0) return Status::Invalid("ExecuteOptions.max_batch_rows must be positive");
  auto ctx = std::make_shared<ExecContext>();
  MemoryPoolOptions po;
  po.name = "sql-statement";
  po.limit_bytes = options.memory_limit_bytes;
  ctx->statement_pool = options.pool->MakeChild(po);
  // Stage pools (engine.h "Memory"): join relations in "build", everything
  // else the statement allocates in "probe".
  MemoryPoolOptions bo;
  bo.name = "build";
  ctx->build_pool = ctx->statement_pool->MakeChild(bo);
  MemoryPoolOptions qo;
  qo.name = "probe";
  ctx->pool = ctx->statement_pool->MakeChild(qo);
  join::TaskMemoryOptions to;
  to.mode = options.memory_mode;
  ctx->tmm = std::make_unique<join::TaskMemoryManager>(ctx->build_pool.get(), to);
  ctx->cancel = options.cancel;
  ctx->max_batch_rows = options.max_batch_rows;
  QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
  Planner planner(sql, catalog_, ctx.get());

  std::unique_ptr<RecordBatchStream> root;
  std::string describe_name;
  int describe_offset = 0;
  if (MatchDescribe(sql, &describe_name, &describe_offset)) {
    QUIVER_ASSIGN_OR_RETURN(root, planner.Describe(describe_name, describe_offset));
  } else {
    const std::string text(sql);
    PgQueryParseResult parsed = pg_query_parse(text.c_str());
    struct Free {
      PgQueryParseResult* r;
      ~Free() { pg_query_free_parse_result(*r); }
    } free_parsed{&parsed};
    if (parsed.error) {
      const int pos = parsed.error->cursorpos > 0 ? parsed.error->cursorpos - 1 : 0;
      return Status::Invalid(std::string(parsed.error->message) + " (" + DescribePosition(sql, pos) + ")");
    }
    Json tree = Json::parse(parsed.parse_tree, nullptr, false);
    if (tree.is_discarded()) return Status::Invalid("the SQL parser returned an unreadable parse tree");
    if (!tree.contains("stmts") || tree["stmts"].empty()) return Status::Invalid("empty statement");
    if (tree["stmts"].size() > 1) {
      return Status::NotImplemented("more than one statement is not supported (" +
                                    DescribePosition(sql, tree["stmts"][1].value("stmt_location", 0)) + ")");
    }
    // The tree's shape is libpg_query's; a shape this code does not expect
    // (nlohmann throws on a type mismatch) is reported, never trusted.
    Result<std::unique_ptr<RecordBatchStream>> planned = Status::Invalid("not planned");
    try {
      Json& st = tree["stmts"][0]["stmt"];
      const int stmt_loc = tree["stmts"][0].value("stmt_location", 0);
      const std::string key = st.is_object() && !st.empty() ? st.begin().key() : std::string();
      if (key == "SelectStmt") {
        planned = planner.PlanSelect(st["SelectStmt"]);
      } else if (key == "VariableShowStmt" && st[key].value("name", "") == "tables") {
        planned = planner.ShowTables();
      } else if (key == "VariableShowStmt") {
        planned = planner.Unsupported("SHOW " + st[key].value("name", ""), stmt_loc);
      } else {
        planned = planner.Unsupported(StatementName(key), stmt_loc);
      }
    } catch (const std::exception& e) {
      return Status::Invalid(std::string("unexpected parse tree shape: ") + e.what());
    }
    QUIVER_ASSIGN_OR_RETURN(root, std::move(planned));
  }
  return std::unique_ptr<RecordBatchStream>(std::make_unique<StatementStream>(ctx, std::move(root)));
}

}  // namespace quiver::sql
